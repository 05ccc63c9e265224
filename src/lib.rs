//! rr-tui, the program: command line, headless commands and the interactive explorer, thin
//! layers over the domain crates (`rr-format`, `rr-engine`; CUDA only through them). No
//! `unsafe` here.

#![forbid(unsafe_code)]

pub mod cli;
pub mod commands;
pub mod error;
pub use rr_engine::lines;
pub mod output;
pub mod settings;
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

/// The exit-status policy every command follows (`rr-tui --help`, and the EXIT STATUS section
/// of every manual page): the one text of it.
pub const EXIT_STATUS: &str = "Exit status, the same in every command: 0 when all is well; 1 for \
a finding or a failed run (a problem `check` found, a difference `diff` found, a replay that did \
not verify, no CUDA driver, a GPU error, a tool that did not finish); 2 for a usage or input error \
(flags that do not parse or do not go together; a file named on the command line that is \
missing, unreadable or not what it should be; a directory of record directories given where a \
record is expected; a record rr-tui cannot replay, such as LLVM 19–22's), said before any GPU is \
looked for; 141 when the reader of standard output went away. `record` ends with the recorded \
program's own status (a run that recorded nothing is a note, not an error), 2 when it cannot \
start it. An error is one line on standard error, `rr-tui: error: …` (`error: …` with the usage \
for flags that do not parse; for a directory of record directories, the record directories \
below it are listed after that line); where JSON output was asked for, it is an object \
on standard output, {\"event\": \"error\", \"kind\", \"message\"}, whose kind is \"input\" for \
what status 2 means (\"usage\" for flags that do not parse).";

/// Run the parsed command line; returns the process exit code (0 ok, 1 a finding or a failed
/// run, 2 a usage or input error: see [`fail`]).
pub fn run(cli: Cli) -> i32 {
    let json = cli.command.as_ref().is_some_and(wants_json);
    let lines = cli.command.as_ref().is_some_and(json_lines);
    let result = match cli.command {
        Some(Command::Report { dir, json }) => commands::report::run(&dir, json),
        Some(Command::Inspect { descriptor, json }) => commands::inspect::run(&descriptor, json),
        Some(Command::Check { path, json, strict }) => commands::check::run(&path, json, strict),
        Some(Command::Diff(args)) => commands::diff::run(&args),
        Some(Command::Replay(args)) => commands::replay::run(&args),
        Some(Command::Repro(args)) => commands::repro::run(&args),
        Some(Command::Ab(args)) => commands::ab::run(&args.job()),
        Some(Command::Profile(args)) => commands::profile::run(&args.job()),
        Some(Command::Record(args)) => commands::record::run(&args),
        Some(Command::Tune(args)) => commands::tune::run_args(&args),
        Some(Command::Engine(args)) => args
            .job()
            .map_err(error::Error::invalid)
            .and_then(|job| commands::engine::run(&job)),
        Some(Command::Job) => commands::job::run(),
        Some(Command::Config(args)) => commands::config::run(&args),
        Some(Command::Doctor(args)) => commands::doctor::run(&args),
        Some(Command::Completions { shell }) => commands::man::completions(shell),
        Some(Command::Man(args)) => commands::man::run(&args),
        None => tui::run(cli.explore),
    };
    match result {
        Ok(code) => code,
        Err(e) if lines => fail_in_stream(&e),
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

/// Say the error that ends a command whose JSON is an event stream (`replay --json`, `job`):
/// one `error` line on standard output ([`output::json_error_line`]; no run id, as no run can
/// be named), so a reader that reads lines reads it. The exit status is the error's.
pub fn fail_in_stream(e: &error::Error) -> i32 {
    output::json_error_line(rr_engine::replay::session::error_kind(e), &e.to_string());
    e.exit_status()
}

/// A command line clap refused, said as `--json` says every other error when the command it
/// names has a `--json` switch and `--json` is among its words (before any `--`): one `error`
/// object on standard output, kind `usage` (exit status 2, as clap's own). Returns whether it
/// was said so; otherwise clap's text is for the caller to print.
pub fn usage_error_as_json(args: &[std::ffi::OsString], e: &clap::Error) -> bool {
    use clap::CommandFactory;
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or(""))
        .take_while(|w| *w != "--")
        .collect();
    if !words.contains(&"--json") {
        return false;
    }
    // The (sub)command the words name: `tune merge` is `merge` of `tune`.
    let mut command = Cli::command();
    for word in &words {
        if word.starts_with('-') {
            continue;
        }
        match command.find_subcommand(word) {
            Some(sub) => command = sub.clone(),
            None => break,
        }
    }
    let has_json_switch = command.get_arguments().any(|a| {
        a.get_long() == Some("json") && matches!(a.get_action(), clap::ArgAction::SetTrue)
    });
    if !has_json_switch {
        return false;
    }
    // One line: a JSON document for the commands that print one, and a line of the event
    // stream for `replay --json`, whose readers read lines.
    usage_json_line(&usage_message(args, e));
    true
}

/// A command line clap refused for a hidden command (`job`, `engine`: other rr-tui processes
/// and hubs start them and read what they say line by line; nobody types them), said in one
/// line without clap's usage and tips: for `job`, whose every word is a JSON line, an `error`
/// object of kind `usage` on standard output; for the others `error: …` on standard error.
/// Returns whether it was said so (the exit status is then 2, as clap's own).
pub fn usage_error_of_hidden(args: &[std::ffi::OsString], e: &clap::Error) -> bool {
    use clap::CommandFactory;
    let Some(word) = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or(""))
        .find(|w| !w.starts_with('-'))
    else {
        return false;
    };
    let hidden = Cli::command()
        .find_subcommand(word)
        .is_some_and(|c| c.is_hide_set());
    if !hidden {
        return false;
    }
    let message = usage_message(args, e);
    match word {
        "job" => usage_json_line(&message),
        _ => output::error_line(&format!("error: {message}")),
    }
    true
}

/// Clap's error paragraph (up to its usage and tips) as one line, without its `error: `.
fn usage_message(args: &[std::ffi::OsString], e: &clap::Error) -> String {
    let text = usage_error_text(args, e).unwrap_or_else(|| e.render().to_string());
    let paragraph: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let joined = paragraph.join(" ");
    joined
        .strip_prefix("error: ")
        .unwrap_or(&joined)
        .to_string()
}

/// A usage error as one JSON `error` line of kind `usage` on standard output.
fn usage_json_line(message: &str) {
    let error = serde_json::json!({
        "event": "error",
        "kind": "usage",
        "message": rr_format::text::visible(message),
    });
    output::json_line(&error.to_string());
}

/// Clap's text for a command line it refused, when a word of it holds a character a terminal
/// acts on (an escape sequence, a carriage return, a newline): clap prints values as given
/// (in a terminal, styled and unfiltered), so the words are written visible (`\x1b`, `\n`) in
/// its plain text, and anything still hidden (a part of a value a parser quoted) too, line by
/// line: clap's own newlines stay, a newline in a value does not split the message. None:
/// clap's own text is fine as it is.
pub fn usage_error_text(args: &[std::ffi::OsString], e: &clap::Error) -> Option<String> {
    use rr_format::text::visible;
    let mut words: Vec<String> = Vec::new();
    for a in args.iter().skip(1) {
        let a = a.to_string_lossy();
        if visible(&a) == a {
            continue;
        }
        // `--flag=VALUE`: clap quotes the value alone.
        if let Some((_, v)) = a.split_once('=').filter(|_| a.starts_with('-')) {
            words.push(v.to_string());
        }
        words.push(a.into_owned());
    }
    if words.is_empty() {
        return None;
    }
    // The longest first: a value inside another word is replaced after it.
    words.sort_by_key(|w| std::cmp::Reverse(w.len()));
    let mut text = e.render().to_string();
    for w in &words {
        text = text.replace(w.as_str(), &visible(w));
        // Clap's plain text drops the escape sequences of a value ('INJ' for
        // '\x1b[2JINJ'): the quoted value it shows is the word made visible.
        let stripped = clap::builder::StyledStr::from(w.clone()).to_string();
        if stripped != *w {
            text = text.replace(&format!("'{stripped}'"), &format!("'{}'", visible(w)));
        }
    }
    let lines: Vec<String> = text.split('\n').map(|l| visible(l).into_owned()).collect();
    Some(lines.join("\n"))
}

/// Whether the command writes JSON on standard output (`--json`), so its errors are JSON too.
/// Event streams (`replay --json`, `--events`) say their errors as events of their own.
/// Whether the command's JSON output is a stream of event lines (a reader reads line by line):
/// `replay --json` (`--serve` too) and `job`.
fn json_lines(command: &Command) -> bool {
    match command {
        Command::Replay(a) => a.json,
        Command::Job => true,
        _ => false,
    }
}

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
        Command::Job => true,
        _ => false,
    }
}
