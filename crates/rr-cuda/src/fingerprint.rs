//! Fingerprints of device memory computed where it lives (`kernels/leaf_hash.cu`): the recorder
//! tells which memory it stored already without copying it to the host, and replay verification
//! compares the replayed memory with the recorded output without copying it back.
//!
//! The kernel reads memory at the GPU's bandwidth (4.5 TB/s measured on the H200, against
//! 55 GB/s for a copy to pinned host memory) and writes one 128-bit sum per 1 MiB leaf; the
//! host combines a range's leaves with XXH3-128. A fingerprint is not cryptographic: equal
//! fingerprints are taken as equal memory of the program's own, never as a blob's name on disk.
//!
//! A [`Fingerprinter`] owns raw handles rather than [`crate::Module`]s so that a recorder can
//! keep one behind a mutex and use it from whichever application thread records.

use cudarc::driver::{result, sys};
use std::ffi::c_void;

use crate::error::{check, teardown, Call, CudaError, Result};

/// Bytes per leaf (one thread block each).
pub const LEAF: u64 = 1 << 20;
/// Threads per block (the kernel's `__launch_bounds__`).
const THREADS: u32 = 256;
/// Streams the launches are spread over. Memory is recorded in 64 MiB chunks, one launch of 64
/// blocks each: on a single stream those run one after another on half of an H100's 132 SMs
/// (0.06 s for 24 GiB, against 0.02 s for one launch over a whole allocation). Sixteen
/// streams keep up to 1 024 blocks in flight, which fills the GPU; the values do not change,
/// since each launch hashes its own range.
const STREAMS: usize = 16;
/// The kernel, compiled from `kernels/leaf_hash.cu` by `tests/gpu/make_ptx.sh`.
const PTX: &str = include_str!("../kernels/leaf_hash.ptx");

/// The kernel loaded into the context current when it was made, with its own streams and
/// output buffer.
pub struct Fingerprinter {
    module: sys::CUmodule,
    function: sys::CUfunction,
    streams: Vec<sys::CUstream>,
    out: sys::CUdeviceptr,
    out_len: usize,
}

// SAFETY: driver handles belong to a context, not to a thread, and the driver API may be called
// on them from any thread; a Fingerprinter is used by one thread at a time (`&mut self`).
unsafe impl Send for Fingerprinter {}

impl Fingerprinter {
    /// Load the kernel into the current context.
    pub fn new() -> Result<Fingerprinter> {
        let mut ptx = PTX.as_bytes().to_vec();
        ptx.push(0);
        // SAFETY: a NUL-terminated PTX text that outlives the call.
        let module =
            unsafe { result::module::load_data(ptx.as_ptr().cast()) }.call("cuModuleLoadData")?;
        let mut f = Fingerprinter {
            module,
            function: std::ptr::null_mut(),
            streams: Vec::with_capacity(STREAMS),
            out: 0,
            out_len: 0,
        };
        // SAFETY: `module` is live and the name NUL-terminated.
        f.function = unsafe { result::module::get_function(module, c"rr_leaf_hash".into()) }
            .call("cuModuleGetFunction")?;
        for _ in 0..STREAMS {
            let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
                .call("cuStreamCreate")?;
            f.streams.push(stream);
        }
        Ok(f)
    }

    /// The fingerprint of each `(device address, length)` range, `None` for a range the
    /// kernel cannot read (not 16-byte aligned, or too long for one launch). Waits for the
    /// kernels; the caller has made sure nothing writes the ranges meanwhile.
    pub fn fingerprints(&mut self, ranges: &[(u64, u64)]) -> Result<Vec<Option<u128>>> {
        let leaves: Vec<Option<u64>> = ranges
            .iter()
            .map(|&(addr, len)| {
                let n = len.div_ceil(LEAF);
                (addr % 16 == 0 && n <= i32::MAX as u64).then_some(n)
            })
            .collect();
        let total: u64 = leaves.iter().flatten().sum();
        let bytes = usize::try_from(total.saturating_mul(16))
            .map_err(|_| too_large("the fingerprints of these ranges"))?;
        self.reserve(bytes)?;
        let mut at = 0u64;
        let mut launched = 0usize;
        for (&(addr, len), n) in ranges.iter().zip(&leaves) {
            let Some(n) = *n else { continue };
            if n > 0 {
                let stream = self.streams[launched % self.streams.len()];
                let launch = self.launch(stream, addr, len, n as u32, self.out + at * 16);
                launched += 1;
                if let Err(e) = launch {
                    // Nothing may still write the output buffer when it is reused or freed.
                    teardown(self.wait_for(launched));
                    return Err(e);
                }
            }
            at += n;
        }
        // Every stream that was given work must have finished before the sums are read: the
        // copy below is on the legacy stream, which does not wait for non-blocking streams, and
        // a sum read early would make changed memory look stored already.
        self.wait_for(launched)?;
        let mut sums = vec![0u8; bytes];
        if bytes > 0 {
            // SAFETY: `out` holds at least `bytes` bytes (reserved above); synchronous copy.
            unsafe { result::memcpy_dtoh_sync(&mut sums, self.out) }.call("cuMemcpyDtoH")?;
        }
        let mut at = 0usize;
        Ok(ranges
            .iter()
            .zip(&leaves)
            .map(|(&(_, len), n)| {
                let n = (*n)? as usize;
                let leaf_sums = &sums[at * 16..(at + n) * 16];
                at += n;
                Some(combine(len, leaf_sums))
            })
            .collect())
    }

    /// At least `bytes` of output buffer.
    fn reserve(&mut self, bytes: usize) -> Result<()> {
        if bytes <= self.out_len {
            return Ok(());
        }
        self.release_out();
        // SAFETY: plain allocation, freed in `release_out`.
        self.out = unsafe { result::malloc_sync(bytes) }
            .call("cuMemAlloc")
            .map_err(|e| e.context(format!("allocating {bytes} bytes for fingerprints")))?;
        self.out_len = bytes;
        Ok(())
    }

    fn release_out(&mut self) {
        if self.out_len > 0 {
            // SAFETY: frees the allocation made in `reserve`, once.
            teardown(unsafe { result::free_sync(self.out) }.call("cuMemFree"));
            self.out_len = 0;
        }
    }

    /// Wait for the streams the first `launched` launches went to, every one even after one
    /// failed (none may still write `out` when it is reused or freed); the first error.
    fn wait_for(&self, launched: usize) -> Result<()> {
        let mut waited = Ok(());
        for (i, &stream) in self.streams.iter().enumerate().take(launched) {
            // SAFETY: `stream` is ours and live.
            let r = unsafe { result::stream::synchronize(stream) }
                .call("cuStreamSynchronize")
                .map_err(|e| e.context(format!("waiting for fingerprint stream {i}")));
            if waited.is_ok() {
                waited = r;
            }
        }
        waited
    }

    fn launch(
        &self,
        stream: sys::CUstream,
        addr: u64,
        len: u64,
        leaves: u32,
        out: u64,
    ) -> Result<()> {
        let mut words = [addr, len, LEAF, out];
        let mut ptrs: Vec<*mut c_void> = words
            .iter_mut()
            .map(|w| w as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: the kernel takes four 8-byte parameters, each pointer points to one of them
        // and outlives the call (the driver copies parameters before returning); the kernel
        // reads [addr, addr + len), live device memory of the caller's, and writes `leaves`
        // pairs of words at `out`, inside our buffer.
        let r = unsafe {
            sys::cuLaunchKernel(
                self.function,
                leaves,
                1,
                1,
                THREADS,
                1,
                1,
                0,
                stream,
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check(r, "cuLaunchKernel")
    }
}

impl Drop for Fingerprinter {
    fn drop(&mut self) {
        // Nothing may write the output buffer once it is freed.
        teardown(self.wait_for(self.streams.len()));
        self.release_out();
        // SAFETY: the streams and module made in `new`, destroyed once (a context destroyed
        // meanwhile makes these calls fail harmlessly).
        unsafe {
            for &stream in &self.streams {
                teardown(result::stream::destroy(stream).call("cuStreamDestroy"));
            }
            teardown(result::module::unload(self.module).call("cuModuleUnload"));
        }
    }
}

/// A range's fingerprint from its length and its leaves' sums.
pub fn combine(len: u64, leaf_sums: &[u8]) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&len.to_le_bytes());
    h.update(leaf_sums);
    h.digest128()
}

fn too_large(what: &str) -> CudaError {
    CudaError::new("cuMemAlloc", sys::CUresult::CUDA_ERROR_INVALID_VALUE)
        .context(format!("{what} do not fit in memory"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_combined_fingerprint_depends_on_length_and_every_leaf() {
        let a = combine(32, &[1; 32]);
        assert_ne!(a, combine(31, &[1; 32]));
        let mut other = [1u8; 32];
        other[31] = 2;
        assert_ne!(a, combine(32, &other));
        assert_eq!(a, combine(32, &[1; 32]));
    }

    #[test]
    fn the_committed_ptx_is_the_kernel_we_launch() {
        assert!(PTX.contains(".visible .entry rr_leaf_hash("));
        assert_eq!(
            PTX.matches(".param .u64").count(),
            4,
            "four 8-byte parameters"
        );
    }
}
