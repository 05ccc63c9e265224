//! `rr-tui diff A B` and `rr-tui diff DESCRIPTOR.json`. Exit status as `cmp`: 0 equal, 1
//! different, 2 trouble.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::cli::{CompareArgs, DiffArgs};
use crate::error::{Error, Result};
use rr_engine::diff::regions::{self, RegionReport};
use rr_engine::diff::typed::{self, TypedStats};
use rr_engine::diff::{self, Comparison, DType, DiffOutcome, Tolerance, CHUNK};
use rr_engine::snapshot::{open_recorded, Snapshot};
use rr_format::inspect::human;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;
use rr_format::{Descriptor, InstanceFiles};

pub fn run(args: &DiffArgs) -> Result<i32> {
    let result = if args.a.extension().is_some_and(|e| e == "json") && args.b.is_none() {
        diff_instance(args)
    } else {
        match &args.b {
            Some(b) => diff_files(args, &args.a, b),
            None => Err(Error::invalid(
                "diff needs two snapshot files, or one descriptor (.json)",
            )),
        }
    };
    match result {
        Ok(code) => Ok(code),
        Err(e) => {
            crate::output::error_line(&format!("rr-tui: {e}"));
            Ok(2)
        }
    }
}

pub fn comparison(c: &CompareArgs) -> Result<Comparison> {
    let dtype = match &c.dtype {
        None => DType::U8,
        Some(t) => DType::parse(t).ok_or_else(|| {
            Error::invalid(format!(
                "unknown --type {t:?} (u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)"
            ))
        })?,
    };
    for (name, v) in [("--atol", c.atol), ("--rtol", c.rtol)] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(Error::invalid(format!(
                "{name} must be a non-negative number"
            )));
        }
    }
    Ok(Comparison {
        dtype,
        big_endian: c.endian == "big",
        tolerance: Tolerance {
            atol: c.atol,
            rtol: c.rtol,
            ulp: c.ulp,
        },
    })
}

fn progress_bar(total: u64) -> Option<indicatif::ProgressBar> {
    (std::io::stderr().is_terminal() && total >= 256 << 20).then(|| {
        let pb = indicatif::ProgressBar::new(total);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    })
}

/// Typed comparison of two whole snapshots, chunk by chunk (bounded resident memory).
pub fn typed_compare(
    a: &Snapshot,
    b: &Snapshot,
    cmp: &Comparison,
    keep: usize,
) -> Result<TypedStats> {
    let size = cmp.dtype.size() as u64;
    let n = a.len().min(b.len()) / size * size;
    let chunk = CHUNK / size * size;
    let mut st = TypedStats::default();
    let mut off = 0;
    let pb = progress_bar(n);
    while off < n {
        let len = chunk.min(n - off);
        let part = typed::compare(
            cmp,
            a.window(off, len as usize),
            b.window(off, len as usize),
            off,
            off / size,
            keep,
        );
        a.check_intact()?;
        b.check_intact()?;
        st.merge(part, keep);
        a.release(off, len);
        b.release(off, len);
        off += len;
        if let Some(pb) = &pb {
            pb.set_position(off);
        }
    }
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    Ok(st)
}

pub fn byte_index(a: &Snapshot, b: &Snapshot) -> Result<DiffOutcome> {
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

#[derive(serde::Serialize)]
struct FileDiff {
    a: String,
    b: String,
    len_a: u64,
    len_b: u64,
    compared: u64,
    differing_bytes: u64,
    differing_ranges: usize,
    ranges: Vec<[u64; 2]>,
    typed: Option<(String, TypedStats)>,
    equal: bool,
}

fn diff_files(args: &DiffArgs, a: &Path, b: &Path) -> Result<i32> {
    let cmp = comparison(&args.compare)?;
    let sa = Snapshot::open(a)?;
    let sb = Snapshot::open(b)?;
    let out = byte_index(&sa, &sb)?;
    let typed = if args.compare.dtype.is_some() {
        Some(typed_compare(&sa, &sb, &cmp, args.max)?)
    } else {
        None
    };
    let equal = out.len_a == out.len_b
        && typed
            .as_ref()
            .map(|t| t.differing == 0)
            .unwrap_or(out.index.ranges.is_empty());
    if let Some(path) = &args.export_csv {
        export_ranges(path, &out)?;
    }
    let report = FileDiff {
        a: a.display().to_string(),
        b: b.display().to_string(),
        len_a: out.len_a,
        len_b: out.len_b,
        compared: out.compared,
        differing_bytes: out.index.differing_bytes(),
        differing_ranges: out.index.ranges.len(),
        ranges: out
            .index
            .ranges
            .iter()
            .take(args.max)
            .map(|r| [r.start, r.end - r.start])
            .collect(),
        typed: typed.map(|t| (cmp.describe(), t)),
        equal,
    };
    if args.json {
        super::print_json(&report);
    } else {
        print_file_diff(&report);
    }
    Ok(if equal { 0 } else { 1 })
}

fn print_file_diff(r: &FileDiff) {
    if r.len_a != r.len_b {
        crate::outln!(
            "lengths differ: {} is {} bytes, {} is {} bytes; comparing the first {}",
            r.a,
            r.len_a,
            r.b,
            r.len_b,
            r.compared
        );
    }
    if r.len_a == 0 && r.len_b == 0 {
        crate::outln!("both files are empty: identical");
        return;
    }
    crate::outln!(
        "{} of {} bytes differ ({}) in {} range(s)",
        regions::group(r.differing_bytes),
        regions::group(r.compared),
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
    if let Some((what, t)) = &r.typed {
        crate::outln!(
            "{what}: {} of {} elements differ beyond tolerance; max |a-b| {}, max ULP {}",
            regions::group(t.differing),
            regions::group(t.compared),
            t.max_abs_err,
            t.max_ulp
        );
        for m in &t.first {
            crate::outln!("  [{}] offset {:#x}: {} vs {}", m.index, m.offset, m.a, m.b);
        }
    }
    crate::outln!("{}", if r.equal { "equal" } else { "different" });
}

/// Every differing range as CSV, written fresh (a new file renamed into place: never through
/// a link that happens to sit at `path`).
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
    Ok(file.commit()?)
}

#[derive(serde::Serialize)]
struct PairReport {
    what: String,
    a: String,
    b: String,
    len_a: u64,
    len_b: u64,
    regions: Vec<RegionReport>,
}

/// Compare two snapshots of one instance region by region.
pub fn instance_pair(
    map: &MemoryMap,
    a: &Snapshot,
    b: &Snapshot,
    cmp: &Comparison,
    keep: usize,
) -> Result<Vec<RegionReport>> {
    regions::compare_regions(map, a, b, cmp, keep)
}

fn diff_instance(args: &DiffArgs) -> Result<i32> {
    let cmp = comparison(&args.compare)?;
    let d = Descriptor::read(&args.a)?;
    let files = InstanceFiles::from_descriptor_path(&args.a);
    let input = open_recorded(&files, &d, Side::Input)?;
    let map = MemoryMap::new(&d, input.len());
    let mut pairs = Vec::new();
    let mut code = 0;
    let output = open_recorded(&files, &d, Side::Output)?;
    pairs.push(PairReport {
        what: "recorded input → recorded output (what the kernel wrote)".into(),
        a: input.path().display().to_string(),
        b: output.path().display().to_string(),
        len_a: input.len(),
        len_b: output.len(),
        regions: instance_pair(&map, &input, &output, &cmp, args.max)?,
    });
    let mut replays = vec![(
        files.replay_output(&d, d.grid(), d.block(), d.shared_memory_size, None),
        "recorded output → replay output (replay verification)",
    )];
    if d.format.is_legacy() {
        replays.push((
            files.legacy_replay_output(),
            "recorded output → replay output of llvm-omp-kernel-replay (.replay.output)",
        ));
    }
    for (replay_path, what) in replays {
        if !replay_path.exists() {
            continue;
        }
        let replay = Snapshot::open(&replay_path)?;
        let regions = instance_pair(&map, &output, &replay, &cmp, args.max)?;
        if regions.iter().any(|r| r.differing > 0) || output.len() != replay.len() {
            code = 1;
        }
        pairs.push(PairReport {
            what: what.into(),
            a: output.path().display().to_string(),
            b: replay.path().display().to_string(),
            len_a: output.len(),
            len_b: replay.len(),
            regions,
        });
    }
    if args.json {
        super::print_json(&pairs);
    } else {
        for p in &pairs {
            crate::outln!("{}", p.what);
            if p.len_a != p.len_b {
                crate::outln!(
                    "  lengths differ: {} vs {} bytes; comparing the common prefix",
                    p.len_a,
                    p.len_b
                );
            }
            for r in &p.regions {
                crate::outln!("  {}", r.summary());
            }
        }
    }
    Ok(code)
}
