//! Host and device buffers. Copies wait for their completion before returning, so no host
//! buffer can be freed or moved while the copy engine still reads it.

use cudarc::driver::{result, sys};
use std::ffi::c_void;

use crate::error::{teardown, Call, CudaError, Result};
use crate::stream::Stream;

/// Copies between host and device go in pieces this large, so the copy engine starts on the
/// first piece while later ones are queued.
pub const COPY_CHUNK: usize = 64 << 20;

/// Page-locked host memory: the copy engine reads it at full PCIe speed (55 GB/s measured on
/// the H200, against 8.7 GB/s from pageable memory).
pub struct PinnedBuffer {
    ptr: *mut u8,
    len: usize,
}

impl PinnedBuffer {
    pub fn new(len: usize) -> Result<PinnedBuffer> {
        if len == 0 {
            return Ok(PinnedBuffer {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
            });
        }
        // SAFETY: allocates `len` bytes of page-locked host memory, freed in Drop.
        let p = unsafe { result::malloc_host(len, sys::CU_MEMHOSTALLOC_PORTABLE) }
            .call("cuMemHostAlloc")
            .map_err(|e| e.context(format!("page-locking {len} bytes of host memory")))?;
        Ok(PinnedBuffer {
            ptr: p as *mut u8,
            len,
        })
    }

    /// A pinned copy of `src` (typically a memory-mapped snapshot), copied by up to 8 threads
    /// so page faults on the source overlap.
    pub fn copy_of(src: &[u8]) -> Result<PinnedBuffer> {
        let mut buf = PinnedBuffer::new(src.len())?;
        let threads = src.len().div_ceil(COPY_CHUNK).clamp(1, 8);
        let part = src.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            for (dst, from) in buf.as_mut_slice().chunks_mut(part).zip(src.chunks(part)) {
                s.spawn(move || dst.copy_from_slice(from));
            }
        });
        Ok(buf)
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` bytes owned by self (or is dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

// SAFETY: the buffer is plain host memory owned by this value; access goes through & / &mut.
unsafe impl Send for PinnedBuffer {}

impl AsRef<[u8]> for PinnedBuffer {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsMut<[u8]> for PinnedBuffer {
    fn as_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: frees the allocation made in `new`, once.
            teardown(unsafe { result::free_host(self.ptr as *mut c_void) }.call("cuMemFreeHost"));
        }
    }
}

/// Plain device memory (`cuMemAlloc`): a pristine copy of the input, an L2 flush buffer.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    len: usize,
}

impl DeviceBuffer {
    pub fn new(len: usize) -> Result<DeviceBuffer> {
        // SAFETY: plain allocation of `len.max(1)` bytes, freed in Drop.
        let ptr = unsafe { result::malloc_sync(len.max(1)) }
            .call("cuMemAlloc")
            .map_err(|e| e.context(format!("allocating {len} bytes of device memory")))?;
        Ok(DeviceBuffer { ptr, len })
    }

    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fill the whole buffer with `value`, asynchronously on `stream` (device memory only, no
    /// host buffer involved, so nothing needs to outlive the call).
    pub fn fill_async(&self, value: u8, stream: &Stream) -> Result<()> {
        // SAFETY: the range is exactly this allocation.
        unsafe { result::memset_d8_async(self.ptr, value, self.len, stream.raw) }
            .call("cuMemsetD8Async")
    }

    /// Copy host bytes to `offset` of this buffer, synchronously.
    pub fn upload(&self, offset: usize, src: &[u8]) -> Result<()> {
        check_range(offset, src.len(), self.len, "cuMemcpyHtoD")?;
        upload_sync_unchecked(self.ptr + offset as u64, src)
    }

    /// Copy `len` bytes at `offset` of this buffer to host memory.
    pub fn download(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        check_range(offset, dst.len(), self.len, "cuMemcpyDtoH")?;
        // SAFETY: the source range lies inside this allocation (checked); `dst` is exactly the
        // size copied and the copy is synchronous.
        unsafe { result::memcpy_dtoh_sync(dst, self.ptr + offset as u64) }.call("cuMemcpyDtoH")
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: frees the allocation made in `new`, once.
        teardown(unsafe { result::free_sync(self.ptr) }.call("cuMemFree"));
    }
}

/// Refuse a copy that would leave its buffer (an `INVALID_VALUE` error, as the driver would).
pub(crate) fn check_range(
    offset: usize,
    len: usize,
    size: usize,
    call: &'static str,
) -> Result<()> {
    if offset.checked_add(len).is_some_and(|end| end <= size) {
        Ok(())
    } else {
        Err(
            CudaError::new(call, sys::CUresult::CUDA_ERROR_INVALID_VALUE).context(format!(
                "{len} bytes at offset {offset} leave a {size}-byte buffer"
            )),
        )
    }
}

/// Copy host bytes to device ranges in chunks on `stream`, then wait. The caller proves the
/// device ranges are its own (see `ExactMemory::upload`).
pub(crate) fn upload_unchecked(stream: &Stream, copies: &[(u64, &[u8])]) -> Result<()> {
    for &(addr, bytes) in copies {
        for (i, chunk) in bytes.chunks(COPY_CHUNK).enumerate() {
            let dst = addr + (i * COPY_CHUNK) as u64;
            // SAFETY: `dst..dst+len` is device memory the caller owns; `chunk` outlives the copy
            // because the stream is synchronized below before this function returns.
            unsafe { result::memcpy_htod_async(dst, chunk, stream.raw) }
                .call("cuMemcpyHtoDAsync")
                .map_err(|e| e.context(format!("copying to {dst:#x}")))?;
        }
    }
    stream.synchronize()
}

/// One synchronous host-to-device copy.
pub(crate) fn upload_sync_unchecked(dst: u64, src: &[u8]) -> Result<()> {
    // SAFETY: the caller owns `dst..dst+src.len()`; the copy is synchronous.
    unsafe { result::memcpy_htod_sync(dst, src) }
        .call("cuMemcpyHtoD")
        .map_err(|e| e.context(format!("copying to {dst:#x}")))
}

/// Device-to-device copies `(dst, src, len)` on `stream`, then wait.
pub(crate) fn copy_device_unchecked(stream: &Stream, copies: &[(u64, u64, usize)]) -> Result<()> {
    for &(dst, src, len) in copies {
        // SAFETY: both ranges are device memory the caller owns (checked by the caller).
        unsafe { result::memcpy_dtod_async(dst, src, len, stream.raw) }
            .call("cuMemcpyDtoDAsync")
            .map_err(|e| e.context(format!("device copy to {dst:#x}")))?;
    }
    stream.synchronize()
}

/// Copy a device range into host memory, synchronously.
pub(crate) fn download_unchecked(src: u64, dst: &mut [u8]) -> Result<()> {
    // SAFETY: the caller owns `src..src+dst.len()`; the copy is synchronous into `dst`.
    unsafe { result::memcpy_dtoh_sync(dst, src) }
        .call("cuMemcpyDtoH")
        .map_err(|e| e.context(format!("reading back {src:#x}")))
}
