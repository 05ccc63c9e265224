//! Checks of one instance's files that LLVM's records and rr-tui's share: snapshot lengths,
//! links out of the directory, the image against the kernel and the globals.

use std::path::{Path, PathBuf};

use super::finding::{finding, from_error, Finding, Severity};
use crate::descriptor::Descriptor;
use crate::globals::Globals;
use crate::image;
use crate::instance::{InstanceFiles, Side};

/// The length of a recorded snapshot (one file, or format 2's blobs): `Ok(None)` when it was not
/// recorded, `Err` (a finding) when something exists but is unusable.
pub(crate) fn recorded_len(
    files: &InstanceFiles,
    d: &Descriptor,
    side: Side,
) -> Result<Option<u64>, Finding> {
    match crate::store::recorded_len(files, d, side) {
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
    let problems = global_problems(info, g);
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

/// What is wrong between the recorded globals and the image's symbols, one sentence each: a
/// name recorded twice (a replay would write one over the other) and, for a cubin (whose
/// symbol table is read), a global the image does not define or of another size. `check`'s
/// findings and `repro`'s refusal both say these.
pub fn global_problems(info: &image::ImageInfo, g: &Globals) -> Vec<String> {
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
    problems
}

/// Findings listed per `.globals` file before the rest are counted.
const MAX_GLOBAL_FINDINGS: usize = 20;
