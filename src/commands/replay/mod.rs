//! `rr-tui replay`: the request its arguments make, run by the engine's replay runner
//! ([`rr_engine::replay::run`]) into the sink the output asks for — text modelled on
//! `llvm-omp-kernel-replay`, or the JSON event stream (protocol v2, every event tagged with the
//! run id) — and its exit status. `--serve` keeps the session for further jobs ([`serve`]).

use rr_engine::replay::runner::report_hangs;
use rr_engine::replay::{EventSink, ReplayRequest};

use crate::cli::ReplayArgs;
use crate::error::Result;

mod handover;
pub(crate) mod open;
pub(crate) mod printer;
mod serve;

/// `replay`'s checks before it looks for a GPU (the explorer and `profile` run them too).
pub use rr_engine::replay::runner::{preflight, Checked};

use printer::{JsonLines, TextPrinter};

pub fn run(a: &ReplayArgs) -> Result<i32> {
    if a.serve {
        return serve::run(a);
    }
    let req = a.request();
    Ok(match a.json {
        true => replay(&req, JsonLines),
        false => replay(&req, TextPrinter::default()),
    })
}

/// Run one replay job another rr-tui process handed over (`rr-tui job`): its events as JSON.
pub(crate) fn run_job(req: ReplayRequest) -> Result<i32> {
    Ok(replay(&req, JsonLines))
}

/// Run `req` into `sink`, a hung kernel ending its run there too; the exit status.
fn replay<S: EventSink + Default + Send + Sync + 'static>(req: &ReplayRequest, sink: S) -> i32 {
    report_hangs(S::default(), req.run_id);
    rr_engine::replay::run(req, &sink, &open::FreshCopy).exit_status()
}
