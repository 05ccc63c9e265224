//! `rr-tui check`: validate every file of every instance. Reads snapshot *sizes* only.

use std::path::{Path, PathBuf};

use super::descriptor::Descriptor;
use super::dir::RecordDir;
use super::globals::Globals;
use super::image;
use super::instance::{InstanceFiles, Side};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub path: PathBuf,
    pub problem: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tag = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        // One line whatever the file and kernel names hold.
        write!(
            f,
            "{}: {tag}: {}",
            crate::text::visible_path(&self.path),
            crate::text::visible(&self.problem)
        )
    }
}

pub(crate) fn finding(severity: Severity, path: &Path, problem: impl Into<String>) -> Finding {
    Finding {
        severity,
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// An error reading a file, as a finding about that file.
pub fn from_error(e: crate::error::Error) -> Finding {
    match e {
        crate::error::Error::Format { path, problem } => Finding {
            severity: Severity::Error,
            path,
            problem,
        },
        crate::error::Error::Io { path, source } => Finding {
            severity: Severity::Error,
            path,
            problem: source.to_string(),
        },
        other => Finding {
            severity: Severity::Error,
            path: PathBuf::new(),
            problem: other.to_string(),
        },
    }
}

/// The length of a recorded snapshot (one file, or format 2's blobs): `Ok(None)` when it was not
/// recorded, `Err` (a finding) when something exists but is unusable.
pub(crate) fn recorded_len(
    files: &InstanceFiles,
    d: &Descriptor,
    side: Side,
) -> Result<Option<u64>, Finding> {
    match files.recorded_len(d, side) {
        Ok(n) => Ok(Some(n)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(from_error(e)),
    }
}

/// Instance files may be links to regular files elsewhere (snapshots kept on another disk):
/// allowed, and worth a warning, since the record directory alone no longer holds the instance.
pub(crate) fn note_outside_links(dir: &Path, paths: &[PathBuf], out: &mut Vec<Finding>) {
    for p in paths {
        let is_link = std::fs::symlink_metadata(p)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_link {
            continue;
        }
        if let Ok(crate::fsio::Location::Outside(real)) = crate::fsio::locate(dir, p) {
            out.push(finding(
                Severity::Warning,
                p,
                format!(
                    "is a link to {}, outside the record directory",
                    crate::text::visible_path(&real)
                ),
            ));
        }
    }
}

/// Check a whole directory.
pub fn check_dir(dir: &RecordDir) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(e) = &dir.report_problem {
        out.push(finding(
            Severity::Error,
            dir.report_file.as_deref().unwrap_or(&dir.path),
            e.to_string(),
        ));
    }
    if let Some(why) = dir.report.as_ref().and_then(|r| r.trailer_problem.as_ref()) {
        out.push(finding(
            Severity::Warning,
            dir.report_file.as_deref().unwrap_or(&dir.path),
            format!("the recorder's account after the table is not shown: {why}"),
        ));
    }
    for row in &dir.missing_rows {
        let report = dir.report_file.as_deref().unwrap_or(&dir.path);
        out.push(finding(
            Severity::Error,
            report,
            format!(
                "report row names {} ({}), which is not in the directory",
                row.json_file, row.kernel_name
            ),
        ));
    }
    if dir.instances.is_empty() {
        out.push(finding(
            Severity::Error,
            &dir.path,
            "no instance descriptors (<KernelHash>_<LaunchConfigHash>.json, or <Name>.json of LLVM 16–22) found",
        ));
    }
    for inst in &dir.instances {
        let report_name = inst.kernel_name.as_deref().filter(|_| inst.in_report);
        out.extend(check_instance(&inst.files, report_name));
    }
    out
}

/// Check one instance's files; `report_name` is the kernel the report names for it, if any.
pub fn check_instance(files: &InstanceFiles, report_name: Option<&str>) -> Vec<Finding> {
    let mut out = instance_findings(files, report_name);
    // A blob shared by input and output (a kernel that changed nothing there) is one problem,
    // not two.
    let mut seen = std::collections::HashSet::new();
    out.retain(|f| seen.insert((f.path.clone(), f.problem.clone())));
    out
}

fn instance_findings(files: &InstanceFiles, report_name: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let json = files.json();
    let d = match Descriptor::read(&json) {
        Ok(d) => d,
        Err(e) => {
            out.push(from_error(e));
            return out;
        }
    };
    if let Some(name) = report_name.filter(|n| *n != d.name) {
        out.push(finding(
            Severity::Error,
            &json,
            format!(
                "report names kernel {name} but the descriptor says {}",
                d.name
            ),
        ));
    }
    if d.format.is_legacy() {
        crate::legacy::check::files(files, &d, &mut out);
        return out;
    }
    for w in crate::memory::outside_words(&d) {
        out.push(finding(
            Severity::Warning,
            &json,
            crate::memory::describe_outside(&d, &w),
        ));
    }
    if let Some(why) = d.cuda.as_ref().and_then(|c| c.unreplayable.as_ref()) {
        out.push(finding(
            Severity::Warning,
            &json,
            format!("cannot be replayed: {why}"),
        ));
    }
    if let Some(why) = d
        .cuda
        .as_ref()
        .and_then(|c| crate::memory::object_problem(&d, &c.segments))
    {
        out.push(finding(Severity::Error, &json, why));
    }
    let expected = InstanceFiles::expected_stem(&d);
    if expected != files.stem {
        out.push(finding(
            Severity::Warning,
            &json,
            format!("file name does not match the descriptor's hashes (expected {expected}.json)"),
        ));
    }
    if d.teams_limits[0] > 0 && (d.num_teams < d.teams_limits[0] || d.num_teams > d.teams_limits[1])
    {
        out.push(finding(
            Severity::Warning,
            &json,
            format!(
                "recorded NumTeams {} is outside TeamsLimits {:?}",
                d.num_teams, d.teams_limits
            ),
        ));
    }
    if (d.teams_limits[0] == 0) != (d.teams_limits[1] == 0) {
        out.push(finding(
            Severity::Error,
            &json,
            "TeamsLimits min and max are inconsistent",
        ));
    }
    if (d.threads_limits[0] == 0) != (d.threads_limits[1] == 0) {
        out.push(finding(
            Severity::Error,
            &json,
            "ThreadsLimits min and max are inconsistent",
        ));
    }
    note_outside_links(
        &files.dir,
        &[
            json.clone(),
            files.snapshot_file(&d, Side::Input),
            files.snapshot_file(&d, Side::Output),
            files.globals(),
        ],
        &mut out,
    );
    let input = files.snapshot_file(&d, Side::Input);
    let recorded_input = recorded_len(files, &d, Side::Input);
    let input_len = recorded_input.as_ref().ok().copied().flatten();
    match recorded_input {
        Err(f) => out.push(f),
        Ok(None) => out.push(finding(
            Severity::Error,
            &input,
            "missing (the recorded device memory before the kernel)",
        )),
        Ok(Some(len)) => match &d.cuda {
            Some(_) => {
                let total = d.snapshot_len().unwrap_or(0);
                if len != total {
                    out.push(finding(
                        Severity::Error,
                        &input,
                        format!("is {len} bytes but the descriptor's segments end at {total}"),
                    ));
                }
            }
            None => {
                if len > d.valloc_size {
                    out.push(finding(
                        Severity::Error,
                        &input,
                        format!("is {len} bytes, more than VAllocSize {}", d.valloc_size),
                    ));
                }
                if len % 16 != 0 {
                    out.push(finding(Severity::Warning, &input, format!("is {len} bytes, not a multiple of 16 (libomptarget's allocation unit): truncated?")));
                }
            }
        },
    }
    let output = files.snapshot_file(&d, Side::Output);
    match (recorded_len(files, &d, Side::Output), input_len) {
        (Err(f), _) => out.push(f),
        (Ok(None), _) if d.cuda.as_ref().is_some_and(|c| c.content.is_some()) => out.push(finding(
            Severity::Warning,
            &json,
            "recorded without its output (rr-tui record --no-output): verification is impossible",
        )),
        (Ok(None), _) => out.push(finding(
            Severity::Warning,
            &output,
            "missing: verification is impossible (recorded with LIBOMPTARGET_RECORD_OUTPUT=false?)",
        )),
        (Ok(Some(o)), Some(i)) if o != i => out.push(finding(
            Severity::Error,
            &output,
            format!("is {o} bytes but .record_input is {i}: the recording is inconsistent"),
        )),
        _ => {}
    }
    let globals_path = files.globals();
    let globals = match Globals::read(&globals_path) {
        Ok(g) => Some(g),
        Err(e) if e.is_not_found() => {
            out.push(finding(
                Severity::Error,
                &globals_path,
                "missing (module globals)",
            ));
            None
        }
        Err(e) => {
            out.push(from_error(e));
            None
        }
    };
    let image_path = files.image(&d);
    if d.cuda.is_none() {
        note_outside_links(&files.dir, std::slice::from_ref(&image_path), &mut out);
    }
    match files.resolve_image(&d).and_then(|p| image::read(&p)) {
        Err(e) => out.push(from_error(e)),
        Ok((_, info)) => image_findings(
            &d,
            &info,
            &image_path,
            globals.as_ref(),
            &globals_path,
            &mut out,
        ),
    }
    out
}

/// What is wrong between an image, the kernel and the recorded globals.
pub(crate) fn image_findings(
    d: &Descriptor,
    info: &image::ImageInfo,
    image_path: &Path,
    globals: Option<&Globals>,
    globals_path: &Path,
    out: &mut Vec<Finding>,
) {
    if info.has_kernel(&d.name) == Some(false) {
        out.push(finding(
            Severity::Error,
            image_path,
            format!("has no kernel named {}", d.name),
        ));
    }
    let Some(g) = globals else { return };
    // The same name twice: a replay would write one of them over the other.
    let mut seen = std::collections::HashSet::new();
    let mut problems = Vec::new();
    for entry in &g.entries {
        if !seen.insert(entry.name.as_str()) {
            problems.push(format!("global {} is recorded more than once", entry.name));
        }
    }
    if let image::ImageKind::Cubin { .. } = &info.kind {
        let symbols: std::collections::HashMap<&str, u64> = info
            .globals
            .iter()
            .map(|s| (s.name.as_str(), s.size))
            .collect();
        for entry in &g.entries {
            match symbols.get(entry.name.as_str()) {
                Some(&size) if size != entry.size => problems.push(format!(
                    "global {} is {} bytes but the image declares {size}",
                    entry.name, entry.size
                )),
                Some(_) => {}
                None => problems.push(format!("global {} is not defined by the image", entry.name)),
            }
        }
    }
    // A damaged file can hold thousands of bad entries: the first ones say what is wrong.
    let more = problems.len().saturating_sub(MAX_GLOBAL_FINDINGS);
    for p in problems.into_iter().take(MAX_GLOBAL_FINDINGS) {
        out.push(finding(Severity::Error, globals_path, p));
    }
    if more > 0 {
        out.push(finding(
            Severity::Error,
            globals_path,
            format!("… and {more} more problems with its globals"),
        ));
    }
}

/// Findings listed per `.globals` file before the rest are counted.
const MAX_GLOBAL_FINDINGS: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_and_severity() {
        let f = finding(Severity::Error, Path::new("a/b.json"), "bad");
        assert_eq!(f.to_string(), "a/b.json: error: bad");
    }
}
