//! `turbo-selfclock`: the recirculation mode's self-clocking (slides: "Is TurboSwitch *really*
//! self-clocking?": Tofino, FastClick forwarder of 25 us average latency, 100 Gb/s wiring).
//!
//! The slides' claims: queue size grows linearly with input throughput; payload queueing time
//! is linear in queue size; about one recirculation per packet at steady state; latency
//! converges to the correct value without setting any parameter. Here: the input throughput
//! swept from 10 to 100 Gb/s (Poisson, 64-1500 B), the forwarder set to 25 us for a 72 B
//! header, and one run at 100 Gb/s from an empty switch as a time series.
//!
//! Why it self-clocks: the recirculation port is busy whenever payloads are parked, so the
//! bytes in the loop are `C x pass time`; by Little's law they are also
//! `R_payload x parking time`; a payload leaves at the first pass that ends after its header
//! is back. So the passes per payload are `C / R_payload` (about 1.09 at 100 Gb/s of input,
//! 92 Gb/s of payload) and the queue is `R_payload x parking time`: linear in the input.

use super::common::{base, linear_fit};
use super::kernel::{run as simulate, Phase, SimConfig, SimResult};
use crate::config::{Mode, SwitchConfig};
use crate::nf;
use crate::types::{Time, MS, US};
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::Figure;

/// The NF's average latency (slides: 25 us).
pub const NF_LATENCY: Time = 25 * US;

/// The model configuration at `gbps` for `duration` (seed 1, recirculation mode).
pub fn config(gbps: f64, duration: Time) -> SimConfig {
    let p = SwitchConfig::default().pipeline_latency;
    let f = nf::with_latency(nf::forwarder(p), 72, NF_LATENCY, p);
    let mut c = base(Mode::Recirculate, f, vec![Phase { duration, gbps }], 1);
    c.warmup = (duration / 5).max(200 * US);
    c.bin = 5 * US;
    c
}

/// Runs one input throughput.
pub fn run_setup(gbps: f64, duration: Time) -> Result<SimResult, ExperimentError> {
    Ok(simulate(&config(gbps, duration))?)
}

/// Runs one input throughput with another distribution of the NF's latency.
pub fn run_with_dist(gbps: f64, duration: Time, dist: nf::NfDist) -> Result<SimResult, ExperimentError> {
    let mut c = config(gbps, duration);
    c.nf.dist = dist;
    Ok(simulate(&c)?)
}

/// Parking time over NF latency of a stationary loop making `k` passes per payload on average:
/// every pass takes the same time tau (the queue's delay), a payload leaves at a pass boundary,
/// so tau settles near L / floor(k) and parking is k x tau = L x k / floor(k).
pub fn sawtooth(k: f64) -> f64 {
    if k < 1.0 {
        return 0.0;
    }
    k / k.floor()
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let q = ctx.quick;
    let len = if q { MS } else { 10 * MS };
    let ts_len = if q { MS / 2 } else { 2 * MS };
    let loads: Vec<f64> = if q {
        vec![20.0, 60.0, 100.0]
    } else {
        (1..=10).map(|i| f64::from(i) * 10.0).collect()
    };
    (ctx.status)(&format!("turbo-selfclock: {} throughputs", loads.len()));
    let res = par_map(&loads, threads(), |&g| run_setup(g, len))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let ts = run_setup(100.0, ts_len)?;
    let wide = run_with_dist(100.0, len, nf::NfDist::ShiftedExp { min: 0.8 })?;
    let c_bytes_per_us = 100e9 / 8.0 / 1e6;

    let mut csv = String::from(
        "input_gbps,measured_gbps,queue_kb,pass_wait_us,queue_over_rate_us,passes_per_payload,payload_us,payload_p99_us,nf_us,payload_over_nf,k_over_floor_k,lost\n",
    );
    for (g, r) in loads.iter().zip(&res) {
        csv.push_str(&format!(
            "{},{:.2},{:.2},{:.3},{:.3},{:.4},{:.3},{:.3},{:.3},{:.4},{:.4},{}\n",
            g,
            r.window_gbps,
            r.park_bytes_mean / 1000.0,
            r.park_wait_us,
            r.park_bytes_mean / c_bytes_per_us,
            r.passes_per_payload,
            r.payload_latency.mean,
            r.payload_latency.p99,
            r.nf_latency.mean,
            r.payload_latency.mean / r.nf_latency.mean,
            sawtooth(r.passes_per_payload),
            r.lost_total()
        ));
    }
    write(ctx, "selfclock.csv", &csv)?;
    let mut tcsv = String::from("t_us,input_gbps,queue_kb,payload_us,passes,nf_us,merged\n");
    for b in &ts.bins {
        tcsv.push_str(&format!(
            "{},{:.2},{:.2},{:.3},{:.4},{:.3},{}\n",
            b.t_us,
            b.input_gbps,
            b.park_bytes / 1000.0,
            b.payload_us,
            b.passes,
            b.nf_us,
            b.merged
        ));
    }
    write(ctx, "selfclock_timeseries.csv", &tcsv)?;

    let q_pts: Vec<(f64, f64)> = res
        .iter()
        .map(|r| (r.window_gbps, r.park_bytes_mean / 1000.0))
        .collect();
    let w_pts: Vec<(f64, f64)> = res
        .iter()
        .map(|r| (r.park_bytes_mean / 1000.0, r.park_wait_us))
        .collect();
    let (q_slope, _, q_r2) = linear_fit(&q_pts);
    let (w_slope, _, w_r2) = linear_fit(&w_pts);
    let last = res
        .last()
        .ok_or_else(|| ExperimentError("turbo-selfclock: no runs".into()))?;
    // Steady state of the time series: the second half.
    let half: Vec<_> = ts
        .bins
        .iter()
        .filter(|b| b.t_us * US as f64 >= ts_len as f64 / 2.0 && b.t_us * (US as f64) < ts_len as f64)
        .collect();
    let qs: Vec<f64> = half.iter().map(|b| b.park_bytes).collect();
    let qmean = qs.iter().sum::<f64>() / qs.len().max(1) as f64;
    let qcv = (qs.iter().map(|x| (x - qmean).powi(2)).sum::<f64>() / qs.len().max(1) as f64).sqrt() / qmean.max(1.0);
    let first_bins: f64 = {
        let early: Vec<_> = ts.bins.iter().filter(|b| b.merged > 0).take(4).collect();
        early.iter().map(|b| b.passes).sum::<f64>() / early.len().max(1) as f64
    };

    let full = !q;
    let mut rows = vec![
        Row::new(
            Kind::Prediction,
            "10-100 Gb/s",
            "queue size vs input throughput: linear fit R^2",
            None,
            q_r2,
            Target::AtLeast(0.9),
        ),
        Row::new(
            Kind::Prediction,
            "10-100 Gb/s",
            "queue size slope (KB per Gb/s)",
            None,
            q_slope,
            Target::None,
        ),
        // Identities: a FIFO served at C makes a payload wait queue / C per pass, and a parking
        // port that is busy whenever payloads are parked makes C / R_payload passes per payload
        // (1.09 at 100 Gb/s, the slides' "~1 recirculation per packet").
        Row::new(
            Kind::Identity,
            "10-100 Gb/s",
            "payload queueing time per pass vs queue size: R^2",
            None,
            w_r2,
            Target::AtLeast(0.99),
        ),
        Row::new(
            Kind::Identity,
            "10-100 Gb/s",
            "queueing time slope (us per KB; 1/port rate = 0.08)",
            Some(0.08),
            w_slope,
            Target::Relative(0.05),
        ),
        Row::new(
            Kind::Identity,
            "100 Gb/s",
            "recirculations per packet (steady state)",
            Some(1.0),
            last.passes_per_payload,
            Target::Relative(0.15),
        ),
        Row::new(
            Kind::Identity,
            "100 Gb/s",
            "recirculations per packet, C / payload rate (expected)",
            None,
            100.0 / (last.window_gbps * (1.0 - 64.0 / 782.0)),
            Target::None,
        ),
        // Input: the forwarder's base is moved so that a header sees the slides' 25 us.
        Row::new(
            Kind::Input,
            "100 Gb/s",
            "NF latency (us)",
            Some(25.0),
            last.nf_latency.mean,
            Target::Relative(0.05),
        ),
        Row::new(
            Kind::Prediction,
            "100 Gb/s",
            "payload parking time (us)",
            if full { Some(25.0) } else { None },
            last.payload_latency.mean,
            Target::Relative(0.2),
        ),
        Row::new(
            Kind::Prediction,
            "100 Gb/s, from empty",
            "recirculations per packet, first 20 us of merges",
            None,
            first_bins,
            Target::None,
        ),
        Row::new(
            Kind::Prediction,
            "100 Gb/s, from empty",
            "queue size, 2nd half: coefficient of variation of 5 us means",
            None,
            qcv,
            Target::None,
        ),
        Row::new(
            Kind::Prediction,
            "100 Gb/s, NF base 80% floor + exponential",
            &format!(
                "payload parking / NF latency [NF {:.2} us, parking {:.2} us, {:.3} passes]",
                wide.nf_latency.mean, wide.payload_latency.mean, wide.passes_per_payload
            ),
            None,
            wide.payload_latency.mean / wide.nf_latency.mean,
            Target::None,
        ),
        Row::new(
            Kind::Prediction,
            "all",
            "packets lost",
            Some(0.0),
            res.iter().map(|r| r.lost_total() as f64).sum::<f64>() + (ts.lost_total() + wide.lost_total()) as f64,
            Target::AtMost(0.0),
        ),
    ];
    for (g, r) in loads.iter().zip(&res) {
        rows.push(Row::new(
            Kind::Prediction,
            &format!("{g} Gb/s"),
            &format!(
                "payload parking / NF latency [queue {:.0} KB, {:.2} passes, k/floor(k) = {:.2}]",
                r.park_bytes_mean / 1000.0,
                r.passes_per_payload,
                sawtooth(r.passes_per_payload)
            ),
            None,
            r.payload_latency.mean / r.nf_latency.mean,
            Target::None,
        ));
    }

    Figure::new(
        "Recirculation queue size vs input throughput (25 us NF)",
        "input throughput (Gb/s)",
        "mean queue size (KB)",
    )
    .with([("measured".to_string(), q_pts.clone())])
    .save(&ctx.path("selfclock_queue.png"))?;
    Figure::new(
        "Payload queueing time per pass vs queue size",
        "mean queue size (KB)",
        "mean queueing time per pass (us)",
    )
    .with([("measured".to_string(), w_pts)])
    .save(&ctx.path("selfclock_wait.png"))?;
    Figure::new(
        "Recirculations per packet and latency vs input throughput",
        "input throughput (Gb/s)",
        "passes per payload / latency (us) / 10",
    )
    .with([
        (
            "passes per payload".to_string(),
            loads
                .iter()
                .zip(&res)
                .map(|(g, r)| (*g, r.passes_per_payload))
                .collect(),
        ),
        (
            "payload parking time (us) / 10".to_string(),
            loads
                .iter()
                .zip(&res)
                .map(|(g, r)| (*g, r.payload_latency.mean / 10.0))
                .collect(),
        ),
        (
            "NF latency (us) / 10".to_string(),
            loads
                .iter()
                .zip(&res)
                .map(|(g, r)| (*g, r.nf_latency.mean / 10.0))
                .collect(),
        ),
        (
            "NF latency x k/floor(k) (us) / 10".to_string(),
            loads
                .iter()
                .zip(&res)
                .map(|(g, r)| (*g, r.nf_latency.mean * sawtooth(r.passes_per_payload) / 10.0))
                .collect(),
        ),
    ])
    .save(&ctx.path("selfclock_passes.png"))?;
    let in_run: Vec<_> = ts.bins.iter().filter(|b| b.merged > 0).collect();
    Figure::new(
        "100 Gb/s from an empty switch (5 us bins)",
        "time (us)",
        "queue (KB) / latency (us) / passes x 10",
    )
    .with([
        (
            "queue size (KB) / 10".to_string(),
            in_run.iter().map(|b| (b.t_us, b.park_bytes / 10_000.0)).collect(),
        ),
        (
            "payload parking time (us)".to_string(),
            in_run.iter().map(|b| (b.t_us, b.payload_us)).collect(),
        ),
        (
            "NF latency (us)".to_string(),
            in_run.iter().map(|b| (b.t_us, b.nf_us)).collect(),
        ),
        (
            "passes per payload x 10".to_string(),
            in_run.iter().map(|b| (b.t_us, b.passes * 10.0)).collect(),
        ),
    ])
    .save(&ctx.path("selfclock_timeseries.png"))?;

    Ok(Report {
        title: "TurboSwitch: recirculation self-clocking".into(),
        reference:
            "Scazzariello, Caiazzi, Chiesa, ICNP 2024 slides: FastClick forwarder of \"25 us Average Latency\", \
                    \"Queue size grows linearly w.r.t. input throughput\", \"Linear relationship between payload \
                    queueing time and queue size\", \"~1 recirculation per packet\", \"Queue latency converges to \
                    the correct value w/o setting any parameter\""
                .into(),
        rows,
        notes: vec![
            "Recirculation mode, one 100 Gb/s recirculation port, no parameter of the parking set: a payload goes \
             round until a pass ends after its header is back. Forwarder calibrated as in turbo-latency, its base \
             moved so a 72 B header sees 25 us at zero load."
                .into(),
            "Queue size = time average of the recirculation port's queue (sampled every 1 us after warm-up). \
             Queueing time per pass = wait of a payload in that queue, per pass."
                .into(),
            "The payload parking time exceeds the NF latency: the port is busy whenever payloads are parked, so \
             a payload makes k = C / R_payload passes on average; every pass lasts the queue's delay tau and a \
             payload can only leave at the end of one, so tau settles near L / floor(k) and parking is about \
             L x k / floor(k), a sawtooth in the load (1.09 at 10 and 20 Gb/s, 1.8 at 60 Gb/s, 1.09 at 100 Gb/s). In this model the loop also oscillates (irregular period of a few hundred us): when the \
             queue is long nothing goes round again and it drains slowly (at C - R_payload); when it is short, \
             payloads come back early all together and it refills. The slides show convergence; we see convergence \
             of the mean but not of the instantaneous queue (see selfclock_timeseries.png)."
                .into(),
            format!(
                "Seed 1; {} ms per throughput, first 20% not measured; time series {} ms from empty.",
                len as f64 / MS as f64,
                ts_len as f64 / MS as f64
            ),
        ],
        files: vec![
            "selfclock.csv".into(),
            "selfclock_timeseries.csv".into(),
            "selfclock_queue.png".into(), "selfclock_queue.svg".into(),
            "selfclock_wait.png".into(), "selfclock_wait.svg".into(),
            "selfclock_passes.png".into(), "selfclock_passes.svg".into(),
            "selfclock_timeseries.png".into(), "selfclock_timeseries.svg".into(),
        ],
    })
}

/// The `turbo-selfclock` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "turbo-selfclock",
    about: "TurboSwitch recirculation mode: queue vs throughput, ~1 recirculation per packet, convergence (25 us NF)",
    run,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sawtooth_of_passes() {
        assert!((sawtooth(1.09) - 1.09).abs() < 1e-9);
        assert!((sawtooth(1.8) - 1.8).abs() < 1e-9);
        assert!((sawtooth(2.18) - 1.09).abs() < 1e-9);
        assert_eq!(sawtooth(0.5), 0.0);
    }
}
