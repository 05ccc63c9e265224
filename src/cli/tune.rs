//! `rr-tui tune`'s arguments.

use clap::Args;
use std::path::PathBuf;

use rr_engine::replay::Verify;
use rr_tune::engine_job::{self, EngineJob};
use rr_tune::job::{self, TuneJob};
use rr_tune::StrategyKind;

use super::{flags, parse_tolerance, SuppliedArgs, TimingArgs};

#[derive(Debug, Args, Clone)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    about = "Sweep launch configurations and compile-time variants: the fastest that verifies",
    long_about = "Replay one instance under many launch configurations and report the fastest that \
still verifies. Every configuration of a GPU runs in one engine process through one replay session \
(memory restored device to device between samples); a configuration that faults restarts the engine \
and the sweep goes on.\n\n\
Axes (omitted ones keep the recorded value): a comma-separated list of items. An item is a \
number, a range A..B:STEP (A, A+STEP, … up to B inclusive; A..B steps by 1) or A..B*FACTOR \
(A, A×FACTOR, … while at most B: 32..1024*2 is 32, 64, …, 1024), and for --grid and --block a \
3-D value XxYxZ whose dimensions may each be a range (128x1..8*2 is 128x1, 128x2, 128x4, 128x8; \
missing dimensions are 1). Note 128,1,1 is a list here; one 3-D value is 128x1x1. \
--grid cover gives each block the grid that keeps the recorded number of threads in every \
dimension (ceil(recorded grid × recorded block / block)): what kernels that guard `i < n` need. \
Configurations over a hardware limit (1024 threads per block, block z 64, grid y/z 65535) are \
skipped, and so are those outside the recorded TeamsLimits/ThreadsLimits unless \
--ignore-limits. --list shows the configurations without measuring.\n\n\
Timing: cold by default (the L2 cache flushed before each sample, outside the timed interval); \
each configuration is sampled until the relative standard deviation is under --max-noise \
(default 0.5 %) after --min-samples, or --timeout, or exactly --samples N times; samples taken \
while the SM clock ran below 75 % of its rating are discarded. The GPU's clocks and settings are \
never changed.\n\n\
Compile-time tuning (--source k.cu -D TILE=1,2,4,8 -D UNROLL=1..8*2 --grid GRID_X*4/TILE): every \
configuration runs a variant of the kernel's source compiled with NVRTC for the GPU, one per \
combination of the defines, beside the recorded image as the baseline; --export tuned.json hands \
the best back as JSON and a C header (tuned.h).",
    after_long_help = examples!(
        "rr-tui tune $X.json --block 32..1024*2 --grid cover",
        "rr-tui tune $X.json --block 64,128,256 --grid 1..8 --csv sweep.csv",
        "rr-tui tune $X.json --block 32..1024:32 --grid 1..64 --strategy annealing --budget 200",
        "rr-tui tune $X.json --grid 1..64 --json-out all.json        # all, measured",
        "rr-tui tune $X.json --grid 1..64 --strategy tpe --budget 8 --simulate all.json",
        "rr-tui tune $X.json --block 32..1024*2 --json-out sweep.json --resume",
        "rr-tui tune $X.json --block 32..1024*2 --devices 0,1 --samples 10",
        "rr-tui tune $D --kernels saxpy --block 64..512*2 --reports tuned   # every instance",
    )
)]
pub struct TuneArgs {
    /// The instance's descriptor, or a recording's directory.
    ///
    /// A directory: every instance (or those --kernels selects) swept with the same axes, one
    /// after the other, a report each in --reports and a summary.
    #[arg(required = true)]
    pub descriptor: Option<PathBuf>,
    /// With a directory: only kernels whose name matches REGEX.
    ///
    /// The mangled or the readable name.
    #[arg(long, value_name = "REGEX", help_heading = "Directory of instances")]
    pub kernels: Option<String>,
    /// With a directory: where the reports go.
    ///
    /// Each instance's report (<instance>.tune.json and .csv) and the summary (summary.json,
    /// summary.csv) [default: ./rr-tune-<directory's name>]; with --resume, each instance
    /// continues its own.
    #[arg(long, value_name = "DIR", help_heading = "Directory of instances")]
    pub reports: Option<PathBuf>,
    /// With a directory: a new engine process for every instance.
    ///
    /// By default a GPU's
    /// engine goes on to the next instance and keeps on the GPU every range that holds the same
    /// recorded bytes at the same address (a model's weights are loaded once, not once per
    /// instance); an instance whose memory is laid out differently (the program allocated or
    /// freed memory in between), or that uses page-locked host memory, CUDA arrays, textures or
    /// surfaces, gets a new engine anyway, and the output says why.
    /// Results do not depend on it (the GPU suite checks the verdicts); use it to rule out
    /// anything carried over from one instance to the next.
    #[arg(long, help_heading = "Directory of instances")]
    pub fresh_engines: bool,
    #[command(subcommand)]
    pub command: Option<TuneCommand>,
    /// Measure part K of N of the sweep.
    ///
    /// The configurations whose index is K-1 modulo N, the recorded one in part 1 (exhaustive
    /// and random sweeps without --budget); `tune merge` joins the parts' --json-out reports into
    /// the unsharded report. In a Slurm job array it defaults to the task's part
    /// (SLURM_ARRAY_TASK_ID among SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "K/N", value_parser = rr_tune::shard::Shard::parse, help_heading = "Search")]
    pub shard: Option<rr_tune::shard::Shard>,
    /// Grid values [default: recorded].
    ///
    /// E.g. 64,128 or 108..864:108 or 16x16, or `cover` (the recorded threads for each block).
    #[arg(long, value_name = "AXIS", help_heading = "Axes")]
    pub grid: Option<String>,
    /// Block values [default: recorded].
    ///
    /// E.g. 32..1024*2 or 128x1..8*2.
    #[arg(long, value_name = "AXIS", help_heading = "Axes")]
    pub block: Option<String>,
    /// Dynamic shared memory bytes [default: recorded].
    ///
    /// E.g. 0,16384,49152.
    #[arg(long, value_name = "AXIS", help_heading = "Axes")]
    pub shared_mem: Option<String>,
    /// Register limits per thread [default: as compiled].
    ///
    /// 1 to 255, e.g. 32..128:32 (CU_JIT_MAX_REGISTERS; records holding PTX only).
    #[arg(long, value_name = "AXIS", help_heading = "Axes")]
    pub registers: Option<String>,
    /// Compile-time tuning: the kernel's CUDA C++ source.
    ///
    /// Every configuration runs a variant
    /// compiled from it with NVRTC for the GPU (one per combination of --define values), on all
    /// CPU cores ahead of the GPU and cached on disk by content; the recorded configuration runs
    /// the recorded image as the baseline. A variant that does not compile is reported with the
    /// compiler's first error and the sweep goes on. --grid and --block may then be expressions
    /// of the defines and the recorded GRID_X..BLOCK_Z, dimensions separated by " x ":
    /// --block TILE, --grid "(GRID_X*4 + TILE-1) / TILE", --block "BLOCK_X/TILE x 4" (dimensions
    /// an expression leaves out are 1, as for numbers).
    #[arg(long, value_name = "FILE", help_heading = "Compile-time")]
    pub source: Option<PathBuf>,
    /// A define axis of --source (repeatable).
    ///
    /// NAME=VALUES, values as the other axes (16,32,64 or 1..8*2) or words (float,double); the
    /// first varies slowest.
    // Without --source: refused by `TuneArgs::check_source_flags`, the rule the explorer's form
    // applies too (clap's `requires` would be a second one, with a message of its own).
    #[arg(long = "define", short = 'D', value_name = "NAME=VALUES", value_parser = parse_define_axis, help_heading = "Compile-time")]
    pub defines: Vec<rr_tune::defines::DefineAxis>,
    /// A further NVRTC option for every variant (repeatable).
    ///
    /// E.g. --nvrtc-opt=--use_fast_math.
    #[arg(
        long = "nvrtc-opt",
        value_name = "OPTION",
        allow_hyphen_values = true,
        help_heading = "Compile-time"
    )]
    pub nvrtc_opts: Vec<String>,
    /// The kernel in --source, when not named as the recorded one.
    #[arg(long, value_name = "NAME", help_heading = "Compile-time")]
    pub source_kernel: Option<String>,
    // The help of the flags other commands take too is theirs: `super::flags`.
    #[arg(long, help_heading = "Axes", help = flags::IGNORE_LIMITS, long_help = flags::IGNORE_LIMITS_LONG)]
    pub ignore_limits: bool,
    /// List the configurations; measure nothing.
    ///
    /// The configurations the axes span, and which would be skipped and why (no GPU needed).
    /// What the sweep would refuse is refused as it would be.
    #[arg(long, help_heading = "Axes")]
    pub list: bool,
    /// How to walk the space.
    ///
    /// exhaustive (every configuration, in order), random (without
    /// repetition), annealing (simulated annealing: neighbours of good configurations) or tpe
    /// (Tree-structured Parzen Estimator: a model of where good configurations lie, asked
    /// for the most promising next; random for the first 10).
    #[arg(long, default_value_t = job::DEFAULT_STRATEGY, value_parser = super::Listed::new(parse_strategy, strategy_names), hide_possible_values = true, help_heading = "Search")]
    pub strategy: StrategyKind,
    /// Measure at most N configurations [default: all].
    ///
    /// The recorded one included.
    #[arg(long, value_name = "N", value_parser = parse_budget, help_heading = "Search")]
    pub budget: Option<u64>,
    /// Stop after this many seconds [default: none].
    ///
    /// No configuration is handed out after it.
    #[arg(long, value_name = "SECONDS", value_parser = super::timing::positive_f64, allow_negative_numbers = true, help_heading = "Search")]
    pub time_limit: Option<f64>,
    /// Seed of the random strategies [default: chosen and printed].
    ///
    /// The random, annealing and tpe strategies use it.
    #[arg(long, value_name = "N", help_heading = "Search")]
    pub seed: Option<u64>,
    /// Answer from a finished sweep's report, not a GPU.
    ///
    /// Every configuration is answered from a finished sweep's --json-out report of this instance
    /// (configurations it lacks count as skipped): compares strategies in
    /// seconds, no GPU needed. Nothing is measured: the report says `simulated_from` and carries
    /// the sweep's verification and timing, and is never resumed.
    #[arg(
        long,
        value_name = "SWEEP.json",
        help_heading = "Search",
        conflicts_with = "resume"
    )]
    pub simulate: Option<PathBuf>,
    /// GPUs to spread the sweep over [default: the recorded device].
    ///
    /// One engine process each, e.g. 0,1 (one GPU: 0). Several, hence the plural: one is
    /// `replay --device N`, as `profile --device` and `record --device` take it.
    #[arg(long, value_name = "LIST", value_parser = parse_devices, help_heading = "Search")]
    pub devices: Option<Devices>,
    /// Run the engines through an engine hub at SOCKET.
    ///
    /// An engine hub listening on the Unix socket SOCKET instead of this machine's GPUs: the
    /// Python package's Ray sweep (`python -m rr_tui.ray`) is one,
    /// running each engine on a GPU of its cluster. The recording must be at the same path
    /// there. A configuration whose engine the hub loses goes to another engine. Needs
    /// --engines.
    #[arg(
        long,
        value_name = "SOCKET",
        help_heading = "Search",
        requires = "engines",
        conflicts_with_all = ["devices", "simulate"]
    )]
    pub engine_hub: Option<PathBuf>,
    /// With --engine-hub: engines to run at once.
    ///
    /// One per GPU the hub has.
    #[arg(
        long,
        value_name = "N",
        help_heading = "Search",
        requires = "engine_hub",
        value_parser = clap::value_parser!(u16).range(1..=i64::from(job::MAX_ENGINES))
    )]
    pub engines: Option<u16>,
    /// What the best configuration minimises.
    ///
    /// time (the median kernel time), energy (joules
    /// per execution) or edp (energy-delay product, joules × seconds). energy and edp measure
    /// energy (--energy). Searches learn from it; the report keeps time and energy for every
    /// configuration either way and marks the Pareto front of time against energy.
    #[arg(long, default_value_t = job::DEFAULT_OBJECTIVE, value_parser = super::Listed::new(parse_objective, objective_names), hide_possible_values = true, help_heading = "Energy")]
    pub objective: rr_tune::Objective,
    /// Measure each configuration's energy too.
    ///
    /// Every verified configuration's energy per execution, with NVML's energy counter
    /// (read only: clocks and power limits are never changed), running it back to back for
    /// --energy-seconds after its timing; the report gains energy, power and noise per
    /// configuration and the Pareto front of time against energy.
    #[arg(long, help_heading = "Energy")]
    pub energy: bool,
    /// Seconds of each energy measurement.
    ///
    /// How long each configuration's energy is measured at least (and at least five ~100 ms
    /// counter windows), 0.2 to 60; longer is less noisy.
    #[arg(long, value_name = "SECONDS", default_value_t = job::DEFAULT_ENERGY_SECONDS, value_parser = parse_energy_seconds, help_heading = "Energy")]
    pub energy_seconds: f64,
    /// Exactly N samples per configuration.
    ///
    /// N kept samples (1 to 1000000), instead of sampling to the noise target.
    #[arg(
        long,
        value_name = "N",
        value_parser = parse_samples,
        conflicts_with_all = ["max_noise", "min_samples", "min_time", "timeout"],
        help_heading = "Timing"
    )]
    pub samples: Option<u32>,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub supplied: SuppliedArgs,
    #[arg(long, value_name = "SPEC", value_parser = parse_tolerance, help_heading = "Verification", help = flags::TOLERANCE, long_help = flags::TOLERANCE_LONG_TUNE)]
    pub tolerance: Option<rr_engine::diff::Comparison>,
    /// Do not verify.
    ///
    /// For records without .record_output.
    #[arg(long, conflicts_with = "tolerance", help_heading = "Verification")]
    pub no_verify: bool,
    #[arg(long, help_heading = "Verification", help = flags::STRICT, long_help = flags::STRICT_LONG)]
    pub strict: bool,
    #[arg(long, value_name = "SECONDS", default_value_t = job::DEFAULT_KERNEL_TIMEOUT, value_parser = super::replay::parse_kernel_timeout, help_heading = "Timing", help = flags::KERNEL_TIMEOUT, long_help = flags::KERNEL_TIMEOUT_LONG)]
    pub kernel_timeout: f64,
    #[arg(long, value_name = "FILE", help_heading = "Output", help = flags::CSV, long_help = flags::CSV_LONG)]
    pub csv: Option<PathBuf>,
    #[arg(long, value_name = "FILE", help_heading = "Output", help = flags::JSON_OUT, long_help = flags::JSON_OUT_LONG)]
    pub json_out: Option<PathBuf>,
    /// `--json-out`'s old spelling (see [`TuneArgs::report_file`]).
    #[arg(long = "json", value_name = "FILE", hide = true, conflicts_with = "json_out", num_args = 0..=1, default_missing_value = "", value_parser = OldJsonFile)]
    pub json_old_spelling: Option<PathBuf>,
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Output",
        conflicts_with = "simulate",
        help = flags::EXPORT,
        long_help = flags::EXPORT_LONG
    )]
    pub export: Option<PathBuf>,
    /// Skip configurations already in the --json-out file.
    ///
    /// An interrupted or extended sweep.
    // Checked in `tune::run` (either spelling of the file will do), not by clap's `requires`,
    // which takes one flag or a group naming the hidden old spelling.
    #[arg(long, help_heading = "Output")]
    pub resume: bool,
    /// Stream protocol events instead of text (the explorer's tuning screen).
    #[arg(long, hide = true)]
    pub events: bool,
    /// The run id the events carry (the explorer tells its sweeps apart by it).
    #[arg(long, hide = true, default_value_t = job::DEFAULT_RUN_ID)]
    pub run_id: u64,
}

/// `tune`'s subcommands.
#[derive(Debug, clap::Subcommand, Clone)]
pub enum TuneCommand {
    /// Join the reports of a sweep's shards into one.
    ///
    /// Joins the `tune --json-out` reports of a sweep's shards (`tune --shard 1/N` … `N/N`) into the
    /// report one unsharded run writes: the same rows in the same order, the same best and
    /// speed-up.
    #[command(after_long_help = examples!(
        "rr-tui tune merge part-*.json --json-out sweep.json --csv sweep.csv",
    ))]
    Merge(MergeArgs),
}

#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// The shards' --json-out reports, every part of one sweep once.
    #[arg(required = true, value_name = "SHARD.json")]
    pub reports: Vec<PathBuf>,
    // What `tune` writes, in the same words (`super::flags`).
    #[arg(long, value_name = "FILE", help = flags::JSON_OUT, long_help = flags::JSON_OUT_LONG_MERGE)]
    pub json_out: Option<PathBuf>,
    /// `--json-out`'s old spelling (see [`MergeArgs::report_file`]).
    #[arg(long = "json", value_name = "FILE", hide = true, conflicts_with = "json_out", num_args = 0..=1, default_missing_value = "", value_parser = OldJsonFile)]
    pub json_old_spelling: Option<PathBuf>,
    #[arg(long, value_name = "FILE", help = flags::CSV, long_help = flags::CSV_LONG)]
    pub csv: Option<PathBuf>,
    #[arg(long, value_name = "FILE", help = flags::EXPORT, long_help = flags::EXPORT_LONG)]
    pub export: Option<PathBuf>,
    /// Merge even when configurations are in no part.
    ///
    /// A part that was cut short, or measured nothing of its share: how many configurations no
    /// part measured is said, instead of refused. Every part must still be given (a missing
    /// shard is refused all the same).
    #[arg(long)]
    pub allow_missing: bool,
}

/// `tune --json FILE` and `tune merge --json FILE`: the report file's old spelling. `--json` is
/// the switch for JSON on stdout in every other command, so the file is `--json-out`.
/// `tune`'s and `tune merge`'s old `--json FILE`, taken with a note. Given without a file, as
/// the other commands' `--json` switch is, it says where tune's JSON goes instead of clap's
/// "a value is required for '--json <FILE>'" (a flag help does not show).
#[derive(Clone)]
pub(crate) struct OldJsonFile;

impl clap::builder::TypedValueParser for OldJsonFile {
    type Value = PathBuf;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<PathBuf, clap::Error> {
        if value.is_empty() {
            // Refused by the command (`no_json_switch`), as its other errors are: one line after
            // `rr-tui: error: `, naming `tune` or `tune merge`.
            return Ok(PathBuf::new());
        }
        let old = super::deprecated::OldSpelling::new(
            "--json FILE",
            "--json-out FILE",
            clap::builder::PathBufValueParser::new(),
        );
        old.parse_ref(cmd, arg, value)
    }
}

/// `tune --json` or `tune merge --json` given as a switch (without a file): why it is refused,
/// naming the command, for `json_old_spelling`.
fn no_json_switch(command: &str, old: Option<&std::path::Path>) -> Option<String> {
    old.filter(|p| p.as_os_str().is_empty()).map(|_| {
        format!(
            "{command} has no --json switch: it writes its report with --json-out FILE \
             (--json FILE is that flag's old spelling)"
        )
    })
}

impl MergeArgs {
    /// Why `--json` given as a switch is refused (it is `--json-out FILE`'s old spelling).
    pub(crate) fn json_switch_refused(&self) -> Option<String> {
        no_json_switch("tune merge", self.json_old_spelling.as_deref())
    }

    /// Where the merged report goes, whichever spelling named it.
    pub fn report_file(&self) -> Option<&std::path::Path> {
        self.json_out
            .as_deref()
            .or(self.json_old_spelling.as_deref())
    }
}

impl TuneArgs {
    /// Why `--json` given as a switch is refused (it is `--json-out FILE`'s old spelling).
    pub(crate) fn json_switch_refused(&self) -> Option<String> {
        no_json_switch("tune", self.json_old_spelling.as_deref())
    }

    /// Where the sweep's report goes, whichever spelling named it.
    pub fn report_file(&self) -> Option<&std::path::Path> {
        self.json_out
            .as_deref()
            .or(self.json_old_spelling.as_deref())
    }

    /// The descriptor (clap requires it unless a subcommand is given).
    pub fn descriptor(&self) -> &std::path::Path {
        self.descriptor
            .as_deref()
            .unwrap_or(std::path::Path::new(""))
    }

    /// The sweep these arguments ask for, checked ([`TuneJob::check`]): what `tune` runs. The
    /// Slurm array task's part is read here, once, where it can apply (a recording's
    /// instances; a sweep that can be split) and the sweep does not stream events to the
    /// explorer.
    pub fn job(&self) -> Result<TuneJob, String> {
        let t = &self.timing;
        let mut job = TuneJob {
            descriptor: self.descriptor().to_path_buf(),
            kernels: self.kernels.clone(),
            reports: self.reports.clone(),
            fresh_engines: self.fresh_engines,
            shard: self.shard,
            array_task: None,
            grid: self.grid.clone(),
            block: self.block.clone(),
            shared_mem: self.shared_mem.clone(),
            registers: self.registers.clone(),
            source: self.source.clone(),
            defines: self.defines.clone(),
            nvrtc_opts: self.nvrtc_opts.clone(),
            source_kernel: self.source_kernel.clone(),
            ignore_limits: self.ignore_limits,
            list: self.list,
            strategy: self.strategy,
            budget: self.budget,
            time_limit: self.time_limit,
            seed: self.seed,
            simulate: self.simulate.clone(),
            devices: self.devices.as_ref().map(|d| d.0.clone()),
            engine_hub: self.engine_hub.clone(),
            engines: self.engines,
            objective: self.objective,
            energy: self.energy,
            energy_seconds: self.energy_seconds,
            samples: self.samples,
            timing: t.sweep(),
            supplied: self.supplied.supplied(),
            verify: verify_of(self.no_verify, self.tolerance),
            strict: self.strict,
            kernel_timeout: self.kernel_timeout,
            csv: self.csv.clone(),
            json_out: self.report_file().map(std::path::Path::to_path_buf),
            export: self.export.clone(),
            resume: self.resume,
            events: self.events,
            run_id: self.run_id,
        };
        if job.shard.is_none() && !job.events && (job.descriptor.is_dir() || job.splittable()) {
            // Lossy: a value that is not UTF-8 is refused by the number parser, not ignored.
            job.array_task = rr_tune::shard::Shard::from_slurm(|v| {
                std::env::var_os(v).map(|x| x.to_string_lossy().into_owned())
            })
            .transpose()?;
        }
        job.check()?;
        Ok(job)
    }
}

/// `--no-verify` and `--tolerance` as the verification they ask for (bytes by default).
fn verify_of(no_verify: bool, tolerance: Option<rr_engine::diff::Comparison>) -> Verify {
    match (no_verify, tolerance) {
        (true, _) => Verify::No,
        (false, Some(c)) => Verify::Typed(c),
        (false, None) => Verify::Bytes,
    }
}

pub(crate) fn parse_budget(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if job::BUDGET.contains(&n) => Ok(n),
        _ => Err(format!(
            "{}: expected a number of configurations from {} to {}",
            rr_format::text::quoted(s),
            job::BUDGET.start(),
            job::BUDGET.end()
        )),
    }
}

/// `--samples N`: the job's limit ([`job::SAMPLES`]), said by the parser.
pub(crate) fn parse_samples(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if job::SAMPLES.contains(&n) => Ok(n),
        _ => Err(format!(
            "{}: expected a number of samples from {} to {}",
            rr_format::text::quoted(s),
            job::SAMPLES.start(),
            job::SAMPLES.end()
        )),
    }
}

/// Distinct CUDA device ordinals (`--devices 0,1`).
#[derive(Debug, Clone, PartialEq)]
pub struct Devices(pub Vec<i32>);

/// `0,1,3`: distinct CUDA device ordinals.
pub(crate) fn parse_devices(s: &str) -> Result<Devices, String> {
    let mut out: Vec<i32> = Vec::new();
    for item in s.split(',').map(str::trim) {
        let d: i32 = item.parse().ok().filter(|d| *d >= 0).ok_or_else(|| {
            format!(
                "{}: expected GPU ordinals like 0,1",
                rr_format::text::quoted(item)
            )
        })?;
        out.push(d);
        // The job's rule: distinct ordinals.
        job::check_devices(&out)?;
    }
    Ok(Devices(out))
}

fn parse_objective(s: &str) -> Result<rr_tune::Objective, String> {
    rr_tune::Objective::parse(s).ok_or_else(|| {
        format!(
            "{}: expected time, energy or edp",
            rr_format::text::quoted(s)
        )
    })
}

fn objective_names() -> Vec<&'static str> {
    rr_tune::Objective::ALL
        .into_iter()
        .map(|o| o.name())
        .collect()
}

/// Seconds of energy measurement per configuration ([`job::ENERGY_SECONDS`]).
fn parse_energy_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if job::ENERGY_SECONDS.contains(&v) => Ok(v),
        _ => Err(format!(
            "{}: expected seconds from {} to {}",
            rr_format::text::quoted(s),
            job::ENERGY_SECONDS.start(),
            job::ENERGY_SECONDS.end()
        )),
    }
}

pub(crate) fn parse_strategy(s: &str) -> Result<StrategyKind, String> {
    StrategyKind::parse(s).ok_or_else(|| {
        format!(
            "{}: expected exhaustive, random, annealing or tpe",
            rr_format::text::quoted(s)
        )
    })
}

fn strategy_names() -> Vec<&'static str> {
    StrategyKind::ALL.into_iter().map(|k| k.name()).collect()
}

/// The hidden engine a sweep drives: one per GPU, commands on stdin, events on stdout. The
/// tuner hands its engines an [`EngineJob`] (`rr-tui job`); `rr-tui engine DESCRIPTOR …` is the
/// same engine for people and tests, its flags converted into the same job ([`EngineArgs::job`]).
#[derive(Debug, Args, Clone)]
pub struct EngineArgs {
    pub descriptor: PathBuf,
    #[arg(long)]
    pub device_id: Option<i32>,
    #[arg(long, value_parser = parse_tolerance)]
    pub tolerance: Option<rr_engine::diff::Comparison>,
    #[arg(long)]
    pub no_verify: bool,
    /// Open NVML at the start (the sweep measures energy).
    #[arg(long)]
    pub energy: bool,
    #[arg(long, default_value_t = engine_job::DEFAULT_KERNEL_TIMEOUT, value_parser = super::replay::parse_kernel_timeout)]
    pub kernel_timeout: f64,
    #[command(flatten)]
    pub supplied: SuppliedArgs,
    /// Answer from a finished sweep of this instance (a `tune --json-out` report) instead of a
    /// GPU: a simulated engine, so that what drives engines (`tune --engine-hub`, the Python
    /// package's Ray sweep) runs and is tested where there is no GPU.
    #[arg(long, value_name = "SWEEP.json")]
    pub simulate: Option<PathBuf>,
    /// With --simulate: take this many times the engine time the sweep spent on each answer
    /// (0: answer at once).
    #[arg(
        long,
        default_value_t = engine_job::DEFAULT_PACE,
        requires = "simulate",
        allow_hyphen_values = true,
        value_parser = parse_pace
    )]
    pub pace: f64,
}

/// A simulated engine's pace: a factor from 0 to [`engine_job::MAX_PACE`].
fn parse_pace(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=engine_job::MAX_PACE).contains(&x) => Ok(x),
        _ => Err(format!(
            "{}: expected a factor from 0 to {}",
            rr_format::text::quoted(s),
            engine_job::MAX_PACE
        )),
    }
}

impl EngineArgs {
    /// The engine these flags ask for, checked ([`EngineJob::check`]).
    pub fn job(&self) -> Result<EngineJob, String> {
        let job = EngineJob {
            descriptor: self.descriptor.clone(),
            device_id: self.device_id,
            verify: verify_of(self.no_verify, self.tolerance),
            energy: self.energy,
            kernel_timeout: self.kernel_timeout,
            supplied: self.supplied.supplied(),
            simulate: self.simulate.clone(),
            pace: self.pace,
        };
        job.check()?;
        Ok(job)
    }
}

/// `NAME=VALUES` (see [`rr_tune::defines::DefineAxis::parse`]).
fn parse_define_axis(s: &str) -> Result<rr_tune::defines::DefineAxis, String> {
    rr_tune::defines::DefineAxis::parse(s)
}

#[cfg(test)]
#[path = "tune_tests.rs"]
mod tests;
