//! Searching two snapshots for a byte pattern (a typed value's bytes, or bytes typed as such),
//! forward or back from an offset, in windows so that a multi-GiB snapshot is read a window at
//! a time (its pages given back after each) and a search can be cancelled between windows. The
//! explorer runs it on a worker thread, as it does the difference index.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use memchr::memmem;

use crate::snapshot::Snapshot;

/// Bytes searched per window (the pattern's length less one more overlaps the next window).
pub const WINDOW: u64 = 8 << 20;

/// What to look for and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub pattern: Vec<u8>,
    /// Matches start at multiples of this (a typed value's size; 1 for bytes).
    pub align: u64,
    /// Forward: the first match at or after `from`; back: the last match before it.
    pub from: u64,
    pub forward: bool,
}

/// A match: its offset, and which sides hold the pattern there (`a`, `b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub offset: u64,
    pub in_a: bool,
    pub in_b: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchEvent {
    /// Bytes searched so far, of the bytes there are to search.
    Progress { searched: u64, total: u64 },
    /// The match, or none (`Ok(None)`); `Err` when cancelled.
    Done(Result<Option<Found>, String>),
}

/// The nearest match of `q` in either snapshot, or `None`; `Err` when `cancel` was set.
pub fn find(
    a: &Snapshot,
    b: &Snapshot,
    q: &Query,
    cancel: &AtomicBool,
    mut progress: impl FnMut(u64, u64),
) -> Result<Option<Found>, String> {
    let len = a.len().max(b.len());
    let plen = q.pattern.len() as u64;
    if plen == 0 || plen > len {
        return Ok(None);
    }
    let finder = memmem::Finder::new(&q.pattern);
    let total = if q.forward {
        len.saturating_sub(q.from)
    } else {
        q.from.min(len)
    };
    let mut searched = 0;
    while searched < total {
        if cancel.load(Ordering::Relaxed) {
            return Err("search cancelled".into());
        }
        let step = WINDOW.min(total - searched);
        // The window's start and the bytes a match may start in (it may end past them).
        let start = if q.forward {
            q.from + searched
        } else {
            q.from.min(len) - searched - step
        };
        let hit = [a, b]
            .map(|s| in_window(s, &finder, start, step, plen, q))
            .into_iter()
            .flatten()
            .reduce(|x, y| if q.forward { x.min(y) } else { x.max(y) });
        for s in [a, b] {
            s.release(start, step + plen);
        }
        searched += step;
        progress(searched, total);
        if let Some(offset) = hit {
            let at = |s: &Snapshot| s.window(offset, plen as usize) == q.pattern.as_slice();
            return Ok(Some(Found {
                offset,
                in_a: at(a),
                in_b: at(b),
            }));
        }
    }
    Ok(None)
}

/// The first (forward) or last (back) aligned match of one snapshot starting in
/// `start..start + step`, before `q.from` when going back.
fn in_window(
    s: &Snapshot,
    finder: &memmem::Finder,
    start: u64,
    step: u64,
    plen: u64,
    q: &Query,
) -> Option<u64> {
    let bytes = s.window(start, (step + plen - 1) as usize);
    let aligned = |&o: &u64| o % q.align.max(1) == 0 && o < start + step;
    let mut hits = finder.find_iter(bytes).map(|i| start + i as u64);
    if q.forward {
        hits.find(aligned)
    } else {
        hits.filter(aligned).filter(|&o| o < q.from).last()
    }
}

/// A search on its own thread: events to a callback, cancelled through a flag (and on drop).
pub struct SearchJob(super::job::Worker);

impl SearchJob {
    pub fn spawn(
        a: Arc<Snapshot>,
        b: Arc<Snapshot>,
        query: Query,
        mut sink: impl FnMut(SearchEvent) + Send + 'static,
    ) -> SearchJob {
        SearchJob(super::job::Worker::spawn("snapshot-search", move |flag| {
            let result = find(&a, &b, &query, flag, |searched, total| {
                sink(SearchEvent::Progress { searched, total })
            });
            sink(SearchEvent::Done(result));
        }))
    }

    pub fn cancel(&self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Snapshot {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        Snapshot::open(&p).unwrap()
    }

    /// Matches across window boundaries, on either side, aligned, forward and back.
    #[test]
    fn finds_the_nearest_aligned_match_on_either_side_across_windows() {
        let dir = tempfile::tempdir().unwrap();
        let len = (2 * WINDOW + 100) as usize;
        let mut a = vec![0u8; len];
        let mut b = vec![0u8; len];
        let pat = [0xde, 0xad, 0xbe, 0xef];
        // Across the first window's end, in a only; unaligned in b; near the end in b only.
        let across = WINDOW as usize - 2;
        a[across..across + 4].copy_from_slice(&pat);
        b[WINDOW as usize + 1..WINDOW as usize + 5].copy_from_slice(&pat);
        b[len - 8..len - 4].copy_from_slice(&pat);
        let (sa, sb) = (snapshot(dir.path(), "a", &a), snapshot(dir.path(), "b", &b));
        let no = AtomicBool::new(false);
        let q = |from, forward, align| Query {
            pattern: pat.to_vec(),
            align,
            from,
            forward,
        };
        let found = |q: Query| find(&sa, &sb, &q, &no, |_, _| {}).unwrap();
        let first = found(q(0, true, 1)).unwrap();
        assert_eq!(
            (first.offset, first.in_a, first.in_b),
            (across as u64, true, false)
        );
        let next = found(q(across as u64 + 1, true, 1)).unwrap();
        assert_eq!((next.offset, next.in_b), (WINDOW + 1, true));
        // Aligned to 4: the unaligned ones are skipped.
        let aligned = found(q(0, true, 4)).unwrap();
        assert_eq!(aligned.offset, (len - 8) as u64);
        let last = found(q(len as u64, false, 1)).unwrap();
        assert_eq!(last.offset, (len - 8) as u64);
        let before = found(q(WINDOW + 1, false, 1)).unwrap();
        assert_eq!(before.offset, across as u64);
        assert_eq!(found(q(across as u64, false, 1)), None);
        let stop = AtomicBool::new(true);
        assert!(find(&sa, &sb, &q(0, true, 1), &stop, |_, _| {}).is_err());
    }
}
