//! The sweep job ([`TuneJob`]) in the child-process protocol ([`rr_engine::job`]): everything one
//! sweep (or one recording's sweeps) needs, as typed values. `rr-tui tune`'s command line is
//! converted into one once, the explorer's tuning form builds one, and `rr-tui job` runs one
//! handed over on its standard input, answering with the same events as `tune --events`.
//!
//! Its defaults and limits live here: [`TuneJob::new`] and the constants are what the command
//! line defaults to, [`TuneJob::check`] holds every limit and every pair of flags that exclude
//! each other, its messages naming the flag. The command line's parsers refer to them.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::axis::Axes;
use super::defines::{DefineAxis, Defines};
use super::engine_job::EngineJob;
use super::limits::MAX_MEASURED;
use super::objective::Objective;
use super::part::{Shard, MAX_SHARDS};
use super::space::Config;
use super::strategy::StrategyKind;
use super::trial::TuneReport;
use rr_engine::job::Job;
use rr_engine::replay::candidate::CandidateSpec;
use rr_engine::replay::energy::EnergyPolicy;
use rr_engine::replay::pathjson;
use rr_engine::replay::request::{
    check_kernel_timeout, check_noise, check_verify, Supplied, Verify,
};
use rr_engine::replay::timing::{NoiseTarget, TimingPolicy};

pub use rr_engine::replay::request::DEFAULT_KERNEL_TIMEOUT;

/// The run id a sweep's events carry unless told otherwise (`--run-id`).
pub const DEFAULT_RUN_ID: u64 = 1;
/// How the space is walked unless told otherwise (`--strategy`).
pub const DEFAULT_STRATEGY: StrategyKind = StrategyKind::Exhaustive;
/// What the best configuration minimises unless told otherwise (`--objective`).
pub const DEFAULT_OBJECTIVE: Objective = Objective::Time;
/// Energy is measured this long per configuration unless told otherwise (`--energy-seconds`).
pub const DEFAULT_ENERGY_SECONDS: f64 = 1.0;
/// Seconds of energy measurement per configuration (`--energy-seconds`).
pub const ENERGY_SECONDS: RangeInclusive<f64> = 0.2..=60.0;
/// Configurations a sweep measures (`--budget`): at least one, at most what a report holds.
pub const BUDGET: RangeInclusive<u64> = 1..=MAX_MEASURED;
/// Engines run at once through an engine hub (`--engines`).
pub const MAX_ENGINES: u16 = 1024;
/// Adaptive sampling stops at this many kept samples whatever the noise.
pub const MAX_ADAPTIVE_SAMPLES: u32 = 10_000;
/// Samples per configuration when fixed (`--samples`). Each is kept until the configuration
/// is summarised: a million is 8 MB and, for a kernel of a few microseconds, seconds of GPU
/// time; without a limit, 4294967295 ran to the configuration's timeout holding every sample
/// (hundreds of MB a minute).
pub const SAMPLES: RangeInclusive<u32> = 1..=1_000_000;

/// How each configuration is sampled, as the timing flags give it (what is not given is
/// tune's default: cold, adaptive to the noise target).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepTiming {
    /// `--cold` (true) or `--hot` (false); None: tune's default, cold.
    pub cold: Option<bool>,
    /// `--max-noise`, in percent.
    pub max_noise: Option<f64>,
    /// `--min-samples`.
    pub min_samples: Option<u32>,
    /// `--min-time`, in seconds.
    pub min_time: Option<f64>,
    /// `--timeout`, in seconds.
    pub timeout: Option<f64>,
}

impl SweepTiming {
    /// Whether any option of the adaptive stop rule was given.
    pub fn adaptive(&self) -> bool {
        self.max_noise.is_some()
            || self.min_samples.is_some()
            || self.min_time.is_some()
            || self.timeout.is_some()
    }

    /// Whether the L2 cache is flushed before each sample (tune's default).
    pub fn is_cold(&self) -> bool {
        self.cold.unwrap_or(true)
    }

    /// The stop rule: the options given over nvbench-like defaults.
    pub fn target(&self) -> NoiseTarget {
        let d = NoiseTarget::default();
        NoiseTarget {
            max_noise: self.max_noise.map(|p| p / 100.0).or(d.max_noise),
            min_samples: self.min_samples.unwrap_or(d.min_samples),
            min_gpu_time: self.min_time.unwrap_or(d.min_gpu_time),
            timeout: self.timeout.unwrap_or(d.timeout),
        }
    }
}

/// A sweep job: what `rr-tui tune`'s flags say, typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuneJob {
    /// The instance's descriptor, or a recording's directory (each instance swept in turn).
    #[serde(with = "pathjson")]
    pub descriptor: PathBuf,
    /// With a directory: only kernels whose name matches this regex (`--kernels`).
    pub kernels: Option<String>,
    /// With a directory: where the reports go (`--reports`).
    #[serde(with = "pathjson::option")]
    pub reports: Option<PathBuf>,
    /// With a directory: a new engine process for every instance (`--fresh-engines`).
    pub fresh_engines: bool,
    /// The part of the sweep to measure, as given (`--shard K/N`).
    #[serde(with = "shard_wire")]
    pub shard: Option<Shard>,
    /// The part of a Slurm job array this run is (`SLURM_ARRAY_TASK_*`, read where the job was
    /// made), measured when `shard` is not given: of a sweep that can be split ([`TuneJob::shard`]),
    /// and of a recording's instances whatever the strategy.
    #[serde(with = "shard_wire")]
    pub array_task: Option<Shard>,
    /// The axes as typed (`--grid`, `--block`, `--shared-mem`, `--registers`); None: recorded.
    pub grid: Option<String>,
    pub block: Option<String>,
    pub shared_mem: Option<String>,
    pub registers: Option<String>,
    /// Compile-time tuning: the kernel's CUDA C++ source (`--source`).
    #[serde(with = "pathjson::option")]
    pub source: Option<PathBuf>,
    /// Its define axes (`--define`), the first varying slowest.
    #[serde(with = "define_wire")]
    pub defines: Vec<DefineAxis>,
    /// Further NVRTC options for every variant (`--nvrtc-opt`).
    pub nvrtc_opts: Vec<String>,
    /// The kernel in the source, when not named as the recorded one (`--source-kernel`).
    pub source_kernel: Option<String>,
    /// `--ignore-limits`.
    pub ignore_limits: bool,
    /// List the configurations; measure nothing (`--list`).
    pub list: bool,
    /// `--strategy`.
    pub strategy: StrategyKind,
    /// Measure at most this many configurations (`--budget`).
    pub budget: Option<u64>,
    /// Hand out no configuration after this many seconds (`--time-limit`).
    pub time_limit: Option<f64>,
    /// Seed of the random strategies (`--seed`); None: chosen and said.
    pub seed: Option<u64>,
    /// Answer from a finished sweep's report instead of a GPU (`--simulate`).
    #[serde(with = "pathjson::option")]
    pub simulate: Option<PathBuf>,
    /// GPUs to spread the sweep over (`--devices`); None: the recorded one.
    pub devices: Option<Vec<i32>>,
    /// Run the engines through the engine hub at this socket (`--engine-hub`).
    #[serde(with = "pathjson::option")]
    pub engine_hub: Option<PathBuf>,
    /// With an engine hub: engines to run at once (`--engines`).
    pub engines: Option<u16>,
    /// `--objective`.
    pub objective: Objective,
    /// Measure each configuration's energy too (`--energy`).
    pub energy: bool,
    /// `--energy-seconds`.
    pub energy_seconds: f64,
    /// Exactly this many samples per configuration (`--samples`); None: adaptive.
    pub samples: Option<u32>,
    /// The timing flags.
    pub timing: SweepTiming,
    /// What a legacy record lacks (`--image`, `--base-address`, `--assume-llvm18`).
    pub supplied: Supplied,
    /// `--tolerance`, `--no-verify`; bytes by default.
    pub verify: Verify,
    /// `--strict`.
    pub strict: bool,
    /// `--kernel-timeout`.
    pub kernel_timeout: f64,
    /// `--csv`.
    #[serde(with = "pathjson::option")]
    pub csv: Option<PathBuf>,
    /// The report (`--json-out`, or its old spelling `--json FILE`).
    #[serde(with = "pathjson::option")]
    pub json_out: Option<PathBuf>,
    /// `--export`.
    #[serde(with = "pathjson::option")]
    pub export: Option<PathBuf>,
    /// Skip configurations already in the report (`--resume`).
    pub resume: bool,
    /// Stream protocol events instead of text (`--events`: the explorer's tuning screen).
    pub events: bool,
    /// The run id the events carry (`--run-id`).
    pub run_id: u64,
}

impl Job for TuneJob {
    const KIND: &'static str = "tune";
    fn check(&self) -> Result<(), String> {
        TuneJob::check(self)
    }
}

impl TuneJob {
    /// `rr-tui tune DESCRIPTOR` with no other flag: every default of the command line.
    pub fn new(descriptor: PathBuf) -> TuneJob {
        TuneJob {
            descriptor,
            kernels: None,
            reports: None,
            fresh_engines: false,
            shard: None,
            array_task: None,
            grid: None,
            block: None,
            shared_mem: None,
            registers: None,
            source: None,
            defines: Vec::new(),
            nvrtc_opts: Vec::new(),
            source_kernel: None,
            ignore_limits: false,
            list: false,
            strategy: DEFAULT_STRATEGY,
            budget: None,
            time_limit: None,
            seed: None,
            simulate: None,
            devices: None,
            engine_hub: None,
            engines: None,
            objective: DEFAULT_OBJECTIVE,
            energy: false,
            energy_seconds: DEFAULT_ENERGY_SECONDS,
            samples: None,
            timing: SweepTiming::default(),
            supplied: Supplied::default(),
            verify: Verify::Bytes,
            strict: false,
            kernel_timeout: DEFAULT_KERNEL_TIMEOUT,
            csv: None,
            json_out: None,
            export: None,
            resume: false,
            events: false,
            run_id: DEFAULT_RUN_ID,
        }
    }

    /// Whether the command line could have asked for this job: every limit and every pair of
    /// flags that exclude each other, as `rr-tui tune`'s parsers hold them. A job is checked
    /// with it before anything runs; the message names the flag.
    pub fn check(&self) -> Result<(), String> {
        for (flag, shard) in [
            ("--shard", self.shard),
            ("SLURM_ARRAY_TASK_ID", self.array_task),
        ] {
            if let Some(s) = shard.filter(|s| s.k == 0 || s.k > s.n || s.n > MAX_SHARDS) {
                return Err(format!(
                    "{flag} {}/{}: a shard is K/N, from 1/N to N/N (N at most {MAX_SHARDS})",
                    s.k, s.n
                ));
            }
        }
        if let Some(n) = self.budget.filter(|n| !BUDGET.contains(n)) {
            return Err(format!(
                "--budget {n}: expected a number of configurations from 1 to {MAX_MEASURED}"
            ));
        }
        if let Some(t) = self.time_limit.filter(|t| !(t.is_finite() && *t > 0.0)) {
            return Err(format!("--time-limit {t}: expected a positive number"));
        }
        if let Some(list) = &self.devices {
            check_devices(list).map_err(|e| format!("--devices: {e}"))?;
        }
        if let Some(n) = self.engines.filter(|n| !(1..=MAX_ENGINES).contains(n)) {
            return Err(format!("--engines {n}: from 1 to {MAX_ENGINES}"));
        }
        match (&self.engine_hub, self.engines) {
            (Some(_), None) => return Err("--engine-hub needs --engines N".into()),
            (None, Some(_)) => return Err("--engines goes with --engine-hub".into()),
            _ => {}
        }
        let excluded = [
            (
                "--engine-hub",
                self.engine_hub.is_some(),
                "--devices",
                self.devices.is_some(),
            ),
            (
                "--engine-hub",
                self.engine_hub.is_some(),
                "--simulate",
                self.simulate.is_some(),
            ),
            (
                "--simulate",
                self.simulate.is_some(),
                "--resume",
                self.resume,
            ),
            (
                "--export",
                self.export.is_some(),
                "--simulate",
                self.simulate.is_some(),
            ),
            (
                "--samples",
                self.samples.is_some(),
                "--max-noise, --min-samples, --min-time or --timeout",
                self.timing.adaptive(),
            ),
        ];
        for (a, given_a, b, given_b) in excluded {
            if given_a && given_b {
                return Err(format!("{a} cannot be used with {b}"));
            }
        }
        if let Some(n) = self.samples.filter(|n| !SAMPLES.contains(n)) {
            return Err(format!(
                "--samples {n}: expected a number of samples from {} to {}",
                SAMPLES.start(),
                SAMPLES.end()
            ));
        }
        check_noise(&self.timing.target())?;
        if !(self.energy_seconds.is_finite() && ENERGY_SECONDS.contains(&self.energy_seconds)) {
            return Err(format!(
                "--energy-seconds {}: expected seconds from {} to {}",
                self.energy_seconds,
                ENERGY_SECONDS.start(),
                ENERGY_SECONDS.end()
            ));
        }
        check_kernel_timeout(self.kernel_timeout)?;
        check_verify(&self.verify)?;
        for d in &self.defines {
            if DefineAxis::parse(&d.spec()).as_ref() != Ok(d) {
                return Err(format!("--define {}: not a define axis", d.spec()));
            }
        }
        if !self.defines.is_empty() {
            Defines::new(self.defines.clone())?;
        }
        self.check_source_flags()
    }

    /// `--define`, `--nvrtc-opt` and `--source-kernel` without `--source`: refused
    /// ([`source_flags_problem`]).
    pub fn check_source_flags(&self) -> Result<(), String> {
        source_flags_problem(
            self.source.is_some(),
            &[
                ("--define", !self.defines.is_empty()),
                ("--nvrtc-opt", !self.nvrtc_opts.is_empty()),
                ("--source-kernel", self.source_kernel.is_some()),
            ],
        )
    }

    /// Whether the sweep's configurations can be shared out over parts: exhaustive and random
    /// sweeps without a budget (an adaptive strategy needs every result).
    pub fn splittable(&self) -> bool {
        matches!(
            self.strategy,
            StrategyKind::Exhaustive | StrategyKind::Random
        ) && self.budget.is_none()
    }

    /// The part of the sweep to measure: `--shard`, or the Slurm array task's for a sweep that
    /// can be split (one that cannot runs whole in every task unless told otherwise).
    pub fn shard(&self) -> Option<Shard> {
        if !self.splittable() && self.shard.is_none() {
            return None;
        }
        self.instances_shard()
    }

    /// The part of a recording's instances to sweep (`tune DIR`): `--shard`, or the Slurm array
    /// task's, whatever the strategy.
    pub fn instances_shard(&self) -> Option<Shard> {
        self.shard.or(self.array_task)
    }

    /// The descriptor's path.
    pub fn descriptor(&self) -> &Path {
        &self.descriptor
    }

    /// Where the sweep's report goes.
    pub fn report_file(&self) -> Option<&Path> {
        self.json_out.as_deref()
    }

    /// The sampling policy: exactly `--samples` per configuration, or adaptive to the noise
    /// target; cold unless `--hot`.
    pub fn policy(&self) -> TimingPolicy {
        let cold = self.timing.is_cold();
        match self.samples {
            Some(n) => TimingPolicy::fixed(n, cold),
            None => TimingPolicy::adaptive(cold, self.timing.target(), MAX_ADAPTIVE_SAMPLES),
        }
    }

    /// How the report names the verification: "off", "bytes" or the typed comparison.
    pub fn verify_label(&self) -> String {
        match &self.verify {
            Verify::No => "off".into(),
            Verify::Bytes => "bytes".into(),
            Verify::Typed(c) => c.to_spec(),
        }
    }

    /// The source variants are compiled from (`--source`, its defines and options), as a
    /// candidate of the replay's A/B (the same checks, the same compiler options).
    pub fn source_spec(&self) -> Option<CandidateSpec> {
        self.source.as_ref().map(|path| CandidateSpec {
            path: path.clone(),
            kernel: self.source_kernel.clone(),
            defines: vec![],
            options: self.nvrtc_opts.clone(),
        })
    }

    /// The axes as given, for the report.
    pub fn axes(&self) -> Axes {
        Axes {
            grid: self.grid.clone(),
            block: self.block.clone(),
            shared_mem: self.shared_mem.clone(),
            registers: self.registers.clone(),
        }
    }

    /// Whether energy is measured: `--energy`, or an objective that needs it.
    pub fn measures_energy(&self) -> bool {
        self.energy || self.objective.needs_energy()
    }

    /// How long each configuration's energy is measured, when it is.
    pub fn energy_policy(&self) -> Option<EnergyPolicy> {
        self.measures_energy()
            .then(|| EnergyPolicy::sweep(self.energy_seconds))
    }

    /// An empty report of this sweep (filled as trials come).
    pub fn report(&self, kernel: &str, recorded: Config, space_size: u64, seed: u64) -> TuneReport {
        TuneReport {
            strategy: self.strategy,
            objective: self.objective,
            energy: self.energy_policy(),
            seed,
            budget: self.budget,
            time_limit_s: self.time_limit,
            verify: self.verify_label(),
            axes: self.axes(),
            space_size,
            ..TuneReport::new(
                self.descriptor.display().to_string(),
                kernel.to_string(),
                recorded,
                self.policy(),
            )
        }
    }

    /// The job of the engine that measures this sweep's configurations on `device` (through a
    /// hub: the number of one of its engines).
    pub fn engine(&self, device: i32) -> EngineJob {
        EngineJob {
            device_id: Some(device),
            verify: self.verify,
            energy: self.measures_energy(),
            kernel_timeout: self.kernel_timeout,
            supplied: self.supplied.clone(),
            ..EngineJob::new(self.descriptor.clone())
        }
    }
}

/// Distinct CUDA device ordinals (`--devices 0,1`), at most one engine's worth each
/// ([`MAX_ENGINES`], as through a hub): why not, if they are not.
pub fn check_devices(list: &[i32]) -> Result<(), String> {
    if list.is_empty() {
        return Err("name at least one GPU".into());
    }
    if list.len() > usize::from(MAX_ENGINES) {
        return Err(format!(
            "{} GPUs: at most {MAX_ENGINES}, one engine each",
            list.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for &d in list {
        if d < 0 {
            return Err(format!("{d}: expected GPU ordinals like 0,1"));
        }
        if !seen.insert(d) {
            return Err(format!(
                "GPU {d} is listed twice (two engines on one GPU would disturb each other's timings)"
            ));
        }
    }
    Ok(())
}

/// Flags that only mean something for a `--source` (`given`: each flag and whether it was
/// given) are refused without one. The one rule `tune` and the explorer's tuning form apply:
/// the form never accepts what the command refuses.
pub fn source_flags_problem(source: bool, given: &[(&str, bool)]) -> Result<(), String> {
    let flags: Vec<&str> = given
        .iter()
        .filter(|&&(_, g)| g && !source)
        .map(|&(flag, _)| flag)
        .collect();
    match flags.as_slice() {
        [] => Ok(()),
        [one] => Err(format!(
            "{one} applies to a --source only: give the kernel's CUDA C++ source to compile variants from"
        )),
        many => Err(format!(
            "{} apply to a --source only: give the kernel's CUDA C++ source to compile variants from",
            many.join(" and ")
        )),
    }
}

/// A shard as it travels: `{"k": K, "n": N}`, nothing else.
mod shard_wire {
    use super::Shard;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wire {
        k: u32,
        n: u32,
    }

    pub fn serialize<S: Serializer>(s: &Option<Shard>, ser: S) -> Result<S::Ok, S::Error> {
        s.map(|s| Wire { k: s.k, n: s.n }).serialize(ser)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Shard>, D::Error> {
        Option::<Wire>::deserialize(d).map(|w| w.map(|w| Shard { k: w.k, n: w.n }))
    }
}

/// Define axes as they travel: `{"name": …, "values": […]}`, nothing else.
mod define_wire {
    use super::DefineAxis;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wire {
        name: String,
        values: Vec<String>,
    }

    pub fn serialize<S: Serializer>(axes: &[DefineAxis], ser: S) -> Result<S::Ok, S::Error> {
        let wire: Vec<Wire> = axes
            .iter()
            .map(|a| Wire {
                name: a.name.clone(),
                values: a.values.clone(),
            })
            .collect();
        wire.serialize(ser)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<DefineAxis>, D::Error> {
        Vec::<Wire>::deserialize(d).map(|w| {
            w.into_iter()
                .map(|w| DefineAxis {
                    name: w.name,
                    values: w.values,
                })
                .collect()
        })
    }
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
