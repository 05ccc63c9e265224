//! `rr-tui diff A.json B.json`: two instances. Their descriptors field by field (geometry,
//! limits, arguments with where they point, segments, launch attributes), their globals by
//! name, then their snapshots pairwise, input with input and output with output, region by
//! region with A's labels.

use std::path::Path;

use super::instance::{open_side, print_verdict, PairReport};
use crate::cli::DiffArgs;
use crate::error::{Error, Result};
use rr_engine::diff::descriptor::{compare_descriptors, compare_globals, FieldDiff};
use rr_engine::diff::sweep::Sweep;
use rr_engine::diff::Comparison;
use rr_format::globals::Globals;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;
use rr_format::{Descriptor, InstanceFiles};

#[derive(serde::Serialize)]
struct InstancesDiff {
    a: String,
    b: String,
    descriptor: FieldDiff,
    globals: FieldDiff,
    /// Set when the memory layouts differ: snapshots are still compared at equal offsets.
    layout_note: Option<String>,
    pairs: Vec<PairReport>,
    /// Pairs not compared, and why (an output recorded on one side only).
    not_compared: Vec<String>,
    equal: bool,
}

/// One instance's files, descriptor and memory map.
struct Instance {
    files: InstanceFiles,
    d: Descriptor,
    input: rr_engine::snapshot::Snapshot,
    map: MemoryMap,
}

impl Instance {
    fn open(json: &Path) -> Result<Instance> {
        let d = Descriptor::read(json)?;
        let files = InstanceFiles::from_descriptor_path(json);
        let input = open_side(&files, &d, Side::Input)?;
        let map = MemoryMap::new(&d, input.len());
        Ok(Instance {
            files,
            d,
            input,
            map,
        })
    }
    /// The globals in the record's own layout; LLVM 16–17 recorded none (an empty set).
    fn globals(&self) -> std::result::Result<Globals, String> {
        match Globals::read_for(&self.d, &self.files.globals()) {
            Err(e) if e.is_not_found() && self.d.format.is_legacy() => Ok(Globals::default()),
            other => other.map_err(|e| e.to_string()),
        }
    }
}

pub(super) fn diff(args: &DiffArgs, cmp: &Comparison, b_json: &Path) -> Result<i32> {
    if args.export_csv.is_some() {
        return Err(Error::invalid("--export-csv applies to two snapshot files"));
    }
    let (a, b) = (Instance::open(&args.a)?, Instance::open(b_json)?);
    let descriptor = compare_descriptors(&a.d, &a.map, &b.d, &b.map);
    let globals = compare_globals(&a.globals(), &b.globals());
    let layout_note = (a.map.segments != b.map.segments).then(|| {
        "the memory layouts differ: snapshots are compared at equal file offsets and labelled by A's arguments".to_string()
    });
    let sweep = Sweep::new(cmp, args.max);
    let mut pairs = vec![PairReport::compare(
        "input", &a.map, &a.input, &b.input, &sweep,
    )?];
    let mut not_compared = Vec::new();
    let output = |i: &Instance| open_side(&i.files, &i.d, Side::Output);
    match (output(&a), output(&b)) {
        (Ok(oa), Ok(ob)) => pairs.push(PairReport::compare("output", &a.map, &oa, &ob, &sweep)?),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => not_compared.push(format!("output: {e}")),
        // Neither recorded its output: nothing differs there.
        (Err(_), Err(_)) => {}
    }
    let equal = descriptor.changes.is_empty()
        && globals.changes.is_empty()
        && not_compared.is_empty()
        && pairs.iter().all(|p| p.equal);
    let report = InstancesDiff {
        a: args.a.display().to_string(),
        b: b_json.display().to_string(),
        descriptor,
        globals,
        layout_note,
        pairs,
        not_compared,
        equal,
    };
    if args.json {
        super::super::print_json(&report);
    } else {
        print(&report);
    }
    Ok(if equal { 0 } else { 1 })
}

fn print(r: &InstancesDiff) {
    crate::outln!("A: {}", r.a);
    crate::outln!("B: {}", r.b);
    print_fields("descriptor", " fields", &r.descriptor);
    print_fields("globals", "", &r.globals);
    if let Some(note) = &r.layout_note {
        crate::outln!("note: {note}");
    }
    for p in &r.pairs {
        p.print();
    }
    for n in &r.not_compared {
        crate::outln!("not compared: {n}");
    }
    let mut others = Vec::new();
    if !r.descriptor.changes.is_empty() {
        others.push("descriptor");
    }
    if !r.globals.changes.is_empty() {
        others.push("globals");
    }
    if !r.not_compared.is_empty() {
        others.push("output (recorded on one side only)");
    }
    print_verdict(&r.pairs, &others);
}

/// The widest field-name column `diff` aligns.
const FIELD_COLUMN: usize = 48;

/// `descriptor: 2 of 24 fields differ`, then `  field  A's value → B's value`.
/// `unit`: what is counted (` fields`; nothing for globals, which are counted one per name).
fn print_fields(what: &str, unit: &str, f: &FieldDiff) {
    crate::outln!("{}", f.summary(what, unit));
    if f.changes.is_empty() {
        return;
    }
    // Names come from the files (a global may be named with 64 KiB): align on the usual
    // ones and let a longer name run over rather than pad the column to its length (a
    // width past u16::MAX is also a panic in `format!`).
    let width = f
        .changes
        .iter()
        .map(|c| c.field.chars().count())
        .max()
        .unwrap_or(0)
        .min(FIELD_COLUMN);
    for c in &f.changes {
        crate::outln!("  {:<width$}  {} → {}", c.field, c.a_text, c.b_text);
    }
}
