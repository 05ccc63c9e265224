//! What comparisons read: an in-memory buffer (replay verification), or a memory-mapped
//! snapshot read window by window (multi-GiB files with bounded resident memory), which also
//! says where its holes are.

use crate::error::{Error, Result};
use crate::snapshot::Snapshot;

/// Bytes to compare.
pub trait Source: Sync {
    fn size(&self) -> u64;
    /// Up to `len` bytes at `offset` (shorter at the end).
    fn window(&self, offset: u64, len: usize) -> &[u8];
    /// The caller is about to read from start to end (a mapping reads further ahead).
    fn advise_sequential(&self) {}
    /// The caller is done with these bytes (a mapping may drop its pages).
    fn release(&self, _offset: u64, _len: u64) {}
    /// Err when the bytes read so far cannot be trusted (a file truncated under its mapping).
    fn intact(&self) -> Result<()> {
        Ok(())
    }
    /// Where data starts at or after `offset`; `None` when only a hole (zeros) follows. Reading
    /// a hole is not needed: it holds zeros. Sources without holes answer `offset`.
    fn next_data(&self, offset: u64) -> Option<u64> {
        (offset < self.size()).then_some(offset)
    }
    /// Where the data run holding `offset` ends (the size when it runs to the end).
    fn next_hole(&self, _offset: u64) -> u64 {
        self.size()
    }
}

impl Source for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn window(&self, offset: u64, len: usize) -> &[u8] {
        let start = (offset.min(self.len() as u64)) as usize;
        &self[start..start.saturating_add(len).min(self.len())]
    }
}

/// Shared snapshots (the explorer's views hold them in `Arc`s) compare as themselves.
impl<S: Source + Send + ?Sized> Source for std::sync::Arc<S> {
    fn size(&self) -> u64 {
        (**self).size()
    }
    fn window(&self, offset: u64, len: usize) -> &[u8] {
        (**self).window(offset, len)
    }
    fn advise_sequential(&self) {
        (**self).advise_sequential()
    }
    fn release(&self, offset: u64, len: u64) {
        (**self).release(offset, len)
    }
    fn intact(&self) -> Result<()> {
        (**self).intact()
    }
    fn next_data(&self, offset: u64) -> Option<u64> {
        (**self).next_data(offset)
    }
    fn next_hole(&self, offset: u64) -> u64 {
        (**self).next_hole(offset)
    }
}

impl Source for Snapshot {
    fn size(&self) -> u64 {
        self.len()
    }
    fn window(&self, offset: u64, len: usize) -> &[u8] {
        Snapshot::window(self, offset, len)
    }
    fn advise_sequential(&self) {
        Snapshot::advise_sequential(self)
    }
    fn release(&self, offset: u64, len: u64) {
        Snapshot::release(self, offset, len)
    }
    fn intact(&self) -> Result<()> {
        self.check_intact()?;
        // A truncated file's vanished part reads as a hole to SEEK_DATA, so the pages that would
        // raise SIGBUS (and mark the snapshot truncated) are never touched: ask the file.
        if !self.still_whole() {
            return Err(Error::format(
                self.path(),
                "file was truncated while rr-tui had it mapped; comparison results past the new end are invalid",
            ));
        }
        Ok(())
    }
    fn next_data(&self, offset: u64) -> Option<u64> {
        if offset >= self.len() {
            return None;
        }
        // A snapshot composed of blobs knows where its blobs' data lies (asked when mapped).
        if let Some(data) = self.data_ranges() {
            let i = data.partition_point(|&(_, end)| end <= offset);
            return data.get(i).map(|&(start, _)| start.max(offset));
        }
        // SEEK_DATA / SEEK_HOLE (lseek(2)): the file system's own map of a sparse file. A file
        // system without them answers "data here, hole at the end", which is still right.
        let Some(file) = self.file() else {
            return Some(offset);
        };
        rr_format::fsio::next_data(file, offset, self.len())
    }
    fn next_hole(&self, offset: u64) -> u64 {
        if let Some(data) = self.data_ranges() {
            let i = data.partition_point(|&(_, end)| end <= offset);
            return match data.get(i) {
                Some(&(start, end)) if start <= offset => end.min(self.len()),
                _ => offset, // in a hole already
            };
        }
        let Some(file) = self.file() else {
            return self.len();
        };
        match rustix::fs::seek(file, rustix::fs::SeekFrom::Hole(offset)) {
            Ok(at) => at.clamp(offset, self.len()),
            Err(_) => self.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};
    use std::sync::atomic::AtomicBool;

    /// A sparse file of `len` bytes holding `data` at each offset.
    fn sparse(path: &std::path::Path, len: u64, data: &[(u64, &[u8])]) -> Snapshot {
        let mut f = std::fs::File::create(path).unwrap();
        f.set_len(len).unwrap();
        for (at, bytes) in data {
            f.seek(std::io::SeekFrom::Start(*at)).unwrap();
            f.write_all(bytes).unwrap();
        }
        f.sync_all().unwrap();
        Snapshot::open(path).unwrap()
    }

    /// 16 GiB of holes would take over a minute to fault in page by page; skipped, they take
    /// milliseconds. A hole against data compares as zeros.
    #[test]
    fn sparse_files_compare_without_reading_their_holes() {
        let dir = tempfile::tempdir().unwrap();
        let len = 16u64 << 30;
        let (far, end) = (9u64 << 30, len - 4096);
        let a = sparse(
            &dir.path().join("a"),
            len,
            &[(0, &[1; 4096]), (far, &[0; 4096]), (end, &[5; 4096])],
        );
        let b = sparse(
            &dir.path().join("b"),
            len,
            &[(0, &[1; 4096]), (far + 100, &[7, 7]), (end, &[5; 4095])],
        );
        if a.next_data(4096) == Some(4096) {
            eprintln!("this file system does not report holes; the test proves nothing here");
        }
        let t = std::time::Instant::now();
        let out =
            crate::diff::build_index(&a, &b, 8, &AtomicBool::new(false), |_, _, _| {}).unwrap();
        assert_eq!(out.index.ranges, vec![far + 100..far + 102, len - 1..len]);
        assert_eq!(out.index.differing_bytes(), 3);
        assert!(
            t.elapsed().as_secs() < 20,
            "holes were read: {:?}",
            t.elapsed()
        );
    }
}
