//! The mouse. A click on a tab switches to its screen, on a row selects it (instances, record
//! directories, the tuning form's fields, the table of the best configurations), on a heatmap
//! cell picks that cell's configuration; the wheel scrolls the pane under the pointer, not the
//! one the keys move.
//!
//! Where things are comes from the functions the drawing itself uses (`framelayout`'s
//! `frame_areas`, `tab_places` and the lists' rows, `tunelayout`), computed from the state as the last
//! frame drew it, so a click and what is on screen cannot disagree. An event first becomes a
//! [`MouseAction`] (tests can ask which), then goes the way the matching key goes.

use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::framelayout::{first_row, frame_areas, instance_rows, picker_rows, tab_places};
use super::screens::{InstancesScreen, TuneScreen};
use super::tunelayout::{self, HeatGeometry};
use super::{App, Cmd, Screen};
use crate::tui::keymap::Action;
use crate::tui::layout::titled_inner;

/// Lines one notch of the wheel scrolls a list or a text (three, as terminals scroll).
pub const WHEEL_LINES: i32 = 3;

/// A pane the wheel scrolls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The help popup (it takes the wheel wherever the pointer is, as it takes the keys).
    Help,
    Picker,
    /// The screen's content: the instance list, the descriptor, the snapshots (the replay and
    /// profile screens say that nothing scrolls there, as for j/k).
    Screen,
    TuneForm,
    Heatmap,
    TuneTable,
}

/// What a mouse event means where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseAction {
    Tab(Screen),
    /// A row of the instance list: its place in the view.
    Instance(usize),
    /// A row of the record-directory picker.
    RecordDir(usize),
    /// A field of the tuning form (its index in `Field::ALL`).
    TuneField(usize),
    /// A row of the table of the best configurations.
    TuneRow(usize),
    /// A heatmap cell: its row and column in the heatmap.
    HeatCell(usize, usize),
    CloseHelp,
    /// Lines down (negative: up).
    Scroll(Pane, i32),
    /// Columns right (negative: left).
    ScrollSideways(Pane, i32),
}

/// See [`App::lists_placed`]: compared before and after a message, so that the stream of replay
/// and sweep events (thousands a second) does not lay the frame out for nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListsPlaced {
    selected: usize,
    rows: usize,
    size: (u16, u16),
    picker: Option<(usize, usize)>,
}

/// The row of a list drawn one per line in `rows` from its item `first` that `at` is on.
fn row_at(rows: Rect, first: usize, len: usize, at: Position) -> Option<usize> {
    let i = first + (at.y.checked_sub(rows.y)? as usize);
    (rows.contains(at) && i < len).then_some(i)
}

impl App {
    /// The frame's areas as the next frame draws them (tab bar, screen, status, hints).
    fn frame(&self) -> [Rect; 4] {
        frame_areas(self, Rect::new(0, 0, self.width, self.height))
    }

    /// What places the lists: their selections and lengths, and the terminal's size. (A status
    /// message that wraps changes how many rows fit too, but the drawing and the clicks both
    /// clamp the kept first row with [`first_row`], so they agree without it.)
    pub(super) fn lists_placed(&self) -> ListsPlaced {
        ListsPlaced {
            selected: self.selected,
            rows: self.view.len(),
            size: (self.width, self.height),
            picker: self
                .picker
                .as_ref()
                .map(|p| (p.selected, p.below.found.len())),
        }
    }

    /// The instance list's and the picker's first rows on screen, after a message changed
    /// what places them (the drawing and the clicks both read them).
    pub(super) fn keep_lists_in_view(&mut self) {
        let [_, main, _, _] = self.frame();
        let visible = instance_rows(self, main).height as usize;
        self.instances.list_top = first_row(
            self.instances.list_top,
            self.selected,
            self.view.len(),
            visible,
        );
        if let Some(p) = self.picker.as_mut() {
            let visible = picker_rows(main).height as usize;
            p.top = first_row(p.top, p.selected, p.below.found.len(), visible);
        }
    }

    /// What `ev` means here, if anything. While a prompt or a form field is being typed the
    /// mouse does nothing: a click must not drop a half-typed value.
    pub fn mouse_action(&self, ev: &MouseEvent) -> Option<MouseAction> {
        if self.prompt.is_some() || self.tune.form.editing.is_some() {
            return None;
        }
        let at = Position::new(ev.column, ev.row);
        let (down, right) = match ev.kind {
            MouseEventKind::Down(MouseButton::Left) => return self.click_at(at),
            MouseEventKind::ScrollDown => (WHEEL_LINES, 0),
            MouseEventKind::ScrollUp => (-WHEEL_LINES, 0),
            MouseEventKind::ScrollRight => (0, 1),
            MouseEventKind::ScrollLeft => (0, -1),
            _ => return None,
        };
        let pane = self.pane_at(at)?;
        // Shift turns the wheel sideways, for mice without a horizontal wheel.
        Some(
            match ev.modifiers.contains(KeyModifiers::SHIFT) || right != 0 {
                true => MouseAction::ScrollSideways(pane, right + down.signum()),
                false => MouseAction::Scroll(pane, down),
            },
        )
    }

    fn click_at(&self, at: Position) -> Option<MouseAction> {
        if self.help {
            return Some(MouseAction::CloseHelp);
        }
        let [tabs, main, _, _] = self.frame();
        if tabs.contains(at) {
            return tab_places(self, tabs)
                .into_iter()
                .find(|(_, r)| r.contains(at))
                .map(|(s, _)| MouseAction::Tab(s));
        }
        if !main.contains(at) {
            return None;
        }
        if let Some(p) = self.picker.as_ref().filter(|_| self.picking) {
            let rows = picker_rows(main);
            let (len, visible) = (p.below.found.len(), rows.height as usize);
            let first = first_row(p.top, p.selected, len, visible);
            return row_at(rows, first, len, at).map(MouseAction::RecordDir);
        }
        match self.screen {
            Screen::Instances => {
                let rows = instance_rows(self, main);
                let (len, visible) = (self.view.len(), rows.height as usize);
                let first = first_row(self.instances.list_top, self.selected, len, visible);
                row_at(rows, first, len, at).map(MouseAction::Instance)
            }
            Screen::Tune => self.tune_click(main, at),
            _ => None,
        }
    }

    /// A click on the tuning screen: a form field, a heatmap cell or a row of the table.
    fn tune_click(&self, main: Rect, at: Position) -> Option<MouseAction> {
        let run = self.tune.runs.get(&self.current()?);
        let l = tunelayout::layout(titled_inner(main), run);
        // The form collapsed to one line shows the field under the cursor.
        if l.collapsed && l.form.contains(at) {
            return Some(MouseAction::TuneField(self.tune.form.cursor));
        }
        if l.form.contains(at) {
            return tunelayout::form_field_at(l.form, at).map(MouseAction::TuneField);
        }
        let run = run?;
        if l.heat.contains(at) {
            let g = HeatGeometry::of(&run.heat, l.heat);
            let (r, c) = g.cell_at(&run.heat, l.heat, self.tune.heat_scroll, at)?;
            return Some(MouseAction::HeatCell(r, c));
        }
        let rows = tunelayout::table_rows(l.table);
        let listed = run.listed(self.tune.show_front).len();
        // Scrolled as drawn: the picked row on screen.
        let window = tunelayout::table_window(self.tune.pick, listed, rows.height as usize);
        row_at(rows, window.start, window.end, at).map(MouseAction::TuneRow)
    }

    /// The pane the wheel scrolls at `at`.
    fn pane_at(&self, at: Position) -> Option<Pane> {
        if self.help {
            return Some(Pane::Help);
        }
        let [_, main, _, _] = self.frame();
        if !main.contains(at) {
            return None;
        }
        if self.picking {
            return Some(Pane::Picker);
        }
        if self.screen != Screen::Tune {
            return Some(Pane::Screen);
        }
        let run = self.current().and_then(|i| self.tune.runs.get(&i));
        let l = tunelayout::layout(titled_inner(main), run);
        [
            (l.form, Pane::TuneForm),
            (l.heat, Pane::Heatmap),
            (l.table, Pane::TuneTable),
        ]
        .into_iter()
        .find_map(|(r, pane)| r.contains(at).then_some(pane))
    }

    pub(super) fn on_mouse(&mut self, ev: MouseEvent) -> Vec<Cmd> {
        match self.mouse_action(&ev) {
            Some(a) => {
                // As any other key does, a click forgets the question `r` asked (`start_tune`).
                self.tune.replace_asked = None;
                self.on_mouse_action(a)
            }
            None => vec![],
        }
    }

    fn on_mouse_action(&mut self, a: MouseAction) -> Vec<Cmd> {
        match a {
            // As the tab's digit key does.
            MouseAction::Tab(s) => return self.on_action(screen_key(s)),
            MouseAction::Instance(i) => {
                let delta = i as isize - self.selected as isize;
                return InstancesScreen::move_selection(self, delta);
            }
            MouseAction::RecordDir(i) => {
                if let Some(p) = self.picker.as_mut() {
                    p.selected = i;
                }
            }
            MouseAction::TuneField(i) => self.tune.form.cursor = i,
            // As `[`/`]` would, from the row picked now to the one clicked.
            MouseAction::TuneRow(k) => {
                let from = self.picked_row(self.tune.pick);
                TuneScreen::pick_row(self, k as isize - from as isize);
            }
            MouseAction::HeatCell(r, c) => self.pick_heat_cell(r, c),
            MouseAction::CloseHelp => {
                self.help = false;
                self.help_scroll = 0;
            }
            MouseAction::Scroll(pane, lines) => return self.wheel(pane, lines),
            MouseAction::ScrollSideways(Pane::Heatmap, columns) => {
                self.scroll_heat_by(0, columns as isize)
            }
            MouseAction::ScrollSideways(..) => {}
        }
        vec![]
    }

    /// The table's row `pick_tuned` starts from (the pick kept within the rows listed).
    fn picked_row(&self, pick: usize) -> usize {
        let listed = self
            .current()
            .and_then(|i| self.tune.runs.get(&i))
            .map_or(0, |r| r.listed(self.tune.show_front).len());
        pick.min(listed.saturating_sub(1))
    }

    /// The wheel over `pane`: lists and texts move as by the arrow keys, the heatmap by rows,
    /// the table's pick by one row a notch (it lists twenty at most).
    fn wheel(&mut self, pane: Pane, lines: i32) -> Vec<Cmd> {
        let action = if lines > 0 { Action::Down } else { Action::Up };
        let times = lines.unsigned_abs().min(50);
        let mut cmds = Vec::new();
        for _ in 0..times {
            match pane {
                Pane::Help => self.scroll_help(action),
                Pane::Picker => cmds.extend(self.on_picker_action(action)),
                Pane::Screen => cmds.extend(self.on_action(action)),
                Pane::TuneForm => TuneScreen::scroll(self, action),
                Pane::Heatmap | Pane::TuneTable => {}
            }
        }
        match pane {
            Pane::Heatmap => self.scroll_heat_by(lines as isize, 0),
            Pane::TuneTable => TuneScreen::pick_row(self, lines.signum() as isize),
            _ => {}
        }
        cmds
    }

    /// Scroll the heatmap by rows and columns, never past its ends (the keys scroll it by
    /// pages; the wheel by lines).
    fn scroll_heat_by(&mut self, rows: isize, columns: isize) {
        let [_, main, _, _] = self.frame();
        let Some(run) = self.current().and_then(|i| self.tune.runs.get(&i)) else {
            return;
        };
        let area = tunelayout::layout(titled_inner(main), Some(run)).heat;
        let g = HeatGeometry::of(&run.heat, area);
        let (now_rows, now_cols) = g.window(&run.heat, self.tune.heat_scroll);
        let step = |at: usize, by: isize, len: usize, visible: usize| {
            at.saturating_add_signed(by)
                .min(len.saturating_sub(visible))
        };
        self.tune.heat_scroll = (
            step(now_rows.start, rows, run.heat.rows.len(), g.rows),
            step(now_cols.start, columns, run.heat.cols.len(), g.cols),
        );
    }

    /// A click on a heatmap cell: the table's row of the cell's best configuration is picked
    /// (`P` profiles it); a cell whose best the table does not list, or with nothing verified,
    /// says so.
    fn pick_heat_cell(&mut self, r: usize, c: usize) {
        let Some(run) = self.current().and_then(|i| self.tune.runs.get(&i)) else {
            return;
        };
        let heat = &run.heat;
        let (Some(row), Some(col)) = (heat.rows.get(r), heat.cols.get(c)) else {
            return;
        };
        let (row_axis, col_axis) = heat.axis_names();
        let place = format!("{row_axis} {} × {col_axis} {}", row.label, col.label);
        // The table lists best first: the first of its rows in the cell is the cell's best.
        let listed = run.listed(self.tune.show_front);
        let target = (row.clone(), col.clone());
        if let Some(k) = listed.iter().position(|t| heat.place(&t.config) == target) {
            let config = listed[k].config;
            self.tune.pick = k;
            self.set_status(
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
        self.set_status(text, false);
    }
}

/// The key action of a screen's tab (its digit).
fn screen_key(s: Screen) -> Action {
    match s {
        Screen::Instances => Action::ScreenInstances,
        Screen::Descriptor => Action::ScreenDescriptor,
        Screen::Snapshots => Action::ScreenSnapshots,
        Screen::Replay => Action::ScreenReplay,
        Screen::Tune => Action::ScreenTune,
        Screen::Profile => Action::ScreenProfile,
    }
}
