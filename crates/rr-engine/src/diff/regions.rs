//! Per-argument comparison: "argument 1 (0x7f…): 4 096 of 1 048 576 f32 elements beyond
//! tolerance". Regions come from the record's [`MemoryMap`]; segment bytes no argument points to
//! form regions of their own, and bytes past the recorded segments (a snapshot longer than the
//! map) one more, so that no byte goes unreported.

use serde::{Deserialize, Serialize};

use super::range::{compare_range, RangeReport};
use super::source::Source;
use super::sweep::Sweep;
use crate::error::Result;
use rr_format::memory::MemoryMap;

/// A labelled stretch of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    /// `argument 1`, `segment 0`, or `after the segments`.
    pub label: String,
    pub arg: Option<usize>,
    pub segment: Option<usize>,
    /// The device address of the first byte (none past the segments).
    pub addr: Option<u64>,
    pub file_start: u64,
    pub file_end: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionReport {
    #[serde(flatten)]
    pub region: Region,
    #[serde(flatten)]
    pub result: RangeReport,
}

/// The labelled regions of a map: argument buffers first by file offset, then uncovered bytes;
/// last, the bytes past the segments when a snapshot (of length `longest`) extends beyond them.
pub fn regions(map: &MemoryMap, longest: u64) -> Vec<Region> {
    let mut out = Vec::new();
    let mut map_end = 0;
    for (si, seg) in map.segments.iter().enumerate() {
        let seg_end = seg.offset.saturating_add(seg.size);
        map_end = map_end.max(seg_end);
        let region = |label: String, arg: Option<usize>, start: u64, end: u64| Region {
            label,
            arg,
            segment: Some(si),
            addr: Some(seg.addr.saturating_add(start - seg.offset)),
            file_start: start,
            file_end: end,
        };
        let mut cursor = seg.offset;
        let mut args: Vec<_> = map.args.iter().filter(|a| a.segment == si).collect();
        args.sort_by_key(|a| (a.file_start, a.arg));
        args.dedup_by_key(|a| a.file_start);
        for a in args {
            if a.file_start > cursor {
                out.push(region(map.segment_name(si), None, cursor, a.file_start));
            }
            out.push(region(
                format!("argument {}", a.arg),
                Some(a.arg),
                a.file_start,
                a.file_end,
            ));
            cursor = a.file_end;
        }
        if cursor < seg_end {
            out.push(region(map.segment_name(si), None, cursor, seg_end));
        }
    }
    if longest > map_end {
        out.push(Region {
            label: "after the segments".into(),
            arg: None,
            segment: None,
            addr: None,
            file_start: map_end,
            file_end: longest,
        });
    }
    out
}

/// Compare two snapshots region by region (on all cores within each region).
pub fn compare_regions<A, B>(
    map: &MemoryMap,
    a: &A,
    b: &B,
    sweep: &Sweep,
) -> Result<Vec<RegionReport>>
where
    A: Source + ?Sized,
    B: Source + ?Sized,
{
    regions(map, a.size().max(b.size()))
        .into_iter()
        .map(|region| {
            let result =
                compare_range(a, b, region.file_start, region.file_end, sweep, &mut |_| {})?;
            Ok(RegionReport { region, result })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::rules::Comparison;
    use crate::diff::text::{region_line, Sides};
    use rr_format::descriptor::Segment;

    const SIDES: Sides = Sides { a: "A", b: "B" };

    fn map_of_64_bytes() -> MemoryMap {
        let ptr = |index: usize, w: u64| rr_format::descriptor::Argument {
            index,
            bytes: w.to_le_bytes().to_vec(),
            word: Some(w),
        };
        MemoryMap::from_parts(
            vec![Segment::device(0x1000, 64, 0)],
            &[ptr(1, 0x1010), ptr(2, 0x1030)],
        )
    }

    fn compare(a: &[u8], b: &[u8]) -> Vec<RegionReport> {
        let cmp = Comparison::bytes();
        compare_regions(&map_of_64_bytes(), a, b, &Sweep::new(&cmp, 4)).unwrap()
    }

    #[test]
    fn labels_arguments_and_leftovers() {
        let a = vec![0u8; 64];
        let mut b = a.clone();
        b[20] = 1;
        b[60] = 1;
        let r = compare(&a, &b);
        assert_eq!(r.len(), 3);
        assert_eq!(
            region_line(&r[1], SIDES),
            "argument 1 (0x1010): 1 of 32 bytes differ, first at offset 0x14: 0x00 vs 0x01"
        );
        assert_eq!(
            region_line(&r[0], SIDES),
            "segment 0 (0x1000): all 16 bytes equal"
        );
        assert_eq!((r[2].region.arg, r[2].result.differing_bytes), (Some(2), 1));
    }

    #[test]
    fn a_short_snapshot_leaves_its_regions_missing() {
        let a = vec![0u8; 64];
        let r = compare(&a, &a[..20]);
        assert_eq!(r[1].result.missing_b, 28, "argument 1 is cut at 20");
        assert_eq!(
            region_line(&r[2], SIDES),
            "argument 2 (0x1030): all 16 bytes missing from B"
        );
        assert!(!r[1].result.equal() && r[0].result.equal());
    }

    #[test]
    fn bytes_past_the_segments_are_a_region_of_their_own() {
        let a = vec![0u8; 64];
        let longer = vec![0u8; 70];
        let r = compare(&a, &longer);
        let last = r.last().unwrap();
        assert_eq!(last.region.label, "after the segments");
        assert_eq!((last.result.missing_a, last.result.bytes), (6, 6));
        assert_eq!(
            region_line(last, SIDES),
            "after the segments (file offset 0x40): all 6 bytes missing from A"
        );
    }

    #[test]
    fn reports_survive_the_replay_protocol() {
        let a: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|f| f.to_le_bytes()).collect();
        let b: Vec<u8> = [f32::NAN, 2.5]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let cmp = Comparison {
            dtype: crate::diff::DType::F32,
            ..Comparison::bytes()
        };
        let map = MemoryMap::from_parts(vec![Segment::device(0x1000, 8, 0)], &[]);
        let r = compare_regions(&map, &a[..], &b[..], &Sweep::new(&cmp, 4)).unwrap();
        let json = serde_json::to_string(&r).unwrap();
        let back: Vec<RegionReport> = serde_json::from_str(&json).unwrap();
        assert_eq!(format!("{back:?}"), format!("{r:?}"), "{json}");
    }
}
