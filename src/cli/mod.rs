//! Command-line interface. `rr-tui [DIR]` opens the explorer; subcommands are headless and
//! scriptable (`--json` everywhere).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Examples run as they are from the source tree, on the bundled records (a test runs each one).
/// Subcommands' examples use the same variables.
const EXAMPLES: &str = "\
Examples, from the source tree, on the bundled records (set these first):
  D=record-fixtures/llvm-two-kernels
  X=$D/8683979482637550046_13526365365894479501
  Y=$D/8683979482637550046_6547468769535274944
  rr-tui $D                            # explore a record directory
  rr-tui report $D                     # the instance report (LLVM's format)
  rr-tui check $D                      # validate every file; exit 1 on problems
  rr-tui inspect $X.json               # one instance, decoded
  rr-tui diff $X.json                  # recorded input vs output, per argument
  rr-tui diff $X.json $Y.json          # two instances: descriptors, snapshots
  rr-tui replay $X.json --verify --repetitions 20";

/// A subcommand's examples, under a heading that says where their variables come from.
macro_rules! examples {
    ($($line:literal),+ $(,)?) => {
        $crate::cli::examples_text(&[$($line),+])
    };
}

/// `lines` under their heading, which names the top-level help's variables (D, X, Y) only on a
/// page whose examples use them.
pub(crate) fn examples_text(lines: &[&str]) -> String {
    let uses_variables = lines
        .iter()
        .any(|line| ["$D", "$X", "$Y"].iter().any(|v| line.contains(v)));
    let mut text = match uses_variables {
        true => "Examples (D, X, Y as in `rr-tui --help`):".to_string(),
        false => "Examples:".to_string(),
    };
    for line in lines {
        text.push_str("\n  ");
        text.push_str(line);
    }
    text
}

// After the macro: the subcommands' argument modules use `examples!`.
mod ab;
mod deprecated;
mod diff;
mod flags;
mod profile;
mod record;
mod replay;
mod repro;
pub mod retyped;
mod supplied;
mod timing;
mod tune;

pub use ab::AbArgs;
pub use deprecated::say_notes as say_deprecation_notes;
use diff::DIFF_ABOUT;
pub use diff::{CompareArgs, DiffArgs};
pub use profile::ProfileArgs;
pub use record::{Hooks, RecordArgs, SnapshotMode};
pub(crate) use replay::{candidate_text, parse_candidate, parse_repetitions, parse_warmup};
pub use replay::{GeometryArgs, ReplayArgs};
pub use repro::ReproArgs;
pub use supplied::SuppliedArgs;
pub(crate) use timing::positive_f64;
pub use timing::TimingArgs;
pub(crate) use tune::{parse_budget, parse_devices, parse_strategy};
pub use tune::{EngineArgs, MergeArgs, TuneArgs, TuneCommand};

/// `rr-tui -V`: the version and the commit built ("unknown" outside a git checkout, `-dirty`
/// after it when built with uncommitted changes; build.rs).
pub(crate) const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("RR_TUI_COMMIT"),
    ")"
);

/// `rr-tui --version`: the version, the commit, the build and what it holds (build.rs): the
/// driver API it is written against, and the oldest driver it runs with (the one it checks).
fn long_version() -> String {
    let oldest = rr_engine::machine::MIN_DRIVER_VERSION;
    let commit = env!("RR_TUI_COMMIT");
    // build.rs marks a build of sources that differ from the commit.
    let modified = match commit.ends_with("-dirty") {
        true => " (built with uncommitted changes to its sources)",
        false => "",
    };
    format!(
        "{}\ncommit: {commit}{modified}\nbuild: {}\nfeatures: built against the CUDA {} driver API, \
         runs with a driver of CUDA {}.{} or newer (NVIDIA 570+); libcuda, libnvrtc, libcupti and \
         libnvidia-ml loaded at run time (none needed to build)",
        env!("CARGO_PKG_VERSION"),
        env!("RR_TUI_BUILD"),
        env!("RR_TUI_CUDA_API"),
        oldest / 1000,
        oldest % 1000 / 10,
    )
}

#[derive(Debug, Parser)]
#[command(
    name = "rr-tui",
    version = VERSION,
    long_version = long_version(),
    about = "Explore, replay and verify recorded GPU kernel executions",
    long_about = format!("rr-tui reads kernel record directories (LLVM libomptarget records unchanged, and rr-tui's own \
CUDA records), replays one kernel in isolation on an NVIDIA GPU at its recorded device addresses, \
verifies the result against the recorded output, and compares memory snapshots.\n\n\
Run `rr-tui DIR` for the interactive explorer, or a subcommand for scripts and CI.\n\n{}", crate::EXIT_STATUS),
    after_long_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub explore: ExploreArgs,
}

#[derive(Debug, Args, Clone, Default)]
pub struct ExploreArgs {
    /// Record directory to explore, or a sweep's JSON file [default: the current directory].
    ///
    /// A finished sweep's JSON file (what `tune` writes with its json-out option) is shown on
    /// its instance's tuning screen; an instance's descriptor opens its record directory with
    /// that instance selected.
    pub dir: Option<PathBuf>,
    /// Colour theme.
    ///
    /// [default: the config file's `theme`, else dark]
    #[arg(long, value_enum)]
    pub theme: Option<Theme>,
    /// A theme file (TOML) over the theme.
    ///
    /// A TOML file with the keys of assets/themes/dark.toml: the styles it sets replace the
    /// theme's, the others stay [default: the config file's `theme_file`, else none].
    #[arg(long, value_name = "PATH")]
    pub theme_file: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// Which config file the explorer reads (`rr-tui config` takes the same flags).
#[derive(Debug, Args, Clone, Default)]
pub struct ConfigArgs {
    /// The config file.
    ///
    /// [default: $XDG_CONFIG_HOME/rr-tui/config.toml, else ~/.config/rr-tui/config.toml, when
    /// it exists]
    #[arg(long, value_name = "PATH", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,
    /// Read no config file: the built-in defaults and the flags only.
    #[arg(long)]
    pub no_config: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Theme {
    #[default]
    Dark,
    Light,
    /// No colours (also chosen when NO_COLOR is set).
    Mono,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the instance report in libomptarget's format (or JSON).
    #[command(
        long_about = "Print the record report of DIR exactly as libomptarget writes it \
(=== Kernel Record Report ===). The report comes from a report file or a captured log in DIR; \
without one, the instance table is built from the descriptors and time and occurrences print as `?`. \
Never reads snapshot bytes.\n\n\
A directory that holds no record but record directories below it (a directory of runs) is \
refused with exit status 2, as a usage error, and the record directories below are listed: \
pass one of them.",
        after_long_help = examples!(
            "rr-tui report $D",
            "rr-tui report $D --json",
            "rr-tui report record-fixtures/llvm-no-report   # no report file: times are ?",
        )
    )]
    Report {
        /// Record directory.
        dir: PathBuf,
        /// Machine-readable output (JSON).
        #[arg(long)]
        json: bool,
    },
    /// Decode one instance: kernel, geometry, limits, arguments, globals, image, sizes.
    #[command(after_long_help = examples!("rr-tui inspect $X.json", "rr-tui inspect $X.json --json"))]
    Inspect {
        /// The instance's descriptor.
        ///
        /// `<KernelHash>_<LaunchConfigHash>.json`, or `<Name>.json` of LLVM 16–22, whose layout
        /// and generation it names.
        descriptor: PathBuf,
        /// Machine-readable output (JSON).
        #[arg(long)]
        json: bool,
    },
    /// Validate every file of every instance, one line per problem; exit 0 when all is well.
    #[command(
        long_about = "Validate every file of every instance (descriptors, snapshots, blobs \
against their hashes, file names against the descriptors' hashes), one line per problem. Exit \
status 0 when all is well; 1 when a problem is an error, or with --strict a warning (the last \
line then says that --strict failed the check on warnings); 2 when PATH is no record: missing, \
neither a directory nor a descriptor (.json), or a directory that holds no record but record \
directories below it (a directory of runs), which are listed: pass one of them.",
        after_long_help = examples!(
        "rr-tui check $D",
        "rr-tui check $X.json --strict",
        "rr-tui check record-fixtures/rrtui-stencil3d --json",
        )
    )]
    Check {
        /// Record directory, or one descriptor.
        path: PathBuf,
        /// Machine-readable output (JSON).
        #[arg(long)]
        json: bool,
        /// Treat warnings (e.g. file names that do not match the hashes) as errors.
        #[arg(long)]
        strict: bool,
    },
    /// Compare two snapshots, one instance's snapshots, or two instances.
    #[command(
        long_about = DIFF_ABOUT,
        after_long_help = examples!(
            "rr-tui diff $X.record_input $X.record_output",
            "rr-tui diff $X.record_input $X.record_output --tolerance f32:rtol=1e-6",
            "rr-tui diff $X.json --tolerance f32",
            "rr-tui diff $X.json $Y.json",
            "rr-tui diff $X.json --json",
        )
    )]
    Diff(DiffArgs),
    /// Replay one instance on the GPU at its recorded addresses: time, verify, set geometry.
    #[command(
        long_about = "Replay one instance on the GPU at its recorded addresses: time it, verify it \
against the recorded output, override its geometry.\n\n\
A/B (--candidate FILE): the candidate's result is verified against the recorded output (bytes, \
or --tolerance); both kernels are timed in alternating pairs (--repetitions pairs, default 100) \
and compared: faster, slower, same within noise, or undecided, with the ratio and its 95 % \
interval. Exit status 1 when the candidate does not verify. With --save-output, the candidate's \
memory is written as `.candidate_output` beside where `.replay_output` would go.",
        after_long_help = examples!(
        "rr-tui replay $X.json --verify",
        "rr-tui replay $X.json --tolerance f32:rtol=1e-5,ulp=4 --repetitions 20",
        "rr-tui replay $X.json --num-teams 8 --num-threads 128 --json",
        "rr-tui replay $X.json --candidate record-fixtures/candidates/saxpy.cu -D ILP=4",
        )
    )]
    Replay(ReplayArgs),
    /// Write a standalone reproducer of one instance: C++ or Python on the CUDA driver API.
    #[command(
        long_about = "Write a standalone reproducer of one recorded instance into --out: repro.cpp, \
a program on the CUDA driver API alone (cuda.h, libcuda), or with --python repro.py on NVIDIA's \
cuda-python bindings; a Makefile, README.txt, and the recorded data it reads at run time (hard \
links when on the same file system, copies otherwise; one tar archive with --pack). The program \
reserves the recorded addresses as replay does, loads the recorded image (or --image of its own), \
sets the globals, restores the input, launches with the recorded geometry and parameter bytes, \
verifies every recorded byte against the recorded output and times N repetitions with CUDA \
events; it exits 0 only when verified. Instances with texture or surface objects, CUDA arrays or \
thread-block clusters are refused with the reason.",
        after_long_help = examples!(
            "rr-tui repro $X.json --out repro-x          # repro.cpp, Makefile, README.txt, data/",
            "rr-tui repro $X.json --out repro-py --python --pack",
            "rr-tui repro $X.json --out repro-f32 --tolerance f32:rtol=1e-6",
        )
    )]
    Repro(ReproArgs),
    /// Rank candidate kernels on every recorded instance of a kernel.
    #[command(
        long_about = "Run each --candidate (one file after each: --candidate a.cu --candidate \
b.cubin) against every recorded instance in DIR of the kernels --kernels matches (every shape and \
content the program produced; DIR is one record directory, with the recordings `record` wrote \
below it, pid-N/ and rank-N/): verify it against the recorded output, time it against the \
recorded kernel in alternating pairs, and print a leaderboard: per candidate, the instances it \
verified on, the geometric mean of its speed-ups with a 95 % interval, its worst instance and its \
verdict. Guards a cheating candidate cannot pass: the bytes the kernel writes are poisoned before \
every candidate run, the candidate's globals are reset, the instances are rotated inside the \
timing loop with the candidate kept loaded (a result it kept from another instance's run fails), \
every byte of every recorded segment is compared, a launch that fails or exceeds the kernel's \
limits is an error, and a time below what writing its bytes at the GPU's peak bandwidth takes is \
implausible (docs/ab-testing.md). Each candidate runs in its own process, switching from \
instance to instance with the memory kept on the GPU where the layout allows. Exit status 0 when at least one candidate verified on every \
instance, 1 otherwise, 2 for a usage or input error (a candidate file given twice or unusable, \
a pattern that matches no instance, an instance no replay can run).",
        after_long_help = examples!(
            "rr-tui ab $D --kernels saxpy --candidate record-fixtures/candidates/saxpy.cu -D ILP=4 --json",
            "rr-tui ab $D --kernels saxpy --candidate $X.image --candidate record-fixtures/candidates/saxpy.cu",
        )
    )]
    Ab(AbArgs),
    /// Profile one replay with Nsight Compute: speed of light, occupancy, stalls, roofline.
    #[command(
        long_about = "Run Nsight Compute (ncu) on exactly one repetition of the replay (its NVTX \
range and the recorded kernel's name select it: no other kernel is profiled) and print what an \
engineer reads first: duration; compute and memory throughput as % of peak (Speed of Light); \
achieved against theoretical occupancy and what limits it; DRAM bytes read and written; L1 and \
L2 hit rates; the top warp-stall reasons; and the kernel's place on the roofline of its \
precision (FLOP per DRAM byte against the GPU's peaks: memory- or compute-bound, and how far \
below the roof). The full report is kept as <instance>.ncu-rep for ncu-ui. rr-tui runs \
`ncu --clock-control none` and never changes the GPU's clocks, so the figures are taken at the \
clocks replays run at. Needs access to the GPU's performance counters (see NVIDIA's \
ERR_NVGPUCTRPERM page when it is refused).\n\n\
With --candidate FILE, the candidate's first repetition is profiled instead of the recorded \
kernel's.",
        after_long_help = examples!(
            "rr-tui profile $X.json",
            "rr-tui profile $X.json --set full --json",
            "rr-tui profile $X.json --block 256 --grid 4096   # a tuned configuration",
            "rr-tui profile $X.json --section MemoryWorkloadAnalysis --output-dir /tmp",
        )
    )]
    Profile(ProfileArgs),
    /// Record kernel launches of an unmodified CUDA program: record [OPTIONS] -- APP ARGS.
    #[command(
        long_about = "Run APP with the rr-tui recorder preloaded (LD_PRELOAD, see --hooks: nothing in APP \
is rebuilt or changed) and write its kernel launches as rr-tui records into --dir: by default the \
first launch of each kernel and launch configuration, with the device memory of every live \
allocation before and after the kernel, the kernel's parameters, launch attributes, module \
globals and device image. Works for nvcc-built programs (static cudart), programs using the \
driver API or NVRTC, and Python frameworks (PyTorch, JAX, cuBLAS, Triton). Kernels inside CUDA \
graphs (stream capture, torch.compile's reduce-overhead mode, XLA command buffers) are recorded \
too, and so are the pinned host memory, CUDA arrays and texture/surface objects kernels read. \
Snapshot contents are stored once per distinct content, with zero pages as holes. APP's output \
and exit status pass through; progress goes to stderr, and at the end what each instance's \
snapshots cost (time, bytes copied and new: device memory stored already is told by \
fingerprints computed on the GPU and not copied), the launches seen, selected and recorded, \
with each reason others were not, and warnings about instances a replay would stumble on \
(`rr-tui check DIR` lists them again).\n\n\
For launchers that cannot be wrapped (mpirun, srun), set the same options as environment \
variables and LD_PRELOAD=librr_recorder.so yourself (docs/recording.md, \"MPI, srun and other launchers\"); each \
MPI rank writes DIR/rank-N.",
        after_long_help = "Examples:\n  rr-tui record -- ./my_app --size 1024          # into ./rr-records\n  \
rr-tui record --dir recs --kernels 'gemm|softmax' -- python3 train.py\n  \
rr-tui record --dir big --snapshot args --budget 20G -- ./big_app\n\
Then explore what was recorded: rr-tui rr-records (or rr-tui recs, rr-tui big)"
    )]
    Record(RecordArgs),
    // `about` and `long_about` are TuneArgs' own: a doc comment here would replace the long one.
    Tune(Box<TuneArgs>),
    /// Say where the explorer's config file is looked for and print the settings in effect.
    #[command(
        long_about = "Say which config file the explorer reads ($XDG_CONFIG_HOME/rr-tui/config.toml, \
else ~/.config/rr-tui/config.toml, when it exists; --config PATH, or none with --no-config) and \
print the settings in effect, as a config file. The file and the theme file it names are checked \
as the explorer checks them: a problem is one line naming the file and the key, exit status 2. \
--default prints the documented default config (every key, with the built-in values), to start a \
file of your own from.",
        after_long_help = examples!(
            "rr-tui config",
            "rr-tui config --default",
            "rr-tui config --no-config",
        )
    )]
    Config(ConfigCommandArgs),
    /// Say what this machine can do: driver, GPUs, ncu, NVRTC, CUPTI, recorder library, Ray.
    #[command(
        long_about = DOCTOR_ABOUT,
        after_long_help = examples!("rr-tui doctor", "rr-tui doctor --json")
    )]
    Doctor(DoctorArgs),
    /// Print the completion script of a shell (bash, zsh, fish, elvish, powershell).
    #[command(
        long_about = "Print rr-tui's completion script for SHELL on standard output, made from \
the same definitions as the command line itself (every subcommand, flag and value). Install it \
where the shell looks: for bash, as ~/.local/share/bash-completion/completions/rr-tui; for zsh, \
as _rr-tui in a directory of $fpath (before compinit runs); for fish, as \
~/.config/fish/completions/rr-tui.fish.",
        after_long_help = examples!("rr-tui completions bash", "rr-tui completions zsh", "rr-tui completions fish")
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff), or write every page into a directory.
    #[command(
        long_about = "Print the manual page (roff) of rr-tui or of one of its commands on standard \
output (`rr-tui man replay | man -l -`), or write every page into a directory with --dir: \
rr-tui.1 and one rr-tui-COMMAND.1 per command (rr-tui-tune-merge.1 for `tune merge`), for \
MANPATH or a package. The pages are made from the same definitions as --help, so they say what \
--help says. A page written earlier under the same name is replaced.",
        after_long_help = examples!("rr-tui man", "rr-tui man tune merge", "rr-tui man --dir man1")
    )]
    Man(ManArgs),
    /// The engine process of `tune` (internal).
    #[command(hide = true)]
    Engine(EngineArgs),
    /// Run one job another rr-tui process hands over (internal): the job is a JSON line in
    /// `RR_TUI_JOB`, or the first line of standard input; its events are JSON lines on standard
    /// output (the child-process protocol, `rr_engine::job`).
    #[command(hide = true)]
    Job,
}

const DOCTOR_ABOUT: &str = "\
Say what this machine can do, one line each: the CUDA driver and the CUDA version it supports, \
each GPU and its compute capability, Nsight Compute (ncu) and whether this user may read the \
GPU's performance counters, NVRTC, CUPTI, the recorder library `record` preloads, Ray (for \
`python -m rr_tui.ray`), tmux (for the end-to-end tests) and the explorer's config file. Each \
piece that is missing or unusable says what needs it and how to fix it. Nothing runs on a GPU: \
the driver is asked for its devices, the libraries are loaded, the performance counters' \
permission is read from /proc/driver/nvidia/params. A driver that does not answer within 15 s (a \
hung GPU) is reported so and the other lines follow; python3 (Ray) and tmux are given 10 s and \
5 s. Exit status 0 whatever it finds (2 for wrong flags, 1 when interrupted by Ctrl-C or SIGTERM, \
which also end the tool it waits for).";

#[derive(Debug, Args, Clone)]
pub struct DoctorArgs {
    /// Machine-readable output (JSON).
    #[arg(long)]
    pub json: bool,
    /// The config file to check, as the explorer would read it.
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// The command whose page to print (`tune merge`; none: rr-tui's own page).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Vec<String>,
    /// Write every page into this directory instead (created if missing).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct ConfigCommandArgs {
    #[command(flatten)]
    pub file: ConfigArgs,
    /// Print the documented default config instead.
    ///
    /// assets/config.toml, every key with the built-in values.
    #[arg(long, conflicts_with_all = ["config", "no_config"])]
    pub default: bool,
}

/// `rr-tui reprot DIR`: clap would take `reprot` for the explorer's directory and complain
/// about `[DIR]`. When the first word is no command and no existing path, and either resembles
/// a command or more words follow, say so (with the likely command) instead.
pub fn misspelt_command(args: &[std::ffi::OsString]) -> Option<String> {
    use clap::CommandFactory;
    let raw = args.get(1)?;
    if std::path::Path::new(raw).exists() {
        return None;
    }
    let Some(first) = raw.to_str() else {
        // Not UTF-8, so no command: name it rather than let clap call a later word a command.
        return Some(format!(
            "`{}` is neither a command nor a record directory (`rr-tui --help` lists the commands)",
            rr_format::text::visible(&raw.to_string_lossy())
        ));
    };
    if first.starts_with('-') {
        return None;
    }
    let cli = Cli::command();
    let names: Vec<&str> = cli
        .get_subcommands()
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .chain(["help"])
        .collect();
    if names.contains(&first) {
        return None;
    }
    let first = rr_format::text::visible(first);
    // A command the word begins (`repl` → `replay`), else the nearest within two edits.
    let closest = names
        .iter()
        .find(|n| first.len() >= 3 && n.starts_with(first.as_ref()))
        .map(|n| (0, *n))
        .or_else(|| {
            names
                .iter()
                .map(|n| (strsim::damerau_levenshtein(&first, n), *n))
                .min()
                .filter(|(distance, _)| *distance <= 2)
        });
    match closest {
        Some((_, name)) => Some(format!(
            "unknown command `{first}`: did you mean `{name}`? (`rr-tui --help` lists the commands)"
        )),
        None if args.len() > 2 => Some(format!(
            "`{first}` is neither a command nor a record directory (`rr-tui --help` lists the commands)"
        )),
        None => None,
    }
}

/// A device ordinal (`--device`): a whole number from 0. Negative numbers reach it (the flags
/// allow them), so that `-1` is told what is allowed rather than taken for a flag.
pub(crate) fn parse_device(s: &str) -> Result<i32, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("{n}: must be ≥ 0 (a device ordinal)")),
        Ok(n) => i32::try_from(n).map_err(|_| format!("{n}: too large for a device ordinal")),
        Err(_) => Err(format!(
            "{} is not a device ordinal (a whole number from 0)",
            rr_format::text::quoted(s)
        )),
    }
}

/// `diff --max`: how many to list, a whole number from 0 (negative numbers reach it, as for
/// [`parse_device`]).
fn parse_max(s: &str) -> Result<usize, String> {
    match s.trim().replace('_', "").parse::<i128>() {
        Ok(n) if n < 0 => Err(format!("{n}: must be ≥ 0")),
        Ok(n) => usize::try_from(n).map_err(|_| format!("{n}: too large")),
        Err(_) => Err(format!(
            "{} is not a whole number from 0",
            rr_format::text::quoted(s)
        )),
    }
}

/// A count from 1 (`1000` or `1_000`).
fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().replace('_', "").parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "{} is not a whole number from 1",
            rr_format::text::quoted(s)
        )),
    }
}

/// A launch dimension triple: `X`, `XxY` or `XxYxZ` with positive integers (missing dimensions
/// are 1), as `tune` writes one 3-D value; the old `X,Y,Z` too (the flags note it as deprecated,
/// [`deprecated::Dim3Flag`]).
pub fn parse_dim3(s: &str) -> Result<[u32; 3], String> {
    let sep = if s.contains('x') { 'x' } else { ',' };
    let parts: Vec<&str> = s.split(sep).map(str::trim).collect();
    let bad = || {
        format!(
            "{}: expected X, XxY or XxYxZ with positive integers (e.g. 128x1x1)",
            rr_format::text::quoted(s)
        )
    };
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad());
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = match p.parse::<u32>() {
            Ok(v) if v > 0 => v,
            // A positive number past what a launch dimension holds is not "no positive
            // integer": say which dimension and the limit, as tune's axes do.
            Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                return Err(format!(
                    "{}: {} is too large (at most {})",
                    rr_format::text::quoted(s),
                    ["X", "Y", "Z"][i],
                    u32::MAX
                ))
            }
            _ => return Err(bad()),
        };
    }
    Ok(out)
}

/// A device address: `0x7f3784000000` or decimal.
pub fn parse_address(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => t.replace('_', "").parse(),
    };
    parsed.map_err(|_| {
        format!(
            "{}: expected an address, 0x… (hex) or decimal",
            rr_format::text::quoted(s)
        )
    })
}

pub(crate) fn parse_tolerance(s: &str) -> Result<rr_engine::diff::Comparison, String> {
    rr_engine::diff::Comparison::parse_spec(s)
}

/// A value parser that keeps its own rule (what it accepts, its error's words) and names the
/// fixed set of values it stands for, so that completion scripts offer them. (The flags that
/// use it hide the list from help: their explanations name each value with its meaning.)
#[derive(Clone)]
pub(crate) struct Listed<T> {
    parse: fn(&str) -> Result<T, String>,
    names: fn() -> Vec<&'static str>,
}

impl<T> Listed<T> {
    pub(crate) fn new(
        parse: fn(&str) -> Result<T, String>,
        names: fn() -> Vec<&'static str>,
    ) -> Self {
        Listed { parse, names }
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Listed<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.names)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// `--type`'s names (the text is kept as given: the comparison checks it, case aside).
fn element_type_names() -> Vec<&'static str> {
    rr_engine::diff::typed::DType::ALL
        .into_iter()
        .map(|d| d.name())
        .collect()
}

fn any_element_type(s: &str) -> Result<String, String> {
    Ok(s.to_string())
}

/// `rr-tui --config F doctor`: the explorer's config flags written before a command that takes
/// them too (`config`, `doctor`) are that command's, moved after its name so that its own (the
/// one shared) definition parses them; clap would take the command's name for the explorer's
/// directory instead. Any other command line is returned as it is.
pub fn config_flags_to_command(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    let mut next = 1;
    while let Some(word) = args.get(next).and_then(|a| a.to_str()) {
        match word {
            "--no-config" => next += 1,
            "--config" => next += 2,
            _ if word.starts_with("--config=") => next += 1,
            _ => break,
        }
    }
    let Some(command) = args.get(next).and_then(|a| a.to_str()) else {
        return args;
    };
    let takes_config_flags = Cli::command()
        .find_subcommand(command)
        .is_some_and(|c| c.get_arguments().any(|a| a.get_id() == "config"));
    if next == 1 || !takes_config_flags {
        return args;
    }
    let flags: Vec<_> = args.drain(1..next).collect();
    args.splice(2..2, flags);
    args
}
