//! Prints one flow's congestion window of a validation scenario each time it changes, in the
//! shape of ns-3's `CongestionWindow` trace that `bench/ns3/scenario` prints with
//! `NS3_TRACE=0` (microseconds, old -> new bytes), so the two can be put side by side. This is
//! how issue 16's changes 12 and 13 were found (docs/sim/validation.md).
//!
//! ```sh
//! cargo run --release -p tandem-sim --example cwnd_trace -- NAME FLOW [--quick]
//! tandem sim export-ns3 scenarios/validation/NAME.toml --out NAME.spec   # add --set duration=... for --quick
//! NS3_TRACE=0 bench/ns3/build/scenario NAME.spec 2>&1 >/dev/null | grep " nN CWND"
//! ```
//!
//! FLOW is the flow's index in the scenario (0 = the first); in ns-3's trace its sender is
//! node `nN`, N being the sender host's position in the spec's node list. The window is read
//! every microsecond of simulated time, so changes less than 1 us apart show as one.

use tandem_sim::{run, time::US, validation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (Some(name), Some(flow)) = (pos.first(), pos.get(1).and_then(|f| f.parse::<usize>().ok())) else {
        eprintln!("usage: cwnd_trace NAME FLOW [--quick]");
        std::process::exit(2);
    };
    let result = validation::load(name, quick).and_then(|sc| {
        let mut sim = run::build(&sc, None)?;
        if sim.flow_results().nth(flow).is_none() {
            return Err(tandem_sim::experiment::ExperimentError(format!(
                "{name} has no flow {flow}"
            )));
        }
        let mut last = None;
        let mut t = 0;
        while t < sc.duration {
            t += US;
            sim.run_until(t);
            let cwnd = sim
                .flow_results()
                .nth(flow)
                .and_then(|(_, _, eps)| eps[0])
                .map(|e| e.cwnd());
            if let Some(c) = cwnd.filter(|c| Some(*c) != last) {
                println!("{} CWND {} -> {c}", t / US, last.unwrap_or(0));
                last = Some(c);
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        eprintln!("cwnd_trace: {e}");
        std::process::exit(1);
    }
}
