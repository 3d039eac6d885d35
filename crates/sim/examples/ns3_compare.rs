//! The Tandem side of `bench/sim-vs-ns3.sh`: runs one of the validation scenarios
//! (`scenarios/validation/`, the same parameters as the `bench/ns3/` programs) and prints one
//! JSON object with the same metric names as the ns-3 program.
//!
//! ```sh
//! cargo run --release -p tandem-sim --example ns3_compare -- bulk [--quick]
//! cargo run --release -p tandem-sim --example ns3_compare -- incast [--quick]
//! cargo run --release -p tandem-sim --example ns3_compare -- dctcp|dctcp-newreno [--quick]
//! ```

use tandem_sim::validation;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let long = if quick { "1s" } else { "10s" };
    let v = match args.first().map(String::as_str) {
        Some("bulk") => validation::bulk(long),
        Some("incast") => validation::incast(if quick { 10 } else { 100 }),
        Some("dctcp") => validation::dctcp(long, true),
        Some("dctcp-newreno") => validation::dctcp(long, false),
        _ => {
            eprintln!("usage: ns3_compare bulk|incast|dctcp|dctcp-newreno [--quick]");
            std::process::exit(2);
        }
    };
    match v {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("ns3_compare: {e}");
            std::process::exit(1);
        }
    }
}
