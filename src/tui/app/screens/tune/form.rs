//! The tuning screen's form: the sweep's settings ([`TuneSettings`]: every field checked by the
//! parser `rr-tui tune` itself uses, on every key, so a typo shows its reason while it is typed,
//! not after the sweep started; a field keeps only text that parses), the field under the
//! cursor and the one being edited. The form makes the sweep's job directly
//! ([`TuneSettings::job`]), which the explorer hands its tune process as it is.

use std::ops::{Deref, DerefMut};

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

/// The form reads and sets its values as its settings do: the screen, the config file and the
/// tests name a field (`form.block`, `form.job(…)`) without spelling out where the values live.
impl Deref for TuneForm {
    type Target = TuneSettings;
    fn deref(&self) -> &TuneSettings {
        &self.settings
    }
}

impl DerefMut for TuneForm {
    fn deref_mut(&mut self) -> &mut TuneSettings {
        &mut self.settings
    }
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
        match f {
            Field::Strategy => {
                self.strategy = match self.strategy {
                    StrategyKind::Exhaustive => StrategyKind::Random,
                    StrategyKind::Random => StrategyKind::Annealing,
                    StrategyKind::Annealing => StrategyKind::Tpe,
                    StrategyKind::Tpe => StrategyKind::Exhaustive,
                };
                Some(format!("strategy {}", self.strategy.name()))
            }
            Field::Limits => {
                self.ignore_limits = !self.ignore_limits;
                Some(if self.ignore_limits {
                    "limits ignored: configurations outside the recorded TeamsLimits/ThreadsLimits are tried too".into()
                } else {
                    "limits: the recorded TeamsLimits/ThreadsLimits bound the axes".into()
                })
            }
            Field::Objective => {
                // time → time and energy → energy → edp → time.
                (self.objective, self.energy) = match (self.objective, self.energy) {
                    (Objective::Time, false) => (Objective::Time, true),
                    (Objective::Time, true) => (Objective::Energy, true),
                    (Objective::Energy, _) => (Objective::Edp, true),
                    (Objective::Edp, _) => (Objective::Time, false),
                };
                Some(match (self.objective, self.energy) {
                    (Objective::Time, false) => "objective time: the fastest verified configuration wins".into(),
                    (Objective::Time, true) => "objective time, energy measured too (NVML, ~1 s per configuration): the Pareto front of time against energy".into(),
                    (o, _) => format!("objective {}: energy measured with NVML (~1 s per configuration); the best by {} wins", o.name(), o.name()),
                })
            }
            Field::Cache => {
                self.cold = !self.cold;
                Some(if self.cold {
                    "cold: the L2 cache is flushed before each sample".into()
                } else {
                    "hot: caches stay warm between samples".into()
                })
            }
            _ => {
                let text = self.text(f);
                self.editing = Some(FieldEdit {
                    field: f,
                    check: self.check(f, &text),
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
                self.set(field, text);
                self.editing = None;
                EditOutcome::Applied(field)
            }
            _ => {
                if e.editor.handle(k) == Edit::Changed {
                    let (field, text) = (e.field, e.editor.text());
                    let check = self.check(field, &text);
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
