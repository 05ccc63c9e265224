//! `check` for every instance of the table, on a worker, after the first frame: the table then
//! badges every instance `check` finds broken (a truncated output, bad globals, an image that
//! is not a device image), not only those whose descriptor is unreadable.
//!
//! Instances are checked in batches, one worker at a time: each batch's result asks for the
//! next, so badges appear progressively and a directory of 10 000 instances never occupies more
//! than one thread.

use std::path::PathBuf;

use rr_format::check::{check_instance, Finding, Severity};
use rr_format::InstanceFiles;

use super::{Msg, Row, Work};

/// Instances checked by one worker before it reports back.
pub const BATCH: usize = 16;

/// The first error `check` finds in each instance of a batch, by row index.
pub type CheckResults = Vec<(usize, Option<String>)>;

/// The work that checks rows `start..start + BATCH`, or `None` past the last row.
pub fn batch(rows: &[Row], start: usize) -> Option<Work> {
    if start >= rows.len() {
        return None;
    }
    let end = (start + BATCH).min(rows.len());
    let targets: Vec<(usize, PathBuf, Option<String>)> = (start..end)
        .map(|i| (i, rows[i].json_path.clone(), rows[i].report_name.clone()))
        .collect();
    Some(Work::new(move || Msg::Checked {
        results: targets
            .into_iter()
            .map(|(i, json, report_name)| {
                let files = InstanceFiles::from_descriptor_path(&json);
                let findings = check_instance(&files, report_name.as_deref());
                (i, first_error(&findings, &files.stem))
            })
            .collect(),
        next: end,
    }))
}

/// `file: problem` of the first error (warnings do not make an instance broken). The
/// instance's own files are named by their extension (`.record_output`): the status line that
/// shows this is short, and the selected row already names the instance.
fn first_error(findings: &[Finding], stem: &str) -> Option<String> {
    findings
        .iter()
        .find(|f| f.severity == Severity::Error)
        .map(|f| {
            let name = f
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let file = match name.strip_prefix(stem) {
                Some(ext) if ext.starts_with('.') => ext.to_string(),
                _ => name,
            };
            let text = if file.is_empty() {
                f.problem.clone()
            } else {
                format!("{file}: {}", f.problem)
            };
            rr_format::text::visible(&text).into_owned()
        })
}
