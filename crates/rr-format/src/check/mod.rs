//! `rr-tui check`: validate every file of every instance. Reads snapshot *sizes* only (the
//! command hashes blobs on top: `store::verify_blob`).

// The checks of every generation live here, legacy ones included (`legacy`): the record
// formats (`descriptor`, `legacy`) know nothing of checking.
pub(crate) mod files;
pub(crate) mod finding;
pub mod legacy;

use crate::descriptor::Descriptor;
use crate::dir::RecordDir;
use crate::globals::Globals;
use crate::image;
use crate::instance::{InstanceFiles, Side};
pub use files::global_problems;
use files::{image_findings, note_outside_links, recorded_len};
pub use finding::finding;
pub use finding::{from_error, Finding, Severity};
use std::collections::HashMap;
use std::path::Path;

/// Check a whole directory, the recordings below it included.
pub fn check_dir(dir: &RecordDir) -> Vec<Finding> {
    check_dir_and_blobs(dir).0
}

/// The blobs the instances' descriptors use, with the size each must have, and whether every
/// descriptor could be read (if not, a blob not listed may still be used by the unreadable one).
#[derive(Debug, Default)]
pub struct BlobUse {
    pub sizes: HashMap<String, u64>,
    pub every_descriptor_read: bool,
}

/// [`check_dir`], and the blobs the instances' descriptors use (read once: `check` hashes
/// those, and only names the others).
pub fn check_dir_and_blobs(dir: &RecordDir) -> (Vec<Finding>, BlobUse) {
    let mut used = BlobUse {
        every_descriptor_read: true,
        ..Default::default()
    };
    let mut out = Vec::new();
    for d in std::iter::once(dir).chain(&dir.below) {
        report_findings(d, &mut out);
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
        out.extend(check_instance_using(&inst.files, report_name, &mut used));
    }
    (out, used)
}

/// What is wrong with one directory's report.
fn report_findings(dir: &RecordDir, out: &mut Vec<Finding>) {
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
}

/// Check one instance's files; `report_name` is the kernel the report names for it, if any.
pub fn check_instance(files: &InstanceFiles, report_name: Option<&str>) -> Vec<Finding> {
    check_instance_using(files, report_name, &mut BlobUse::default())
}

/// [`check_instance`], adding the blobs the descriptor uses (and their sizes) to `used`.
fn check_instance_using(
    files: &InstanceFiles,
    report_name: Option<&str>,
    used: &mut BlobUse,
) -> Vec<Finding> {
    let mut out = instance_findings(files, report_name, used);
    // A blob shared by input and output (a kernel that changed nothing there) is one problem,
    // not two.
    let mut seen = std::collections::HashSet::new();
    out.retain(|f| seen.insert((f.path.clone(), f.problem.clone())));
    out
}

/// Everything wrong with one instance, in the order `check` has always listed it: the
/// descriptor, the report's name for it, then (rr-tui's and LLVM's current records) what replay
/// refuses, the launch's names and limits, links out of the directory, the snapshots, the
/// globals and the image; legacy records are checked by [`legacy::files`].
fn instance_findings(
    files: &InstanceFiles,
    report_name: Option<&str>,
    used: &mut BlobUse,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let json = files.json();
    let d = match Descriptor::read(&json) {
        Ok(d) => d,
        Err(e) => {
            used.every_descriptor_read = false;
            out.push(from_error(e));
            return out;
        }
    };
    note_used_blobs(&d, used);
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
        legacy::files(files, &d, &mut out);
        return out;
    }
    replay_refusals(&d, &json, &mut out);
    name_and_limit_findings(files, &d, &json, &mut out);
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
    snapshot_findings(files, &d, &json, &mut out);
    globals_and_image_findings(files, &d, &mut out);
    out
}

/// Adds the blobs `d`'s segments are stored in to `used`, each with the size it must have.
fn note_used_blobs(d: &Descriptor, used: &mut BlobUse) {
    if let Some(cuda) = &d.cuda {
        for (c, seg) in cuda.content.iter().flatten().zip(&cuda.segments) {
            for id in std::iter::once(&c.input).chain(&c.output) {
                used.sizes.insert(id.clone(), seg.size);
            }
        }
    }
}

/// What replay refuses before any GPU is touched is an error here too (one rule each); what it
/// only warns about (pointers outside the record, an unreplayable or raced launch), a warning.
fn replay_refusals(d: &Descriptor, json: &Path, out: &mut Vec<Finding>) {
    let segments = d.segments(d.snapshot_len().unwrap_or(d.valloc_size));
    if let Some(why) = crate::memory::unmappable(d, &segments) {
        out.push(finding(Severity::Error, json, why));
    }
    if let Some(why) = crate::limits::geometry_problem(d.grid(), d.block()) {
        out.push(finding(
            Severity::Error,
            json,
            format!("recorded launch cannot run on any CUDA GPU: {why}"),
        ));
    }
    for w in crate::memory::outside_words(d) {
        out.push(finding(
            Severity::Warning,
            json,
            crate::memory::describe_outside(d, &w),
        ));
    }
    if let Some(why) = d.cuda.as_ref().and_then(|c| c.unreplayable.as_ref()) {
        out.push(finding(
            Severity::Warning,
            json,
            format!("cannot be replayed: {why}"),
        ));
    }
    if let Some(why) = d.cuda.as_ref().and_then(|c| c.raced.as_ref()) {
        out.push(finding(
            Severity::Warning,
            json,
            format!(
                "its snapshots may have raced with another stream (a replay may not verify): {}",
                crate::text::visible(why)
            ),
        ));
    }
    if let Some(why) = d
        .cuda
        .as_ref()
        .and_then(|c| crate::memory::object_problem(d, &c.segments))
    {
        out.push(finding(Severity::Error, json, why));
    }
}

/// The file name against the descriptor's hashes, and the recorded team and thread limits.
fn name_and_limit_findings(
    files: &InstanceFiles,
    d: &Descriptor,
    json: &Path,
    out: &mut Vec<Finding>,
) {
    let expected = InstanceFiles::expected_stem(d);
    if expected != files.stem {
        out.push(finding(
            Severity::Warning,
            json,
            format!("file name does not match the descriptor's hashes (expected {expected}.json)"),
        ));
    }
    if d.teams_limits[0] > 0 && (d.num_teams < d.teams_limits[0] || d.num_teams > d.teams_limits[1])
    {
        out.push(finding(
            Severity::Warning,
            json,
            format!(
                "recorded NumTeams {} is outside TeamsLimits {:?}",
                d.num_teams, d.teams_limits
            ),
        ));
    }
    if (d.teams_limits[0] == 0) != (d.teams_limits[1] == 0) {
        out.push(finding(
            Severity::Error,
            json,
            "TeamsLimits min and max are inconsistent",
        ));
    }
    if (d.threads_limits[0] == 0) != (d.threads_limits[1] == 0) {
        out.push(finding(
            Severity::Error,
            json,
            "ThreadsLimits min and max are inconsistent",
        ));
    }
}

/// The recorded input and output snapshots: present, and of the sizes the descriptor and each
/// other say.
fn snapshot_findings(files: &InstanceFiles, d: &Descriptor, json: &Path, out: &mut Vec<Finding>) {
    let input = files.snapshot_file(d, Side::Input);
    let recorded_input = recorded_len(files, d, Side::Input);
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
    let output = files.snapshot_file(d, Side::Output);
    match (recorded_len(files, d, Side::Output), input_len) {
        (Err(f), _) => out.push(f),
        (Ok(None), _) if d.cuda.as_ref().is_some_and(|c| c.content.is_some()) => out.push(finding(
            Severity::Warning,
            json,
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
}

/// The module globals, and the image against the kernel and those globals.
fn globals_and_image_findings(files: &InstanceFiles, d: &Descriptor, out: &mut Vec<Finding>) {
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
    let image_path = files.image(d);
    if d.cuda.is_none() {
        note_outside_links(&files.dir, std::slice::from_ref(&image_path), out);
    }
    match files.resolve_image(d).and_then(|p| image::read(&p)) {
        Err(e) => out.push(from_error(e)),
        Ok((_, info)) => {
            image_findings(d, &info, &image_path, globals.as_ref(), &globals_path, out)
        }
    }
}
