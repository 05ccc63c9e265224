//! The explorer's screens as components, as gitui builds its screens: each is one module
//! holding a struct with that screen's own state, its drawing (from that state and what the
//! `App` shares) and its keys (the actions of its scope of the key table, `keytable`, which
//! stays the one source of the dispatch, the help and the hints). `App::update` hands a key to
//! the component of the screen shown; a key that starts slow work returns the `Cmd`s for it.
//!
//! What several screens use stays in the `App`, the shared context every component is given:
//! the rows and the selection (`view`, `selected`, `mark`), the status line and the prompt,
//! the replay settings (sweeps, profiles and the leaderboard read them too), what holds the
//! GPU and the run numbers (`jobs`, which every start asks and goes through).
//!
//! Components are children of `app` (they use the `App` they belong to and its `Cmd`s) and
//! never import each other (one reads another's state only as a field of the `App`); they draw
//! with the leaf helpers (`theme`, `layout`, `format`, `widgets`) and never with `ui`, which
//! draws the frame around them (the tabs, the status and hint bars, the help, the picker).

pub mod descriptor;
pub mod instances;
pub mod profile;
pub mod replay;
pub mod snapshots;
pub mod tune;

use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Position, Rect};
use ratatui::Frame;

use super::pointer::{MouseAction, Pane};
use super::prompt::PromptKind;
use super::{App, Cmd};
use crate::settings::theme::Theme;
use crate::tui::keymap::Action;

pub use descriptor::DescriptorScreen;
pub use instances::InstancesScreen;
pub use profile::ProfileScreen;
pub use replay::ReplayScreen;
pub use snapshots::SnapshotsScreen;
pub use tune::TuneScreen;

/// What a screen's drawing reads besides its own state.
pub struct DrawContext<'a> {
    /// The shared state: the rows, the selection, the settings, the status line.
    pub app: &'a App,
    pub theme: &'a Theme,
}

/// A screen of the explorer: its state is the struct, kept in the `App`; the keys and prompts
/// are handed the whole `App` (the component's state is a field of it), as its drawing is.
pub trait Component {
    /// Draw the screen in `area` (between the tab bar and the status line).
    fn draw(&self, cx: &DrawContext, f: &mut Frame, area: Rect);

    /// An action of the key table in the screen's scope, or a moving key (Up, Down, PageUp,
    /// PageDown, Top, Bottom). Every action answers visibly, also when it can do nothing.
    fn on_action(app: &mut App, a: Action) -> Vec<Cmd>;

    /// A key the screen takes before the key table is asked (`None`: not one of those).
    fn on_key(_app: &mut App, _k: &KeyEvent) -> Option<Vec<Cmd>> {
        None
    }

    /// The screen is switched to: what it asks for to show the selection.
    fn shown(_app: &mut App) -> Vec<Cmd> {
        vec![]
    }

    /// The selection moved while the screen is shown.
    fn selection_moved(_app: &mut App) -> Vec<Cmd> {
        vec![]
    }

    /// Enter on a prompt the screen opened: its text used (what is now so, for the status
    /// line), or why it cannot be (the prompt then stays open).
    fn apply_prompt(_app: &mut App, kind: PromptKind, _text: &str) -> Result<String, String> {
        Err(format!("the {} prompt is not this screen's", kind.label()))
    }

    /// The prompt closed on Enter, its text applied: the work it asks for (a search, a
    /// leaderboard).
    fn prompt_closed(_app: &mut App, _kind: PromptKind) -> Vec<Cmd> {
        vec![]
    }

    /// A left click at `at` in the screen's area `main` (laid out as the last frame drew it):
    /// what it means there (`None`: nothing).
    fn click(_app: &App, _main: Rect, _at: Position) -> Option<MouseAction> {
        None
    }

    /// The pane the wheel scrolls at `at` in the screen's area `main`: the screen's content
    /// (scrolled as by the moving keys) unless the screen has panes of its own.
    fn pane_at(_app: &App, _main: Rect, _at: Position) -> Option<Pane> {
        Some(Pane::Screen)
    }

    /// A mouse action the screen's own `click` or `pane_at` gave (a row, a cell, the wheel
    /// turned sideways over one of its panes).
    fn on_mouse(_app: &mut App, _a: MouseAction) -> Vec<Cmd> {
        vec![]
    }

    /// The wheel turned `lines` (negative: up) over one of the screen's own panes.
    fn wheel(_app: &mut App, _pane: Pane, _lines: i32) -> Vec<Cmd> {
        vec![]
    }
}

/// `$call` with `$S` naming the component of `$screen`: the one map from a screen to its
/// component, so the `App` hands every hook of the [`Component`] trait to whichever screen is
/// shown the same way (`with_component!(self.screen, S => S::shown(self))`).
macro_rules! with_component {
    ($screen:expr, $S:ident => $call:expr) => {
        match $screen {
            $crate::tui::app::Screen::Instances => {
                type $S = $crate::tui::app::screens::InstancesScreen;
                $call
            }
            $crate::tui::app::Screen::Descriptor => {
                type $S = $crate::tui::app::screens::DescriptorScreen;
                $call
            }
            $crate::tui::app::Screen::Snapshots => {
                type $S = $crate::tui::app::screens::SnapshotsScreen;
                $call
            }
            $crate::tui::app::Screen::Replay => {
                type $S = $crate::tui::app::screens::ReplayScreen;
                $call
            }
            $crate::tui::app::Screen::Tune => {
                type $S = $crate::tui::app::screens::TuneScreen;
                $call
            }
            $crate::tui::app::Screen::Profile => {
                type $S = $crate::tui::app::screens::ProfileScreen;
                $call
            }
        }
    };
}
pub(in crate::tui::app) use with_component;
