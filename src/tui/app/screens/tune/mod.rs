//! The Tune screen (`5`): the sweep form, the selected instance's sweep (its progress, the
//! heatmap, the table of the best configurations) and sweeps of several marked instances one
//! after the other. Its state is the form (one for the session, like the replay settings),
//! the sweeps by instance, the heatmap's scrolling, the table's mode and pick, the marks and
//! queue of a sweep of several instances, and a sweep file being read; what holds the GPU is
//! the `App`'s (`gpu_work`).

mod actions;
mod draw;
pub mod form;
mod heat;
pub mod heatmap;
pub mod layout;
mod mouse;
pub mod run;
pub mod sweepfile;
mod sweeps;

use std::collections::{BTreeSet, HashMap, VecDeque};

use ratatui::layout::{Position, Rect};
use ratatui::Frame;

use super::{Component, DrawContext};
use crate::tui::app::pointer::{MouseAction, Pane};
use crate::tui::app::{App, Cmd};
use crate::tui::keymap::Action;
use form::TuneForm;
use run::TuneRun;
use sweepfile::OpeningSweep;

#[derive(Default)]
pub struct TuneScreen {
    /// The form (one for the session, like the replay settings).
    pub form: TuneForm,
    /// Sweeps by instance, kept for the session.
    pub runs: HashMap<usize, TuneRun>,
    /// First row and column of the heatmap on screen.
    pub heat_scroll: (usize, usize),
    /// The table lists the Pareto front of time against energy instead of the best.
    pub show_front: bool,
    /// The row of the table `P` profiles (0: the best).
    pub pick: usize,
    /// `r` asked whether to replace the sweep opened from a file on this instance: `r` again
    /// does, any other key keeps it.
    pub replace_asked: Option<usize>,
    /// Instances marked (`M`) for a sweep one after the other (`R` on this screen), and those
    /// of such a sweep not started yet.
    pub marks: BTreeSet<usize>,
    pub queue: VecDeque<usize>,
    /// The sweep file being read on a worker (`rr-tui SWEEP.json` in a terminal): the first
    /// frame says so at once, whatever the file's size.
    pub opening: Option<OpeningSweep>,
}

impl Component for TuneScreen {
    fn draw(&self, cx: &DrawContext, f: &mut Frame, area: Rect) {
        draw::draw(cx.app, cx.theme, f, area);
    }

    /// Sweeps (one, or the marked instances one after the other), the form, the heatmap and
    /// the table. `P` (the picked row's profile) is the Profile screen's work.
    fn on_action(app: &mut App, a: Action) -> Vec<Cmd> {
        match a {
            Action::TuneStartMarked => return Self::start_marked(app),
            Action::TuneStart => return Self::start(app),
            Action::TuneCancel => return Self::cancel(app),
            Action::TuneExport => return Self::export(app),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => Self::scroll(app, a),
            Action::TuneEdit => Self::edit_field(app),
            Action::HeatLeft => Self::scroll_heat(app, 0, -1),
            Action::HeatRight => Self::scroll_heat(app, 0, 1),
            Action::HeatAxes => Self::cycle_heat_axes(app),
            Action::TuneFront => Self::toggle_front(app),
            Action::TunePickUp => Self::pick_row(app, -1),
            Action::TunePickDown => Self::pick_row(app, 1),
            _ => {}
        }
        vec![]
    }

    fn click(app: &App, main: Rect, at: Position) -> Option<MouseAction> {
        Self::place_clicked(app, main, at)
    }

    fn pane_at(app: &App, main: Rect, at: Position) -> Option<Pane> {
        Self::pane_under(app, main, at)
    }

    fn on_mouse(app: &mut App, a: MouseAction) -> Vec<Cmd> {
        Self::take_mouse(app, a);
        vec![]
    }

    fn wheel(app: &mut App, pane: Pane, lines: i32) -> Vec<Cmd> {
        Self::wheel_over(app, pane, lines);
        vec![]
    }
}
