//! Where an LLVM 16–17 record's memory was: those recorders dumped the bump-allocated region
//! `[S, S + DeviceMemorySize)` to `.memory` but never wrote `S` (FORMAT.md, "Legacy LLVM records").
//!
//! What is known about `S`: it is the result of a multi-GiB `cuMemAlloc` (so 2 MiB-aligned at
//! least), the first bump allocation sits exactly at `S`, every allocation is 16-byte aligned
//! relative to `S`, and every mapped or private argument's `ArgPtrs[i]` (the begin of its mapped
//! section, *before* `ArgOffsets`) lies inside the region. So the candidates are the aligned
//! starts whose region holds the most 16-byte-aligned pointer-like arguments; the inference is
//! unambiguous when exactly one candidate is best. Values above user space (a double's bits,
//! `~0`) are never candidates; other scalars that happen to look like pointers lie far from the
//! real cluster and are out-voted.
//!
//! Computed by a sweep over the intervals of starts that hold each pointer, so a hostile record
//! (300 000 arguments, a 1 TiB region) costs O(n log n), never one step per candidate.

/// `cuMemAlloc` of large sizes returns 2 MiB-aligned addresses (the driver's large-page size).
pub const CUDA_ALLOC_ALIGN: u64 = 2 << 20;
/// What the H100 driver returned for every `cuMemAlloc` ≥ 64 MiB, in fresh processes: an
/// observation, used only as a second chance and always said so.
pub const OBSERVED_LARGE_ALLOC_ALIGN: u64 = 32 << 20;
/// Arguments below 4 GiB are scalars or null, never device addresses of a multi-GiB region.
const POINTER_FLOOR: u64 = 1 << 32;
/// Device memory is mapped in the process's user address space under unified addressing,
/// which lies below 2^47 on x86-64 and 2^48 on AArch64: larger values (a double's bits, `~0`)
/// are scalars.
const POINTER_CEILING: u64 = 1 << 48;
/// libomptarget's bump allocator hands out 16-byte-aligned offsets from the region start.
const BUMP_ALIGN: u64 = 16;
/// How many best candidates are kept for messages.
pub const LISTED: usize = 8;

/// The best starts at one alignment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Inference {
    /// The alignment assumed for the start.
    pub alignment: u64,
    /// The pointer-like arguments considered: distinct, in [4 GiB, 256 TiB), 16-byte aligned.
    pub pointers: Vec<u64>,
    /// How many of them each best start places inside the region.
    pub inside: usize,
    /// The best starts, lowest first (at most [`LISTED`]).
    pub candidates: Vec<u64>,
    /// How many best starts there are in all.
    pub candidate_count: u64,
    /// The best start that puts the lowest pointer it holds in its first aligned block: right
    /// when the first allocation is an argument, or the arguments start within one alignment.
    pub likely: Option<u64>,
}

impl Inference {
    /// The start, when exactly one is best and it holds at least one pointer.
    pub fn unique(&self) -> Option<u64> {
        (self.candidate_count == 1 && self.inside >= 1).then(|| self.candidates[0])
    }
}

/// What the record's pointer arguments say about its start: the 2 MiB rule, and when that is
/// ambiguous, the 32 MiB second chance if it picks one start holding as many pointers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StartInference {
    pub rule: Inference,
    pub second_chance: Option<Inference>,
}

impl StartInference {
    pub fn of(arg_ptrs: &[u64], region_size: u64) -> StartInference {
        let rule = infer(arg_ptrs, region_size, CUDA_ALLOC_ALIGN);
        let second_chance = (rule.candidate_count > 1 && rule.inside >= 1)
            .then(|| infer(arg_ptrs, region_size, OBSERVED_LARGE_ALLOC_ALIGN))
            .filter(|s| s.unique().is_some() && s.inside == rule.inside);
        StartInference {
            rule,
            second_chance,
        }
    }

    /// The inferred start and the inference that found it.
    pub fn start(&self) -> Option<(u64, &Inference)> {
        if let Some(s) = self.rule.unique() {
            return Some((s, &self.rule));
        }
        let second = self.second_chance.as_ref()?;
        second.unique().map(|s| (s, second))
    }
}

/// The starts `S` aligned to `alignment` (never 0) whose region `[S, S + region_size)` holds the
/// most pointer-like arguments.
pub fn infer(arg_ptrs: &[u64], region_size: u64, alignment: u64) -> Inference {
    let mut pointers: Vec<u64> = arg_ptrs
        .iter()
        .copied()
        .filter(|&v| (POINTER_FLOOR..POINTER_CEILING).contains(&v) && v % BUMP_ALIGN == 0)
        .collect();
    pointers.sort_unstable();
    pointers.dedup();
    // Pointer v is inside for the aligned starts S = k·alignment with v - size < S <= v.
    let mut events: Vec<(u64, i64)> = Vec::with_capacity(pointers.len() * 2);
    for &v in &pointers {
        if region_size == 0 {
            break;
        }
        let hi = v / alignment;
        let lo = ((v + 1).saturating_sub(region_size))
            .div_ceil(alignment)
            .max(1);
        if lo <= hi {
            events.push((lo, 1));
            events.push((hi + 1, -1));
        }
    }
    events.sort_unstable();
    // Runs [first, end) of k holding the most pointers.
    let mut best = 0i64;
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut count = 0i64;
    let mut i = 0;
    while i < events.len() {
        let at = events[i].0;
        while i < events.len() && events[i].0 == at {
            count += events[i].1;
            i += 1;
        }
        let Some(&(next, _)) = events.get(i) else {
            break;
        };
        if count > best {
            best = count;
            runs.clear();
        }
        if count == best && count > 0 {
            runs.push((at, next));
        }
    }
    let candidate_count = runs.iter().map(|&(a, b)| b - a).sum();
    let candidates = runs
        .iter()
        .flat_map(|&(a, b)| (a..b).take(LISTED))
        .take(LISTED)
        .map(|k| k * alignment)
        .collect();
    let in_best_run = |k: u64| {
        let j = runs.partition_point(|&(a, _)| a <= k);
        j > 0 && k < runs[j - 1].1
    };
    let likely = pointers
        .iter()
        .map(|&v| v / alignment)
        .find(|&k| in_best_run(k))
        .map(|k| k * alignment);
    Inference {
        alignment,
        pointers,
        inside: best as usize,
        candidates,
        candidate_count,
        likely,
    }
}

/// Why a start given on the command line looks wrong, if it does (each a sentence).
pub fn doubts_about(start: u64, arg_ptrs: &[u64], region_size: u64) -> Vec<String> {
    let mut out = Vec::new();
    if !start.is_multiple_of(CUDA_ALLOC_ALIGN) {
        out.push(format!(
            "{start:#x} is not 2 MiB-aligned, which no multi-GiB cuMemAlloc returns"
        ));
    }
    let best = infer(arg_ptrs, region_size, CUDA_ALLOC_ALIGN);
    let end = start as u128 + region_size as u128;
    let inside = best
        .pointers
        .iter()
        .filter(|&&v| v >= start && (v as u128) < end)
        .count();
    if inside < best.inside {
        out.push(format!(
            "the region [{start:#x}, {end:#x}) holds {inside} of the pointer-like arguments where {:#x} would hold {}",
            best.likely.or(best.candidates.first().copied()).unwrap_or(0),
            best.inside
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: u64 = 1 << 20;
    const S: u64 = 0x7fe8_9e00_0000;

    #[test]
    fn the_llvm16_fixture_is_unambiguous() {
        // record-fixtures/llvm16-saxpy/rr_saxpy.json: y at S, X[64:] at S + 4352, the double
        // 1.5's bits, n = 1024, dyn_ptr null; an 8 KiB region.
        let args = [
            140632966299648,
            140632966304000,
            4609434218613702656,
            1024,
            0,
        ];
        let i = StartInference::of(&args, 8192);
        let (start, how) = i.start().unwrap();
        assert_eq!(start, 140632966299648);
        assert_eq!(how.alignment, CUDA_ALLOC_ALIGN);
        assert_eq!(how.inside, 2);
        assert_eq!(i.second_chance, None);
    }

    #[test]
    fn small_regions_give_one_candidate() {
        let i = infer(&[S + 0x100, S + 0x2000], 0x4000, CUDA_ALLOC_ALIGN);
        assert_eq!(i.unique(), Some(S));
        assert_eq!(i.inside, 2);
    }

    #[test]
    fn large_regions_are_ambiguous_and_name_the_likely_start() {
        // An 8 MiB region with pointers 1 MiB and 3 MiB past S: starts S - 4 MiB .. S hold both.
        let i = infer(&[S + MIB, S + 3 * MIB], 8 * MIB, CUDA_ALLOC_ALIGN);
        assert_eq!(i.unique(), None);
        assert_eq!(i.inside, 2);
        assert_eq!(i.candidate_count, 3);
        assert_eq!(
            i.candidates,
            vec![S - 4 * MIB, S - 2 * MIB, S],
            "lowest first"
        );
        assert_eq!(i.likely, Some(S));
    }

    #[test]
    fn the_second_chance_uses_the_observed_32_mib_alignment() {
        // s is 32 MiB-aligned; a 16 MiB region with a pointer 3 MiB in: eight 2 MiB-aligned
        // starts fit, one 32 MiB-aligned one.
        let s = 0x7f00_0000_0000u64;
        assert_eq!(s % OBSERVED_LARGE_ALLOC_ALIGN, 0);
        let i = StartInference::of(&[s + 3 * MIB], 16 * MIB);
        assert_eq!(i.rule.unique(), None);
        assert_eq!(i.rule.candidate_count, 8);
        let (start, how) = i.start().unwrap();
        assert_eq!((start, how.alignment), (s, OBSERVED_LARGE_ALLOC_ALIGN));
    }

    #[test]
    fn two_equal_clusters_are_ambiguous() {
        // One pointer near S, one far away: each start holds one; no second chance helps.
        let far = S + (1 << 40);
        let i = StartInference::of(&[S + 0x10, far + 0x10], 0x1000);
        assert_eq!(i.rule.inside, 1);
        assert_eq!(i.rule.candidate_count, 2);
        assert_eq!(i.start(), None);
        assert_eq!(i.rule.likely, Some(S));
    }

    #[test]
    fn scalars_that_look_like_pointers_are_out_voted() {
        let int64 = 0x5555_0000_0000u64;
        let i = infer(&[S, S + 0x400, S + 0x800, int64], 0x1000, CUDA_ALLOC_ALIGN);
        assert_eq!((i.unique(), i.inside), (Some(S), 3));
        // Doubles and ~0 are above every user-space address: not even candidates.
        let i = infer(&[1.5f64.to_bits(), u64::MAX - 15], 0x1000, CUDA_ALLOC_ALIGN);
        assert_eq!(i.pointers, Vec::<u64>::new());
    }

    #[test]
    fn nothing_to_infer_from() {
        for args in [&[][..], &[0, 7, 1024], &[S + 8]] {
            let i = StartInference::of(args, 0x1000);
            assert_eq!(i.start(), None, "{args:?}");
            assert_eq!(i.rule.inside, 0);
            assert_eq!(i.rule.candidate_count, 0);
        }
        assert_eq!(infer(&[S], 0, CUDA_ALLOC_ALIGN).candidate_count, 0);
        // A pointer below the first aligned block has no non-null start.
        assert_eq!(infer(&[1 << 32], 1 << 40, 1 << 33).candidate_count, 0);
    }

    #[test]
    fn given_starts_are_doubted_when_they_miss_pointers() {
        assert!(doubts_about(S, &[S, S + 0x100], 0x1000).is_empty());
        let d = doubts_about(S + 0x10, &[S, S + 0x100], 0x1000);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].contains("not 2 MiB-aligned"));
        assert!(
            d[1].contains(
                "holds 1 of the pointer-like arguments where 0x7fe89e000000 would hold 2"
            ),
            "{d:?}"
        );
    }

    proptest! {
        /// Hostile arguments and sizes never panic or loop per candidate, and whatever is
        /// inferred holds the counted pointers.
        #[test]
        fn never_panics_and_unique_starts_hold_their_pointers(
            args in proptest::collection::vec(any::<u64>(), 0..40),
            size in any::<u64>(),
        ) {
            let size = size % (1 << 41);
            let i = StartInference::of(&args, size);
            if let Some((s, how)) = i.start() {
                prop_assert_eq!(s % how.alignment, 0);
                let held = how.pointers.iter().filter(|&&v| v >= s && (v as u128) < s as u128 + size as u128).count();
                prop_assert_eq!(held, how.inside);
            }
            let _ = doubts_about(size, &args, size);
        }

        /// A region at an aligned start holding 16-aligned pointers, with no stray
        /// pointer-like values, is found whenever the region is at most one alignment long.
        #[test]
        fn small_regions_are_always_recovered(
            block in 1u64..(1 << 26),
            offsets in proptest::collection::vec(0u64..(1 << 17), 1..8),
            scalars in proptest::collection::vec(0u64..(1 << 32), 0..4),
        ) {
            let start = block * CUDA_ALLOC_ALIGN + (1 << 40);
            let size = 1 << 21;
            let mut args: Vec<u64> = offsets.iter().map(|o| start + o * 16).collect();
            args.extend(scalars);
            prop_assert_eq!(StartInference::of(&args, size).start().map(|s| s.0), Some(start));
        }
    }
}
