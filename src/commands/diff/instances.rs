//! `rr-tui diff A.json B.json`: two instances. Their descriptors field by field (geometry,
//! limits, arguments with where they point, segments, launch attributes), their globals by
//! name, the decoded descriptors as a line diff (`inspect`'s text of each, by
//! `rr_engine::diff::lines`, as the explorer shows it), then their snapshots pairwise, input
//! with input and output with output, region by region with A's labels.
//!
//! The line diff shows what the fields say, as text to read; it never changes the verdict or
//! the exit status, which the fields, the globals and the snapshots decide.

use std::path::Path;

use super::instance::{open_side, print_verdict, PairReport};
use crate::cli::DiffArgs;
use crate::error::{Error, Result};
use rr_engine::diff::descriptor::{compare_descriptors, compare_globals, FieldDiff};
use rr_engine::diff::lines::{self, LineDiff, Row, Tag};
use rr_engine::diff::sweep::Sweep;
use rr_engine::diff::Comparison;
use rr_format::globals::Globals;
use rr_format::inspect::Inspection;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;
use rr_format::text::visible;
use rr_format::{Descriptor, InstanceFiles};

#[derive(serde::Serialize)]
struct InstancesDiff {
    a: String,
    b: String,
    descriptor: FieldDiff,
    globals: FieldDiff,
    /// The decoded descriptors (`inspect`'s text, without paths) line by line: hunks of
    /// `equal` / `delete` / `insert` lines with their numbers in A's and B's text.
    descriptor_text: LineDiff,
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
    let descriptor_text = lines::descriptors(&Inspection::of(&args.a)?, &Inspection::of(b_json)?);
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
        descriptor_text,
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
    let text = unified(&r.descriptor_text, &r.a, &r.b, crate::output::colour());
    match text.coloured {
        // Our own escape sequences around text made visible already: written as they are.
        true => crate::output::own_text(&(text.lines.join("\n") + "\n")),
        false => crate::output::lines(&text.lines),
    }
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
    // Names come from the files (a global may be named with 16 KiB): align on the usual
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

/// The line diff's lines of text.
struct Unified {
    lines: Vec<String>,
    /// The lines hold escape sequences of our own (their text is visible already).
    coloured: bool,
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const EMPHASIS: &str = "\x1b[7m";
const NO_EMPHASIS: &str = "\x1b[27m";
const RESET: &str = "\x1b[0m";

/// The line diff as `diff -u` prints it: a summary line and notes on what bounded it, then (when
/// the texts differ) the files and each hunk. `colour`: deleted lines red, inserted ones green,
/// the words that changed within them in reverse video, hunk headers cyan.
fn unified(d: &LineDiff, a: &str, b: &str, colour: bool) -> Unified {
    let mut out = vec![d.summary("descriptor text")];
    out.extend(
        d.notes
            .iter()
            .map(|n| format!("note: descriptor text: {n}")),
    );
    if d.is_equal() {
        return Unified {
            lines: out.into_iter().map(|l| visible(&l).into_owned()).collect(),
            coloured: false,
        };
    }
    out.push(format!("--- A {a}"));
    out.push(format!("+++ B {b}"));
    // Everything above is plain text: made visible here, as `output::lines` would.
    let mut lines: Vec<String> = out.into_iter().map(|l| visible(&l).into_owned()).collect();
    for row in d.rows() {
        let line = match row {
            Row::Hunk(h) if colour => format!("{CYAN}{}{RESET}", h.header()),
            Row::Hunk(h) => h.header(),
            Row::Line(l) if !colour || l.tag == Tag::Equal => {
                format!("{}{}", l.tag.sign(), visible(&l.text))
            }
            Row::Line(l) => {
                let base = if l.tag == Tag::Delete { RED } else { GREEN };
                let mut s = format!("{base}{}", l.tag.sign());
                for p in &l.parts {
                    match p.emphasized {
                        true => s.push_str(&format!("{EMPHASIS}{}{NO_EMPHASIS}", visible(&p.text))),
                        false => s.push_str(&visible(&p.text)),
                    }
                }
                s.push_str(RESET);
                s
            }
        };
        lines.push(line);
    }
    Unified {
        lines,
        coloured: colour,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff() -> LineDiff {
        let a: Vec<String> = [
            "Kernel       k",
            "Geometry     grid 8×1×1, block 64×1×1",
            "Trip count   1",
        ]
        .map(String::from)
        .to_vec();
        let mut b = a.clone();
        b[1] = "Geometry     grid 8×1×1, block 128×1×1".into();
        b[2] = "Trip count   1\x1b[2J".into();
        lines::diff_lines(&a, &b)
    }

    #[test]
    fn unified_text_is_plain_without_colour() {
        let u = unified(&diff(), "a.json", "b\x07.json", false);
        assert!(!u.coloured);
        assert_eq!(
            u.lines,
            [
                "descriptor text: 2 lines removed, 2 added",
                "--- A a.json",
                "+++ B b\\x07.json",
                "@@ -1,3 +1,3 @@",
                " Kernel       k",
                "-Geometry     grid 8×1×1, block 64×1×1",
                "-Trip count   1",
                "+Geometry     grid 8×1×1, block 128×1×1",
                "+Trip count   1\\x1b[2J",
            ]
        );
        let same = unified(&LineDiff::default(), "a", "b", true);
        assert_eq!(same.lines, ["descriptor text: the same"]);
    }

    /// In colour only our own escape sequences reach the terminal: the files' are visible.
    #[test]
    fn colour_marks_changed_words_and_nothing_else_escapes() {
        let u = unified(&diff(), "a.json", "b.json", true);
        assert!(u.coloured);
        assert_eq!(u.lines[3], format!("{CYAN}@@ -1,3 +1,3 @@{RESET}"));
        assert_eq!(u.lines[4], " Kernel       k");
        assert_eq!(
            u.lines[5],
            format!("{RED}-Geometry     grid 8×1×1, block {EMPHASIS}64×1×1{NO_EMPHASIS}{RESET}")
        );
        assert_eq!(
            u.lines[7],
            format!("{GREEN}+Geometry     grid 8×1×1, block {EMPHASIS}128×1×1{NO_EMPHASIS}{RESET}")
        );
        let ours = [RED, GREEN, CYAN, EMPHASIS, NO_EMPHASIS, RESET];
        for l in &u.lines {
            let mut rest = l.clone();
            for s in ours {
                rest = rest.replace(s, "");
            }
            assert!(!rest.contains('\x1b'), "{l:?}");
        }
    }
}
