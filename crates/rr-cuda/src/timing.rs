//! Benchmark-grade timing aids, after NVIDIA's nvbench:
//!
//! - a **blocking kernel** that holds the stream until the host releases it, so the start event,
//!   the measured kernel and the stop event are all queued before any of them runs: the launch
//!   latency of the measured kernel is not in the timed interval;
//! - an **L2 flush** (a memset over twice the L2 size) before a cold sample;
//! - a **clock probe**: a one-thread kernel that reads `%clock64` and `%globaltimer` over a
//!   20 µs spin on one SM (from one timer tick to another), giving the SM clock at that moment, so samples taken while the GPU was
//!   throttled (or not yet clocked up) can be discarded. Nothing here changes a clock or any
//!   other setting of the GPU: it only observes.
//!
//! The two kernels are PTX, compiled by the driver at load time for whatever GPU is there.

use cudarc::driver::{result, sys};
use std::ffi::c_void;

use crate::error::{check, teardown, Call, CudaError, Result};
use crate::memory::DeviceBuffer;
use crate::module::{Function, Module};
use crate::stream::Stream;

/// The timing kernels (`rr_block`, `rr_clock`) as PTX: loaded here, and written into the
/// standalone reproducers (`rr-tui repro`), which time as replay does.
pub const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

// Spin until *flag != 0 (a host-mapped word the host sets), or timeout_ns of %globaltimer pass.
.visible .entry rr_block(.param .u64 flag, .param .u64 timeout_ns)
{
    .reg .pred %p<3>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [timeout_ns];
    mov.u64 %rd3, %globaltimer;
SPIN:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u64 %rd4, %globaltimer;
    sub.u64 %rd5, %rd4, %rd3;
    setp.lt.u64 %p2, %rd5, %rd2;
    @%p2 bra SPIN;
DONE:
    ret;
}

// out[0] = clock64 cycles and out[1] = %globaltimer nanoseconds between two ticks of the global
// timer at least 20 us apart. The timer advances in steps (about 1 us on some GPUs): starting and
// ending on a step, as soon as it is seen, keeps that granularity out of the ratio.
.visible .entry rr_clock(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [out];
    mov.u64 %rd2, %globaltimer;
EDGE:
    mov.u64 %rd3, %globaltimer;
    setp.eq.u64 %p1, %rd3, %rd2;
    @%p1 bra EDGE;
    mov.u64 %rd4, %clock64;
WAIT:
    mov.u64 %rd5, %globaltimer;
    mov.u64 %rd6, %clock64;
    sub.u64 %rd7, %rd5, %rd3;
    setp.lt.u64 %p2, %rd7, 20000;
    @%p2 bra WAIT;
    sub.u64 %rd8, %rd6, %rd4;
    st.global.u64 [%rd1], %rd8;
    st.global.u64 [%rd1+8], %rd7;
    ret;
}
"#;

/// How long the blocking kernel waits for the host at most (a lost release cannot hang).
const BLOCK_TIMEOUT_NS: u64 = 1_000_000_000;

/// Host memory the GPU reads directly (the release flag).
struct MappedWord {
    host: *mut u32,
    device: u64,
}

impl MappedWord {
    fn new() -> Result<MappedWord> {
        // SAFETY: allocates 4 bytes of page-locked, device-mapped host memory, freed in Drop.
        let host = unsafe { result::malloc_host(4, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .call("cuMemHostAlloc")? as *mut u32;
        let mut device = 0u64;
        // SAFETY: `host` is a mapped allocation; the driver writes its device address.
        let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host as *mut c_void, 0) };
        let w = MappedWord { host, device };
        check(r, "cuMemHostGetDevicePointer")?;
        w.set(0);
        Ok(w)
    }

    fn set(&self, v: u32) {
        // SAFETY: `host` points to our 4-byte allocation; a volatile store, because the GPU
        // polls the word concurrently.
        unsafe { std::ptr::write_volatile(self.host, v) };
    }
}

impl Drop for MappedWord {
    fn drop(&mut self) {
        // SAFETY: frees the allocation made in `new`, once.
        teardown(unsafe { result::free_host(self.host as *mut c_void) }.call("cuMemFreeHost"));
    }
}

/// The timing kernels and their buffers, for one context.
pub struct Probes {
    block: Function,
    clock: Function,
    flag: MappedWord,
    clock_out: DeviceBuffer,
    flush: Option<DeviceBuffer>,
    /// `(clock cycles, nanoseconds)` read back from the last probe.
    last: [u64; 2],
}

impl Probes {
    /// Load the kernels; `l2_bytes` sizes the flush buffer (twice the L2 cache).
    pub fn new(l2_bytes: usize) -> Result<Probes> {
        let module = Module::load(PTX.as_bytes())?;
        Ok(Probes {
            block: module.function("rr_block")?,
            clock: module.function("rr_clock")?,
            flag: MappedWord::new()?,
            clock_out: DeviceBuffer::new(16)?,
            flush: if l2_bytes > 0 {
                Some(DeviceBuffer::new(2 * l2_bytes)?)
            } else {
                None
            },
            last: [0; 2],
        })
    }

    /// Overwrite twice the L2 cache, so the next kernel starts cold (asynchronous on `stream`,
    /// issued before the timed interval).
    pub fn flush_l2(&self, stream: &Stream) -> Result<()> {
        match &self.flush {
            Some(b) => b.fill_async(0, stream),
            None => Ok(()),
        }
    }

    /// Queue the blocking kernel: the stream waits until [`Probes::release`].
    pub fn hold(&self, stream: &Stream) -> Result<()> {
        self.flag.set(0);
        launch_words(&self.block, stream, &[self.flag.device, BLOCK_TIMEOUT_NS])
    }

    /// Let the held stream run.
    pub fn release(&self) {
        self.flag.set(1);
    }

    /// Queue a clock probe (read it after the stream synchronised, with [`Probes::clock_mhz`]).
    pub fn probe_clock(&self, stream: &Stream) -> Result<()> {
        launch_words(&self.clock, stream, &[self.clock_out.ptr()])
    }

    /// How long the last probe spun, in nanoseconds (to take it out of host times).
    pub fn last_probe_ns(&self) -> u64 {
        self.last[1]
    }

    /// The SM clock the last probe measured, in MHz (after the stream synchronised).
    pub fn clock_mhz(&mut self) -> Result<f64> {
        let mut raw = [0u8; 16];
        self.clock_out.download(0, &mut raw)?;
        let cycles = u64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
        let ns = u64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
        self.last = [cycles, ns];
        if ns == 0 {
            return Err(
                CudaError::new("rr_clock", sys::CUresult::CUDA_ERROR_UNKNOWN)
                    .context("the clock probe measured no time"),
            );
        }
        Ok(cycles as f64 * 1e3 / ns as f64)
    }
}

/// Launch a one-thread kernel whose parameters are 8-byte words.
fn launch_words(f: &Function, stream: &Stream, words: &[u64]) -> Result<()> {
    let mut values: Vec<u64> = words.to_vec();
    let mut ptrs: Vec<*mut c_void> = values
        .iter_mut()
        .map(|v| v as *mut u64 as *mut c_void)
        .collect();
    // SAFETY: the kernels above take exactly these 8-byte parameters; `ptrs` point into
    // `values`, which outlives the call (the driver copies parameters before returning).
    unsafe { result::launch_kernel(f.raw, (1, 1, 1), (1, 1, 1), 0, stream.raw, &mut ptrs) }
        .call("cuLaunchKernel")
        .map_err(|e| e.context("a timing kernel"))
}
