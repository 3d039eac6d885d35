//! `tandem`: the command line of the Tandem hybrid-switching platform.

use tandem_cli::{analyze_cmd, axon_cmd, controller_cmd, error, of_cmd, pcap_cmd, sim_cmd, sweep_cmd, synth, units};

use clap::{Parser, Subcommand};
use error::CliError;
use std::path::PathBuf;
use std::process::ExitCode;

/// Tandem: switch ASICs working in tandem with co-processors, simulated and live.
#[derive(Parser, Debug)]
#[command(name = "tandem", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Start with `tandem pcap flows traces/sample.pcap` or `tandem sim run scenarios/incast.toml`.\nDocs: docs/README.md"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Read, summarise and generate packet traces (pcap / pcapng).
    #[command(subcommand)]
    Pcap(PcapCommand),
    /// Run packet-level simulations described by scenario files (docs/sim/scenarios.md).
    #[command(subcommand)]
    Sim(SimCommand),
    /// Run a scenario over a parameter grid x seeds on local cores: each run in DIR/runs/<id>/
    /// (resumable: finished runs are skipped), all of them in DIR/campaign.parquet and .csv.
    ///
    /// Example: `tandem sweep scenarios/incast.toml --grid tcp.min_rto=1ms,10ms,200ms
    /// --seeds 1..5 --out results/rto`. See docs/python.md for campaigns on Slurm and Ray.
    Sweep(sweep_cmd::SweepArgs),
    /// Analyse flow records (offline studies from the papers).
    #[command(subcommand)]
    Analyze(AnalyzeCommand),
    /// Decode OpenFlow 1.0 / 1.3 messages (raw files or captures) to JSON lines, and back.
    #[command(subcommand)]
    Of(OfCommand),
    /// Run the OpenFlow 1.0/1.3 controller (the paper's L2 learning switch on batched
    /// backends), or read a running one's counters with `tandem controller stats`.
    Controller(controller_cmd::ControllerArgs),
    /// Benchmark an OpenFlow controller as cbench does (fake switches sending packet_in).
    Ofbench(controller_cmd::OfBenchArgs),
    /// Run an Axon device live on real interfaces.
    #[command(subcommand)]
    Axon(axon_cmd::AxonCommand),
    /// Build or remove a lab of live Axons and Linux hosts in network namespaces.
    #[command(subcommand)]
    Lab(axon_cmd::LabCommand),
    /// Run a built-in experiment and compare it with the paper (or ns-3) it reproduces.
    ///
    /// Writes CSV, plots (PNG and SVG) and results.md (a reference-vs-measured table) into the
    /// output folder. Experiments are compiled in: this works from any directory.
    #[command(arg_required_else_help = true)]
    Reproduce {
        /// The experiment (see --list).
        #[arg(required_unless_present = "list")]
        name: Option<String>,
        /// List the experiments, one line each.
        #[arg(long)]
        list: bool,
        /// The small version (seconds; what CI runs) instead of the full one.
        #[arg(long)]
        quick: bool,
        /// Output folder [default: results/NAME].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// No progress display.
        #[arg(long, short)]
        quiet: bool,
    },
}

#[derive(Subcommand, Debug)]
enum AnalyzeCommand {
    /// Active flows and the traffic offload ratio (TFOR: share of bytes in the top k flows)
    /// per interval, with their CCDFs (TCPU paper, Figures 1 and 2), as CSV + PNG + SVG.
    ///
    /// From a trace, each interval's bytes per flow are exact (a second pass over the
    /// packets) and flows are cut as `tandem pcap flows` does (60 s idle timeout); a flow CSV
    /// gives only first/last time and bytes, so each flow's bytes are spread uniformly over
    /// its lifetime.
    Offload {
        /// A flow CSV from `tandem pcap flows --csv`, or a pcap/pcapng trace.
        flows: PathBuf,
        /// Flows offloaded per interval (a comma-separated list).
        #[arg(long, value_delimiter = ',', default_value = "2048,4096", value_name = "K,...")]
        k: Vec<usize>,
        /// Interval length.
        #[arg(long, default_value = "1s", value_parser = units::parse_duration_ns, value_name = "DURATION")]
        interval: u64,
        /// Output folder [default: results/offload-FILE-STEM].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Replay your own traffic through CoSwitch's testbed model: vswitch only, physical only
    /// and CoSwitch (server core, switch CPU and TCAM, threshold), as CSV + a summary.
    ///
    /// Each flow record becomes a flow of its packets, of its mean packet size, spread over
    /// its lifetime; sources are spread over the servers by address. See
    /// docs/systems/coswitch.md for the model and its parameters.
    Coswitch {
        /// A flow CSV from `tandem pcap flows --csv`, or a pcap/pcapng trace.
        flows: PathBuf,
        /// Compress time by this factor to raise the load (the paper "zooms in" its trace).
        #[arg(long, default_value_t = 1.0)]
        speedup: f64,
        /// Servers the sources are spread over.
        #[arg(long, default_value_t = 1)]
        servers: u32,
        /// Output folder [default: results/coswitch-FILE-STEM].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// CAM entries an Axon host port needs for a trace (Axon thesis §4.5, Figure 4.9): for each
    /// IPv4 packet, the packets since the previous one to the same destination, plus one; as
    /// CSV + PNG + SVG (cumulative share of packets a CAM of N entries serves).
    Cam {
        /// A pcap or pcapng trace.
        pcap: PathBuf,
        /// Output folder [default: results/cam-FILE-STEM].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum OfCommand {
    /// Print every OpenFlow message of a file as one JSON object per line (see docs/formats.md).
    ///
    /// The file holds raw concatenated messages, or is a pcap/pcapng capture of OpenFlow
    /// sessions (TCP port 6653 or 6633), reassembled per direction; capture lines add `ts` and
    /// `direction`, and a message that does not parse there is printed as an `error` object.
    /// A bad message in a raw file is an error (exit 2) naming its byte offset.
    Decode {
        /// The file (`-` for standard input).
        file: PathBuf,
    },
    /// Write the raw OpenFlow messages described by JSON lines as `decode` prints them; `decode`
    /// then `encode` gives back the same bytes.
    Encode {
        /// The JSON lines (`-` for standard input).
        file: PathBuf,
        /// Write the messages here [default: standard output, when it is not a terminal].
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum SimCommand {
    /// Run a scenario: progress on standard error, a summary at the end, and flows, drops and
    /// queues as CSV and Parquet (flows.csv, flows.parquet, ...), summary.json, pcaps and plots
    /// (PNG and SVG) in the output folder.
    Run {
        /// The scenario file (TOML; see scenarios/ for examples).
        scenario: PathBuf,
        /// Output folder [default: results/SCENARIO-NAME].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Seed of every random draw (overrides the file's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a value of the file, e.g. `--set tcp.min_rto=1ms --set flows[0].load=30%`.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = sim_cmd::parse_set)]
        sets: Vec<(String, String)>,
        /// The most memory the run may need, e.g. `8GiB`: a scenario whose estimate is above it
        /// is refused [default: half of this machine's memory].
        #[arg(long, value_name = "SIZE", value_parser = sim_cmd::parse_max_memory)]
        max_memory: Option<u64>,
        /// Run partitioned on N threads (the file's `threads`): the same outputs for every N.
        #[arg(long, value_name = "N")]
        threads: Option<String>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Validate a scenario (every key, unit and name, and the memory a run needs) and say what
    /// it would run.
    Check {
        /// The scenario file.
        scenario: PathBuf,
        /// Seed (overrides the file's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a value, as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = sim_cmd::parse_set)]
        sets: Vec<(String, String)>,
        /// The most memory the run may need, e.g. `8GiB`: a scenario whose estimate is above it
        /// is refused [default: half of this machine's memory].
        #[arg(long, value_name = "SIZE", value_parser = sim_cmd::parse_max_memory)]
        max_memory: Option<u64>,
        /// Check it as a run on N threads (the file's `threads`): the split it would use and
        /// the memory its partitions need.
        #[arg(long, value_name = "N")]
        threads: Option<String>,
    },
    /// Write the scenario as the spec bench/ns3/scenario.cc runs in ns-3 (same topology,
    /// queues, TCP settings and flow list); refuses what ns-3 would model differently.
    ExportNs3 {
        /// The scenario file.
        scenario: PathBuf,
        /// Seed (overrides the file's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a value, as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = sim_cmd::parse_set)]
        sets: Vec<(String, String)>,
        /// Write the spec here [default: standard output].
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The most memory the run may need, e.g. `8GiB`: a scenario whose estimate is above it
        /// is refused [default: half of this machine's memory].
        #[arg(long, value_name = "SIZE", value_parser = sim_cmd::parse_max_memory)]
        max_memory: Option<u64>,
    },
}

#[derive(Subcommand, Debug)]
enum PcapCommand {
    /// Per-flow records (5-tuple, first/last time, packets, bytes, TCP flags) from a trace.
    ///
    /// Flows are unidirectional and split by an idle timeout. Records are written as flows end
    /// (sort by first_ts if you need start order). Without --csv or --parquet, a table is
    /// printed. The CSV and Parquet formats are in docs/formats.md.
    Flows {
        /// A pcap or pcapng file (Ethernet, raw IP or Linux cooked capture).
        file: PathBuf,
        /// Write CSV records to this file (`-` for standard output) instead of a table.
        #[arg(long, value_name = "OUT")]
        csv: Option<PathBuf>,
        /// Write the same records as Parquet (typed columns, capture times as UTC timestamps) to
        /// this file; may be given with --csv.
        #[arg(long, value_name = "OUT")]
        parquet: Option<PathBuf>,
        /// A gap longer than this ends a flow.
        #[arg(long, default_value = "60s", value_parser = units::parse_duration_ns, value_name = "DURATION")]
        timeout: u64,
        /// Most flows held in memory; past it the least recently seen are closed early.
        #[arg(long, default_value_t = 4_000_000, value_name = "N", value_parser = units::parse_positive)]
        max_flows: usize,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Packets, bytes, duration, protocol mix and top talkers of a trace.
    Summary {
        /// A pcap or pcapng file.
        file: PathBuf,
        /// How many top talkers to list.
        #[arg(long, default_value_t = 10, value_name = "N")]
        top: usize,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Write a synthetic, deterministic data-center trace (TCP with handshakes, ACKs and FINs,
    /// UDP request/response, ICMP echo, ARP, 802.1Q tags), valid to the last checksum.
    Synth {
        /// The pcap file to write.
        out: PathBuf,
        /// Packets to write (at least 1).
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
        packets: u64,
        /// Seed of every random choice: same seed, byte-identical file.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Mean time between new flows.
        #[arg(long, default_value = "200us", value_parser = units::parse_duration_ns, value_name = "DURATION")]
        flow_gap: u64,
        /// Bytes kept of each packet (headers survive 96; 0 keeps whole packets).
        #[arg(long, default_value_t = 0)]
        snaplen: u32,
    },
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Pcap(PcapCommand::Flows {
            file,
            csv,
            parquet,
            timeout,
            max_flows,
            quiet,
        }) => pcap_cmd::flows(&file, csv.as_deref(), parquet.as_deref(), timeout, max_flows, quiet),
        Command::Pcap(PcapCommand::Summary { file, top, json, quiet }) => pcap_cmd::summary(&file, top, json, quiet),
        Command::Sim(SimCommand::Run {
            scenario,
            out,
            seed,
            mut sets,
            max_memory,
            threads,
            quiet,
        }) => {
            sets.extend(threads.map(|n| ("threads".to_string(), n)));
            sim_cmd::run(&scenario, out.as_deref(), seed, &sets, quiet, max_memory)
        }
        Command::Sweep(a) => sweep_cmd::sweep(&a),
        Command::Sim(SimCommand::Check {
            scenario,
            seed,
            mut sets,
            max_memory,
            threads,
        }) => {
            sets.extend(threads.map(|n| ("threads".to_string(), n)));
            sim_cmd::check(&scenario, seed, &sets, max_memory)
        }
        Command::Sim(SimCommand::ExportNs3 {
            scenario,
            seed,
            sets,
            out,
            max_memory,
        }) => sim_cmd::export_ns3(&scenario, seed, &sets, out.as_deref(), max_memory),
        Command::Analyze(AnalyzeCommand::Offload {
            flows,
            k,
            interval,
            out,
            quiet,
        }) => analyze_cmd::offload(&flows, &k, interval, out.as_deref(), quiet),
        Command::Analyze(AnalyzeCommand::Coswitch {
            flows,
            speedup,
            servers,
            out,
            quiet,
        }) => analyze_cmd::coswitch(&flows, speedup, servers, out.as_deref(), quiet),
        Command::Analyze(AnalyzeCommand::Cam { pcap, out }) => analyze_cmd::cam(&pcap, out.as_deref()),
        Command::Controller(a) => controller_cmd::controller(a),
        Command::Ofbench(a) => controller_cmd::ofbench(a),
        Command::Axon(c) => axon_cmd::axon(c),
        Command::Lab(c) => axon_cmd::lab(c),
        Command::Of(OfCommand::Decode { file }) => of_cmd::decode(&file),
        Command::Of(OfCommand::Encode { file, out }) => of_cmd::encode(&file, out.as_deref()),
        Command::Reproduce { list: true, .. } => sim_cmd::list(),
        Command::Reproduce {
            name,
            quick,
            out,
            quiet,
            ..
        } => sim_cmd::reproduce(name.as_deref().unwrap_or_default(), quick, out.as_deref(), quiet),
        Command::Pcap(PcapCommand::Synth {
            out,
            packets,
            seed,
            flow_gap,
            snaplen,
        }) => synth::write_trace(
            &out,
            &synth::SynthConfig {
                packets,
                seed,
                flow_gap_ns: flow_gap,
                snaplen,
            },
        ),
    }
}

/// The process's allocator: mimalloc, which backs its heap with transparent huge pages where
/// the kernel allows them (`madvise` mode, as Debian's default). At data-center scale the
/// simulator touches tens of megabytes of ports, packets and TCP state scattered over the
/// heap, and with 4 KiB pages a large part of its time went to TLB misses
/// (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Sim(SimCommand::Run { .. }) | Command::Reproduce { .. } | Command::Analyze(_)
    ) {
        tandem_cli::paths::clean_up_on_interrupt();
    }
    let r = run(cli);
    while tandem_cli::paths::interrupted() {
        // The interrupt handler is removing what the command made and will exit with 130 or
        // 143; whatever the command returned meanwhile is an effect of that.
        std::thread::park();
    }
    tandem_cli::stdout::finish();
    match r {
        // A closed pipe is not a failure (see `tandem_cli::stdout`); a full disk is.
        Ok(()) if tandem_cli::stdout::failed() => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tandem: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
