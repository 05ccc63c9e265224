//! The rr-tui recorder, loaded into an unmodified program. `rr-tui record -- APP` preloads it
//! (`LD_PRELOAD`): its own driver entry points ([`hooks`], `rr_cuda::interpose`) then see every
//! kernel launch, allocation, module load, graph and texture object, and it starts after the
//! program's first `cuInit`. It is also a CUPTI injection library: loaded through
//! `CUDA_INJECTION64_PATH` (launchers that drop `LD_PRELOAD`, `--hooks cupti|mixed`, a path that
//! cannot be preloaded), CUDA calls [`InitializeInjection`] and CUPTI's callbacks report what the entry
//! points do not. Either way it writes the selected launches as rr-tui records (format 2:
//! content-addressed blobs). Configuration comes from the environment ([`config`]). libcuda
//! and libcupti are loaded at run time only.
//!
//! Never crash the host program: every entry point catches panics, and any internal error
//! stops recording with one message on stderr while the program carries on.

#![deny(unsafe_code)]

mod capture;
mod ordered;
mod races;
pub use rr_format::record_config as config;
mod graph_launch;
pub mod graphs;
mod hooks;
pub mod images;
mod known;
mod launch;
mod locks;
pub mod memory;
pub mod objects;
pub mod pipeline;
mod recorder;
pub mod select;
mod settled;
pub mod stats;
pub mod write;

use std::sync::OnceLock;

use config::Config;
use recorder::Recorder;
use rr_cuda::cupti::Subscribe;
use rr_cuda::interpose::Watch;

static RECORDER: OnceLock<&'static Recorder> = OnceLock::new();

/// The process's recorder, once started.
pub(crate) fn recorder() -> Option<&'static Recorder> {
    RECORDER.get().copied()
}

fn start() -> Result<(), String> {
    let cfg = Config::from_env(&|k| std::env::var(k).ok())?;
    let rank = config::mpi_rank(&|k| std::env::var(k).ok());
    if !cfg.records_rank(rank) {
        return Ok(());
    }
    let dir = cfg.process_dir(
        rank,
        std::process::id(),
        std::os::unix::process::parent_id(),
    );
    if !cfg.overwrite && rr_format::dir::holds_records(&dir, &cfg.report_file) {
        return Err(format!(
            "{} already holds another recording; choose another directory or set RR_TUI_RECORD_OVERWRITE=1 \
             (rr-tui record --overwrite)",
            rr_format::text::visible_path(&dir)
        ));
    }
    // Preloaded, the library sees what it can through its exported entry points (cheaper than
    // CUPTI's callbacks); otherwise, or when told so, through CUPTI.
    let preloaded = hooks::preloaded();
    let (watch, subscribe, how) = match cfg.hooks {
        config::Hooks::Interpose if preloaded => (
            Watch::Everything,
            Subscribe::Nothing,
            "everything was seen through the recorder's own driver entry points (preloaded)",
        ),
        config::Hooks::Interpose | config::Hooks::Mixed if preloaded => (
            Watch::Launches,
            Subscribe::AllButLaunches,
            "launches were seen through the recorder's own driver entry points (preloaded), the rest through CUPTI",
        ),
        _ => (
            Watch::Nothing,
            Subscribe::Everything,
            "everything was seen through CUPTI's callbacks (the library was not preloaded, or --hooks cupti)",
        ),
    };
    if subscribe != Subscribe::Nothing && !rr_cuda::cupti::load_library(cfg.cupti.as_deref()) {
        return Err(
            "libcupti could not be loaded (set RR_TUI_CUPTI to its path, e.g. /usr/local/cuda/lib64/libcupti.so)".into(),
        );
    }
    let recorder: &'static Recorder = Box::leak(Box::new(Recorder::new(cfg, dir)));
    if RECORDER.set(recorder).is_err() {
        return Ok(()); // initialised already
    }
    recorder.note(how);
    rr_cuda::cupti::install(recorder, subscribe).map_err(|e| e.to_string())?;
    rr_cuda::interpose::watch(watch);
    rr_cuda::cupti::at_exit(finish);
    Ok(())
}

/// Started by the program's first `cuInit`: a preloaded recorder that CUDA did not inject
/// (`rr-tui record` with `--hooks interpose`, the default). Injected, it has started already.
pub(crate) fn start_after_init() {
    start_once();
}

extern "C" fn finish() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(r) = RECORDER.get() {
            r.finish();
        }
    });
}

/// The injection entry point CUDA calls (by this name) when it loads the library. Returns 1:
/// the library is loaded whether or not recording could start; a failure to start is said once
/// on stderr and the program runs as without the recorder.
#[allow(unsafe_code)] // `no_mangle`: CUDA finds the entry point by its C name.
#[no_mangle]
pub extern "C" fn InitializeInjection() -> i32 {
    start_once();
    1
}

/// Start recording, once per process whichever way the library was loaded; say on stderr why
/// it could not (the program runs as without it).
fn start_once() {
    static TRIED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if TRIED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return;
    }
    match std::panic::catch_unwind(start) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("rr-tui record: not recording: {e}"),
        Err(_) => eprintln!("rr-tui record: not recording: internal error while starting"),
    }
}
