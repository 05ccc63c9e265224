//! The reproducer's folder and its data: the output folder is checked before anything is
//! written (never through a link, never into a non-empty folder without `--force`); recorded
//! files are hard-linked when on the same file system (no copy of GiB), copied otherwise, or
//! packed into one tar archive.

use std::io::Write;
use std::path::{Path, PathBuf};

use rr_format::fsio::{self, AtomicWriter};
use rr_format::text::visible_path;

use super::model::Source;
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
    pub bytes: u64,
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

/// Place every data file in `out/data/`.
pub fn place(out: &Path, files: &[(String, Source)]) -> Result<Placed> {
    let dir = subdir(out, DATA_DIR)?;
    let mut placed = Placed::default();
    for (name, source) in files {
        let dst = dir.join(name);
        match source {
            Source::Bytes(b) => {
                fsio::write_atomic(&dst, b)?;
                placed.written += 1;
                placed.bytes += b.len() as u64;
            }
            Source::Record(src) => {
                placed.bytes += fsio::regular_len(src)?;
                match link(src, &dst)? {
                    true => placed.linked += 1,
                    false => placed.copied += 1,
                }
            }
        }
    }
    Ok(placed)
}

/// Hard-link `src` (a regular file; links followed to it) at `dst`; copy when the file
/// systems differ or linking is not allowed. Whether it was linked.
fn link(src: &Path, dst: &Path) -> Result<bool> {
    fsio::regular_metadata(src)?;
    let real = std::fs::canonicalize(src).map_err(|e| Error::io(src, e))?;
    // Whatever is at `dst` (an earlier reproducer's file, a link) is replaced, not written into.
    match std::fs::remove_file(dst) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(dst, e)),
        _ => {}
    }
    if std::fs::hard_link(&real, dst).is_ok() {
        return Ok(true);
    }
    let mut from = fsio::open_regular(&real)?;
    let mut to = AtomicWriter::create(dst)?;
    std::io::copy(&mut from, &mut to).map_err(|e| Error::io(dst, e))?;
    to.commit()?;
    Ok(false)
}

/// `--pack`: every data file in one tar archive (`data/<name>` inside), written atomically.
pub fn pack(out: &Path, files: &[(String, Source)]) -> Result<Placed> {
    let path = out.join(PACK_FILE);
    let mut placed = Placed::default();
    let mut w = AtomicWriter::create(&path)?;
    {
        let mut tar = tar::Builder::new(&mut w);
        tar.mode(tar::HeaderMode::Deterministic);
        for (name, source) in files {
            let inner = format!("{DATA_DIR}/{name}");
            let mut header = tar::Header::new_ustar();
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            let io = |e| Error::io(&path, e);
            match source {
                Source::Bytes(b) => {
                    header.set_size(b.len() as u64);
                    tar.append_data(&mut header, &inner, b.as_slice())
                        .map_err(io)?;
                    placed.bytes += b.len() as u64;
                }
                Source::Record(src) => {
                    let file = fsio::open_regular(src)?;
                    let len = file.metadata().map_err(|e| Error::io(src, e))?.len();
                    header.set_size(len);
                    tar.append_data(
                        &mut header,
                        &inner,
                        Exactly {
                            inner: file,
                            left: len,
                        },
                    )
                    .map_err(io)?;
                    placed.bytes += len;
                }
            }
            placed.written += 1;
        }
        tar.finish().map_err(|e| Error::io(&path, e))?;
    }
    w.flush().map_err(|e| Error::io(&path, e))?;
    w.commit()?;
    Ok(placed)
}

/// A file read as exactly the length its tar header says: one that grows meanwhile is cut
/// there, one that shrinks is an error (tar would otherwise pad a short entry silently and
/// every entry after it would be read from the wrong place).
struct Exactly<R> {
    inner: R,
    left: u64,
}

impl<R: std::io::Read> std::io::Read for Exactly<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file shrank while it was being packed",
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::Exactly;
    use std::io::Read;

    #[test]
    fn a_packed_file_is_read_as_long_as_its_header_says() {
        let mut out = Vec::new();
        let longer = Exactly {
            inner: &b"abcdef"[..],
            left: 4,
        };
        std::io::BufReader::new(longer)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(
            out, b"abcd",
            "a file that grew is cut at its header's length"
        );
        let shorter = Exactly {
            inner: &b"ab"[..],
            left: 4,
        };
        let err = std::io::BufReader::new(shorter)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    }
}
