//! The index of differing byte ranges between two snapshots, compared at equal offsets.
//!
//! Ranges are merged for navigation (a changed f32 array leaves an equal byte here and there;
//! one range per byte would bury the reader), but the differing-byte count is exact: it counts
//! the bytes that differ, never the equal bytes a merge spans.

use std::ops::Range;

/// Differing ranges closer than this are merged into one.
pub const DEFAULT_MERGE_GAP: u64 = 8;

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DiffIndex {
    /// Merged ranges: every differing byte is in one, but a range may hold equal bytes.
    pub ranges: Vec<Range<u64>>,
    pub merge_gap: u64,
    /// Bytes that differ, counted one by one.
    differing_bytes: u64,
}

impl DiffIndex {
    pub fn new(merge_gap: u64) -> DiffIndex {
        DiffIndex {
            ranges: Vec::new(),
            merge_gap,
            differing_bytes: 0,
        }
    }

    /// Record a run of differing bytes at or after the last one (merged with it when close).
    pub fn push(&mut self, run: Range<u64>) {
        if run.is_empty() {
            return;
        }
        self.differing_bytes += run.end - run.start;
        self.merge(run);
    }

    /// Record runs of differing bytes (see [`DiffIndex::push`]).
    pub fn extend(&mut self, runs: impl IntoIterator<Item = Range<u64>>) {
        for r in runs {
            self.push(r);
        }
    }

    /// Take in what an index build streamed: ranges already merged (the first may extend our
    /// last one) and the exact count of differing bytes so far.
    pub fn absorb(&mut self, merged: impl IntoIterator<Item = Range<u64>>, differing_bytes: u64) {
        for r in merged {
            self.merge(r);
        }
        self.differing_bytes = differing_bytes;
    }

    fn merge(&mut self, r: Range<u64>) {
        if let Some(last) = self.ranges.last_mut() {
            if r.start <= last.end + self.merge_gap {
                last.end = last.end.max(r.end);
                return;
            }
        }
        self.ranges.push(r);
    }

    /// The number of bytes that differ (exact; not the total length of the merged ranges).
    pub fn differing_bytes(&self) -> u64 {
        self.differing_bytes
    }

    /// The first range that starts after `offset`.
    pub fn next_after(&self, offset: u64) -> Option<Range<u64>> {
        let i = self.ranges.partition_point(|r| r.start <= offset);
        self.ranges.get(i).cloned()
    }

    /// The last range that starts before `offset`.
    pub fn prev_before(&self, offset: u64) -> Option<Range<u64>> {
        let i = self.ranges.partition_point(|r| r.start < offset);
        i.checked_sub(1).map(|i| self.ranges[i].clone())
    }

    /// Ranges overlapping `[a, b)`.
    pub fn within(&self, a: u64, b: u64) -> &[Range<u64>] {
        let lo = self.ranges.partition_point(|r| r.end <= a);
        let hi = self.ranges.partition_point(|r| r.start < b);
        &self.ranges[lo..hi.max(lo)]
    }

    pub fn is_different(&self, offset: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.end <= offset);
        self.ranges.get(i).is_some_and(|r| r.start <= offset)
    }
}

/// Compare `a` and `b` (equal length), which start at `base`, appending differing runs to `out`.
/// Whole blocks are compared with `memcmp` first; only unequal blocks are scanned by word.
pub fn scan(a: &[u8], b: &[u8], base: u64, out: &mut DiffIndex) {
    const BLOCK: usize = 4096;
    debug_assert_eq!(a.len(), b.len());
    let n = a.len().min(b.len());
    let mut block_start = 0;
    while block_start < n {
        let block_end = (block_start + BLOCK).min(n);
        if a[block_start..block_end] != b[block_start..block_end] {
            scan_bytes(
                &a[block_start..block_end],
                &b[block_start..block_end],
                base + block_start as u64,
                out,
            );
        }
        block_start = block_end;
    }
}

fn scan_bytes(a: &[u8], b: &[u8], base: u64, out: &mut DiffIndex) {
    differing_runs(a, b, |run| {
        out.push(base + run.start as u64..base + run.end as u64)
    });
}

/// Call `f` with each maximal run of differing bytes of `a` and `b` (equal length), in order.
/// Equal stretches are skipped 8 bytes at a time: the one scanner of the byte index and of
/// byte-exact element comparison.
pub(crate) fn differing_runs(a: &[u8], b: &[u8], mut f: impl FnMut(Range<usize>)) {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i < n {
        if i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
            i += 8;
            continue;
        }
        if a[i] == b[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && a[i] != b[i] {
            i += 1;
        }
        f(start..i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(a: &[u8], b: &[u8], gap: u64) -> DiffIndex {
        let mut idx = DiffIndex::new(gap);
        for i in 0..a.len() {
            if a[i] != b[i] {
                idx.push(i as u64..i as u64 + 1);
            }
        }
        idx
    }

    #[test]
    fn navigation() {
        let mut idx = DiffIndex::new(0);
        idx.extend([10..20, 30..31, 100..200]);
        assert_eq!(idx.next_after(0), Some(10..20));
        assert_eq!(idx.next_after(10), Some(30..31));
        assert_eq!(idx.next_after(100), None);
        assert_eq!(idx.prev_before(100), Some(30..31));
        assert_eq!(idx.prev_before(10), None);
        assert_eq!(idx.within(15, 101), &[10..20, 30..31, 100..200]);
        assert_eq!(idx.within(20, 30), &[] as &[Range<u64>]);
        assert!(idx.is_different(150) && !idx.is_different(25));
        assert_eq!(idx.differing_bytes(), 111);
    }

    #[test]
    fn merges_close_ranges_but_counts_exactly() {
        let mut idx = DiffIndex::new(8);
        idx.extend([0..4, 10..12, 40..41]);
        assert_eq!(idx.ranges, vec![0..12, 40..41]);
        assert_eq!(
            idx.differing_bytes(),
            7,
            "the 6 equal bytes merged over are not counted"
        );
    }

    fn scanned(a: &[u8], b: &[u8]) -> DiffIndex {
        let mut idx = DiffIndex::new(DEFAULT_MERGE_GAP);
        scan(a, b, 0, &mut idx);
        idx
    }

    #[test]
    fn adjacent_differing_bytes_count_one_each() {
        let a = [0u8; 64];
        let mut b = a;
        b[10..13].fill(1);
        let idx = scanned(&a, &b);
        assert_eq!(idx.ranges.first(), Some(&(10..13)));
        assert_eq!((idx.ranges.len(), idx.differing_bytes()), (1, 3));
    }

    #[test]
    fn distant_differing_bytes_count_two_not_the_span() {
        let a = [0u8; 4096];
        let mut b = a;
        b[100] = 1;
        b[108] = 1;
        let idx = scanned(&a, &b);
        assert_eq!(
            idx.ranges.first(),
            Some(&(100..109)),
            "merged for navigation"
        );
        assert_eq!(idx.ranges.len(), 1);
        assert_eq!(idx.differing_bytes(), 2, "not 9");
    }

    #[test]
    fn streamed_ranges_keep_the_exact_count() {
        let mut idx = DiffIndex::new(8);
        idx.absorb(std::iter::once(0..12), 7);
        idx.absorb([12..20, 100..101], 16);
        assert_eq!(idx.ranges, vec![0..20, 100..101]);
        assert_eq!(idx.differing_bytes(), 16);
    }

    proptest! {
        #[test]
        fn scan_matches_naive(a in proptest::collection::vec(0u8..3, 0..10000), flips in proptest::collection::vec(any::<usize>(), 0..20), gap in 0u64..16) {
            let mut b = a.clone();
            for f in flips { if !b.is_empty() { let i = f % b.len(); b[i] = b[i].wrapping_add(1); } }
            let mut idx = DiffIndex::new(gap);
            scan(&a, &b, 0, &mut idx);
            prop_assert_eq!(idx, naive(&a, &b, gap));
        }
    }
}
