//! The tuning screen's form: the sweep's settings ([`TuneSettings`]: every field checked by the
//! parser `rr-tui tune` itself uses, on every key, so a typo shows its reason while it is typed,
//! not after the sweep started; a field keeps only text that parses), the field under the
//! cursor and the one being edited. The form makes the sweep's job directly
//! ([`TuneSettings::job`]), which the explorer hands its tune process as it is.

use ratatui::crossterm::event::KeyEvent;
use rr_tune::{Objective, StrategyKind};

pub use crate::settings::tune::{Field, TuneSettings};
use crate::tui::app::prompt::{Edit, LineEditor};

/// A field being typed: its editor and what the text means so far.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldEdit {
    pub field: Field,
    pub editor: LineEditor,
    pub check: Result<String, String>,
}

/// What a key did to the form while a field is edited.
#[derive(Debug, Clone, PartialEq)]
pub enum EditOutcome {
    /// Still editing.
    Editing,
    /// Enter with a value that parses: kept.
    Applied(Field),
    /// Enter with a value that does not parse: still editing, with the reason.
    Refused,
    /// Esc: the field keeps its old value.
    Cancelled,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TuneForm {
    /// What the form says: the values the config file's `[tune]` keys set too.
    pub settings: TuneSettings,
    /// The field under the cursor (index into [`Field::ALL`]).
    pub cursor: usize,
    pub editing: Option<FieldEdit>,
}

impl TuneForm {
    pub fn field(&self) -> Field {
        Field::ALL[self.cursor.min(Field::ALL.len() - 1)]
    }

    /// Move the cursor by `delta` fields (clamped).
    pub fn move_cursor(&mut self, delta: isize) {
        let last = Field::ALL.len() as isize - 1;
        self.cursor = (self.cursor as isize + delta).clamp(0, last) as usize;
    }

    /// Enter on the field under the cursor: a choice moves to its next value (returned), a
    /// text field opens for editing (None).
    pub fn activate(&mut self) -> Option<String> {
        let f = self.field();
        let s = &mut self.settings;
        match f {
            Field::Strategy => {
                s.strategy = match s.strategy {
                    StrategyKind::Exhaustive => StrategyKind::Random,
                    StrategyKind::Random => StrategyKind::Annealing,
                    StrategyKind::Annealing => StrategyKind::Tpe,
                    StrategyKind::Tpe => StrategyKind::Exhaustive,
                };
                Some(format!("strategy {}", s.strategy.name()))
            }
            Field::Limits => {
                s.ignore_limits = !s.ignore_limits;
                Some(if s.ignore_limits {
                    "limits ignored: configurations outside the recorded TeamsLimits/ThreadsLimits are tried too".into()
                } else {
                    "limits: the recorded TeamsLimits/ThreadsLimits bound the axes".into()
                })
            }
            Field::Objective => {
                // time → time and energy → energy → edp → time.
                (s.objective, s.energy) = match (s.objective, s.energy) {
                    (Objective::Time, false) => (Objective::Time, true),
                    (Objective::Time, true) => (Objective::Energy, true),
                    (Objective::Energy, _) => (Objective::Edp, true),
                    (Objective::Edp, _) => (Objective::Time, false),
                };
                Some(match (s.objective, s.energy) {
                    (Objective::Time, false) => "objective time: the fastest verified configuration wins".into(),
                    (Objective::Time, true) => "objective time, energy measured too (NVML, ~1 s per configuration): the Pareto front of time against energy".into(),
                    (o, _) => format!("objective {}: energy measured with NVML (~1 s per configuration); the best by {} wins", o.name(), o.name()),
                })
            }
            Field::Cache => {
                s.cold = !s.cold;
                Some(if s.cold {
                    "cold: the L2 cache is flushed before each sample".into()
                } else {
                    "hot: caches stay warm between samples".into()
                })
            }
            _ => {
                let text = s.text(f);
                self.editing = Some(FieldEdit {
                    field: f,
                    check: s.check(f, &text),
                    editor: LineEditor::new(text),
                });
                None
            }
        }
    }

    /// A key while a field is edited: readline editing, checked on every change.
    pub fn edit_key(&mut self, k: &KeyEvent) -> EditOutcome {
        use ratatui::crossterm::event::KeyCode;
        let Some(e) = self.editing.as_mut() else {
            return EditOutcome::Cancelled;
        };
        match k.code {
            KeyCode::Esc => {
                self.editing = None;
                EditOutcome::Cancelled
            }
            KeyCode::Enter => {
                if e.check.is_err() {
                    return EditOutcome::Refused;
                }
                let (field, text) = (e.field, e.editor.text().trim().to_string());
                self.settings.set(field, text);
                self.editing = None;
                EditOutcome::Applied(field)
            }
            _ => {
                if e.editor.handle(k) == Edit::Changed {
                    let (field, text) = (e.field, e.editor.text());
                    let check = self.settings.check(field, &text);
                    if let Some(e) = self.editing.as_mut() {
                        e.check = check;
                    }
                }
                EditOutcome::Editing
            }
        }
    }
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
