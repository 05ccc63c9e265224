//! The interactive explorer: `App` (state, updated by messages), `ui::draw` (a pure function of
//! the state), one key map, and a runtime that turns terminal input, signals, replay child
//! processes and diff-index jobs into messages.

pub mod app;
pub mod keymap;
mod runtime;
pub mod theme;
pub mod ui;

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::cli::ExploreArgs;
use crate::error::{Error, Result};

/// Why replay cannot run in this environment, if it cannot.
pub fn gpu_status() -> std::result::Result<(), String> {
    if crate::replay::cuda::driver_present() {
        Ok(())
    } else {
        Err("no CUDA driver found (libcuda.so.1 could not be loaded); everything else works".into())
    }
}

/// Load a directory into a fresh `App` (used by the runtime, the tests and the benchmarks).
pub fn load_app(
    dir: PathBuf,
    gpu: std::result::Result<(), String>,
    output_dir: PathBuf,
) -> Result<app::App> {
    let (_rd, rows) = app::instances::load(&dir)?;
    Ok(app::App::new(dir, rows, gpu, output_dir))
}

pub fn run(args: ExploreArgs) -> Result<i32> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !std::io::stdout().is_terminal() {
        return Err(Error::Invalid(
            "the explorer needs a terminal (stdout is not a TTY); for scripts use `rr-tui report DIR`, `inspect`, `check`, `diff` or `replay`".into(),
        ));
    }
    let output_dir = std::env::temp_dir().join(format!("rr-tui-{}", std::process::id()));
    std::fs::create_dir_all(&output_dir).map_err(|e| Error::io(&output_dir, e))?;
    let app = load_app(dir, gpu_status(), output_dir)?;
    runtime::run(app, theme::Theme::new(args.theme))
}
