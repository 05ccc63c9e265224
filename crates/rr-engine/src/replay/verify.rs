//! Replay verification: the replayed memory against the recorded output (LLVM semantics: the whole
//! region, byte for byte, lengths included), or as typed values with tolerances. Uses the
//! comparison engine, so results name arguments and segments and count exactly: a length
//! mismatch is missing bytes, and never verifies.

use super::protocol::VerifyOutcome;
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
        mode: typed
            .map(|c| c.describe())
            .unwrap_or_else(|| "bytes".into()),
        expected_len: expected.len() as u64,
        replayed_len: replayed.len() as u64,
        missing_bytes: out.missing_bytes(),
        differing_bytes: out.index.differing_bytes(),
        differing_ranges: out.index.ranges.len(),
        first_ranges: out
            .index
            .ranges
            .iter()
            .take(KEEP)
            .map(|r| [r.start, r.end - r.start])
            .collect(),
        regions,
        on_device: false,
        candidate: false,
    }
}

/// The outcome of a replay shown equal to the recorded output on the device (`len` bytes).
pub fn equal_on_device(len: u64, typed: Option<&Comparison>) -> VerifyOutcome {
    VerifyOutcome {
        passed: true,
        mode: typed
            .map(|c| c.describe())
            .unwrap_or_else(|| "bytes".into()),
        expected_len: len,
        replayed_len: len,
        missing_bytes: 0,
        differing_bytes: 0,
        differing_ranges: 0,
        first_ranges: vec![],
        regions: vec![],
        on_device: true,
        candidate: false,
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
