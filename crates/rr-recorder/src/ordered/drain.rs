//! The drain's queue: recorded launches in the order their snapshots were enqueued, each in a
//! slot sealed when its call returns, and the loop of the recorder's own thread that takes them
//! in that order (what it does with each is [`super::writer`]'s). At the program's end, `finish`
//! waits for what is still in flight and says how long that took.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rr_cuda::PinnedBuffer;

use crate::launch::Pending;
use crate::locks::lock;
use crate::pipeline::Staging;

/// Pinned buffers for copies out of the staging ring: three of 32 MiB keep a copy, a hash and
/// a write in flight.
const HOST_BUFFERS: usize = 3;
const HOST_BUFFER: usize = 32 << 20;
/// A launch whose call has not returned after this long is given up (its slot would otherwise
/// hold every later one back).
const UNSEALED_LIMIT: Duration = Duration::from_secs(30);
/// At the program's end, how long the recorder waits for a kernel of its to finish.
pub(super) const FINISH_LIMIT: Duration = Duration::from_secs(60);

/// A recorded launch once its call returned.
pub enum Sealed {
    /// The kernel ran: an instance, once drained.
    Launched(Box<Pending>),
    /// The launch call failed: its input snapshot ran all the same and is drained (its content
    /// may be what later snapshots expect), but no instance is written.
    Failed(Box<Pending>),
    /// Nothing was enqueued after all (the snapshot was refused): the slot is passed over.
    Nothing,
}

/// A place in the drain's queue, taken when a launch's input snapshot is enqueued and filled
/// when the launch call returns.
pub struct Slot {
    /// The order the drain takes launches in (from 1).
    pub seq: u64,
    /// The context the launch's snapshots are in.
    pub context: u64,
    sealed: Mutex<Option<Sealed>>,
    made: Instant,
}

impl Slot {
    pub fn seal(&self, s: Sealed) {
        *lock(&self.sealed) = Some(s);
    }
}

#[derive(Default)]
pub struct Drain {
    queue: Mutex<VecDeque<Arc<Slot>>>,
    /// The last slot's sequence number.
    last_seq: std::sync::atomic::AtomicU64,
    /// When the program's end began to be waited for (one deadline for all that is left).
    finish_started: std::sync::OnceLock<Instant>,
    changed: Condvar,
    started: AtomicBool,
    /// Pinned buffers of the copies out of the ring (the drain thread's alone).
    pub(super) buffers: Mutex<Option<Staging<PinnedBuffer>>>,
}

impl Drain {
    /// A new slot at the end of the queue (the drain thread starts with the first:
    /// `start_thread` starts it, and returns `false` when there is no recorder to drain for).
    pub fn open(&self, context: u64, start_thread: impl FnOnce() -> bool) -> Arc<Slot> {
        let slot = {
            let mut q = lock(&self.queue);
            // Numbered under the queue's lock: the numbers are the queue's order.
            let slot = Arc::new(Slot {
                seq: self.last_seq.fetch_add(1, Ordering::AcqRel) + 1,
                context,
                sealed: Mutex::new(None),
                made: Instant::now(),
            });
            q.push_back(slot.clone());
            slot
        };
        if !self.started.swap(true, Ordering::AcqRel) && !start_thread() {
            return slot;
        }
        self.changed.notify_all();
        slot
    }

    /// Allocate the page-locked buffers the drain copies through, once: on the program's thread
    /// when a context is set up (allocating them on the drain's thread while a graph is being
    /// captured in global mode would end the capture).
    pub fn prepare(&self) -> Result<(), String> {
        let mut guard = lock(&self.buffers);
        if guard.is_none() {
            let buffers = (0..HOST_BUFFERS)
                .map(|_| PinnedBuffer::new(HOST_BUFFER))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            *guard = Some(Staging::new(buffers));
        }
        Ok(())
    }

    /// Wake the drain (a slot was sealed).
    pub fn poke(&self) {
        self.changed.notify_all();
    }

    /// Wait until everything queued is drained (the program is ending); returns how long. One
    /// deadline for all that is left ([`FINISH_LIMIT`]): then the recorder's waits are given
    /// up (a graph capture left open forbids its copies for good), and the program ends.
    pub fn finish(&self) -> Duration {
        let start = *self.finish_started.get_or_init(Instant::now);
        if !self.started.load(Ordering::Acquire) {
            return Duration::ZERO;
        }
        self.wait_until(start + FINISH_LIMIT, |_| true);
        if !lock(&self.queue).is_empty() {
            rr_cuda::ordered::abandon_waits();
            self.wait_until(Instant::now() + Duration::from_secs(10), |_| true);
        }
        start.elapsed()
    }

    /// Wait until no queued slot is of `contexts` (they are about to be destroyed: what is
    /// pending there must be drained while they live), at most [`FINISH_LIMIT`].
    pub fn flush(&self, contexts: &[u64]) {
        if self.started.load(Ordering::Acquire) {
            self.wait_until(Instant::now() + FINISH_LIMIT, |s| {
                contexts.contains(&s.context)
            });
        }
    }

    /// Wait until no queued slot matches `pending`, or `deadline`.
    fn wait_until(&self, deadline: Instant, pending: impl Fn(&Slot) -> bool) {
        let mut q = lock(&self.queue);
        while q.iter().any(|s| pending(s)) && Instant::now() < deadline {
            self.changed.notify_all();
            q = self
                .changed
                .wait_timeout(q, Duration::from_millis(20))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// The loop of the recorder's thread: takes the slots in order, gives each sealed launch to
    /// `drain_one`, and tells `never_returned` of a launch whose call has not returned after
    /// [`UNSEALED_LIMIT`] (its slot is passed over).
    pub(super) fn run(&self, drain_one: impl Fn(Sealed), never_returned: impl Fn()) {
        loop {
            let head = {
                let mut q = lock(&self.queue);
                loop {
                    if let Some(h) = q.front() {
                        break h.clone();
                    }
                    q = self
                        .changed
                        .wait_timeout(q, Duration::from_millis(50))
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
            };
            let sealed = lock(&head.sealed).take();
            match sealed {
                Some(s) => drain_one(s),
                None if head.made.elapsed() > UNSEALED_LIMIT => never_returned(),
                None => {
                    std::thread::sleep(Duration::from_micros(50));
                    continue;
                }
            }
            lock(&self.queue).pop_front();
            self.changed.notify_all();
        }
    }

    /// Whether the program's end has been waited for longer than [`FINISH_LIMIT`].
    pub(super) fn past_deadline(&self) -> bool {
        self.finish_started
            .get()
            .is_some_and(|t| t.elapsed() > FINISH_LIMIT)
    }
}
