//! Typed element comparison with tolerances.
//!
//! An element passes when its bits are equal, or `|a - b| <= atol + rtol * |b|` (b is the
//! reference, numpy's `isclose` convention), or (floats) the ULP distance is at most `ulp`.
//! NaN matches NaN whatever the payload; NaN never matches a number; +0 matches -0; an infinity
//! matches only the same infinity.

use half::{bf16, f16};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl DType {
    pub const ALL: [DType; 12] = [
        DType::U8,
        DType::I8,
        DType::U16,
        DType::I16,
        DType::U32,
        DType::I32,
        DType::U64,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    pub fn size(self) -> usize {
        match self {
            DType::U8 | DType::I8 => 1,
            DType::U16 | DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 => 8,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }
    pub fn name(self) -> &'static str {
        match self {
            DType::U8 => "u8",
            DType::I8 => "i8",
            DType::U16 => "u16",
            DType::I16 => "i16",
            DType::U32 => "u32",
            DType::I32 => "i32",
            DType::U64 => "u64",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
    pub fn parse(s: &str) -> Option<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == s.to_ascii_lowercase())
    }
    pub fn next(self) -> DType {
        let i = DType::ALL.iter().position(|&d| d == self).unwrap_or(0);
        DType::ALL[(i + 1) % DType::ALL.len()]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
    pub ulp: u64,
}
use serde::Serialize;

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            atol: 0.0,
            rtol: 0.0,
            ulp: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    pub dtype: DType,
    pub big_endian: bool,
    pub tolerance: Tolerance,
}

impl Comparison {
    pub fn bytes() -> Comparison {
        Comparison {
            dtype: DType::U8,
            big_endian: false,
            tolerance: Tolerance::default(),
        }
    }

    /// Parse `TYPE[:atol=X,rtol=Y,ulp=N]` (the replay `--tolerance` syntax).
    ///
    /// ```
    /// use rr_engine::diff::{Comparison, DType};
    /// let c = Comparison::parse_spec("f32:rtol=1e-5,ulp=4").unwrap();
    /// assert_eq!((c.dtype, c.tolerance.ulp), (DType::F32, 4));
    /// assert!(Comparison::parse_spec("f32:speed=1").is_err());
    /// ```
    pub fn parse_spec(spec: &str) -> Result<Comparison, String> {
        let (ty, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let dtype = DType::parse(ty).ok_or_else(|| {
            format!("unknown element type {ty:?} (u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)")
        })?;
        let mut t = Tolerance::default();
        let mut big_endian = false;
        for part in rest.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("tolerance {part:?} is not key=value"))?;
            let bad = || format!("tolerance {k}={v:?} is not a non-negative number");
            match k {
                "atol" => t.atol = v.parse().ok().filter(|x: &f64| *x >= 0.0).ok_or_else(bad)?,
                "rtol" => t.rtol = v.parse().ok().filter(|x: &f64| *x >= 0.0).ok_or_else(bad)?,
                "ulp" => t.ulp = v.parse().map_err(|_| bad())?,
                "endian" => {
                    big_endian = match v {
                        "big" => true,
                        "little" => false,
                        _ => return Err(format!("endian={v:?}: expected big or little")),
                    }
                }
                _ => return Err(format!("unknown tolerance {k:?} (atol, rtol, ulp, endian)")),
            }
        }
        if t.ulp > 0 && !dtype.is_float() {
            return Err(format!(
                "ulp applies to float types only (f16 bf16 f32 f64), not {}",
                dtype.name()
            ));
        }
        Ok(Comparison {
            dtype,
            big_endian,
            tolerance: t,
        })
    }

    /// The spec [`Comparison::parse_spec`] reads back to this comparison (floats in their
    /// shortest round-trip form, so nothing is lost on the way to a child process).
    pub fn to_spec(&self) -> String {
        let t = self.tolerance;
        format!(
            "{}:atol={},rtol={},ulp={}{}",
            self.dtype.name(),
            t.atol,
            t.rtol,
            t.ulp,
            if self.big_endian { ",endian=big" } else { "" }
        )
    }

    pub fn describe(&self) -> String {
        let t = self.tolerance;
        let mut s = self.dtype.name().to_string();
        if self.big_endian {
            s.push_str(" (big endian)");
        }
        if t != Tolerance::default() {
            s.push_str(&format!(" atol={} rtol={} ulp={}", t.atol, t.rtol, t.ulp));
        }
        s
    }
}

/// One decoded element.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Value {
    Int(i128),
    Float(f64),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
        }
    }
}

fn raw(bytes: &[u8], big: bool) -> u64 {
    let mut buf = [0u8; 8];
    let n = bytes.len();
    if big {
        for (i, &b) in bytes.iter().enumerate() {
            buf[n - 1 - i] = b;
        }
    } else {
        buf[..n].copy_from_slice(bytes);
    }
    u64::from_le_bytes(buf)
}

/// Decode the element at the start of `bytes` (which holds at least `dtype.size()` bytes).
pub fn decode(dtype: DType, bytes: &[u8], big: bool) -> Value {
    let r = raw(&bytes[..dtype.size()], big);
    match dtype {
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => Value::Int(r as i128),
        DType::I8 => Value::Int(r as u8 as i8 as i128),
        DType::I16 => Value::Int(r as u16 as i16 as i128),
        DType::I32 => Value::Int(r as u32 as i32 as i128),
        DType::I64 => Value::Int(r as i64 as i128),
        DType::F16 => Value::Float(f16::from_bits(r as u16).to_f64()),
        DType::BF16 => Value::Float(bf16::from_bits(r as u16).to_f64()),
        DType::F32 => Value::Float(f32::from_bits(r as u32) as f64),
        DType::F64 => Value::Float(f64::from_bits(r)),
    }
}

/// Map float bits to integers that are ordered like the floats (negative values mirrored), so
/// the ULP distance is a difference. `bits` is the raw pattern, `width` in bits.
fn ordered(bits: u64, width: u32) -> i128 {
    let sign = 1u64 << (width - 1);
    let mag = (bits & (sign - 1)) as i128;
    if bits & sign != 0 {
        -mag
    } else {
        mag
    }
}

/// ULP distance between two floats of `dtype` given their raw bits.
pub fn ulp_distance(dtype: DType, a_bits: u64, b_bits: u64) -> u64 {
    ulp_bits(a_bits, b_bits, (dtype.size() * 8) as u32)
}

#[inline]
fn ulp_bits(a_bits: u64, b_bits: u64, width: u32) -> u64 {
    (ordered(a_bits, width) - ordered(b_bits, width)).unsigned_abs() as u64
}

/// The outcome of comparing one element pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElementResult {
    pub pass: bool,
    pub abs_err: f64,
    pub ulp: u64,
}

/// The float rules shared by every path: NaN matches only NaN, +0 matches -0, infinities are
/// infinitely many ULPs from anything else. `ulp` is computed only when needed.
#[inline]
fn float_result(x: f64, y: f64, t: &Tolerance, ulp: impl FnOnce() -> u64) -> ElementResult {
    if x.is_nan() || y.is_nan() {
        let pass = x.is_nan() && y.is_nan();
        return ElementResult {
            pass,
            abs_err: if pass { 0.0 } else { f64::INFINITY },
            ulp: if pass { 0 } else { u64::MAX },
        };
    }
    if x == y {
        return ElementResult {
            pass: true,
            abs_err: 0.0,
            ulp: 0,
        };
    }
    let abs_err = (x - y).abs();
    let ulp = if x.is_infinite() || y.is_infinite() {
        u64::MAX
    } else {
        ulp()
    };
    ElementResult {
        pass: abs_err <= t.atol + t.rtol * y.abs() || ulp <= t.ulp,
        abs_err,
        ulp,
    }
}

#[inline]
pub fn compare_element(cmp: &Comparison, a: &[u8], b: &[u8]) -> ElementResult {
    let dt = cmp.dtype;
    let (ra, rb) = (
        raw(&a[..dt.size()], cmp.big_endian),
        raw(&b[..dt.size()], cmp.big_endian),
    );
    if ra == rb {
        return ElementResult {
            pass: true,
            abs_err: 0.0,
            ulp: 0,
        };
    }
    let t = cmp.tolerance;
    match (decode(dt, a, cmp.big_endian), decode(dt, b, cmp.big_endian)) {
        (Value::Float(x), Value::Float(y)) => float_result(x, y, &t, || ulp_distance(dt, ra, rb)),
        (Value::Int(x), Value::Int(y)) => {
            let abs_err = (x - y).unsigned_abs() as f64;
            ElementResult {
                pass: abs_err <= t.atol + t.rtol * (y.unsigned_abs() as f64),
                abs_err,
                ulp: 0,
            }
        }
        _ => ElementResult {
            pass: false,
            abs_err: f64::INFINITY,
            ulp: u64::MAX,
        },
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Mismatch {
    pub index: u64,
    pub offset: u64,
    pub a: Value,
    pub b: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TypedStats {
    pub compared: u64,
    pub differing: u64,
    pub max_abs_err: f64,
    pub max_ulp: u64,
    pub first: Vec<Mismatch>,
}

impl TypedStats {
    pub fn merge(&mut self, o: TypedStats, keep: usize) {
        self.compared += o.compared;
        self.differing += o.differing;
        self.max_abs_err = self.max_abs_err.max(o.max_abs_err);
        self.max_ulp = self.max_ulp.max(o.max_ulp);
        for m in o.first {
            if self.first.len() < keep {
                self.first.push(m);
            }
        }
    }
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
            match (cmp.dtype, cmp.big_endian) {
                // The common float types get a loop the compiler can keep tight.
                (DType::F32, false) => float_block::<4>(&blk, ba, bb, &mut st, |c| {
                    f32::from_bits(u32::from_le_bytes(c)) as f64
                }),
                (DType::F64, false) => float_block::<8>(&blk, ba, bb, &mut st, f64::from_le_bytes),
                _ => generic_block(&blk, ba, bb, &mut st),
            }
        }
        start = end;
    }
    st
}

fn record(st: &mut TypedStats, r: ElementResult, keep: usize, mismatch: impl FnOnce() -> Mismatch) {
    if r.abs_err > st.max_abs_err {
        st.max_abs_err = r.abs_err;
    }
    if r.ulp > st.max_ulp {
        st.max_ulp = r.ulp;
    }
    if !r.pass {
        st.differing += 1;
        if st.first.len() < keep {
            st.first.push(mismatch());
        }
    }
}

/// Little-endian bits of a fixed-size element (the hot path's `raw`, without a length loop).
#[inline]
fn raw_le<const N: usize>(c: [u8; N]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..N].copy_from_slice(&c);
    u64::from_le_bytes(buf)
}

/// Where a block of elements sits: its file offset and the index of its first element.
struct Block<'a> {
    cmp: &'a Comparison,
    base: u64,
    first_index: u64,
    keep: usize,
}

#[inline]
fn float_block<const N: usize>(
    blk: &Block,
    a: &[u8],
    b: &[u8],
    st: &mut TypedStats,
    value: impl Fn([u8; N]) -> f64,
) {
    let t = blk.cmp.tolerance;
    for (k, (ca, cb)) in a.chunks_exact(N).zip(b.chunks_exact(N)).enumerate() {
        let (ca, cb): ([u8; N], [u8; N]) = (
            ca.try_into().expect("chunk of N"),
            cb.try_into().expect("chunk of N"),
        );
        if ca == cb {
            continue;
        }
        let (x, y) = (value(ca), value(cb));
        let r = float_result(x, y, &t, || {
            ulp_bits(raw_le(ca), raw_le(cb), (N * 8) as u32)
        });
        record(st, r, blk.keep, || Mismatch {
            index: blk.first_index + k as u64,
            offset: blk.base + (k * N) as u64,
            a: Value::Float(x),
            b: Value::Float(y),
        });
    }
}

fn generic_block(blk: &Block, a: &[u8], b: &[u8], st: &mut TypedStats) {
    let Block {
        cmp,
        base,
        first_index,
        keep,
    } = *blk;
    let size = cmp.dtype.size();
    for off in (0..a.len()).step_by(size) {
        let r = compare_element(cmp, &a[off..off + size], &b[off..off + size]);
        record(st, r, keep, || Mismatch {
            index: first_index + (off / size) as u64,
            offset: base + off as u64,
            a: decode(cmp.dtype, &a[off..], cmp.big_endian),
            b: decode(cmp.dtype, &b[off..], cmp.big_endian),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn float_rules() {
        let c = Comparison {
            dtype: DType::F32,
            big_endian: false,
            tolerance: Tolerance {
                atol: 0.0,
                rtol: 1e-6,
                ulp: 0,
            },
        };
        let a = f32s(&[1.0, f32::NAN, 0.0, f32::INFINITY, 1.0, 2.0]);
        let b = f32s(&[1.0 + 1e-7, f32::NAN, -0.0, f32::INFINITY, f32::NAN, 3.0]);
        let st = compare(&c, &a, &b, 0, 0, 10);
        assert_eq!(st.compared, 6);
        assert_eq!(st.differing, 2);
        assert_eq!(st.first[0].index, 4);
        assert_eq!(st.first[1].offset, 20);
    }

    #[test]
    fn ulp_distance_crosses_zero() {
        let one = 1.0f32.to_bits() as u64;
        let next = (1.0f32.to_bits() + 3) as u64;
        assert_eq!(ulp_distance(DType::F32, one, next), 3);
        let pz = 0.0f32.to_bits() as u64;
        let tiny_neg = (-f32::from_bits(1)).to_bits() as u64;
        assert_eq!(ulp_distance(DType::F32, pz, tiny_neg), 1);
        let c = Comparison {
            dtype: DType::F32,
            big_endian: false,
            tolerance: Tolerance {
                ulp: 3,
                ..Default::default()
            },
        };
        assert!(compare_element(&c, &f32s(&[1.0]), &(1.0f32.to_bits() + 3).to_le_bytes()).pass);
        assert!(!compare_element(&c, &f32s(&[1.0]), &(1.0f32.to_bits() + 4).to_le_bytes()).pass);
    }

    #[test]
    fn integers_halves_and_endianness() {
        assert_eq!(decode(DType::I16, &[0xff, 0xff], false), Value::Int(-1));
        assert_eq!(decode(DType::U16, &[0x01, 0x02], true), Value::Int(0x0102));
        assert_eq!(
            decode(
                DType::F16,
                &f16::from_f32(1.5).to_bits().to_le_bytes(),
                false
            ),
            Value::Float(1.5)
        );
        assert_eq!(
            decode(
                DType::BF16,
                &bf16::from_f32(-2.0).to_bits().to_le_bytes(),
                false
            ),
            Value::Float(-2.0)
        );
        let c = Comparison {
            dtype: DType::I32,
            big_endian: false,
            tolerance: Tolerance {
                atol: 2.0,
                ..Default::default()
            },
        };
        assert!(compare_element(&c, &5i32.to_le_bytes(), &7i32.to_le_bytes()).pass);
        assert!(!compare_element(&c, &5i32.to_le_bytes(), &8i32.to_le_bytes()).pass);
    }

    #[test]
    fn fast_float_paths_agree_with_the_generic_one() {
        let a: Vec<u8> = (0..4096u32)
            .flat_map(|i| (i as f32 * 0.37).to_le_bytes())
            .collect();
        let mut b = a.clone();
        for i in (0..b.len()).step_by(28) {
            b[i] ^= 3;
        }
        b[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        for dtype in [DType::F32, DType::F64] {
            let c = Comparison {
                dtype,
                big_endian: false,
                tolerance: Tolerance {
                    atol: 0.0,
                    rtol: 1e-7,
                    ulp: 2,
                },
            };
            let fast = compare(&c, &a, &b, 100, 7, 5);
            let mut slow = TypedStats {
                compared: fast.compared,
                ..Default::default()
            };
            generic_block(
                &Block {
                    cmp: &c,
                    base: 100,
                    first_index: 7,
                    keep: 5,
                },
                &a,
                &b,
                &mut slow,
            );
            assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{dtype:?}"); // NaN != NaN: compare renderings
            assert!(fast.differing > 0);
        }
    }

    #[test]
    fn spec_parsing() {
        let c = Comparison::parse_spec("f32:rtol=1e-5,ulp=4").unwrap();
        assert_eq!(c.dtype, DType::F32);
        assert_eq!(c.tolerance.ulp, 4);
        assert!(Comparison::parse_spec("f33").is_err());
        assert!(Comparison::parse_spec("f32:atol=-1").is_err());
        assert!(Comparison::parse_spec("f32:foo=1").is_err());
        assert!(
            Comparison::parse_spec("i32:ulp=1").is_err(),
            "ulp needs a float type"
        );
        for spec in [
            "f32:rtol=1e-5,ulp=4",
            "f64:atol=0.1,endian=big",
            "u8",
            "bf16:rtol=0.3333333333333333",
        ] {
            let c = Comparison::parse_spec(spec).unwrap();
            assert_eq!(Comparison::parse_spec(&c.to_spec()).unwrap(), c, "{spec}");
        }
    }
}
