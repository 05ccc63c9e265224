//! The index of differing byte ranges between two snapshots, compared at equal offsets.

use std::ops::Range;

/// Differing ranges closer than this are merged into one (a changed f32 array often leaves an
/// equal byte here and there; one range per element would bury the reader).
pub const DEFAULT_MERGE_GAP: u64 = 8;

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DiffIndex {
    pub ranges: Vec<Range<u64>>,
    pub merge_gap: u64,
}

impl DiffIndex {
    pub fn new(merge_gap: u64) -> DiffIndex {
        DiffIndex {
            ranges: Vec::new(),
            merge_gap,
        }
    }

    /// Append a range at or after the last one, merging with it when close.
    pub fn push(&mut self, r: Range<u64>) {
        if r.is_empty() {
            return;
        }
        if let Some(last) = self.ranges.last_mut() {
            if r.start <= last.end + self.merge_gap {
                last.end = last.end.max(r.end);
                return;
            }
        }
        self.ranges.push(r);
    }

    pub fn extend(&mut self, rs: impl IntoIterator<Item = Range<u64>>) {
        for r in rs {
            self.push(r);
        }
    }

    pub fn differing_bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.end - r.start).sum()
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
    let n = a.len();
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
        out.push(base + start as u64..base + i as u64);
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
    fn merges_close_ranges() {
        let mut idx = DiffIndex::new(8);
        idx.extend([0..4, 10..12, 40..41]);
        assert_eq!(idx.ranges, vec![0..12, 40..41]);
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
