//! The prompt line's keys. The screen that opened a prompt says what its text does when Enter
//! applies it (the Instances screen's filter, the Snapshots screen's offset, search and type,
//! the Replay screen's settings), each refused with why, the prompt staying open, when its text
//! cannot be used.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::prompt::{Edit, Prompt, PromptKind};
use super::screens::{Component, InstancesScreen, ReplayScreen, SnapshotsScreen};
use super::{App, Cmd, Screen};

impl App {
    pub(super) fn on_prompt_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let Some(prompt) = self.prompt.as_mut() else {
            return vec![];
        };
        match k.code {
            KeyCode::Esc => {
                if prompt.kind == PromptKind::Filter {
                    InstancesScreen::filter_typed(self, String::new());
                }
                self.prompt = None;
                vec![]
            }
            KeyCode::Enter => {
                let text = prompt.text().trim().to_string();
                let kind = prompt.kind;

                match self.apply_prompt(kind, &text) {
                    Ok(done) => {
                        self.prompt = None;
                        self.set_status(done, false);
                        return self.prompt_closed(kind);
                    }
                    Err(why) => {
                        if let Some(p) = self.prompt.as_mut() {
                            p.error = Some(rr_format::text::visible(&why).into_owned());
                        }
                    }
                }
                vec![]
            }
            _ => {
                if prompt.editor.handle(&k) == Edit::Changed {
                    prompt.error = None;
                    if prompt.kind == PromptKind::Filter {
                        let text = prompt.text();
                        InstancesScreen::filter_typed(self, text);
                    }
                }
                vec![]
            }
        }
    }

    pub(super) fn open_prompt(&mut self, kind: PromptKind, text: String) {
        self.prompt = Some(Prompt::new(kind, text));
    }

    /// Use a prompt's text, or say why it cannot be used (the prompt then stays open): the
    /// screen that opened it applies it.
    fn apply_prompt(&mut self, kind: PromptKind, text: &str) -> Result<String, String> {
        match prompt_screen(kind) {
            Screen::Instances => InstancesScreen::apply_prompt(self, kind, text),
            Screen::Snapshots => SnapshotsScreen::apply_prompt(self, kind, text),
            _ => ReplayScreen::apply_prompt(self, kind, text),
        }
    }

    /// The prompt closed on Enter: the work its screen starts for it (a search, a leaderboard).
    fn prompt_closed(&mut self, kind: PromptKind) -> Vec<Cmd> {
        match prompt_screen(kind) {
            Screen::Instances => InstancesScreen::prompt_closed(self, kind),
            Screen::Snapshots => SnapshotsScreen::prompt_closed(self, kind),
            _ => ReplayScreen::prompt_closed(self, kind),
        }
    }
}

/// The screen whose component opens the prompt `kind` and applies its text.
fn prompt_screen(kind: PromptKind) -> Screen {
    match kind {
        PromptKind::Filter => Screen::Instances,
        PromptKind::Goto | PromptKind::Search | PromptKind::Type => Screen::Snapshots,
        PromptKind::Repetitions
        | PromptKind::Grid
        | PromptKind::Block
        | PromptKind::Tolerance
        | PromptKind::Image
        | PromptKind::BaseAddress
        | PromptKind::Candidate => Screen::Replay,
    }
}
