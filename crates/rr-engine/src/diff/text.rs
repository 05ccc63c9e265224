//! Comparison results as text, shared by `rr-tui diff`, replay verification and the explorer.
//! Byte and element counts come from one pass, so a line never contradicts itself:
//! "4 091 of 4 096 bytes differ; 0 of 1 024 f32 elements beyond tolerance, 1 022 within
//! tolerance". Missing bytes are always said, never folded into "equal".

use super::elements::TypedStats;
use super::range::RangeReport;
use super::regions::RegionReport;
use super::typed::{format_value, DType, Value};

/// What to call the two sides in messages (file names, `.record_output`, `the replay`).
#[derive(Debug, Clone, Copy)]
pub struct Sides<'a> {
    pub a: &'a str,
    pub b: &'a str,
}

/// Digits grouped by spaces, as the issue tracker writes big counts ("1 048 576").
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `1 byte`, `16 384 bytes`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", group(n), if n == 1 { one } else { many })
}

/// `argument 1 (0x7f…): …` for one region.
pub fn region_line(r: &RegionReport, sides: Sides) -> String {
    let place = match r.region.addr {
        Some(addr) => format!("{addr:#x}"),
        None => format!("file offset {:#x}", r.region.file_start),
    };
    format!(
        "{} ({place}): {}",
        r.region.label,
        range_summary(&r.result, sides)
    )
}

/// Everything one comparison found, as `; `-separated phrases.
pub fn range_summary(r: &RangeReport, sides: Sides) -> String {
    if r.bytes > 0 && r.present() == 0 {
        return format!("all {}", missing_phrase(r, sides));
    }
    let dtype = DType::parse(&r.dtype).unwrap_or(DType::U8);
    let mut parts = vec![compared_phrase(r, dtype)];
    if r.tail_bytes > 0 {
        parts.push(format!(
            "{} trailing byte(s) not a whole {} element, {} differ",
            r.tail_bytes,
            dtype.name(),
            r.tail_differing_bytes
        ));
    }
    if dtype != DType::U8 {
        parts.extend(distance_phrases(&r.elements));
    }
    if r.missing() > 0 {
        parts.push(missing_phrase(r, sides));
    }
    parts.join("; ")
}

/// What the bytes present on both sides hold.
fn compared_phrase(r: &RangeReport, dtype: DType) -> String {
    let e = &r.elements;
    let bytes = format!(
        "{} of {} bytes differ",
        group(r.differing_bytes),
        group(r.present())
    );
    let first = e.first.first().map(|m| {
        let (a, b) = (show(m.a, dtype), show(m.b, dtype));
        match dtype {
            DType::U8 => format!(", first at offset {:#x}: {a} vs {b}", m.offset),
            _ => format!(
                ", first at index {} (offset {:#x}: {a} vs {b})",
                m.index, m.offset
            ),
        }
    });
    let first = first.unwrap_or_default();
    match dtype {
        DType::U8 if r.differing_bytes == 0 => {
            format!("all {} equal", plural(r.present(), "byte", "bytes"))
        }
        DType::U8 if e.within_tolerance == 0 => format!("{bytes}{first}"),
        DType::U8 => format!(
            "{bytes}: {} beyond tolerance, {} within{first}",
            group(e.beyond_tolerance),
            group(e.within_tolerance)
        ),
        _ if r.differing_bytes == 0 => {
            let what = format!("{} element", dtype.name());
            format!(
                "all {} equal",
                plural(e.compared, &what, &format!("{what}s"))
            )
        }
        _ => format!(
            "{bytes}; {} of {} {} elements beyond tolerance, {} within tolerance{first}",
            group(e.beyond_tolerance),
            group(e.compared),
            dtype.name(),
            group(e.within_tolerance)
        ),
    }
}

/// An element for a message: bytes in hex, other types as [`format_value`] prints them.
fn show(v: Value, dtype: DType) -> String {
    match (dtype, v) {
        (DType::U8, Value::Int(x)) => format!("{x:#04x}"),
        _ => format_value(v, dtype),
    }
}

/// The largest distances (finite elements only) and the NaN and infinity counts: never an
/// infinite "maximum".
pub fn distance_phrases(e: &TypedStats) -> Vec<String> {
    let mut out = Vec::new();
    let special = e.nan_vs_number + e.infinity_vs_other > 0;
    if let Some(d) = e.max_abs_diff {
        let d = match d {
            Value::Float(x) => format_value(Value::Float(x), DType::F64),
            Value::Int(x) => x.to_string(),
        };
        let ulp = e
            .max_ulp
            .map(|u| format!(", {} ULP", group(u)))
            .unwrap_or_default();
        let scope = if special { " (finite elements)" } else { "" };
        out.push(format!("max |a-b| {d}{ulp}{scope}"));
    }
    if e.nan_vs_number > 0 {
        out.push(format!("{} NaN vs number", group(e.nan_vs_number)));
    }
    if e.infinity_vs_other > 0 {
        out.push(format!("{} infinity vs other", group(e.infinity_vs_other)));
    }
    out
}

fn missing_phrase(r: &RangeReport, sides: Sides) -> String {
    match (r.missing_a, r.missing_b) {
        (0, b) => format!("{} missing from {}", plural(b, "byte", "bytes"), sides.b),
        (a, 0) => format!("{} missing from {}", plural(a, "byte", "bytes"), sides.a),
        (a, b) => format!(
            "{} missing from {}, {} from {}",
            plural(a, "byte", "bytes"),
            sides.a,
            group(b),
            sides.b
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::range::compare_range;
    use crate::diff::rules::{Comparison, Tolerance};
    use crate::diff::sweep::Sweep;

    const SIDES: Sides = Sides {
        a: "a.bin",
        b: "b.bin",
    };

    fn summary(a: &[f32], b: &[f32], t: Tolerance) -> String {
        let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (a, b) = (bytes(a), bytes(b));
        let cmp = Comparison {
            dtype: DType::F32,
            big_endian: false,
            tolerance: t,
        };
        let end = a.len().max(b.len()) as u64;
        let r = compare_range(&a[..], &b[..], 0, end, &Sweep::new(&cmp, 2), &mut |_| {});
        range_summary(&r.unwrap(), SIDES)
    }

    #[test]
    fn the_byte_headline_agrees_with_the_typed_result() {
        let a: Vec<f32> = (0..1024).map(|i| i as f32 + 0.5).collect();
        let b: Vec<f32> = a.iter().map(|x| f32::from_bits(x.to_bits() ^ 1)).collect();
        let s = summary(
            &a,
            &b,
            Tolerance {
                ulp: 1,
                ..Default::default()
            },
        );
        assert_eq!(
            s,
            "1 024 of 4 096 bytes differ; 0 of 1 024 f32 elements beyond tolerance, 1 024 within tolerance; max |a-b| 6.103515625e-5, 1 ULP"
        );
    }

    #[test]
    fn nan_and_infinity_are_counted_not_maximised() {
        let s = summary(
            &[1.0, f32::NAN, 5.0, 0.1],
            &[1.5, 2.0, f32::INFINITY, 0.2],
            Tolerance::default(),
        );
        assert_eq!(
            s,
            "7 of 16 bytes differ; 4 of 4 f32 elements beyond tolerance, 0 within tolerance, first at index 0 (offset 0x0: 1 vs 1.5); max |a-b| 0.5, 8 388 608 ULP (finite elements); 1 NaN vs number; 1 infinity vs other"
        );
        assert!(!s.contains("inf ") && !s.contains("18446744073709551615"));
    }

    #[test]
    fn missing_and_equal_are_different_words() {
        let s = summary(&[1.0, 2.0], &[1.0], Tolerance::default());
        assert_eq!(s, "all 1 f32 element equal; 4 bytes missing from b.bin");
        assert_eq!(group(1048576), "1 048 576");
    }
}
