//! Host copies of snapshots in page-locked memory, filled by parallel `pread`s: the copy engine
//! reads pinned memory at full PCIe speed (55 GB/s measured against 8.7 GB/s pageable).

use cudarc::driver::sys;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::check;
use crate::error::{Error, Result};

pub struct PinnedBuffer {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain host memory owned by this value; access goes through & / &mut.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    pub fn new(len: usize) -> Result<PinnedBuffer> {
        let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
        if len == 0 {
            return Ok(PinnedBuffer {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
            });
        }
        // SAFETY: allocates `len` bytes of page-locked host memory; `p` receives the pointer.
        check(
            unsafe { sys::cuMemHostAlloc(&mut p, len, sys::CU_MEMHOSTALLOC_PORTABLE) },
            || format!("cannot page-lock {len} bytes of host memory"),
        )?;
        Ok(PinnedBuffer {
            ptr: p as *mut u8,
            len,
        })
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` bytes owned by self (or is dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: frees the allocation made in `new`, once.
            unsafe { sys::cuMemFreeHost(self.ptr as *mut std::ffi::c_void) };
        }
    }
}

/// Read a whole file into pinned memory with one `pread` thread per 64 MiB, up to 8 threads.
pub fn load(path: &Path, expected_len: u64) -> Result<PinnedBuffer> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len != expected_len {
        return Err(Error::format(
            path,
            format!("is {len} bytes, expected {expected_len}"),
        ));
    }
    let mut buf = PinnedBuffer::new(len as usize)?;
    let threads = (len.div_ceil(64 << 20) as usize).clamp(1, 8);
    let part = (len as usize).div_ceil(threads).max(1);
    let results: Vec<std::io::Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = buf
            .as_mut_slice()
            .chunks_mut(part)
            .enumerate()
            .map(|(i, chunk)| {
                let f = &file;
                s.spawn(move || f.read_exact_at(chunk, (i * part) as u64))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("reader thread panicked")))
            })
            .collect()
    });
    for r in results {
        r.map_err(|e| Error::io(path, e))?;
    }
    Ok(buf)
}
