//! Large uploads at the link's speed without pinning the whole source: worker threads fill a
//! small pool of page-locked staging buffers from the source (a memory-mapped snapshot, read
//! from the page cache or the disk in parallel), and the calling thread queues each filled
//! buffer's copy to the device and takes the buffer back once its copy is done. Reading and
//! copying overlap; pieces that read as zeros are cleared on the device instead of copied.
//!
//! Only the calling thread makes driver calls (the context is current there); the workers only
//! copy host memory.
//!
//! The staging buffers are the caller's ([`StagingPool`]), made before a restore is timed and
//! kept for the next: page-locking is slow (measured: 640 MiB of buffers took most of a 1 GiB
//! restore's 0.49 s, a restore of 2.2 GB/s against a 55 GB/s link).

use cudarc::driver::{result, sys};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use crate::error::{check, teardown, Call, CudaError, Result};
use crate::memory::PinnedBuffer;
use crate::stream::Stream;

/// Bytes per staging buffer (and per copy). Small, so that the copies left when the reading
/// ends are short: every reader finishes its last piece at about the same time, and those
/// pieces then cross the link one after another (measured with 32 MiB pieces: a 1 GiB restore
/// at 25-27 GB/s against 32-38 GB/s reading alone, 16 readers' last 512 MiB queued at the
/// end). A copy of 4 MiB still takes ~80 µs at 50 GB/s, far above a call's cost.
pub const STAGE: usize = 4 << 20;

/// Where an upload's bytes come from.
pub trait UploadSource: Sync {
    /// Why the source could not be read.
    type Error: Send;
    /// Fill `dst` with the source's bytes at `offset` (called on worker threads); the error
    /// ends the upload.
    fn fill(&self, offset: usize, dst: &mut [u8]) -> std::result::Result<(), Self::Error>;
    /// Whether `[offset, offset + len)` reads as zeros (then it is cleared, not copied).
    fn is_zero(&self, offset: usize, len: usize) -> bool;
}

/// One copy: `len` bytes (at most [`STAGE`]) from source offset `offset` to device `addr`.
/// Page-locked staging buffers of [`STAGE`] bytes, kept from one upload to the next.
#[derive(Default)]
pub struct StagingPool {
    buffers: Vec<PinnedBuffer>,
}

impl StagingPool {
    /// The buffers an upload of `bytes` by `threads` readers wants: one per reader and as many
    /// again queued on the link (readers as fast as the link keep it fed only if a filled
    /// buffer waits whenever one is being filled), no more than there are pieces (and one
    /// spare). 16 readers: 36 buffers, 144 MiB page-locked.
    pub fn wanted(bytes: u64, threads: usize) -> usize {
        let pieces = bytes.div_ceil(STAGE as u64) as usize;
        (2 * threads + 4).min(pieces + 1).max(1)
    }

    /// Make sure the pool holds at least `count` buffers (allocating the missing ones).
    pub fn ensure(&mut self, count: usize) -> Result<()> {
        while self.buffers.len() < count {
            // Page-locking is what is slow (measured: an upload that made its own 20 buffers
            // restored 1 GiB at 1.8-3 GB/s, against 36 GB/s reading the input and 50 GB/s for
            // one pinned copy), so uploads take their buffers from here.
            self.buffers.push(PinnedBuffer::new(STAGE)?);
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    addr: u64,
    offset: usize,
    len: usize,
}

/// What a worker hands back. Every buffer comes back to the calling thread, which frees what
/// is left over: page-locked memory is freed where the context is current.
enum Filled<E> {
    /// A buffer filled with a piece.
    Piece(Piece, PinnedBuffer),
    /// Why the piece could not be read.
    Failed(E, PinnedBuffer),
    /// A buffer taken after the upload stopped.
    Unused(PinnedBuffer),
}

/// Why an upload failed: the driver, or the source.
#[derive(Debug)]
pub enum UploadError<E> {
    Cuda(CudaError),
    Source(E),
}

impl<E> From<CudaError> for UploadError<E> {
    fn from(e: CudaError) -> Self {
        UploadError::Cuda(e)
    }
}

/// A buffer whose copy is queued, with the event that marks its end.
struct InFlight {
    event: sys::CUevent,
    buffer: PinnedBuffer,
}

/// Upload `(device address, source offset, length)` ranges the caller owns, then wait.
/// `threads` workers fill the staging buffers; `progress` is told the bytes done so far.
pub(crate) fn upload_streamed<S: UploadSource>(
    stream: &Stream,
    ranges: &[(u64, usize, usize)],
    source: &S,
    threads: usize,
    pool: &mut StagingPool,
    progress: &mut dyn FnMut(u64),
) -> std::result::Result<(), UploadError<S::Error>> {
    let mut data = Vec::new();
    let mut done = 0u64;
    for &(addr, offset, len) in ranges {
        let mut at = 0;
        while at < len {
            let n = STAGE.min(len - at);
            let p = Piece {
                addr: addr + at as u64,
                offset: offset + at,
                len: n,
            };
            if source.is_zero(p.offset, p.len) {
                // SAFETY: the caller owns `addr..addr+len`; a device-side fill needs no host
                // memory to outlive it.
                unsafe { result::memset_d8_async(p.addr, 0, p.len, stream.raw) }
                    .call("cuMemsetD8Async")?;
                done += n as u64;
            } else {
                data.push(p);
            }
            at += n;
        }
    }
    progress(done);
    if data.is_empty() {
        // Holes only: no staging buffers, no workers.
        return stream.synchronize().map_err(UploadError::Cuda);
    }
    let threads = threads.clamp(1, data.len());
    // The pool's buffers, made (and written once) before the caller timed anything; only what
    // it lacks is made here. They all come back to the pool below.
    let bytes = data.iter().map(|p| p.len as u64).sum();
    pool.ensure(StagingPool::wanted(bytes, threads))?;
    let buffers = std::mem::take(&mut pool.buffers);
    let (free_tx, free_rx) = mpsc::channel::<PinnedBuffer>();
    for b in buffers {
        // The receiver lives until the workers are done: sending cannot fail here.
        free_tx.send(b).ok();
    }
    let free_rx = Mutex::new(free_rx);
    let (filled_tx, filled_rx) = mpsc::channel::<Filled<S::Error>>();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        for _ in 0..threads {
            let filled_tx = filled_tx.clone();
            let (free_rx, next, stop, data) = (&free_rx, &next, &stop, &data);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&p) = data.get(i) else { break };
                let buffer = match free_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => break,
                };
                let Ok(mut buffer) = buffer else { break };
                let filled = if stop.load(Ordering::Relaxed) {
                    Filled::Unused(buffer)
                } else {
                    match source.fill(p.offset, &mut buffer.as_mut_slice()[..p.len]) {
                        Ok(()) => Filled::Piece(p, buffer),
                        Err(e) => Filled::Failed(e, buffer),
                    }
                };
                let go_on = matches!(filled, Filled::Piece(..));
                if filled_tx.send(filled).is_err() || !go_on {
                    break;
                }
            });
        }
        drop(filled_tx);
        let result = queue_copies(stream, &data, &filled_rx, &free_tx, done, progress);
        // Workers blocked on a free buffer wake up when the channel closes.
        stop.store(true, Ordering::Relaxed);
        drop(free_tx);
        result
    });
    // Every queued copy has finished before the buffers go (also after an error).
    let synced = stream.synchronize();
    // Every buffer is idle now (the workers are done): back to the pool for the next upload.
    for f in filled_rx.try_iter() {
        match f {
            Filled::Piece(_, b) | Filled::Failed(_, b) | Filled::Unused(b) => pool.buffers.push(b),
        }
    }
    if let Ok(rx) = free_rx.lock() {
        pool.buffers.extend(rx.try_iter());
    }
    outcome.and(synced.map_err(UploadError::Cuda))
}

/// Read every byte of `ranges` from `source` into the pool's buffers by `threads` workers, as
/// an upload does, without copying anything to the device: the rate an upload's reading can
/// reach (the page cache's or the disk's), measured beside the link's.
pub fn read_through<S: UploadSource>(
    ranges: &[(u64, usize, usize)],
    source: &S,
    threads: usize,
    pool: &mut StagingPool,
) -> std::result::Result<u64, UploadError<S::Error>> {
    let mut pieces = Vec::new();
    for &(_, offset, len) in ranges {
        let mut at = 0;
        while at < len {
            let n = STAGE.min(len - at);
            pieces.push((offset + at, n));
            at += n;
        }
    }
    let threads = threads.clamp(1, pieces.len().max(1));
    pool.ensure(threads)?;
    let next = AtomicUsize::new(0);
    let failed: Mutex<Option<S::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for buffer in pool.buffers.iter_mut().take(threads) {
            let (next, pieces, failed) = (&next, &pieces, &failed);
            scope.spawn(move || {
                while let Some(&(offset, n)) = pieces.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(e) = source.fill(offset, &mut buffer.as_mut_slice()[..n]) {
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    match failed.into_inner().ok().flatten() {
        Some(e) => Err(UploadError::Source(e)),
        None => Ok(pieces.iter().map(|p| p.1 as u64).sum()),
    }
}

/// The calling thread's part: queue the copy of each filled buffer, recycle buffers whose copy
/// is done.
fn queue_copies<E>(
    stream: &Stream,
    data: &[Piece],
    filled: &mpsc::Receiver<Filled<E>>,
    free: &mpsc::Sender<PinnedBuffer>,
    mut done: u64,
    progress: &mut dyn FnMut(u64),
) -> std::result::Result<(), UploadError<E>> {
    let mut in_flight: VecDeque<InFlight> = VecDeque::new();
    let mut queued = 0;
    let result = (|| {
        while queued < data.len() {
            // Buffers whose copy finished go back to the workers.
            while let Some(front) = in_flight.front() {
                // SAFETY: a live event we created.
                if unsafe { sys::cuEventQuery(front.event) } != sys::CUresult::CUDA_SUCCESS {
                    break;
                }
                let f = in_flight.pop_front().expect("front exists");
                recycle(f, free);
            }
            let next = match next_filled(filled, &mut in_flight, free)? {
                Next::Filled(f) => f,
                Next::Freed => continue,
                Next::ReadersGone => break,
            };
            match next {
                Filled::Failed(why, buffer) => {
                    free.send(buffer).ok();
                    return Err(UploadError::Source(why));
                }
                Filled::Unused(buffer) => {
                    free.send(buffer).ok();
                }
                Filled::Piece(p, buffer) => match queue_one(stream, p, &buffer) {
                    Ok(event) => {
                        in_flight.push_back(InFlight { event, buffer });
                        queued += 1;
                        done += p.len as u64;
                        progress(done);
                    }
                    Err(e) => {
                        // The copy may have been queued: it must end before the buffer goes.
                        teardown(stream.synchronize());
                        free.send(buffer).ok();
                        return Err(e.into());
                    }
                },
            }
        }
        Ok(())
    })();
    teardown(stream.synchronize());
    for f in in_flight {
        recycle(f, free);
    }
    result
}

/// What the copying thread does next.
enum Next<E> {
    Filled(Filled<E>),
    /// A buffer went back to the workers (or a wait timed out): look again.
    Freed,
    /// Every worker has ended.
    ReadersGone,
}

/// The next filled buffer. With nothing filled and copies queued, the workers may all be
/// waiting for a buffer: the oldest copy frees one soonest, so the thread waits for it (the
/// copies queued behind it keep the link busy). Sleeping on the channel instead left buffers
/// whose copies had ended unreturned for the whole sleep (measured: a 1 GiB restore at
/// 35 GB/s against more than 54 GB/s for reading and for the link alone).
fn next_filled<E>(
    filled: &mpsc::Receiver<Filled<E>>,
    in_flight: &mut VecDeque<InFlight>,
    free: &mpsc::Sender<PinnedBuffer>,
) -> std::result::Result<Next<E>, UploadError<E>> {
    let Some(oldest) = in_flight.pop_front() else {
        // Nothing queued: only a worker can make progress.
        return Ok(match filled.recv_timeout(Duration::from_millis(50)) {
            Ok(f) => Next::Filled(f),
            Err(mpsc::RecvTimeoutError::Timeout) => Next::Freed,
            Err(mpsc::RecvTimeoutError::Disconnected) => Next::ReadersGone,
        });
    };
    match filled.try_recv() {
        Ok(f) => {
            in_flight.push_front(oldest);
            Ok(Next::Filled(f))
        }
        Err(mpsc::TryRecvError::Empty) => {
            // SAFETY: a live event we recorded.
            let r = unsafe { sys::cuEventSynchronize(oldest.event) };
            recycle(oldest, free);
            check(r, "cuEventSynchronize")?;
            Ok(Next::Freed)
        }
        Err(mpsc::TryRecvError::Disconnected) => {
            in_flight.push_front(oldest);
            Ok(Next::ReadersGone)
        }
    }
}

/// Queue the copy of `buffer` to `p.addr` and an event after it.
fn queue_one(stream: &Stream, p: Piece, buffer: &PinnedBuffer) -> Result<sys::CUevent> {
    // SAFETY: the caller owns `p.addr..p.addr+p.len`; the caller keeps `buffer` alive until the
    // event recorded after the copy has completed (or the stream synchronised).
    unsafe { result::memcpy_htod_async(p.addr, &buffer.as_slice()[..p.len], stream.raw) }
        .call("cuMemcpyHtoDAsync")?;
    let event =
        result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).call("cuEventCreate")?;
    // SAFETY: live event and stream.
    match unsafe { result::event::record(event, stream.raw) }.call("cuEventRecord") {
        Ok(()) => Ok(event),
        Err(e) => {
            // SAFETY: the event we just created, destroyed once.
            teardown(check(
                unsafe { sys::cuEventDestroy_v2(event) },
                "cuEventDestroy",
            ));
            Err(e)
        }
    }
}

/// The buffer back to the workers, its event destroyed (its copy is done or the stream synced).
fn recycle(f: InFlight, free: &mpsc::Sender<PinnedBuffer>) {
    // SAFETY: destroys an event we created, once.
    teardown(check(
        unsafe { sys::cuEventDestroy_v2(f.event) },
        "cuEventDestroy",
    ));
    // Back to the free list (the pool takes it back when the upload ends).
    free.send(f.buffer).ok();
}
