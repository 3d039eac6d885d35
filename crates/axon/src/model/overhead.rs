//! `axon-overhead` (thesis Figure 4.1): the most TCP goodput a 1 Gb/s link carries for IP
//! packets of 64 to 1,500 bytes when every frame also carries an Axon header for a route of 1,
//! 10 or 100 hops, against plain Ethernet. Analytical from the header length
//! ([`tandem_wire::axon::header_len_for`]): per frame, the TCP payload (IP packet less 20 bytes
//! of IP and 32 of TCP with timestamps) over the line time (IP packet, 14 bytes of Ethernet
//! header, 4 of FCS, 20 of preamble and gap, the Axon header). Checked by simulation: one bulk
//! TCP flow over a chain of Axons, whose inter-Axon links carry the header of a route as long
//! as the chain.

use super::common::{chain, SWITCH_LATENCY_PS};
use super::kernel::run as simulate;
use super::net::{App, Flow, NetParams};
use super::topology::NodeKind;
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::Figure;
use tandem_sim::time::MS;
use tandem_wire::axon::header_len_for;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "axon-overhead",
    about: "Axon thesis Fig. 4.1: maximum TCP goodput vs packet size for 1-, 10- and 100-hop routes",
    run,
};

/// Route lengths of the figure.
pub const HOPS: [usize; 3] = [1, 10, 100];

/// Largest TCP goodput in Mb/s on a 1 Gb/s link for IP packets of `ip_bytes` carrying an Axon
/// header of `hops` hops (`None`: plain Ethernet).
pub fn max_goodput_mbps(ip_bytes: usize, hops: Option<usize>) -> f64 {
    let payload = ip_bytes.saturating_sub(52) as f64;
    let axon = hops.map_or(0, header_len_for);
    let frame = (ip_bytes + 14).max(60) + 4 + 20 + axon;
    payload / frame as f64 * 1000.0
}

/// Simulated goodput (Mb/s) of one bulk TCP flow across a chain of `axons` Axons, on the
/// simulator's kernel ([`super::kernel`]).
pub fn simulated_mbps(axons: usize, duration_ps: u64) -> Result<f64, ExperimentError> {
    let (topo, a, b) = chain(NodeKind::Axon, axons);
    let p = NetParams::gbe(SWITCH_LATENCY_PS);
    let flows = [Flow {
        src: a,
        dst: b,
        app: App::TcpBulk,
    }];
    let o = simulate(&topo, &p, &flows, duration_ps, duration_ps / 4).map_err(ExperimentError)?;
    Ok(o.flows[0].mbps)
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let sizes: Vec<usize> = (64..=1500).step_by(4).chain([1500]).collect();
    let mut csv = String::from("ip_bytes,ethernet_mbps,hops_1_mbps,hops_10_mbps,hops_100_mbps\n");
    for &s in &sizes {
        csv.push_str(&format!(
            "{s},{:.2},{:.2},{:.2},{:.2}\n",
            max_goodput_mbps(s, None),
            max_goodput_mbps(s, Some(1)),
            max_goodput_mbps(s, Some(10)),
            max_goodput_mbps(s, Some(100))
        ));
    }
    write(ctx, "overhead.csv", &csv)?;
    let mut series = vec![(
        "Ethernet".to_string(),
        sizes.iter().map(|&s| (s as f64, max_goodput_mbps(s, None))).collect(),
    )];
    for h in HOPS {
        series.push((
            format!("Axon, {h} hops"),
            sizes
                .iter()
                .map(|&s| (s as f64, max_goodput_mbps(s, Some(h))))
                .collect(),
        ));
    }
    Figure::new(
        "Maximum TCP goodput on 1 Gb/s",
        "IP packet size (bytes)",
        "goodput (Mb/s)",
    )
    .with(series)
    .save(&ctx.path("overhead.png"))?;
    let eth = max_goodput_mbps(1500, None);
    let mut rows = Vec::new();
    for (h, reference) in [(1usize, None), (10, None), (100, Some(3.0))] {
        let loss = (1.0 - max_goodput_mbps(1500, Some(h)) / eth) * 100.0;
        // Identity: header bytes over line time, the same arithmetic as the thesis's Figure 4.1.
        rows.push(Row::new(
            Kind::Identity,
            &format!("{h}-hop route, 1,500 B packets"),
            "goodput loss vs Ethernet (%)",
            reference,
            loss,
            if reference.is_some() {
                Target::Absolute(1.0)
            } else {
                Target::AtMost(1.0)
            },
        ));
    }
    let chains: &[usize] = if ctx.quick { &[2] } else { &[2, 10] };
    let dur = if ctx.quick { 40 * MS } else { 400 * MS };
    (ctx.status)("axon-overhead: simulation check");
    let sim = par_map(chains, threads(), |&n| simulated_mbps(n, dur))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut simcsv = String::from("axons,route_hops,header_bytes,analytic_mbps,simulated_mbps\n");
    for (&n, &m) in chains.iter().zip(&sim) {
        let analytic = max_goodput_mbps(1500, Some(n));
        simcsv.push_str(&format!("{n},{n},{},{analytic:.2},{m:.2}\n", header_len_for(n)));
        // Identity: the reference is our own analytic line-rate goodput; the simulation reaching
        // it checks that PAUSE holds the host back by exactly the header bytes, not the thesis.
        rows.push(Row::new(
            Kind::Identity,
            &format!("simulated bulk TCP over {n} Axons ({n}-hop route)"),
            "goodput (Mb/s)",
            Some(analytic),
            m,
            Target::Relative(0.03),
        ));
    }
    write(ctx, "simulated.csv", &simcsv)?;
    Ok(Report {
        title: "Axon header overhead (Figure 4.1)".into(),
        reference: "M. Foss, The Axon Ethernet Device (MS thesis, Rice, 2010), Figure 4.1, §4.3.1".into(),
        rows,
        notes: vec![
            "Header lengths from the implemented format: 1 hop 6 B, 10 hops 11 B, 100 hops 56 B (forward plus \
             reverse hops are constant along a path)."
                .into(),
            "Simulation check, on the simulator's kernel (the `axon` scenario kind): PAUSE frames from the first Axon (§3.3.3) hold the host back so that its frames, \
             grown by the header, fit the inter-Axon links; the analytic row is the reference."
                .into(),
        ],
        files: vec![
            "overhead.csv".into(),
            "overhead.png".into(),
            "overhead.svg".into(),
            "simulated.csv".into(),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_limit_and_hundred_hops() {
        assert!((max_goodput_mbps(1500, None) - 941.5).abs() < 0.1);
        let loss = 1.0 - max_goodput_mbps(1500, Some(100)) / max_goodput_mbps(1500, None);
        assert!((0.03..0.04).contains(&loss), "{loss}");
    }
}
