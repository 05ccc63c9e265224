//! `rr-tui diff A B`: two snapshot files, byte for byte (the differing ranges), and as typed
//! values when `--type` is given (on all cores).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::file_name;
use crate::cli::DiffArgs;
use crate::commands::progress_bar;
use crate::error::{Error, Result};
use rr_engine::diff::range::{compare_range, RangeReport};
use rr_engine::diff::sweep::Sweep;
use rr_engine::diff::text::{group, plural, range_summary, Sides};
use rr_engine::diff::typed::format_value;
use rr_engine::diff::{self, Comparison, DiffOutcome};
use rr_engine::snapshot::Snapshot;
use rr_format::inspect::human;

#[derive(serde::Serialize)]
struct FileDiff {
    a: String,
    b: String,
    len_a: u64,
    len_b: u64,
    /// The common length, compared byte for byte.
    compared: u64,
    /// Bytes that differ (exact).
    differing_bytes: u64,
    /// Bytes present in the longer file only, and which file is shorter ("a" or "b").
    missing_bytes: u64,
    missing_from: Option<&'static str>,
    /// Merged ranges of differing bytes (nearby differences are one range).
    differing_ranges: usize,
    ranges: Vec<[u64; 2]>,
    /// With --type: the comparison, and what it found over the whole files.
    comparison: Option<String>,
    typed: Option<RangeReport>,
    equal: bool,
    /// "identical", "equal within tolerance" or "different".
    verdict: &'static str,
}

pub(super) fn diff(args: &DiffArgs, cmp: &Comparison, b: &Path) -> Result<i32> {
    let a = args.a.as_path();
    // Refused before comparing (snapshots may take minutes to read), not after.
    if let Some(path) = &args.export_csv {
        rr_format::fsio::ensure_absent(path)?;
    }
    let (sa, sb) = (Snapshot::open(a)?, Snapshot::open(b)?);
    let out = byte_index(&sa, &sb)?;
    let typed = match cmp.is_bytes() {
        true => None,
        false => Some(typed_compare(&sa, &sb, cmp, args.max)?),
    };
    if let Some(path) = &args.export_csv {
        export_ranges(path, &out)?;
    }
    let identical = out.identical();
    let equal = out.missing_bytes() == 0 && typed.as_ref().map_or(identical, |t| t.equal());
    let report = FileDiff {
        a: a.display().to_string(),
        b: b.display().to_string(),
        len_a: out.len_a,
        len_b: out.len_b,
        compared: out.compared,
        differing_bytes: out.index.differing_bytes(),
        missing_bytes: out.missing_bytes(),
        missing_from: match out.len_a.cmp(&out.len_b) {
            std::cmp::Ordering::Less => Some("a"),
            std::cmp::Ordering::Greater => Some("b"),
            std::cmp::Ordering::Equal => None,
        },
        differing_ranges: out.index.ranges.len(),
        ranges: out
            .index
            .ranges
            .iter()
            .take(args.max)
            .map(|r| [r.start, r.end - r.start])
            .collect(),
        comparison: typed.as_ref().map(|_| cmp.describe()),
        typed,
        equal,
        verdict: match (identical, equal) {
            (true, _) => "identical",
            (false, true) => "equal within tolerance",
            (false, false) => "different",
        },
    };
    if args.json {
        super::super::print_json(&report);
    } else {
        print(&report, cmp);
    }
    Ok(if equal { 0 } else { 1 })
}

fn print(r: &FileDiff, cmp: &Comparison) {
    let (name_a, name_b) = (file_name(Path::new(&r.a)), file_name(Path::new(&r.b)));
    if r.len_a == 0 && r.len_b == 0 {
        crate::outln!("both files are empty: identical");
        return;
    }
    let common = match r.missing_from {
        Some(short) => {
            let short = if short == "a" { &name_a } else { &name_b };
            crate::outln!(
                "lengths differ: {name_a} is {}, {name_b} is {}: {} missing from {short}",
                plural(r.len_a, "byte", "bytes"),
                plural(r.len_b, "byte", "bytes"),
                plural(r.missing_bytes, "byte", "bytes")
            );
            "common "
        }
        None => "",
    };
    crate::outln!(
        "{} of {} {common}bytes differ ({}) in {} range(s)",
        group(r.differing_bytes),
        group(r.compared),
        human(r.differing_bytes),
        r.differing_ranges
    );
    for [off, len] in &r.ranges {
        crate::outln!("  {off:#012x}  {len} byte(s)");
    }
    if r.differing_ranges > r.ranges.len() {
        crate::outln!(
            "  … {} more (use --max or --export-csv)",
            r.differing_ranges - r.ranges.len()
        );
    }
    if let (Some(what), Some(t)) = (&r.comparison, &r.typed) {
        let sides = Sides {
            a: &name_a,
            b: &name_b,
        };
        crate::outln!("{what}: {}", range_summary(t, sides));
        for m in &t.elements.first {
            crate::outln!(
                "  [{}] offset {:#x}: {} vs {}",
                m.index,
                m.offset,
                format_value(m.a, cmp.dtype),
                format_value(m.b, cmp.dtype)
            );
        }
    }
    crate::outln!("{}", r.verdict);
}

/// The differing-range index of two snapshots, with a progress bar on a terminal.
fn byte_index(a: &Snapshot, b: &Snapshot) -> Result<DiffOutcome> {
    let pb = progress_bar(a.len().min(b.len()));
    let out = diff::build_index(
        a,
        b,
        diff::index::DEFAULT_MERGE_GAP,
        &AtomicBool::new(false),
        |done, _, _| {
            if let Some(pb) = &pb {
                pb.set_position(done);
            }
        },
    )?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    Ok(out)
}

/// Typed comparison of two whole files on all cores (bounded resident memory).
fn typed_compare(a: &Snapshot, b: &Snapshot, cmp: &Comparison, keep: usize) -> Result<RangeReport> {
    let end = a.len().max(b.len());
    let pb = progress_bar(a.len().min(b.len()));
    let mut progress = |done: u64| {
        if let Some(pb) = &pb {
            pb.set_position(done);
        }
    };
    let report = compare_range(a, b, 0, end, &Sweep::new(cmp, keep), &mut progress)?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    Ok(report)
}

/// Every differing range as CSV, written fresh (a new file renamed into place: never through
/// a link that happens to sit at `path`, and never over a file that appeared meanwhile).
fn export_ranges(path: &Path, out: &DiffOutcome) -> Result<()> {
    let file = rr_format::fsio::AtomicWriter::create(path)?;
    let mut w = csv::Writer::from_writer(file);
    let io = |e: csv::Error| Error::format(path, e.to_string());
    w.write_record(["offset", "length"]).map_err(io)?;
    for r in &out.index.ranges {
        w.write_record([r.start.to_string(), (r.end - r.start).to_string()])
            .map_err(io)?;
    }
    let file = w
        .into_inner()
        .map_err(|e| Error::format(path, e.to_string()))?;
    Ok(file.commit_new()?)
}
