//! Replay verification: the replayed memory against the recorded output (LLVM semantics: the whole
//! region, byte for byte, lengths included), or as typed values with tolerances. Uses the
//! comparison engine, so results name arguments and segments.

use super::protocol::VerifyOutcome;
use crate::diff::{self, regions, Comparison};
use rr_format::memory::MemoryMap;

pub const KEEP: usize = 8;

pub fn verify(
    map: &MemoryMap,
    expected: &[u8],
    replayed: &[u8],
    typed: Option<&Comparison>,
) -> VerifyOutcome {
    let out = diff::index_slices(expected, replayed, diff::index::DEFAULT_MERGE_GAP);
    let cmp = typed.copied().unwrap_or_else(Comparison::bytes);
    // In-memory sources cannot fail.
    let regions: Vec<_> = regions::compare_regions(map, expected, replayed, &cmp, KEEP)
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.differing > 0)
        .collect();
    let same_len = expected.len() == replayed.len();
    let passed = same_len
        && if typed.is_some() {
            regions.is_empty()
        } else {
            out.index.ranges.is_empty()
        };
    VerifyOutcome {
        passed,
        mode: typed
            .map(|c| c.describe())
            .unwrap_or_else(|| "bytes".into()),
        expected_len: expected.len() as u64,
        replayed_len: replayed.len() as u64,
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
    }
}

/// Human lines for a verification outcome (the `replay` command and the explorer).
pub fn describe(v: &VerifyOutcome) -> Vec<String> {
    let mut out = Vec::new();
    if v.expected_len != v.replayed_len {
        out.push(format!(
            "length differs: the recorded output has {} bytes, the replay {}",
            v.expected_len, v.replayed_len
        ));
    }
    if v.differing_bytes > 0 {
        out.push(format!(
            "{} byte(s) differ in {} range(s); first at {}",
            regions::group(v.differing_bytes),
            v.differing_ranges,
            v.first_ranges
                .iter()
                .map(|[o, l]| format!("{o:#x}+{l}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for r in &v.regions {
        out.push(r.summary());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_format::descriptor::Segment;

    #[test]
    fn byte_and_typed_modes() {
        let map = MemoryMap::from_parts(
            vec![Segment {
                addr: 0x1000,
                size: 8,
                offset: 0,
            }],
            &[],
        );
        let a: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|f| f.to_le_bytes()).collect();
        let b: Vec<u8> = [1.0f32, f32::from_bits(2.0f32.to_bits() + 1)]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let v = verify(&map, &a, &b, None);
        assert!(!v.passed);
        assert_eq!(v.first_ranges, vec![[4, 1]]);
        assert!(describe(&v)
            .iter()
            .any(|l| l.contains("segment 0 (0x1000): 1 of 8 bytes differ")));
        let tol = Comparison::parse_spec("f32:ulp=1").unwrap();
        assert!(verify(&map, &a, &b, Some(&tol)).passed);
        assert!(!verify(&map, &a, &b[..4], Some(&tol)).passed);
        assert!(verify(&map, &a, &a, None).passed);
    }
}
