//! The Descriptor screen (`2`): the selected instance as `inspect` shows it, or the marked and
//! selected instances compared as `rr-tui diff A.json B.json` compares them (field by field, or
//! line by line with `d`). Its state is the inspections workers made, the comparison kept for
//! the pair shown, the view chosen and how far it is scrolled; the mark and the names shown are
//! the `App`'s (the instance list shows and sets them too).

pub mod content;
mod draw;

use std::collections::{HashMap, HashSet};

use ratatui::layout::Rect;
use ratatui::Frame;
use rr_format::inspect::Inspection;

use super::{Component, DrawContext};
use crate::tui::app::{App, Cmd, Msg, Work};
use crate::tui::keymap::Action;
use content::CompareCache;

#[derive(Default)]
pub struct DescriptorScreen {
    /// The descriptors inspected on a worker, by instance (the selected and the marked ones).
    pub inspections: HashMap<usize, Result<Box<Inspection>, String>>,
    /// Inspections asked of a worker and not back yet.
    pub inspecting: HashSet<usize>,
    /// The marked and selected instances compared, while they stay so.
    pub compared: CompareCache,
    /// The marked and selected instances line by line (`d`), as `rr-tui diff A.json B.json`
    /// prints them, instead of field by field.
    pub text_diff: bool,
    /// The first line on screen.
    pub scroll: usize,
}

impl DescriptorScreen {
    /// Ask a worker to inspect the selected (and the marked) instance, once each.
    pub fn inspect_selection(app: &mut App) -> Vec<Cmd> {
        let mut cmds = Vec::new();
        for i in [app.current(), app.mark].into_iter().flatten() {
            let d = &mut app.descriptor;
            if !d.inspections.contains_key(&i) && d.inspecting.insert(i) {
                let path = app.rows[i].json_path.clone();
                cmds.push(Cmd::Work(Work::new(move || Msg::Inspected {
                    instance: i,
                    result: Inspection::of(&path)
                        .map(Box::new)
                        .map_err(|e| e.to_string()),
                })));
            }
        }
        cmds
    }

    /// A worker's inspection of `instance` came back.
    pub fn inspected(&mut self, instance: usize, result: Result<Box<Inspection>, String>) {
        self.inspecting.remove(&instance);
        self.inspections.insert(instance, result);
        self.compared.clear();
    }

    /// An inspection made, if it was and succeeded.
    fn inspection(&self, i: usize) -> Option<&Inspection> {
        match self.inspections.get(&i) {
            Some(Ok(ins)) => Some(ins),
            _ => None,
        }
    }

    /// The number of content lines of the screen (to keep its bottom on screen).
    pub fn lines(&self, app: &App) -> usize {
        let Some(cur) = app.current() else { return 0 };
        match app.mark.filter(|&m| m != cur) {
            Some(m) => match (self.inspection(m), self.inspection(cur)) {
                (Some(a), Some(b)) => {
                    let compared = self.compared.get((m, cur), || content::compare(a, b));
                    match self.text_diff {
                        true => compared.line_view_len(),
                        false => 1 + compared.len(),
                    }
                }
                _ => 1,
            },
            None => match self.inspection(cur) {
                Some(ins) => {
                    content::inspect_lines(ins, app.width as usize).len()
                        + usize::from(app.raw_names)
                }
                None => 1,
            },
        }
    }

    /// `d`: the marked and selected instances line by line, or field by field again.
    fn toggle_text_diff(app: &mut App) {
        if app.mark.is_none() || app.mark == app.current() {
            app.set_status(
                "d compares the marked instance with the selected one line by line: mark one with m, then select another",
                true,
            );
            return;
        }
        let d = &mut app.descriptor;
        d.text_diff = !d.text_diff;
        d.scroll = 0;
        let text = match d.text_diff {
            true => "line by line: the decoded descriptors as `rr-tui diff A.json B.json` prints them (d: field by field)",
            false => "field by field (d: line by line)",
        };
        app.set_status(text, false);
    }

    /// The moving keys scroll the text, never past its last line.
    fn scroll(app: &mut App, a: Action) {
        let page = app.page();
        let last = app
            .descriptor
            .lines(app)
            .saturating_sub(app.content_lines());
        let d = &mut app.descriptor;
        d.scroll = match a {
            Action::Top => 0,
            Action::Bottom => last,
            Action::Up => d.scroll.saturating_sub(1),
            Action::Down => d.scroll.saturating_add(1),
            Action::PageUp => d.scroll.saturating_sub(page),
            Action::PageDown => d.scroll.saturating_add(page),
            _ => d.scroll,
        }
        .min(last);
    }
}

impl Component for DescriptorScreen {
    fn draw(&self, cx: &DrawContext, f: &mut Frame, area: Rect) {
        draw::draw(self, cx.app, cx.theme, f, area);
    }

    /// The mark and the names (as on the instance list), the line view, and scrolling.
    fn on_action(app: &mut App, a: Action) -> Vec<Cmd> {
        match a {
            Action::Mark => return app.toggle_mark(),
            Action::RawNames => app.toggle_raw_names(),
            Action::TextDiff => Self::toggle_text_diff(app),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => Self::scroll(app, a),
            _ => {}
        }
        vec![]
    }

    fn shown(app: &mut App) -> Vec<Cmd> {
        app.descriptor.scroll = 0;
        Self::inspect_selection(app)
    }

    fn selection_moved(app: &mut App) -> Vec<Cmd> {
        Self::inspect_selection(app)
    }
}
