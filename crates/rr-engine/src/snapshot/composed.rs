//! A snapshot stored as blobs (rr-tui format 2) seen as one contiguous read-only mapping: an
//! anonymous zero region of the snapshot's length with each segment's blob file mapped over it
//! at the segment's offset (offsets are 4 KiB-aligned, so each blob maps in place). Readers see
//! the same bytes they would see in one file; holes and the gaps between segments read as
//! zeros, and nothing is copied.

use std::fs::File;
use std::os::unix::io::AsRawFd;

const PAGE: usize = 4096;

pub struct Region {
    ptr: *mut u8,
    len: usize,
    map_len: usize,
}

// SAFETY: the region is read-only memory owned by this value for its whole life.
unsafe impl Send for Region {}
// SAFETY: as above: shared references only ever read.
unsafe impl Sync for Region {}

impl Region {
    /// Reserve `len` bytes reading as zeros; [`Region::place`] maps files into them.
    pub fn zeros(len: usize) -> std::io::Result<Region> {
        let map_len = len.div_ceil(PAGE).max(1) * PAGE;
        // SAFETY: a fresh private anonymous read-only mapping chosen by the kernel; it reserves
        // no swap (MAP_NORESERVE) and reads as zeros.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Region {
            ptr: base as *mut u8,
            len,
            map_len,
        })
    }

    /// Map `size` bytes of `file` at `offset` (a multiple of the page size; `size` at most the
    /// file's length; pieces do not overlap). The mapping keeps the file's pages reachable after
    /// the file is closed, so callers hold one descriptor at a time however many pieces there are.
    pub fn place(&self, offset: u64, size: u64, file: &File) -> std::io::Result<()> {
        let (Ok(offset), Ok(size)) = (usize::try_from(offset), usize::try_from(size)) else {
            return Err(std::io::Error::other("segment beyond the address space"));
        };
        if size == 0 {
            return Ok(());
        }
        if offset % PAGE != 0 || offset.checked_add(size).is_none_or(|e| e > self.len) {
            return Err(std::io::Error::other(
                "segment offset not page-aligned or beyond the snapshot",
            ));
        }
        // SAFETY: the target range lies inside the anonymous region we created and own (checked
        // above); MAP_FIXED replaces only our own pages with a private read-only mapping of the
        // file. Page tails past the file's end read as zeros.
        let p = unsafe {
            libc::mmap(
                self.ptr.add(offset) as *mut libc::c_void,
                size,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_FIXED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `map_len >= len` readable bytes for the life of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Drop the pages of `[start, start + len)` from the mapping (they fault back on read).
    pub fn release(&self, start: usize, len: usize) {
        let start = start / PAGE * PAGE;
        let end = start.saturating_add(len).min(self.map_len);
        if end > start {
            // SAFETY: the range lies inside our read-only private mapping; MADV_DONTNEED only
            // drops page-table entries, and later reads fault the same contents back in.
            unsafe {
                libc::madvise(
                    self.ptr.add(start) as *mut libc::c_void,
                    end - start,
                    libc::MADV_DONTNEED,
                )
            };
        }
    }

    pub fn start(&self) -> usize {
        self.ptr as usize
    }

    pub fn map_len(&self) -> usize {
        self.map_len
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region mapped in `build` (file pieces included), once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.map_len) };
    }
}
