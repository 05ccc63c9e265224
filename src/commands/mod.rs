//! Headless subcommands: each returns the process exit code, prints results on stdout and
//! one-line errors on stderr.

pub mod ab;
pub mod check;
pub mod child;
pub mod config;
pub mod diff;
pub mod doctor;
pub mod engine;
pub mod inspect;
pub mod job;
pub mod man;
pub mod not_a_record;
pub mod profile;
pub mod record;
pub mod replay;
pub mod report;
pub mod repro;
pub mod tune;

/// Print a serialisable value as one JSON document.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    crate::output::json(value)
}

/// A progress bar in bytes on a terminal, for long reads (nothing in pipes, nothing for less
/// than 256 MiB: it would only flicker).
pub(crate) fn progress_bar(total: u64) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    (std::io::stderr().is_terminal() && total >= 256 << 20).then(|| {
        let pb = indicatif::ProgressBar::new(total);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    })
}
