//! The files a sweep reads and writes: its outputs checked before any work (`--json-out`,
//! `--csv`), written as they are made, and a report read back (`--resume`, `--simulate`,
//! `tune merge`, the explorer).

use std::path::Path;

use crate::{Trial, TuneReport};
use rr_format::fsio;

use crate::job::TuneJob;
use rr_engine::{Error, Result};

/// A --json-out file larger than this is not one of ours (the largest sweep's compact report is
/// about 300 MiB).
const MAX_REPORT: u64 = 512 << 20;

/// Outputs (`flag`, path) that can be written where they are named, checked before any work
/// (not after an hour of measuring): each one's directory exists and takes a file, and no two
/// name the same file, however spelled (`out` and `./out`, a linked directory).
pub fn output_targets(outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    let mut targets = Vec::new();
    for &(flag, path) in outputs {
        let Some(path) = path else { continue };
        let shown = rr_format::text::visible_path(path);
        let refuse = |why: &str| Err(Error::invalid(format!("{flag} {shown}: {why}")));
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let Ok(dir) = std::fs::canonicalize(parent) else {
            return refuse("its directory does not exist");
        };
        let Some(name) = path.file_name().filter(|_| dir.is_dir()) else {
            return refuse("its directory does not exist");
        };
        let target = dir.join(name);
        if targets.contains(&target) {
            return Err(Error::invalid("--json-out and --csv name the same file"));
        }
        if let Err(e) = fsio::AtomicWriter::create(&target) {
            return refuse(&format!("cannot be written ({e})"));
        }
        targets.push(target);
    }
    Ok(())
}

/// The trials of an earlier run (`--resume`), after checking that the files may be written:
/// before any GPU time is spent, not at the end of the sweep.
pub(super) fn load_previous(a: &TuneJob, report: &TuneReport) -> Result<Vec<Trial>> {
    check_outputs(a)?;
    let Some(path) = a.report_file().filter(|p| a.resume && p.exists()) else {
        return Ok(Vec::new());
    };
    let previous = read_report(path, "--resume")?;
    // Another part's results would pass for this part's.
    if previous.shard != report.shard {
        return Err(Error::invalid(format!(
            "--json-out {}: holds another part of a sharded sweep (--shard differs); choose another file",
            rr_format::text::visible_path(path)
        )));
    }
    // A configuration that faulted or was refused is measured again (the cause may be gone);
    // skips are decided again from this sweep's limits.
    previous
        .resumable_trials(report, path, crate::ReadBack::Resume)
        .map_err(Error::invalid)
}

/// `--json-out` and `--csv` can be written where they are named, and replace no file they may
/// not (checked by the sweep and by `--list`, which refuses what the sweep would).
pub(super) fn check_outputs(a: &TuneJob) -> Result<()> {
    output_targets(&[("--json-out", a.report_file()), ("--csv", a.csv.as_deref())])?;
    for (flag, path) in [("--json-out", a.report_file()), ("--csv", a.csv.as_deref())] {
        let Some(path) = path else { continue };
        let shown = rr_format::text::visible_path(path);
        let refuse = |why: &str| Err(Error::invalid(format!("{flag} {shown}: {why}")));
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.is_file() => {
                return refuse("exists and is not a regular file (a directory, link or device)")
            }
            // A simulated sweep is never resumed (--simulate refuses --resume).
            Ok(_) if !a.resume && flag == "--json-out" && a.simulate.is_none() => {
                return refuse(
                    "exists; choose another file, or add --resume to continue the sweep it holds",
                )
            }
            Ok(_) if !a.resume => return refuse("exists; choose another file"),
            _ => {}
        }
    }
    Ok(())
}

/// How a streamed output meets a file already at its path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Replaced (a sweep's own `--json-out`, which `--resume` continues).
    Replace,
    /// Refused, also when it appears while the output is written (`tune merge`'s outputs).
    Refuse,
}

/// Write `path` (atomically, as [`fsio::write_atomic`]) as `write` makes it, through a buffer:
/// a sweep's CSV holds the kernel's name in every row and is never whole in memory.
pub fn write_streamed(
    path: &Path,
    existing: Existing,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    use std::io::Write;
    let mut file = fsio::AtomicWriter::create(path)?;
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut file);
    write(&mut buffered)
        .and_then(|()| buffered.flush())
        .map_err(|e| Error::io(path, e))?;
    drop(buffered);
    match existing {
        Existing::Replace => file.commit()?,
        Existing::Refuse => file.commit_new()?,
    }
    Ok(())
}

/// What the explorer passes to [`read_report`] as its flag: it opens a sweep to show it.
pub const FOR_EXPLORER: &str = "the explorer";

/// A sweep's `--json-out` report, for `flag` (`--resume`, `--simulate`, `tune merge`,
/// [`FOR_EXPLORER`]): streamed, not read whole (memory holds the trials kept, not the file).
pub fn read_report(path: &Path, flag: &str) -> Result<TuneReport> {
    // A file a flag names that cannot be read is a usage error (exit 2), as a wrong flag is.
    let (file, _) =
        fsio::open_limited(path, MAX_REPORT, "tuning report").map_err(|e| {
            match flag.starts_with("--") {
                true => Error::invalid(format!("{flag} {e}")),
                false => e.into(),
            }
        })?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    serde_json::from_reader(reader).map_err(|e| {
        // The explorer given an instance's descriptor: say how to open its record.
        if flag == FOR_EXPLORER && rr_format::Descriptor::read(path).is_ok() {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            return Error::invalid(format!(
                "{} is not a tuning report but an instance's descriptor: open its record \
                 directory (`rr-tui {}`) and choose the instance there",
                rr_format::text::visible_path(path),
                shell_words::quote(&rr_format::text::visible_path(dir))
            ));
        }
        let what = match flag {
            "--resume" => "continues",
            FOR_EXPLORER => "opens",
            _ => "answers from",
        };
        Error::invalid(format!(
            "{} is not a tuning report ({e}): {flag} {what} a sweep's --json-out file",
            rr_format::text::visible_path(path)
        ))
    })
}
