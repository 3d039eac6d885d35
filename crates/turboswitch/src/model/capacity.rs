//! `turbo-capacity` (beyond the slides): how many Gb/s of payload the switch buffer can hold
//! for a given NF latency before drops begin, against the buffer size.
//!
//! Recirculation mode with four 100 Gb/s recirculation ports and four output ports (so the
//! ports carry up to ~400 Gb/s and the buffer is what runs out), a plain NF of latency `L`
//! (uniform +-10%), Poisson 64-1500 B. For each (L, buffer) the highest offered load on a 10 Gb/s
//! grid up to 400 Gb/s with no loss at all is found by bisection (loss is monotone in the load
//! here). The expectation: parked bytes = payload rate x parking time (Little), so the buffer
//! holds about `buffer / parking time` of payload, parking time being ~1.1-1.5 x L in this mode.

use super::common::base;
use super::kernel::{run as simulate, Phase, SimConfig, SimResult};
use crate::config::Mode;
use crate::nf;
use crate::types::{Time, US};
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::{Figure, Series};

/// Share of the bytes of the 64-1500 B mix that are payload (split at 64 B).
pub const PAYLOAD_SHARE: f64 = (782.0 - 64.0) / 782.0;
/// Recirculation (and output) ports.
pub const PORTS: u16 = 4;
/// Largest offered load tried, Gb/s.
pub const MAX_GBPS: u32 = 400;
/// Grid step, Gb/s.
pub const STEP_GBPS: u32 = 10;

/// The model configuration for NF latency `l`, `buffer` bytes and `gbps` of offered load.
pub fn config(l: Time, buffer: u64, gbps: f64) -> SimConfig {
    let mut c = base(
        Mode::Recirculate,
        nf::fixed(l),
        vec![Phase { duration: 8 * l, gbps }],
        1,
    );
    c.core.recirc_ports = PORTS;
    c.core.reclaim_timeout = 20 * l;
    c.switch.output_ports = PORTS;
    c.switch.buffer_bytes = buffer;
    c.warmup = 2 * l;
    c.bin = l;
    c
}

/// One run: did anything get lost?
pub fn run_point(l: Time, buffer: u64, gbps: f64) -> Result<SimResult, ExperimentError> {
    Ok(simulate(&config(l, buffer, gbps))?)
}

/// Highest grid load (Gb/s) with no loss, and the run at that load (`None` if even the lowest
/// point loses packets).
pub fn max_lossless(l: Time, buffer: u64) -> Result<(u32, Option<SimResult>), ExperimentError> {
    let (mut lo, mut hi) = (0u32, MAX_GBPS / STEP_GBPS + 1);
    let mut best = None;
    // Invariant: grid index lo is lossless (0 = nothing offered), hi is lossy or past the grid.
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let r = run_point(l, buffer, f64::from(mid * STEP_GBPS))?;
        if r.lost_total() == 0 && r.in_flight == 0 {
            lo = mid;
            best = Some(r);
        } else {
            hi = mid;
        }
    }
    Ok((lo * STEP_GBPS, best))
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let q = ctx.quick;
    let lats: &[Time] = if q { &[100 * US] } else { &[100 * US, 500 * US] };
    let bufs: &[u64] = if q {
        &[1_000_000, 2_000_000]
    } else {
        &[1_000_000, 2_000_000, 4_000_000, 8_000_000, 16_000_000, 22_000_000]
    };
    let cells: Vec<(Time, u64)> = lats.iter().flat_map(|&l| bufs.iter().map(move |&b| (l, b))).collect();
    (ctx.status)(&format!("turbo-capacity: {} cells", cells.len()));
    let res = par_map(&cells, threads(), |&(l, b)| max_lossless(l, b))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut csv = String::from(
        "nf_latency_us,buffer_mb,max_lossless_gbps,payload_gbps,buffer_over_latency_gbps,parking_us,max_buffer_mb,capped_by_grid\n",
    );
    let mut rows = Vec::new();
    for ((l, b), (g, r)) in cells.iter().zip(&res) {
        let payload = f64::from(*g) * PAYLOAD_SHARE;
        let bl = *b as f64 * 8.0 / (*l as f64 / 1e12) / 1e9;
        let parking = r.as_ref().map_or(0.0, |r| r.payload_latency.mean);
        let maxbuf = r.as_ref().map_or(0.0, |r| r.max_buffer as f64 / 1e6);
        let capped = *g >= MAX_GBPS;
        csv.push_str(&format!(
            "{},{},{},{:.1},{:.1},{:.2},{:.3},{}\n",
            l / US,
            *b as f64 / 1e6,
            g,
            payload,
            bl,
            parking,
            maxbuf,
            capped
        ));
        let by_parking = if parking > 0.0 {
            *b as f64 * 8.0 / (parking * 1e-6) / 1e9
        } else {
            0.0
        };
        rows.push(Row::new(
            Kind::Prediction,
            &format!("L = {} us, buffer {} MB", l / US, *b as f64 / 1e6),
            &format!(
                "max lossless payload (Gb/s){} [buffer/L = {:.0}, buffer/parking = {:.0}]",
                if capped { " (>= grid top)" } else { "" },
                bl,
                by_parking
            ),
            None,
            payload,
            Target::None,
        ));
    }
    write(ctx, "capacity.csv", &csv)?;
    let mut series = Vec::new();
    for &l in lats {
        series.push(
            Series::new(
                format!("L = {} us: measured", l / US),
                cells
                    .iter()
                    .zip(&res)
                    .filter(|((cl, _), _)| *cl == l)
                    .map(|((_, b), (g, _))| (*b as f64 / 1e6, f64::from(*g) * PAYLOAD_SHARE))
                    .collect::<Vec<_>>(),
            )
            .solid(),
        );
        // The analytic bound: a dashed line without markers.
        series.push(
            Series::new(
                format!("L = {} us: buffer / L", l / US),
                bufs.iter()
                    .map(|&b| {
                        let v = b as f64 * 8.0 / (l as f64 / 1e12) / 1e9;
                        (b as f64 / 1e6, v.min(f64::from(MAX_GBPS) * PAYLOAD_SHARE))
                    })
                    .collect(),
            )
            .line()
            .dashed(),
        );
    }
    Figure::new(
        "Payload the buffer holds before drops (recirculation mode)",
        "buffer (MB)",
        "max lossless payload (Gb/s)",
    )
    .with(series)
    .save(&ctx.path("capacity.png"))?;
    Ok(Report {
        title: "TurboSwitch: payload capacity of the switch buffer (beyond the slides)".into(),
        reference: "none (beyond the slides); the analytic bound buffer / NF latency is given next to each row".into(),
        rows,
        notes: vec![
            format!(
                "Recirculation mode, {PORTS} recirculation and {PORTS} output ports of 100 Gb/s, plain NF of latency L \
                 (uniform +-10%), Poisson 64-1500 B; offered load on a {STEP_GBPS} Gb/s grid up to {MAX_GBPS} Gb/s, \
                 bisection on 'no packet lost'; each point runs 8 L of arrivals (the first 2 L not measured). \
                 Payload = {:.1}% of the offered bytes. Seed 1.",
                PAYLOAD_SHARE * 100.0
            ),
            "Drops begin when the parked bytes (payload rate x parking time, plus the loop's oscillation peaks) \
             reach the buffer: the capacity is below buffer / L because a payload parks for 1.1-1.4 L here (its \
             last recirculation pass overshoots the header's return; see turbo-selfclock), more at higher load. \
             Rows marked \
             '>= grid top' are limited by the ports, not the buffer. Copies mode would need buffer for \
             C x target per parking port whatever the load (copies fill the rest), so it holds less payload for \
             the same buffer; not run here."
                .into(),
        ],
        files: vec!["capacity.csv".into(), "capacity.png".into(), "capacity.svg".into()],
    })
}

/// The `turbo-capacity` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "turbo-capacity",
    about: "TurboSwitch: Gb/s of payload the switch buffer holds before drops, vs buffer size and NF latency",
    run,
};
