//! The index build as a background job: progress and partial ranges stream to a callback,
//! cancellation through a flag. The explorer forwards events into its message channel.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::DiffOutcome;
use crate::snapshot::Snapshot;

#[derive(Debug, Clone, PartialEq)]
pub enum IndexEvent {
    Progress {
        scanned: u64,
        total: u64,
        /// Merged ranges found since the last event (the first may extend the last one before).
        new_ranges: Vec<Range<u64>>,
        /// Differing bytes so far, exact (see [`super::DiffIndex::absorb`]).
        differing_bytes: u64,
    },
    Done(Result<DiffOutcome, String>),
}

/// Work on its own named thread, stopped through a flag the work polls: on [`Worker::cancel`],
/// and on drop, which also waits for the thread (the snapshots it reads outlive no job).
pub struct Worker {
    cancel: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// Run `work` with the cancel flag on a thread named `name`. A thread that cannot be
    /// started runs nothing (its sink never hears from it).
    pub fn spawn(name: &str, work: impl FnOnce(&AtomicBool) + Send + 'static) -> Worker {
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || work(&flag))
            .ok();
        Worker { cancel, handle }
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.cancel();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The index build on a [`Worker`].
pub struct IndexJob(Worker);

impl IndexJob {
    pub fn spawn(
        a: Arc<Snapshot>,
        b: Arc<Snapshot>,
        merge_gap: u64,
        mut sink: impl FnMut(IndexEvent) + Send + 'static,
    ) -> IndexJob {
        IndexJob(Worker::spawn("diff-index", move |flag| {
            let result = super::build_index(&a, &b, merge_gap, flag, |scanned, total, done| {
                sink(IndexEvent::Progress {
                    scanned,
                    total,
                    new_ranges: done.new_ranges.to_vec(),
                    differing_bytes: done.differing_bytes,
                });
            });
            sink(IndexEvent::Done(result.map_err(|e| e.to_string())));
        }))
    }

    pub fn cancel(&self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::DiffIndex;

    #[test]
    fn streams_progress_and_matches_a_direct_build() {
        let dir = tempfile::tempdir().unwrap();
        let a: Vec<u8> = (0..(40u32 << 20)).map(|i| (i % 251) as u8).collect();
        let mut b = a.clone();
        b[5] ^= 1;
        b[(20 << 20) + 3] ^= 1;
        std::fs::write(dir.path().join("a"), &a).unwrap();
        std::fs::write(dir.path().join("b"), &b).unwrap();
        let sa = Arc::new(Snapshot::open(&dir.path().join("a")).unwrap());
        let sb = Arc::new(Snapshot::open(&dir.path().join("b")).unwrap());
        let (tx, rx) = crossbeam_channel::unbounded();
        let _job = IndexJob::spawn(sa, sb, 8, move |e| {
            let _ = tx.send(e);
        });
        let mut streamed = DiffIndex::new(8);
        let mut progress = 0;
        loop {
            match rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap() {
                IndexEvent::Progress {
                    new_ranges,
                    differing_bytes,
                    ..
                } => {
                    progress += 1;
                    streamed.absorb(new_ranges, differing_bytes);
                }
                IndexEvent::Done(r) => {
                    let out = r.unwrap();
                    assert_eq!(out.index.ranges, vec![5..6, (20 << 20) + 3..(20 << 20) + 4]);
                    assert_eq!(streamed, out.index);
                    break;
                }
            }
        }
        assert_eq!(progress, (40u64 << 20).div_ceil(crate::diff::CHUNK));
    }
}
