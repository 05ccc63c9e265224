//! The file names of an instance: the extensions of its files, new and legacy. A module of its
//! own below `instance` and `descriptor`, which both name them.

pub const EXT_JSON: &str = "json";
pub const EXT_INPUT: &str = "record_input";
pub const EXT_OUTPUT: &str = "record_output";
pub const EXT_GLOBALS: &str = "globals";
pub const EXT_IMAGE: &str = "image";
pub const EXT_BITCODE: &str = "bc";
pub const EXT_REPLAY: &str = "replay_output";
/// Legacy records: device memory before the kernel.
pub const EXT_LEGACY_INPUT: &str = "memory";
/// Legacy records: device memory after the kernel (with `LIBOMPTARGET_RR_SAVE_OUTPUT`).
pub const EXT_LEGACY_OUTPUT: &str = "original.output";
/// What the legacy `llvm-omp-kernel-replay` wrote; rr-tui reads it, never writes it.
pub const EXT_LEGACY_REPLAY: &str = "replay.output";

/// Every extension that belongs to an instance (never a report candidate).
pub const INSTANCE_EXTENSIONS: &[&str] = &[
    EXT_JSON,
    EXT_INPUT,
    EXT_OUTPUT,
    EXT_GLOBALS,
    EXT_IMAGE,
    EXT_BITCODE,
    EXT_REPLAY,
    EXT_LEGACY_INPUT,
];

/// Whether a file name is an instance's file (never a report candidate): one of
/// [`INSTANCE_EXTENSIONS`], or a legacy `.original.output` / `.replay.output`.
pub fn is_instance_file(name: &str) -> bool {
    let ext = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    INSTANCE_EXTENSIONS.contains(&ext)
        || [EXT_LEGACY_OUTPUT, EXT_LEGACY_REPLAY].iter().any(|e| {
            // `<stem>.<e>` with a stem (no allocation: this runs for every directory entry).
            name.strip_suffix(e)
                .and_then(|rest| rest.strip_suffix('.'))
                .is_some_and(|stem| !stem.is_empty())
        })
}
