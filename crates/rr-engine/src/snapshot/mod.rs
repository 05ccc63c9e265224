//! Memory snapshots as read-only memory maps (never read whole: they can be larger than RAM).
//!
//! A file truncated by another process while mapped would normally kill us with SIGBUS. We
//! register every mapping with [`guard`], whose SIGBUS handler maps zero pages over the missing
//! part of *our* mappings and marks the snapshot truncated; readers call
//! [`Snapshot::check_intact`] after each chunk and report the truncation instead of trusting the
//! zeros. Faults outside our mappings keep the default behaviour.

mod composed;
pub mod guard;

use memmap2::{Mmap, MmapOptions};
use std::fs::File;
use std::path::{Path, PathBuf};

use rr_format::instance::Side;
use rr_format::store::{self, Layout};

use crate::error::{Error, Result};

/// Map one recorded snapshot of an instance, whatever the record's layout: one file (LLVM
/// records, rr-tui format 1) or blobs per segment (format 2), seen as one contiguous mapping.
pub fn open_recorded(
    files: &rr_format::InstanceFiles,
    d: &rr_format::Descriptor,
    side: Side,
) -> Result<Snapshot> {
    match store::layout(files, d, side)? {
        Layout::File(path) => Snapshot::open(&path),
        Layout::Blobs { len, pieces } => {
            // No file of that name exists: name the descriptor and the side (`X.json (recorded
            // input)`) in messages and in diff's output.
            let json = files.json();
            let label = json.with_file_name(format!(
                "{} (recorded {})",
                json.file_name().unwrap_or_default().to_string_lossy(),
                match side {
                    Side::Input => "input",
                    Side::Output => "output",
                }
            ));
            let placed = pieces
                .into_iter()
                .filter_map(|p| Some((p.offset, p.size, p.blob?)))
                .collect();
            Snapshot::compose(&label, len, placed)
        }
    }
}

enum View {
    Empty,
    Mapped(Mmap),
    Composed(composed::Region),
}

/// What the view was made from, to tell whether it still holds (and where a file's data lies).
enum Backing {
    /// One file (kept open for `fstat` and `SEEK_DATA`), with the length it had when mapped.
    File(File, u64),
    /// Blobs, closed once mapped (a recording may have more segments than a process may hold
    /// open files): their paths and lengths, and where their data lies in the snapshot.
    Blobs {
        /// `(offset in the snapshot, path, length)`, by offset; pieces do not overlap.
        blobs: Vec<(u64, PathBuf, u64)>,
        /// Where [`Snapshot::still_whole`] looks next (it looks at a few blobs per call).
        next: std::sync::atomic::AtomicUsize,
        /// Data ranges of the snapshot, sorted and disjoint: the rest reads as zeros.
        data: Vec<(u64, u64)>,
    },
    None,
}

/// Blobs `still_whole` stats per call: a few each frame, all of them within seconds.
const BLOBS_PER_CHECK: usize = 64;
/// Data ranges kept per composed snapshot; a blob fragmented past this is read whole (still
/// right: holes read as zeros), so a hostile blob cannot grow the list without bound.
const MAX_DATA_RANGES: usize = 1 << 20;

pub struct Snapshot {
    /// The file, or for a composed snapshot the name it would have as one file (in messages).
    path: PathBuf,
    view: View,
    backing: Backing,
    slot: Option<guard::Slot>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot({}, {} bytes)", self.path.display(), self.len())
    }
}

impl Snapshot {
    /// Map a snapshot: a regular file only (a FIFO or device is refused without blocking).
    pub fn open(path: &Path) -> Result<Snapshot> {
        let file = rr_format::fsio::open_regular(path)?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        if meta.len() == 0 {
            return Ok(Snapshot {
                path: path.to_path_buf(),
                view: View::Empty,
                backing: Backing::File(file, 0),
                slot: None,
            });
        }
        guard::install();
        // SAFETY: the mapping is read-only and private to this process. Another process may still
        // truncate the file; the SIGBUS guard registered below turns that into a reported error
        // (see the module comment) instead of undefined behaviour for the reader of zeros.
        let map = unsafe { MmapOptions::new().map(&file) }.map_err(|e| Error::io(path, e))?;
        let slot = guard::register(map.as_ptr() as usize, map.len());
        Ok(Snapshot {
            path: path.to_path_buf(),
            view: View::Mapped(map),
            backing: Backing::File(file, meta.len()),
            slot,
        })
    }

    /// A snapshot of `len` bytes made of blob files placed at offsets (`(offset, size, path)`):
    /// each opened, mapped, asked where its data lies, and closed before the next.
    fn compose(label: &Path, len: u64, pieces: Vec<(u64, u64, PathBuf)>) -> Result<Snapshot> {
        let size = usize::try_from(len)
            .map_err(|_| Error::format(label, "is larger than this machine's address space"))?;
        if size == 0 {
            return Ok(Snapshot {
                path: label.to_path_buf(),
                view: View::Empty,
                backing: Backing::None,
                slot: None,
            });
        }
        guard::install();
        let region = composed::Region::zeros(size).map_err(|e| Error::io(label, e))?;
        let mut sorted: Vec<(u64, u64)> = pieces.iter().map(|p| (p.0, p.1)).collect();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0].0 + w[0].1 > w[1].0) {
            return Err(Error::format(
                label,
                "its segments overlap in the snapshot (Offset and Size)",
            ));
        }
        let mut data = Vec::new();
        let mut blobs = Vec::with_capacity(pieces.len());
        for (offset, size, path) in pieces {
            let file = rr_format::fsio::open_regular(&path)?;
            region
                .place(offset, size, &file)
                .map_err(|e| Error::io(&path, e))?;
            data_ranges(&file, offset, size, &mut data);
            blobs.push((offset, path, size));
        }
        blobs.sort_by_key(|b| b.0);
        let slot = guard::register(region.start(), region.map_len());
        Ok(Snapshot {
            path: label.to_path_buf(),
            view: View::Composed(region),
            backing: Backing::Blobs {
                blobs,
                next: Default::default(),
                data,
            },
            slot,
        })
    }

    /// Whether the files still have the lengths they had when mapped (an `fstat`, or a `stat`
    /// of a few blobs in turn; cheap enough to ask on every frame). A shorter file means views
    /// built from it are stale.
    pub fn still_whole(&self) -> bool {
        let files_whole = match &self.backing {
            Backing::File(f, len) => f.metadata().map(|m| m.len()).unwrap_or(0) >= *len,
            Backing::Blobs { blobs, next, .. } if !blobs.is_empty() => {
                let start = next.fetch_add(BLOBS_PER_CHECK, std::sync::atomic::Ordering::Relaxed);
                (0..BLOBS_PER_CHECK.min(blobs.len())).all(|k| {
                    let (_, path, len) = &blobs[(start + k) % blobs.len()];
                    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) >= *len
                })
            }
            _ => true,
        };
        files_whole && self.slot.as_ref().is_none_or(|s| !s.truncated())
    }

    /// Where data lies in a snapshot composed of blobs (sorted, disjoint ranges; the rest reads
    /// as zeros); `None` for one file (ask it: [`Snapshot::file`]).
    pub fn data_ranges(&self) -> Option<&[(u64, u64)]> {
        match &self.backing {
            Backing::Blobs { data, .. } => Some(data),
            _ => None,
        }
    }

    /// Read `dst.len()` bytes at `offset` with file reads instead of through the mapping: a
    /// bulk reader (the loader's threads) gets the page cache at memory speed without a page
    /// fault per 4 KiB. Holes, gaps and bytes past the snapshot read as zeros, as mapped; a
    /// file shorter than when the snapshot was opened is an error naming it.
    pub fn read_at(&self, offset: u64, dst: &mut [u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let end = offset.saturating_add(dst.len() as u64);
        let mut at = offset;
        let read = |file: &File, path: &Path, file_offset: u64, out: &mut [u8]| {
            file.read_exact_at(out, file_offset)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => {
                        Error::format(path, "became shorter while being read")
                    }
                    _ => Error::io(path, e),
                })
        };
        match &self.backing {
            Backing::File(file, len) => {
                let stop = end.min(*len).max(at);
                let n = (stop - at) as usize;
                read(file, &self.path, at, &mut dst[..n])?;
                dst[n..].fill(0);
            }
            Backing::Blobs { blobs, .. } => {
                let first = blobs.partition_point(|b| b.0 + b.2 <= offset);
                for (start, path, size) in &blobs[first..] {
                    if *start >= end {
                        break;
                    }
                    let from = at.max(*start);
                    let to = end.min(start + size);
                    dst[(at - offset) as usize..(from - offset) as usize].fill(0);
                    let file = rr_format::fsio::open_regular(path)?;
                    read(
                        &file,
                        path,
                        from - start,
                        &mut dst[(from - offset) as usize..(to - offset) as usize],
                    )?;
                    at = to;
                }
                dst[(at - offset) as usize..].fill(0);
            }
            Backing::None => dst.fill(0),
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The one file behind a plain mapping (for `SEEK_DATA` / `SEEK_HOLE`, which maps can't
    /// answer); None for a snapshot composed of blobs or an empty one.
    pub fn file(&self) -> Option<&File> {
        match (&self.view, &self.backing) {
            (View::Mapped(_), Backing::File(f, _)) => Some(f),
            _ => None,
        }
    }
    pub fn len(&self) -> u64 {
        self.bytes().len() as u64
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn bytes(&self) -> &[u8] {
        match &self.view {
            View::Empty => &[],
            View::Mapped(m) => m,
            View::Composed(r) => r.bytes(),
        }
    }

    /// Up to `len` bytes from `offset` (shorter at the end of the file; empty past it).
    pub fn window(&self, offset: u64, len: usize) -> &[u8] {
        let b = self.bytes();
        let start = (offset.min(b.len() as u64)) as usize;
        &b[start..(start + len).min(b.len())]
    }

    /// Err when the file was truncated while mapped (the bytes read since are zeros, not data).
    pub fn check_intact(&self) -> Result<()> {
        match &self.slot {
            Some(s) if s.truncated() => Err(Error::format(
                &self.path,
                "file was truncated while rr-tui had it mapped; comparison results past the new end are invalid",
            )),
            _ => Ok(()),
        }
    }

    /// Tell the kernel we are done with a range, so resident memory stays bounded while
    /// scanning files larger than RAM (the page cache keeps the data; the mapping drops it).
    pub fn release(&self, offset: u64, len: u64) {
        if let View::Composed(r) = &self.view {
            r.release(offset as usize, len as usize);
            return;
        }
        if let View::Mapped(m) = &self.view {
            let page = 4096u64;
            let start = offset / page * page;
            let end = (offset + len).min(m.len() as u64);
            if end > start {
                // SAFETY: the mapping is a read-only, file-backed map; MADV_DONTNEED only drops
                // our page-table entries, and later reads fault the same file contents back in.
                let _ = unsafe {
                    m.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        start as usize,
                        (end - start) as usize,
                    )
                };
            }
        }
    }

    pub fn advise_sequential(&self) {
        if let View::Mapped(m) = &self.view {
            let _ = m.advise(memmap2::Advice::Sequential);
        }
    }
}

/// Append the data ranges of `size` bytes of `file` placed at `offset` (SEEK_DATA / SEEK_HOLE;
/// a file system that cannot say is all data), merging with the previous range when adjacent.
fn data_ranges(file: &File, offset: u64, size: u64, out: &mut Vec<(u64, u64)>) {
    let push = |start: u64, end: u64, out: &mut Vec<(u64, u64)>| match out.last_mut() {
        Some(last) if last.1 >= start => last.1 = last.1.max(end),
        _ => out.push((start, end)),
    };
    let mut at = 0u64;
    while at < size {
        if out.len() >= MAX_DATA_RANGES {
            push(offset + at, offset + size, out); // too fragmented: the rest is read
            return;
        }
        let Some(start) = rr_format::fsio::next_data(file, at, size) else {
            return; // only a hole follows
        };
        let end = rr_format::fsio::next_hole(file, start, size);
        push(offset + start, offset + end, out);
        at = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::source::Source;

    fn open_fds() -> usize {
        std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
    }

    /// 3 000 blobs compose one snapshot holding no descriptor of theirs (a recording can have
    /// more segments than a process may open files), and read back in place.
    #[test]
    fn many_blobs_hold_no_open_files() {
        let dir = tempfile::tempdir().unwrap();
        let n = 3000u64;
        let pieces: Vec<(u64, u64, PathBuf)> = (0..n)
            .map(|i| {
                let p = dir.path().join(format!("b{i}"));
                std::fs::write(&p, [i as u8; 16]).unwrap();
                (i * 4096, 16, p)
            })
            .collect();
        let before = open_fds();
        let s = Snapshot::compose(Path::new("x"), n * 4096, pieces).unwrap();
        assert!(
            open_fds() <= before + 1,
            "{} files open",
            open_fds() - before
        );
        assert_eq!(
            s.window(4096 * 7, 17),
            &[[7u8; 16].as_slice(), &[0]].concat()
        );
        assert!(s.still_whole());
        std::fs::write(dir.path().join("b5"), [5u8; 8]).unwrap();
        // Blobs are looked at a few per call: within a pass over all of them, the shortened one.
        let calls = (n as usize).div_ceil(BLOBS_PER_CHECK);
        assert!(
            (0..calls).any(|_| !s.still_whole()),
            "the shortened blob is noticed"
        );
    }

    /// File reads give the bytes the mapping shows: blobs at their offsets, zeros in gaps and
    /// past the end, pieces straddling blobs; a file that shrank is an error naming it; pieces
    /// that overlap are refused when composing.
    #[test]
    fn reads_match_the_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(
            &a,
            (0..5000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>(),
        )
        .unwrap();
        std::fs::write(&b, vec![7u8; 4096]).unwrap();
        let s = Snapshot::compose(
            Path::new("x"),
            16384,
            vec![(8192, 4096, b.clone()), (0, 5000, a.clone())],
        )
        .unwrap();
        for (off, len) in [
            (0, 16384),
            (4000, 6000),
            (5000, 100),
            (12000, 4384),
            (8191, 2),
        ] {
            let mut got = vec![1u8; len];
            s.read_at(off as u64, &mut got).unwrap();
            assert_eq!(got, s.bytes()[off..off + len], "{off}+{len}");
        }
        let mut past = vec![1u8; 64];
        s.read_at(16384, &mut past).unwrap();
        assert!(past.iter().all(|&x| x == 0), "past the end reads as zeros");
        std::fs::write(&b, [7u8; 100]).unwrap();
        let mut got = vec![0u8; 4096];
        let e = s.read_at(8192, &mut got).unwrap_err().to_string();
        assert!(e.contains("became shorter") && e.contains("/b"), "{e}");
        let overlapping = Snapshot::compose(
            Path::new("y"),
            16384,
            vec![(0, 5000, a.clone()), (4096, 100, a)],
        );
        assert!(overlapping.unwrap_err().to_string().contains("overlap"));
    }

    /// A sparse blob's holes are known without reading them: the data ranges are the blob's
    /// data, placed at the segment's offset.
    #[test]
    fn composed_snapshots_know_their_holes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sparse");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(64 << 20).unwrap();
        std::os::unix::fs::FileExt::write_at(&f, &[1; 4096], 32 << 20).unwrap();
        drop(f);
        let s = Snapshot::compose(Path::new("x"), 8192 + (64 << 20), vec![(8192, 64 << 20, p)])
            .unwrap();
        let data = s.data_ranges().unwrap().to_vec();
        if data == [(8192, 8192 + (64 << 20))] {
            eprintln!("this file system does not report holes; the test proves nothing here");
            return;
        }
        assert_eq!(data, [(8192 + (32 << 20), 8192 + (32 << 20) + 4096)]);
        assert_eq!(s.next_data(0), Some(8192 + (32 << 20)));
        assert_eq!(s.next_hole(8192 + (32 << 20)), 8192 + (32 << 20) + 4096);
        assert_eq!(s.next_data(8192 + (33 << 20)), None);
    }
}
