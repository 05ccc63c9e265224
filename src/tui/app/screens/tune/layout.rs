//! Where the tuning screen puts things, from the terminal size and the sweep alone. Drawing uses
//! it, and so does `update`, so that the heatmap scrolls exactly as far as it is drawn.

use std::ops::Range;

use ratatui::layout::{Constraint, Layout, Position, Rect};

use super::form::Field;
use super::heatmap::Heatmap;
use super::run::TuneRun;
use crate::tui::app::replays::Phase;

/// From this width the table of the best configurations sits beside the heatmap.
pub const SIDE_BY_SIDE: u16 = 150;
/// The table's width beside the heatmap.
pub const TABLE_WIDTH: u16 = 66;
/// The form's rows: the axes in the first column, the search and timing in the second.
pub const FORM_ROWS: u16 = Field::ALL.len().div_ceil(2) as u16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TuneLayout {
    pub form: Rect,
    /// The form is one line, its field under the cursor: a sweep is shown and its heatmap
    /// would not fit under the whole form.
    pub collapsed: bool,
    /// One line: what the field being edited means (or why it does not parse), or the space.
    pub info: Rect,
    /// Without a sweep: how to use the screen.
    pub intro: Rect,
    pub progress: Rect,
    /// Warnings and the final error.
    pub notes: Rect,
    pub heat: Rect,
    pub table: Rect,
}

/// Lines of notes a sweep needs: its last warning, and how it failed (or that nothing
/// verified).
pub fn note_lines(run: &TuneRun) -> u16 {
    let failed = matches!(run.phase, Phase::Failed(_))
        || (run.phase == Phase::Done && run.report.best.is_none());
    u16::from(!run.warnings.is_empty()) + u16::from(failed)
}

/// The layout of the tuning screen's content `area` (below its title): the whole form, or,
/// where a sweep's heatmap would not fit under it (80×24), the form collapsed to the line of
/// the field under the cursor, so that the heatmap and the table get its lines.
pub fn layout(area: Rect, run: Option<&TuneRun>) -> TuneLayout {
    let whole = layout_with(area, run, FORM_ROWS);
    match run {
        Some(run) if whole.heat.height < heat_need(run) => TuneLayout {
            collapsed: true,
            ..layout_with(area, Some(run), 1)
        },
        _ => whole,
    }
}

/// The lines the heatmap of `run` needs: a header, its rows and its legend.
fn heat_need(run: &TuneRun) -> u16 {
    (run.heat.rows.len() as u16).saturating_add(2)
}

fn layout_with(area: Rect, run: Option<&TuneRun>, form_rows: u16) -> TuneLayout {
    let [form, info, rest] = Layout::vertical([
        Constraint::Length(form_rows),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(area);
    let Some(run) = run else {
        return TuneLayout {
            form,
            info,
            intro: rest,
            ..TuneLayout::default()
        };
    };
    let [progress, notes, body] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(note_lines(run)),
        Constraint::Fill(1),
    ])
    .areas(rest);
    let (heat, table) = if body.width >= SIDE_BY_SIDE {
        let [heat, _, table] = Layout::horizontal([
            Constraint::Fill(1),
            Constraint::Length(1),
            Constraint::Length(TABLE_WIDTH),
        ])
        .areas(body);
        (heat, table)
    } else {
        // The heatmap takes what its rows need, the table keeps at least its title, header and
        // three rows, and whatever is left goes to the table.
        let ranked = run.ranking().len() as u16;
        let table_min = 2 + ranked.clamp(1, 3);
        let heat_h = heat_need(run)
            .max(3)
            .min(body.height.saturating_sub(table_min))
            .max(body.height.min(3));
        let [heat, table] =
            Layout::vertical([Constraint::Length(heat_h), Constraint::Fill(1)]).areas(body);
        (heat, table)
    };
    TuneLayout {
        form,
        info,
        progress,
        notes,
        heat,
        table,
        ..TuneLayout::default()
    }
}

/// The columns of the form: the width of each (the axes on the left, the rest on the right).
pub fn form_column_width(form: Rect) -> u16 {
    form.width / 2
}

/// The form's field (its index in `Field::ALL`) drawn at `at`, if any: fields run down the
/// first column, then the second, one line each.
pub fn form_field_at(form: Rect, at: Position) -> Option<usize> {
    let col_w = form_column_width(form);
    if !form.contains(at) || col_w == 0 {
        return None;
    }
    let (row, col) = ((at.y - form.y) as usize, ((at.x - form.x) / col_w) as usize);
    let i = col * FORM_ROWS as usize + row;
    (row < FORM_ROWS as usize && i < Field::ALL.len()).then_some(i)
}

/// The lines of the table of the best configurations that hold its rows: below its title line
/// and its header.
pub fn table_rows(table: Rect) -> Rect {
    Rect {
        y: table.y.saturating_add(2),
        height: table.height.saturating_sub(2),
        ..table
    }
}

/// The table's rows on screen (indices into its list of `listed`), `visible` lines of them: from
/// the first, or scrolled just far enough that the picked row (`pick`, clamped) is the last one
/// shown. The drawing and the clicks both place the rows with it.
pub fn table_window(pick: usize, listed: usize, visible: usize) -> Range<usize> {
    let pick = pick.min(listed.saturating_sub(1));
    let start = (pick + 1)
        .saturating_sub(visible)
        .min(listed.saturating_sub(visible));
    start..(start + visible).min(listed)
}

/// The widest a grid label may make the label column (longer ones are cut).
const MAX_LABEL: usize = 17;
/// The header of the label column: the two axes' names.
pub fn corner(heat: &Heatmap) -> String {
    let (r, c) = heat.axis_names();
    format!("{r}╲{c}")
}
/// A cell that shows its time: a mark, a shade and up to eight characters (`  1.02µs`,
/// `≠ verify`, `· skipped`).
const WIDE_CELL: usize = 10;

/// How the heatmap fits its area: the label column, the cell width (gap included), whether
/// cells show times or only shades, and how many columns and rows are on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeatGeometry {
    pub label_w: usize,
    pub cell_w: usize,
    pub wide: bool,
    pub cols: usize,
    pub rows: usize,
}

impl HeatGeometry {
    pub fn of(heat: &Heatmap, area: Rect) -> HeatGeometry {
        let label = |k: &super::heatmap::HeatKey| k.label.chars().count();
        let label_w = heat
            .rows
            .iter()
            .map(label)
            .max()
            .unwrap_or(0)
            .min(MAX_LABEL)
            .max(corner(heat).chars().count().min(MAX_LABEL));
        let head_w = heat.cols.iter().map(label).max().unwrap_or(0);
        let room = (area.width as usize).saturating_sub(label_w);
        let wide_w = head_w.max(WIDE_CELL) + 1;
        let wide = heat.cols.len() * wide_w <= room;
        let cell_w = if wide { wide_w } else { head_w.max(2) + 1 };
        HeatGeometry {
            label_w,
            cell_w,
            wide,
            cols: (room / cell_w).max(1),
            // A header line above the rows, the legend below.
            rows: (area.height as usize).saturating_sub(2).max(1),
        }
    }
}

impl HeatGeometry {
    /// The heatmap's rows and columns on screen when the view asked for `scroll`.
    pub fn window(&self, heat: &Heatmap, scroll: (usize, usize)) -> (Range<usize>, Range<usize>) {
        let (rows, cols) = (heat.rows.len(), heat.cols.len());
        let r0 = first(scroll.0, rows, self.rows);
        let c0 = first(scroll.1, cols, self.cols);
        (
            r0..(r0 + self.rows).min(rows),
            c0..(c0 + self.cols).min(cols),
        )
    }

    /// The cell (its row and column in the heatmap) drawn at `at` in `area`: the header line
    /// comes first, then a line per row; the label column, then `cell_w` columns per column.
    pub fn cell_at(
        &self,
        heat: &Heatmap,
        area: Rect,
        scroll: (usize, usize),
        at: Position,
    ) -> Option<(usize, usize)> {
        if !area.contains(at) || heat.rows.is_empty() {
            return None;
        }
        let (rows, cols) = self.window(heat, scroll);
        let line = (at.y - area.y) as usize;
        let x = ((at.x - area.x) as usize).checked_sub(self.label_w)?;
        let r = rows.start + line.checked_sub(1)?;
        let c = cols.start + x / self.cell_w.max(1);
        (rows.contains(&r) && cols.contains(&c)).then_some((r, c))
    }
}

/// The first of `len` items on screen when `visible` fit and the view asked for `scroll`.
pub fn first(scroll: usize, len: usize, visible: usize) -> usize {
    scroll.min(len.saturating_sub(visible))
}

#[cfg(test)]
mod tests {
    use super::table_window;

    #[test]
    fn the_table_scrolls_to_keep_the_picked_row_on_screen() {
        assert_eq!(table_window(0, 20, 3), 0..3);
        assert_eq!(table_window(2, 20, 3), 0..3);
        assert_eq!(table_window(13, 20, 3), 11..14);
        assert_eq!(table_window(99, 20, 3), 17..20);
        assert_eq!(table_window(5, 2, 3), 0..2);
        assert_eq!(table_window(0, 0, 3), 0..0);
        assert_eq!(table_window(4, 20, 0), 5..5);
    }
}
