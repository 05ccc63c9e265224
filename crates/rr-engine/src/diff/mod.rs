//! Snapshot comparison: the differing-range index (built in chunks, off the UI thread, with
//! progress and cancellation), typed comparison with tolerances, and per-argument reports.
//! Serves `rr-tui diff`, replay verification and the explorer alike.

pub mod index;
pub mod job;
pub mod regions;
pub mod typed;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

pub use index::DiffIndex;
pub use typed::{Comparison, DType, Tolerance};

use crate::error::Result;
use crate::snapshot::Snapshot;

/// Bytes compared between progress reports, `madvise` releases and truncation checks.
pub const CHUNK: u64 = 8 << 20;

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct DiffOutcome {
    pub len_a: u64,
    pub len_b: u64,
    /// Bytes compared: the common prefix when lengths differ.
    pub compared: u64,
    pub index: DiffIndex,
    pub cancelled: bool,
}

impl DiffOutcome {
    pub fn identical(&self) -> bool {
        !self.cancelled && self.len_a == self.len_b && self.index.ranges.is_empty()
    }
}

/// Build the differing-range index of two snapshots. `on_chunk(scanned, total, new_ranges)` is
/// called after every chunk (new ranges may extend the previous call's last range).
pub fn build_index(
    a: &Snapshot,
    b: &Snapshot,
    merge_gap: u64,
    cancel: &AtomicBool,
    mut on_chunk: impl FnMut(u64, u64, &[Range<u64>]),
) -> Result<DiffOutcome> {
    let compared = a.len().min(b.len());
    let mut out = DiffOutcome {
        len_a: a.len(),
        len_b: b.len(),
        compared,
        index: DiffIndex::new(merge_gap),
        cancelled: false,
    };
    a.advise_sequential();
    b.advise_sequential();
    let mut off = 0u64;
    while off < compared {
        if cancel.load(Ordering::Relaxed) {
            out.cancelled = true;
            out.compared = off;
            break;
        }
        let len = CHUNK.min(compared - off);
        let before = out.index.ranges.len().saturating_sub(1);
        index::scan(
            a.window(off, len as usize),
            b.window(off, len as usize),
            off,
            &mut out.index,
        );
        a.check_intact()?;
        b.check_intact()?;
        a.release(off, len);
        b.release(off, len);
        off += len;
        on_chunk(
            off,
            compared,
            &out.index.ranges[before.min(out.index.ranges.len())..],
        );
    }
    Ok(out)
}

/// Index two in-memory buffers (replay verification reads device memory into host buffers).
pub fn index_slices(a: &[u8], b: &[u8], merge_gap: u64) -> DiffOutcome {
    let compared = a.len().min(b.len()) as u64;
    let mut idx = DiffIndex::new(merge_gap);
    index::scan(
        &a[..compared as usize],
        &b[..compared as usize],
        0,
        &mut idx,
    );
    DiffOutcome {
        len_a: a.len() as u64,
        len_b: b.len() as u64,
        compared,
        index: idx,
        cancelled: false,
    }
}
