//! A sweep's compile-time axes as its events carry them: `--define NAME=VALUES` makes NAME a
//! preprocessor macro of the kernel's source with one value per variant (Kernel Tuner's
//! `tune_params`). Variants are the combinations of the define axes, the first axis varying
//! slowest. Their parsing and limits live here, with the type; launch geometry written in terms
//! of them is the tuner's (`rr_tune::defines`).

use rr_format::text::{capped, quoted};
use serde::{Deserialize, Serialize};

use super::MAX_AXIS_VALUES;
use crate::replay::candidate::check_identifier;

/// At most this many variants in one sweep: each is a compilation.
pub const MAX_VARIANTS: usize = 4096;
/// At most this many define axes.
pub const MAX_DEFINE_AXES: usize = 16;

/// A define's name or one of its values is at most this many bytes: each goes into every CSV
/// row of its variants.
pub const MAX_DEFINE_TEXT: usize = 256;

/// Names a define may not take (any case): fields `tune --export`'s header writes beside the defines.
pub const RESERVED_FIELDS: [&str; 2] = ["SHARED_MEM", "MAX_REGISTERS"];

/// The recorded geometry's names in expressions.
pub const GEOMETRY_NAMES: [&str; 6] = [
    "GRID_X", "GRID_Y", "GRID_Z", "BLOCK_X", "BLOCK_Y", "BLOCK_Z",
];

/// One define axis: a macro name and its values (as the compiler will see them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefineAxis {
    #[serde(deserialize_with = "crate::bounded::text::<_, MAX_DEFINE_TEXT>")]
    pub name: String,
    #[serde(deserialize_with = "crate::bounded::texts::<_, MAX_AXIS_VALUES, MAX_DEFINE_TEXT>")]
    pub values: Vec<String>,
}

impl DefineAxis {
    /// `NAME=VALUE,VALUE,…`: what [`DefineAxis::parse`] reads back as this axis.
    pub fn spec(&self) -> String {
        format!("{}={}", self.name, self.values.join(","))
    }

    /// `NAME=ITEM,ITEM,…`: an item is a number, a range (`1..8`, `16..64*2`, `0..12:4`, as the
    /// other axes), or a word (letters, digits, `_`, `.`, `-`: `float`, `2.5f`).
    pub fn parse(spec: &str) -> Result<DefineAxis, String> {
        let Some((name, list)) = spec.split_once('=') else {
            return Err(format!(
                "{}: a define axis is NAME=VALUES, e.g. TILE=16,32,64 or UNROLL=1..8*2",
                quoted(spec)
            ));
        };
        let name = name.trim();
        check_identifier(name).map_err(|why| format!("{}: {why}", quoted(spec)))?;
        // What a sweep writes, its report must be read back with (`tune merge`, `--resume`).
        if name.len() > MAX_DEFINE_TEXT {
            return Err(format!(
                "a define's name is at most {MAX_DEFINE_TEXT} bytes"
            ));
        }
        let mut values = Vec::new();
        for item in list.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(format!("{}: empty item in the list", quoted(spec)));
            }
            if item.len() > MAX_DEFINE_TEXT {
                return Err(format!(
                    "{name}: a value is at most {MAX_DEFINE_TEXT} bytes"
                ));
            }
            let number = item.trim_start_matches('-');
            if number.len() > 1
                && number.starts_with('0')
                && number.chars().all(|c| c.is_ascii_digit())
            {
                return Err(format!(
                    "{}: {} has a leading zero, which C reads as octal; write it without",
                    quoted(spec),
                    capped(item)
                ));
            }
            if item.starts_with(|c: char| c.is_ascii_digit()) && item.contains("..") {
                let range = super::axis::parse_scalars(item, true)?;
                values.extend(range.into_iter().map(|v| v.to_string()));
            } else if item
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            {
                values.push(item.to_string());
            } else {
                return Err(format!(
                    "{}: {} is neither a number, a range nor a word",
                    quoted(spec),
                    quoted(item)
                ));
            }
            if values.len() > MAX_AXIS_VALUES {
                return Err(format!(
                    "{}: more than {MAX_AXIS_VALUES} values",
                    quoted(spec)
                ));
            }
        }
        let mut seen = std::collections::HashSet::new();
        values.retain(|v| seen.insert(v.clone()));
        Ok(DefineAxis {
            name: name.to_string(),
            values,
        })
    }
}

/// The define axes of a sweep and the variants they span.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Defines {
    #[serde(deserialize_with = "crate::bounded::at_most::<_, _, MAX_DEFINE_AXES>")]
    pub axes: Vec<DefineAxis>,
}

impl Defines {
    pub fn new(axes: Vec<DefineAxis>) -> Result<Defines, String> {
        if axes.len() > MAX_DEFINE_AXES {
            return Err(format!("at most {MAX_DEFINE_AXES} define axes"));
        }
        for (i, a) in axes.iter().enumerate() {
            let upper = a.name.to_ascii_uppercase();
            if axes[..i]
                .iter()
                .any(|b| b.name.eq_ignore_ascii_case(&a.name))
            {
                return Err(format!(
                    "--define {} is given twice (names differing only in case are one macro in tune --export's header)",
                    a.name
                ));
            }
            if GEOMETRY_NAMES.contains(&upper.as_str()) || RESERVED_FIELDS.contains(&upper.as_str())
            {
                return Err(format!(
                    "--define {}: the name is taken (the recorded geometry in expressions, a field of tune --export's header)",
                    a.name
                ));
            }
        }
        let count = axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
        match count {
            Some(n) if n <= MAX_VARIANTS => Ok(Defines { axes }),
            _ => Err(format!(
                "the define axes span more than {MAX_VARIANTS} variants (each is a compilation); narrow them"
            )),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.axes.is_empty()
    }

    /// How many variants (1 without axes: the source as it is).
    pub fn variants(&self) -> usize {
        // Saturating: many hostile axes multiply past usize, and the count is then refused.
        self.axes
            .iter()
            .fold(1usize, |n, a| n.saturating_mul(a.values.len()))
    }

    /// `(name, value)` of each axis for variant `v` (the first axis varies slowest).
    pub fn values(&self, v: usize) -> Vec<(&str, &str)> {
        let mut rest = v;
        let mut out = vec![("", ""); self.axes.len()];
        for (i, a) in self.axes.iter().enumerate().rev() {
            let n = a.values.len().max(1);
            // `get`: a report read back may hold an axis without values.
            out[i] = (
                a.name.as_str(),
                a.values.get(rest % n).map_or("", String::as_str),
            );
            rest /= n;
        }
        out
    }

    /// The variant whose values are `values` (by name), when there is one.
    pub fn variant_of(&self, values: &[(String, String)]) -> Option<usize> {
        let mut v = 0usize;
        for a in &self.axes {
            let (_, value) = values.iter().find(|(n, _)| *n == a.name)?;
            let i = a.values.iter().position(|x| x == value)?;
            v = v * a.values.len() + i;
        }
        Some(v)
    }

    /// `TILE=16 UNROLL=4` (empty without axes).
    pub fn describe(&self, v: usize) -> String {
        self.values(v)
            .iter()
            .map(|(n, x)| format!("{n}={x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The compiler options of variant `v` (`-DTILE=16`, …).
    pub fn options(&self, v: usize) -> Vec<String> {
        self.values(v)
            .iter()
            .map(|(n, x)| format!("-D{n}={x}"))
            .collect()
    }
}
