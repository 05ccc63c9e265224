//! Two instances' decoded descriptors as a line diff: each side's text as `inspect` shows it
//! (without the paths that name the instance: [`Inspection::comparable_lines`]) compared line
//! by line with `similar`, and the lines of a changed block paired word by word, so that what
//! changed *within* a line is marked (inline emphasis). One computation for
//! `rr-tui diff A.json B.json` (unified text; hunks in `--json`) and the explorer's descriptor
//! screen (`d`, and the inline marks of its field table), so both show the same diff.
//!
//! The text comes from files anyone may write. It is shown with control characters made
//! visible (again: [`visible`] is idempotent), and the work is bounded: at most [`MAX_LINES`]
//! lines a side, each cut at [`MAX_LINE_BYTES`], and a time limit ([`TIME_LIMIT`], once for
//! the lines and once for the words) past which `similar` stops refining. A diff cut short by
//! the clock stays correct (every line is in it), only coarser: larger blocks removed and added.

use std::time::{Duration, Instant};

use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiff};

use rr_format::inspect::Inspection;
use rr_format::text::{cut_at_char, visible};

/// Lines compared a side; the rest are left out, and a note says so. A real descriptor has a
/// few dozen (one per argument, segment, global and kernel of the image); a hostile one may
/// list hundreds of thousands.
pub const MAX_LINES: usize = 20_000;
/// Bytes kept of each line (a global may be named with 64 KiB); a longer line ends in `…`.
pub const MAX_LINE_BYTES: usize = 1024;
/// How long `similar` may refine the line diff, and then the word diffs of changed lines.
pub const TIME_LIMIT: Duration = Duration::from_millis(250);
/// Unchanged lines shown around each change.
pub const CONTEXT: usize = 3;

/// What became of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tag {
    /// In both texts.
    Equal,
    /// In A's text only.
    Delete,
    /// In B's text only.
    Insert,
}

impl Tag {
    /// The unified diff's mark: ` `, `-` or `+`.
    pub fn sign(self) -> char {
        match self {
            Tag::Equal => ' ',
            Tag::Delete => '-',
            Tag::Insert => '+',
        }
    }
}

/// A piece of a line: `emphasized` when it is what changed within a changed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub emphasized: bool,
    pub text: String,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    pub tag: Tag,
    /// Its number in A's text, from 1 (none for an inserted line).
    pub old_line: Option<usize>,
    /// Its number in B's text, from 1 (none for a deleted line).
    pub new_line: Option<usize>,
    /// The line (control characters made visible).
    pub text: String,
    /// `text` in pieces, the changed words emphasized. A line with no counterpart, or too
    /// little in common with it to pair its words, is one piece, not emphasized.
    #[serde(skip)]
    pub parts: Vec<Part>,
}

/// A run of changed lines with their context: `@@ -old_start,old_len +new_start,new_len @@`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// Where the hunk starts in A's text, from 1 (the line before it when `old_len` is 0).
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<DiffLine>,
}

impl Hunk {
    /// `@@ -5,7 +5,7 @@`, as `diff -u` writes it (a length of 1 left out).
    pub fn header(&self) -> String {
        fn range(start: usize, len: usize) -> String {
            match len {
                1 => start.to_string(),
                _ => format!("{start},{len}"),
            }
        }
        format!(
            "@@ -{} +{} @@",
            range(self.old_start, self.old_len),
            range(self.new_start, self.new_len)
        )
    }
}

/// Two texts compared line by line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LineDiff {
    /// Lines of A's and B's text (all of them, compared or not).
    pub old_lines: usize,
    pub new_lines: usize,
    pub hunks: Vec<Hunk>,
    /// What bounded the comparison, when something did: lines left out or cut, the time limit.
    pub notes: Vec<String>,
}

/// A row of the diff as shown: a hunk's header, or one of its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row<'a> {
    Hunk(&'a Hunk),
    Line(&'a DiffLine),
}

impl LineDiff {
    /// No line differs (of those compared).
    pub fn is_equal(&self) -> bool {
        self.hunks.is_empty()
    }

    fn count(&self, tag: Tag) -> usize {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.tag == tag)
            .count()
    }

    /// Lines of A's text not in B's.
    pub fn removed(&self) -> usize {
        self.count(Tag::Delete)
    }

    /// Lines of B's text not in A's.
    pub fn added(&self) -> usize {
        self.count(Tag::Insert)
    }

    /// `descriptor text: 2 lines removed, 2 added` / `descriptor text: the same`: the CLI's
    /// line and the explorer's title.
    pub fn summary(&self, what: &str) -> String {
        if self.is_equal() {
            return format!("{what}: the same");
        }
        let (r, a) = (self.removed(), self.added());
        let lines = if r == 1 { "line" } else { "lines" };
        format!("{what}: {r} {lines} removed, {a} added")
    }

    /// Every row in order: each hunk's header, then its lines.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        self.hunks
            .iter()
            .flat_map(|h| std::iter::once(Row::Hunk(h)).chain(h.lines.iter().map(Row::Line)))
    }

    /// How many [`LineDiff::rows`] there are.
    pub fn row_count(&self) -> usize {
        self.hunks.iter().map(|h| 1 + h.lines.len()).sum()
    }
}

/// Two instances' decoded descriptors compared line by line (the text of
/// [`Inspection::comparable_lines`]).
pub fn descriptors(a: &Inspection, b: &Inspection) -> LineDiff {
    diff_lines(&a.comparable_lines(), &b.comparable_lines())
}

/// One side's lines as one text for `similar`: at most [`MAX_LINES`], each visible and cut at
/// [`MAX_LINE_BYTES`], each ending in a newline (so that the last line compares like the
/// others). Notes what was left out.
fn bounded(lines: &[String], side: &str, notes: &mut Vec<String>) -> String {
    let kept = &lines[..lines.len().min(MAX_LINES)];
    let mut text = String::new();
    let mut cut = 0usize;
    for l in kept {
        let mut l = visible(l).into_owned();
        if cut_at_char(&mut l, MAX_LINE_BYTES) {
            l.push('…');
            cut += 1;
        }
        text.push_str(&l);
        text.push('\n');
    }
    if lines.len() > kept.len() {
        notes.push(format!(
            "{side}: only the first {MAX_LINES} of {} lines compared",
            lines.len()
        ));
    }
    if cut > 0 {
        notes.push(format!(
            "{side}: {cut} line(s) longer than {MAX_LINE_BYTES} bytes compared up to there"
        ));
    }
    text
}

/// A line or word change's pieces, without the line's newline (empty pieces dropped).
fn parts<'a>(pieces: impl Iterator<Item = (bool, std::borrow::Cow<'a, str>)>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for (emphasized, text) in pieces {
        let text = text.trim_end_matches('\n');
        if text.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.emphasized == emphasized => last.text.push_str(text),
            _ => out.push(Part {
                emphasized,
                text: text.to_string(),
            }),
        }
    }
    out
}

fn tag(t: ChangeTag) -> Tag {
    match t {
        ChangeTag::Equal => Tag::Equal,
        ChangeTag::Delete => Tag::Delete,
        ChangeTag::Insert => Tag::Insert,
    }
}

/// A's lines against B's: hunks of changed lines with [`CONTEXT`] lines around them, the words
/// that changed within changed lines emphasized. Bounded as the module says.
pub fn diff_lines(old: &[String], new: &[String]) -> LineDiff {
    let mut notes = Vec::new();
    let old_text = bounded(old, "A", &mut notes);
    let new_text = bounded(new, "B", &mut notes);
    let deadline = Instant::now() + TIME_LIMIT;
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(deadline)
        .diff_lines(&old_text, &new_text);
    let mut timed_out = Instant::now() >= deadline;
    // The word diffs have a time of their own, shared by every changed block.
    let words_deadline = Instant::now() + TIME_LIMIT;
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (old_range, new_range) = (
            first.old_range().start..last.old_range().end,
            first.new_range().start..last.new_range().end,
        );
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_inline_changes_deadline(op, Some(words_deadline)) {
                let parts = parts(change.iter_strings_lossy());
                lines.push(DiffLine {
                    tag: tag(change.tag()),
                    old_line: change.old_index().map(|i| i + 1),
                    new_line: change.new_index().map(|i| i + 1),
                    text: parts.iter().map(|p| p.text.as_str()).collect(),
                    parts,
                });
            }
        }
        // As `diff -u`: a range of no lines starts at the line before it.
        let start = |r: &std::ops::Range<usize>| match r.len() {
            0 => r.start,
            _ => r.start + 1,
        };
        hunks.push(Hunk {
            old_start: start(&old_range),
            old_len: old_range.len(),
            new_start: start(&new_range),
            new_len: new_range.len(),
            lines,
        });
    }
    timed_out |= Instant::now() >= words_deadline;
    if timed_out {
        notes.push(format!(
            "the comparison took longer than {} ms: some changes are shown as larger blocks than they are",
            TIME_LIMIT.as_millis()
        ));
    }
    LineDiff {
        old_lines: old.len(),
        new_lines: new.len(),
        hunks,
        notes,
    }
}

/// Two values of one field (the explorer's field table) as pieces, the changed words
/// emphasized, by the same word diff as [`diff_lines`]. A value that differs but has nothing
/// emphasized (too little in common for its words to be paired: `8×1×1` against `16×1×1`) is
/// emphasized whole; equal values are one plain piece each.
pub fn inline(a: &str, b: &str) -> (Vec<Part>, Vec<Part>) {
    let plain = |s: &str, emphasized: bool| {
        vec![Part {
            emphasized,
            text: s.to_string(),
        }]
    };
    if a == b {
        return (plain(a, false), plain(b, false));
    }
    let diff = diff_lines(&[a.to_string()], &[b.to_string()]);
    let side = |t: Tag, whole: &str| {
        let found = diff
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .find(|l| l.tag == t)
            .map(|l| l.parts.clone())
            .unwrap_or_default();
        match found.iter().any(|p| p.emphasized) {
            true => found,
            false if whole.is_empty() => vec![],
            false => plain(&visible(whole), true),
        }
    };
    (side(Tag::Delete, a), side(Tag::Insert, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    const A: &str = "Format       LLVM offload
Kernel       rr_saxpy
Geometry     grid 8×1×1, block 128×1×1, dynamic shared memory 0 B
Limits       teams unrestricted, threads [1, 1024]
Trip count   4096    Device 0
Arguments    3
  #0   0x0000153940004000  → segment 0 + 0x4000 (16 KiB up to the next argument)
  #1   0x0000000000001000  = 4096 (0x1000), not a recorded address
  #2   0xffffffffffffffff  dyn_ptr sentinel (~0: no reduction buffer)
Snapshots    input 32 KiB, output 32 KiB";

    /// A changed argument is one line removed and one added, in one hunk with its context,
    /// the changed words (not the whole line) emphasized.
    #[test]
    fn a_changed_argument_is_a_deleted_and_an_inserted_line_with_the_change_marked() {
        let b = A.replace(
            "#1   0x0000000000001000  = 4096 (0x1000)",
            "#1   0x0000000000002000  = 8192 (0x2000)",
        );
        let d = diff_lines(&lines(A), &lines(&b));
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!(h.header(), "@@ -5,6 +5,6 @@");
        let tags: Vec<Tag> = h.lines.iter().map(|l| l.tag).collect();
        use Tag::*;
        assert_eq!(
            tags,
            [Equal, Equal, Equal, Delete, Insert, Equal, Equal],
            "{h:#?}"
        );
        let (del, ins) = (&h.lines[3], &h.lines[4]);
        assert_eq!((del.old_line, del.new_line), (Some(8), None));
        assert_eq!((ins.old_line, ins.new_line), (None, Some(8)));
        assert!(del.text.starts_with("  #1   0x0000000000001000"));
        let emphasized = |l: &DiffLine| -> Vec<String> {
            l.parts
                .iter()
                .filter(|p| p.emphasized)
                .map(|p| p.text.trim().to_string())
                .collect()
        };
        assert_eq!(emphasized(del), ["0x0000000000001000", "4096", "(0x1000),"]);
        assert_eq!(emphasized(ins), ["0x0000000000002000", "8192", "(0x2000),"]);
        // The pieces are the line.
        let joined: String = ins.parts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(joined, ins.text);
        assert_eq!((d.removed(), d.added()), (1, 1));
        assert_eq!(
            d.summary("descriptor text"),
            "descriptor text: 1 line removed, 1 added"
        );
        assert!(d.notes.is_empty());
        // Rows: the header, then the lines.
        assert_eq!(d.row_count(), 8);
        assert!(matches!(d.rows().next(), Some(Row::Hunk(_))));
    }

    #[test]
    fn equal_texts_have_no_hunks_and_added_lines_no_counterpart() {
        let same = diff_lines(&lines(A), &lines(A));
        assert!(same.is_equal());
        assert_eq!(same.summary("descriptor text"), "descriptor text: the same");
        let more = format!("{A}\nGlobals      1\n  g_scale  4 B  00 00 20 40");
        let d = diff_lines(&lines(A), &lines(&more));
        assert_eq!(d.hunks.len(), 1);
        assert_eq!(d.hunks[0].header(), "@@ -8,3 +8,5 @@");
        let added: Vec<&DiffLine> = d.hunks[0]
            .lines
            .iter()
            .filter(|l| l.tag == Tag::Insert)
            .collect();
        assert_eq!(added.len(), 2);
        assert!(added.iter().all(|l| l.parts.iter().all(|p| !p.emphasized)));
        // Everything removed: the range of no lines starts at the line before it.
        let gone = diff_lines(&[], &lines("a\nb"));
        assert_eq!(gone.hunks[0].header(), "@@ -0,0 +1,2 @@");
        let one = diff_lines(&lines("a"), &lines("b"));
        assert_eq!(one.hunks[0].header(), "@@ -1 +1 @@");
    }

    /// Text from the files is shown with its control characters visible, however it arrives.
    #[test]
    fn control_characters_are_made_visible() {
        let d = diff_lines(
            &lines("Kernel       k"),
            &["Kernel       k\x1b]0;owned\x07".to_string()],
        );
        let ins = d.hunks[0]
            .lines
            .iter()
            .find(|l| l.tag == Tag::Insert)
            .unwrap();
        assert_eq!(ins.text, "Kernel       k\\x1b]0;owned\\x07");
        assert!(ins.parts.iter().all(|p| !p.text.contains('\x1b')));
        let (_, b) = inline("k", "k\u{202e}x");
        assert!(b.iter().all(|p| !p.text.contains('\u{202e}')), "{b:?}");
    }

    /// Hostile sizes: lines past the limit are left out, long lines cut, and it says so.
    #[test]
    fn work_is_bounded() {
        let many: Vec<String> = (0..MAX_LINES + 500)
            .map(|i| format!("  #{i}  {i}"))
            .collect();
        let mut other = many.clone();
        other[3] = "x".repeat(10 * MAX_LINE_BYTES);
        let d = diff_lines(&many, &other);
        assert_eq!(d.old_lines, MAX_LINES + 500);
        assert!(
            d.notes.iter().any(|n| n.contains("only the first 20000")),
            "{:?}",
            d.notes
        );
        assert!(d.notes.iter().any(|n| n.contains("longer than 1024 bytes")));
        let ins = d.hunks[0]
            .lines
            .iter()
            .find(|l| l.tag == Tag::Insert)
            .unwrap();
        assert!(ins.text.len() <= MAX_LINE_BYTES + '…'.len_utf8() && ins.text.ends_with('…'));
        // Lines past the limit are not compared: a change there is not seen.
        let mut late = many.clone();
        late[MAX_LINES + 10] = "changed".into();
        assert!(diff_lines(&many, &late).is_equal());
    }

    /// Texts that make the diff quadratic (many short, repeated, shifted lines) end within
    /// the time limits (coarser past them), and the hunks stay whole.
    #[test]
    fn pathological_texts_end_in_time() {
        let a: Vec<String> = (0..MAX_LINES).map(|i| (i % 7).to_string()).collect();
        let b: Vec<String> = (0..MAX_LINES).map(|i| (i % 11).to_string()).collect();
        let started = Instant::now();
        let d = diff_lines(&a, &b);
        // Two time limits, then linear work (generous for debug builds on a slow machine).
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(!d.is_equal());
        // Each hunk holds the lines its header counts.
        for h in &d.hunks {
            let on = |side: fn(&DiffLine) -> Option<usize>| {
                h.lines.iter().filter(|l| side(l).is_some()).count()
            };
            assert_eq!(on(|l| l.old_line), h.old_len);
            assert_eq!(on(|l| l.new_line), h.new_len);
        }
    }

    #[test]
    fn field_values_mark_their_changed_words() {
        let (a, b) = inline(
            "0x153940004000 (segment 0 + 0x4000)",
            "0x153940004010 (segment 0 + 0x4010)",
        );
        let marked = |p: &[Part]| -> Vec<String> {
            p.iter()
                .filter(|p| p.emphasized)
                .map(|p| p.text.clone())
                .collect()
        };
        assert_eq!(marked(&a), ["0x153940004000", "0x4000)"]);
        assert_eq!(marked(&b), ["0x153940004010", "0x4010)"]);
        // Nothing in common to pair: the whole value is marked.
        let (a, b) = inline("8×1×1", "16×1×1");
        assert_eq!(marked(&a), ["8×1×1"]);
        assert_eq!(marked(&b), ["16×1×1"]);
        let (a, b) = inline("same", "same");
        assert!(marked(&a).is_empty() && marked(&b).is_empty());
    }
}
