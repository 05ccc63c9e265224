//! Typed values: element types, decoding in either byte order, and printing.
//!
//! Printing follows one rule: a float prints in the shortest decimal form that reads back to the
//! same element *of its own type* (an f32 as an f32, an f16 as an f16), so values printed
//! differently are different and different values never print alike (NaN payloads aside).

use half::{bf16, f16};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// One decoded element. `Float` holds the element's value widened to f64, or (in reports) the
/// f64 nearest its shortest decimal form ([`shortest`]): both convert back to the same element,
/// and [`format_value`] prints both alike.
///
/// In JSON, integers and finite floats are numbers; NaN and the infinities are the strings
/// `"NaN"`, `"inf"` and `"-inf"` (JSON has no such numbers, and `null` would lose them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Value::Int(i) => s.serialize_i128(i),
            Value::Float(x) if x.is_finite() => s.serialize_f64(x),
            Value::Float(x) => s.serialize_str(&format!("{x}")),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Value;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number, \"NaN\", \"inf\" or \"-inf\"")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
                Ok(Value::Int(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
                Ok(Value::Int(v.into()))
            }
            fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
                Ok(Value::Int(v))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
                Ok(Value::Float(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
                match v {
                    "NaN" => Ok(Value::Float(f64::NAN)),
                    "inf" => Ok(Value::Float(f64::INFINITY)),
                    "-inf" => Ok(Value::Float(f64::NEG_INFINITY)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The raw bits of an element of `bytes.len()` bytes (at most 8) in the given byte order.
pub(crate) fn raw(bytes: &[u8], big: bool) -> u64 {
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

/// The value of an element given its raw bits (exact: every type fits in an f64 or i128).
pub(crate) fn value_of_bits(dtype: DType, r: u64) -> Value {
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

/// The bytes of one `dtype` element holding the value `text` (decimal, `0x` hex for integers;
/// `nan`, `inf`, `-inf` for floats), in the given byte order: what a search for a typed value
/// looks for. A float is the element the view prints as `text` (`0.1` is the f32 nearest 0.1);
/// one that no element prints as is refused rather than rounded, and so is an integer outside
/// the type's range.
pub fn encode(dtype: DType, text: &str, big: bool) -> Result<Vec<u8>, String> {
    let t = text.trim();
    let bits: u64 = if dtype.is_float() {
        let x: f64 = t
            .parse()
            .map_err(|_| format!("{t:?} is not a number (a {} value)", dtype.name()))?;
        let bits = match dtype {
            DType::F16 => f16::from_f64(x).to_bits() as u64,
            DType::BF16 => bf16::from_f64(x).to_bits() as u64,
            DType::F32 => (x as f32).to_bits() as u64,
            _ => x.to_bits(),
        };
        // The value as the view prints it (its shortest form) must be what was typed.
        let shown = match value_of_bits(dtype, bits) {
            Value::Float(y) => shortest(dtype, y),
            Value::Int(i) => i as f64,
        };
        if shown != x && !(x.is_nan() && shown.is_nan()) {
            return Err(format!(
                "{t} is no {} value (the nearest is {})",
                dtype.name(),
                format_value(Value::Float(shown), dtype)
            ));
        }
        bits
    } else {
        let (digits, radix, negative) = match t.strip_prefix('-') {
            Some(rest) => (rest, 10, true),
            None => match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => (hex, 16, false),
                None => (t, 10, false),
            },
        };
        let magnitude = i128::from_str_radix(digits, radix)
            .map_err(|_| format!("{t:?} is not an integer (a {} value)", dtype.name()))?;
        let v = if negative { -magnitude } else { magnitude };
        let bits = (dtype.size() * 8) as u32;
        let signed = matches!(dtype, DType::I8 | DType::I16 | DType::I32 | DType::I64);
        let (lo, hi) = match signed {
            true => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            false => (0, (1i128 << bits) - 1),
        };
        if v < lo || v > hi {
            return Err(format!("{t} is outside {} ({lo} to {hi})", dtype.name()));
        }
        v as u64 & (u64::MAX >> (64 - bits))
    };
    let mut bytes = bits.to_le_bytes()[..dtype.size()].to_vec();
    if big {
        bytes.reverse();
    }
    Ok(bytes)
}

/// Decode the element at the start of `bytes` (which holds at least `dtype.size()` bytes).
pub fn decode(dtype: DType, bytes: &[u8], big: bool) -> Value {
    value_of_bits(dtype, raw(&bytes[..dtype.size()], big))
}

/// An element as text: integers in decimal; floats in the shortest form that reads back to the
/// same element of `dtype`, plain between 1e-4 and 1e16 and in exponent form outside
/// (`1.5`, `-0`, `0.1`, `3.4028235e38`, `NaN`, `inf`).
///
/// ```
/// use rr_engine::diff::typed::{format_value, DType, Value};
/// assert_eq!(format_value(Value::Float(0.1f32 as f64), DType::F32), "0.1");
/// assert_eq!(format_value(Value::Float(0.1f32 as f64), DType::F64), "0.10000000149011612");
/// assert_eq!(format_value(Value::Float(1e-7), DType::F64), "1e-7");
/// ```
pub fn format_value(v: Value, dtype: DType) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(x) => decimal(shortest(dtype, x)),
    }
}

/// Rust prints floats in their shortest round-trip form; this picks plain or exponent notation
/// so that neither 300 zeros nor `1e0` reach a table.
fn decimal(x: f64) -> String {
    let m = x.abs();
    if !x.is_finite() || m == 0.0 || (1e-4..1e16).contains(&m) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The f64 nearest the shortest decimal that reads back to the same `dtype` element as `x`
/// (x itself for f64 and integer types). Printing the result as an f64 prints that decimal.
pub fn shortest(dtype: DType, x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    match dtype {
        // Rust's shortest f32 digits, read as an f64, print the same digits as an f64.
        DType::F32 => format!("{:e}", x as f32).parse().unwrap_or(x),
        DType::F16 => shortest_half(
            x,
            |v| f16::from_f64(v).to_bits(),
            |b| f16::from_bits(b).to_f64(),
        ),
        DType::BF16 => shortest_half(
            x,
            |v| bf16::from_f64(v).to_bits(),
            |b| bf16::from_bits(b).to_f64(),
        ),
        _ => x,
    }
}

/// Shortest digits for a half-precision element: for each precision, the correctly rounded
/// decimal and its two neighbours in the last digit (near a power of two the rounding interval
/// is lopsided, and the neighbour on the wide side may fit where the nearest does not), the one
/// closest to the element among those inside its rounding interval (ties go to the even
/// neighbour). The interval is computed exactly in f64 rather than by converting candidates
/// back, because `half`'s f64 conversion rounds twice (through f32).
fn shortest_half(x: f64, to_bits: impl Fn(f64) -> u16, value: impl Fn(u16) -> f64) -> f64 {
    let magnitude = to_bits(x.abs());
    let m = value(magnitude);
    if magnitude == 0 || !m.is_finite() {
        return x; // not a value of this type (format_value was handed a stranger)
    }
    let below = value(magnitude - 1);
    let above = match value(magnitude + 1) {
        a if a.is_finite() => a,
        _ => m + (m - below), // past the largest finite: the overflow threshold is half an ULP up
    };
    let (lo, hi) = ((below + m) / 2.0, (m + above) / 2.0);
    let even = magnitude & 1 == 0;
    let inside = |y: f64| (lo < y && y < hi) || (even && (y == lo || y == hi));
    for digits in 1..=17i32 {
        let nearest = format!("{:.*e}", (digits - 1) as usize, m);
        let Some((mantissa, exp)) = nearest.split_once('e') else {
            break;
        };
        let (Ok(k), Ok(exp)) = (mantissa.replace('.', "").parse::<i64>(), exp.parse::<i32>())
        else {
            break;
        };
        let best = [k, k - 1, k + 1]
            .into_iter()
            .filter_map(|c| format!("{c}e{}", exp - (digits - 1)).parse::<f64>().ok())
            .filter(|&y| inside(y))
            .min_by(|p, q| (p - m).abs().total_cmp(&(q - m).abs()));
        if let Some(y) = best {
            return y.copysign(x);
        }
    }
    x
}

#[cfg(test)]
mod tests {
    /// A typed value's bytes decode back to it, in both byte orders; what a type cannot hold
    /// exactly is refused.
    #[test]
    fn encoded_values_decode_back() {
        use super::{decode, encode, DType, Value};
        for (t, text, want) in [
            (DType::F32, "1.5", Value::Float(1.5)),
            (DType::F16, "-2", Value::Float(-2.0)),
            (DType::BF16, "inf", Value::Float(f64::INFINITY)),
            (DType::F64, "0.1", Value::Float(0.1)),
            (DType::I16, "-300", Value::Int(-300)),
            (DType::U32, "0xdeadbeef", Value::Int(0xdead_beef)),
            (
                DType::I64,
                "-9223372036854775808",
                Value::Int(i64::MIN as i128),
            ),
            (DType::U8, "255", Value::Int(255)),
        ] {
            for big in [false, true] {
                let bytes = encode(t, text, big).unwrap();
                assert_eq!(bytes.len(), t.size());
                assert_eq!(decode(t, &bytes, big), want, "{text} as {}", t.name());
            }
        }
        assert_eq!(encode(DType::U16, "1", true).unwrap(), [0, 1]);
        assert!(
            encode(DType::F32, "0.1", false).is_ok(),
            "the f32 shown as 0.1"
        );
        assert!(encode(DType::F16, "1.0001", false).is_err(), "f16 shows 1");
        assert!(encode(DType::U8, "256", false).is_err());
        assert!(encode(DType::U8, "-1", false).is_err());
        assert!(encode(DType::I32, "x", false).is_err());
    }

    use super::*;

    #[test]
    fn shortest_forms_of_every_float_type() {
        let f = |x: f64, t| format_value(Value::Float(x), t);
        assert_eq!(f(0.1f32 as f64, DType::F32), "0.1");
        assert_eq!(f(f32::MAX as f64, DType::F32), "3.4028235e38");
        assert_eq!(f(1.0000001f32 as f64, DType::F32), "1.0000001");
        assert_eq!(f(-0.0, DType::F32), "-0");
        assert_eq!(f(f64::NAN, DType::F32), "NaN");
        assert_eq!(f(f64::NEG_INFINITY, DType::F16), "-inf");
        assert_eq!(f(f16::from_f32(0.1).to_f64(), DType::F16), "0.1");
        assert_eq!(f(f16::MAX.to_f64(), DType::F16), "65500");
        assert_eq!(f(f16::from_bits(1).to_f64(), DType::F16), "6e-8");
        // At a power of two the rounding interval is lopsided: the nearest 4-digit decimal
        // (0.01562) falls outside, the one above (0.01563) inside.
        assert_eq!(f(0.015625, DType::F16), "0.01563");
        assert_eq!(f(bf16::from_f32(1.23456).to_f64(), DType::BF16), "1.234");
        assert_eq!(f(bf16::MAX.to_f64(), DType::BF16), "3.39e38");
        assert_eq!(f(1e300, DType::F64), "1e300");
        assert_eq!(f(123456.5, DType::F64), "123456.5");
    }

    /// Every finite f16 and bf16 prints digits that read back (through f32, which holds them
    /// exactly) to the same element, in at most 5 (f16) or 4 (bf16) significant digits.
    #[test]
    fn every_half_precision_value_round_trips() {
        for bits in 0..=u16::MAX {
            for (t, max_digits) in [(DType::F16, 5), (DType::BF16, 4)] {
                let x = match t {
                    DType::F16 => f16::from_bits(bits).to_f64(),
                    _ => bf16::from_bits(bits).to_f64(),
                };
                if !x.is_finite() {
                    continue;
                }
                let s = format_value(Value::Float(x), t);
                let y: f32 = s.parse().unwrap();
                let back = match t {
                    DType::F16 => f16::from_f32(y).to_bits(),
                    _ => bf16::from_f32(y).to_bits(),
                };
                assert_eq!(back, bits, "{t:?} {bits:#06x} printed {s}");
                let digits = s
                    .split('e')
                    .next()
                    .unwrap()
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>();
                let significant = digits.trim_start_matches('0').trim_end_matches('0');
                assert!(significant.len() <= max_digits, "{t:?} {bits:#06x}: {s}");
            }
        }
    }

    /// Each type decoded from its big-endian bytes gives the same value as from little-endian.
    #[test]
    fn big_endian_decoding_of_every_type() {
        let cases: [(DType, u64, Value); 12] = [
            (DType::U8, 0xfe, Value::Int(254)),
            (DType::I8, 0xfe, Value::Int(-2)),
            (DType::U16, 0x1234, Value::Int(0x1234)),
            (DType::I16, 0xfffe, Value::Int(-2)),
            (DType::U32, 0x1234_5678, Value::Int(0x1234_5678)),
            (DType::I32, 0xffff_fffe, Value::Int(-2)),
            (
                DType::U64,
                0x0102_0304_0506_0708,
                Value::Int(0x0102_0304_0506_0708),
            ),
            (DType::I64, u64::MAX - 1, Value::Int(-2)),
            (
                DType::F16,
                f16::from_f32(-1.5).to_bits() as u64,
                Value::Float(-1.5),
            ),
            (
                DType::BF16,
                bf16::from_f32(2.5).to_bits() as u64,
                Value::Float(2.5),
            ),
            (
                DType::F32,
                0.1f32.to_bits() as u64,
                Value::Float(0.1f32 as f64),
            ),
            (DType::F64, (-0.1f64).to_bits(), Value::Float(-0.1)),
        ];
        for (t, bits, want) in cases {
            let n = t.size();
            let le = &bits.to_le_bytes()[..n];
            let be: Vec<u8> = le.iter().rev().copied().collect();
            assert_eq!(decode(t, le, false), want, "{t:?} little endian");
            assert_eq!(decode(t, &be, true), want, "{t:?} big endian");
            if n > 1 {
                assert_ne!(decode(t, &be, false), want, "{t:?}: the byte order matters");
            }
        }
    }

    #[test]
    fn values_survive_json_with_non_finite_floats() {
        for v in [
            Value::Int(-5),
            Value::Int(u64::MAX as i128),
            Value::Float(0.1),
            Value::Float(f64::INFINITY),
            Value::Float(f64::NEG_INFINITY),
        ] {
            let s = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v, "{s}");
        }
        assert_eq!(
            serde_json::to_string(&Value::Float(f64::NAN)).unwrap(),
            "\"NaN\""
        );
        let nan: Value = serde_json::from_str("\"NaN\"").unwrap();
        assert!(matches!(nan, Value::Float(x) if x.is_nan()));
        assert!(serde_json::from_str::<Value>("\"big\"").is_err());
    }
}
