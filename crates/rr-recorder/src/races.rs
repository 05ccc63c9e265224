//! Snapshots that may have raced with other streams. A snapshot is ordered on its launch's
//! stream; kernels on other streams may write the same memory meanwhile, and no snapshot can be
//! consistent then. The recorder says so in the instance (`MayHaveRaced`) in two cases:
//!
//! - when the snapshot is enqueued, another stream of the context has work in flight (the
//!   streams the program launched on are remembered, and asked; never while a graph is being
//!   captured, since asking a capturing stream would end its capture);
//! - while the snapshot is in flight, the program launches a kernel on another stream whose
//!   parameters point into memory the snapshot covers.
//!
//! While a snapshot is in flight every launch takes the slow path (the fast path looks at one
//! counter), so the second check costs only while something is being recorded.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rr_cuda::ordered::StreamEvent;

use crate::locks::lock;

/// How many streams are remembered (a program making streams without end stops being asked
/// about after this many).
const MAX_STREAMS: usize = 1024;

thread_local! {
    /// This thread's number (from 1), for telling threads apart cheaply.
    static THREAD: u64 = {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

/// The calling thread's number.
pub fn thread() -> u64 {
    THREAD.with(|t| *t)
}

/// A stream as the recorder tells streams apart: the per-thread default stream (one handle,
/// `CU_STREAM_PER_THREAD`, for every thread's own stream) is the calling thread's, the legacy
/// default stream (0 or `CU_STREAM_LEGACY`) is one; other handles are themselves. (Handles
/// are aligned pointers: keys of per-thread streams, odd multiples of 2, never meet them.)
pub fn key(stream: u64) -> u64 {
    match stream {
        0 | 1 => 0,
        rr_cuda::ordered::STREAM_PER_THREAD => (thread() << 8) | 0x2,
        s => s,
    }
}

/// Snapshots in flight, for the fast path.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Whether any snapshot is in flight (every launch is then looked at).
pub fn any_in_flight() -> bool {
    IN_FLIGHT.load(Ordering::Relaxed) > 0
}

/// The streams the program launched on: `(stream, context)`.
static STREAMS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// How many times a stream was forgotten: a thread's cache of streams it launched on is stale
/// once this moves (the driver gives a destroyed stream's handle to the next stream made, and
/// that stream must be remembered again).
static FORGOTTEN: AtomicUsize = AtomicUsize::new(0);

/// The last few streams a thread launched on (remembered globally already), as of a count of
/// [`FORGOTTEN`].
struct Seen {
    streams: [u64; 8],
    next: usize,
    forgotten: usize,
}

thread_local! {
    static SEEN: RefCell<Seen> = const {
        RefCell::new(Seen { streams: [u64::MAX; 8], next: 0, forgotten: 0 })
    };
    /// Set on a thread that launched on its per-thread default stream: at the thread's end
    /// its stream is forgotten (no later snapshot need wonder about it).
    static PER_THREAD_KEY: PerThreadKey = const { PerThreadKey(std::cell::Cell::new(0)) };
}

struct PerThreadKey(std::cell::Cell<u64>);

impl Drop for PerThreadKey {
    fn drop(&mut self) {
        let key = self.0.get();
        if key != 0 {
            lock(&STREAMS).retain(|(s, _)| *s != key);
        }
    }
}

/// Remember that the program launched on `stream` (the fast path: a look at a few values). A
/// per-thread default stream is remembered by its key (each thread's is its own stream).
pub fn launched_on(stream: u64) {
    remember(stream, || rr_cuda::cupti::current_context().unwrap_or(0));
}

/// [`launched_on`], with the current context asked of `context` only when needed.
fn remember(stream: u64, context: impl FnOnce() -> u64) {
    let stream = match stream {
        rr_cuda::ordered::STREAM_PER_THREAD => key(stream),
        s => s,
    };
    let forgotten = FORGOTTEN.load(Ordering::Relaxed);
    let known = SEEN.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return true;
        };
        if s.forgotten != forgotten {
            *s = Seen {
                streams: [u64::MAX; 8],
                next: 0,
                forgotten,
            };
        }
        if s.streams.contains(&stream) {
            return true;
        }
        let at = s.next % 8;
        s.streams[at] = stream;
        s.next += 1;
        false
    });
    if !known {
        if is_per_thread_key(stream) {
            // Touching the thread-local registers its destructor (the thread's end).
            let _ = PER_THREAD_KEY.try_with(|k| k.0.set(stream));
        }
        let context = context();
        let mut all = lock(&STREAMS);
        if all.len() < MAX_STREAMS && !all.contains(&(stream, context)) {
            all.push((stream, context));
        }
    }
}

/// Whether a remembered stream is a thread's per-thread default stream (see [`key`]).
fn is_per_thread_key(stream: u64) -> bool {
    stream & 0xff == 0x2 && stream > 0xff
}

/// The program is destroying `stream`: it is not asked about again (its handle would be
/// freed memory to the driver). Waits for a query under way.
pub fn forget_stream(stream: u64) {
    lock(&STREAMS).retain(|(s, _)| *s != stream);
    FORGOTTEN.fetch_add(1, Ordering::Relaxed);
}

/// Other streams of `context` with work in flight now, said as notes (the stream of `key`
/// excluded). Other threads' per-thread default streams cannot be asked of. Never while a
/// graph is being captured (asking a capturing stream would end its capture), and no capture
/// begins meanwhile; a stream is not destroyed while it is asked about (the list is held).
pub fn busy_streams(context: u64, key_of_mine: u64) -> Vec<String> {
    let asked = rr_cuda::cupti::outside_any_capture(|| {
        let mut all = lock(&STREAMS);
        let mut notes = Vec::new();
        all.retain(|&(s, c)| {
            if c != context || key(s) == key_of_mine {
                return true;
            }
            if is_per_thread_key(s) {
                // Only its thread can ask about it (the handle means the caller's own stream).
                notes.push(format!(
                    "another thread's per-thread default stream (thread {}) could not be asked whether it had work in flight",
                    s >> 8
                ));
                return true;
            }
            match rr_cuda::ordered::stream_busy(s) {
                Some(true) => {
                    notes.push(format!(
                        "stream {s:#x} had work in flight when the snapshot was taken"
                    ));
                    true
                }
                Some(false) => true,
                None => false,
            }
        });
        notes
    });
    asked.unwrap_or_default()
}

/// A snapshot in flight: the memory it covers, the stream it is ordered on, and the event
/// after its output snapshot (set when the launch returns).
pub struct InFlight {
    pub id: u64,
    pub context: u64,
    /// The stream's key ([`key`]) and the thread that launched.
    pub stream: u64,
    pub thread: u64,
    /// Set once the output snapshot is enqueued (another thread's launch on the same stream
    /// before that lands between the snapshots).
    pub sealed: std::sync::atomic::AtomicBool,
    /// `(start, end)` of each allocation the snapshot covers, in address order.
    pub ranges: Vec<(u64, u64)>,
    pub done: OnceLock<Arc<StreamEvent>>,
    pub notes: Arc<Mutex<Vec<String>>>,
}

/// The snapshots in flight.
#[derive(Default)]
pub struct Races {
    flights: Vec<Arc<InFlight>>,
}

impl Races {
    pub fn start(&mut self, f: Arc<InFlight>) {
        self.flights.push(f);
        IN_FLIGHT.store(self.flights.len(), Ordering::Relaxed);
    }

    pub fn end(&mut self, id: u64) {
        self.flights.retain(|f| f.id != id);
        IN_FLIGHT.store(self.flights.len(), Ordering::Relaxed);
    }

    /// Whether a launch on `stream` (a key) of `context` could race with a snapshot in flight:
    /// one on another stream, or on the same one from another thread between its snapshots.
    pub fn concerns(&self, context: u64, stream: u64) -> bool {
        let me = thread();
        self.flights.iter().any(|f| {
            f.context == context
                && (f.stream != stream || (f.thread != me && !f.sealed.load(Ordering::Acquire)))
        })
    }

    /// A launch of `kernel` on `stream` of `context` whose parameter words are `words`: note
    /// it on every snapshot in flight on another stream whose memory a word points into.
    /// Snapshots whose work is done are forgotten.
    pub fn launched(&mut self, kernel: &str, context: u64, stream: u64, words: &[(u32, u64)]) {
        self.flights
            .retain(|f| !f.done.get().is_some_and(|ev| ev.done().unwrap_or(true)));
        IN_FLIGHT.store(self.flights.len(), Ordering::Relaxed);
        let me = thread();
        for f in &self.flights {
            if f.context != context {
                continue;
            }
            if f.stream == stream {
                // Ordered after the snapshots, unless another thread slipped it in between them.
                if f.thread != me && !f.sealed.load(Ordering::Acquire) {
                    let note = format!(
                        "{} was launched by another thread on the same stream between the snapshots and the kernel",
                        rr_format::text::visible(&rr_format::demangle(kernel))
                    );
                    let mut notes = lock(&f.notes);
                    if notes.len() < 8 && !notes.contains(&note) {
                        notes.push(note);
                    }
                }
                continue;
            }
            let hit = words.iter().find_map(|&(_, v)| {
                let k = f.ranges.partition_point(|r| r.0 <= v).checked_sub(1)?;
                (v < f.ranges[k].1).then_some(f.ranges[k].0)
            });
            if let Some(start) = hit {
                let note = format!(
                    "{} launched on stream {stream:#x} while the snapshot was in flight uses the allocation at {start:#x}",
                    rr_format::text::visible(&rr_format::demangle(kernel))
                );
                let mut notes = lock(&f.notes);
                if notes.len() < 8 && !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remembered(stream: u64) -> bool {
        lock(&STREAMS).iter().any(|(s, _)| *s == stream)
    }

    #[test]
    fn a_stream_handle_given_again_after_its_destruction_is_remembered_again() {
        // The driver hands a destroyed stream's handle to the next stream made; a thread that
        // launched on the old one must not take the new one as known (it would never be asked).
        let handle = 0x7e57_0000_1000;
        remember(handle, || 0);
        assert!(remembered(handle));
        forget_stream(handle);
        assert!(!remembered(handle));
        remember(handle, || 0);
        assert!(remembered(handle), "the reused handle is remembered again");
        forget_stream(handle);
    }

    #[test]
    fn a_threads_per_thread_stream_is_its_own_and_forgotten_at_its_end() {
        let theirs = std::thread::spawn(|| {
            remember(rr_cuda::ordered::STREAM_PER_THREAD, || 0);
            let k = key(rr_cuda::ordered::STREAM_PER_THREAD);
            assert!(is_per_thread_key(k) && remembered(k));
            assert!(!remembered(rr_cuda::ordered::STREAM_PER_THREAD));
            k
        })
        .join()
        .unwrap();
        assert_ne!(theirs, key(rr_cuda::ordered::STREAM_PER_THREAD));
        assert!(!remembered(theirs), "forgotten when its thread ended");
        assert!(!is_per_thread_key(0x2) && !is_per_thread_key(0x7f00_0000_0000));
    }

    #[test]
    fn a_launch_on_another_stream_into_covered_memory_is_noted() {
        let mut r = Races::default();
        let f = Arc::new(InFlight {
            id: 1,
            context: 7,
            stream: 0x10,
            thread: 999,
            sealed: Default::default(),
            ranges: vec![(0x1000, 0x2000), (0x8000, 0x9000)],
            done: OnceLock::new(),
            notes: Arc::default(),
        });
        r.start(f.clone());
        assert!(any_in_flight());
        f.sealed.store(true, Ordering::Release);
        r.launched("k", 7, 0x10, &[(0, 0x1800)]);
        assert!(lock(&f.notes).is_empty(), "the same stream is ordered");
        f.sealed.store(false, Ordering::Release);
        r.launched("k", 7, 0x10, &[(0, 0x1800)]);
        assert!(
            lock(&f.notes)[0].contains("another thread on the same stream"),
            "between the snapshots, another thread's launch lands between them"
        );
        lock(&f.notes).clear();
        r.launched("k", 8, 0x20, &[(0, 0x1800)]);
        assert!(lock(&f.notes).is_empty(), "another context's memory");
        r.launched("k", 7, 0x20, &[(0, 0x2000), (8, 0x7fff)]);
        assert!(lock(&f.notes).is_empty(), "outside every range");
        r.launched("k", 7, 0x20, &[(0, 0x8800)]);
        let notes = lock(&f.notes).clone();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("stream 0x20") && notes[0].contains("0x8000"),
            "{notes:?}"
        );
        r.end(1);
        assert!(!any_in_flight());
    }
}
