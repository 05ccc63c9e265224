//! The rr-tui recorder: a CUPTI injection library. CUDA loads it into an unmodified program when
//! `CUDA_INJECTION64_PATH` names it (what `rr-tui record -- APP` sets up), calls
//! [`InitializeInjection`], and from then on the recorder sees every kernel launch, allocation
//! and module load of the program through CUPTI callbacks, and writes the selected launches as
//! rr-tui records (format 2: content-addressed blobs). Configuration comes from the environment
//! ([`config`]). libcuda and libcupti are loaded at run time only.
//!
//! Never crash the host program: every entry point catches panics, and any internal error
//! stops recording with one message on stderr while the program carries on.

#![deny(unsafe_code)]

mod capture;
pub use rr_format::record_config as config;
pub mod graphs;
mod hooks;
pub mod images;
mod known;
mod launch;
pub mod memory;
pub mod objects;
pub mod pipeline;
mod recorder;
pub mod select;
pub mod stats;
pub mod write;

use std::sync::OnceLock;

use config::Config;
use recorder::Recorder;

static RECORDER: OnceLock<&'static Recorder> = OnceLock::new();

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
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let store = rr_format::store::BlobStore::open(&dir).map_err(|e| e.to_string())?;
    if !rr_cuda::cupti::load_library(cfg.cupti.as_deref()) {
        return Err(
            "libcupti could not be loaded (set RR_TUI_CUPTI to its path, e.g. /usr/local/cuda/lib64/libcupti.so)".into(),
        );
    }
    // Preloaded, the library sees launches through its exported entry points (cheaper than
    // CUPTI's launch callbacks); otherwise, or when told so, through CUPTI.
    let interposed = cfg.launch_hooks == config::LaunchHooks::Interpose && hooks::preloaded();
    let recorder: &'static Recorder = Box::leak(Box::new(Recorder::new(cfg, dir, store)));
    if RECORDER.set(recorder).is_err() {
        return Ok(()); // initialised already
    }
    recorder.note(if interposed {
        "launches were seen through the recorder's own driver entry points (preloaded)"
    } else {
        "launches were seen through CUPTI's callbacks"
    });
    rr_cuda::cupti::install(recorder, !interposed).map_err(|e| e.to_string())?;
    rr_cuda::interpose::enable(interposed);
    rr_cuda::cupti::at_exit(finish);
    Ok(())
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
    match std::panic::catch_unwind(start) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("rr-tui record: not recording: {e}"),
        Err(_) => eprintln!("rr-tui record: not recording: internal error while starting"),
    }
    1
}
