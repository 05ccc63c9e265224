//! `tune --export FILE`: the sweep's best configuration added to FILE (JSON) and written again
//! as FILE.h. The files are checked before the sweep (not after an hour of measuring) and read
//! again at the end, so sweeps run one after another each add their entry.

use rr_format::text::io_reason;
use std::path::{Path, PathBuf};

use crate::export::{self, ExportFile, HEADER_MARK, MAX_EXPORT_BYTES};
use crate::TuneReport;
use rr_format::text::visible_path;
use rr_format::{fsio, Descriptor};

use rr_engine::{Error, Result};

/// The header beside `json` (`tuned.json` → `tuned.h`).
pub fn header_path(json: &Path) -> PathBuf {
    json.with_extension("h")
}

/// What FILE holds now (empty when it does not exist), refusing anything that is not an
/// export file of ours.
pub fn read(path: &Path) -> Result<ExportFile> {
    let refuse = |why: String| Error::invalid(format!("--export {}: {why}", visible_path(path)));
    if path.extension().is_some_and(|e| e == "h") {
        return Err(refuse(
            "name the JSON file; the header is written beside it with .h".into(),
        ));
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ExportFile::default()),
        Err(e) => return Err(refuse(e.to_string())),
        Ok(_) => {}
    }
    if let Some(why) = not_regular(path) {
        return Err(Error::invalid(format!("--export: {why}")));
    }
    let bytes = fsio::read_limited(path, MAX_EXPORT_BYTES, "export file")
        .map_err(|e| refuse(e.problem()))?;
    ExportFile::parse(&bytes).map_err(refuse)
}

/// Why `p` is no file an export may read or replace, or None when it is absent or a regular
/// file. A symbolic link is said to be one (a dangling one too, which reading would call
/// missing): the export replaces files, and would replace the link rather than write where it
/// points.
fn not_regular(p: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    if meta.file_type().is_symlink() {
        let to = std::fs::read_link(p)
            .map(|t| format!(" to {}", visible_path(&t)))
            .unwrap_or_default();
        let dangling = if std::fs::metadata(p).is_err() {
            ", which does not exist"
        } else {
            ""
        };
        return Some(format!(
            "{} is a symbolic link{to}{dangling}; export to a regular file",
            visible_path(p)
        ));
    }
    (!meta.is_file()).then(|| format!("{} exists and is not a regular file", visible_path(p)))
}

/// The header beside export file `json` may be replaced: absent, or written by an export (it
/// begins with [`HEADER_MARK`]), as the JSON file must be one of ours. A header of one's own
/// that happens to share the name is never overwritten.
fn header_is_ours(json: &Path) -> Result<()> {
    use std::io::Read;
    let header = header_path(json);
    let refuse = |why: String| Error::invalid(format!("--export {}: {why}", visible_path(json)));
    match std::fs::symlink_metadata(&header) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(refuse(format!(
                "{}: {}",
                visible_path(&header),
                io_reason(&e)
            )))
        }
        Ok(_) => {}
    }
    if let Some(why) = not_regular(&header) {
        return Err(Error::invalid(format!("--export: {why}")));
    }
    let mut start = Vec::with_capacity(HEADER_MARK.len());
    fsio::open_regular(&header)?
        .take(HEADER_MARK.len() as u64)
        .read_to_end(&mut start)
        .map_err(|e| Error::io(&header, e))?;
    if start != HEADER_MARK.as_bytes() {
        return Err(refuse(format!(
            "{} exists and was not written by rr-tui tune --export (it would be replaced); move it away, or export to another file",
            visible_path(&header)
        )));
    }
    Ok(())
}

/// Check before the sweep: FILE readable as an export file (or absent), FILE.h one of ours (or
/// absent), neither a symbolic link, in a directory that exists, neither of the sweep's own
/// output files, both files writable.
pub fn check(path: &Path, outputs: [Option<&Path>; 2]) -> Result<()> {
    let refuse = |why: &str| Error::invalid(format!("--export {}: {why}", visible_path(path)));
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            return Err(refuse("its directory does not exist"))
        }
        _ => {}
    }
    let same = |other: &Path| {
        let canon = |p: &Path| {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::canonicalize(dir)
                .ok()
                .map(|d| d.join(p.file_name().unwrap_or_default()))
        };
        canon(other).is_some() && canon(other) == canon(path)
            || canon(other).is_some() && canon(other) == canon(&header_path(path))
    };
    if outputs.into_iter().flatten().any(same) {
        return Err(refuse(
            "names the --json-out or --csv file (or its header does)",
        ));
    }
    for p in [path.to_path_buf(), header_path(path)] {
        if let Some(why) = not_regular(&p) {
            return Err(Error::invalid(format!("--export: {why}")));
        }
    }
    read(path)?;
    header_is_ours(path)?;
    for p in [path.to_path_buf(), header_path(path)] {
        fsio::AtomicWriter::create(&p).map_err(|e| {
            Error::invalid(format!(
                "--export: {} cannot be written ({e})",
                visible_path(&p)
            ))
        })?;
    }
    Ok(())
}

/// Add the sweep's best to FILE and rewrite FILE.h; what was written, or None when nothing
/// verified.
pub fn write(
    path: &Path,
    report: &TuneReport,
    d: &Descriptor,
    segments: &[rr_format::descriptor::Segment],
) -> Result<Option<String>> {
    let Some(sm) = report.devices.first().map(|dev| dev.sm) else {
        return Ok(None);
    };
    let Some(entry) = export::entry(report, d, segments, &format!("sm_{sm}")) else {
        return Ok(None);
    };
    let mut file = read(path)?;
    // Checked again: the files may have changed during the sweep.
    header_is_ours(path)?;
    let id = entry.signature_id.clone();
    file.upsert(entry)
        .map_err(|why| Error::invalid(format!("--export {}: {why}", visible_path(path))))?;
    fsio::write_atomic(path, &file.to_json())?;
    let header = header_path(path);
    fsio::write_atomic(&header, file.to_header().as_bytes())?;
    Ok(Some(format!(
        "Exported the best configuration (signature {id}, sm_{sm}) to {} and {} ({} entr{})",
        visible_path(path),
        visible_path(&header),
        file.entries.len(),
        if file.entries.len() == 1 { "y" } else { "ies" }
    )))
}
