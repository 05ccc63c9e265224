//! The Tune screen's mouse: a click on a form field, a heatmap cell or a row of the table, and
//! the wheel over the form, the heatmap and the table (`app::mouse` finds the screen and the
//! pane; the places are the drawing's, `layout`).

use ratatui::layout::{Position, Rect};

use super::layout::{self, HeatGeometry};
use super::TuneScreen;
use crate::tui::app::pointer::{row_at, wheel_steps, MouseAction, Pane};
use crate::tui::app::App;
use crate::tui::keymap::Action;
use crate::tui::layout::titled_inner;

impl TuneScreen {
    /// A click on the tuning screen: a form field, a heatmap cell or a row of the table
    /// (`Component::click`).
    pub(super) fn place_clicked(app: &App, main: Rect, at: Position) -> Option<MouseAction> {
        let run = app.tune.runs.get(&app.current()?);
        let l = layout::layout(titled_inner(main), run);
        // The form collapsed to one line shows the field under the cursor.
        if l.collapsed && l.form.contains(at) {
            return Some(MouseAction::TuneField(app.tune.form.cursor));
        }
        if l.form.contains(at) {
            return layout::form_field_at(l.form, at).map(MouseAction::TuneField);
        }
        let run = run?;
        if l.heat.contains(at) {
            let g = HeatGeometry::of(&run.heat, l.heat);
            let (r, c) = g.cell_at(&run.heat, l.heat, app.tune.heat_scroll, at)?;
            return Some(MouseAction::HeatCell(r, c));
        }
        let rows = layout::table_rows(l.table);
        let listed = run.listed(app.tune.show_front).len();
        // Scrolled as drawn: the picked row on screen.
        let window = layout::table_window(app.tune.pick, listed, rows.height as usize);
        row_at(rows, window.start, window.end, at).map(MouseAction::TuneRow)
    }

    /// The pane the wheel scrolls at `at`, in the screen's area `main` (`Component::pane_at`).
    pub(super) fn pane_under(app: &App, main: Rect, at: Position) -> Option<Pane> {
        let run = app.current().and_then(|i| app.tune.runs.get(&i));
        let l = layout::layout(titled_inner(main), run);
        [
            (l.form, Pane::TuneForm),
            (l.heat, Pane::Heatmap),
            (l.table, Pane::TuneTable),
        ]
        .into_iter()
        .find_map(|(r, pane)| r.contains(at).then_some(pane))
    }

    /// A click, or the wheel turned sideways over the heatmap (`Component::on_mouse`).
    pub(super) fn take_mouse(app: &mut App, a: MouseAction) {
        match a {
            MouseAction::TuneField(i) => app.tune.form.cursor = i,
            // As `[`/`]` would, from the row picked now to the one clicked.
            MouseAction::TuneRow(k) => {
                let from = Self::picked_row(app, app.tune.pick);
                Self::pick_row(app, k as isize - from as isize);
            }
            MouseAction::HeatCell(r, c) => Self::pick_heat_cell(app, r, c),
            MouseAction::ScrollSideways(Pane::Heatmap, columns) => {
                Self::scroll_heat_by(app, 0, columns as isize)
            }
            _ => {}
        }
    }

    /// The wheel over `pane`: the form moves as by the arrow keys, the heatmap by rows, the
    /// table's pick by one row a notch (it lists twenty at most) (`Component::wheel`).
    pub(super) fn wheel_over(app: &mut App, pane: Pane, lines: i32) {
        match pane {
            Pane::TuneForm => {
                let action = if lines > 0 { Action::Down } else { Action::Up };
                for _ in 0..wheel_steps(lines) {
                    Self::scroll(app, action);
                }
            }
            Pane::Heatmap => Self::scroll_heat_by(app, lines as isize, 0),
            Pane::TuneTable => Self::pick_row(app, lines.signum() as isize),
            _ => {}
        }
    }

    /// The table's row `pick_tuned` starts from (the pick kept within the rows listed).
    fn picked_row(app: &App, pick: usize) -> usize {
        let listed = app
            .current()
            .and_then(|i| app.tune.runs.get(&i))
            .map_or(0, |r| r.listed(app.tune.show_front).len());
        pick.min(listed.saturating_sub(1))
    }

    /// Scroll the heatmap by rows and columns, never past its ends (the keys scroll it by
    /// pages; the wheel by lines).
    fn scroll_heat_by(app: &mut App, rows: isize, columns: isize) {
        let [_, main, _, _] = app.frame();
        let Some(run) = app.current().and_then(|i| app.tune.runs.get(&i)) else {
            return;
        };
        let area = layout::layout(titled_inner(main), Some(run)).heat;
        let g = HeatGeometry::of(&run.heat, area);
        let (now_rows, now_cols) = g.window(&run.heat, app.tune.heat_scroll);
        let step = |at: usize, by: isize, len: usize, visible: usize| {
            at.saturating_add_signed(by)
                .min(len.saturating_sub(visible))
        };
        app.tune.heat_scroll = (
            step(now_rows.start, rows, run.heat.rows.len(), g.rows),
            step(now_cols.start, columns, run.heat.cols.len(), g.cols),
        );
    }

    /// A click on a heatmap cell: the table's row of the cell's best configuration is picked
    /// (`P` profiles it); a cell whose best the table does not list, or with nothing verified,
    /// says so.
    fn pick_heat_cell(app: &mut App, r: usize, c: usize) {
        let Some(run) = app.current().and_then(|i| app.tune.runs.get(&i)) else {
            return;
        };
        let heat = &run.heat;
        let (Some(row), Some(col)) = (heat.rows.get(r), heat.cols.get(c)) else {
            return;
        };
        let (row_axis, col_axis) = heat.axis_names();
        let place = format!("{row_axis} {} × {col_axis} {}", row.label, col.label);
        // The table lists best first: the first of its rows in the cell is the cell's best.
        let listed = run.listed(app.tune.show_front);
        let target = (row.clone(), col.clone());
        if let Some(k) = listed.iter().position(|t| heat.place(&t.config) == target) {
            let config = listed[k].config;
            app.tune.pick = k;
            app.set_status(
                format!("row {} picked ({place}: {config}): P profiles it", k + 1),
                false,
            );
            return;
        }
        let text = match heat.cell(row, col) {
            None => format!("{place}: nothing measured there yet"),
            Some(cell) if cell.best.is_some() => format!(
                "{place}: its best is not among the {} configurations the table lists: P profiles a listed row",
                listed.len()
            ),
            Some(cell) => format!(
                "{place}: no verified configuration ({} tried): nothing to pick",
                cell.trials
            ),
        };
        app.set_status(text, false);
    }
}
