//! The prompt line's keys and what each prompt's text does when Enter applies it: the filter,
//! the snapshot screen's offset, search and type, and the replay settings (each refused with
//! why, the prompt staying open, when its text cannot be used).

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::prompt::{Edit, Prompt, PromptKind};
use super::screens::{Component, InstancesScreen, SnapshotsScreen};
use super::{dim3, App, Cmd};
use rr_engine::diff::Comparison;

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
                        if kind == PromptKind::Search {
                            return SnapshotsScreen::prompt_closed(self, kind);
                        }
                        if !self.asked_candidates.is_empty() {
                            let specs = std::mem::take(&mut self.asked_candidates);
                            return self.start_leaderboard(specs);
                        }
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

    /// Use a prompt's text, or say why it cannot be used (the prompt then stays open).
    fn apply_prompt(&mut self, kind: PromptKind, text: &str) -> Result<String, String> {
        match kind {
            PromptKind::Filter => InstancesScreen::apply_prompt(self, kind, text),
            PromptKind::Goto | PromptKind::Search | PromptKind::Type => {
                SnapshotsScreen::apply_prompt(self, kind, text)
            }
            PromptKind::Repetitions => {
                let n = crate::cli::parse_repetitions(text)?;
                self.settings.repetitions = n;
                Ok(format!("replays run {n} repetition(s)"))
            }
            PromptKind::Grid | PromptKind::Block => self.apply_geometry_prompt(kind, text),
            PromptKind::Image => self.apply_image_prompt(text),
            PromptKind::Candidate => self.apply_candidate_prompt(text),
            PromptKind::BaseAddress => {
                let supplied = &mut self.settings.supplied;
                supplied.base_address = match text {
                    "" => None,
                    t => Some(crate::cli::parse_address(t)?),
                };
                Ok(match supplied.base_address {
                    Some(a) => format!("LLVM 16–17 records replay with their memory at {a:#x}"),
                    None => "LLVM 16–17 records replay where their start is inferred".into(),
                })
            }
            PromptKind::Tolerance => {
                let value = match text {
                    "" => None,
                    t => Some(Comparison::parse_spec(t)?),
                };
                self.settings.tolerance = value;
                Ok(match value {
                    Some(c) => format!("v verifies with tolerance {}", c.describe()),
                    None => "v verifies byte for byte".to_string(),
                })
            }
        }
    }

    /// The grid or block override (`kind`), checked against the hardware limits replay
    /// applies, with the other of the two as it stands.
    fn apply_geometry_prompt(&mut self, kind: PromptKind, text: &str) -> Result<String, String> {
        let what = if kind == PromptKind::Grid {
            "grid"
        } else {
            "block"
        };
        let value = match text {
            "" => None,
            t => Some(crate::cli::parse_dim3(t)?),
        };
        // The hardware limits replay applies, checked as the value is given.
        if let Some(v) = value {
            let (grid, block) = match kind {
                PromptKind::Grid => (v, self.settings.block.unwrap_or([1, 1, 1])),
                _ => (self.settings.grid.unwrap_or([1, 1, 1]), v),
            };
            if let Some(why) = rr_format::limits::geometry_problem(grid, block) {
                return Err(why);
            }
        }
        if kind == PromptKind::Grid {
            self.settings.grid = value;
        } else {
            self.settings.block = value;
        }
        // The old X,Y,Z is taken as `replay --grid` takes it, with the same advice.
        let old_spelling = if text.contains(',') {
            " (X,Y,Z is deprecated: write XxYxZ)"
        } else {
            ""
        };
        Ok(match value {
            Some(v) => format!("{what} override {}{old_spelling}", dim3(v)),
            None => format!("{what} as recorded"),
        })
    }

    /// `I`'s prompt: the kernel's image file for records that lack it (`--image`).
    fn apply_image_prompt(&mut self, text: &str) -> Result<String, String> {
        let supplied = &mut self.settings.supplied;
        supplied.image = match text {
            "" => None,
            // A regular file (the replay reads it by the same rule later).
            t => {
                rr_format::fsio::regular_metadata(std::path::Path::new(t))
                    .map_err(|e| e.to_string())?;
                Some(std::path::PathBuf::from(t))
            }
        };
        Ok(match &supplied.image {
            Some(p) => format!(
                "replays and sweeps load {}",
                rr_format::text::visible_path(p)
            ),
            None => "replays load the recorded image".into(),
        })
    }

    /// `C`'s prompt: one candidate for A/B replays, or several for a leaderboard.
    fn apply_candidate_prompt(&mut self, text: &str) -> Result<String, String> {
        let mut specs = super::leaderboard::parse_candidates(text)?;
        if specs.len() > 1 {
            for c in &specs {
                rr_format::fsio::regular_metadata(&c.path).map_err(|e| e.to_string())?;
            }
            // Started when the prompt closes (`on_prompt_key`).
            self.asked_candidates = std::mem::take(&mut specs);
            return Ok("ranking the candidates on every instance of the kernel…".into());
        }
        let spec = specs.pop();
        // A regular file; the replay's own checks read it (on a worker) later.
        if let Some(c) = &spec {
            rr_format::fsio::regular_metadata(&c.path).map_err(|e| e.to_string())?;
        }
        self.settings.candidate = spec;
        Ok(match &self.settings.candidate {
            Some(c) => format!(
                "r and v check and replay A/B against {}",
                rr_format::text::visible_path(&c.path)
            ),
            None => "replays run the recorded kernel alone".into(),
        })
    }
}
