//! Quantities with units (rates, durations, sizes, counts, fractions), as people write them in
//! scenario files and on the command line: [`tandem_time::units`], re-exported here so that
//! scenario code keeps its path; live drivers read their files with the same rules.

pub use tandem_time::units::*;
