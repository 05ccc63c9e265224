//! Numbers as the explorer shows them: durations in adaptive units, typed values that fit their
//! cells, byte categories.

use rr_engine::diff::typed::{decode, Value};
use rr_engine::diff::DType;

/// A duration in nanoseconds with three significant digits in the unit that reads best:
/// `950 ns`, `9.02 µs`, `20.3 µs`, `447 µs`, `1.25 ms`, `3.10 s`.
pub fn duration_ns(ns: f64) -> String {
    if !ns.is_finite() || ns < 0.0 {
        return "?".into();
    }
    if ns < 999.5 {
        return format!("{ns:.0} ns");
    }
    // The unit in which the value rounds to less than 1000.
    let (value, unit) = [(1e3, "µs"), (1e6, "ms")]
        .into_iter()
        .map(|(scale, unit)| (ns / scale, unit))
        .find(|(v, _)| *v < 999.5)
        .unwrap_or((ns / 1e9, "s"));
    // Rounding can carry into the next decade (999.96 µs): keep three significant digits.
    let decimals = if value < 9.995 {
        2
    } else if value < 99.95 {
        1
    } else {
        0
    };
    format!("{value:.decimals$} {unit}")
}

/// One element of `dtype` at the start of `bytes`, right-aligned in `width` columns. Floats take
/// the shortest form that reads back to the same value of their type, or as many digits as the
/// cell holds; integers always fit (the layout gives their cells room for every value).
pub fn typed_cell(dtype: DType, bytes: &[u8], big_endian: bool, width: usize) -> String {
    let text = match decode(dtype, bytes, big_endian) {
        Value::Int(v) => v.to_string(),
        Value::Float(x) => float_text(
            dtype,
            raw_bits(&bytes[..dtype.size()], big_endian),
            x,
            width,
        ),
    };
    if text.chars().count() > width {
        let mut t: String = text.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        return format!("{t:>width$}");
    }
    format!("{text:>width$}")
}

fn raw_bits(bytes: &[u8], big_endian: bool) -> u64 {
    let mut buf = [0u8; 8];
    let n = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        buf[if big_endian { n - 1 - i } else { i }] = b;
    }
    u64::from_le_bytes(buf)
}

/// The value of `dtype` with these bits.
fn from_bits(dtype: DType, bits: u64) -> f64 {
    match decode(dtype, &bits.to_le_bytes(), false) {
        Value::Float(x) => x,
        Value::Int(v) => v as f64,
    }
}

fn float_text(dtype: DType, bits: u64, x: f64, width: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Every decimal strictly between the midpoints to the two neighbouring values of the type
    // reads back as `x`: the fewest digits in that interval are the shortest exact form.
    let sign_bit = 1u64 << (dtype.size() * 8 - 1);
    let magnitude = bits & (sign_bit - 1);
    let lower = from_bits(dtype, magnitude - 1).abs();
    let upper = from_bits(dtype, magnitude + 1).abs();
    let a = x.abs();
    let upper = if upper.is_finite() {
        upper
    } else {
        a + (a - lower)
    };
    let (lo, hi) = ((a + lower) / 2.0, (a + upper) / 2.0);
    let shortest = (1..=17)
        .find(|&p| {
            let v: f64 = format!("{a:.*e}", p - 1).parse().unwrap_or(f64::NAN);
            v > lo && v < hi
        })
        .unwrap_or(17);
    let sign = if x < 0.0 { "-" } else { "" };
    (1..=shortest)
        .rev()
        .map(|p| decimal(sign, a, p))
        .find(|t| t.chars().count() <= width)
        .unwrap_or_else(|| decimal(sign, a, 1))
}

/// `a` (positive) with `digits` significant digits: positional near 1, scientific otherwise,
/// whichever is shorter when both read well.
fn decimal(sign: &str, a: f64, digits: usize) -> String {
    let sci = format!("{a:.*e}", digits - 1);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let all: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let all = all.trim_end_matches('0');
    let all = if all.is_empty() { "0" } else { all };
    let scientific = if all.len() == 1 {
        format!("{sign}{all}e{exp}")
    } else {
        format!("{sign}{}.{}e{exp}", &all[..1], &all[1..])
    };
    let n = all.len() as i32;
    // Positional from 1e-4 up to 1e7, further up while every digit is significant (16777216).
    if exp < -4 || exp >= n.max(7) {
        return scientific;
    }
    let positional = if exp < 0 {
        format!("{sign}0.{}{all}", "0".repeat((-exp - 1) as usize))
    } else if exp + 1 >= n {
        format!("{sign}{all}{}", "0".repeat((exp + 1 - n) as usize))
    } else {
        let (int, frac) = all.split_at(exp as usize + 1);
        format!("{sign}{int}.{frac}")
    };
    if positional.len() <= scientific.len() + 2 {
        positional
    } else {
        scientific
    }
}

/// What a byte is, for its colour and its ASCII-column character (as hexyl shows bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteCategory {
    Zero,
    Printable,
    Other,
}

impl ByteCategory {
    pub fn of(b: u8) -> ByteCategory {
        match b {
            0 => ByteCategory::Zero,
            0x20..=0x7e => ByteCategory::Printable,
            _ => ByteCategory::Other,
        }
    }
}

/// The ASCII column's character for a byte: itself when printable, `⋄` for zero, `•` otherwise.
pub fn ascii_char(b: u8) -> char {
    match ByteCategory::of(b) {
        ByteCategory::Zero => '⋄',
        ByteCategory::Printable => b as char,
        ByteCategory::Other => '•',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_cell(x: f32, w: usize) -> String {
        typed_cell(DType::F32, &x.to_le_bytes(), false, w)
            .trim()
            .to_string()
    }

    #[test]
    fn durations_are_legible_in_every_range() {
        assert_eq!(duration_ns(9023.0), "9.02 µs");
        assert_eq!(duration_ns(20813.0), "20.8 µs");
        assert_eq!(duration_ns(446_000.0), "446 µs");
        assert_eq!(duration_ns(950.0), "950 ns");
        assert_eq!(duration_ns(999_960.0), "1.00 ms");
        assert_eq!(duration_ns(9_996.0), "10.0 µs");
        assert_eq!(duration_ns(1_250_000.0), "1.25 ms");
        assert_eq!(duration_ns(3.1e9), "3.10 s");
    }

    #[test]
    fn floats_take_their_shortest_exact_form() {
        assert_eq!(f32_cell(0.1, 15), "0.1");
        assert_eq!(f32_cell(-2.0, 15), "-2");
        assert_eq!(f32_cell(1.0e-7, 15), "1e-7");
        assert_eq!(f32_cell(16777216.0, 15), "16777216");
        assert_eq!(f32_cell(1.1754944e-38, 15), "1.1754944e-38");
        assert_eq!(f32_cell(f32::MAX, 15), "3.4028235e38");
        assert_eq!(f32_cell(f32::NAN, 15), "NaN");
        assert_eq!(f32_cell(f32::NEG_INFINITY, 15), "-inf");
        assert_eq!(f32_cell(-0.0, 15), "-0");
        // Two neighbouring floats never look alike when there is room.
        let a = 1.0f32;
        let b = f32::from_bits(a.to_bits() + 1);
        assert_ne!(f32_cell(a, 15), f32_cell(b, 15));
        assert_eq!(f32_cell(b, 15), "1.0000001");
        // f16 in its own precision, not f32's: 0.1 is stored as 0.0999755859375.
        let f16_tenth = 0x2e66u16.to_le_bytes();
        assert_eq!(typed_cell(DType::F16, &f16_tenth, false, 10).trim(), "0.1");
        let f64_third = (1.0f64 / 3.0).to_le_bytes();
        assert_eq!(
            typed_cell(DType::F64, &f64_third, false, 24).trim(),
            "0.3333333333333333"
        );
    }

    #[test]
    fn narrow_cells_lose_digits_not_magnitude() {
        assert_eq!(f32_cell(1.1754944e-38, 9), "1.175e-38");
        assert_eq!(f32_cell(0.33333334, 6), "0.3333");
        assert_eq!(f32_cell(123456.79, 7), "123457");
        for w in [6, 9, 13] {
            let shown: f64 = f32_cell(-1.2345e-30, w).parse().unwrap();
            assert!((shown / -1.2345e-30 - 1.0).abs() < 0.2, "{w}: {shown}");
        }
    }

    #[test]
    fn big_endian_values_decode() {
        assert_eq!(
            typed_cell(DType::F32, &1.5f32.to_be_bytes(), true, 10).trim(),
            "1.5"
        );
        assert_eq!(typed_cell(DType::U16, &[1, 0], true, 5), "  256");
    }

    #[test]
    fn bytes_fall_into_three_categories() {
        assert_eq!(ascii_char(0), '⋄');
        assert_eq!(ascii_char(b'A'), 'A');
        assert_eq!(ascii_char(b' '), ' ');
        assert_eq!(ascii_char(0x7f), '•');
        assert_eq!(ascii_char(0xc0), '•');
    }
}
