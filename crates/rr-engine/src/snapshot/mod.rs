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
            let mut opened = Vec::with_capacity(pieces.len());
            for p in &pieces {
                if let Some(path) = &p.blob {
                    let file = rr_format::fsio::open_regular(path)?;
                    opened.push((p.offset, p.size, file, path.clone()));
                }
            }
            Snapshot::compose(&label, len, opened)
        }
    }
}

enum View {
    Empty,
    Mapped(Mmap),
    Composed(composed::Region),
}

pub struct Snapshot {
    /// The file, or for a composed snapshot the name it would have as one file (in messages).
    path: PathBuf,
    view: View,
    /// The files behind the view and the lengths they had when mapped.
    files: Vec<(File, u64)>,
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
                files: vec![(file, 0)],
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
            files: vec![(file, meta.len())],
            slot,
        })
    }

    /// A snapshot of `len` bytes made of files placed at offsets (`(offset, size, file, path)`).
    fn compose(label: &Path, len: u64, pieces: Vec<(u64, u64, File, PathBuf)>) -> Result<Snapshot> {
        let size = usize::try_from(len)
            .map_err(|_| Error::format(label, "is larger than this machine's address space"))?;
        if size == 0 {
            return Ok(Snapshot {
                path: label.to_path_buf(),
                view: View::Empty,
                files: vec![],
                slot: None,
            });
        }
        guard::install();
        let refs: Vec<(u64, u64, &File)> = pieces.iter().map(|(o, s, f, _)| (*o, *s, f)).collect();
        let region = composed::Region::build(size, &refs).map_err(|e| Error::io(label, e))?;
        let slot = guard::register(region.start(), region.map_len());
        Ok(Snapshot {
            path: label.to_path_buf(),
            view: View::Composed(region),
            files: pieces.into_iter().map(|(_, s, f, _)| (f, s)).collect(),
            slot,
        })
    }

    /// Whether the files still have the lengths they had when mapped (an `fstat` each; cheap
    /// enough to ask on every frame). A shorter file means views built from it are stale.
    pub fn still_whole(&self) -> bool {
        self.files
            .iter()
            .all(|(f, len)| f.metadata().map(|m| m.len()).unwrap_or(0) >= *len)
            && self.slot.as_ref().is_none_or(|s| !s.truncated())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The one file behind a plain mapping (for `SEEK_DATA` / `SEEK_HOLE`, which maps can't
    /// answer); None for a snapshot composed of blobs or an empty one.
    pub fn file(&self) -> Option<&File> {
        match (&self.view, self.files.as_slice()) {
            (View::Mapped(_), [(f, _)]) => Some(f),
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
