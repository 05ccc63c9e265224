//! Recorded data written without its holes: a segment of GiB that the record holds as a sparse
//! file (a few KB on disk) stays a few KB in the reproducer, copied or packed. A file's data
//! runs come from the file system (SEEK_DATA/SEEK_HOLE); a buffer's are its blocks that are not
//! all zeros. Before anything is written, the bytes that will really be written are compared
//! with the space free on the destination's file system.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use rr_format::fsio;
use rr_format::text::{human, visible_path};

use crate::error::{Error, Result};

/// Data runs start and end on this grain (but the last, at the end): file system blocks are
/// multiples of it, and a tar reader wants every run but the last a multiple of 512 bytes.
pub const GRAIN: u64 = 4096;
/// Runs kept per file: beyond, runs close to each other are merged (the gaps between them are
/// written as zeros), so a file of millions of alternating blocks costs no memory.
const MAX_RUNS: usize = 1 << 14;
/// Copies larger than this report their progress on stderr.
pub const PROGRESS_ABOVE: u64 = 256 << 20;
const CHUNK: usize = 1 << 20;

/// Where the data of a file or a buffer of `len` bytes is: `(offset, length)` runs in order,
/// zeros (holes) between and after them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs {
    pub len: u64,
    pub runs: Vec<(u64, u64)>,
    /// Gaps this short or shorter are merged into the runs around them.
    gap: u64,
}

impl Runs {
    fn new(len: u64) -> Runs {
        Runs {
            len,
            runs: Vec::new(),
            gap: 0,
        }
    }

    /// The whole of `len` bytes as data.
    #[cfg(test)]
    pub fn dense(len: u64) -> Runs {
        let mut r = Runs::new(len);
        r.push(0, len);
        r
    }

    /// The bytes of data (what a copy writes).
    pub fn data(&self) -> u64 {
        self.runs.iter().map(|r| r.1).sum()
    }

    /// Whether some of the bytes are holes.
    pub fn is_sparse(&self) -> bool {
        self.data() < self.len
    }

    /// Add data `[at, at + n)`, widened to the grain (and cut at the end).
    fn push(&mut self, at: u64, n: u64) {
        if n == 0 {
            return;
        }
        let start = at / GRAIN * GRAIN;
        let end = at
            .saturating_add(n)
            .div_ceil(GRAIN)
            .saturating_mul(GRAIN)
            .min(self.len);
        match self.runs.last_mut() {
            Some((s, l)) if start <= (*s + *l).saturating_add(self.gap) => {
                *l = end.max(*s + *l) - *s;
            }
            _ => self.runs.push((start, end - start)),
        }
        if self.runs.len() > MAX_RUNS {
            self.merge();
        }
    }

    /// Merge runs separated by short gaps until at most half of [`MAX_RUNS`] remain.
    fn merge(&mut self) {
        while self.runs.len() > MAX_RUNS / 2 {
            self.gap = (self.gap * 2).max(GRAIN * 16);
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.runs.len());
            for &(s, l) in &self.runs {
                match merged.last_mut() {
                    Some((ms, ml)) if s <= *ms + *ml + self.gap => *ml = s + l - *ms,
                    _ => merged.push((s, l)),
                }
            }
            self.runs = merged;
        }
    }
}

/// The data runs of `file` (`len` bytes), as its file system maps them.
pub fn of_file(file: &File, len: u64) -> Runs {
    let mut r = Runs::new(len);
    let mut at = 0;
    while at < len {
        let Some(start) = fsio::next_data(file, at, len) else {
            break;
        };
        let end = fsio::next_hole(file, start, len);
        r.push(start, end - start);
        at = end.max(start + 1);
    }
    r
}

/// The runs of `bytes` that are not all zeros, block by block.
pub fn of_bytes(bytes: &[u8]) -> Runs {
    let mut r = Runs::new(bytes.len() as u64);
    for (i, block) in bytes.chunks(GRAIN as usize).enumerate() {
        if block.iter().any(|&b| b != 0) {
            r.push(i as u64 * GRAIN, block.len() as u64);
        }
    }
    r
}

/// Where the bytes come from.
#[derive(Clone, Copy)]
pub enum Src<'a> {
    File(&'a File, &'a Path),
    Bytes(&'a [u8]),
}

impl Src<'_> {
    /// Fill `buf` with the bytes at `at`; a file that shrank since its runs were taken is an
    /// error naming it.
    fn read(&self, at: u64, buf: &mut [u8]) -> Result<()> {
        match *self {
            Src::Bytes(b) => {
                let s = at as usize;
                buf.copy_from_slice(&b[s..s + buf.len()]);
                Ok(())
            }
            Src::File(f, path) => f.read_exact_at(buf, at).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    Error::format(path, "shrank while it was being copied: refused")
                } else {
                    Error::io(path, e)
                }
            }),
        }
    }
}

/// What large copies have done, said on stderr every [`PROGRESS_ABOVE`] bytes.
pub struct Progress {
    total: u64,
    done: u64,
    said: u64,
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        Progress {
            total,
            done: 0,
            said: 0,
        }
    }

    fn add(&mut self, n: u64) {
        if let Some(line) = self.step(n) {
            eprintln!("{line}");
        }
    }

    /// Count `n` more bytes written: a line to say when another [`PROGRESS_ABOVE`] bytes of a
    /// copy larger than that are done.
    fn step(&mut self, n: u64) -> Option<String> {
        self.done += n;
        if self.total <= PROGRESS_ABOVE || self.done - self.said < PROGRESS_ABOVE {
            return None;
        }
        self.said = self.done;
        Some(format!(
            "repro: {} of {} of data written",
            human(self.done),
            human(self.total)
        ))
    }
}

/// Write the runs of `src` into `dst` (a new, empty file) at their offsets and give `dst`
/// its full length: the holes stay holes.
pub fn copy(src: Src, runs: &Runs, dst: &File, dst_path: &Path, p: &mut Progress) -> Result<()> {
    let mut buf = vec![0u8; CHUNK.min(runs.data() as usize)];
    for &(start, len) in &runs.runs {
        let mut at = start;
        while at < start + len {
            let n = ((start + len - at) as usize).min(buf.len());
            src.read(at, &mut buf[..n])?;
            dst.write_all_at(&buf[..n], at)
                .map_err(|e| Error::io(dst_path, e))?;
            p.add(n as u64);
            at += n as u64;
        }
    }
    dst.set_len(runs.len).map_err(|e| Error::io(dst_path, e))
}

const BLOCK: u64 = 512;

/// The bytes a tar entry of these runs takes (header, sparse map, data, padding).
pub fn tar_size(runs: &Runs) -> u64 {
    let map = if runs.is_sparse() {
        let entries = runs.runs.len() as u64 + 1;
        entries.saturating_sub(4).div_ceil(21) * BLOCK
    } else {
        0
    };
    BLOCK + map + runs.data().div_ceil(BLOCK) * BLOCK
}

/// Append `name` (the runs of `src`) to a tar archive: a regular entry when there is no hole,
/// a GNU sparse entry (`S`, which GNU tar, bsdtar and the tar crate unpack) otherwise.
pub fn append_tar(
    w: &mut impl Write,
    name: &str,
    src: Src,
    runs: &Runs,
    p: &mut Progress,
) -> Result<()> {
    let io = |e: std::io::Error| Error::invalid(format!("{name}: {e}"));
    let mut header = tar::Header::new_gnu();
    header.set_path(name).map_err(io)?;
    header.set_mode(0o644);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    let sparse = runs.is_sparse();
    // The map, ended by a run of no bytes at the end (GNU tar's way of keeping a final hole).
    let mut map = runs.runs.clone();
    if sparse {
        header.set_entry_type(tar::EntryType::GNUSparse);
        header.set_size(runs.data());
        map.push((runs.len, 0));
        let gnu = header.as_gnu_mut().expect("a GNU header");
        gnu.set_real_size(runs.len);
        for (&(off, len), slot) in map.iter().zip(gnu.sparse.iter_mut()) {
            slot.set_offset(off);
            slot.set_length(len);
        }
        gnu.set_is_extended(map.len() > gnu.sparse.len());
    } else {
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(runs.len);
    }
    header.set_cksum();
    let out = |e| Error::io(Path::new(name), e);
    w.write_all(header.as_bytes()).map_err(out)?;
    if sparse {
        let mut rest = map.iter().skip(4).peekable();
        while rest.peek().is_some() {
            let mut ext = tar::GnuExtSparseHeader::new();
            for slot in ext.sparse.iter_mut() {
                let Some(&(off, len)) = rest.next() else {
                    break;
                };
                slot.set_offset(off);
                slot.set_length(len);
            }
            ext.set_is_extended(rest.peek().is_some());
            w.write_all(ext.as_bytes()).map_err(out)?;
        }
    }
    let mut buf = vec![0u8; CHUNK.min(runs.data() as usize)];
    for &(start, len) in &runs.runs {
        let mut at = start;
        while at < start + len {
            let n = ((start + len - at) as usize).min(buf.len());
            src.read(at, &mut buf[..n])?;
            w.write_all(&buf[..n]).map_err(out)?;
            p.add(n as u64);
            at += n as u64;
        }
    }
    let pad = (BLOCK - runs.data() % BLOCK) % BLOCK;
    w.write_all(&vec![0u8; pad as usize]).map_err(out)
}

/// The end of a tar archive: two zero blocks.
pub fn finish_tar(w: &mut impl Write) -> std::io::Result<()> {
    w.write_all(&[0u8; 2 * BLOCK as usize])
}

/// The space free to this user on the file system of `dir` (statvfs).
pub fn free_space(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Refuse, before anything is written, a reproducer that needs more than the file system of
/// `dir` has free: one line with both amounts (exit status 1: the machine's fault, not the
/// record's).
pub fn check_space(dir: &Path, needed: u64, free: Option<u64>) -> Result<()> {
    match free {
        Some(free) if needed > free => Err(Error::Failed(format!(
            "{}: the reproducer needs {} ({needed} bytes) there and its file system has {} \
             ({free} bytes) free: nothing written",
            visible_path(dir),
            human(needed),
            human(free)
        ))),
        _ => Ok(()),
    }
}

/// A write that failed for want of space (or quota) is the machine's failure, not the
/// input's: exit status 1, the one line still naming the file.
pub fn environment(e: Error) -> Error {
    // By kind: an error rewritten on its way (the temporary file's name taken out) keeps its
    // kind, not its number.
    let full = |s: &std::io::Error| {
        matches!(
            s.kind(),
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
        )
    };
    match e {
        Error::Record(rr_format::Error::Io { ref source, .. }) if full(source) => {
            Error::Failed(e.to_string())
        }
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn runs_of_a_buffer_skip_zero_blocks_and_end_at_its_end() {
        let mut b = vec![0u8; 5 * GRAIN as usize + 10];
        b[1] = 1;
        b[3 * GRAIN as usize + 7] = 2;
        b[5 * GRAIN as usize + 9] = 3;
        let r = of_bytes(&b);
        assert_eq!(r.runs, [(0, GRAIN), (3 * GRAIN, GRAIN), (5 * GRAIN, 10)]);
        assert_eq!(r.data(), 2 * GRAIN + 10);
        assert!(of_bytes(&[0u8; 100]).runs.is_empty());
    }

    #[test]
    fn large_copies_say_their_progress_every_256_mib() {
        let mut small = Progress::new(PROGRESS_ABOVE);
        assert_eq!(small.step(PROGRESS_ABOVE), None, "not a large copy");
        let mut p = Progress::new(3 * PROGRESS_ABOVE);
        assert_eq!(p.step(PROGRESS_ABOVE - 1), None);
        let line = p.step(1).expect("256 MiB done");
        assert!(line.starts_with("repro: 256 MiB of 768 MiB"), "{line}");
        assert_eq!(p.step(PROGRESS_ABOVE / 2), None);
        assert!(p.step(PROGRESS_ABOVE / 2).is_some());
    }

    #[test]
    fn millions_of_runs_are_merged_to_a_bounded_map() {
        let mut r = Runs::new(1 << 40);
        for i in 0..1_000_000u64 {
            r.push(i * 2 * GRAIN, GRAIN);
        }
        assert!(r.runs.len() <= MAX_RUNS, "{}", r.runs.len());
        // Every byte of data is still inside a run.
        let covered = |at: u64| r.runs.iter().any(|&(s, l)| s <= at && at < s + l);
        assert!(covered(0) && covered(999_999 * 2 * GRAIN));
    }

    #[test]
    fn a_sparse_tar_entry_unpacks_to_the_same_bytes() {
        // 30 runs: the map needs two extension blocks after the header.
        let mut b = vec![0u8; 64 * GRAIN as usize + 100];
        for i in 0..30 {
            b[i * 2 * GRAIN as usize + 5] = i as u8 + 1;
        }
        let r = of_bytes(&b);
        assert_eq!(r.runs.len(), 30);
        let mut tar = Vec::new();
        let mut p = Progress::new(0);
        append_tar(&mut tar, "data/x", Src::Bytes(&b), &r, &mut p).unwrap();
        append_tar(
            &mut tar,
            "data/y",
            Src::Bytes(b"abc"),
            &Runs::dense(3),
            &mut p,
        )
        .unwrap();
        finish_tar(&mut tar).unwrap();
        assert_eq!(
            tar.len() as u64,
            tar_size(&r) + tar_size(&Runs::dense(3)) + 1024
        );
        assert!(tar.len() < 40 * GRAIN as usize, "holes are not stored");
        let mut a = tar::Archive::new(&tar[..]);
        let mut got = Vec::new();
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let mut v = Vec::new();
            e.read_to_end(&mut v).unwrap();
            got.push((e.path().unwrap().display().to_string(), v));
        }
        assert_eq!(got[0], ("data/x".to_string(), b.clone()));
        assert_eq!(got[1], ("data/y".to_string(), b"abc".to_vec()));
    }

    #[test]
    fn too_little_space_is_refused_with_both_amounts_and_a_full_disk_exits_1() {
        let e = check_space(Path::new("/o"), 5 << 30, Some(1 << 20)).unwrap_err();
        let said = e.to_string();
        assert!(
            said.contains("GiB (5368709120 bytes)") && said.contains("MiB (1048576 bytes) free"),
            "{said}"
        );
        assert_eq!(e.exit_status(), 1);
        assert!(check_space(Path::new("/o"), 10, Some(10)).is_ok());
        let full = Error::io(
            "/o/data/x",
            std::io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error()),
        );
        assert_eq!(full.exit_status(), 2, "the old status");
        let e = environment(full);
        assert_eq!(e.exit_status(), 1);
        assert!(e.to_string().starts_with("/o/data/x: "), "{e}");
        // An error rebuilt from its kind and text alone (as fsio does for temporary files).
        let rebuilt = Error::io(
            "/o/README.txt",
            std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device"),
        );
        assert_eq!(environment(rebuilt).exit_status(), 1);
    }
}
