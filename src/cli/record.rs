//! `rr-tui record`'s flags: where the records go, which launches are recorded, and how the
//! recorder sees the program.

use clap::Args;
use std::path::PathBuf;

use super::{parse_count, parse_device};

#[derive(Debug, Args, Clone)]
pub struct RecordArgs {
    /// Directory for the records.
    ///
    /// Created; refused if it holds another recording.
    #[arg(long, short = 'o', default_value = "rr-records", value_name = "DIR")]
    pub dir: PathBuf,
    /// Write into a directory that already holds records.
    #[arg(long)]
    pub overwrite: bool,
    /// Do not record memory after the kernel.
    ///
    /// Halves the work; replays cannot verify.
    #[arg(long)]
    pub no_output: bool,
    /// Tell stored memory apart on the host (slower).
    ///
    /// Copy every non-zero device segment to the host to tell whether it is stored already,
    /// instead of comparing the fingerprints the snapshot kernels compute on the GPU with what
    /// is stored (slower; for benchmarks).
    #[arg(long)]
    pub no_fingerprints: bool,
    /// Device memory to stage snapshots in, per GPU context.
    ///
    /// E.g. 8G [default: half the device memory free when the context's first launch is
    /// recorded, at most 32 GiB]. Snapshots are taken in stream order and copied out by the
    /// recorder's own thread: new content waits there meanwhile. An instance whose new content
    /// does not fit is skipped, said as "staging full", never waited for.
    #[arg(long, value_name = "BYTES")]
    pub staging: Option<String>,
    /// Only kernels whose name matches this regular expression.
    ///
    /// The mangled or the readable name.
    #[arg(long, value_name = "REGEX")]
    pub kernels: Option<String>,
    /// Record the N-th launch of each selected kernel.
    ///
    /// 1-based; instead of the first launch of each launch configuration.
    #[arg(long, value_name = "N", value_parser = parse_count, allow_negative_numbers = true)]
    pub occurrence: Option<u64>,
    /// At most N instances per kernel.
    #[arg(long, value_name = "N", value_parser = parse_count, allow_negative_numbers = true)]
    pub max_per_kernel: Option<u64>,
    /// Ignore the first N launches (warm-up).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip: u64,
    /// Stop recording once this many bytes are written.
    ///
    /// E.g. 20G; noted in the report.
    #[arg(long, value_name = "BYTES")]
    pub budget: Option<String>,
    /// Memory an instance keeps.
    ///
    /// The device memory an instance keeps: every live allocation, or only those its parameters
    /// point into (for large applications).
    #[arg(long, value_enum, default_value_t = SnapshotMode::All)]
    pub snapshot: SnapshotMode,
    /// Only launches on this device.
    #[arg(long, value_name = "N", value_parser = parse_device, allow_negative_numbers = true)]
    pub device: Option<i32>,
    /// Only these MPI ranks (e.g. 0,2-3).
    #[arg(long, value_name = "LIST")]
    pub ranks: Option<String>,
    /// Print the report when the program ends.
    #[arg(long)]
    pub report: bool,
    /// libcupti, when not found in the usual places.
    #[arg(long, value_name = "PATH")]
    pub cupti: Option<PathBuf>,
    /// The recorder library.
    ///
    /// [default: librr_recorder.so next to this executable]
    #[arg(long, value_name = "PATH")]
    pub library: Option<PathBuf>,
    /// How the recorder sees what the program does.
    ///
    /// `interpose` (default) preloads the library (LD_PRELOAD) so that launches, allocations,
    /// module loads, graphs and texture objects reach its own driver entry points; CUPTI stays
    /// out of the program until a kernel from a fatbin or PTX image is recorded (nothing
    /// measurable to pay while recording nothing). `mixed` sees launches that way and the rest
    /// through CUPTI's callbacks, and has CUDA inject the library too (CUDA_INJECTION64_PATH),
    /// so children that clear LD_PRELOAD are still recorded (3–4 % on a storm of 3 µs
    /// launches). `cupti` uses CUPTI's callbacks only, nothing preloaded (6–8 %). The
    /// environment variable RR_TUI_RECORD_HOOKS sets it too.
    // The values and the variable are in the text above: listed by clap, they would not fit
    // `-h`'s one line.
    #[arg(
        long,
        value_enum,
        default_value_t = Hooks::Interpose,
        alias = "launch-hooks",
        env = "RR_TUI_RECORD_HOOKS",
        hide_env = true,
        hide_possible_values = true
    )]
    pub hooks: Hooks,
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
pub enum Hooks {
    Interpose,
    Mixed,
    Cupti,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SnapshotMode {
    All,
    Args,
}
