//! `rr-tui profile`'s arguments.

use clap::Args;
use std::path::PathBuf;

use super::{GeometryArgs, SuppliedArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileSet {
    /// Speed of Light, launch statistics, occupancy, workload distribution.
    Basic,
    /// Every section ncu has (many more passes: slower).
    Full,
}

impl ProfileSet {
    /// The set's name on ncu's command line.
    pub fn ncu_name(self) -> &'static str {
        match self {
            ProfileSet::Basic => "basic",
            ProfileSet::Full => "full",
        }
    }
}

#[derive(Debug, Args, Clone)]
pub struct ProfileArgs {
    /// The instance's descriptor.
    pub descriptor: PathBuf,
    /// ncu section set.
    ///
    /// Nsight Compute's section set kept in the report for `ncu-ui`; the summary's metrics are
    /// always collected.
    #[arg(long, value_enum, default_value_t = ProfileSet::Basic, conflicts_with = "sections")]
    pub set: ProfileSet,
    /// Collect this section instead of a set (repeatable).
    ///
    /// E.g. MemoryWorkloadAnalysis; `ncu --list-sections` names them.
    #[arg(long = "section", value_name = "NAME")]
    pub sections: Vec<String>,
    /// The ncu executable.
    ///
    /// [default: on PATH, then CUDA_HOME, /usr/local/cuda and /opt/nvidia/nsight-compute]
    #[arg(long, value_name = "PATH")]
    pub ncu: Option<PathBuf>,
    /// Where to keep the report.
    ///
    /// `<instance>.ncu-rep` [default: beside the descriptor].
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    #[command(flatten)]
    pub geometry: GeometryArgs,
    #[command(flatten)]
    pub ab: super::replay::CandidateArgs,
    #[command(flatten)]
    pub supplied: SuppliedArgs,
    /// Stop ncu when it has not finished after SECONDS.
    ///
    /// ncu and the replay under it: a profile with many passes over a large replay takes
    /// minutes, a hung one for ever.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800.0, value_parser = super::timing::positive_f64)]
    pub timeout: f64,
    /// Machine-readable output (JSON).
    #[arg(long)]
    pub json: bool,
    /// Stream protocol events instead (the explorer's profile view): ncu's progress, then
    /// `profile` or `error`, then `done`.
    #[arg(long, hide = true, conflicts_with = "json")]
    pub events: bool,
    /// The run id the events carry.
    #[arg(long, hide = true, default_value_t = 1)]
    pub run_id: u64,
}

impl ProfileArgs {
    /// `rr-tui profile …` as the explorer starts it: the descriptor, a configuration (None: the
    /// recorded one), a legacy record's supplied pieces, an A/B candidate to profile instead of
    /// the recorded kernel, events tagged `run`.
    pub fn events_command(
        descriptor: &std::path::Path,
        geometry: Option<([u32; 3], [u32; 3], u32)>,
        supplied: &SuppliedArgs,
        candidate: Option<&rr_engine::replay::candidate::CandidateSpec>,
        run: u64,
    ) -> Vec<String> {
        let mut v = vec!["profile".to_string(), descriptor.display().to_string()];
        if let Some((grid, block, smem)) = geometry {
            let dims = |d: [u32; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
            v.extend([
                "--grid".into(),
                dims(grid),
                "--block".into(),
                dims(block),
                "--shared-mem".into(),
                smem.to_string(),
            ]);
        }
        v.extend(supplied.to_args());
        if let Some(c) = candidate {
            v.extend(c.to_args());
        }
        v.extend(["--events".into(), "--run-id".into(), run.to_string()]);
        v
    }

    /// The replay ncu runs: one repetition, timed with events alone (no blocking kernel for
    /// ncu to serialise behind).
    pub fn request(&self) -> rr_engine::replay::ReplayRequest {
        let mut r = rr_engine::replay::ReplayRequest::new(self.descriptor.clone());
        r.overrides = self.geometry.overrides();
        r.supplied = self.supplied.supplied();
        r.output_dir = self.output_dir.clone();
        r.events_only = true;
        // One pair: the candidate's first repetition is the one profiled.
        r.candidate = self.ab.spec();
        r
    }
}
