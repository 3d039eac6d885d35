//! Real-time drivers: the sans-IO cores of Tandem on real sockets, with real timers.
//!
//! The cores (`tandem-controller`, and later the Axon device) never read a clock or touch the
//! network; this crate is the thin adapter that does, so that what runs live is the very state
//! machine the simulator and the in-process benchmarks run.
//!
//! * [`controller`]: the OpenFlow 1.0/1.3 controller server (tokio): handshake, echo keepalive,
//!   bounded queues, the batching pool and a backend per shard, a metrics endpoint;
//! * [`ofbench`]: a cbench-compatible OpenFlow load generator (fake switches sending packet_in);
//! * [`axon`]: the Axon device live on `AF_PACKET` sockets (`tandem axon run`);
//! * [`lab`]: namespaces, veths, Axon processes and DHCP'd Linux hosts (`tandem lab up|down`);
//! * [`clock`]: the monotonic picosecond clock the cores are fed with.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod axon;
pub mod clock;
pub mod controller;
pub mod lab;
pub mod ofbench;
mod toml_error;
