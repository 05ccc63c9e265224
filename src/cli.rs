//! Command-line interface. `rr-tui [DIR]` opens the explorer; subcommands are headless and
//! scriptable (`--json` everywhere).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "rr-tui",
    version,
    about = "Explore, replay and verify recorded GPU kernel executions",
    long_about = "rr-tui reads kernel record directories (LLVM libomptarget records unchanged, and rr-tui's own \
CUDA records), replays one kernel in isolation on an NVIDIA GPU at its recorded device addresses, \
verifies the result against the recorded output, and compares memory snapshots.\n\n\
Run `rr-tui DIR` for the interactive explorer, or a subcommand for scripts and CI.",
    after_help = "Examples:\n  rr-tui record-fixtures/llvm-saxpy          explore a record directory\n  \
rr-tui report records/                       the instance report (LLVM format; --json)\n  \
rr-tui check records/                        validate every file; exit 1 on problems\n  \
rr-tui replay records/X_Y.json --verify --repetitions 20\n  \
rr-tui diff records/X_Y.json                 recorded input vs output, per argument",
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
    /// Record directory to explore (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Colour theme.
    #[arg(long, value_enum, default_value_t = Theme::Dark)]
    pub theme: Theme,
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
Never reads snapshot bytes."
    )]
    Report {
        /// Record directory.
        dir: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Decode one instance: kernel, geometry, limits, arguments, globals, image, snapshot sizes.
    Inspect {
        /// The instance's descriptor (`<KernelHash>_<LaunchConfigHash>.json`, or `<Name>.json`
        /// of LLVM 16–22, whose layout and generation it names).
        descriptor: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Validate every file of every instance; one line per problem; exit 0 only when all is well.
    Check {
        /// Record directory, or one descriptor.
        path: PathBuf,
        #[arg(long)]
        json: bool,
        /// Treat warnings (e.g. file names that do not match the hashes) as errors.
        #[arg(long)]
        strict: bool,
    },
    /// Compare two snapshots, or an instance's input/output/replay snapshots.
    #[command(
        long_about = "Compare memory snapshots byte for byte at equal offsets (snapshots have a fixed \
layout: nothing is inserted or deleted), or as typed values with tolerances.\n\n\
  rr-tui diff A B                 two files\n  rr-tui diff X_Y.json            recorded input vs recorded output \
(and recorded output vs .replay_output when present), labelled by kernel argument; legacy LLVM 16–22 \
records: .memory vs .original.output (and the old tool's .replay.output)\n\n\
Element passes when bits are equal, or |a-b| <= atol + rtol*|b|, or the ULP distance <= ulp. \
NaN matches NaN (any payload); NaN never matches a number; +0 matches -0."
    )]
    Diff(DiffArgs),
    /// Replay one instance on the GPU at its recorded addresses; time, verify, override geometry.
    Replay(ReplayArgs),
    /// Record kernel launches of an unmodified CUDA program: rr-tui record [OPTIONS] -- APP ARGS.
    #[command(
        long_about = "Run APP with the rr-tui recorder loaded (a CUPTI injection library: nothing in APP is \
rebuilt or changed) and write its kernel launches as rr-tui records into --dir: by default the \
first launch of each kernel and launch configuration, with the device memory of every live \
allocation before and after the kernel, the kernel's parameters, launch attributes, module \
globals and device image. Works for nvcc-built programs (static cudart), programs using the \
driver API or NVRTC, and Python frameworks (PyTorch, cuBLAS, Triton). Snapshot contents are \
stored once per distinct content, with zero pages as holes. APP's output and exit status pass \
through; progress goes to stderr.\n\n\
For launchers that cannot be wrapped (mpirun, srun), set the same options as environment \
variables and CUDA_INJECTION64_PATH yourself (README, \"Recording\"); each MPI rank writes \
DIR/rank-N.",
        after_help = "Examples:\n  rr-tui record -- ./my_app --size 1024\n  \
rr-tui record --dir recs --kernels 'gemm|softmax' -- python3 train.py\n  \
rr-tui record --snapshot args --budget 20G -- ./big_app\n  \
rr-tui recs                       explore what was recorded"
    )]
    Record(RecordArgs),
}

#[derive(Debug, Args, Clone)]
pub struct RecordArgs {
    /// Directory for the records (created; refused if it holds another recording).
    #[arg(long, short = 'o', default_value = "rr-records", value_name = "DIR")]
    pub dir: PathBuf,
    /// Write into a directory that already holds records.
    #[arg(long)]
    pub overwrite: bool,
    /// Do not record memory after the kernel (halves the work; replays cannot verify).
    #[arg(long)]
    pub no_output: bool,
    /// Only kernels whose name (mangled or readable) matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub kernels: Option<String>,
    /// Record the N-th launch (1-based) of each selected kernel instead of the first launch of
    /// each launch configuration.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub occurrence: Option<u64>,
    /// At most N instances per kernel.
    #[arg(long, value_name = "N")]
    pub max_per_kernel: Option<u64>,
    /// Ignore the first N launches (warm-up).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip: u64,
    /// Stop recording once this many bytes are written (e.g. 20G); noted in the report.
    #[arg(long, value_name = "BYTES")]
    pub budget: Option<String>,
    /// Which device memory an instance keeps: every live allocation, or only those its
    /// parameters point into (for large applications).
    #[arg(long, value_enum, default_value_t = SnapshotMode::All)]
    pub snapshot: SnapshotMode,
    /// Only launches on this device.
    #[arg(long, value_name = "N")]
    pub device: Option<i32>,
    /// Only these MPI ranks (e.g. 0,2-3).
    #[arg(long, value_name = "LIST")]
    pub ranks: Option<String>,
    /// Print the report when the program ends.
    #[arg(long)]
    pub report: bool,
    /// libcupti, when it is not found in the usual places.
    #[arg(long, value_name = "PATH")]
    pub cupti: Option<PathBuf>,
    /// The recorder library (default: librr_recorder.so next to this executable).
    #[arg(long, value_name = "PATH")]
    pub library: Option<PathBuf>,
    /// The program to record and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "APP ARGS"
    )]
    pub app: Vec<std::ffi::OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SnapshotMode {
    All,
    Args,
}

#[derive(Debug, Args, Clone)]
pub struct DiffArgs {
    /// First snapshot, or a descriptor (.json).
    pub a: PathBuf,
    /// Second snapshot (omit when A is a descriptor).
    pub b: Option<PathBuf>,
    #[command(flatten)]
    pub compare: CompareArgs,
    /// How many differing ranges / mismatching elements to list.
    #[arg(long, default_value_t = 10)]
    pub max: usize,
    #[arg(long)]
    pub json: bool,
    /// Write every differing range (offset, length) as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct CompareArgs {
    /// Compare as typed elements: u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64.
    #[arg(long = "type", value_name = "TYPE")]
    pub dtype: Option<String>,
    /// Element byte order.
    #[arg(long, default_value = "little", value_parser = ["little", "big"])]
    pub endian: String,
    /// Absolute tolerance.
    #[arg(long, default_value_t = 0.0)]
    pub atol: f64,
    /// Relative tolerance (of the second operand).
    #[arg(long, default_value_t = 0.0)]
    pub rtol: f64,
    /// Maximum distance in units in the last place (floats only).
    #[arg(long, default_value_t = 0)]
    pub ulp: u64,
}

/// `X`, `X,Y` or `X,Y,Z` with positive integers (missing dimensions are 1).
pub fn parse_dim3(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let bad = || format!("{s:?}: expected X, X,Y or X,Y,Z with positive integers");
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad());
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.parse().ok().filter(|&v| v > 0).ok_or_else(bad)?;
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
    parsed.map_err(|_| format!("{s:?}: expected an address, 0x… (hex) or decimal"))
}

fn parse_tolerance(s: &str) -> Result<rr_engine::diff::Comparison, String> {
    rr_engine::diff::Comparison::parse_spec(s)
}

#[derive(Debug, Args, Clone, Default)]
pub struct ReplayArgs {
    /// The instance's descriptor (`<KernelHash>_<LaunchConfigHash>.json`, or `<Name>.json` of
    /// LLVM 16–22).
    pub descriptor: PathBuf,
    /// Compare replayed memory with .record_output, or a legacy record's .original.output
    /// (byte for byte unless --tolerance).
    #[arg(long)]
    pub verify: bool,
    /// Compare as typed values: TYPE[:atol=X,rtol=Y,ulp=N], e.g. f32:rtol=1e-5,ulp=4 (implies --verify).
    #[arg(long, value_name = "SPEC", value_parser = parse_tolerance)]
    pub tolerance: Option<rr_engine::diff::Comparison>,
    /// Write .replay_output, named as LLVM names it.
    #[arg(long)]
    pub save_output: bool,
    /// Where to write .replay_output (for read-only record directories).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Replays in one process; input memory and globals are restored before each, untimed.
    #[arg(long, default_value_t = 1)]
    pub repetitions: u32,
    /// Untimed replays before the measured ones.
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// Override grid x (LLVM: number of teams). Checked against TeamsLimits.
    #[arg(long)]
    pub num_teams: Option<u32>,
    /// Override block x (LLVM: number of threads). Checked against ThreadsLimits.
    #[arg(long)]
    pub num_threads: Option<u32>,
    /// Override the whole grid: X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_dim3)]
    pub grid: Option<[u32; 3]>,
    /// Override the whole block: X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_dim3)]
    pub block: Option<[u32; 3]>,
    /// Override the dynamic shared memory bytes.
    #[arg(long)]
    pub shared_mem: Option<u32>,
    /// Override the CUDA device ordinal.
    #[arg(long)]
    pub device_id: Option<i32>,
    /// Skip the TeamsLimits/ThreadsLimits checks (unrecommended, as in LLVM).
    #[arg(long)]
    pub ignore_limits: bool,
    /// Device image to load instead of the recorded one; LLVM 16–17 records have none (the
    /// kernel's cubin, e.g. unpacked from the application with clang-offload-packager).
    #[arg(long, value_name = "FILE")]
    pub image: Option<PathBuf>,
    /// Where an LLVM 16–17 record's memory starts (not recorded; inferred from the pointer
    /// arguments when unambiguous).
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub base_address: Option<u64>,
    /// Replay an LLVM 18–22 record whose arguments may be values (LLVM 18) or slot addresses
    /// (LLVM 19–22) as LLVM 18.
    #[arg(long)]
    pub assume_llvm18: bool,
    /// Stream one JSON event per line (the explorer's protocol; see ARCHITECTURE.md).
    #[arg(long)]
    pub json: bool,
    /// The run id every JSON event carries (set by the explorer and `tune`).
    #[arg(long, default_value_t = 1, hide = true)]
    pub run_id: u64,
}

impl ReplayArgs {
    /// The typed request the engine performs.
    pub fn request(&self) -> rr_engine::replay::ReplayRequest {
        use rr_engine::replay::{Overrides, ReplayRequest, Supplied, Verify};
        ReplayRequest {
            descriptor: self.descriptor.clone(),
            overrides: Overrides {
                grid: self.grid,
                block: self.block,
                num_teams: self.num_teams,
                num_threads: self.num_threads,
                shared_mem: self.shared_mem,
                device_id: self.device_id,
                ignore_limits: self.ignore_limits,
            },
            supplied: Supplied {
                image: self.image.clone(),
                base_address: self.base_address,
                assume_llvm18: self.assume_llvm18,
            },
            repetitions: self.repetitions,
            warmup: self.warmup,
            verify: match (self.tolerance, self.verify) {
                (Some(c), _) => Verify::Typed(c),
                (None, true) => Verify::Bytes,
                (None, false) => Verify::No,
            },
            save_output: self.save_output,
            output_dir: self.output_dir.clone(),
            run_id: self.run_id,
        }
    }
}
