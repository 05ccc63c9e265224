//! rr-tui: record, replay, verify and explore GPU kernel executions.
//!
//! Domain modules (`record`, `snapshot`, `diff`, `replay`) know nothing of the terminal UI
//! (`tui`); the headless `commands` and the explorer are both thin layers over them.

pub mod cli;
pub mod commands;
pub mod diff;
pub mod error;
pub mod record;
pub mod replay;
pub mod snapshot;
pub mod tui;

use cli::{Cli, Command};

/// Run the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.command {
        Some(Command::Report { dir, json }) => commands::report::run(&dir, json),
        Some(Command::Inspect { descriptor, json }) => commands::inspect::run(&descriptor, json),
        Some(Command::Check { path, json, strict }) => commands::check::run(&path, json, strict),
        Some(Command::Diff(args)) => commands::diff::run(&args),
        Some(Command::Replay(args)) => commands::replay::run(&args),
        None => tui::run(cli.explore),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rr-tui: {e}");
            match e {
                error::Error::Invalid(_) => 2,
                _ => 1,
            }
        }
    }
}
