//! `rr-tui profile`'s arguments.

use clap::Args;
use std::path::PathBuf;

use super::{parse_dim3, SuppliedArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileSet {
    /// Speed of Light, launch statistics, occupancy, workload distribution.
    Basic,
    /// Every section ncu has (many more passes: slower).
    Full,
}

#[derive(Debug, Args, Clone)]
pub struct ProfileArgs {
    /// The instance's descriptor.
    pub descriptor: PathBuf,
    /// Nsight Compute's section set kept in the report for `ncu-ui` (the summary's metrics are
    /// always collected).
    #[arg(long, value_enum, default_value_t = ProfileSet::Basic, conflicts_with = "sections")]
    pub set: ProfileSet,
    /// Collect these sections instead of a set (e.g. MemoryWorkloadAnalysis; `ncu
    /// --list-sections` names them); repeatable.
    #[arg(long = "section", value_name = "NAME")]
    pub sections: Vec<String>,
    /// The ncu executable (default: on PATH, then CUDA_HOME, /usr/local/cuda and
    /// /opt/nvidia/nsight-compute).
    #[arg(long, value_name = "PATH")]
    pub ncu: Option<PathBuf>,
    /// Where to keep the report (`<instance>.ncu-rep`; default: beside the descriptor).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// The grid to profile instead of the recorded one: X,Y,Z (or XxYxZ).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_dim3)]
    pub grid: Option<[u32; 3]>,
    /// The block to profile: X,Y,Z (or XxYxZ).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_dim3)]
    pub block: Option<[u32; 3]>,
    /// The dynamic shared memory bytes to profile with.
    #[arg(long)]
    pub shared_mem: Option<u32>,
    /// The CUDA device ordinal.
    #[arg(long)]
    pub device_id: Option<i32>,
    #[command(flatten)]
    pub supplied: SuppliedArgs,
    /// Machine-readable output (JSON).
    #[arg(long)]
    pub json: bool,
}

impl ProfileArgs {
    /// The replay ncu runs: one repetition, timed with events alone (no blocking kernel for
    /// ncu to serialise behind).
    pub fn request(&self) -> rr_engine::replay::ReplayRequest {
        let mut r = rr_engine::replay::ReplayRequest::new(self.descriptor.clone());
        r.overrides.grid = self.grid;
        r.overrides.block = self.block;
        r.overrides.shared_mem = self.shared_mem;
        r.overrides.device_id = self.device_id;
        r.supplied = self.supplied.supplied();
        r.output_dir = self.output_dir.clone();
        r.events_only = true;
        r
    }
}
