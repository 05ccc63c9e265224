//! What a click or a turn of the wheel means (`MouseAction`, `Pane`) and where things are for
//! the mouse, as the next frame draws them: what `mouse` (the frame, the lists) and the Tune
//! screen's mouse (its form, heatmap and table) both use.

use ratatui::layout::{Position, Rect};

use super::framelayout::frame_areas;
use super::{App, Screen};

/// Lines one notch of the wheel scrolls a list or a text (three, as terminals scroll).
pub const WHEEL_LINES: i32 = 3;

/// A pane the wheel scrolls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The help popup (it takes the wheel wherever the pointer is, as it takes the keys).
    Help,
    Picker,
    /// The screen's content: the instance list, the descriptor, the snapshots (the replay and
    /// profile screens say that nothing scrolls there, as for j/k).
    Screen,
    TuneForm,
    Heatmap,
    TuneTable,
}

/// What a mouse event means where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseAction {
    Tab(Screen),
    /// A row of the instance list: its place in the view.
    Instance(usize),
    /// A row of the record-directory picker.
    RecordDir(usize),
    /// A field of the tuning form (its index in `Field::ALL`).
    TuneField(usize),
    /// A row of the table of the best configurations.
    TuneRow(usize),
    /// A heatmap cell: its row and column in the heatmap.
    HeatCell(usize, usize),
    CloseHelp,
    /// Lines down (negative: up).
    Scroll(Pane, i32),
    /// Columns right (negative: left).
    ScrollSideways(Pane, i32),
}

/// The row of a list drawn one per line in `rows` from its item `first` that `at` is on.
pub(in crate::tui::app) fn row_at(
    rows: Rect,
    first: usize,
    len: usize,
    at: Position,
) -> Option<usize> {
    let i = first + (at.y.checked_sub(rows.y)? as usize);
    (rows.contains(at) && i < len).then_some(i)
}

/// The key presses a turn of `lines` of the wheel stands for (at most 50).
pub(in crate::tui::app) fn wheel_steps(lines: i32) -> u32 {
    lines.unsigned_abs().min(50)
}

impl App {
    /// The frame's areas as the next frame draws them (tab bar, screen, status, hints).
    pub(in crate::tui::app) fn frame(&self) -> [Rect; 4] {
        frame_areas(self, Rect::new(0, 0, self.width, self.height))
    }
}
