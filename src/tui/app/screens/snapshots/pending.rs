//! Keys pressed while the snapshots load. Opening a pair runs on a worker, and keys typed in
//! one burst (`3` then `n`, as the README's tour does) arrive before its answer: the last key
//! that needs the open snapshots is kept and applied when they are there, never refused with
//! "no snapshots open". A prompt (`:`, `/`, `i`) opens at once, so what is typed after it goes
//! into the prompt rather than to the screen; its text is applied on load.

use super::SnapshotsScreen;
use crate::tui::app::prompt::PromptKind;
use crate::tui::app::{App, Cmd};
use crate::tui::keymap::Action;

/// What waits for the snapshots being opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deferred {
    /// A key of the screen (`n`, `N`, `t`, `e`, `z`, `>` …).
    Key(Action),
    /// A prompt applied while loading: its kind and text.
    Prompt(PromptKind, String),
}

/// Said while a key waits for the snapshots.
pub const LOADING: &str = "snapshots still loading…";

impl SnapshotsScreen {
    /// Whether a pair is being opened: keys that need the snapshots wait for it (the one being
    /// opened is the one they are meant for, even when an older pair is still shown).
    pub(super) fn loading(app: &App) -> bool {
        app.snapshots.opening.is_some()
    }

    /// Keys that act on the open snapshots and so wait for them (the prompts `:`, `/`, `i`
    /// open at once; `p` asks for a pair itself; the moving keys have nothing to move yet).
    pub(super) fn needs_view(a: Action) -> bool {
        matches!(
            a,
            Action::NextDiff
                | Action::PrevDiff
                | Action::CycleType
                | Action::CycleTypeBack
                | Action::Endian
                | Action::Squeeze
                | Action::SearchNext
                | Action::SearchPrev
        )
    }

    /// Keep `a` for when the snapshots are open (the last such key wins).
    pub(super) fn defer_key(app: &mut App, a: Action) {
        app.snapshots.pending = Some(Deferred::Key(a));
        let label = crate::tui::keymap::BINDINGS
            .iter()
            .find(|b| b.action == a)
            .map_or("the key", |b| b.label);
        app.set_status(
            format!("{LOADING} {label} applies when they are open"),
            false,
        );
    }

    /// A prompt's text applied while loading: kept for the load.
    pub(super) fn defer_prompt(app: &mut App, kind: PromptKind, text: &str) -> String {
        app.snapshots.pending = Some(Deferred::Prompt(kind, text.to_string()));
        format!("{LOADING} applied when they are open")
    }

    /// The snapshots are open: apply what waited, except a jump to a difference, which waits
    /// for the index to find one (`after_index`).
    pub(super) fn apply_pending(app: &mut App) -> Vec<Cmd> {
        match app.snapshots.pending.take() {
            Some(Deferred::Key(a @ (Action::NextDiff | Action::PrevDiff))) => {
                app.snapshots.pending = Some(Deferred::Key(a));
                vec![]
            }
            Some(Deferred::Key(a)) => <Self as super::Component>::on_action(app, a),
            Some(Deferred::Prompt(kind, text)) => {
                match <Self as super::Component>::apply_prompt(app, kind, &text) {
                    Ok(said) => {
                        app.set_status(said, false);
                        <Self as super::Component>::prompt_closed(app, kind)
                    }
                    Err(why) => {
                        app.set_status(why, true);
                        vec![]
                    }
                }
            }
            None => vec![],
        }
    }

    /// The index moved on: a waiting `n`/`N` jumps once it has a difference or is complete.
    pub(super) fn after_index(app: &mut App) {
        let Some(Deferred::Key(a @ (Action::NextDiff | Action::PrevDiff))) = app.snapshots.pending
        else {
            return;
        };
        let ready = app
            .snapshots
            .view
            .as_ref()
            .is_some_and(|s| s.done || !s.index.ranges.is_empty());
        if ready {
            app.snapshots.pending = None;
            Self::jump_to_difference(app, a == Action::NextDiff);
        }
    }
}
