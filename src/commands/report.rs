//! `rr-tui report DIR`: the record report in libomptarget's format, line for line (or JSON).
//! `Directory:` is what the report file says (where the recording was made), or where the
//! directory is when there is no report file; what rr-tui adds, the recorder's account, follows
//! LLVM's end banner, where LLVM's readers stop. A directory moved since asks nothing of anyone
//! (rows are matched to files by name), but a `Directory:` that does not exist confuses: one
//! `rr-tui:` line after the banner says it is where the recording was made and where the files
//! are read from, on stdout as part of the report, never a warning (`--json` has both,
//! `directory` and `recorded_directory`). Exit 1 when a descriptor needed for a row could not be
//! read (the row still prints, with `?`).

use std::path::Path;

use rr_format::{report, text::visible, RecordDir};

use crate::error::Result;
use crate::output;

pub fn run(dir: &Path, json: bool) -> Result<i32> {
    let rd = RecordDir::open(dir)?;
    if rd.holds_nothing() {
        return Ok(super::not_a_record::refuse(dir, "report", json));
    }
    let (rows, problems) = rd.report_rows();
    let directory = rd.absolute_path();
    if json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            directory: &'a str,
            recorded_directory: Option<&'a str>,
            report_file: Option<String>,
            total_instances: usize,
            instances: &'a [report::ReportRow],
            missing_rows: &'a [report::ReportRow],
            /// rr-tui's recorder: launches seen, selected, recorded, and why others were not.
            recorder: Option<report::RecorderSummary>,
            notes: &'a [String],
            problems: Vec<String>,
        }
        super::print_json(&Out {
            directory: &directory,
            recorded_directory: rd.recorded_directory(),
            report_file: rd.report_file.as_ref().map(|p| p.display().to_string()),
            total_instances: rows.len(),
            instances: &rows,
            missing_rows: &rd.missing_rows,
            recorder: rd.recorder_summary(),
            notes: rd
                .report
                .as_ref()
                .map(|r| r.notes.as_slice())
                .unwrap_or(&[]),
            problems: problems.iter().map(|e| e.to_string()).collect(),
        });
    } else {
        match rd.report.as_ref().and_then(|r| r.text.as_deref()) {
            // The directory's own report, then those of the recordings below it (`record`
            // writes one per process and rank), each as its file has it.
            Some(_) => {
                for d in std::iter::once(&rd).chain(&rd.below) {
                    print_one(d);
                }
            }
            // No report of its own: one table of every instance, those below included.
            None => {
                let recorded = rd.recorded_directory().unwrap_or(&directory);
                output::lines(report::render(recorded, &rows).lines());
                if let Some(sum) = rd.recorder_summary() {
                    output::lines(report::render_trailer(Some(&sum), &[]).lines());
                }
            }
        }
    }
    for row in &rd.missing_rows {
        output::error_line(&format!(
            "rr-tui: warning: report row names {}, which is not in {}",
            row.json_file,
            visible(&dir.to_string_lossy())
        ));
    }
    if let Some(e) = &rd.report_problem {
        output::error_line(&format!("rr-tui: warning: {e}"));
    }
    for e in &problems {
        output::error(&e.to_string());
    }
    Ok(if problems.is_empty() { 0 } else { 1 })
}

/// One directory's report: a report file's own lines, as they are (spacing, blank lines), or
/// one built from its descriptors; rr-tui's additions after LLVM's end banner, where LLVM's
/// readers stop.
fn print_one(rd: &RecordDir) {
    let directory = rd.absolute_path();
    let recorded = rd.recorded_directory().unwrap_or(&directory);
    match rd.report.as_ref().and_then(|r| r.text.as_deref()) {
        Some(text) => output::lines(text.lines()),
        None => output::lines(report::render(recorded, &rd.report_rows().0).lines()),
    }
    if let Some(r) = &rd.report {
        output::lines(report::render_trailer(r.summary.as_ref(), &r.notes).lines());
    }
    if let Some(note) = report::moved_note(recorded, &directory) {
        output::lines(note.lines());
    }
}
