//! `rr-tui tune`: the command line becomes a [`TuneJob`] once (`TuneArgs::job`), and the sweep
//! runs from the job in `rr_tune::sweep`, which says what it does through this module's printer
//! (text, or event lines for the explorer). Here too: `tune merge`, `tune --list`'s listing,
//! and a recording's instances swept one after the other (`tune DIR`).

mod list;
mod merge;
mod recording;
mod text;

use rr_tune::job::TuneJob;

use crate::cli::TuneArgs;
use crate::error::{Error, Result};

/// `rr-tui tune …`: `tune merge`, or the sweep the arguments ask for, as a job.
pub fn run_args(a: &TuneArgs) -> Result<i32> {
    if let Some(crate::cli::TuneCommand::Merge(m)) = &a.command {
        return merge::run(m);
    }
    if let Some(why) = a.json_switch_refused() {
        return Err(Error::invalid(why));
    }
    run(&a.job().map_err(Error::invalid)?)
}

/// Run a sweep job (`tune`, or `rr-tui job` with a tune job): one instance, or a recording's.
pub fn run(a: &TuneJob) -> Result<i32> {
    if a.descriptor().is_dir() {
        return recording::run_dir(a, a.descriptor(), run_instance);
    }
    run_instance(a)
}

/// One instance's sweep, printed as the job asks (text, or `--events` lines).
fn run_instance(a: &TuneJob) -> Result<i32> {
    rr_tune::sweep::run(a, &text::Printer::new(a.events, a.run_id))
}
