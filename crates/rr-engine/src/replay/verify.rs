//! Replay verification: the replayed memory against the recorded output (LLVM semantics: the whole
//! region, byte for byte, lengths included), or as typed values with tolerances. Uses the
//! comparison engine, so results name arguments and segments and count exactly: a length
//! mismatch is missing bytes, and never verifies.

use super::outcome::VerifyOutcome;
use crate::diff::regions::{self, RegionReport};
use crate::diff::sweep::Sweep;
use crate::diff::text::{group, plural, region_line, Sides};
use crate::diff::{self, Comparison};
use rr_format::memory::MemoryMap;

pub const KEEP: usize = 8;

/// How verification messages name the two sides.
const SIDES: Sides = Sides {
    a: "the recorded output",
    b: "the replay",
};

pub fn verify(
    map: &MemoryMap,
    expected: &[u8],
    replayed: &[u8],
    typed: Option<&Comparison>,
) -> VerifyOutcome {
    let out = diff::index_slices(expected, replayed, diff::index::DEFAULT_MERGE_GAP);
    let cmp = typed.copied().unwrap_or_else(Comparison::bytes);
    // In-memory sources cannot fail.
    let all = regions::compare_regions(map, expected, replayed, &Sweep::new(&cmp, KEEP))
        .unwrap_or_default();
    let passed = out.missing_bytes() == 0
        && match typed {
            Some(_) => all.iter().all(|r| r.result.equal()),
            None => out.index.differing_bytes() == 0,
        };
    // Regions where something differs, within tolerance included (a pass says how close).
    let regions: Vec<RegionReport> = all.into_iter().filter(|r| !r.result.identical()).collect();
    VerifyOutcome {
        passed,
        missing_bytes: out.missing_bytes(),
        differing_bytes: out.index.differing_bytes(),
        differing_ranges: out.index.ranges.len(),
        first_ranges: first(&out.index.ranges),
        regions,
        ..blank(typed, expected.len() as u64, replayed.len() as u64)
    }
}

/// An outcome with nothing found (yet): the comparison `typed` names, and the two lengths.
fn blank(typed: Option<&Comparison>, expected_len: u64, replayed_len: u64) -> VerifyOutcome {
    VerifyOutcome {
        passed: true,
        mode: typed
            .map(|c| c.describe())
            .unwrap_or_else(|| "bytes".into()),
        expected_len,
        replayed_len,
        missing_bytes: 0,
        differing_bytes: 0,
        differing_ranges: 0,
        first_ranges: vec![],
        regions: vec![],
        on_device: false,
        candidate: false,
    }
}

/// The first differing ranges, as `[offset, length]`.
fn first(ranges: &[std::ops::Range<u64>]) -> Vec<[u64; 2]> {
    ranges
        .iter()
        .take(KEEP)
        .map(|r| [r.start, r.end - r.start])
        .collect()
}

/// What [`verify`] says when only `ranges` (sorted file ranges `(offset, length)`, each
/// inside the snapshot) may differ, every other byte shown equal on the device: `replayed`
/// holds the replay's bytes in those ranges (and anything elsewhere), and only they are read.
/// A range is widened to whole elements of the regions it touches, so it must have been read
/// back with [`WIDEN`] bytes either side (clipped to its device range).
pub fn verify_within(
    map: &MemoryMap,
    expected: &[u8],
    replayed: &[u8],
    ranges: &[(u64, u64)],
    typed: Option<&Comparison>,
) -> VerifyOutcome {
    let cmp = typed.copied().unwrap_or_else(Comparison::bytes);
    let sweep = Sweep::new(&cmp, KEEP);
    let len = expected.len() as u64;
    let mut differing_bytes = 0;
    let mut merged: Vec<std::ops::Range<u64>> = Vec::new();
    for &(off, n) in ranges {
        let (s, e) = (off as usize, off.saturating_add(n).min(len) as usize);
        let out = diff::index_slices(
            &expected[s..e],
            &replayed[s..e],
            diff::index::DEFAULT_MERGE_GAP,
        );
        differing_bytes += out.index.differing_bytes();
        for r in out.index.ranges {
            let r = r.start + off..r.end + off;
            match merged.last_mut() {
                Some(last) if r.start <= last.end + diff::index::DEFAULT_MERGE_GAP => {
                    last.end = last.end.max(r.end)
                }
                _ => merged.push(r),
            }
        }
    }
    let mut reports = Vec::new();
    for region in regions::regions(map, len) {
        let size = cmp.dtype.size() as u64;
        // The ranges inside the region, widened to whole elements of it (its element grid
        // starts at its first byte), those that then touch joined: no element counted twice.
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for &(off, n) in ranges {
            let (start, end) = (off.max(region.file_start), (off + n).min(region.file_end));
            if start >= end {
                continue;
            }
            let start = region.file_start + (start - region.file_start) / size * size;
            let end = (region.file_start + (end - region.file_start).div_ceil(size) * size)
                .min(region.file_end);
            match spans.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => spans.push((start, end)),
            }
        }
        let mut result: Option<crate::diff::range::RangeReport> = None;
        for (start, end) in spans {
            let Ok(part) = crate::diff::range::compare_range(
                expected,
                replayed,
                start,
                end,
                &sweep,
                &mut |_| {},
            ) else {
                continue;
            };
            match &mut result {
                None => result = Some(part),
                Some(r) => {
                    r.differing_bytes += part.differing_bytes;
                    r.tail_bytes += part.tail_bytes;
                    r.tail_differing_bytes += part.tail_differing_bytes;
                    r.elements.merge(part.elements, KEEP);
                }
            }
        }
        if let Some(mut result) = result {
            result.bytes = region.file_end - region.file_start;
            reports.push(RegionReport { region, result });
        }
    }
    let passed = match typed {
        Some(_) => reports.iter().all(|r| r.result.equal()),
        None => differing_bytes == 0,
    };
    VerifyOutcome {
        passed,
        differing_bytes,
        differing_ranges: merged.len(),
        first_ranges: first(&merged),
        regions: reports
            .into_iter()
            .filter(|r| !r.result.identical())
            .collect(),
        ..blank(typed, len, len)
    }
}

/// How far a range read back for [`verify_within`] reaches past its ends: the widest element.
pub const WIDEN: u64 = 16;

/// The file range to read back around a range `(off, len)` that may differ, for
/// [`verify_within`]: [`WIDEN`] bytes either side, within the run of device ranges
/// (`copies`: address, file offset, length) that continue one another in memory and in the
/// file, as the chunks of one allocation do (an element of a region may straddle a chunk's
/// edge). None when no range holds it.
pub fn widened(copies: &[(u64, usize, usize)], off: usize, len: usize) -> Option<(usize, usize)> {
    let i = copies
        .iter()
        .position(|c| c.1 <= off && off + len <= c.1 + c.2)?;
    let joined = |a: &(u64, usize, usize), b: &(u64, usize, usize)| {
        a.0.checked_add(a.2 as u64) == Some(b.0) && a.1 + a.2 == b.1
    };
    let mut first = i;
    while first > 0 && joined(&copies[first - 1], &copies[first]) {
        first -= 1;
    }
    let mut last = i;
    while last + 1 < copies.len() && joined(&copies[last], &copies[last + 1]) {
        last += 1;
    }
    let w = WIDEN as usize;
    Some((
        off.saturating_sub(w).max(copies[first].1),
        (off + len + w).min(copies[last].1 + copies[last].2),
    ))
}

/// The outcome of a replay shown equal to the recorded output on the device (`len` bytes).
pub fn equal_on_device(len: u64, typed: Option<&Comparison>) -> VerifyOutcome {
    VerifyOutcome {
        on_device: true,
        ..blank(typed, len, len)
    }
}

/// Human lines for a verification outcome (the `replay` command and the explorer).
pub fn describe(v: &VerifyOutcome) -> Vec<String> {
    let mut out = Vec::new();
    if v.expected_len != v.replayed_len {
        let short = if v.expected_len < v.replayed_len {
            SIDES.a
        } else {
            SIDES.b
        };
        out.push(format!(
            "length differs: the recorded output has {}, the replay {}: {} missing from {short}",
            plural(v.expected_len, "byte", "bytes"),
            plural(v.replayed_len, "byte", "bytes"),
            plural(v.missing_bytes, "byte", "bytes")
        ));
    }
    if v.differing_bytes > 0 {
        out.push(format!(
            "{} byte(s) differ in {} range(s); first at {}",
            group(v.differing_bytes),
            v.differing_ranges,
            v.first_ranges
                .iter()
                .map(|[o, l]| format!("{o:#x}+{l}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for r in &v.regions {
        out.push(region_line(r, SIDES));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_format::descriptor::Segment;

    /// Verifying only the ranges that may differ says what verifying everything says, for
    /// bytes and typed comparisons, however the ranges cut the segments, reading back what a
    /// session reads ([`widened`]): two separate allocations, whose second starts at an odd
    /// offset; and one allocation recorded as three chunks, whose argument starts 2 bytes in
    /// (its elements straddle the chunks' edges).
    #[test]
    fn verifying_within_the_differing_ranges_says_what_verifying_everything_says() {
        use rr_format::descriptor::Argument;
        let separate = (
            MemoryMap::from_parts(
                vec![
                    Segment::device(0x1000, 4099, 0),
                    Segment::device(0x9000, 8192, 4099),
                ],
                &[],
            ),
            vec![(0x1000, 0, 4099), (0x9000, 4099, 8192)],
            5120,
        );
        let pointer = Argument {
            index: 0,
            bytes: 0x1002u64.to_le_bytes().to_vec(),
            word: Some(0x1002),
        };
        let chunked = (
            MemoryMap::from_parts(vec![Segment::device(0x1000, 12288, 0)], &[pointer]),
            vec![
                (0x1000, 0, 4096),
                (0x2000, 4096, 4096),
                (0x3000, 8192, 4096),
            ],
            4096,
        );
        for (layout, (map, copies, edge)) in [separate, chunked].into_iter().enumerate() {
            within_says_what_whole_says(layout, &map, &copies, edge);
        }
    }

    fn within_says_what_whole_says(
        layout: usize,
        map: &MemoryMap,
        copies: &[(u64, usize, usize)],
        edge: usize,
    ) {
        let mut rng = fastrand::Rng::with_seed(7);
        let len = copies.iter().map(|c| c.1 + c.2).max().unwrap_or(0);
        for round in 0..200 {
            let expected: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            let mut replayed = expected.clone();
            // Differences in a few chunks of 1 KiB, some on the element that straddles the
            // boundary of two chunks at `edge`.
            const CHUNK: u64 = 1024;
            let mut chunks = std::collections::BTreeSet::new();
            for k in 0..rng.usize(0..6) {
                let at = if k == 0 && round % 2 == 1 {
                    edge + rng.usize(0..2)
                } else {
                    rng.usize(..len)
                };
                replayed[at] ^= 1 << rng.u8(0..8);
                if round % 3 == 0 {
                    // A float nudged by an ulp: within a typed tolerance.
                    replayed[at & !3] ^= 1;
                }
                for b in [at, at & !3, at.saturating_sub(3)] {
                    if expected[b] != replayed[b] || b == at {
                        chunks.insert(b as u64 / CHUNK);
                    }
                }
                // A chunk may be listed without a difference in it (ranges that may differ):
                // here the one before the straddled boundary.
                if k == 0 && round % 2 == 1 {
                    chunks.insert(at as u64 / CHUNK - 1);
                }
            }
            // Chunks are cut at the copies' edges, as a session's fingerprints are.
            let ranges: Vec<(u64, u64)> = chunks
                .iter()
                .flat_map(|c| {
                    let (s, e) = (c * CHUNK, ((c + 1) * CHUNK).min(len as u64));
                    copies.iter().filter_map(move |&(_, o, n)| {
                        let (s, e) = (s.max(o as u64), e.min((o + n) as u64));
                        (s < e).then(|| (s, e - s))
                    })
                })
                .collect();
            // Bytes outside what is read back are never used: make them garbage.
            let mut partial = vec![0xAAu8; len];
            for &(o, n) in &ranges {
                let (s, e) = widened(copies, o as usize, n as usize).expect("inside a copy");
                partial[s..e].copy_from_slice(&replayed[s..e]);
            }
            let typed = Comparison::parse_spec("f32:rtol=1e-3").unwrap();
            for cmp in [None, Some(&typed)] {
                let whole = verify(map, &expected, &replayed, cmp);
                let within = verify_within(map, &expected, &partial, &ranges, cmp);
                let at = format!("layout {layout}, round {round}");
                assert_eq!(within.passed, whole.passed, "{at}");
                assert_eq!(within.differing_bytes, whole.differing_bytes, "{at}");
                assert_eq!(within.first_ranges, whole.first_ranges, "{at}");
                let key = |v: &VerifyOutcome| {
                    v.regions
                        .iter()
                        .map(|r| {
                            (
                                r.region.label.clone(),
                                r.result.differing_bytes,
                                r.result.elements.beyond_tolerance,
                                r.result.elements.within_tolerance,
                                r.result.equal(),
                            )
                        })
                        .collect::<Vec<_>>()
                };
                assert_eq!(key(&within), key(&whole), "{at}");
            }
        }
    }

    #[test]
    fn reads_back_widen_within_the_chunks_of_one_allocation_only() {
        let copies = [
            (0x1000, 0, 4096),
            (0x2000, 4096, 4096),
            (0x9000, 8192, 4096),
        ];
        // Into the chunk before (the same allocation), not into the next allocation.
        assert_eq!(widened(&copies, 4096, 4096), Some((4080, 8192)));
        assert_eq!(widened(&copies, 8192, 1024), Some((8192, 9232)));
        assert_eq!(widened(&copies, 0, 10), Some((0, 26)));
        assert_eq!(widened(&copies, 12288, 1), None, "outside every copy");
    }

    fn map(size: u64) -> MemoryMap {
        MemoryMap::from_parts(vec![Segment::device(0x1000, size, 0)], &[])
    }
    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    #[test]
    fn byte_and_typed_modes() {
        let a = f32s(&[1.0, 2.0]);
        let b = f32s(&[1.0, f32::from_bits(2.0f32.to_bits() + 1)]);
        let v = verify(&map(8), &a, &b, None);
        assert!(!v.passed);
        assert_eq!(v.first_ranges, vec![[4, 1]]);
        assert!(describe(&v)
            .iter()
            .any(|l| l.contains("segment 0 (0x1000): 1 of 8 bytes differ")));
        let tol = Comparison::parse_spec("f32:ulp=1").unwrap();
        let within = verify(&map(8), &a, &b, Some(&tol));
        assert!(within.passed);
        assert_eq!(within.regions[0].result.elements.within_tolerance, 1);
        assert!(verify(&map(8), &a, &a, None).passed);
    }

    #[test]
    fn a_length_mismatch_is_missing_bytes_and_never_verifies() {
        let a = f32s(&[1.0, 2.0]);
        let tol = Comparison::parse_spec("f32:ulp=1").unwrap();
        for typed in [None, Some(&tol)] {
            let v = verify(&map(8), &a[..4], &a, typed);
            assert!(!v.passed, "{typed:?}");
            assert_eq!((v.missing_bytes, v.differing_bytes), (4, 0));
            let lines = describe(&v);
            assert!(
                lines[0].ends_with("4 bytes missing from the recorded output"),
                "{lines:?}"
            );
            assert!(lines
                .iter()
                .any(|l| l.contains("4 bytes missing from the recorded output")));
        }
        // An expected output longer than the map: the extra bytes are a region too.
        let v = verify(&map(4), &a, &a[..4], None);
        assert!(!v.passed);
        assert_eq!(v.regions.last().unwrap().region.label, "after the segments");
    }
}
