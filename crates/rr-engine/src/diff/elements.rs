//! Two byte slices compared element by element, with every count a report needs: elements
//! beyond tolerance, within tolerance (bits differ, the rules let them pass), NaN and infinity
//! mismatches, the largest distances between finite elements, and the exact differing bytes.

use serde::{Deserialize, Serialize};

use super::rules::{compare_element, float_pair, ulp_bits, Comparison, ElementResult};
use super::typed::{raw, shortest, DType, Value};

/// One element pair that fails the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    pub index: u64,
    pub offset: u64,
    /// The elements as [`shortest`] values: in JSON their shortest digits, printed alike by
    /// [`super::typed::format_value`].
    pub a: Value,
    pub b: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TypedStats {
    /// Elements compared.
    pub compared: u64,
    /// Bytes that differ inside them, counted one by one.
    pub differing_bytes: u64,
    /// Elements that fail the comparison.
    pub beyond_tolerance: u64,
    /// Elements whose bits differ but that pass: within atol/rtol/ulp, +0 against -0, or two
    /// NaNs with different payloads.
    pub within_tolerance: u64,
    /// Failing elements that are NaN on one side only.
    pub nan_vs_number: u64,
    /// Failing elements with an infinity against a finite number or the other infinity.
    pub infinity_vs_other: u64,
    /// The largest |a - b| over element pairs of finite numbers whose bits differ.
    pub max_abs_diff: Option<Value>,
    /// The largest ULP distance over the same pairs (floats only).
    pub max_ulp: Option<u64>,
    /// The first failing elements, in file order.
    pub first: Vec<Mismatch>,
}

impl TypedStats {
    /// Elements with identical bits.
    pub fn equal(&self) -> u64 {
        self.compared - self.beyond_tolerance - self.within_tolerance
    }

    /// Add the counts of `o`, which comes after `self` in file order.
    pub fn merge(&mut self, o: TypedStats, keep: usize) {
        self.compared += o.compared;
        self.differing_bytes += o.differing_bytes;
        self.beyond_tolerance += o.beyond_tolerance;
        self.within_tolerance += o.within_tolerance;
        self.nan_vs_number += o.nan_vs_number;
        self.infinity_vs_other += o.infinity_vs_other;
        if let Some(d) = o.max_abs_diff {
            self.raise_abs_diff(d);
        }
        self.max_ulp = self.max_ulp.max(o.max_ulp);
        let room = keep.saturating_sub(self.first.len());
        self.first.extend(o.first.into_iter().take(room));
    }

    fn raise_abs_diff(&mut self, d: Value) {
        let larger = match (self.max_abs_diff, d) {
            (None, _) => true,
            (Some(Value::Float(m)), Value::Float(x)) => x > m,
            (Some(Value::Int(m)), Value::Int(x)) => x > m,
            _ => false, // one comparison has one element type
        };
        if larger {
            self.max_abs_diff = Some(d);
        }
    }

    /// Count one element pair whose bits differ in `differing_bytes` bytes.
    #[inline]
    fn record(
        &mut self,
        r: ElementResult,
        differing_bytes: u32,
        keep: usize,
        mismatch: impl FnOnce() -> Mismatch,
    ) {
        self.differing_bytes += differing_bytes as u64;
        match r {
            ElementResult::Equal => return,
            ElementResult::Numbers { abs_diff, ulp, .. } => {
                self.raise_abs_diff(abs_diff);
                self.max_ulp = self.max_ulp.max(ulp);
            }
            ElementResult::BothNan => {}
            ElementResult::NanVsNumber => self.nan_vs_number += 1,
            ElementResult::Infinity => self.infinity_vs_other += 1,
        }
        if r.pass() {
            self.within_tolerance += 1;
        } else {
            self.beyond_tolerance += 1;
            if self.first.len() < keep {
                self.first.push(mismatch());
            }
        }
    }
}

/// How many of the 8 bytes of `x` are not zero (`x` is the XOR of two elements).
#[inline]
pub(crate) fn nonzero_bytes(x: u64) -> u32 {
    // Fold each byte's bits into its lowest bit, then count those.
    let mut t = x | (x >> 4);
    t |= t >> 2;
    t |= t >> 1;
    (t & 0x0101_0101_0101_0101).count_ones()
}

/// Compare whole elements of `a` and `b` (equal length); `base` is the file offset of `a[0]`,
/// `first_index` the element index of `a[0]`. Equal 64 KiB blocks are skipped with one memcmp.
pub fn compare(
    cmp: &Comparison,
    a: &[u8],
    b: &[u8],
    base: u64,
    first_index: u64,
    keep: usize,
) -> TypedStats {
    let size = cmp.dtype.size();
    let n = a.len().min(b.len()) / size * size;
    let mut st = TypedStats {
        compared: (n / size) as u64,
        ..Default::default()
    };
    const BLOCK: usize = 64 * 1024;
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK).min(n);
        let (ba, bb) = (&a[start..end], &b[start..end]);
        if ba != bb {
            let blk = Block {
                cmp,
                base: base + start as u64,
                first_index: first_index + (start / size) as u64,
                keep,
            };
            // The common cases get loops the compiler can keep tight (one per byte order).
            let f32_value = |bits: u64| f32::from_bits(bits as u32) as f64;
            match (cmp.dtype, cmp.big_endian) {
                (DType::F32, false) => float_block(&blk, ba, bb, &mut st, u32_le, f32_value),
                (DType::F32, true) => float_block(&blk, ba, bb, &mut st, u32_be, f32_value),
                (DType::F64, false) => {
                    float_block(&blk, ba, bb, &mut st, u64::from_le_bytes, f64::from_bits)
                }
                (DType::F64, true) => {
                    float_block(&blk, ba, bb, &mut st, u64::from_be_bytes, f64::from_bits)
                }
                _ if cmp.is_bytes() => byte_block(&blk, ba, bb, &mut st),
                _ => generic_block(&blk, ba, bb, &mut st),
            }
        }
        start = end;
    }
    st
}

fn u32_le(c: [u8; 4]) -> u64 {
    u32::from_le_bytes(c) as u64
}
fn u32_be(c: [u8; 4]) -> u64 {
    u32::from_be_bytes(c) as u64
}

/// Where a block of elements sits: its file offset and the index of its first element.
struct Block<'a> {
    cmp: &'a Comparison,
    base: u64,
    first_index: u64,
    keep: usize,
}

/// The counts of one block of floats, kept in registers: folding an `Option<Value>` into
/// [`TypedStats`] per element cost a fifth more time when every element differs.
#[derive(Default)]
struct FloatTally {
    differing_bytes: u64,
    within: u64,
    beyond: u64,
    nan_vs_number: u64,
    infinity: u64,
    /// Negative: no pair of finite numbers yet.
    max_abs_diff: f64,
    max_ulp: u64,
}

impl FloatTally {
    fn into_stats(self, st: &mut TypedStats) {
        st.differing_bytes += self.differing_bytes;
        st.within_tolerance += self.within;
        st.beyond_tolerance += self.beyond;
        st.nan_vs_number += self.nan_vs_number;
        st.infinity_vs_other += self.infinity;
        if self.max_abs_diff >= 0.0 {
            st.raise_abs_diff(Value::Float(self.max_abs_diff));
            st.max_ulp = st.max_ulp.max(Some(self.max_ulp));
        }
    }
}

#[inline]
fn float_block<const N: usize>(
    blk: &Block,
    a: &[u8],
    b: &[u8],
    st: &mut TypedStats,
    bits: impl Fn([u8; N]) -> u64,
    value: impl Fn(u64) -> f64,
) {
    let t = blk.cmp.tolerance;
    let dtype = blk.cmp.dtype;
    let mut tally = FloatTally {
        max_abs_diff: -1.0,
        ..Default::default()
    };
    for (k, (ca, cb)) in a.chunks_exact(N).zip(b.chunks_exact(N)).enumerate() {
        let (ca, cb): ([u8; N], [u8; N]) = (
            ca.try_into().expect("chunk of N"),
            cb.try_into().expect("chunk of N"),
        );
        if ca == cb {
            continue;
        }
        let (ra, rb) = (bits(ca), bits(cb));
        let (x, y) = (value(ra), value(rb));
        tally.differing_bytes += nonzero_bytes(ra ^ rb) as u64;
        match float_pair(x, y, &t, || ulp_bits(ra, rb, (N * 8) as u32)) {
            ElementResult::Numbers {
                pass,
                abs_diff: Value::Float(d),
                ulp,
            } => {
                tally.max_abs_diff = tally.max_abs_diff.max(d);
                tally.max_ulp = tally.max_ulp.max(ulp.unwrap_or(0));
                if pass {
                    tally.within += 1;
                    continue;
                }
            }
            ElementResult::BothNan | ElementResult::Equal => {
                tally.within += 1;
                continue;
            }
            ElementResult::NanVsNumber => tally.nan_vs_number += 1,
            ElementResult::Infinity => tally.infinity += 1,
            ElementResult::Numbers { .. } => unreachable!("floats have float distances"),
        }
        tally.beyond += 1;
        if st.first.len() < blk.keep {
            st.first.push(Mismatch {
                index: blk.first_index + k as u64,
                offset: blk.base + (k * N) as u64,
                a: Value::Float(shortest(dtype, x)),
                b: Value::Float(shortest(dtype, y)),
            });
        }
    }
    tally.into_stats(st);
}

/// Bytes without tolerance: every differing byte fails.
fn byte_block(blk: &Block, a: &[u8], b: &[u8], st: &mut TypedStats) {
    super::index::differing_runs(a, b, |run| {
        for i in run {
            let r = ElementResult::Numbers {
                pass: false,
                abs_diff: Value::Int((a[i] as i128 - b[i] as i128).abs()),
                ulp: None,
            };
            st.record(r, 1, blk.keep, || Mismatch {
                index: blk.first_index + i as u64,
                offset: blk.base + i as u64,
                a: Value::Int(a[i] as i128),
                b: Value::Int(b[i] as i128),
            });
        }
    });
}

fn generic_block(blk: &Block, a: &[u8], b: &[u8], st: &mut TypedStats) {
    let Block {
        cmp,
        base,
        first_index,
        keep,
    } = *blk;
    let size = cmp.dtype.size();
    let value = |e: &[u8]| match super::typed::decode(cmp.dtype, e, cmp.big_endian) {
        Value::Float(x) => Value::Float(shortest(cmp.dtype, x)),
        v => v,
    };
    for off in (0..a.len()).step_by(size) {
        let (ea, eb) = (&a[off..off + size], &b[off..off + size]);
        if ea == eb {
            continue;
        }
        let r = compare_element(cmp, ea, eb);
        st.record(
            r,
            nonzero_bytes(raw(ea, false) ^ raw(eb, false)),
            keep,
            || Mismatch {
                index: first_index + (off / size) as u64,
                offset: base + off as u64,
                a: value(ea),
                b: value(eb),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::rules::Tolerance;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn cmp(dtype: DType, big_endian: bool, tolerance: Tolerance) -> Comparison {
        Comparison {
            dtype,
            big_endian,
            tolerance,
        }
    }

    #[test]
    fn counts_beyond_within_and_special_values() {
        let c = cmp(
            DType::F32,
            false,
            Tolerance {
                rtol: 1e-6,
                ..Default::default()
            },
        );
        let a = f32s(&[1.0, f32::NAN, 0.0, f32::INFINITY, 1.0, 2.0, 5.0, 7.0]);
        let b = f32s(&[1.0 + 1e-7, f32::NAN, -0.0, 3.0, f32::NAN, 3.5, 5.0, 7.0]);
        let st = compare(&c, &a, &b, 0, 0, 10);
        assert_eq!(st.compared, 8);
        assert_eq!(st.beyond_tolerance, 3, "inf vs 3, 1 vs NaN, 2 vs 3.5");
        assert_eq!(st.within_tolerance, 2, "1 ULP off, and +0 vs -0");
        assert_eq!(st.equal(), 3, "identical bits (the NaNs included)");
        assert_eq!((st.nan_vs_number, st.infinity_vs_other), (1, 1));
        assert_eq!(
            st.max_abs_diff,
            Some(Value::Float(1.5)),
            "finite pairs only"
        );
        assert_eq!(
            st.first.iter().map(|m| m.index).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
        assert_eq!(st.first[1].offset, 16);
        // The 1-ULP pair differs in one byte, +0/-0 in one, the three failing pairs in more.
        let exact = a.iter().zip(&b).filter(|(x, y)| x != y).count() as u64;
        assert_eq!(st.differing_bytes, exact);
    }

    #[test]
    fn mismatches_print_in_their_own_type() {
        let c = cmp(DType::F32, false, Tolerance::default());
        let st = compare(&c, &f32s(&[0.1]), &f32s(&[0.2]), 0, 0, 1);
        let json = serde_json::to_string(&st.first[0]).unwrap();
        assert_eq!(json, r#"{"index":0,"offset":0,"a":0.1,"b":0.2}"#);
    }

    #[test]
    fn integer_distances_are_exact() {
        let c = cmp(DType::U64, false, Tolerance::default());
        let st = compare(&c, &0u64.to_le_bytes(), &u64::MAX.to_le_bytes(), 0, 0, 1);
        assert_eq!(st.max_abs_diff, Some(Value::Int(u64::MAX as i128)));
        assert_eq!((st.beyond_tolerance, st.differing_bytes), (1, 8));
    }

    #[test]
    fn nonzero_bytes_counts_bytes_not_bits() {
        assert_eq!(nonzero_bytes(0), 0);
        assert_eq!(nonzero_bytes(0xff00_0000_0000_0001), 2);
        assert_eq!(nonzero_bytes(0x8080_8080_8080_8080), 8);
        assert_eq!(nonzero_bytes(0x0100), 1);
    }

    #[test]
    fn fast_paths_agree_with_the_generic_one() {
        let a: Vec<u8> = (0..4096u32)
            .flat_map(|i| (i as f32 * 0.37).to_le_bytes())
            .collect();
        let mut b = a.clone();
        for i in (0..b.len()).step_by(28) {
            b[i] ^= 3;
        }
        b[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        b[40..44].copy_from_slice(&f32::INFINITY.to_le_bytes());
        for (dtype, big) in [
            (DType::F32, false),
            (DType::F32, true),
            (DType::F64, false),
            (DType::F64, true),
            (DType::U8, false),
        ] {
            let t = match dtype {
                DType::U8 => Tolerance::default(),
                _ => Tolerance {
                    atol: 0.0,
                    rtol: 1e-7,
                    ulp: 2,
                },
            };
            let c = cmp(dtype, big, t);
            let fast = compare(&c, &a, &b, 100, 7, 5);
            let mut slow = TypedStats {
                compared: fast.compared,
                ..Default::default()
            };
            let blk = Block {
                cmp: &c,
                base: 100,
                first_index: 7,
                keep: 5,
            };
            generic_block(&blk, &a, &b, &mut slow);
            // NaN != NaN: compare renderings.
            assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{dtype:?} {big}");
            assert!(fast.beyond_tolerance > 0);
        }
    }
}
