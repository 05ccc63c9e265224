//! The snapshot screen's actions: jumping between differences, the offset and pair shown,
//! element types and byte order, search, squeezing equal rows.

use super::prompt::PromptKind;
use super::{App, Cmd, Pair};
use crate::tui::keymap::Action;
use rr_engine::diff::DType;

/// Said by every snapshot action while no snapshots are open.
pub(super) const NO_SNAPSHOTS: &str = "no snapshots open: select an instance and press Enter";

impl App {
    /// The snapshot screen: differences, offsets, the pair shown, element types, search.
    pub(super) fn on_snapshot_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::NextDiff | Action::PrevDiff => self.jump_to_difference(a == Action::NextDiff),
            Action::Goto => {
                if self.snap.is_some() {
                    self.open_prompt(PromptKind::Goto, String::new());
                } else {
                    self.set_status(NO_SNAPSHOTS, true);
                }
            }
            Action::CyclePair => {
                // The pair being opened counts as the current one (keys can outrun the worker).
                let current = self
                    .opening
                    .map(|(_, p)| p)
                    .or(self.snap.as_ref().map(|s| s.pair));
                let next = match current {
                    Some(Pair::InputOutput) => Pair::OutputReplay,
                    _ => Pair::InputOutput,
                };
                return self.open_snapshots(next);
            }
            Action::CycleType => self.cycle_type(true),
            Action::CycleTypeBack => self.cycle_type(false),
            Action::Search => match self.snap.as_ref() {
                Some(s) => {
                    let again = s.search.as_ref().map(|x| x.text.clone());
                    self.open_prompt(PromptKind::Search, again.unwrap_or_default());
                }
                None => self.set_status(NO_SNAPSHOTS, true),
            },
            Action::SearchNext => return self.search_again(true),
            Action::SearchPrev => return self.search_again(false),
            Action::PickType => match self.snap.is_some() {
                true => self.open_prompt(PromptKind::Type, String::new()),
                false => self.set_status(NO_SNAPSHOTS, true),
            },
            Action::Endian => self.toggle_endian(),
            Action::Squeeze => self.toggle_squeeze(),
            _ => {}
        }
        vec![]
    }

    /// `z`: squeeze runs of equal rows, or show every row.
    fn toggle_squeeze(&mut self) {
        let Some(s) = self.snap.as_mut() else {
            self.set_status(NO_SNAPSHOTS, true);
            return;
        };
        s.squeeze = !s.squeeze;
        let text = if s.squeeze {
            "equal rows squeezed"
        } else {
            "every row shown"
        };
        self.set_status(text, false);
    }

    fn jump_to_difference(&mut self, forward: bool) {
        let Some(s) = self.snap.as_mut() else {
            self.set_status(NO_SNAPSHOTS, true);
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
        self.set_status(text, false);
    }

    /// The next (or previous) element type: hex, u8 … f64, then hex again.
    fn cycle_type(&mut self, forward: bool) {
        let Some(s) = self.snap.as_ref() else {
            self.set_status(NO_SNAPSHOTS, true);
            return;
        };
        // Hex is the place before the first type and after the last.
        let types: Vec<Option<DType>> = std::iter::once(None).chain(DType::ALL.map(Some)).collect();
        let at = types.iter().position(|&t| t == s.dtype).unwrap_or(0);
        let step = if forward { 1 } else { types.len() - 1 };
        let text = self.set_type(types[(at + step) % types.len()]);
        self.set_status(text, false);
    }

    /// Show the open snapshots as `dtype` (hex when `None`); what the view now is, in words.
    pub(super) fn set_type(&mut self, dtype: Option<DType>) -> String {
        let Some(s) = self.snap.as_mut() else {
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
        self.relayout();
        text
    }

    fn toggle_endian(&mut self) {
        let Some(s) = self.snap.as_mut() else {
            self.set_status(NO_SNAPSHOTS, true);
            return;
        };
        s.big_endian = !s.big_endian;
        let order = if s.big_endian { "big" } else { "little" };
        let text = match s.dtype {
            Some(d) if d.size() > 1 => format!("{} values read {order} endian", d.name()),
            _ => format!("{order} endian (it applies to typed views of 2 bytes or more: t)"),
        };
        self.set_status(text, false);
    }
}
