//! The values of one axis of a sweep, as typed (`--grid 1..64:*2`, `--block 128x1x1,256`,
//! `--shared-mem`, `--registers`): parsed and bounded here, for the space (`space`) and the
//! define axes (`defines`) alike.

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
            return Err(format!("{item:?}: at most three dimensions (XxYxZ)"));
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
            return Err(format!("{spec:?}: more than {MAX_AXIS_VALUES} values"));
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
            return Err(format!("{item:?}: this axis is one-dimensional"));
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
            "{spec:?} is a list of {} values here; one 3-D value is written {}",
            items.len(),
            items
                .iter()
                .copied()
                .chain(std::iter::repeat("1"))
                .take(3)
                .collect::<Vec<_>>()
                .join("x")
        ));
    }
    Ok(())
}

fn split_items(spec: &str) -> Result<Vec<&str>, String> {
    let items: Vec<&str> = spec.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(format!("{spec:?}: empty item in the list"));
    }
    Ok(items)
}

fn push_limited<T>(out: &mut Vec<T>, v: T, spec: &str) -> Result<(), String> {
    if out.len() >= MAX_AXIS_VALUES {
        return Err(format!("{spec:?}: more than {MAX_AXIS_VALUES} values"));
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
                format!("{s:?}: {t} is too large (at most {})", u32::MAX)
            } else {
                format!("{s:?}: {t:?} is not a whole number")
            }
        })
    };
    let num = |t: &str| -> Result<u32, String> {
        let v = raw(t)?;
        if v < min {
            return Err(format!("{s:?}: values must be at least {min}"));
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
        return Err(format!("{s:?}: the range ends before it starts"));
    }
    match step {
        Step::Plus(0) => return Err(format!("{s:?}: a step of 0 never ends")),
        Step::Times(f) if f < 2 || start == 0 => {
            return Err(format!(
                "{s:?}: a geometric range needs a factor of at least 2 and a start above 0"
            ))
        }
        _ => {}
    }
    let mut out = Vec::new();
    let mut v = start as u64;
    while v <= end as u64 {
        if out.len() >= MAX_AXIS_VALUES {
            return Err(format!("{s:?}: more than {MAX_AXIS_VALUES} values"));
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
