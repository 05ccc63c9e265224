//! The Snapshots screen (`3`, Enter): the recorded input and output of the selected instance,
//! or its recorded output and a replay's, side by side. Its state is the view of the pair open
//! (the mapped files, their difference index, where the view is, its element type, its search)
//! and the pair asked of a worker; the keys jump between differences, go to an offset, change
//! the pair, the type and the byte order, search and squeeze equal rows.

mod draw;
mod open;
mod pending;
pub mod rowlayout;
pub mod search;
pub mod view;

use ratatui::layout::Rect;
use ratatui::Frame;
use rr_engine::diff::job::IndexEvent;
use rr_engine::diff::DType;

use super::{Component, DrawContext};
use crate::tui::app::prompt::PromptKind;
use crate::tui::app::{App, Cmd};
use crate::tui::keymap::Action;
pub use pending::Deferred;
use view::{Pair, SnapView};

/// Said by every snapshot action while no snapshots are open.
pub const NO_SNAPSHOTS: &str = "no snapshots open: select an instance and press Enter";

#[derive(Default)]
pub struct SnapshotsScreen {
    /// The pair open: both snapshots mapped, their index, the window on them.
    pub view: Option<SnapView>,
    /// The pair asked of a worker and not back yet (instance, pair).
    pub opening: Option<(usize, Pair)>,
    /// The number of the last index or search job started: events of the others are dropped.
    pub next_job: u64,
    /// The last key (or prompt) that needs the snapshots being opened, applied when they are.
    pub pending: Option<Deferred>,
}

impl SnapshotsScreen {
    /// Lines of hex rows on the screen: the content less the title's second line (when it
    /// wraps), the column header and the note when the two files differ in length.
    pub fn rows(&self, app: &App) -> usize {
        let Some(s) = &self.view else {
            return app.content_lines().saturating_sub(1).max(1);
        };
        let note = usize::from(s.a.len() != s.b.len());
        let title = s
            .title_lines(&app.rows[s.instance].json_file, app.width)
            .len()
            - 1;
        app.content_lines().saturating_sub(title + 1 + note).max(1)
    }

    /// Fit the view's rows to the terminal width and its element type.
    pub fn relayout(&mut self, width: u16) {
        if let Some(s) = self.view.as_mut() {
            let digits = rowlayout::offset_digits(s.len());
            s.set_row(rowlayout::plan(width, s.dtype, digits).bytes);
        }
    }

    /// An event of the index job of the view.
    pub fn on_index_event(app: &mut App, job: u64, event: IndexEvent) {
        let Some(s) = app.snapshots.view.as_mut().filter(|s| s.job == job) else {
            return;
        };
        let failed = matches!(event, IndexEvent::Done(Err(_)));
        match event {
            IndexEvent::Progress {
                scanned,
                new_ranges,
                differing_bytes,
                ..
            } => {
                s.index.absorb(new_ranges, differing_bytes);
                s.scanned = scanned;
            }
            IndexEvent::Done(Ok(out)) => {
                s.index = out.index;
                s.scanned = out.compared;
                s.done = true;
            }
            IndexEvent::Done(Err(e)) => {
                s.done = true;
                s.error = Some(e.clone());
                app.set_status(e, true);
            }
        }
        if !failed {
            Self::after_index(app);
        }
    }

    /// A snapshot of the view changed under its index: the view says it is stale.
    pub fn on_changed(app: &mut App) {
        if let Some(s) = app.snapshots.view.as_mut() {
            if !s.stale {
                s.stale = true;
                let msg = "a snapshot was truncated or rewritten after it was indexed: this view is stale (press Enter to reopen)";
                s.error = Some(msg.into());
                app.set_status(msg, true);
            }
        }
    }

    /// `p`: the other pair (the one being opened counts as the current one: keys can outrun
    /// the worker).
    fn cycle_pair(app: &mut App) -> Vec<Cmd> {
        let s = &app.snapshots;
        let current = s
            .opening
            .map(|(_, p)| p)
            .or(s.view.as_ref().map(|v| v.pair));
        let next = match current {
            Some(Pair::InputOutput) => Pair::OutputReplay,
            _ => Pair::InputOutput,
        };
        Self::open(app, next)
    }

    /// `z`: squeeze runs of equal rows, or show every row.
    fn toggle_squeeze(app: &mut App) {
        let Some(s) = app.snapshots.view.as_mut() else {
            app.set_status(NO_SNAPSHOTS, true);
            return;
        };
        s.squeeze = !s.squeeze;
        let text = if s.squeeze {
            "equal rows squeezed"
        } else {
            "every row shown"
        };
        app.set_status(text, false);
    }

    fn jump_to_difference(app: &mut App, forward: bool) {
        let Some(s) = app.snapshots.view.as_mut() else {
            app.set_status(NO_SNAPSHOTS, true);
            return;
        };
        let found = if forward {
            s.next_diff()
        } else {
            s.prev_diff()
        };
        let text = match (found, s.cursor) {
            (true, Some(at)) => {
                let what = s.dtype.map_or("differing bytes".to_string(), |t| {
                    format!("a differing {}", t.name())
                });
                let (k, n) = s.difference_number(at);
                let so_far = if s.done { "" } else { " so far" };
                format!("{what} at offset {at:#x} · differing range {k} of {n}{so_far}")
            }
            _ if s.done => "no more differences".to_string(),
            _ => "no more differences found yet (indexing)".to_string(),
        };
        app.set_status(text, false);
    }

    /// The next (or previous) element type: hex, u8 … f64, then hex again.
    fn cycle_type(app: &mut App, forward: bool) {
        let Some(s) = app.snapshots.view.as_ref() else {
            app.set_status(NO_SNAPSHOTS, true);
            return;
        };
        // Hex is the place before the first type and after the last.
        let types: Vec<Option<DType>> = std::iter::once(None).chain(DType::ALL.map(Some)).collect();
        let at = types.iter().position(|&t| t == s.dtype).unwrap_or(0);
        let step = if forward { 1 } else { types.len() - 1 };
        let text = Self::set_type(app, types[(at + step) % types.len()]);
        app.set_status(text, false);
    }

    /// Show the open snapshots as `dtype` (hex when `None`); what the view now is, in words.
    fn set_type(app: &mut App, dtype: Option<DType>) -> String {
        let Some(s) = app.snapshots.view.as_mut() else {
            return NO_SNAPSHOTS.to_string();
        };
        s.dtype = dtype;
        let text = match s.dtype {
            None => "hex view".to_string(),
            Some(d) if d.size() == 1 => format!("typed view: {}", d.name()),
            Some(d) => format!(
                "typed view: {}, {} endian (e toggles)",
                d.name(),
                if s.big_endian { "big" } else { "little" }
            ),
        };
        app.relayout();
        text
    }

    fn toggle_endian(app: &mut App) {
        let Some(s) = app.snapshots.view.as_mut() else {
            app.set_status(NO_SNAPSHOTS, true);
            return;
        };
        s.big_endian = !s.big_endian;
        let order = if s.big_endian { "big" } else { "little" };
        let text = match s.dtype {
            Some(d) if d.size() > 1 => format!("{} values read {order} endian", d.name()),
            _ => format!("{order} endian (it applies to typed views of 2 bytes or more: t)"),
        };
        app.set_status(text, false);
    }

    /// A prompt that needs open snapshots (`:`, `/`, `t`), or why it cannot open.
    fn open_prompt(app: &mut App, kind: PromptKind, text: String) {
        match app.snapshots.view.is_some() || Self::loading(app) {
            true => app.open_prompt(kind, text),
            false => app.set_status(NO_SNAPSHOTS, true),
        }
    }

    /// The moving keys scroll the rows.
    fn scroll(app: &mut App, a: Action) {
        let page = app.page();
        let rows = app.snapshots.rows(app);
        let Some(s) = app.snapshots.view.as_mut() else {
            return;
        };
        match a {
            Action::Top => s.to_top(),
            Action::Bottom => s.to_bottom(rows),
            Action::Up => s.scroll_up(1),
            Action::Down => s.scroll_down(1, rows),
            Action::PageUp => s.scroll_up(page),
            Action::PageDown => s.scroll_down(page, rows),
            _ => {}
        }
    }

    /// `:`'s prompt: an offset, a device address or an argument.
    fn go_to(app: &mut App, text: &str) -> Result<String, String> {
        let s = app.snapshots.view.as_mut().ok_or(NO_SNAPSHOTS)?;
        if text.is_empty() {
            return Err("type an offset, a device address (0x…) or argN".into());
        }
        s.goto(text)?;
        Ok(format!("at offset {:#x}", s.top))
    }

    /// `t`'s prompt: an element type by name, or hex.
    fn apply_type_prompt(app: &mut App, text: &str) -> Result<String, String> {
        let dtype = match text.trim().to_ascii_lowercase().as_str() {
            "hex" | "" => None,
            name => Some(DType::parse(name).ok_or_else(|| {
                format!(
                    "unknown type {name:?}: hex, {}",
                    DType::ALL.map(DType::name).join(", ")
                )
            })?),
        };
        app.snapshots.view.as_ref().ok_or(NO_SNAPSHOTS)?;
        Ok(Self::set_type(app, dtype))
    }
}

impl Component for SnapshotsScreen {
    fn draw(&self, cx: &DrawContext, f: &mut Frame, area: Rect) {
        draw::draw(self, cx.app, cx.theme, f, area);
    }

    /// Differences, offsets, the pair shown, element types and byte order, search, squeezing;
    /// the moving keys scroll.
    fn on_action(app: &mut App, a: Action) -> Vec<Cmd> {
        if Self::loading(app) && Self::needs_view(a) {
            Self::defer_key(app, a);
            return vec![];
        }
        match a {
            Action::NextDiff | Action::PrevDiff => {
                Self::jump_to_difference(app, a == Action::NextDiff)
            }
            Action::Goto => Self::open_prompt(app, PromptKind::Goto, String::new()),
            Action::CyclePair => return Self::cycle_pair(app),
            Action::CycleType => Self::cycle_type(app, true),
            Action::CycleTypeBack => Self::cycle_type(app, false),
            Action::Search => {
                let again = app.snapshots.view.as_ref().and_then(|s| s.search.as_ref());
                let text = again.map(|x| x.text.clone()).unwrap_or_default();
                Self::open_prompt(app, PromptKind::Search, text);
            }
            Action::SearchNext => return Self::search_again(app, true),
            Action::SearchPrev => return Self::search_again(app, false),
            Action::PickType => Self::open_prompt(app, PromptKind::Type, String::new()),
            Action::Endian => Self::toggle_endian(app),
            Action::Squeeze => Self::toggle_squeeze(app),
            _ => Self::scroll(app, a),
        }
        vec![]
    }

    /// The input and output of the selection, unless they are open already.
    fn shown(app: &mut App) -> Vec<Cmd> {
        let cur = app.current();
        if cur.is_some() && app.snapshots.view.as_ref().map(|s| s.instance) != cur {
            return Self::open(app, Pair::InputOutput);
        }
        vec![]
    }

    fn apply_prompt(app: &mut App, kind: PromptKind, text: &str) -> Result<String, String> {
        if Self::loading(app) {
            return Ok(Self::defer_prompt(app, kind, text));
        }
        match kind {
            PromptKind::Goto => Self::go_to(app, text),
            PromptKind::Search => Self::set_search(app, text),
            _ => Self::apply_type_prompt(app, text),
        }
    }

    /// A search's text applied: it starts from the cursor on.
    fn prompt_closed(app: &mut App, kind: PromptKind) -> Vec<Cmd> {
        if Self::loading(app) {
            return vec![]; // the search starts with the snapshots (`apply_pending`)
        }
        match kind {
            PromptKind::Search => Self::search_again(app, true),
            _ => vec![],
        }
    }
}
