//! The Tune screen (`5`): the sweep form, the selected instance's sweep (its progress, the
//! heatmap, the table of the best configurations) and sweeps of several marked instances one
//! after the other. Its state is the form (one for the session, like the replay settings),
//! the sweeps by instance, the heatmap's scrolling, the table's mode and pick, the marks and
//! queue of a sweep of several instances, and a sweep file being read; what holds the GPU is
//! the `App`'s (`gpu_work`).

use std::collections::{BTreeSet, HashMap, VecDeque};

use crate::tui::app::sweepfile::OpeningSweep;
use crate::tui::app::tuneform::TuneForm;
use crate::tui::app::tuning::TuneRun;

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
