use std::path::Path;

use crate::error::Result;
use rr_format::check::{self, Finding, Severity};
use rr_format::{InstanceFiles, RecordDir};

pub fn run(path: &Path, json: bool, strict: bool) -> Result<i32> {
    let (mut findings, instances, blobs) =
        if path.extension().is_some_and(|e| e == "json") && !path.is_dir() {
            let files = InstanceFiles::from_descriptor_path(path);
            // A file named on the command line that is no descriptor is an input error (exit
            // status 2), as in `inspect` and `replay`: there is no instance to check.
            let d = rr_format::Descriptor::read(path)?;
            let blobs = rr_format::store::blobs_of(&files, &d);
            (check::check_instance(&files, None), 1, blobs)
        } else {
            if let Some(why) = not_checkable(path) {
                return Err(crate::error::Error::invalid(why));
            }
            let rd = RecordDir::open(path)?;
            // Not each record directory below checked in turn: a mistyped path would then pass
            // as a check; the list says which to pass (the same answer as `report`'s).
            if rd.holds_nothing() {
                return Ok(super::not_a_record::refuse(path, "check", json));
            }
            // Every blob of the directory and of those below it, listed: the ones the
            // descriptors use are hashed; the others are named, not read (nothing replays them,
            // and a stray sparse file could hold a terabyte of holes).
            let (mut findings, used) = check::check_dir_and_blobs(&rd);
            let mut blobs = Vec::new();
            for (id, path) in std::iter::once(&rd)
                .chain(&rd.below)
                .flat_map(|d| rr_format::store::blobs_in(&d.path))
            {
                // A blob of another size than its segment is the layout check's error already:
                // hashing it (perhaps a terabyte of holes) would say nothing more.
                let fits = |size: u64| rr_format::fsio::regular_len(&path).is_ok_and(|l| l == size);
                if is_link(&path) {
                    findings.push(linked_blob(&path));
                } else if let Some(&size) = used.sizes.get(&id) {
                    if fits(size) {
                        blobs.push((id, path));
                    }
                } else if used.every_descriptor_read {
                    // (An unreadable descriptor may use it: its error is the finding then.)
                    findings.push(check::finding(
                        Severity::Warning,
                        &path,
                        "a blob no instance uses (not read)",
                    ));
                }
            }
            (findings, rd.instances.len(), blobs)
        };
    findings.extend(verify_blobs(blobs));
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    // A check failed by warnings alone says so (text and JSON): the counts alone read as a pass.
    let strict_fails = (strict && errors == 0 && warnings > 0).then_some(STRICT_FAILS);
    let passed = errors == 0 && strict_fails.is_none();
    if json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            instances: usize,
            errors: usize,
            warnings: usize,
            passed: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<&'static str>,
            findings: &'a [Finding],
        }
        super::print_json(&Out {
            instances,
            errors,
            warnings,
            passed,
            reason: strict_fails,
            findings: &findings,
        });
    } else {
        let mut lines: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
        lines.push(format!(
            "checked {instances} instance(s): {errors} error(s), {warnings} warning(s){}",
            strict_fails
                .map(|why| format!(" ({why})"))
                .unwrap_or_default()
        ));
        crate::output::lines(lines);
    }
    Ok(if passed { 0 } else { 1 })
}

/// Why `path`, an existing file that is neither a directory nor a descriptor, cannot be
/// checked, naming what check takes (and the instance's descriptor beside a snapshot).
fn not_checkable(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_dir() {
        return None;
    }
    let shown = rr_format::text::visible_path(path);
    let descriptor = path.with_extension("json");
    let beside = match descriptor.is_file() {
        true => format!(
            ": its instance's descriptor is `rr-tui check {}`",
            shell_words::quote(&rr_format::text::visible_path(&descriptor))
        ),
        false => String::new(),
    };
    Some(format!(
        "{shown}: not a directory, nor a descriptor (.json); check takes a record directory or \
         one instance's descriptor{beside}"
    ))
}

/// Why a check with warnings and no error fails under `--strict`.
const STRICT_FAILS: &str = "--strict: the warnings fail the check";

fn is_link(path: &std::path::Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Blobs are regular files inside the directory: a link is not followed, used or not (layout
/// refuses one that leads out where an instance uses it).
fn linked_blob(path: &std::path::Path) -> Finding {
    check::finding(
        Severity::Error,
        path,
        "is a link: a blob is a regular file of the record directory (not followed)",
    )
}

/// Every distinct blob of format-2 instances read once and hashed: a blob must hold what its
/// name says (`diff` and `replay` would otherwise use bytes nobody recorded). Progress on a
/// terminal for large recordings.
fn verify_blobs(named: Vec<(String, std::path::PathBuf)>) -> Vec<Finding> {
    let blobs: Vec<(String, std::path::PathBuf, u64)> = named
        .into_iter()
        .map(|(id, path)| {
            let len = rr_format::fsio::regular_len(&path).unwrap_or(0);
            (id, path, len)
        })
        .collect();
    let total = blobs.iter().map(|b| b.2).sum();
    let pb = super::progress_bar(total);
    let mut before = 0u64;
    let mut out = Vec::new();
    for (id, path, len) in &blobs {
        if is_link(path) {
            out.push(linked_blob(path));
            continue;
        }
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
