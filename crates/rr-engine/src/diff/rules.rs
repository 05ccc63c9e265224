//! When two elements count as equal: tolerances, and the rules for one pair of elements.
//!
//! An element passes when its bits are equal, or `|a - b| <= atol + rtol * |b|` (b is the
//! reference, numpy's `isclose` convention), or (floats) the ULP distance is at most `ulp`.
//! NaN matches NaN whatever the payload; NaN never matches a number; +0 matches -0; an infinity
//! matches only the same infinity.

use serde::{Deserialize, Serialize};

use super::typed::{raw, value_of_bits, DType, Value};

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
    pub ulp: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

    /// Byte for byte: bytes, and no tolerance (so "differ" and "beyond tolerance" are one).
    pub fn is_bytes(&self) -> bool {
        self.dtype == DType::U8 && self.tolerance == Tolerance::default()
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
            let bad = || format!("tolerance {k}={v:?} is not a finite non-negative number");
            let number = || {
                v.parse()
                    .ok()
                    .filter(|x: &f64| *x >= 0.0 && x.is_finite())
                    .ok_or_else(bad)
            };
            match k {
                "atol" => t.atol = number()?,
                "rtol" => t.rtol = number()?,
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

/// Map float bits to integers that are ordered like the floats (negative values mirrored), so
/// the ULP distance is a difference. `bits` is the raw pattern, `width` in bits (at most 64: the
/// magnitude fits an i64).
#[inline]
fn ordered(bits: u64, width: u32) -> i64 {
    let sign = 1u64 << (width - 1);
    let mag = (bits & (sign - 1)) as i64;
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

/// Two finite floats of one width are less than 2^64 ULPs apart (`abs_diff` of two i64 never
/// overflows its u64).
#[inline]
pub(crate) fn ulp_bits(a_bits: u64, b_bits: u64, width: u32) -> u64 {
    ordered(a_bits, width).abs_diff(ordered(b_bits, width))
}

/// How two elements compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ElementResult {
    /// Identical bits, or equal values (the same infinity).
    Equal,
    /// Two numbers (floats: both finite): their distance, and whether it is within tolerance.
    /// A float's `abs_diff` saturates at `f64::MAX`; integers have no `ulp`.
    Numbers {
        pass: bool,
        abs_diff: Value,
        ulp: Option<u64>,
    },
    /// NaN against NaN with other bits: passes, whatever the payload.
    BothNan,
    /// NaN against a number: never passes.
    NanVsNumber,
    /// An infinity against anything but itself (a finite number, the other infinity).
    Infinity,
}

impl ElementResult {
    pub fn pass(&self) -> bool {
        match self {
            ElementResult::Equal | ElementResult::BothNan => true,
            ElementResult::Numbers { pass, .. } => *pass,
            ElementResult::NanVsNumber | ElementResult::Infinity => false,
        }
    }
}

/// The float rules shared by every path; `ulp` gives the ULP distance of the two (finite) bit
/// patterns.
#[inline]
pub(crate) fn float_pair(
    x: f64,
    y: f64,
    t: &Tolerance,
    ulp: impl FnOnce() -> u64,
) -> ElementResult {
    if x.is_nan() || y.is_nan() {
        return if x.is_nan() && y.is_nan() {
            ElementResult::BothNan
        } else {
            ElementResult::NanVsNumber
        };
    }
    if x == y {
        // Different bits, equal values: +0 against -0 (a distance of 0, and 0 ULP).
        return ElementResult::Numbers {
            pass: true,
            abs_diff: Value::Float(0.0),
            ulp: Some(0),
        };
    }
    if x.is_infinite() || y.is_infinite() {
        return ElementResult::Infinity;
    }
    // Two finite f64 can be further apart than f64::MAX; the distance saturates there.
    let abs_diff = (x - y).abs().min(f64::MAX);
    let ulp = ulp();
    ElementResult::Numbers {
        pass: abs_diff <= t.atol + t.rtol * y.abs() || ulp <= t.ulp,
        abs_diff: Value::Float(abs_diff),
        ulp: Some(ulp),
    }
}

/// Compare one pair of elements (each at least `cmp.dtype.size()` bytes).
#[inline]
pub fn compare_element(cmp: &Comparison, a: &[u8], b: &[u8]) -> ElementResult {
    let dt = cmp.dtype;
    let (ra, rb) = (
        raw(&a[..dt.size()], cmp.big_endian),
        raw(&b[..dt.size()], cmp.big_endian),
    );
    if ra == rb {
        return ElementResult::Equal;
    }
    let t = cmp.tolerance;
    match (value_of_bits(dt, ra), value_of_bits(dt, rb)) {
        (Value::Float(x), Value::Float(y)) => float_pair(x, y, &t, || ulp_distance(dt, ra, rb)),
        (Value::Int(x), Value::Int(y)) => {
            let d = (x - y).unsigned_abs();
            ElementResult::Numbers {
                pass: d as f64 <= t.atol + t.rtol * (y.unsigned_abs() as f64),
                abs_diff: Value::Int(d as i128),
                ulp: None,
            }
        }
        _ => unreachable!("one dtype decodes both elements to the same kind"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_cmp(t: Tolerance) -> Comparison {
        Comparison {
            dtype: DType::F32,
            big_endian: false,
            tolerance: t,
        }
    }
    fn pair(c: &Comparison, x: f32, y: f32) -> ElementResult {
        compare_element(c, &x.to_le_bytes(), &y.to_le_bytes())
    }

    #[test]
    fn special_values() {
        let loose = f32_cmp(Tolerance {
            atol: 1.0,
            rtol: 1.0,
            ulp: 1000,
        });
        assert_eq!(pair(&loose, f32::NAN, 1.0), ElementResult::NanVsNumber);
        let other_nan = f32::from_bits(f32::NAN.to_bits() | 1);
        assert_eq!(pair(&loose, f32::NAN, other_nan), ElementResult::BothNan);
        assert!(pair(&loose, 0.0, -0.0).pass());
        // rtol * |inf| is infinite: the rule must not let a finite value match an infinity.
        assert_eq!(pair(&loose, 1.0, f32::INFINITY), ElementResult::Infinity);
        assert_eq!(
            pair(&loose, f32::NEG_INFINITY, f32::INFINITY),
            ElementResult::Infinity
        );
        assert_eq!(pair(&loose, 2.0, 2.0), ElementResult::Equal);
    }

    #[test]
    fn ulp_distance_crosses_zero() {
        let one = 1.0f32.to_bits() as u64;
        let next = (1.0f32.to_bits() + 3) as u64;
        assert_eq!(ulp_distance(DType::F32, one, next), 3);
        let pz = 0.0f32.to_bits() as u64;
        let tiny_neg = (-f32::from_bits(1)).to_bits() as u64;
        assert_eq!(ulp_distance(DType::F32, pz, tiny_neg), 1);
        let c = f32_cmp(Tolerance {
            ulp: 3,
            ..Default::default()
        });
        assert!(pair(&c, 1.0, f32::from_bits(1.0f32.to_bits() + 3)).pass());
        assert!(!pair(&c, 1.0, f32::from_bits(1.0f32.to_bits() + 4)).pass());
        let far = ulp_distance(DType::F64, f64::MAX.to_bits(), (-f64::MAX).to_bits());
        assert_eq!(
            far,
            2 * 0x7fef_ffff_ffff_ffff,
            "the largest finite distance fits"
        );
    }

    #[test]
    fn integers_use_absolute_and_relative_tolerance() {
        let c = Comparison {
            dtype: DType::I32,
            big_endian: false,
            tolerance: Tolerance {
                atol: 2.0,
                ..Default::default()
            },
        };
        assert!(compare_element(&c, &5i32.to_le_bytes(), &7i32.to_le_bytes()).pass());
        assert_eq!(
            compare_element(&c, &5i32.to_le_bytes(), &8i32.to_le_bytes()),
            ElementResult::Numbers {
                pass: false,
                abs_diff: Value::Int(3),
                ulp: None
            }
        );
    }

    #[test]
    fn spec_parsing() {
        let c = Comparison::parse_spec("f32:rtol=1e-5,ulp=4").unwrap();
        assert_eq!(c.dtype, DType::F32);
        assert_eq!(c.tolerance.ulp, 4);
        assert!(Comparison::parse_spec("f33").is_err());
        assert!(Comparison::parse_spec("f32:atol=-1").is_err());
        assert!(Comparison::parse_spec("f32:atol=inf").is_err());
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
