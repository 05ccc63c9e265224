//! Everything the headless commands print goes through here:
//!
//! - text lines with control characters made visible (names from record files must not drive
//!   the user's terminal; `--json` output keeps exact strings, JSON-escaped, C1 controls and
//!   bidirectional overrides included);
//! - a closed standard output (`rr-tui report DIR | head`) ends the command quietly, instead of
//!   the panic `println!` gives on a broken pipe, with the status a process killed by SIGPIPE
//!   has (141, as `cmp` and `cat` give): a verdict the reader never saw is no success, so
//!   `diff A B | true` must not read as "equal".

use std::io::Write;

use rr_format::text::{json_safe, visible};

/// 128 + SIGPIPE: what a shell reports for a command its pipe's reader left.
pub const EXIT_READER_GONE: i32 = 141;

/// Leave quietly: the reader of our output has gone.
fn reader_gone() -> ! {
    std::process::exit(EXIT_READER_GONE)
}

fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            reader_gone();
        }
        // Anything else (a full disk behind a redirection): say it once, then stop.
        eprintln!(
            "rr-tui: cannot write to standard output: {}",
            rr_format::text::io_reason(&e)
        );
        std::process::exit(2);
    }
}

/// Text of our own (help and version, possibly with colours): written as it is, with the same
/// handling of a closed or full standard output as everything else.
pub fn own_text(text: &str) {
    write_stdout(text);
}

/// Whether text output may be coloured: standard output is a terminal and `NO_COLOR` is not set
/// (help, version and `diff A.json B.json`'s line diff).
pub fn colour() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// One line of text output.
pub fn line(text: &str) {
    let mut s = visible(text).into_owned();
    s.push('\n');
    write_stdout(&s);
}

/// Several lines at once (one write, one flush).
pub fn lines<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) {
    let mut s = String::new();
    for t in texts {
        s.push_str(&visible(t.as_ref()));
        s.push('\n');
    }
    write_stdout(&s);
}

/// A value as one pretty JSON document.
pub fn json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => {
            let mut s = json_safe(&s).into_owned();
            s.push('\n');
            write_stdout(&s);
        }
        Err(e) => error_line(&format!("rr-tui: cannot serialise output: {e}")),
    }
}

/// One compact JSON line (event streams), flushed at once so readers see it live.
pub fn json_line(text: &str) {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(&json_safe(text));
    s.push('\n');
    write_stdout(&s);
}

/// One line on standard error (control characters made visible; errors writing are ignored:
/// there is nowhere left to report them).
pub fn error_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", visible(text));
}

/// What every error line of the binary starts with (warnings and notes say `rr-tui: warning: `
/// and `rr-tui: note: `); clap's own usage errors keep clap's `error: `.
pub const ERROR_PREFIX: &str = "rr-tui: error: ";

/// One error line on standard error, after [`ERROR_PREFIX`].
pub fn error(message: &str) {
    error_line(&format!("{ERROR_PREFIX}{message}"));
}

/// An error as `--json` says it: one `error` object on standard output (`event`, `kind`,
/// `message`: the event replay's and profile's streams end with, untagged), so what reads the
/// JSON hears of the failure in JSON.
pub fn json_error(kind: rr_engine::replay::protocol::ErrorKind, message: &str) {
    json(&rr_engine::replay::protocol::Event::Error {
        kind,
        message: visible(message).into_owned(),
    });
}

/// The same `error` object as [`json_error`], as one line: the end of an event stream
/// (`replay --json`, `job`), whose readers read lines.
pub fn json_error_line(kind: rr_engine::replay::protocol::ErrorKind, message: &str) {
    let error = rr_engine::replay::protocol::Event::Error {
        kind,
        message: visible(message).into_owned(),
    };
    match serde_json::to_string(&error) {
        Ok(line) => json_line(&line),
        Err(e) => error_line(&format!("rr-tui: cannot serialise output: {e}")),
    }
}

/// `outln!("…", args)`: [`line`] with `format!` arguments.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::line(&format!($($arg)*)) };
}

/// `errln!("…", args)`: [`error_line`] with `format!` arguments.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::error_line(&format!($($arg)*)) };
}
