//! Compile-time axes of a sweep: `--define NAME=VALUES` makes NAME a preprocessor macro of the
//! kernel's source with one value per variant (Kernel Tuner's `tune_params`), and launch
//! geometry may be written in terms of them (`--block TILE`, `--grid "GRID_X*4/TILE"`).
//! Variants are the combinations of the define axes, the first axis varying slowest. Pure: tested
//! without a GPU or a compiler.

use serde::{Deserialize, Serialize};

use super::axis::MAX_AXIS_VALUES;
use crate::replay::candidate::check_identifier;

/// At most this many variants in one sweep: each is a compilation.
pub const MAX_VARIANTS: usize = 4096;
/// At most this many define axes.
pub const MAX_DEFINE_AXES: usize = 16;

/// A define's name or one of its values is at most this many bytes: each goes into every CSV
/// row of its variants.
pub const MAX_DEFINE_TEXT: usize = 256;

/// One define axis: a macro name and its values (as the compiler will see them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefineAxis {
    #[serde(deserialize_with = "super::bounded::text::<_, MAX_DEFINE_TEXT>")]
    pub name: String,
    #[serde(deserialize_with = "super::bounded::texts::<_, MAX_AXIS_VALUES, MAX_DEFINE_TEXT>")]
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
                "{spec:?}: a define axis is NAME=VALUES, e.g. TILE=16,32,64 or UNROLL=1..8*2"
            ));
        };
        let name = name.trim();
        check_identifier(name).map_err(|why| format!("{spec:?}: {why}"))?;
        // What a sweep writes, its report must be read back with (`tune merge`, `--resume`).
        if name.len() > MAX_DEFINE_TEXT {
            return Err(format!(
                "a define's name is at most {MAX_DEFINE_TEXT} bytes"
            ));
        }
        let mut values = Vec::new();
        for item in list.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(format!("{spec:?}: empty item in the list"));
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
                    "{spec:?}: {item} has a leading zero, which C reads as octal; write it without"
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
                    "{spec:?}: {:?} is neither a number, a range nor a word",
                    rr_format::text::visible(item)
                ));
            }
            if values.len() > MAX_AXIS_VALUES {
                return Err(format!("{spec:?}: more than {MAX_AXIS_VALUES} values"));
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
    #[serde(deserialize_with = "super::bounded::at_most::<_, _, MAX_DEFINE_AXES>")]
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

/// An expression's length and parenthesis depth at most (the evaluator parses recursively).
pub const MAX_EXPRESSION: usize = 256;
pub const MAX_NESTING: usize = 32;

/// Fields `tune --export`'s header writes beside the defines.
pub const RESERVED_FIELDS: [&str; 2] = ["SHARED_MEM", "MAX_REGISTERS"];

/// The recorded geometry's names in expressions.
pub const GEOMETRY_NAMES: [&str; 6] = [
    "GRID_X", "GRID_Y", "GRID_Z", "BLOCK_X", "BLOCK_Y", "BLOCK_Z",
];

/// Launch geometry written as expressions: up to three dimensions separated by ` x ` (spaces
/// around the x), each an integer expression over the defines and the recorded geometry
/// (`GRID_X` … `BLOCK_Z`), e.g. `TILE`, `TILE x 8`, `(GRID_X * 4 + TILE - 1) / TILE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeometryExpr {
    pub dims: Vec<String>,
}

impl GeometryExpr {
    /// Whether `spec` is written as an expression rather than the axes' numbers and ranges
    /// (`16x16,32..1024*2`, `cover`): it holds something else.
    pub fn is_expression(spec: &str) -> bool {
        spec.split(',')
            .filter(|item| !item.trim().eq_ignore_ascii_case("cover"))
            .any(|item| {
                item.chars()
                    .any(|c| !(c.is_ascii_digit() || c.is_whitespace() || "x.*:".contains(c)))
            })
    }

    pub fn parse(spec: &str) -> Result<GeometryExpr, String> {
        // Bounded before the evaluator sees it: it parses recursively.
        if spec.len() > MAX_EXPRESSION {
            return Err(format!(
                "an expression is at most {MAX_EXPRESSION} characters"
            ));
        }
        let mut depth = 0usize;
        for c in spec.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth > MAX_NESTING {
                return Err(format!(
                    "an expression nests parentheses at most {MAX_NESTING} deep"
                ));
            }
        }
        let dims: Vec<String> = spec.split(" x ").map(|d| d.trim().to_string()).collect();
        if dims.len() > 3 || dims.iter().any(String::is_empty) {
            return Err(format!(
                "{spec:?}: an expression has up to three dimensions separated by \" x \""
            ));
        }
        if spec
            .chars()
            .any(|c| c.is_control() || c == '"' || c == ';' || c == '=')
        {
            return Err(format!(
                "{:?}: an expression uses numbers, names, + - * / % and parentheses",
                rr_format::text::visible(spec)
            ));
        }
        Ok(GeometryExpr { dims })
    }

    /// The geometry for variant `v` of `defines`, the recorded launch being `grid`×`block`.
    pub fn eval(
        &self,
        defines: &Defines,
        v: usize,
        grid: [u32; 3],
        block: [u32; 3],
    ) -> Result<[u32; 3], String> {
        use evalexpr::{ContextWithMutableVariables, DefaultNumericTypes, HashMapContext, Value};
        let mut ctx = HashMapContext::<DefaultNumericTypes>::new();
        let recorded = grid.iter().chain(&block).map(|&x| i64::from(x));
        for (name, x) in GEOMETRY_NAMES.iter().zip(recorded) {
            let _ = ctx.set_value(name.to_string(), Value::Int(x));
        }
        for (name, x) in defines.values(v) {
            if let Ok(n) = x.parse::<i64>() {
                let _ = ctx.set_value(name.to_string(), Value::Int(n));
            }
        }
        let values = defines.values(v);
        let mut out = [1u32; 3];
        for (i, d) in self.dims.iter().enumerate() {
            let tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(d)
                .map_err(|e| format!("{d:?} is not an expression: {e}"))?;
            if let Some(f) = tree.iter_function_identifiers().next() {
                return Err(format!(
                    "{d:?}: {f}(…) is not supported; use numbers, names, + - * / % and parentheses"
                ));
            }
            // Names are said in rr-tui's words, not the evaluator's.
            for name in tree.iter_variable_identifiers() {
                if GEOMETRY_NAMES.contains(&name) {
                    continue;
                }
                match values.iter().find(|(n, _)| *n == name) {
                    Some((_, x)) if x.parse::<i64>().is_ok() => {}
                    Some((_, x)) => {
                        return Err(format!(
                            "{d:?}: {name} is {x:?} for {}; geometry needs whole numbers",
                            describe_or_recorded(defines, v)
                        ))
                    }
                    None => {
                        let mut known: Vec<&str> = GEOMETRY_NAMES.to_vec();
                        known.extend(defines.axes.iter().map(|a| a.name.as_str()));
                        return Err(format!(
                            "{d:?}: unknown name {name} (known: {})",
                            known.join(", ")
                        ));
                    }
                }
            }
            let n = tree.eval_int_with_context(&ctx).map_err(|e| match e {
                evalexpr::EvalexprError::ExpectedInt { .. } => format!(
                    "{d:?} is not one whole number for {} (dimensions are separated by \" x \", and / divides whole numbers)",
                    describe_or_recorded(defines, v)
                ),
                other => format!(
                    "{d:?} does not evaluate for {}: {other}",
                    describe_or_recorded(defines, v)
                ),
            })?;
            out[i] = u32::try_from(n).ok().filter(|&n| n >= 1).ok_or_else(|| {
                format!(
                    "{d:?} is {n} for {}: a dimension is 1 to {}",
                    describe_or_recorded(defines, v),
                    u32::MAX
                )
            })?;
        }
        Ok(out)
    }
}

fn describe_or_recorded(defines: &Defines, v: usize) -> String {
    match defines.describe(v) {
        s if s.is_empty() => "the recorded launch".into(),
        s => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defines(specs: &[&str]) -> Defines {
        Defines::new(
            specs
                .iter()
                .map(|s| DefineAxis::parse(s).unwrap())
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn axes_parse_numbers_ranges_and_words() {
        let a = DefineAxis::parse("UNROLL=1..8*2").unwrap();
        assert_eq!(a.values, ["1", "2", "4", "8"]);
        let a = DefineAxis::parse("T = float,double,float").unwrap();
        assert_eq!((a.name.as_str(), a.values.len()), ("T", 2));
        assert_eq!(
            DefineAxis::parse("X=0..12:4").unwrap().values,
            ["0", "4", "8", "12"]
        );
        for bad in ["TILE", "1T=2", "T=", "T=1,,2", "T=a b", "T=\"x\"", "T=1;rm"] {
            assert!(DefineAxis::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn variants_enumerate_with_the_first_axis_slowest() {
        let d = defines(&["TILE=16,32", "UNROLL=1,2,4"]);
        assert_eq!(d.variants(), 6);
        assert_eq!(d.describe(0), "TILE=16 UNROLL=1");
        assert_eq!(d.describe(4), "TILE=32 UNROLL=2");
        assert_eq!(d.options(5), ["-DTILE=32", "-DUNROLL=4"]);
        let values = vec![("UNROLL".into(), "2".into()), ("TILE".into(), "32".into())];
        assert_eq!(d.variant_of(&values), Some(4));
        assert_eq!(d.variant_of(&[("TILE".into(), "8".into())]), None);
        assert_eq!(Defines::default().variants(), 1);
        assert!(Defines::new(vec![
            DefineAxis::parse("A=1").unwrap(),
            DefineAxis::parse("A=2").unwrap()
        ])
        .is_err());
        assert!(Defines::new(vec![DefineAxis::parse("GRID_X=1").unwrap()]).is_err());
        assert!(Defines::new(vec![DefineAxis::parse("grid_x=1").unwrap()]).is_err());
        assert!(Defines::new(vec![DefineAxis::parse("Shared_Mem=1").unwrap()]).is_err());
        assert!(Defines::new(vec![
            DefineAxis::parse("tile=1").unwrap(),
            DefineAxis::parse("TILE=2").unwrap()
        ])
        .is_err());
        assert!(DefineAxis::parse("T=010").unwrap_err().contains("octal"));
        assert!(DefineAxis::parse("T=0,10,-5").is_ok());
        let huge: Vec<DefineAxis> = (0..4)
            .map(|i| DefineAxis::parse(&format!("A{i}=1..10")).unwrap())
            .collect();
        assert!(Defines::new(huge).unwrap_err().contains("variants"));
    }

    #[test]
    fn geometry_expressions_evaluate_per_variant() {
        let d = defines(&["TILE=1,2,4"]);
        assert!(GeometryExpr::is_expression("TILE"));
        assert!(GeometryExpr::is_expression("128 x TILE"));
        assert!(!GeometryExpr::is_expression("32..1024*2"));
        assert!(!GeometryExpr::is_expression("cover"));
        assert!(!GeometryExpr::is_expression("8,cover,16x16,1..8:2"));
        assert!(GeometryExpr::is_expression("GRID_X/TILE"));
        let grid = GeometryExpr::parse("(GRID_X * 4 + TILE - 1) / TILE").unwrap();
        let rec = ([1000, 1, 1], [256, 1, 1]);
        assert_eq!(grid.eval(&d, 0, rec.0, rec.1).unwrap(), [4000, 1, 1]);
        assert_eq!(grid.eval(&d, 2, rec.0, rec.1).unwrap(), [1000, 1, 1]);
        let block = GeometryExpr::parse("BLOCK_X / TILE x 2").unwrap();
        assert_eq!(block.eval(&d, 1, rec.0, rec.1).unwrap(), [128, 2, 1]);
        let e = GeometryExpr::parse("TILE - 4")
            .unwrap()
            .eval(&d, 0, rec.0, rec.1);
        assert!(e.unwrap_err().contains("is -3 for TILE=1"));
        let e = GeometryExpr::parse("TILES")
            .unwrap()
            .eval(&d, 0, rec.0, rec.1);
        assert!(e.unwrap_err().contains("unknown name TILES (known: GRID_X"));
        let e = GeometryExpr::parse("TILE,2")
            .unwrap()
            .eval(&d, 0, rec.0, rec.1);
        assert!(e.unwrap_err().contains("not one whole number"));
        let e = GeometryExpr::parse("math::pow(TILE, 2)")
            .unwrap()
            .eval(&d, 0, rec.0, rec.1);
        assert!(e.unwrap_err().contains("is not supported"));
        let words = defines(&["T=float,double"]);
        let e = GeometryExpr::parse("GRID_X * T")
            .unwrap()
            .eval(&words, 0, rec.0, rec.1);
        assert!(e.unwrap_err().contains("T is \"float\" for T=float"));
        let e = GeometryExpr::parse("TILE / 0")
            .unwrap()
            .eval(&d, 0, rec.0, rec.1);
        assert!(e.is_err());
        for bad in ["a x b x c x d", "A = 3", "x\u{1b}", "1 x "] {
            assert!(GeometryExpr::parse(bad).is_err(), "{bad:?}");
        }
        let deep = format!("{}TILE{}", "(".repeat(20_000), ")".repeat(20_000));
        assert!(GeometryExpr::parse(&deep).unwrap_err().contains("at most"));
        let long = vec!["TILE"; 20_000].join("+");
        assert!(GeometryExpr::parse(&long).unwrap_err().contains("at most"));
        let nested = format!("{}TILE{}", "(".repeat(33), ")".repeat(33));
        assert!(GeometryExpr::parse(&nested).unwrap_err().contains("deep"));
    }
}
