//! Snapshot comparison: the differing-range index (built in chunks, off the UI thread, with
//! progress and cancellation), typed comparison with tolerances on all cores, per-argument
//! reports, descriptor comparison (field by field, and as a line diff of the decoded text:
//! `lines`). Serves `rr-tui diff`, replay verification and the explorer alike.
//!
//! Counting rules, everywhere: a differing byte counts once (ranges are merged for navigation
//! only); bytes present on one side only are *missing*, never equal; elements whose bits differ
//! but pass the tolerance are *within tolerance*, never "equal". Holes of sparse files are
//! skipped (`pieces`).

pub mod descriptor;
pub mod elements;
pub mod index;
pub mod job;
pub mod lines;
pub mod pieces;
pub mod range;
pub mod regions;
pub mod rules;
pub mod search;
pub mod source;
pub mod sweep;
pub mod text;
pub mod typed;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

pub use index::DiffIndex;
pub use rules::{Comparison, Tolerance};
pub use source::Source;
pub use typed::DType;

use crate::error::Result;
use pieces::{for_each_piece, Piece};

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
    /// Bytes present in one file only (past the end of the shorter).
    pub fn missing_bytes(&self) -> u64 {
        self.len_a.abs_diff(self.len_b)
    }

    pub fn identical(&self) -> bool {
        !self.cancelled && self.missing_bytes() == 0 && self.index.differing_bytes() == 0
    }
}

/// What an index build reports after each chunk.
#[derive(Debug, Clone, Copy)]
pub struct ChunkDone<'a> {
    /// Ranges found since the last report (the first may extend the previous report's last).
    pub new_ranges: &'a [Range<u64>],
    /// Differing bytes so far (exact).
    pub differing_bytes: u64,
}

/// Build the differing-range index of two snapshots over their common length, skipping holes.
/// `on_chunk(scanned, total, done)` is called after every chunk.
pub fn build_index<A, B>(
    a: &A,
    b: &B,
    merge_gap: u64,
    cancel: &AtomicBool,
    mut on_chunk: impl FnMut(u64, u64, ChunkDone),
) -> Result<DiffOutcome>
where
    A: Source + ?Sized,
    B: Source + ?Sized,
{
    let compared = a.size().min(b.size());
    let mut out = DiffOutcome {
        len_a: a.size(),
        len_b: b.size(),
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
        for_each_piece(a, b, off, off + len, 0, 1, |p| {
            if let Piece::Bytes { start, a, b } = p {
                index::scan(a, b, start, &mut out.index);
            }
        });
        a.intact()?;
        b.intact()?;
        a.release(off, len);
        b.release(off, len);
        off += len;
        let done = ChunkDone {
            new_ranges: &out.index.ranges[before.min(out.index.ranges.len())..],
            differing_bytes: out.index.differing_bytes(),
        };
        on_chunk(off, compared, done);
    }
    Ok(out)
}

/// Index two in-memory buffers (replay verification reads device memory into host buffers).
pub fn index_slices(a: &[u8], b: &[u8], merge_gap: u64) -> DiffOutcome {
    // In-memory sources have no holes and cannot be truncated: this cannot fail.
    build_index(a, b, merge_gap, &AtomicBool::new(false), |_, _, _| {}).unwrap_or_default()
}
