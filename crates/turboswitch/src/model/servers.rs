//! `turbo-servers`: the slides' motivation in numbers. "Dedicated NF servers ... throughput
//! capped by the network bandwidth (100-400 Gbps) ... need to deploy more servers";
//! packet-splitting "free[s] up bandwidth" and "reduce[s] the number of dedicated NF servers".
//! And the slides' copies-mode question: "How do we control the number of required copies to
//! get 40 us delay?".
//!
//! * **NF servers.** An NF server's link (100 Gb/s) carries what the switch sends it: whole
//!   packets (no split), all but 160 B of each packet plus an 8 B tag (PayloadPark; packets under
//!   224 B whole), or a 64 B header plus the 8 B tag (TurboSwitch, either mode; packets of at
//!   most 64 B whole). Over the slides' 64 B-1.5 KB mix that gives each approach's packet
//!   throughput per server, and the servers a given load needs. Arithmetic on the inputs
//!   (identity rows), except where the switch runs out: TurboSwitch parks every payload in its
//!   own buffer while the header is away, so the load it can serve is also bounded by what the
//!   buffer holds, measured as `turbo-capacity` does (recirculation, four 100 Gb/s recirculation
//!   ports, 22 MB, a 20 us NF): a prediction.
//! * **The 40 us example.** Copies mode at 100 Gb/s with a plain 40 us NF (uniform +-10%): the
//!   controller learns the target from the header round trips and sizes the parking queue so
//!   that payloads wait about as long as their headers; declared before the run: mean parking
//!   within 20% of the mean NF latency (the tolerance `turbo-controller` uses, for its reason:
//!   the learned target is mean + 2 mean deviations of a +-10% NF).

use super::capacity::{max_lossless, PORTS};
use super::common::base;
use super::kernel::{run as simulate, Phase};
use crate::config::Mode;
use crate::nf::{self, LINK_BPS};
use crate::types::{Time, US};
use tandem_sim::experiment::{write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::plot::{Axis, Figure, Series};

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "turbo-servers",
    about: "TurboSwitch slides' motivation: NF throughput capped by the network, servers saved by splitting, and the 40 us copies example",
    run,
};

/// NF latency of the servers comparison (the slides' FastClick forwarder: 20 us).
pub const NF_LATENCY: Time = 20 * US;
/// The copies-mode example's NF latency (slides: 40 us).
pub const EXAMPLE_LATENCY: Time = 40 * US;
/// Switch buffer (ours, as in the model: 22 MB).
pub const BUFFER: u64 = 22_000_000;
/// Loads at which the servers needed are counted, Gb/s.
pub const LOADS: [f64; 4] = [100.0, 200.0, 400.0, 1000.0];

/// An approach of the servers comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approach {
    /// Whole packets to the NF.
    NoSplit,
    /// PayloadPark: 160 B kept in switch SRAM.
    PayloadPark,
    /// TurboSwitch (recirculation or copies): a 64 B header to the NF.
    TurboSwitch,
}

impl Approach {
    fn name(self) -> &'static str {
        match self {
            Approach::NoSplit => "no split",
            Approach::PayloadPark => "PayloadPark",
            Approach::TurboSwitch => "TurboSwitch",
        }
    }

    /// Bytes the NF server moves for a packet of `b` bytes.
    pub fn nf_bytes(self, b: u32) -> u32 {
        match self {
            Approach::NoSplit => b,
            Approach::PayloadPark if b >= 224 => b - 160 + 8,
            Approach::PayloadPark => b,
            Approach::TurboSwitch if b > 64 => 64 + 8,
            Approach::TurboSwitch => b,
        }
    }
}

/// Mean packet bytes and mean NF bytes of the uniform 64-1500 B mix for `a`.
pub fn mix_bytes(a: Approach) -> (f64, f64) {
    let n = f64::from(1500 - 64 + 1);
    let packet: f64 = (64..=1500u32).map(f64::from).sum::<f64>() / n;
    let nf: f64 = (64..=1500u32).map(|b| f64::from(a.nf_bytes(b))).sum::<f64>() / n;
    (packet, nf)
}

/// Packet throughput (Gb/s of whole packets) one NF server's link carries with `a`.
pub fn per_server_gbps(a: Approach) -> f64 {
    let (packet, nf) = mix_bytes(a);
    LINK_BPS as f64 / 1e9 * packet / nf
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let mut rep = Report {
        title: "TurboSwitch: NF servers capped by the network, servers saved, and the 40 us copies example".into(),
        reference: "Scazzariello, Caiazzi, Chiesa, TurboSwitch (ICNP 2024 slides): NF throughput capped by the \
                    network bandwidth (100-400 Gbps); splitting frees bandwidth and reduces dedicated NF servers; \
                    copies sized for a 40 us delay"
            .into(),
        ..Report::default()
    };
    // The switch's payload capacity with TurboSwitch (the 20 us NF, 22 MB, four ports).
    (ctx.status)("switch capacity with a 20 us NF, 22 MB");
    let (lossless_gbps, _) = max_lossless(NF_LATENCY, BUFFER)?;
    let switch_cap = f64::from(lossless_gbps);
    let mut csv = String::from("approach,mean_packet_bytes,mean_nf_bytes,per_server_gbps,load_gbps,servers\n");
    for a in [Approach::NoSplit, Approach::PayloadPark, Approach::TurboSwitch] {
        let (packet, nf) = mix_bytes(a);
        let per = per_server_gbps(a);
        rep.rows.push(Row::new(
            Kind::Identity,
            a.name(),
            "packet throughput one NF server's 100 Gb/s link carries (Gb/s)",
            None,
            per,
            Target::None,
        ));
        for &load in &LOADS {
            let servers = (load / per).ceil();
            let _ = std::fmt::Write::write_fmt(
                &mut csv,
                format_args!("{},{packet:.1},{nf:.1},{per:.1},{load},{servers}\n", a.name()),
            );
            let served = a != Approach::TurboSwitch || load <= switch_cap;
            rep.rows.push(Row::new(
                Kind::Identity,
                &format!("{}, {load} Gb/s", a.name()),
                if served {
                    "NF servers needed"
                } else {
                    "NF servers needed (the switch buffer cannot park this load: see below)"
                },
                None,
                servers,
                Target::None,
            ));
        }
    }
    rep.rows.push(Row::new(
        Kind::Prediction,
        "TurboSwitch (recirculation), 20 us NF, 22 MB, 4 x 100 Gb/s recirculation ports",
        "most offered load the switch parks without loss (Gb/s, 10 Gb/s grid; 400 is its top and the four ports' rate)",
        None,
        switch_cap,
        Target::None,
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "TurboSwitch vs no split, one NF server",
        "throughput gained by splitting (x), bounded by the switch's parking capacity (here its four ports)",
        None,
        per_server_gbps(Approach::TurboSwitch).min(switch_cap) / per_server_gbps(Approach::NoSplit),
        Target::None,
    ));

    // The 40 us copies example.
    // 4 ms (a quarter of it left out as start-up) in both sizes: it takes a tenth of a second.
    let dur = 4_000 * US;
    (ctx.status)("copies mode, 40 us NF, 100 Gb/s");
    let mut cfg = base(
        Mode::Copies,
        nf::fixed(EXAMPLE_LATENCY),
        vec![Phase {
            duration: dur,
            gbps: 100.0,
        }],
        1,
    );
    cfg.warmup = dur / 4;
    let r = simulate(&cfg)?;
    rep.rows.push(Row::new(
        Kind::Prediction,
        "copies mode, 40 us NF, 100 Gb/s",
        "mean payload parking time (us) vs mean NF latency",
        Some(r.nf_latency.mean),
        r.payload_latency.mean,
        Target::Relative(0.20),
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "copies mode, 40 us NF, 100 Gb/s",
        "copies per split packet",
        None,
        r.copies_per_split,
        Target::None,
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "copies mode, 40 us NF, 100 Gb/s",
        "packets lost",
        Some(0.0),
        r.lost_total() as f64,
        Target::AtMost(0.0),
    ));
    write(ctx, "servers.csv", &csv)?;
    let series: Vec<Series> = [Approach::NoSplit, Approach::PayloadPark, Approach::TurboSwitch]
        .iter()
        .map(|&a| {
            let per = per_server_gbps(a);
            Series::new(
                a.name(),
                (1..=10)
                    .map(|k| (f64::from(k) * 100.0, (f64::from(k) * 100.0 / per).ceil()))
                    .collect(),
            )
        })
        .collect();
    Figure::new(
        "Dedicated NF servers needed (100 Gb/s links, 64 B-1.5 KB mix)",
        Axis::new("offered load (Gb/s)"),
        Axis::new("NF servers").integer(),
    )
    .with(series)
    .save(&ctx.path("servers.png"))?;
    rep.files = vec!["servers.csv".into(), "servers.png".into(), "servers.svg".into()];
    rep.notes.push(format!(
        "Mean packet {:.1} B; mean bytes to the NF: no split {:.1}, PayloadPark {:.1}, TurboSwitch {:.1} (64 B header + 8 B tag, \
         packets of at most 64 B whole). The NF's CPU is not a bound here (the model's NF has none besides its 126 Gb/s bus); \
         a real server's packet rate would be. Recirculation ports: {PORTS}.",
        mix_bytes(Approach::NoSplit).0,
        mix_bytes(Approach::NoSplit).1,
        mix_bytes(Approach::PayloadPark).1,
        mix_bytes(Approach::TurboSwitch).1,
    ));
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_to_the_nf_by_hand() {
        assert_eq!(Approach::NoSplit.nf_bytes(1500), 1500);
        assert_eq!(Approach::PayloadPark.nf_bytes(1500), 1348);
        assert_eq!(Approach::PayloadPark.nf_bytes(200), 200);
        assert_eq!(Approach::TurboSwitch.nf_bytes(1500), 72);
        assert_eq!(Approach::TurboSwitch.nf_bytes(64), 64);
        let (packet, nf) = mix_bytes(Approach::NoSplit);
        assert_eq!(packet, 782.0);
        assert_eq!(nf, 782.0);
        assert!((per_server_gbps(Approach::NoSplit) - 100.0).abs() < 1e-9);
    }
}
