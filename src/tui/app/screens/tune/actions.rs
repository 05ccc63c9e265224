//! The Tune screen's view keys: editing the form, moving between its fields, the heatmap's
//! scrolling and axes, the table's mode and the row `P` profiles.

use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

use super::form::EditOutcome;
use super::heatmap::{HeatAxis, Heatmap};
use super::layout::{self, HeatGeometry};
use super::TuneScreen;
use crate::tui::app::{App, TITLE_LINES};
use crate::tui::keymap::Action;

/// Sweeps up to this many configurations are redrawn on other axes at a key press (a few tens
/// of milliseconds); larger ones keep their axes.
const MAX_REDRAWN: usize = 200_000;

impl TuneScreen {
    /// The tuning screen's content area (below the tab bar and its title, above the status
    /// and hint bars), as the drawing gets it.
    pub fn area(app: &App) -> Rect {
        Rect::new(
            0,
            2,
            app.width,
            app.height.saturating_sub(app.frame_lines() + TITLE_LINES),
        )
    }

    pub(crate) fn on_edit_key(app: &mut App, k: KeyEvent) {
        match app.tune.form.edit_key(&k) {
            EditOutcome::Applied(field) => {
                let (shown, _) = app.tune.form.settings.shown(field);
                app.set_status(format!("{} {shown}", field.label()), false);
            }
            EditOutcome::Cancelled => app.set_status("field unchanged", false),
            // The reason is on screen already (the form's info line and the hint bar).
            EditOutcome::Refused | EditOutcome::Editing => {}
        }
    }

    pub(crate) fn edit_field(app: &mut App) {
        if let Some(what) = app.tune.form.activate() {
            app.set_status(what, false);
        }
    }

    /// j/k move between fields; PgUp/PgDn scroll the heatmap's rows.
    pub(crate) fn scroll(app: &mut App, a: Action) {
        match a {
            Action::Up => app.tune.form.move_cursor(-1),
            Action::Down => app.tune.form.move_cursor(1),
            Action::Top => app.tune.form.cursor = 0,
            Action::Bottom => app.tune.form.cursor = crate::tui::app::Field::ALL.len() - 1,
            Action::PageUp => Self::scroll_heat(app, -1, 0),
            Action::PageDown => Self::scroll_heat(app, 1, 0),
            _ => {}
        }
    }

    /// `[`/`]`: the row of the table `P` profiles.
    pub(crate) fn pick_row(app: &mut App, delta: isize) {
        let n = app
            .current()
            .and_then(|i| app.tune.runs.get(&i))
            .map_or(0, |r| r.listed(app.tune.show_front).len());
        if n == 0 {
            app.set_status("no verified configuration to pick yet", true);
            return;
        }
        app.tune.pick =
            (app.tune.pick.min(n - 1) as isize + delta).clamp(0, n as isize - 1) as usize;
        app.set_status(
            format!("row {} picked: P profiles it", app.tune.pick + 1),
            false,
        );
    }

    /// The table: the best configurations, or the Pareto front of time against energy (a
    /// sweep that measures energy: the form's objective field).
    pub(crate) fn toggle_front(app: &mut App) {
        let front = app
            .current()
            .and_then(|i| app.tune.runs.get(&i))
            .map(|run| (run.report.energy.is_some(), run.front().len()));
        match front {
            None => app.set_status(
                "no sweep of this instance yet: r starts one (an objective other than time measures energy too)",
                true,
            ),
            Some((true, n)) => {
                app.tune.show_front = !app.tune.show_front;
                app.tune.pick = 0;
                app.set_status(
                    if app.tune.show_front {
                        format!("table: the Pareto front of time against energy ({n} configuration(s), fastest first; p for the best)")
                    } else {
                        "table: the best configurations by the objective (p for the Pareto front)".into()
                    },
                    false,
                );
            }
            Some(_) => app.set_status(
                "this sweep measured no energy: set the form's objective to time (+ energy), energy or edp, then r",
                true,
            ),
        }
    }

    /// Show the heatmap on the next pair of axes whose values vary in the sweep (grid × block
    /// first), rebuilt from the configurations measured so far.
    pub(crate) fn cycle_heat_axes(app: &mut App) {
        let Some(run) = app.current().and_then(|i| app.tune.runs.get_mut(&i)) else {
            app.set_status("no heatmap yet: r starts a sweep of this instance", false);
            return;
        };
        let trials = &run.report.trials;
        if trials.len() > MAX_REDRAWN {
            let n = trials.len();
            app.set_status(
                format!("{n} configurations are too many to redraw on other axes"),
                true,
            );
            return;
        }
        let defines = run.report.defines.clone();
        let varies = |a: HeatAxis| {
            let probe = Heatmap::new((a, a), defines.clone());
            let mut seen = std::collections::HashSet::new();
            trials.iter().any(|t| {
                seen.insert(probe.place(&t.config).0);
                seen.len() > 1
            })
        };
        let axes: Vec<HeatAxis> = HeatAxis::all(&defines)
            .into_iter()
            .filter(|&a| varies(a))
            .collect();
        let mut pairs = vec![(HeatAxis::Grid, HeatAxis::Block)];
        for &r in &axes {
            for &c in &axes {
                if r != c && !pairs.contains(&(r, c)) {
                    pairs.push((r, c));
                }
            }
        }
        let at = pairs.iter().position(|p| *p == run.heat.axes).unwrap_or(0);
        let next = pairs[(at + 1) % pairs.len()];
        run.heat = Heatmap::rebuilt(next, defines, run.report.objective, trials);
        let (r, c) = run.heat.axis_names();
        app.tune.heat_scroll = (0, 0);
        app.set_status(
            if pairs.len() == 1 {
                format!("heatmap: {r} × {c} (no other axis varies in this sweep)")
            } else {
                format!("heatmap: {r} × {c} (a for the next)")
            },
            false,
        );
    }

    /// Scroll the heatmap by pages of rows and by single columns, never past its ends.
    pub(crate) fn scroll_heat(app: &mut App, pages: isize, columns: isize) {
        let Some(run) = app.current().and_then(|i| app.tune.runs.get(&i)) else {
            app.set_status("no heatmap yet: r starts a sweep of this instance", false);
            return;
        };
        let area = layout::layout(Self::area(app), Some(run)).heat;
        let g = HeatGeometry::of(&run.heat, area);
        let (rows, cols) = (run.heat.rows.len(), run.heat.cols.len());
        let (r, c) = app.tune.heat_scroll;
        let r = layout::first(r, rows, g.rows);
        let c = layout::first(c, cols, g.cols);
        let step = |at: usize, by: isize, len: usize, visible: usize| {
            at.saturating_add_signed(by)
                .min(len.saturating_sub(visible))
        };
        app.tune.heat_scroll = (
            step(r, pages * g.rows as isize, rows, g.rows),
            step(c, columns, cols, g.cols),
        );
        if columns != 0 && cols <= g.cols {
            app.set_status("every column of the heatmap is on screen", false);
        }
    }
}
