//! Compile-time axes of a sweep: `--define NAME=VALUES` makes NAME a preprocessor macro of the
//! kernel's source with one value per variant (Kernel Tuner's `tune_params`), and launch
//! geometry may be written in terms of them (`--block TILE`, `--grid "GRID_X*4/TILE"`).
//! The axes themselves ([`Defines`]) are the protocol's (`rr_engine::replay::variant::defines`): a
//! sweep's events carry them. Pure: tested without a GPU or a compiler.

use serde::{Deserialize, Serialize};

pub use rr_engine::replay::variant::defines::*;

/// An expression's length and parenthesis depth at most (the evaluator parses recursively).
pub const MAX_EXPRESSION: usize = 256;
pub const MAX_NESTING: usize = 32;

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
