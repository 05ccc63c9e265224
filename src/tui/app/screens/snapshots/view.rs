//! The snapshot diff view model: two memory-mapped snapshots, the streaming difference index,
//! a window position, squeezing and typed display. Only visible rows are ever touched.
//!
//! A row is `row` bytes wide (16, 8 or 4: whatever the terminal width allows, see
//! [`super::rowlayout`]); every position (`top`, squeezed runs, jumps) is a multiple of it.

use std::sync::Arc;

use rr_engine::diff::{DType, DiffIndex};
use rr_engine::snapshot::Snapshot;
use rr_format::memory::MemoryMap;

/// Bytes per row until the terminal says how wide it is.
pub const DEFAULT_ROW: u64 = 16;
/// Lines the snapshot screen's title takes at most (80 columns: two).
pub const MAX_TITLE_LINES: usize = 2;
/// Runs of at least this many equal rows collapse into one line when squeezing.
const MIN_SQUEEZE_ROWS: u64 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pair {
    InputOutput,
    OutputReplay,
}

impl Pair {
    pub fn label(self) -> &'static str {
        match self {
            Pair::InputOutput => "recorded input → recorded output",
            Pair::OutputReplay => "recorded output → replay output",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    Row(u64),
    Squeezed { start: u64, end: u64 },
}

pub struct SnapView {
    pub instance: usize,
    pub pair: Pair,
    pub a: Arc<Snapshot>,
    pub b: Arc<Snapshot>,
    pub map: MemoryMap,
    pub index: DiffIndex,
    pub scanned: u64,
    pub done: bool,
    pub error: Option<String>,
    /// A file changed after indexing: nothing the index says can be trusted any more.
    pub stale: bool,
    pub top: u64,
    pub squeeze: bool,
    pub dtype: Option<DType>,
    pub big_endian: bool,
    pub job: u64,
    /// Bytes per row.
    pub row: u64,
    /// The difference `n`/`N` (or the match a search) last moved to (its first byte).
    pub cursor: Option<u64>,
    /// The last search (`/`), for `>` and `<`.
    pub search: Option<super::search::SearchState>,
}

impl SnapView {
    pub fn new(
        instance: usize,
        pair: Pair,
        a: Arc<Snapshot>,
        b: Arc<Snapshot>,
        map: MemoryMap,
        job: u64,
    ) -> SnapView {
        SnapView {
            instance,
            pair,
            a,
            b,
            map,
            index: DiffIndex::new(rr_engine::diff::index::DEFAULT_MERGE_GAP),
            scanned: 0,
            done: false,
            error: None,
            stale: false,
            top: 0,
            squeeze: true,
            dtype: None,
            big_endian: false,
            job,
            row: DEFAULT_ROW,
            cursor: None,
            search: None,
        }
    }

    pub fn len(&self) -> u64 {
        self.a.len().max(self.b.len())
    }

    /// The screen's title: the pair, the view, how far indexing got (the differing ranges
    /// and bytes), the instance's file.
    pub fn title(&self, json_file: &str) -> String {
        let mode = match self.dtype {
            None => "hex".to_string(),
            Some(d) if d.size() == 1 => d.name().to_string(),
            Some(d) => format!("{} {}", d.name(), if self.big_endian { "BE" } else { "LE" }),
        };
        let progress = if let Some(e) = &self.error {
            e.clone()
        } else if self.done {
            format!(
                "{} differing range(s), {} differ",
                self.index.ranges.len(),
                humansize::format_size(self.index.differing_bytes(), humansize::BINARY)
            )
        } else {
            format!(
                "indexing {:.0}% · {} range(s) so far",
                self.progress() * 100.0,
                self.index.ranges.len()
            )
        };
        format!(
            "{} · {mode}{} · {progress} · {json_file}",
            self.pair.label(),
            if self.squeeze { " · squeezed" } else { "" },
        )
    }

    /// The title in the lines it takes on a screen `width` columns wide: wrapped at its
    /// ` · ` parts, at most [`MAX_TITLE_LINES`] (the last cut).
    pub fn title_lines(&self, json_file: &str, width: u16) -> Vec<String> {
        // Two columns of rule before the first line's ` title `, one of margin after.
        let room = (width as usize).saturating_sub(4).max(8);
        let mut lines = crate::tui::wrap::wrap(&self.title(json_file), room);
        if lines.len() > MAX_TITLE_LINES {
            let rest = lines.split_off(MAX_TITLE_LINES - 1).join(" ");
            lines.push(crate::tui::layout::fit(&rest, room));
        }
        lines
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn last_row(&self) -> u64 {
        self.align(self.len().saturating_sub(1))
    }
    /// The start of the row holding `offset`.
    fn align(&self, offset: u64) -> u64 {
        offset / self.row * self.row
    }

    /// Change the bytes per row, keeping the top row's first byte on screen.
    pub fn set_row(&mut self, row: u64) {
        self.row = row.max(1);
        self.top = self.align(self.top);
    }
    fn compared(&self) -> u64 {
        self.a.len().min(self.b.len())
    }

    /// Whether the row at `r` is known to be equal on both sides (never, once stale).
    fn known_equal(&self, r: u64) -> bool {
        !self.stale
            && r + self.row <= self.scanned.min(self.compared())
            && self.index.within(r, r + self.row).is_empty()
    }

    /// Whether both files are still as they were when mapped (two `fstat`s).
    pub fn files_unchanged(&self) -> bool {
        self.a.still_whole() && self.b.still_whole()
    }

    /// End (row-aligned) of the run of known-equal rows starting at `r`.
    fn equal_run_end(&self, r: u64) -> u64 {
        let limit = self.align(self.scanned.min(self.compared()));
        let next = self
            .index
            .next_after(r)
            .map(|d| self.align(d.start))
            .unwrap_or(limit);
        next.min(limit).max(r)
    }

    /// The lines of a window of `n` lines starting at `top`.
    pub fn lines(&self, n: usize) -> Vec<Line> {
        let mut out = Vec::with_capacity(n);
        let mut r = self.top;
        // The row `n`, `N` or `:` went to is never squeezed away.
        let target = self.cursor.map(|c| self.align(c));
        while out.len() < n && r < self.len() {
            if self.squeeze && self.known_equal(r) && target != Some(r) {
                let end = match target {
                    Some(t) if t > r => self.equal_run_end(r).min(t),
                    _ => self.equal_run_end(r),
                };
                if (end - r) / self.row >= MIN_SQUEEZE_ROWS {
                    out.push(Line::Squeezed { start: r, end });
                    r = end;
                    continue;
                }
            }
            out.push(Line::Row(r));
            r += self.row;
        }
        out
    }

    /// Scroll down `n` lines, no further than where the last row is at the bottom of a view of
    /// `visible` lines.
    pub fn scroll_down(&mut self, n: usize, visible: usize) {
        self.cursor = None;
        let limit = self.bottom_top(visible);
        for _ in 0..n {
            if self.top >= limit {
                return;
            }
            let next = match self.lines(2).get(1) {
                Some(Line::Row(r)) | Some(Line::Squeezed { start: r, .. }) => *r,
                None => return,
            };
            self.top = next.min(limit);
        }
    }

    pub fn scroll_up(&mut self, n: usize) {
        self.cursor = None;
        self.top = self.lines_above(self.top, n);
    }

    /// Where the line holding row `r` starts when drawn: the start of its squeezed run, if it
    /// is in one long enough to be squeezed.
    fn line_start(&self, r: u64) -> u64 {
        if !(self.squeeze && self.known_equal(r)) {
            return r;
        }
        let run_start = match self.index.prev_before(r + 1) {
            Some(d) if d.end <= r => d.end.div_ceil(self.row) * self.row,
            Some(_) => r,
            None => 0,
        };
        if (self.equal_run_end(run_start) - run_start) / self.row >= MIN_SQUEEZE_ROWS {
            run_start
        } else {
            r
        }
    }

    /// The start of the line `n` lines above the one starting at `top` (a squeezed run is one
    /// line, as drawn).
    fn lines_above(&self, mut top: u64, n: usize) -> u64 {
        for _ in 0..n {
            if top == 0 {
                break;
            }
            top = self.line_start(self.align(top - 1));
        }
        top
    }

    pub fn to_top(&mut self) {
        self.cursor = None;
        self.top = 0;
    }
    /// Put the last row at the bottom of a view of `visible` lines.
    pub fn to_bottom(&mut self, visible: usize) {
        self.cursor = None;
        self.top = self.bottom_top(visible);
    }

    /// The top row that shows the last row on the last of `visible` lines (squeezed runs count
    /// as one line, as drawn).
    fn bottom_top(&self, visible: usize) -> u64 {
        let last = self.line_start(self.last_row());
        self.lines_above(last, visible.saturating_sub(1))
    }

    /// Bytes of one element of the view's type (1 without a type).
    fn element(&self) -> u64 {
        self.dtype.map_or(1, |t| t.size() as u64)
    }

    /// Whether the element at `at` (`k` bytes) differs between the sides.
    fn element_differs(&self, at: u64, k: u64) -> bool {
        let k = k as usize;
        self.a.window(at, k) != self.b.window(at, k)
    }

    /// Call `found` with each difference starting in `[lo, hi)` (`lo` a multiple of `k`), in
    /// order, until it returns false: an element of `k` bytes that differs, or with `k` = 1 the
    /// first byte of a run of differing bytes. Both sides are read a window at a time.
    fn differences_in(&self, lo: u64, hi: u64, k: u64, mut found: impl FnMut(u64) -> bool) {
        const WINDOW: u64 = 1 << 16;
        let mut q = lo;
        // Without a type, a byte continuing a run from before `lo` starts nothing.
        let mut previous = k == 1 && q > 0 && self.element_differs(q - 1, 1);
        while q < hi {
            let n = ((hi - q).div_ceil(k) * k).min(WINDOW.div_ceil(k) * k) as usize;
            let (wa, wb) = (self.a.window(q, n), self.b.window(q, n));
            let whole = wa.len().min(wb.len()) / k as usize * k as usize;
            if whole == 0 {
                return; // the end of the shorter side: the rest is missing, not differing
            }
            let pairs = wa[..whole]
                .chunks(k as usize)
                .zip(wb[..whole].chunks(k as usize));
            for (i, (x, y)) in pairs.enumerate() {
                let differs = x != y;
                if differs && (k > 1 || !previous) && !found(q + i as u64 * k) {
                    return;
                }
                previous = differs;
            }
            q += whole as u64;
        }
    }

    /// The first difference at or after `from`. The index's ranges merge differences a few
    /// bytes apart; inside them each element is looked at.
    fn difference_from(&self, from: u64) -> Option<u64> {
        let k = self.element();
        let mut at = from.div_ceil(k) * k;
        loop {
            let r = self.index.within(at, u64::MAX).first()?.clone();
            let mut first = None;
            self.differences_in(at.max(r.start / k * k), r.end, k, |p| {
                first = Some(p);
                false
            });
            if first.is_some() {
                return first;
            }
            at = r.end.div_ceil(k) * k;
        }
    }

    /// The last difference that starts before `before`.
    fn difference_before(&self, before: u64) -> Option<u64> {
        const WINDOW: u64 = 1 << 20;
        let k = self.element();
        let mut end = before;
        loop {
            let r = self.index.prev_before(end)?;
            let floor = r.start / k * k;
            let mut hi = r.end.min(end);
            while hi > floor {
                let lo = (hi.saturating_sub(WINDOW).max(floor)) / k * k;
                let mut last = None;
                self.differences_in(lo, hi, k, |p| {
                    if p < end {
                        last = Some(p);
                    }
                    true
                });
                if last.is_some() {
                    return last;
                }
                hi = lo;
            }
            end = r.start;
        }
    }

    /// Move to the next difference (an element of the view's type, or a run of differing bytes)
    /// after the current one; false when there is none (yet).
    pub fn next_diff(&mut self) -> bool {
        let from = match self.cursor {
            Some(c) if self.align(c) == self.top => c + 1,
            _ => self.top,
        };
        self.go_to_difference(self.difference_from(from))
    }

    pub fn prev_diff(&mut self) -> bool {
        let before = match self.cursor {
            Some(c) if self.align(c) == self.top => c,
            _ => self.top,
        };
        self.go_to_difference(self.difference_before(before))
    }

    /// Which differing range of the index (as the title counts them; `n` visits each run of
    /// differing bytes or elements inside one) holds `offset`, counted from 1, and how many
    /// there are (so far, while indexing).
    pub fn difference_number(&self, offset: u64) -> (usize, usize) {
        let ranges = &self.index.ranges;
        let before = ranges.partition_point(|r| r.end <= offset);
        ((before + 1).min(ranges.len()), ranges.len())
    }

    fn go_to_difference(&mut self, at: Option<u64>) -> bool {
        match at {
            Some(at) => {
                self.cursor = Some(at);
                self.top = self.align(at);
                true
            }
            None => false,
        }
    }

    /// `argN`, a device address inside a segment (hex), or a file offset (hex or decimal).
    pub fn goto(&mut self, target: &str) -> Result<(), String> {
        let t = target.trim().to_lowercase();
        let offset = if let Some(n) = t
            .strip_prefix("argument")
            .or_else(|| t.strip_prefix("arg"))
            .map(str::trim)
        {
            let i: usize = n
                .parse()
                .map_err(|_| format!("{target:?}: expected argN"))?;
            self.map
                .arg_region(i)
                .map(|r| r.file_start)
                .ok_or_else(|| format!("argument {i} does not point into recorded memory"))?
        } else {
            let v = match t.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
                None => t.replace('_', "").parse(),
            }
            .map_err(|_| format!("{target:?}: expected an offset, 0xADDRESS or argN"))?;
            match self.map.file_offset_of(v) {
                Some(offset) => offset,
                // Neither an address of the recorded memory nor an offset into the snapshot.
                None if v >= self.len() => {
                    return Err(format!(
                        "{v:#x} is neither a recorded device address nor an offset into the {:#x}-byte snapshot",
                        self.len()
                    ))
                }
                None => v,
            }
        };
        if offset >= self.len() {
            return Err(format!(
                "{offset:#x} is past the end ({:#x} bytes)",
                self.len()
            ));
        }
        self.top = self.align(offset);
        // The row gone to is shown as a row, even inside a run of equal rows.
        self.cursor = Some(offset);
        Ok(())
    }

    pub fn progress(&self) -> f64 {
        if self.compared() == 0 {
            1.0
        } else {
            self.scanned as f64 / self.compared() as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_format::descriptor::Segment;

    fn view(a: &[u8], b: &[u8]) -> (tempfile::TempDir, SnapView) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), a).unwrap();
        std::fs::write(dir.path().join("b"), b).unwrap();
        let sa = Arc::new(Snapshot::open(&dir.path().join("a")).unwrap());
        let sb = Arc::new(Snapshot::open(&dir.path().join("b")).unwrap());
        let map = MemoryMap::from_parts(vec![Segment::device(0x1000, a.len() as u64, 0)], &[]);
        let mut v = SnapView::new(0, Pair::InputOutput, sa, sb, map, 1);
        let out = rr_engine::diff::index_slices(a, b, 8);
        v.index = out.index;
        v.scanned = out.compared;
        v.done = true;
        (dir, v)
    }

    /// Differences 4 bytes apart are one merged range of the index, but each is a difference
    /// of its own for `n`/`N`: f32 elements with a type, runs of bytes without one.
    #[test]
    fn n_and_shift_n_visit_every_difference_of_a_merged_range() {
        let a = vec![0u8; 4096];
        let mut b = a.clone();
        let differing: Vec<u64> = (0..40u64).map(|i| 1024 + 8 * i).collect();
        for &at in &differing {
            b[at as usize..at as usize + 4].copy_from_slice(&0x3fc0_1111u32.to_le_bytes());
        }
        let (_d, mut v) = view(&a, &b);
        assert_eq!(v.index.ranges.len(), 1, "one merged range");
        for dtype in [None, Some(DType::F32)] {
            v.dtype = dtype;
            v.set_row(16);
            v.to_top();
            v.cursor = None;
            let mut seen = Vec::new();
            while v.next_diff() {
                seen.push(v.cursor.unwrap());
            }
            assert_eq!(seen, differing, "{dtype:?}");
            let mut back = Vec::new();
            while v.prev_diff() {
                back.push(v.cursor.unwrap());
            }
            back.reverse();
            assert_eq!(back, differing[..differing.len() - 1], "{dtype:?}");
        }
    }

    /// `:` into the middle of equal rows shows that row, not a squeezed run starting there.
    #[test]
    fn going_to_an_offset_inside_equal_rows_shows_the_row() {
        let a = vec![0u8; 8192];
        let mut b = a.clone();
        b[8000] = 1;
        let (_d, mut v) = view(&a, &b);
        v.goto("0x800").unwrap();
        let lines = v.lines(3);
        assert_eq!(lines[0], Line::Row(0x800), "{lines:?}");
        assert!(
            matches!(lines[1], Line::Squeezed { start: 0x810, .. }),
            "{lines:?}"
        );
    }

    #[test]
    fn squeezes_equal_runs_and_jumps_between_differences() {
        let a = vec![0u8; 1024];
        let mut b = a.clone();
        b[500] = 1;
        b[900] = 2;
        let (_d, mut v) = view(&a, &b);
        let lines = v.lines(5);
        assert_eq!(lines[0], Line::Squeezed { start: 0, end: 496 });
        assert_eq!(lines[1], Line::Row(496));
        assert!(v.next_diff());
        assert_eq!(v.top, 496);
        assert!(v.next_diff());
        assert_eq!(v.top, 896);
        assert!(!v.next_diff());
        assert!(v.prev_diff());
        assert_eq!(v.top, 496);
        v.scroll_up(1);
        assert_eq!(
            v.top, 0,
            "scrolling up over a squeezed run lands on its start"
        );
        v.scroll_down(1, 2);
        assert_eq!(v.top, 496);
        v.squeeze = false;
        assert_eq!(v.lines(2), vec![Line::Row(496), Line::Row(512)]);
    }

    /// Every row width the layout can choose keeps positions row-aligned and the same bytes
    /// reachable: jumps, goto, squeezing and the bottom.
    #[test]
    fn every_row_width_navigates_the_same_bytes() {
        let a = vec![0u8; 1024];
        let mut b = a.clone();
        b[500] = 1;
        b[900] = 2;
        let (_d, mut v) = view(&a, &b);
        for row in [16u64, 8, 4] {
            v.set_row(row);
            v.to_top();
            assert_eq!(
                v.lines(1),
                vec![Line::Squeezed {
                    start: 0,
                    end: 500 / row * row
                }]
            );
            assert!(v.next_diff());
            assert_eq!(v.top, 500 / row * row, "row {row}");
            assert!(v.next_diff());
            assert_eq!(v.top, 900 / row * row);
            assert!(v.prev_diff());
            assert_eq!(v.top, 500 / row * row);
            v.goto("1023").unwrap();
            assert_eq!(v.top, 1023 / row * row);
            v.to_bottom(4);
            let lines = v.lines(4);
            assert_eq!(lines.len(), 4, "row {row}: the view is full at the bottom");
            // The equal tail is one squeezed line that ends the view.
            assert_eq!(
                *lines.last().unwrap(),
                Line::Squeezed {
                    start: 900 / row * row + row,
                    end: 1024
                }
            );
            v.scroll_down(5, 4);
            assert_eq!(v.lines(4), lines, "no scrolling past the bottom");
        }
        // Widening the rows keeps the top row's first byte on screen.
        v.set_row(4);
        v.goto("0x1004").unwrap();
        v.set_row(16);
        assert_eq!(v.top, 0);
    }

    #[test]
    fn the_bottom_of_a_squeezed_tail_ends_the_view() {
        let a = vec![0u8; 4096];
        let mut b = a.clone();
        b[10] = 1;
        let (_d, mut v) = view(&a, &b);
        v.to_bottom(20);
        assert_eq!(
            v.lines(20),
            vec![
                Line::Row(0),
                Line::Squeezed {
                    start: 16,
                    end: 4096
                }
            ]
        );
        v.squeeze = false;
        v.to_bottom(20);
        assert_eq!(v.lines(20).last(), Some(&Line::Row(4080)));
        assert_eq!(v.top, 4096 - 20 * 16);
    }

    #[test]
    fn goto_accepts_offsets_addresses_and_arguments() {
        let (_d, mut v) = view(&[0u8; 256], &[0u8; 256]);
        v.goto("0x1040").unwrap();
        assert_eq!(v.top, 0x40);
        v.goto("100").unwrap();
        assert_eq!(v.top, 96);
        assert!(v.goto("arg0").is_err());
        assert!(v.goto("zzz").is_err());
        assert!(v.goto("4096000").is_err());
        // An address outside the recorded memory is said to be one, not an offset too far.
        let e = v.goto("0xdeadbeef").unwrap_err();
        assert!(e.contains("neither a recorded device address"), "{e}");
    }
}
