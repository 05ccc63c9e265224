//! The mouse. A click on a tab switches to its screen, on a row selects it (instances, record
//! directories, the tuning form's fields, the table of the best configurations), on a heatmap
//! cell picks that cell's configuration; the wheel scrolls the pane under the pointer, not the
//! one the keys move.
//!
//! Where things are comes from the functions the drawing itself uses (`framelayout`'s
//! `frame_areas`, `tab_places` and the lists' rows, the Tune screen's `layout`), computed from the state as the last
//! frame drew it, so a click and what is on screen cannot disagree. An event first becomes a
//! [`MouseAction`] (tests can ask which), then goes the way the matching key goes. What a click
//! or the wheel means inside a screen is its component's (`Component::click`, `pane_at`,
//! `on_mouse`, `wheel`): the instance list's rows, the Tune screen's places and panes.

use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

use super::framelayout::{first_row, instance_rows, picker_rows, tab_places};
use super::pointer::{row_at, wheel_steps, MouseAction, Pane, WHEEL_LINES};
use super::screens::{with_component, Component};
use super::{App, Cmd, Screen};
use crate::tui::keymap::Action;

/// See [`App::lists_placed`]: compared before and after a message, so that the stream of replay
/// and sweep events (thousands a second) does not lay the frame out for nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListsPlaced {
    selected: usize,
    rows: usize,
    size: (u16, u16),
    picker: Option<(usize, usize)>,
}

impl App {
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
        with_component!(self.screen, S => S::click(self, main, at))
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
        with_component!(self.screen, S => S::pane_at(self, main, at))
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
            MouseAction::RecordDir(i) => {
                if let Some(p) = self.picker.as_mut() {
                    p.selected = i;
                }
            }
            MouseAction::CloseHelp => {
                self.help = false;
                self.help_scroll = 0;
            }
            MouseAction::Scroll(pane, lines) => return self.wheel(pane, lines),
            // Neither the help nor the picker is wider than its box.
            MouseAction::ScrollSideways(Pane::Help | Pane::Picker, _) => {}
            // What the shown screen's `click` and `pane_at` gave.
            MouseAction::Instance(_)
            | MouseAction::TuneField(_)
            | MouseAction::TuneRow(_)
            | MouseAction::HeatCell(..)
            | MouseAction::ScrollSideways(..) => {
                return with_component!(self.screen, S => S::on_mouse(self, a))
            }
        }
        vec![]
    }

    /// The wheel over `pane`: lists and texts move as by the arrow keys, the heatmap by rows,
    /// the table's pick by one row a notch (it lists twenty at most).
    fn wheel(&mut self, pane: Pane, lines: i32) -> Vec<Cmd> {
        if !matches!(pane, Pane::Help | Pane::Picker | Pane::Screen) {
            // A pane of the screen's own (the Tune screen's form, heatmap and table).
            return with_component!(self.screen, S => S::wheel(self, pane, lines));
        }
        let action = if lines > 0 { Action::Down } else { Action::Up };
        let mut cmds = Vec::new();
        for _ in 0..wheel_steps(lines) {
            match pane {
                Pane::Help => self.scroll_help(action),
                Pane::Picker => cmds.extend(self.on_picker_action(action)),
                _ => cmds.extend(self.on_action(action)),
            }
        }
        cmds
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
