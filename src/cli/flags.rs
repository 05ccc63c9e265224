//! The help of each flag that several commands take with one meaning, written once: every
//! command that declares the flag takes its `help` (the `-h` line) and `long_help` (`--help`,
//! the manual pages) from here, so the flag reads the same wherever it is (a test compares
//! every flag's description across the help pages). Each `*_LONG` repeats its summary as its
//! first paragraph, as a doc comment's long help does.
//!
//! The texts are constants rather than one flattened `Args` struct per flag: `TuneArgs::job`
//! converts the arguments field by field into the sweep's job, and the fields stay where it
//! reads them.

/// `--strict` of `replay` and `tune` (`check --strict` is another switch: warnings fail the
/// check).
pub(crate) const STRICT: &str = "Refuse arguments that point outside the recorded memory";
pub(crate) const STRICT_LONG: &str = "Refuse arguments that point outside the recorded memory.

A replay of them could fault or read other data; without --strict that is a warning.";

/// `--kernel-timeout` of `replay` and `tune`.
pub(crate) const KERNEL_TIMEOUT: &str = "End a kernel still running after SECONDS; 0: none";
pub(crate) const KERNEL_TIMEOUT_LONG: &str = "End a kernel still running after SECONDS; 0: none.

The run ends with a message (in a sweep, the configuration counts as failed): a kernel that \
waits for another thread of the recorded program never ends in a replay.";

/// `--tolerance` of `diff`, `replay` and `tune`.
pub(crate) const TOLERANCE: &str = "Compare as typed values [default: byte for byte]";
/// `--tolerance`'s long help: one core, then what the command does with it (`$suffix`).
macro_rules! tolerance_long {
    ($suffix:literal) => {
        concat!(
            "Compare as typed values [default: byte for byte].

TYPE[:atol=X,rtol=Y,ulp=N,endian=big], e.g. f32:rtol=1e-6,ulp=4. TYPE: u8 i8 u16 i16 u32 i32 \
u64 i64 f16 bf16 f32 f64. An element passes when its bits are equal, or |a-b| <= atol + rtol*|b| \
(b: the recorded output, or the second file), or (float types) its distance in units in the last \
place is at most ulp; little-endian by default. ",
            $suffix
        )
    };
}
/// `replay`'s (and `ab`'s, which verifies every candidate).
pub(crate) const TOLERANCE_LONG: &str =
    tolerance_long!("A replay given a tolerance verifies (as `replay --verify`).");
/// `diff`'s.
pub(crate) const TOLERANCE_LONG_DIFF: &str = tolerance_long!(
    "Every pair of snapshots diff compares is compared so, and the exit status is 0 when every \
     element passes."
);
/// `tune`'s.
pub(crate) const TOLERANCE_LONG_TUNE: &str = tolerance_long!(
    "Every configuration is verified so against the recorded output (--no-verify sweeps \
     without verifying)."
);

/// `--ignore-limits` of `replay` and `tune`.
pub(crate) const IGNORE_LIMITS: &str = "Skip the checks against the recorded launch limits";
pub(crate) const IGNORE_LIMITS_LONG: &str = "Skip the checks against the recorded launch limits.

A launch (in a sweep, a configuration) outside the recorded TeamsLimits/ThreadsLimits runs all \
the same; the hardware's limits still apply. Unrecommended, as in LLVM.";

/// `--csv` of `tune` and `tune merge`.
pub(crate) const CSV: &str = "Write every configuration as CSV to FILE";
pub(crate) const CSV_LONG: &str = "Write every configuration as CSV to FILE.

One row per configuration, Mneme's columns first (the CSV layout of LLNL's record-replay \
autotuner, so that its scripts read the file), then rr-tui's.";

/// `--json-out` of `tune` and `tune merge`.
pub(crate) const JSON_OUT: &str = "Write the results and their metadata as JSON to FILE";
pub(crate) const JSON_OUT_LONG: &str = "Write the results and their metadata as JSON to FILE.

The report `tune merge` joins and `tune --resume` continues; a sweep rewrites it as it goes. \
(`--json`, a switch for JSON on stdout in the other commands, was this flag's old spelling: \
still taken for now, with a note.)";
/// `tune merge --json-out`: the same summary, what the merge writes.
pub(crate) const JSON_OUT_LONG_MERGE: &str = "Write the results and their metadata as JSON to FILE.

The merged report, as one unsharded sweep writes it (`tune --resume` continues it, the explorer \
shows it); a new file: an existing one is refused. (`--json`, a switch for JSON on stdout in the \
other commands, was this flag's old spelling: still taken for now, with a note.)";

/// `--export` of `tune` and `tune merge`.
pub(crate) const EXPORT: &str = "Hand the best configuration back to the application";
pub(crate) const EXPORT_LONG: &str = "Hand the best configuration back to the application.

FILE (JSON) and FILE with .h (a C header of #define RR_<KERNEL>_<ARCH>_<FIELD>, e.g. \
RR_AB_SCALE_SM90_BLOCK_X or a define's RR_AB_SCALE_SM90_TILE), keyed by kernel, problem \
signature (recorded grid, block and argument sizes) and GPU architecture; another sweep adds to \
the file.";

/// `--candidate` of `replay`, `profile` (one candidate) and `ab` (several).
pub(crate) const CANDIDATE: &str = "A/B: another build of the kernel, from FILE";
pub(crate) const CANDIDATE_LONG: &str = "A/B: another build of the kernel, from FILE.

FILE's kernel of the same name (a cubin, fatbin, PTX, or CUDA C++ source *.cu compiled here with \
NVRTC for this GPU) runs on the recorded input at the recorded addresses; its parameter layout \
must match the recorded kernel's. The command's description says what it measures of it.";
