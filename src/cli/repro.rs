//! `rr-tui repro`'s arguments.

use clap::Args;
use std::path::PathBuf;

use super::{parse_repetitions, parse_tolerance, SuppliedArgs};

/// Repetitions the reproducer times when run without --repetitions.
pub const DEFAULT_REPRO_REPETITIONS: u32 = 20;

#[derive(Debug, Args, Clone)]
pub struct ReproArgs {
    /// The instance's descriptor.
    ///
    /// `<KernelHash>_<LaunchConfigHash>.json`, or `<Name>.json` of LLVM 16–18.
    pub descriptor: PathBuf,
    /// The folder to write the reproducer into.
    ///
    /// Created when absent; an existing one must be empty (see --force). Never a link. Writing
    /// needs no GPU; the program needs one to run.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write repro.py (cuda-python) instead of repro.cpp and its Makefile.
    ///
    /// On NVIDIA's cuda-python bindings: it needs `pip install cuda-python` where it runs.
    /// `python3 repro.py --help` lists its flags, the same as the C++ program's.
    #[arg(long)]
    pub python: bool,
    /// Put the data into one tar archive (data.tar) instead of a data folder.
    ///
    /// The archive's files are copies; `tar xf data.tar` makes data/ before the first run.
    /// Without it, recorded files are hard-linked when on the same file system (the record's
    /// own files: copy one before changing it), copied otherwise.
    #[arg(long)]
    pub pack: bool,
    /// Repetitions the program times by default.
    ///
    /// Its own --repetitions N overrides this when it runs; its --repetitions 0 verifies
    /// without timing.
    #[arg(long, value_name = "N", value_parser = parse_repetitions, default_value_t = DEFAULT_REPRO_REPETITIONS)]
    pub repetitions: u32,
    /// Compare f32 or f64 values with tolerances instead of bytes.
    ///
    /// f32 or f64[:atol=X,rtol=Y,ulp=N], little-endian, as replay's --tolerance (e.g. a kernel
    /// with float atomics).
    #[arg(long, value_name = "SPEC", value_parser = parse_tolerance)]
    pub tolerance: Option<rr_engine::diff::Comparison>,
    /// Write into a non-empty --out.
    ///
    /// Files of the reproducer's names are replaced; the others stay.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub supplied: SuppliedArgs,
}
