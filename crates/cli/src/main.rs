//! `tandem`: the command line of the Tandem hybrid-switching platform.

mod error;
mod pcap_cmd;
mod progress;
mod synth;
mod units;

use clap::{Parser, Subcommand};
use error::CliError;
use std::path::PathBuf;
use std::process::ExitCode;

/// Tandem: switch ASICs working in tandem with co-processors, simulated and live.
#[derive(Parser, Debug)]
#[command(name = "tandem", version, about, long_about = None, propagate_version = true)]
#[command(after_help = "Start with `tandem pcap flows traces/sample.pcap`. Docs: docs/README.md")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Read, summarise and generate packet traces (pcap / pcapng).
    #[command(subcommand)]
    Pcap(PcapCommand),
}

#[derive(Subcommand, Debug)]
enum PcapCommand {
    /// Per-flow records (5-tuple, first/last time, packets, bytes, TCP flags) from a trace.
    ///
    /// Flows are unidirectional and split by an idle timeout. Records are written as flows end
    /// (sort by first_ts if you need start order). The CSV format is in docs/formats.md.
    Flows {
        /// A pcap or pcapng file (Ethernet, raw IP or Linux cooked capture).
        file: PathBuf,
        /// Write CSV records to this file (`-` for standard output) instead of a table.
        #[arg(long, value_name = "OUT")]
        csv: Option<PathBuf>,
        /// A gap longer than this ends a flow.
        #[arg(long, default_value = "60s", value_parser = units::parse_duration_ns, value_name = "DURATION")]
        timeout: u64,
        /// Most flows held in memory; past it the least recently seen are closed early.
        #[arg(long, default_value_t = 4_000_000, value_name = "N")]
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
        /// Packets to write.
        #[arg(long, default_value_t = 10_000)]
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
            timeout,
            max_flows,
            quiet,
        }) => pcap_cmd::flows(&file, csv.as_deref(), timeout, max_flows, quiet),
        Command::Pcap(PcapCommand::Summary { file, top, json, quiet }) => pcap_cmd::summary(&file, top, json, quiet),
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tandem: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
