//! `rr-tui profile`'s arguments, converted once into the profile job
//! ([`rr_engine::profile::ProfileJob`]) that `commands::profile` runs.

use clap::Args;
use std::path::PathBuf;

use rr_engine::profile::job::{self as profile_job, ProfileJob, ProfileOutput, SectionSet};

use super::{GeometryArgs, SuppliedArgs};

/// `--set`'s values, each with what it holds (the job's [`SectionSet`]).
fn set_parser() -> impl clap::builder::TypedValueParser<Value = SectionSet> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        SectionSet::ALL.map(|s| PossibleValue::new(s.name()).help(capitalised(s.describe()))),
    )
    .map(|name| SectionSet::from_name(&name).expect("one of the possible values"))
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect::<String>() + ".")
        .unwrap_or_default()
}

/// `--section`: the job's rule ([`profile_job::check_section`]).
fn parse_section(s: &str) -> Result<String, String> {
    profile_job::check_section(s).map(|()| s.to_string())
}

/// `--timeout`: the job's rule ([`profile_job::check_timeout`]).
fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if profile_job::check_timeout(v).is_ok() => Ok(v),
        _ => Err(format!(
            "{}: expected a positive number",
            rr_format::text::quoted(s)
        )),
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
    #[arg(long, value_parser = set_parser(), default_value = profile_job::DEFAULT_SET.name(), conflicts_with = "sections")]
    pub set: SectionSet,
    /// Collect this section instead of a set (repeatable).
    ///
    /// E.g. MemoryWorkloadAnalysis; `ncu --list-sections` names them.
    #[arg(long = "section", value_name = "NAME", value_parser = parse_section)]
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
    #[arg(long, value_name = "SECONDS", default_value_t = profile_job::DEFAULT_TIMEOUT, value_parser = parse_timeout)]
    pub timeout: f64,
    /// Machine-readable output (JSON).
    #[arg(long)]
    pub json: bool,
    /// Stream protocol events instead (what the explorer's profile view reads): ncu's progress,
    /// then `profile` or `error`, then `done`.
    #[arg(long, hide = true, conflicts_with = "json")]
    pub events: bool,
    /// The run id the events carry.
    #[arg(long, hide = true, default_value_t = 1)]
    pub run_id: u64,
}

impl ProfileArgs {
    /// The profile job these flags ask for: the one conversion from text.
    pub fn job(&self) -> ProfileJob {
        let o = self.geometry.overrides();
        ProfileJob {
            descriptor: self.descriptor.clone(),
            grid: o.grid,
            block: o.block,
            shared_mem: o.shared_mem,
            device: o.device_id,
            supplied: self.supplied.supplied(),
            candidate: self.ab.spec(),
            output_dir: self.output_dir.clone(),
            set: self.set,
            sections: self.sections.clone(),
            ncu: self.ncu.clone(),
            timeout: self.timeout,
            output: match (self.json, self.events) {
                (true, _) => ProfileOutput::Json,
                (false, true) => ProfileOutput::Events,
                (false, false) => ProfileOutput::Text,
            },
            run_id: self.run_id,
        }
    }
}
