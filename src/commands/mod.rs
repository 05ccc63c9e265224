//! Headless subcommands: each returns the process exit code, prints results on stdout and
//! one-line errors on stderr.

pub mod check;
pub mod diff;
pub mod engine;
pub mod inspect;
pub mod record;
pub mod replay;
pub mod report;
pub mod tune;

/// Print a serialisable value as one JSON document.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    crate::output::json(value)
}
