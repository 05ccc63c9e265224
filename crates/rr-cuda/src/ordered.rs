//! The GPU side of the recorder's stream-ordered snapshots (`kernels/snapshot.cu`).
//!
//! A recorded launch's snapshots are enqueued on the application's own stream, before and
//! after its kernel: a small upload (the chunk table), three kernels (hash, plan, copy) and a
//! few copies into memory the recorder owns. The application's thread returns from its launch
//! at once; the recorder's own thread waits for the events and drains what was copied
//! through its own stream ([`Snapshotter::read`]). Nothing here waits for the application's
//! work: every call on the application's stream is asynchronous, and the recorder's kernels
//! are loaded once per context, when it is set up, never in the middle of a program (loading
//! a kernel waits for the kernels running, which may be waiting for the program's next launch).
//!
//! A [`Snapshotter`] owns, per context: the staging ring (device memory the plan kernel takes
//! regions of, on the device), the ring's head (device) and tail (page-locked host memory the
//! device reads), a metadata area (device) and an upload area (page-locked host) whose space
//! the recorder hands out itself, and a stream of its own.

use cudarc::driver::sys as ds;
use std::ffi::c_void;

use crate::error::{check, teardown, CudaError, Result};
use crate::objects::ArrayCopy;

/// Bytes per leaf of the hash kernel (as [`crate::fingerprint::LEAF`]).
pub const LEAF: u64 = crate::fingerprint::LEAF;
/// Threads per block of the hash and copy kernels; of the plan kernel.
const THREADS: u32 = 256;
const PLAN_THREADS: u32 = 1024;
/// Chunk flags the hash kernel sets.
pub const NONZERO: u32 = 1;
pub const CHANGED: u32 = 2;
/// The plan kernel's offset of a chunk it does not copy.
pub const NOT_COPIED: u64 = u64::MAX;
/// The kernels, compiled from `kernels/snapshot.cu` by `tests/gpu/make_ptx.sh`.
const PTX: &str = include_str!("../kernels/snapshot.ptx");
pub use crate::stream::STREAM_PER_THREAD;

/// Set when the program is ending and the recorder gives up waiting (a graph capture left open
/// forbids its copies for ever): waits end with an error instead.
static ABANDONED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Give up every wait of the recorder's thread from now on (the program is ending).
pub fn abandon_waits() {
    ABANDONED.store(true, std::sync::atomic::Ordering::Release);
}

/// Whether the recorder's waits were given up ([`abandon_waits`]).
pub fn waits_abandoned() -> bool {
    ABANDONED.load(std::sync::atomic::Ordering::Acquire)
}

/// One chunk as the kernels read it (`struct Chunk` in snapshot.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkDesc {
    /// Device address (or device address of mapped host memory).
    pub src: u64,
    pub len: u64,
    /// Device address of the expected leaf sums (16 bytes a leaf), 0 for none.
    pub expected: u64,
    /// The chunk's first leaf among the snapshot's leaves.
    pub first_leaf: u64,
    /// 1: copied whatever its content.
    pub always: u64,
}

impl ChunkDesc {
    pub const BYTES: usize = std::mem::size_of::<ChunkDesc>();

    pub fn to_bytes(self) -> [u8; Self::BYTES] {
        let mut out = [0u8; Self::BYTES];
        let words = [
            self.src,
            self.len,
            self.expected,
            self.first_leaf,
            self.always,
        ];
        for (i, w) in words.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        out
    }
}

/// Where one snapshot's pieces are, as device addresses the kernels use.
#[derive(Debug, Clone, Copy)]
pub struct SnapAddrs {
    /// The chunk table (`n` descriptors), followed in the upload by expected sums and the
    /// zeroed flags.
    pub table: u64,
    pub chunks: u32,
    pub leaves: u64,
    /// Where the upload comes from (page-locked host, an offset in the upload area) and its
    /// length: it covers the table, the expected sums and the flags.
    pub upload_from: usize,
    pub upload_len: usize,
    pub flags: u64,
    pub sums: u64,
    pub offsets: u64,
    pub status: u64,
}

/// A kernel of ours, in our module.
#[derive(Clone, Copy)]
struct Kernels {
    hash: ds::CUfunction,
    plan: ds::CUfunction,
    copy: ds::CUfunction,
}

/// The recorder's snapshot resources in one context (see the module's documentation).
pub struct Snapshotter {
    module: ds::CUmodule,
    kernels: Kernels,
    stream: ds::CUstream,
    ring: u64,
    ring_len: u64,
    /// The ring's head (8 bytes), then the metadata area.
    device: u64,
    meta_len: u64,
    /// Page-locked: the tail word (8 bytes, device-mapped), then the upload area, then the
    /// bounce buffer of [`Snapshotter::read`].
    host: *mut u8,
    host_tail_dev: u64,
    upload_len: usize,
    /// Reads from our memory go through this page-locked buffer: a copy into pageable memory
    /// is staged by the driver, which a graph capture in global mode forbids.
    bounce: std::sync::Mutex<()>,
}

// SAFETY: driver handles belong to a context, not a thread, and the driver API is thread-safe;
// the host area is written only in disjoint parts the caller owns (`stage_upload`) and by
// `set_tail` (one aligned word, volatile), never read through a Rust reference.
unsafe impl Send for Snapshotter {}
// SAFETY: as above: every `&self` method is a thread-safe driver call or a write to a part of
// the host area its caller owns.
unsafe impl Sync for Snapshotter {}

/// Bytes before the metadata area: the ring's head.
const HEAD_BYTES: u64 = 256;
/// Bytes before the upload area: the ring's tail.
const TAIL_BYTES: usize = 64;
/// The bounce buffer after the upload area.
const BOUNCE_BYTES: usize = 4 << 20;

impl Snapshotter {
    /// Load the kernels into the current context (each function loaded now, not at its first
    /// launch) and make our stream. Memory comes later ([`Snapshotter::allocate`]): the kernels
    /// are loaded when the program first allocates, the memory when it is first needed.
    pub fn load() -> Result<Snapshotter> {
        let mut s = Snapshotter {
            module: std::ptr::null_mut(),
            kernels: Kernels {
                hash: std::ptr::null_mut(),
                plan: std::ptr::null_mut(),
                copy: std::ptr::null_mut(),
            },
            stream: std::ptr::null_mut(),
            ring: 0,
            ring_len: 0,
            device: 0,
            meta_len: 0,
            host: std::ptr::null_mut(),
            host_tail_dev: 0,
            upload_len: 0,
            bounce: std::sync::Mutex::new(()),
        };
        s.load_kernels()?;
        Ok(s)
    }

    /// Whether [`Snapshotter::allocate`] has been done.
    pub fn allocated(&self) -> bool {
        self.ring != 0
    }

    fn load_kernels(&mut self) -> Result<()> {
        let mut ptx = PTX.as_bytes().to_vec();
        ptx.push(0);
        check(
            // SAFETY: a NUL-terminated PTX text that outlives the call; writes one handle.
            unsafe { ds::cuModuleLoadData(&mut self.module, ptx.as_ptr() as *const c_void) },
            "cuModuleLoadData",
        )
        .map_err(|e| e.context("loading the recorder's snapshot kernels"))?;
        let get = |name: &std::ffi::CStr| -> Result<ds::CUfunction> {
            let mut f: ds::CUfunction = std::ptr::null_mut();
            check(
                // SAFETY: our live module; a NUL-terminated name; writes one handle.
                unsafe { ds::cuModuleGetFunction(&mut f, self.module, name.as_ptr()) },
                "cuModuleGetFunction",
            )?;
            // SAFETY: a function of our module: loaded now, so that no later launch of it
            // loads it while the program's kernels run.
            check(unsafe { ds::cuFuncLoad(f) }, "cuFuncLoad")?;
            Ok(f)
        };
        self.kernels = Kernels {
            hash: get(c"rr_snap_hash")?,
            plan: get(c"rr_snap_plan")?,
            copy: get(c"rr_snap_copy")?,
        };
        self.stream = cudarc::driver::result::stream::create(
            cudarc::driver::result::stream::StreamKind::NonBlocking,
        )
        .map_err(|e| CudaError::new("cuStreamCreate", e.0))?;
        Ok(())
    }

    /// Allocate `ring` bytes of staging ring (rounded down to 256), `meta` bytes of metadata and
    /// `upload` bytes of page-locked upload area, in the current context.
    pub fn allocate(&mut self, ring: u64, meta: u64, upload: usize) -> Result<()> {
        // Positions in the ring are multiples of 256: so is its length (no word straddles it).
        let ring = ring / 256 * 256;
        let alloc = |bytes: u64, what: &str| -> Result<u64> {
            let mut p: ds::CUdeviceptr = 0;
            let n = usize::try_from(bytes).map_err(|_| too_large(what))?;
            // SAFETY: a plain allocation, freed in Drop.
            check(unsafe { ds::cuMemAlloc_v2(&mut p, n) }, "cuMemAlloc")
                .map_err(|e| e.context(format!("allocating {bytes} bytes of {what}")))?;
            Ok(p)
        };
        self.ring = alloc(ring, "staging ring")?;
        self.ring_len = ring;
        self.device = alloc(HEAD_BYTES + meta, "snapshot metadata")?;
        self.meta_len = meta;
        let mut h: *mut c_void = std::ptr::null_mut();
        let host_bytes = TAIL_BYTES + upload + BOUNCE_BYTES;
        check(
            // SAFETY: page-locked, device-mapped host memory, freed in Drop. Flags: PORTABLE (1) |
            // DEVICEMAP (2).
            unsafe { ds::cuMemHostAlloc(&mut h, host_bytes, 0x1 | 0x2) },
            "cuMemHostAlloc",
        )
        .map_err(|e| {
            e.context(format!(
                "page-locking {host_bytes} bytes for snapshot uploads"
            ))
        })?;
        self.host = h as *mut u8;
        self.upload_len = upload;
        // SAFETY: `h` is `host_bytes` long, ours.
        unsafe { std::ptr::write_bytes(self.host, 0, host_bytes) };
        check(
            // SAFETY: device address of our mapped allocation; writes one address.
            unsafe { ds::cuMemHostGetDevicePointer_v2(&mut self.host_tail_dev, h, 0) },
            "cuMemHostGetDevicePointer",
        )?;
        // The head starts at 0: zeroed on our own stream, which waits for nothing else.
        check(
            // SAFETY: the first 8 bytes of our allocation.
            unsafe { ds::cuMemsetD8Async(self.device, 0, HEAD_BYTES as usize, self.stream) },
            "cuMemsetD8Async",
        )?;
        self.sync_own()
    }

    /// Whether our memory still belongs to `context`. A program that destroys its context
    /// (`cudaDeviceReset`) and makes a new one may get the same handle back: our memory is gone
    /// then, and its addresses may be the program's new allocations, never to be written.
    pub fn still_in(&self, context: u64) -> bool {
        if self.ring == 0 {
            return true; // nothing allocated yet: nothing to write through
        }
        let mut owner: ds::CUcontext = std::ptr::null_mut();
        // SAFETY: the driver validates the address (any value) and writes one handle.
        let r = unsafe {
            ds::cuPointerGetAttribute(
                &mut owner as *mut ds::CUcontext as *mut c_void,
                ds::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
                self.ring,
            )
        };
        r == ds::CUresult::CUDA_SUCCESS && owner as u64 == context
    }

    /// Whether device address `addr` is memory of ours (the ring, the head and metadata).
    pub fn owns(&self, addr: u64) -> bool {
        let within = |base: u64, len: u64| base != 0 && addr >= base && addr - base < len;
        within(self.ring, self.ring_len) || within(self.device, HEAD_BYTES + self.meta_len)
    }

    /// Bytes of the staging ring, of the metadata area, of the upload area.
    pub fn sizes(&self) -> (u64, u64, usize) {
        (self.ring_len, self.meta_len, self.upload_len)
    }

    /// The device address of byte `offset` of the metadata area.
    pub fn meta_addr(&self, offset: u64) -> u64 {
        self.device + HEAD_BYTES + offset
    }

    /// Copy `bytes` into the upload area at `offset` (page-locked: what the next upload from
    /// there sends). The caller owns that part of the area until the upload has run: callers
    /// hand out disjoint parts (the recorder's arena), so concurrent calls never overlap.
    pub fn stage_upload(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        if offset
            .checked_add(bytes.len())
            .is_none_or(|e| e > self.upload_len)
        {
            return Err(too_large("a snapshot upload"));
        }
        // SAFETY: `[offset, offset + len)` lies inside the upload area (checked above), after
        // the tail word; `bytes` does not overlap our allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.host.add(TAIL_BYTES + offset),
                bytes.len(),
            )
        };
        Ok(())
    }

    /// Where the plan kernel may not reach past: everything before `tail` (the ring's running
    /// count) has been drained.
    pub fn set_tail(&self, tail: u64) {
        // SAFETY: the first 8 bytes of our page-locked allocation, 8-byte aligned; the device
        // reads them volatile. A volatile store keeps the compiler from dropping it.
        unsafe { std::ptr::write_volatile(self.host as *mut u64, tail) };
    }

    /// Enqueue a snapshot on `stream` (the application's): the upload, then hash, plan and
    /// copy. Returns at once.
    pub fn enqueue(&self, stream: u64, s: &SnapAddrs) -> Result<()> {
        let stream = stream as ds::CUstream;
        if s.upload_from
            .checked_add(s.upload_len)
            .is_none_or(|e| e > self.upload_len)
        {
            return Err(too_large("a snapshot upload"));
        }
        check(
            // SAFETY: the source lies in our page-locked upload area (checked), the destination in
            // our metadata area (laid out by the caller); asynchronous on the caller's stream.
            unsafe {
                ds::cuMemcpyHtoDAsync_v2(
                    s.table,
                    self.host.add(TAIL_BYTES + s.upload_from) as *const c_void,
                    s.upload_len,
                    stream,
                )
            },
            "cuMemcpyHtoDAsync",
        )?;
        if s.chunks == 0 {
            return Ok(());
        }
        let grid = u32::try_from(s.leaves).map_err(|_| too_large("a snapshot's leaves"))?;
        let (mut table, mut n, mut leaf) = (s.table, s.chunks, LEAF);
        let (mut sums, mut flags) = (s.sums, s.flags);
        if grid > 0 {
            launch(
                self.kernels.hash,
                grid,
                THREADS,
                stream,
                &mut [
                    arg(&mut table),
                    arg(&mut n),
                    arg(&mut leaf),
                    arg(&mut sums),
                    arg(&mut flags),
                ],
            )?;
        }
        let (mut offsets, mut status) = (s.offsets, s.status);
        let (mut head, mut tail, mut cap) = (self.device, self.host_tail_dev, self.ring_len);
        launch(
            self.kernels.plan,
            1,
            PLAN_THREADS,
            stream,
            &mut [
                arg(&mut table),
                arg(&mut n),
                arg(&mut flags),
                arg(&mut offsets),
                arg(&mut status),
                arg(&mut head),
                arg(&mut tail),
                arg(&mut cap),
            ],
        )?;
        if grid > 0 {
            let (mut ring, mut cap) = (self.ring, self.ring_len);
            launch(
                self.kernels.copy,
                grid,
                THREADS,
                stream,
                &mut [
                    arg(&mut table),
                    arg(&mut n),
                    arg(&mut leaf),
                    arg(&mut offsets),
                    arg(&mut ring),
                    arg(&mut cap),
                ],
            )?;
        }
        Ok(())
    }

    /// Enqueue a copy of a CUDA array's contents (rows one after the other) to `dst` (device
    /// memory of ours) on the application's `stream`.
    pub fn enqueue_array(&self, stream: u64, array: &ArrayCopy, dst: u64) -> Result<()> {
        array.enqueue_to_device(dst, stream)
    }

    /// Copy `dst.len()` bytes at device address `addr` (ours) to the host through our own
    /// stream and page-locked bounce buffer, and wait for that copy only.
    pub fn read(&self, addr: u64, dst: &mut [u8]) -> Result<()> {
        let _one_at_a_time = self.bounce.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the bounce buffer lies after the tail word and the upload area, inside our
        // allocation; only this method uses it, under the lock.
        let bounce = unsafe { self.host.add(TAIL_BYTES + self.upload_len) };
        let mut done = 0usize;
        while done < dst.len() {
            let n = (dst.len() - done).min(BOUNCE_BYTES);
            // SAFETY: `bounce` holds BOUNCE_BYTES page-locked bytes of ours.
            unsafe { self.copy_to(bounce, addr + done as u64, n) }?;
            // SAFETY: the copy above completed (waited for); `n` bytes of `bounce` are valid.
            let from = unsafe { std::slice::from_raw_parts(bounce, n) };
            dst[done..done + n].copy_from_slice(from);
            done += n;
        }
        Ok(())
    }

    /// As [`Snapshotter::read`], straight into `dst`, which the caller has page-locked (a
    /// pageable destination works, but the driver stages it, which a graph capture in global
    /// mode forbids).
    pub fn read_pinned(&self, addr: u64, dst: &mut [u8]) -> Result<()> {
        // SAFETY: `dst` is exactly the bytes copied and outlives the copy (waited for).
        unsafe { self.copy_to(dst.as_mut_ptr(), addr, dst.len()) }
    }

    /// Copy `n` bytes at `addr` to `dst` through our stream and wait for it, outside any graph
    /// capture in global mode (waiting for one to end: the wait would end it).
    ///
    /// # Safety
    /// `dst` is valid for `n` bytes of writes.
    unsafe fn copy_to(&self, dst: *mut u8, addr: u64, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let copy = || {
            check(
                // SAFETY: the caller's contract; the copy is waited for before returning.
                unsafe { ds::cuMemcpyDtoHAsync_v2(dst as *mut c_void, addr, n, self.stream) },
                "cuMemcpyDtoHAsync",
            )
            .map_err(|e| e.context(format!("reading {n} staged bytes at {addr:#x}")))?;
            self.sync_own()
        };
        loop {
            if let Some(done) = crate::capture::outside_global_capture(copy) {
                return done;
            }
            if waits_abandoned() {
                return Err(CudaError::new(
                    "cuMemcpyDtoHAsync",
                    ds::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                )
                .context("the program ended with a CUDA graph capture open"));
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// As [`Snapshotter::read`], from position `at` of the staging ring, which may run over
    /// its end (then the rest is at its start).
    pub fn read_ring(&self, at: u64, dst: &mut [u8]) -> Result<()> {
        self.ring_parts(at, dst, Self::read)
    }

    /// As [`Snapshotter::read_pinned`], from position `at` of the staging ring.
    pub fn read_ring_pinned(&self, at: u64, dst: &mut [u8]) -> Result<()> {
        self.ring_parts(at, dst, Self::read_pinned)
    }

    fn ring_parts(
        &self,
        at: u64,
        dst: &mut [u8],
        read: fn(&Self, u64, &mut [u8]) -> Result<()>,
    ) -> Result<()> {
        if at >= self.ring_len {
            return Err(too_large("a staged chunk's position"));
        }
        let first = (self.ring_len - at).min(dst.len() as u64) as usize;
        let (head, rest) = dst.split_at_mut(first);
        read(self, self.ring + at, head)?;
        read(self, self.ring, rest)
    }

    fn sync_own(&self) -> Result<()> {
        check(
            // SAFETY: our own live stream.
            unsafe { ds::cuStreamSynchronize(self.stream) },
            "cuStreamSynchronize",
        )
    }
}

impl Drop for Snapshotter {
    fn drop(&mut self) {
        // SAFETY: everything made in `new`, released once; nothing of ours is in flight on our
        // stream (every use waits), and the recorder drops a Snapshotter only when no snapshot
        // of it is pending. A context destroyed meanwhile makes these calls fail harmlessly.
        unsafe {
            if !self.stream.is_null() {
                teardown(check(
                    ds::cuStreamDestroy_v2(self.stream),
                    "cuStreamDestroy",
                ));
            }
            for p in [self.ring, self.device] {
                if p != 0 {
                    teardown(check(ds::cuMemFree_v2(p), "cuMemFree"));
                }
            }
            if !self.host.is_null() {
                teardown(check(
                    ds::cuMemFreeHost(self.host as *mut c_void),
                    "cuMemFreeHost",
                ));
            }
            if !self.module.is_null() {
                teardown(check(ds::cuModuleUnload(self.module), "cuModuleUnload"));
            }
        }
    }
}

/// A kernel parameter: a pointer to its value, which must outlive the launch call.
fn arg<T>(v: &mut T) -> *mut c_void {
    v as *mut T as *mut c_void
}

fn launch(
    f: ds::CUfunction,
    grid: u32,
    threads: u32,
    stream: ds::CUstream,
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: `params` holds one pointer per parameter of `f` (snapshot.cu's signatures, in
    // order and size), each to a live value of the caller's (the driver copies them before
    // returning); the kernels touch only the memory the caller laid out for them.
    let r = unsafe {
        ds::cuLaunchKernel(
            f,
            grid,
            1,
            1,
            threads,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    check(r, "cuLaunchKernel")
}

fn too_large(what: &str) -> CudaError {
    CudaError::new("cuMemAlloc", ds::CUresult::CUDA_ERROR_INVALID_VALUE)
        .context(format!("{what} does not fit"))
}

/// An event on the application's stream, for the recorder's thread to wait on (and, with
/// timing, to time the kernel between two of them).
pub struct StreamEvent {
    raw: ds::CUevent,
}

// SAFETY: an event handle may be used from any thread.
unsafe impl Send for StreamEvent {}
// SAFETY: queries and timing read the event; nothing mutates it through `&self` but recording,
// which the recorder does before sharing it.
unsafe impl Sync for StreamEvent {}

impl StreamEvent {
    /// Record a new event on `stream` (timing it only when asked: untimed ones are cheaper).
    pub fn record(stream: u64, timing: bool) -> Result<StreamEvent> {
        let flags = if timing { 0 } else { 0x2 }; // CU_EVENT_DISABLE_TIMING
        let mut raw: ds::CUevent = std::ptr::null_mut();
        check(
            // SAFETY: writes one handle.
            unsafe { ds::cuEventCreate(&mut raw, flags) },
            "cuEventCreate",
        )?;
        let ev = StreamEvent { raw };
        check(
            // SAFETY: our live event on the caller's stream (a handle the application passed).
            unsafe { ds::cuEventRecord(ev.raw, stream as ds::CUstream) },
            "cuEventRecord",
        )?;
        Ok(ev)
    }

    /// Whether everything before it on its stream has run: `false` too while a graph capture
    /// in global mode is in progress (asked then, the capture could end); an error when the
    /// driver cannot say (the context is gone, or an error in the stream).
    pub fn done(&self) -> Result<bool> {
        // SAFETY: our live event.
        let query = || unsafe { ds::cuEventQuery(self.raw) };
        let Some(r) = crate::capture::outside_global_capture(query) else {
            return Ok(false);
        };
        match r {
            ds::CUresult::CUDA_SUCCESS => Ok(true),
            ds::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => Err(CudaError::new("cuEventQuery", other)),
        }
    }

    /// Milliseconds from `self` to `end`; both timed and done.
    pub fn elapsed_ms(&self, end: &StreamEvent) -> Result<f32> {
        let mut ms = 0f32;
        check(
            // SAFETY: two live events of ours; writes one float.
            unsafe { ds::cuEventElapsedTime_v2(&mut ms, self.raw, end.raw) },
            "cuEventElapsedTime",
        )?;
        Ok(ms)
    }
}

impl Drop for StreamEvent {
    fn drop(&mut self) {
        // SAFETY: our event, destroyed once (the driver frees it when its work is done); while a
        // graph capture in global mode is in progress it is left (a few bytes), not destroyed.
        let destroy = || unsafe { ds::cuEventDestroy_v2(self.raw) };
        if let Some(r) = crate::capture::outside_global_capture(destroy) {
            teardown(check(r, "cuEventDestroy"));
        }
    }
}

/// Free device memory of the current context's device, in bytes.
pub fn free_device_memory() -> Result<u64> {
    let (free, _) =
        crate::error::Call::call(cudarc::driver::result::mem_get_info(), "cuMemGetInfo")?;
    Ok(free as u64)
}

/// Make `context` (an opaque handle the driver gave the application) current on this thread:
/// the recorder's own thread works in whichever context a snapshot was taken.
pub fn make_current(context: u64) -> Result<()> {
    check(
        // SAFETY: a context handle of the application's, live while its snapshots are pending.
        unsafe { ds::cuCtxSetCurrent(context as ds::CUcontext) },
        "cuCtxSetCurrent",
    )
}

/// Whether `stream` (an application's) has work in flight: `None` when the driver cannot say.
/// Never ask of a stream that is capturing a graph (the query would end its capture).
pub fn stream_busy(stream: u64) -> Option<bool> {
    // SAFETY: a stream handle the application used; the driver validates it.
    match unsafe { ds::cuStreamQuery(stream as ds::CUstream) } {
        ds::CUresult::CUDA_SUCCESS => Some(false),
        ds::CUresult::CUDA_ERROR_NOT_READY => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_ptx_holds_the_three_kernels_with_their_parameters() {
        for (name, params) in [
            ("rr_snap_hash", 5),
            ("rr_snap_plan", 8),
            ("rr_snap_copy", 6),
        ] {
            let at = PTX
                .find(&format!(".visible .entry {name}("))
                .unwrap_or_else(|| panic!("{name} missing"));
            let decl = &PTX[at..at + PTX[at..].find(')').unwrap()];
            assert_eq!(decl.matches(".param").count(), params, "{name}: {decl}");
        }
    }

    #[test]
    fn a_chunk_is_five_little_endian_words() {
        let c = ChunkDesc {
            src: 1,
            len: 2,
            expected: 3,
            first_leaf: 4,
            always: 5,
        };
        let b = c.to_bytes();
        assert_eq!(b.len(), 40);
        for (i, w) in b.chunks(8).enumerate() {
            assert_eq!(u64::from_le_bytes(w.try_into().unwrap()), i as u64 + 1);
        }
    }
}
