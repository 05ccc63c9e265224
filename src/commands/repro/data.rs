//! The reproducer's folder and its data: the output folder is checked before anything is
//! written (never through a link, never into a non-empty folder without `--force`); recorded
//! files are hard-linked when on the same file system (no copy of GiB), copied otherwise, or
//! packed into one tar archive; copies and archives keep the holes of sparse files
//! ([`sparse`]).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rr_format::fsio::{self, AtomicWriter};
use rr_format::text::visible_path;

use super::model::Source;
use super::sparse::{self, Progress, Runs, Src};
use crate::error::{Error, Result};

/// The data folder inside the output folder, and the archive `--pack` writes instead.
pub const DATA_DIR: &str = "data";
pub const PACK_FILE: &str = "data.tar";

/// How the data was placed, for the summary line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub linked: usize,
    pub copied: usize,
    pub written: usize,
    /// The data's full length, holes included.
    pub bytes: u64,
    /// The bytes of data copied or written (holes and hard links take none).
    pub stored: u64,
}

/// Make `out` ready to receive a reproducer: created when absent; an existing folder must be
/// empty unless `force`; a link (to anything) or a non-folder is refused, naming the path.
pub fn prepare_out(out: &Path, force: bool) -> Result<()> {
    match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))
        }
        Err(e) => Err(Error::io(out, e)),
        Ok(m) if m.file_type().is_symlink() => Err(refusal(
            out,
            "is a symbolic link; a reproducer is never written through one: give a real folder",
        )),
        Ok(m) if !m.is_dir() => Err(refusal(out, "exists and is not a folder")),
        Ok(_) => {
            let mut entries = std::fs::read_dir(out).map_err(|e| Error::io(out, e))?;
            if entries.next().is_some() && !force {
                return Err(refusal(
                    out,
                    "exists and is not empty; choose another --out, or pass --force to write \
                     the reproducer's files over those of the same names",
                ));
            }
            Ok(())
        }
    }
}

fn refusal(path: &Path, problem: &str) -> Error {
    Error::invalid(format!("{}: {problem}", visible_path(path)))
}

/// A sub-folder of the output folder, created if absent; a link there is refused (writing
/// into it would write wherever it points).
fn subdir(out: &Path, name: &str) -> Result<PathBuf> {
    let dir = out.join(name);
    match std::fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        Err(e) => return Err(Error::io(&dir, e)),
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(refusal(
                &dir,
                "is in the way of the data folder (not a folder)",
            ))
        }
    }
    Ok(dir)
}

/// Write a generated file (source, README) atomically: renamed into place, so an existing link
/// of that name is replaced, never followed.
pub fn write_file(out: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    fsio::write_atomic(&out.join(name), bytes).map_err(Into::into)
}

/// Where the data of one file comes from, and what writing it will take.
enum What<'a> {
    Bytes(&'a [u8], Runs),
    /// A record file of `len` bytes (measured, then closed: a record may have tens of
    /// thousands of blobs, more than a process may hold open; opened again, one at a time, to
    /// be written); `runs` is `None` for one that is expected to be hard-linked (same file
    /// system): nothing to write.
    Record {
        path: &'a Path,
        len: u64,
        runs: Option<Runs>,
    },
}

/// Every data file of the reproducer and the bytes writing them takes, measured before
/// anything is written.
pub struct Plan<'a> {
    items: Vec<(&'a str, What<'a>)>,
    /// Bytes the data will really take on the destination: holes are not written, hard links
    /// take nothing.
    pub needed: u64,
    /// The data's full length, holes included.
    pub bytes: u64,
}

/// The nearest folder of `out` (itself or a parent) that exists: its file system is the one
/// `out` will be on.
pub fn existing_ancestor(out: &Path) -> PathBuf {
    let mut p = out;
    loop {
        if p.as_os_str().is_empty() {
            return PathBuf::from(".");
        }
        if std::fs::metadata(p).is_ok() {
            return p.to_path_buf();
        }
        match p.parent() {
            Some(parent) => p = parent,
            None => return PathBuf::from("."),
        }
    }
}

/// Measure the data files for `out` (`pack`: one archive, everything written).
pub fn plan<'a>(out: &Path, files: &'a [(String, Source)], pack: bool) -> Result<Plan<'a>> {
    let here = std::fs::metadata(existing_ancestor(out))
        .ok()
        .map(|m| m.dev());
    let mut plan = Plan {
        items: Vec::new(),
        needed: if pack { 1024 } else { 0 },
        bytes: 0,
    };
    for (name, source) in files {
        let what = match source {
            Source::Bytes(b) => What::Bytes(b, sparse::of_bytes(b)),
            Source::Record(path) => {
                let file = fsio::open_regular(path)?;
                let m = file.metadata().map_err(|e| Error::io(path, e))?;
                let linked = !pack && Some(m.dev()) == here;
                let runs = (!linked).then(|| sparse::of_file(&file, m.len()));
                plan.bytes += m.len();
                What::Record {
                    path,
                    len: m.len(),
                    runs,
                }
            }
        };
        let runs = match &what {
            What::Bytes(b, runs) => {
                plan.bytes += b.len() as u64;
                Some(runs)
            }
            What::Record { runs, .. } => runs.as_ref(),
        };
        plan.needed += match (runs, pack) {
            (Some(r), true) => sparse::tar_size(r),
            (Some(r), false) => r.data().div_ceil(sparse::GRAIN) * sparse::GRAIN,
            (None, _) => 0,
        };
        plan.items.push((name, what));
    }
    Ok(plan)
}

impl Plan<'_> {
    /// Everything written (bytes of data, holes not counted), for the progress lines.
    fn to_write(&self) -> u64 {
        self.items
            .iter()
            .map(|(_, w)| match w {
                What::Bytes(_, r) | What::Record { runs: Some(r), .. } => r.data(),
                What::Record { runs: None, .. } => 0,
            })
            .sum()
    }
}

/// Place every data file in `out/data/`.
pub fn place(out: &Path, plan: Plan) -> Result<Placed> {
    let dir = subdir(out, DATA_DIR)?;
    let mut placed = Placed {
        bytes: plan.bytes,
        ..Placed::default()
    };
    let mut progress = Progress::new(plan.to_write());
    for (name, what) in plan.items {
        let dst = dir.join(name);
        match what {
            What::Bytes(b, runs) => {
                write_runs(&dst, Src::Bytes(b), &runs, &mut progress)?;
                placed.written += 1;
                placed.stored += runs.data();
            }
            What::Record { path, len, runs } => {
                if runs.is_none() && link(path, &dst)? {
                    placed.linked += 1;
                    continue;
                }
                let meant_to_link = runs.is_none();
                let (file, runs) = reopen(path, len)?;
                if meant_to_link {
                    // Not linked after all (linking not allowed): copied, if it fits.
                    sparse::check_space(&dir, runs.data(), sparse::free_space(&dir))?;
                }
                remove(&dst)?;
                write_runs(&dst, Src::File(&file, path), &runs, &mut progress)?;
                placed.copied += 1;
                placed.stored += runs.data();
            }
        }
    }
    Ok(placed)
}

/// A record file measured by [`plan`], opened to be written, with its data runs as they are
/// now; one whose length changed since is refused (its copy would not be what was measured).
fn reopen(path: &Path, len: u64) -> Result<(File, Runs)> {
    let file = fsio::open_regular(path)?;
    let now = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if now != len {
        return Err(Error::format(
            path,
            format!("changed while the reproducer was written ({len} bytes, now {now})"),
        ));
    }
    let runs = sparse::of_file(&file, len);
    Ok((file, runs))
}

/// Write `runs` of `src` at `dst`, atomically (renamed into place: a link there is replaced,
/// never followed), holes kept.
fn write_runs(dst: &Path, src: Src, runs: &sparse::Runs, progress: &mut Progress) -> Result<()> {
    let to = AtomicWriter::create(dst)?;
    sparse::copy(src, runs, to.file(), dst, progress)?;
    to.commit().map_err(Into::into)
}

/// Whatever is at `dst` (an earlier reproducer's file, a link) is replaced, not written into.
fn remove(dst: &Path) -> Result<()> {
    match std::fs::remove_file(dst) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(dst, e)),
        _ => Ok(()),
    }
}

/// Hard-link `src` (a regular file; links followed to it) at `dst`. Whether it was linked
/// (not when linking is not allowed: the caller copies).
fn link(src: &Path, dst: &Path) -> Result<bool> {
    fsio::regular_metadata(src)?;
    let real = std::fs::canonicalize(src).map_err(|e| Error::io(src, e))?;
    remove(dst)?;
    Ok(std::fs::hard_link(&real, dst).is_ok())
}

/// `--pack`: every data file in one tar archive (`data/<name>` inside), written atomically;
/// holes are kept as GNU sparse entries.
pub fn pack(out: &Path, plan: Plan) -> Result<Placed> {
    let path = out.join(PACK_FILE);
    let mut placed = Placed {
        bytes: plan.bytes,
        ..Placed::default()
    };
    let mut progress = Progress::new(plan.to_write());
    let w = AtomicWriter::create(&path)?;
    let mut buf = std::io::BufWriter::with_capacity(1 << 20, w);
    let named = |e: Error| match e {
        // The entry's name stands for the archive in a write error: say the archive.
        Error::Record(rr_format::Error::Io { source, .. }) => Error::io(&path, source),
        e => e,
    };
    for (name, what) in plan.items {
        let inner = format!("{DATA_DIR}/{name}");
        let mut opened = None;
        let (src, runs) = match what {
            What::Bytes(b, runs) => (Src::Bytes(b), runs),
            What::Record { path, len, .. } => {
                let (file, runs) = reopen(path, len)?;
                (Src::File(opened.insert(file), path), runs)
            }
        };
        sparse::append_tar(&mut buf, &inner, src, &runs, &mut progress).map_err(named)?;
        placed.written += 1;
        placed.stored += runs.data();
    }
    sparse::finish_tar(&mut buf).map_err(|e| Error::io(&path, e))?;
    let mut w = buf
        .into_inner()
        .map_err(|e| Error::io(&path, e.into_error()))?;
    w.flush().map_err(|e| Error::io(&path, e))?;
    w.commit()?;
    Ok(placed)
}
