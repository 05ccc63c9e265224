//! The profile job: what `rr-tui profile` is asked to do ([`job`]: the typed job the command line
//! and the explorer build, a replay job run under Nsight Compute). What ncu answers is read by
//! [`crate::ncu`] and re-exported here, so a profile's users name one module.

pub mod job;

pub use crate::ncu::{
    find_ncu, ncu_not_executable, raw, roofline_chart, Profile, ProfileResult, RawKernel, Roofline,
    METRICS, SECTIONS,
};
pub use job::{ProfileJob, ProfileOutput, SectionSet};
