use std::path::Path;

use crate::error::Result;
use rr_format::check::{self, Finding, Severity};
use rr_format::{InstanceFiles, RecordDir};

pub fn run(path: &Path, json: bool, strict: bool) -> Result<i32> {
    let (findings, instances): (Vec<Finding>, usize) =
        if path.extension().is_some_and(|e| e == "json") && !path.is_dir() {
            (
                check::check_instance(&InstanceFiles::from_descriptor_path(path), None),
                1,
            )
        } else {
            let rd = RecordDir::open(path)?;
            (check::check_dir(&rd), rd.instances.len())
        };
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    if json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            instances: usize,
            errors: usize,
            warnings: usize,
            findings: &'a [Finding],
        }
        super::print_json(&Out {
            instances,
            errors,
            warnings,
            findings: &findings,
        });
    } else {
        let mut lines: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
        lines.push(format!(
            "checked {instances} instance(s): {errors} error(s), {warnings} warning(s)"
        ));
        crate::output::lines(lines);
    }
    Ok(if errors > 0 || (strict && warnings > 0) {
        1
    } else {
        0
    })
}
