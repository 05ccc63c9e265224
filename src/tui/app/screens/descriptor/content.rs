//! The descriptor screen's content as data: one instance's `inspect` lines, or two instances
//! compared as `rr-tui diff A.json B.json` compares them: field by field (the same fields, the
//! same counts) and, with `d`, line by line (the same line diff of the decoded descriptors,
//! `rr_engine::diff::lines`, which also marks the changed words of the field table). Built from
//! inspections already made on a worker, so drawing reads no file; scrolling uses the same
//! content, so `G` knows where the last line is.

use std::cell::RefCell;
use std::rc::Rc;

use rr_engine::diff::descriptor::{compare_descriptors, compare_global_summaries, FieldDiff};
use rr_engine::diff::lines::{self, LineDiff};
use rr_format::inspect::Inspection;
use rr_format::memory::MemoryMap;

/// One field of two instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    pub name: String,
    pub left: String,
    pub right: String,
    pub changed: bool,
}

/// Two instances compared: the descriptor's fields, then the globals'; and their decoded
/// descriptors line by line.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    pub descriptor: FieldDiff,
    pub globals: FieldDiff,
    pub lines: LineDiff,
}

impl Compared {
    /// Every field, the descriptor's first.
    pub fn rows(&self) -> impl Iterator<Item = FieldRow> + '_ {
        self.descriptor
            .rows
            .iter()
            .chain(&self.globals.rows)
            .map(|r| FieldRow {
                name: rr_format::text::visible(&r.field).into_owned(),
                left: rr_format::text::visible(&r.a).into_owned(),
                right: rr_format::text::visible(&r.b).into_owned(),
                changed: r.changed,
            })
    }

    pub fn len(&self) -> usize {
        self.descriptor.rows.len() + self.globals.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `descriptor: 2 of 26 fields differ · globals: all 2 equal`: the lines `diff` prints.
    pub fn summary(&self) -> String {
        format!(
            "{} · {}",
            self.descriptor.summary("descriptor", " fields"),
            self.globals.summary("globals", "")
        )
    }

    /// `descriptor text: 1 line removed, 1 added`: the line `diff` prints above its hunks.
    pub fn lines_summary(&self) -> String {
        self.lines.summary("descriptor text")
    }

    /// Content lines of the line view: the files, the notes, then every hunk's header and
    /// lines (or one line saying the texts are the same).
    pub fn line_view_len(&self) -> usize {
        1 + self.lines.notes.len() + self.lines.row_count().max(1)
    }
}

/// Columns of an `inspect` line that name its field.
pub const FIELD_COLUMN: usize = 13;

/// One instance's `inspect` lines for a screen `width` columns wide: long values wrap under
/// themselves instead of being cut.
pub fn inspect_lines(ins: &Inspection, width: usize) -> Vec<String> {
    ins.lines()
        .iter()
        .flat_map(|l| crate::tui::wrap::wrap_field(l, FIELD_COLUMN, width))
        .collect()
}

/// Two inspections compared.
pub fn compare(left: &Inspection, right: &Inspection) -> Compared {
    let map =
        |i: &Inspection| MemoryMap::new(&i.descriptor, i.snapshots.record_input_bytes.unwrap_or(0));
    fn globals(i: &Inspection) -> (&[rr_format::inspect::GlobalInfo], Option<&str>) {
        (i.globals.as_slice(), i.globals_problem.as_deref())
    }
    Compared {
        descriptor: compare_descriptors(
            &left.descriptor,
            &map(left),
            &right.descriptor,
            &map(right),
        ),
        globals: compare_global_summaries(globals(left), globals(right)),
        lines: lines::descriptors(left, right),
    }
}

/// The last comparison made, kept while the pair stays the same (a descriptor with 300 000
/// arguments is not compared again on every frame).
#[derive(Default)]
pub struct CompareCache(RefCell<Option<Cached>>);

/// A pair of instances (marked, selected) and their comparison.
type Cached = ((usize, usize), Rc<Compared>);

impl CompareCache {
    pub fn get(&self, pair: (usize, usize), make: impl FnOnce() -> Compared) -> Rc<Compared> {
        let mut slot = self.0.borrow_mut();
        match &*slot {
            Some((p, c)) if *p == pair => c.clone(),
            _ => {
                let c = Rc::new(make());
                *slot = Some((pair, c.clone()));
                c
            }
        }
    }

    /// Forget it (an inspection of either side changed).
    pub fn clear(&self) {
        self.0.borrow_mut().take();
    }
}
