//! Guards a cheating A/B candidate cannot pass (`replay --candidate` and `ab` alike).
//!
//! - **Poison.** Before every candidate run, the bytes the recorded kernel changed (recorded
//!   output ≠ recorded input) are overwritten with a byte that changes from run to run. A
//!   candidate that writes nothing, or only part, leaves poison there and fails verification;
//!   so does one that "finds" a result left in memory by an earlier run. Bytes the kernel left
//!   as they were are not poisoned: an in-place kernel reads them, and a correct candidate must
//!   see the recorded input there. Before poisoning is trusted, the recorded kernel runs once
//!   on poisoned memory: if it no longer verifies (it reads what it writes: an in-place update
//!   such as `x += y`), poisoning would fail correct candidates too, so it is turned off for that
//!   instance and said.
//! - **Globals.** Every global of the candidate's image (its own `static __device__` caches
//!   too, not only those named as the recorded ones) is put back to its value as loaded before
//!   every run, so a result cached in one cannot be replayed by the next run.
//! - **Rotation.** `ab` times the instances one process can switch between in rounds, instance
//!   after instance, with the candidate kept loaded, and verifies its first run after another
//!   instance's runs and every round's end ([`super::rotation`]): a result kept where no reset
//!   reaches and handed back later is another instance's there.
//! - **Every byte.** Verification compares every byte of every recorded segment (fingerprints
//!   on the GPU, else on the host): writes outside the expected output fail.
//! - **Launch limits.** A candidate whose kernel cannot take the recorded block (registers,
//!   `__launch_bounds__`) is refused before it runs, and a launch the driver refuses is an
//!   error: never a pass.
//! - **Plausibility.** A candidate faster than writing the bytes it must write at the GPU's
//!   peak memory bandwidth allows is flagged as implausible ([`plausibility`]).

use serde::{Deserialize, Serialize};

use crate::diff::index::{scan, DiffIndex};

/// Changed runs closer than this are poisoned as one range (a changed f32 array leaves equal
/// bytes here and there; a memset per byte run would cost more than the kernel).
pub const POISON_GAP: u64 = 64;
/// Ranges poisoned at most (one `cuMemsetD8Async` each, queued before the timed launch): a
/// record with more changed runs has its gaps widened until it fits.
pub const MAX_POISON_RANGES: usize = 4096;
/// The candidate's own globals reset before every run: at most this many bytes in all (more is
/// said, and those beyond are left as loaded).
pub const MAX_OWN_GLOBAL_BYTES: u64 = 64 << 20;

/// The poison bytes, in turn: none is 0x00 or 0xff (what memory and many results hold), and
/// consecutive ones differ, so a result cannot be the poison of the run before.
const PATTERNS: [u8; 16] = [
    0xa5, 0x5a, 0xc3, 0x3c, 0x96, 0x69, 0xe1, 0x1e, 0xd2, 0x2d, 0xb4, 0x4b, 0x87, 0x78, 0xf0, 0x0f,
];

/// The poison byte of candidate run `run` (0-based, counted by the session).
pub fn poison_byte(run: u64) -> u8 {
    PATTERNS[(run % PATTERNS.len() as u64) as usize]
}

/// What is poisoned before each candidate run of one instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoisonPlan {
    /// Device ranges `(address, length)`.
    pub ranges: Vec<(u64, usize)>,
    /// Bytes the recorded output changed (counted one by one): what the kernel must write.
    pub changed_bytes: u64,
}

impl PoisonPlan {
    /// The bytes the ranges cover (changed bytes and the equal bytes merged between them).
    pub fn poisoned_bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.1 as u64).sum()
    }
}

/// The plan for device ranges `copies` (`(address, offset, length)` in the snapshots) of the
/// recorded `input` and `output` snapshots (equal lengths; a range beyond either is skipped).
pub fn plan_poison(copies: &[(u64, usize, usize)], input: &[u8], output: &[u8]) -> PoisonPlan {
    let mut gap = POISON_GAP;
    loop {
        let mut changed = 0;
        let mut ranges = Vec::new();
        for &(addr, off, len) in copies {
            let Some(end) = off.checked_add(len) else {
                continue;
            };
            let (Some(a), Some(b)) = (input.get(off..end), output.get(off..end)) else {
                continue;
            };
            let mut idx = DiffIndex::new(gap);
            scan(a, b, 0, &mut idx);
            changed += idx.differing_bytes();
            ranges.extend(
                idx.ranges
                    .iter()
                    .map(|r| (addr + r.start, (r.end - r.start) as usize)),
            );
        }
        // Wider gaps merge more runs: the count falls until it fits (at worst one range per
        // segment, far below the cap for any record).
        if ranges.len() <= MAX_POISON_RANGES || gap >= 1 << 40 {
            return PoisonPlan {
                ranges,
                changed_bytes: changed,
            };
        }
        gap *= 16;
    }
}

/// Unrecorded mapped bytes poisoned at most (more is left alone, and said).
pub const MAX_UNRECORDED_POISON: u64 = 1 << 30;

/// The parts of the mapped device ranges `mappings` (`(address, size)`) that no recorded
/// segment of `copies` (`(address, offset, length)`) covers: the padding up to the mapping
/// granularity. Nothing recorded lies there, so no correct kernel reads it; a candidate could
/// stash a result there between runs (it is neither restored nor compared), so it is poisoned
/// with the rest.
pub fn unrecorded(mappings: &[(u64, u64)], copies: &[(u64, usize, usize)]) -> Vec<(u64, usize)> {
    let mut covered: Vec<(u64, u64)> = copies
        .iter()
        .map(|&(a, _, l)| (a, a.saturating_add(l as u64)))
        .collect();
    covered.sort_unstable();
    let mut out = Vec::new();
    for &(start, size) in mappings {
        let end = start.saturating_add(size);
        let mut at = start;
        for &(a, b) in covered.iter().filter(|(a, b)| *b > start && *a < end) {
            if a > at {
                out.push((at, (a - at) as usize));
            }
            at = at.max(b);
        }
        if at < end {
            out.push((at, (end - at) as usize));
        }
    }
    out
}

/// Whether a candidate's time is possible for the bytes it must write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "plausibility", rename_all = "snake_case")]
pub enum Plausibility {
    Plausible {
        floor_ns: f64,
    },
    /// Faster than writing the changed bytes that cannot stay in the L2 cache at peak
    /// bandwidth: the candidate did not do the work it was timed for.
    Implausible {
        floor_ns: f64,
    },
    /// No bound: the peak is unknown, or what must be written fits the L2 cache (writes may
    /// still sit there when the kernel ends).
    NotJudged {
        why: String,
    },
}

impl Plausibility {
    pub fn is_implausible(&self) -> bool {
        matches!(self, Plausibility::Implausible { .. })
    }
}

/// Judge `candidate_ns` (the candidate's median kernel time) against the floor: the changed
/// bytes beyond the L2 cache's size (`l2_bytes`) written at `peak_bytes_per_s`. The L2 is
/// write-back, so only what cannot fit there must have reached memory when the kernel ends.
pub fn plausibility(
    candidate_ns: f64,
    changed_bytes: u64,
    peak_bytes_per_s: Option<f64>,
    l2_bytes: u64,
) -> Plausibility {
    let Some(peak) = peak_bytes_per_s.filter(|p| p.is_finite() && *p > 0.0) else {
        return Plausibility::NotJudged {
            why: "the GPU reports no memory clock or bus width".into(),
        };
    };
    let beyond = changed_bytes.saturating_sub(l2_bytes);
    if beyond == 0 {
        return Plausibility::NotJudged {
            why: format!(
                "the {changed_bytes} bytes it must write fit the L2 cache ({l2_bytes} bytes)"
            ),
        };
    }
    let floor_ns = beyond as f64 / peak * 1e9;
    if candidate_ns.is_finite() && candidate_ns < floor_ns {
        Plausibility::Implausible { floor_ns }
    } else {
        Plausibility::Plausible { floor_ns }
    }
}

/// The global variables an image defines, by name: a cubin's data symbols, or a PTX module's
/// `.global` and `.const` declarations. A fatbin says nothing without the driver: empty.
pub fn image_globals(image: &[u8]) -> Vec<String> {
    if let Ok(info) = rr_format::image::identify(image, std::path::Path::new("candidate")) {
        if !info.globals.is_empty() {
            return info.globals.into_iter().map(|g| g.name).collect();
        }
        if !matches!(info.kind, rr_format::image::ImageKind::Ptx { .. }) {
            return Vec::new();
        }
    }
    let Ok(text) = std::str::from_utf8(image) else {
        return Vec::new();
    };
    text.lines().filter_map(ptx_global_name).collect()
}

/// The name a PTX module-scope declaration (`.visible .global .align 4 .b8 cache[64];`,
/// `.global .u32 done = 1;`, `.const …`) declares; `None` for anything else (parameters and
/// locals are indented inside functions, and `.shared` is not a global).
fn ptx_global_name(line: &str) -> Option<String> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    let space = words
        .iter()
        .position(|w| *w == ".global" || *w == ".const")?;
    if words[..space]
        .iter()
        .any(|w| !matches!(*w, ".visible" | ".weak" | ".extern"))
    {
        return None;
    }
    // The name is the first word after the state space that is not a directive (`.align 4`'s
    // number included), cut at an array bound or an initialiser.
    let name = words[space + 1..]
        .iter()
        .find(|w| !w.starts_with('.') && !w.bytes().all(|b| b.is_ascii_digit()))?;
    let name = name.split(['[', '=']).next()?;
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$');
    ok.then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poison_changes_every_run_and_is_never_blank() {
        for run in 0..1000u64 {
            let (a, b) = (poison_byte(run), poison_byte(run + 1));
            assert_ne!(a, b, "run {run}");
            assert!(a != 0 && a != 0xff);
        }
    }

    #[test]
    fn only_changed_bytes_are_poisoned() {
        // Two segments: the first changes bytes 4..8 and 100..104 (apart: two ranges), the
        // second 0..2 and 10..12 (within the gap: one range); equal segments give none.
        let input = vec![0u8; 400];
        let mut output = input.clone();
        output[4..8].fill(1);
        output[100..104].fill(2);
        output[200..202].fill(3);
        output[210..212].fill(4);
        let copies = [(0x1000, 0, 200), (0x9000, 200, 100), (0xa000, 300, 100)];
        let p = plan_poison(&copies, &input, &output);
        assert_eq!(
            p.ranges,
            vec![(0x1004, 4), (0x1064, 4), (0x9000, 12)],
            "{p:?}"
        );
        assert_eq!(p.changed_bytes, 12);
        assert_eq!(p.poisoned_bytes(), 20);
        // Nothing changed: nothing to poison. A range beyond the snapshot is skipped.
        assert!(plan_poison(&copies, &input, &input).ranges.is_empty());
        assert!(plan_poison(&[(0, 390, 20)], &input, &output)
            .ranges
            .is_empty());
    }

    #[test]
    fn the_padding_around_recorded_segments_is_found() {
        // One 2 MiB mapping holding two segments, one mapping wholly covered, one with none.
        let m = [
            (0x20_0000, 0x20_0000),
            (0x60_0000, 0x1000),
            (0x80_0000, 0x1000),
        ];
        let copies = [
            (0x20_1000, 0, 0x100),
            (0x20_0000, 0x100, 0x800),
            (0x60_0000, 0x900, 0x1000),
        ];
        assert_eq!(
            unrecorded(&m, &copies),
            vec![
                (0x20_0800, 0x800),
                (0x20_1100, 0x20_0000 - 0x1100),
                (0x80_0000, 0x1000)
            ]
        );
        assert!(unrecorded(&[], &copies).is_empty());
    }

    #[test]
    fn many_runs_are_merged_below_the_cap() {
        // Every 128th byte changes: 8192 runs, too many at the default gap.
        let input = vec![0u8; 1 << 20];
        let mut output = input.clone();
        for i in (0..output.len()).step_by(128) {
            output[i] = 7;
        }
        let p = plan_poison(&[(0x10000, 0, 1 << 20)], &input, &output);
        assert!(p.ranges.len() <= MAX_POISON_RANGES, "{}", p.ranges.len());
        assert_eq!(p.changed_bytes, 8192);
        // Every changed byte is still covered.
        for i in (0..output.len()).step_by(128) {
            let a = 0x10000 + i as u64;
            assert!(p.ranges.iter().any(|&(s, l)| s <= a && a < s + l as u64));
        }
    }

    #[test]
    fn a_time_below_the_bandwidth_floor_is_implausible() {
        let peak = Some(3.35e12);
        let l2 = 50 << 20;
        // 1 GiB beyond the L2 at 3.35 TB/s takes at least ~305 µs.
        let gib = 1u64 << 30;
        match plausibility(100_000.0, gib + l2, peak, l2) {
            Plausibility::Implausible { floor_ns } => {
                assert!((floor_ns - 320_519.0).abs() < 1000.0, "{floor_ns}")
            }
            other => panic!("{other:?}"),
        }
        assert!(!plausibility(400_000.0, gib + l2, peak, l2).is_implausible());
        // What fits the L2, or a GPU without a peak, is not judged.
        assert!(matches!(
            plausibility(1.0, l2, peak, l2),
            Plausibility::NotJudged { .. }
        ));
        assert!(matches!(
            plausibility(1.0, gib, None, l2),
            Plausibility::NotJudged { .. }
        ));
        let json = serde_json::to_string(&plausibility(1.0, gib + l2, peak, l2)).unwrap();
        assert!(
            json.starts_with("{\"plausibility\":\"implausible\""),
            "{json}"
        );
    }

    #[test]
    fn ptx_globals_are_found_and_locals_are_not() {
        let ptx = "\
.version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .b8 cache[4096];
.global .u32 done = 1;
.const .align 8 .u64 table[4];
.extern .shared .align 16 .b8 smem[];
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .b32 %r<4>;
\tret;
}
";
        assert_eq!(image_globals(ptx.as_bytes()), ["cache", "done", "table"]);
        assert!(image_globals(b"garbage").is_empty());
    }
}
