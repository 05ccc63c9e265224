use std::path::Path;

use crate::error::Result;
use rr_format::{report, RecordDir};

pub fn run(dir: &Path, json: bool) -> Result<i32> {
    let rd = RecordDir::open(dir)?;
    let rows = rd.report_rows();
    if json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            directory: String,
            report_file: Option<String>,
            total_instances: usize,
            instances: &'a [report::ReportRow],
            missing_rows: &'a [report::ReportRow],
        }
        super::print_json(&Out {
            directory: rd.absolute_path(),
            report_file: rd.report_file.as_ref().map(|p| p.display().to_string()),
            total_instances: rows.len(),
            instances: &rows,
            missing_rows: &rd.missing_rows,
        });
    } else {
        let directory = rd
            .report
            .as_ref()
            .and_then(|r| r.directory.clone())
            .unwrap_or_else(|| rd.absolute_path());
        print!("{}", report::render(&directory, &rows));
    }
    for row in &rd.missing_rows {
        eprintln!(
            "rr-tui: warning: report row names {}, which is not in {}",
            row.json_file,
            dir.display()
        );
    }
    if let Some(e) = &rd.report_problem {
        eprintln!("rr-tui: warning: {e}");
    }
    Ok(0)
}
