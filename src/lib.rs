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

/// Run the parsed command line; returns the process exit code (0 ok, 1 a finding or a failed
/// run, 2 a usage or input error: see [`fail`]).
pub fn run(cli: Cli) -> i32 {
    let json = cli.command.as_ref().is_some_and(wants_json);
    let result = match cli.command {
        Some(Command::Report { dir, json }) => commands::report::run(&dir, json),
        Some(Command::Inspect { descriptor, json }) => commands::inspect::run(&descriptor, json),
        Some(Command::Check { path, json, strict }) => commands::check::run(&path, json, strict),
        Some(Command::Diff(args)) => commands::diff::run(&args),
        Some(Command::Replay(args)) => commands::replay::run(&args),
        Some(Command::Repro(args)) => commands::repro::run(&args),
        Some(Command::Ab(args)) => commands::ab::run(&args),
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
        Err(e) => fail(&e, json),
    }
}

/// Say a command's error the one way every command says it: under `--json` an `error` object
/// on standard output ([`output::json_error`]), else `rr-tui: error: …` on standard error. The
/// exit status is the error's: 2 for the flags' or the input's fault, 1 for a failed run.
pub fn fail(e: &error::Error, json: bool) -> i32 {
    match json {
        true => output::json_error(rr_engine::replay::session::error_kind(e), &e.to_string()),
        false => output::error(&e.to_string()),
    }
    e.exit_status()
}

/// Whether the command writes JSON on standard output (`--json`), so its errors are JSON too.
/// Event streams (`replay --json`, `--events`) say their errors as events of their own.
fn wants_json(command: &Command) -> bool {
    match command {
        Command::Report { json, .. }
        | Command::Inspect { json, .. }
        | Command::Check { json, .. } => *json,
        Command::Diff(a) => a.json,
        Command::Replay(a) => a.json,
        Command::Ab(a) => a.json,
        Command::Profile(a) => a.json,
        Command::Doctor(a) => a.json,
        _ => false,
    }
}
