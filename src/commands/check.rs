use std::path::Path;

use crate::error::Result;
use rr_format::check::{self, Finding, Severity};
use rr_format::{InstanceFiles, RecordDir};

pub fn run(path: &Path, json: bool, strict: bool) -> Result<i32> {
    let (mut findings, files): (Vec<Finding>, Vec<InstanceFiles>) =
        if path.extension().is_some_and(|e| e == "json") && !path.is_dir() {
            let files = InstanceFiles::from_descriptor_path(path);
            (check::check_instance(&files, None), vec![files])
        } else {
            let rd = RecordDir::open(path)?;
            let files = rd.instances.iter().map(|i| i.files.clone()).collect();
            (check::check_dir(&rd), files)
        };
    let instances = files.len();
    findings.extend(verify_blobs(&files));
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

/// Every distinct blob of format-2 instances read once and hashed: a blob must hold what its
/// name says (`diff` and `replay` would otherwise use bytes nobody recorded). Progress on a
/// terminal for large recordings.
fn verify_blobs(files: &[InstanceFiles]) -> Vec<Finding> {
    let mut blobs: Vec<(String, std::path::PathBuf, u64)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in files {
        let Ok(d) = rr_format::Descriptor::read(&f.json()) else {
            continue; // reported by the checks above
        };
        for (id, path) in rr_format::store::blobs_of(f, &d) {
            if seen.insert(id.clone()) {
                let len = rr_format::fsio::regular_len(&path).unwrap_or(0);
                blobs.push((id, path, len));
            }
        }
    }
    let total = blobs.iter().map(|b| b.2).sum();
    let pb = super::progress_bar(total);
    let mut before = 0u64;
    let mut out = Vec::new();
    for (id, path, len) in &blobs {
        // A missing or irregular blob is the layout checks' finding already.
        if rr_format::fsio::regular_len(path).is_err() {
            continue;
        }
        let result = rr_format::store::verify_blob(path, id, &mut |done| {
            if let Some(pb) = &pb {
                pb.set_position(before + done);
            }
            true
        });
        before += len;
        if let Err(e) = result {
            out.push(check::from_error(e));
        }
    }
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    out
}
