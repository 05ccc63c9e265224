//! `rr-tui diff`: two snapshot files (`files`), one instance's snapshots (`instance`), or two
//! instances (`instances`). Exit status as `cmp`: 0 equal, 1 different or missing, 2 trouble.

mod files;
mod instance;
mod instances;

use std::path::Path;

use crate::cli::{CompareArgs, DiffArgs};
use crate::error::{Error, Result};
use rr_engine::diff::{Comparison, DType, Tolerance};

pub fn run(args: &DiffArgs) -> Result<i32> {
    let result = comparison(&args.compare).and_then(|cmp| {
        // A directory for either side gets the answer inspect, replay and repro give one (a
        // record directory: `report` lists its instances), not the file reader's refusal.
        if let Some(dir) = std::iter::once(&args.a)
            .chain(args.b.as_ref())
            .find(|p| p.is_dir())
        {
            return Err(crate::commands::not_a_record::directory_given(dir, "diff"));
        }
        let is_json = |p: &Path| p.extension().is_some_and(|e| e == "json");
        match &args.b {
            None if is_json(&args.a) => instance::diff(args, &cmp),
            Some(b) if is_json(&args.a) && is_json(b) => instances::diff(args, &cmp, b),
            Some(b) if is_json(&args.a) || is_json(b) => Err(Error::invalid(
                "diff compares two descriptors (A.json B.json) or two snapshot files, not one of each",
            )),
            Some(b) => files::diff(args, &cmp, b),
            None => Err(Error::invalid(lone_path(&args.a))),
        }
    });
    // Every error of diff is trouble (exit 2, as cmp's), a failed run included.
    Ok(result.unwrap_or_else(|e| {
        crate::fail(&e, args.json);
        2
    }))
}

/// Why `diff A`, one path that is no descriptor, compares nothing: what A is (missing, or a
/// file that is not a descriptor; a directory was answered before) and what diff takes.
fn lone_path(a: &Path) -> String {
    use rr_format::text::visible_path;
    const TAKES: &str = "diff takes two snapshot files, one descriptor (.json) or two descriptors";
    let shown = visible_path(a);
    match std::fs::metadata(a) {
        Err(e) => format!("{shown}: {}; {TAKES}", rr_format::text::io_reason(&e)),
        Ok(_) => {
            let descriptor = a.with_extension("json");
            let beside = match descriptor.is_file() {
                true => format!(
                    " (its instance's snapshots: `rr-tui diff {}`)",
                    shell_words::quote(&visible_path(&descriptor))
                ),
                false => String::new(),
            };
            format!("{shown}: not a descriptor (.json), and no second file to compare it with; {TAKES}{beside}")
        }
    }
}

/// The comparison the flags ask for: `--tolerance`'s, or the old spellings' (`--type` and its
/// parts); byte for byte without either. Old flags that only mean something for typed values
/// are refused without `--type`, rather than silently ignored.
pub fn comparison(c: &CompareArgs) -> Result<Comparison> {
    if let Some(comparison) = c.tolerance {
        return Ok(comparison);
    }
    let typed_only = [
        ("--atol", c.atol.is_some()),
        ("--rtol", c.rtol.is_some()),
        ("--ulp", c.ulp.is_some()),
        ("--endian", c.endian.is_some()),
    ];
    let Some(t) = &c.dtype else {
        return match typed_only.iter().find(|(_, given)| *given) {
            Some((flag, _)) => Err(Error::invalid(format!(
                "{flag} needs --type (the element type it applies to)"
            ))),
            None => Ok(Comparison::bytes()),
        };
    };
    let dtype = DType::parse(t).ok_or_else(|| {
        Error::invalid(format!(
            "unknown --type {t:?} (u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)"
        ))
    })?;
    if c.ulp.is_some() && !dtype.is_float() {
        return Err(Error::invalid(format!(
            "--ulp needs a float --type (f16 bf16 f32 f64), not {}",
            dtype.name()
        )));
    }
    let tolerance = |name: &str, v: Option<f64>| match v {
        Some(v) if !(v >= 0.0 && v.is_finite()) => Err(Error::invalid(format!(
            "{name} must be a finite non-negative number"
        ))),
        v => Ok(v.unwrap_or(0.0)),
    };
    Ok(Comparison {
        dtype,
        big_endian: c.endian.as_deref() == Some("big"),
        tolerance: Tolerance {
            atol: tolerance("--atol", c.atol)?,
            rtol: tolerance("--rtol", c.rtol)?,
            ulp: c.ulp.unwrap_or(0),
        },
    })
}

/// A file's name for messages (`X.record_output`), its path when it has none.
fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}
