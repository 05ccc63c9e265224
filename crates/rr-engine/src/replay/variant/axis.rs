//! The values of one axis of a sweep, as typed (`--grid 1..64:*2`, `--block 128x1x1,256`,
//! `--shared-mem`, `--registers`): parsed and bounded here, for the space (`space`) and the
//! define axes (`defines`) alike.

use rr_format::text::{capped, quoted};
use serde::{Deserialize, Serialize};

pub use super::MAX_AXIS_VALUES;

/// The axes as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Axes {
    pub grid: Option<String>,
    pub block: Option<String>,
    pub shared_mem: Option<String>,
    pub registers: Option<String>,
}

pub use super::config::dim;

/// The values of the grid axis: given dimensions, or "cover" (computed from each block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GridChoice {
    Dims([u32; 3]),
    /// As many blocks as keep the recorded threads in each dimension covered.
    Cover,
}

/// Parse an axis of 3-D values (`--grid`, `--block`).
pub fn parse_dims(spec: &str) -> Result<Vec<[u32; 3]>, String> {
    refuse_replay_form(spec)?;
    let mut out = Vec::new();
    for item in split_items(spec)? {
        let parts: Vec<&str> = item.split('x').collect();
        if parts.len() > 3 {
            return Err(format!(
                "{}: at most three dimensions (XxYxZ)",
                quoted(item)
            ));
        }
        let mut dims: Vec<Vec<u32>> = Vec::with_capacity(3);
        for p in &parts {
            dims.push(parse_values(p)?);
        }
        while dims.len() < 3 {
            dims.push(vec![1]);
        }
        for &x in &dims[0] {
            for &y in &dims[1] {
                for &z in &dims[2] {
                    push_limited(&mut out, [x, y, z], spec)?;
                }
            }
        }
    }
    Ok(dedup(out))
}

/// Parse the grid axis: dimensions, and the word `cover` as one of the items.
pub fn parse_grid(spec: &str) -> Result<Vec<GridChoice>, String> {
    let mut out = Vec::new();
    for item in split_items(spec)? {
        if item.eq_ignore_ascii_case("cover") {
            out.push(GridChoice::Cover);
        } else {
            out.extend(parse_dims(item)?.into_iter().map(GridChoice::Dims));
        }
        if out.len() > MAX_AXIS_VALUES {
            return Err(format!(
                "{}: more than {MAX_AXIS_VALUES} values",
                quoted(spec)
            ));
        }
    }
    Ok(dedup(out))
}

/// The most registers a thread can use: a larger `--registers` value is a typo.
pub const MAX_REGISTERS: u32 = 255;

/// Parse the register-limit axis (`--registers`): values from 1 to [`MAX_REGISTERS`].
pub fn parse_registers(spec: &str) -> Result<Vec<u32>, String> {
    let values = parse_scalars(spec, false)?;
    match values.iter().find(|&&r| r > MAX_REGISTERS) {
        Some(r) => Err(format!(
            "{r} is above {MAX_REGISTERS}, the most a thread can use"
        )),
        None => Ok(values),
    }
}

/// Parse a 1-D axis (`--shared-mem`, `--registers`); `allow_zero` for shared memory.
pub fn parse_scalars(spec: &str, allow_zero: bool) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for item in split_items(spec)? {
        if item.contains('x') {
            return Err(format!("{}: this axis is one-dimensional", quoted(item)));
        }
        for v in parse_values_from(item, if allow_zero { 0 } else { 1 })? {
            push_limited(&mut out, v, spec)?;
        }
    }
    Ok(dedup(out))
}

/// `128,1,1` is how `replay` writes one 3-D value, but here it is a list of three: refuse it
/// with the right spelling rather than sweep blocks of one thread. (A list that really holds 1
/// can put it first: `1,128`.)
fn refuse_replay_form(spec: &str) -> Result<(), String> {
    let items: Vec<&str> = spec.split(',').map(str::trim).collect();
    if (2..=3).contains(&items.len()) && items[1..].iter().all(|i| *i == "1") && items[0] != "1" {
        return Err(format!(
            "{} is a list of {} values here; one 3-D value is written {}x1x1",
            quoted(spec),
            items.len(),
            // The other items are all 1.
            capped(items[0])
        ));
    }
    Ok(())
}

fn split_items(spec: &str) -> Result<Vec<&str>, String> {
    let items: Vec<&str> = spec.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(format!("{}: empty item in the list", quoted(spec)));
    }
    Ok(items)
}

fn push_limited<T>(out: &mut Vec<T>, v: T, spec: &str) -> Result<(), String> {
    if out.len() >= MAX_AXIS_VALUES {
        return Err(format!(
            "{}: more than {MAX_AXIS_VALUES} values",
            quoted(spec)
        ));
    }
    out.push(v);
    Ok(())
}

/// Drop repeated values, keeping the first of each in order.
fn dedup<T: Eq + std::hash::Hash + Clone>(v: Vec<T>) -> Vec<T> {
    let mut seen = std::collections::HashSet::with_capacity(v.len());
    v.into_iter().filter(|x| seen.insert(x.clone())).collect()
}

fn parse_values(s: &str) -> Result<Vec<u32>, String> {
    parse_values_from(s, 1)
}

/// One dimension: `N`, `A..B:S` or `A..B*F`; every value at least `min`.
fn parse_values_from(s: &str, min: u32) -> Result<Vec<u32>, String> {
    let raw = |t: &str| -> Result<u32, String> {
        let t = t.trim();
        t.parse().map_err(|_| {
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                format!(
                    "{}: {} is too large (at most {})",
                    quoted(s),
                    capped(t),
                    u32::MAX
                )
            } else {
                format!("{}: {} is not a whole number", quoted(s), quoted(t))
            }
        })
    };
    let num = |t: &str| -> Result<u32, String> {
        let v = raw(t)?;
        if v < min {
            return Err(format!("{}: values must be at least {min}", quoted(s)));
        }
        Ok(v)
    };
    let Some((a, rest)) = s.split_once("..") else {
        return Ok(vec![num(s)?]);
    };
    let start = num(a)?;
    let (end, step) = if let Some((b, f)) = rest.split_once('*') {
        (num(b)?, Step::Times(raw(f)?))
    } else if let Some((b, st)) = rest.split_once(':') {
        (num(b)?, Step::Plus(raw(st)?))
    } else {
        (num(rest)?, Step::Plus(1))
    };
    if end < start {
        return Err(format!("{}: the range ends before it starts", quoted(s)));
    }
    match step {
        Step::Plus(0) => return Err(format!("{}: a step of 0 never ends", quoted(s))),
        Step::Times(f) if f < 2 || start == 0 => {
            return Err(format!(
                "{}: a geometric range needs a factor of at least 2 and a start above 0",
                quoted(s)
            ))
        }
        _ => {}
    }
    let mut out = Vec::new();
    let mut v = start as u64;
    while v <= end as u64 {
        if out.len() >= MAX_AXIS_VALUES {
            return Err(format!("{}: more than {MAX_AXIS_VALUES} values", quoted(s)));
        }
        out.push(v as u32);
        v = match step {
            Step::Plus(d) => v + d as u64,
            Step::Times(f) => v * f as u64,
        };
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum Step {
    Plus(u32),
    Times(u32),
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_format::text::QUOTE_MAX;

    /// A refused value is quoted capped, however it is refused: a 300-digit number is not
    /// echoed whole (the message stays a line a terminal shows).
    #[test]
    fn a_300_digit_value_is_not_echoed_whole() {
        let long = "9".repeat(300);
        let cut = format!("{}…", "9".repeat(QUOTE_MAX));
        let refused = [
            parse_dims(&long),
            parse_dims(&format!("{long}x1")),
            parse_dims(&format!("1..{long}")),
            parse_dims(&format!("{long},1")),
            parse_dims(&format!("{long}a")),
            parse_dims(&format!("1x2x3x{long}")),
            parse_dims(&format!("{long},")),
            parse_scalars(&format!("{long}x1"), false).map(|_| vec![]),
            parse_grid(&format!("cover,{long}")).map(|_| vec![]),
        ];
        for r in refused {
            let e = r.unwrap_err();
            assert!(e.len() < 200, "{} bytes: {e}", e.len());
            assert!(e.contains('…'), "{e}");
            assert!(!e.contains(&"9".repeat(QUOTE_MAX + 1)), "{e}");
        }
        // The whole message for the commonest case, to the character.
        assert_eq!(
            parse_dims(&long).unwrap_err(),
            format!("\"{cut}\": {cut} is too large (at most 4294967295)")
        );
    }

    /// Ordinary values are quoted as they were, escapes made visible once.
    #[test]
    fn short_values_are_quoted_whole() {
        assert_eq!(
            parse_dims("0").unwrap_err(),
            "\"0\": values must be at least 1"
        );
        assert_eq!(
            parse_dims("128,1,1").unwrap_err(),
            "\"128,1,1\" is a list of 3 values here; one 3-D value is written 128x1x1"
        );
        assert_eq!(
            parse_dims("128,1").unwrap_err(),
            "\"128,1\" is a list of 2 values here; one 3-D value is written 128x1x1"
        );
        assert_eq!(
            parse_scalars("a\x1b", false).unwrap_err(),
            "\"a\\x1b\": \"a\\x1b\" is not a whole number"
        );
    }
}
