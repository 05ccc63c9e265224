//! `rr-tui diff X.json`: one instance's snapshots pairwise, region by region (kernel arguments,
//! the segment bytes around them): recorded input → recorded output, and recorded output →
//! `.replay_output` when a replay saved one.
//!
//! "Equal" means what `cmp` means: exit 0 only when every pair shown is equal. A kernel that
//! writes memory makes its input and output differ, so 1 is the usual answer; the last line and
//! each pair's `equal` in `--json` say which pair differs.

use std::path::Path;

use super::file_name;
use crate::cli::DiffArgs;
use crate::error::{Error, Result};
use rr_engine::diff::regions::{compare_regions, RegionReport};
use rr_engine::diff::sweep::Sweep;
use rr_engine::diff::text::{plural, region_line, Sides};
use rr_engine::diff::Comparison;
use rr_engine::snapshot::{open_recorded, Snapshot};
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;
use rr_format::{Descriptor, InstanceFiles};

/// Two snapshots of the same layout, compared region by region.
#[derive(serde::Serialize)]
pub(super) struct PairReport {
    /// `input → output`, `output → replay output`, …
    pub what: String,
    pub a: String,
    pub b: String,
    pub len_a: u64,
    pub len_b: u64,
    /// Bytes that differ (exact), over all regions.
    pub differing_bytes: u64,
    /// Bytes present in one file only.
    pub missing_bytes: u64,
    /// Nothing missing and nothing beyond tolerance.
    pub equal: bool,
    pub regions: Vec<RegionReport>,
}

impl PairReport {
    pub fn compare(
        what: &str,
        map: &MemoryMap,
        a: &Snapshot,
        b: &Snapshot,
        sweep: &Sweep,
    ) -> Result<PairReport> {
        let regions = compare_regions(map, a, b, sweep)?;
        Ok(PairReport {
            what: what.to_string(),
            a: a.path().display().to_string(),
            b: b.path().display().to_string(),
            len_a: a.len(),
            len_b: b.len(),
            differing_bytes: regions.iter().map(|r| r.result.differing_bytes).sum(),
            missing_bytes: a.len().abs_diff(b.len()),
            equal: a.len() == b.len() && regions.iter().all(|r| r.result.equal()),
            regions,
        })
    }

    fn identical(&self) -> bool {
        self.equal && self.differing_bytes == 0
    }

    /// The pair's verdict, then its files, then one line per region.
    pub fn print(&self) {
        let verdict = match (self.identical(), self.equal) {
            (true, _) => "equal",
            (false, true) => "equal within tolerance",
            (false, false) => "different",
        };
        crate::outln!("{}: {verdict}", self.what);
        let (name_a, name_b) = (file_name(Path::new(&self.a)), file_name(Path::new(&self.b)));
        let sizes = match self.missing_bytes {
            0 => format!("{} each", plural(self.len_a, "byte", "bytes")),
            m => format!(
                "{} and {}: {} missing from {}",
                plural(self.len_a, "byte", "bytes"),
                plural(self.len_b, "byte", "bytes"),
                plural(m, "byte", "bytes"),
                if self.len_a < self.len_b {
                    &name_a
                } else {
                    &name_b
                }
            ),
        };
        crate::outln!("  {name_a} → {name_b}, {sizes}");
        let sides = Sides {
            a: &name_a,
            b: &name_b,
        };
        for r in &self.regions {
            crate::outln!("  {}", region_line(r, sides));
        }
    }
}

/// The last line: `equal`, `equal within tolerance` when a pair is equal only within the
/// tolerance (as that pair's own line says: the summary must not claim more), or which pairs
/// are not.
pub(super) fn print_verdict(pairs: &[PairReport], others: &[&str]) {
    crate::outln!("{}", verdict(pairs, others));
}

fn verdict(pairs: &[PairReport], others: &[&str]) -> String {
    let differing: Vec<&str> = others
        .iter()
        .copied()
        .chain(pairs.iter().filter(|p| !p.equal).map(|p| p.what.as_str()))
        .collect();
    if !differing.is_empty() {
        return format!("different: {}", differing.join(", "));
    }
    match pairs.iter().all(PairReport::identical) {
        true => "equal".into(),
        false => "equal within tolerance".into(),
    }
}

/// A recorded snapshot; a missing `.record_output` is explained, not just "not found".
pub(super) fn open_side(files: &InstanceFiles, d: &Descriptor, side: Side) -> Result<Snapshot> {
    open_recorded(files, d, side).map_err(|e| match (&e, side) {
        (rr_engine::Error::Record(r), Side::Output) if r.is_not_found() => Error::format(
            files.snapshot_file(d, side),
            "missing: the instance was recorded without its output (LIBOMPTARGET_RECORD_OUTPUT=false)",
        ),
        _ => e,
    })
}

#[derive(serde::Serialize)]
struct InstanceDiff {
    instance: String,
    pairs: Vec<PairReport>,
    equal: bool,
}

pub(super) fn diff(args: &DiffArgs, cmp: &Comparison) -> Result<i32> {
    if args.export_csv.is_some() {
        return Err(Error::invalid("--export-csv applies to two snapshot files"));
    }
    let d = Descriptor::read(&args.a)?;
    let files = InstanceFiles::from_descriptor_path(&args.a);
    let input = open_side(&files, &d, Side::Input)?;
    let output = open_side(&files, &d, Side::Output)?;
    let map = MemoryMap::new(&d, input.len());
    let sweep = Sweep::new(cmp, args.max);
    let mut pairs = vec![PairReport::compare(
        "input → output",
        &map,
        &input,
        &output,
        &sweep,
    )?];
    let mut replays = vec![(
        files.replay_output(&d, d.grid(), d.block(), d.shared_memory_size, None),
        "output → replay output",
    )];
    if d.format.is_legacy() {
        // LLVM 16–22's own replay tool wrote `.replay.output`.
        replays.push((
            files.legacy_replay_output(),
            "output → replay output of llvm-omp-kernel-replay (.replay.output)",
        ));
    }
    for (replay_path, what) in replays {
        if replay_path.exists() {
            let replay = Snapshot::open(&replay_path)?;
            pairs.push(PairReport::compare(what, &map, &output, &replay, &sweep)?);
        }
    }
    let equal = pairs.iter().all(|p| p.equal);
    if args.json {
        super::super::print_json(&InstanceDiff {
            instance: args.a.display().to_string(),
            pairs,
            equal,
        });
    } else {
        for p in &pairs {
            p.print();
        }
        print_verdict(&pairs, &[]);
    }
    Ok(if equal { 0 } else { 1 })
}
