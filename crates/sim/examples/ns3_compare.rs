//! The Tandem side of `bench/sim-vs-ns3.sh`: runs one scenario of the validation suite
//! (`scenarios/validation/NAME.toml`) and prints one JSON object with the same keys as
//! `bench/ns3/scenario` prints for the exported spec.
//!
//! ```sh
//! cargo run --release -p tandem-sim --example ns3_compare -- NAME [--quick] [--seed N]
//! cargo run --release -p tandem-sim --example ns3_compare -- --list
//! cargo run --release -p tandem-sim --example ns3_compare -- --compare DIR [--quick] NAME...
//! ```
//!
//! `--compare` reads `DIR/ns3-NAME[-quick].json` and `DIR/tandem-NAME[-quick].json` (written
//! by `bench/sim-vs-ns3.sh`) and prints the comparison table with the declared tolerances;
//! it exits 1 when a judged row fails.

use tandem_sim::validation;

/// The same allocator as the `tandem` binary's, so that the speed rows time what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(i) = args.iter().position(|a| a == "--compare") {
        std::process::exit(compare(&args[i + 1..], quick));
    }
    let seed_value = args.iter().position(|a| a == "--seed").map(|i| i + 1);
    let Some(name) = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && Some(*i) != seed_value)
        .map(|(_, a)| a)
    else {
        if args.iter().any(|a| a == "--list") {
            for (n, _) in validation::SCENARIOS {
                println!("{n}");
            }
            return;
        }
        eprintln!("usage: ns3_compare NAME [--quick] [--seed N] | --list");
        std::process::exit(2);
    };
    let seed = args
        .iter()
        .position(|a| a == "--seed")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse::<u64>().unwrap_or_else(|_| panic!("--seed {s}: not a number")));
    let r = validation::load_seeded(name, quick, seed).and_then(|sc| validation::run_tandem(&sc));
    match r {
        Ok(r) => println!("{}", validation::record_json(&r)),
        Err(e) => {
            eprintln!("ns3_compare: {e}");
            std::process::exit(1);
        }
    }
}

/// Prints the table for the named scenarios from stored JSON; 1 if any judged row fails.
fn compare(args: &[String], quick: bool) -> i32 {
    use tandem_sim::experiment::fmt_num;
    let Some(dir) = args.first() else {
        eprintln!("usage: ns3_compare --compare DIR [--quick] NAME...");
        return 2;
    };
    let sfx = if quick { "-quick" } else { "" };
    let tol = match validation::tolerances() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let read = |p: String| {
        std::fs::read_to_string(&p)
            .map_err(|e| format!("{p}: {e}"))
            .and_then(|t| validation::parse_ns3(&t).map_err(|e| format!("{p}: {e}")))
    };
    println!("| scenario | metric | tandem | ns-3 3.37 | difference | target | verdict |");
    println!("|---|---|---|---|---|---|---|");
    let (mut fails, mut judged) = (0, 0);
    for name in args[1..].iter().filter(|a| !a.starts_with("--")) {
        let r = validation::load(name, quick).map_err(|e| e.to_string()).and_then(|sc| {
            let ours = read(format!("{dir}/tandem-{name}{sfx}.json"))?;
            let theirs = read(format!("{dir}/ns3-{name}{sfx}.json"))?;
            validation::compare(name, &sc, &ours, &theirs, &tol).map_err(|e| e.to_string())
        });
        let rows = match r {
            Ok(r) => r,
            Err(e) => {
                eprintln!("ns3_compare: {e}");
                return 2;
            }
        };
        for row in rows {
            let v = row.verdict();
            judged += usize::from(v.is_some());
            fails += usize::from(v == Some(false));
            let diff = match row.reference {
                Some(x) if x != 0.0 => format!("{:+.1}%", (row.measured - x) / x * 100.0),
                _ => "-".into(),
            };
            println!(
                "| {} | {} | {} | {} | {} | {:?} | {} |",
                row.setting,
                row.metric,
                fmt_num(row.measured),
                row.reference.map_or("-".into(), fmt_num),
                diff,
                row.target,
                match v {
                    Some(true) => "PASS",
                    Some(false) => "FAIL",
                    None => "-",
                }
            );
        }
    }
    println!("\n{judged} judged rows, {fails} FAIL");
    i32::from(fails > 0)
}
