//! The Instances screen (`1`): the table of the record's instances, sorted and filtered. Its
//! state is how the list is ordered, filtered and scrolled; the rows themselves, the view they
//! make and the selection are the `App`'s (every screen shows the selected instance).

mod draw;

use ratatui::layout::{Position, Rect};
use ratatui::Frame;

use super::{Component, DrawContext};
use crate::tui::app::framelayout::{first_row, instance_rows};
use crate::tui::app::pointer::{row_at, MouseAction};
use crate::tui::app::prompt::PromptKind;
use crate::tui::app::{App, Cmd, SortKey};
use crate::tui::keymap::Action;

pub struct InstancesScreen {
    /// The first row of the list on screen (`framelayout::first_row` keeps it).
    pub list_top: usize,
    pub sort: SortKey,
    pub descending: bool,
    /// What the rows' kernels or files must contain to be listed (`/`; applied as it is typed).
    pub filter: String,
}

impl Default for InstancesScreen {
    fn default() -> InstancesScreen {
        InstancesScreen {
            list_top: 0,
            sort: SortKey::Report,
            descending: false,
            filter: String::new(),
        }
    }
}

impl InstancesScreen {
    /// The filter prompt's text as it is typed (and cleared by Esc): the list follows it.
    pub fn filter_typed(app: &mut App, text: String) {
        app.instances.filter = text;
        app.refresh_view();
    }

    /// Move the selection down the list (up when `delta` is negative), within it.
    pub fn move_selection(app: &mut App, delta: isize) -> Vec<Cmd> {
        if app.view.is_empty() {
            return vec![];
        }
        let n = app.view.len() as isize;
        app.selected = (app.selected as isize + delta).clamp(0, n - 1) as usize;
        app.selection_moved()
    }

    fn sort_by_next(app: &mut App) {
        let s = &mut app.instances;
        s.sort = s.sort.next();
        app.refresh_view();
        let label = app.instances.sort.label();
        app.set_status(format!("sorted by {label}"), false);
    }

    fn reverse(app: &mut App) {
        let s = &mut app.instances;
        s.descending = !s.descending;
        app.refresh_view();
        let order = match app.instances.descending {
            true => "descending",
            false => "ascending",
        };
        let label = app.instances.sort.label();
        app.set_status(format!("sorted by {label}, {order}"), false);
    }

    /// What the filter (already applied as it was typed) leaves listed.
    fn filter_applied(app: &App, text: &str) -> String {
        if text.is_empty() {
            "filter cleared".to_string()
        } else {
            format!(
                "{} of {} instance(s) match {text:?}",
                app.view.len(),
                app.rows.len()
            )
        }
    }
}

impl Component for InstancesScreen {
    fn draw(&self, cx: &DrawContext, f: &mut Frame, area: Rect) {
        draw::draw(cx.app, cx.theme, f, area);
    }

    /// The list's filter and order, the names shown, the marks that pick instances for the
    /// descriptor comparison and for sweeps one after the other; the moving keys move the
    /// selection.
    fn on_action(app: &mut App, a: Action) -> Vec<Cmd> {
        let page = app.page() as isize;
        match a {
            Action::Filter => {
                let f = app.instances.filter.clone();
                app.open_prompt(PromptKind::Filter, f);
            }
            Action::Sort => Self::sort_by_next(app),
            Action::ReverseSort => Self::reverse(app),
            Action::RawNames => app.toggle_raw_names(),
            Action::Mark => return app.toggle_mark(),
            Action::MarkSweep => app.toggle_sweep_mark(),
            Action::Top => return Self::move_selection(app, -(app.selected as isize)),
            Action::Bottom => return Self::move_selection(app, app.view.len() as isize),
            Action::Up => return Self::move_selection(app, -1),
            Action::Down => return Self::move_selection(app, 1),
            Action::PageUp => return Self::move_selection(app, -page),
            Action::PageDown => return Self::move_selection(app, page),
            _ => {}
        }
        vec![]
    }

    fn apply_prompt(app: &mut App, _kind: PromptKind, text: &str) -> Result<String, String> {
        Ok(Self::filter_applied(app, text))
    }

    /// A click on a row of the list, scrolled as drawn.
    fn click(app: &App, main: Rect, at: Position) -> Option<MouseAction> {
        let rows = instance_rows(app, main);
        let (len, visible) = (app.view.len(), rows.height as usize);
        let first = first_row(app.instances.list_top, app.selected, len, visible);
        row_at(rows, first, len, at).map(MouseAction::Instance)
    }

    /// A clicked row is selected, as the moving keys would select it.
    fn on_mouse(app: &mut App, a: MouseAction) -> Vec<Cmd> {
        match a {
            MouseAction::Instance(i) => {
                Self::move_selection(app, i as isize - app.selected as isize)
            }
            _ => vec![],
        }
    }
}
