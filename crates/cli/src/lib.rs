//! The front end of the `tandem` command as a library: each `*_cmd` module is one family of
//! subcommands. The binary (`main.rs`) parses arguments and calls these; the Python bindings
//! (`python/`) call the same functions, so both report the same one-line errors.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// `print!` for the commands: see [`stdout`] for what happens when the reader has gone.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {
        $crate::stdout::write(format_args!($($t)*))
    };
}

/// `println!` for the commands: see [`stdout`] for what happens when the reader has gone.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($t)*)))
    };
}

pub mod analyze_cmd;
pub mod axon_cmd;
pub mod cam_experiment;
pub mod campaign;
pub mod controller_cmd;
pub mod error;
pub mod gpu_controller_experiment;
pub mod live_experiments;
pub mod of_cmd;
pub mod paths;
pub mod pcap_cmd;
pub mod progress;
pub mod sim_cmd;
pub mod stdout;
pub mod sweep_cmd;
pub mod synth;
pub mod systems;
pub mod units;
