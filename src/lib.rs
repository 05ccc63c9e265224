//! rr-tui, the program: command line, headless commands and the interactive explorer, thin
//! layers over the domain crates (`rr-format`, `rr-engine`; CUDA only through them). No
//! `unsafe` here.

#![forbid(unsafe_code)]

pub mod cli;
pub mod commands;
pub mod error;
pub use rr_engine::lines;
pub mod output;
pub mod tui;

use cli::{Cli, Command};

/// This very binary, to start or become a copy of: `/proc/self/exe`, which stays right after the
/// file was rebuilt or removed (`current_exe` then names a path that is gone, or another build);
/// `current_exe` where there is no such link.
pub(crate) fn this_binary() -> std::io::Result<std::path::PathBuf> {
    let this = std::path::Path::new("/proc/self/exe");
    if this.exists() {
        return Ok(this.to_path_buf());
    }
    std::env::current_exe()
}

/// Run the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.command {
        Some(Command::Report { dir, json }) => commands::report::run(&dir, json),
        Some(Command::Inspect { descriptor, json }) => commands::inspect::run(&descriptor, json),
        Some(Command::Check { path, json, strict }) => commands::check::run(&path, json, strict),
        Some(Command::Diff(args)) => commands::diff::run(&args),
        Some(Command::Replay(args)) => commands::replay::run(&args),
        Some(Command::Repro(args)) => commands::repro::run(&args),
        Some(Command::Profile(args)) => commands::profile::run(&args),
        Some(Command::Record(args)) => commands::record::run(&args),
        Some(Command::Tune(args)) => commands::tune::run(&args),
        Some(Command::Engine(args)) => commands::engine::run(&args),
        Some(Command::Config(args)) => commands::config::run(&args),
        Some(Command::Doctor(args)) => commands::doctor::run(&args),
        Some(Command::Completions { shell }) => commands::man::completions(shell),
        Some(Command::Man(args)) => commands::man::run(&args),
        None => tui::run(cli.explore),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            output::error_line(&format!("rr-tui: {e}"));
            e.exit_status()
        }
    }
}
