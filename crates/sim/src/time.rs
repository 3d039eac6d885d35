//! Simulated time: integer picoseconds since the start of the run, Tandem's one definition
//! (`tandem-time`, shared with the sans-IO cores), re-exported here so that simulator code
//! and users keep writing `tandem_sim::time::...`.

pub use tandem_time::{as_secs, tx_time, Time, MS, NS, PS, SEC, US};
