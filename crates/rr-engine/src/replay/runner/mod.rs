//! Running one [`ReplayRequest`]: the checks, the session opened for it, the warm-ups and timed
//! repetitions, verification, the saved output, an A/B candidate's replay, and the events that
//! say all of it, into an [`EventSink`] the caller chooses (`rr-tui replay`'s text or JSON lines,
//! `rr-tui job`, the explorer's kept replay process through [`serve::Server`]).
//!
//! What only the program can do stays with it, behind [`Process`]: replacing this process with a
//! fresh copy of itself when its own mappings sit on the recorded ranges. How a hung kernel is
//! reported is the program's choice too ([`report_hangs`], or a handler of its own).
//!
//! The files, each using only those before it: `checks` (what is refused before the GPU),
//! `open` (the session at the recorded addresses), `outputs` (verifying and saving what a
//! launch left), `ab` (an A/B candidate), `timed` (the launch event and the timed repetitions),
//! `serve` (one session kept from one request to the next).

mod ab;
mod checks;
mod open;
mod outputs;
pub mod serve;
mod timed;

pub use checks::{preflight, Checked};
pub use open::{open_session, Process};
pub use outputs::CANDIDATE_OUTPUT;

use std::path::Path;

use super::protocol::{Event, PROTOCOL_VERSION};
use super::request::ReplayRequest;
use super::session::{error_kind, RunError, Session};
use super::sink::{EventSink, RunSink};
use crate::error::Error;

/// How a replay ended, as its exit status tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and passed (verified, or not asked to verify).
    Passed,
    /// It ran and what it verified differs, or a guard found the candidate implausible.
    Failed,
    /// It stopped with an error: 2 when the flags or the input are at fault, 1 when the run
    /// failed ([`Error::exit_status`]).
    Refused { status: i32 },
}

impl Outcome {
    /// The process exit status (0, 1 or 2) of a replay that ended so.
    pub fn exit_status(self) -> i32 {
        match self {
            Outcome::Passed => 0,
            Outcome::Failed => 1,
            Outcome::Refused { status } => status,
        }
    }
}

/// Why a replay stopped: before the GPU ran anything of it, or during the run.
pub(crate) enum Failure {
    Setup(Error),
    Run(RunError),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Setup(e)
    }
}

impl From<rr_format::Error> for Failure {
    fn from(e: rr_format::Error) -> Self {
        Failure::Setup(e.into())
    }
}

impl From<RunError> for Failure {
    fn from(e: RunError) -> Self {
        Failure::Run(e)
    }
}

/// Run `req` in a session of its own, its events (tagged with its run id) into `sink`, from
/// `start` to `done`. `process` may replace this process with a fresh copy (then this call
/// never returns).
pub fn run(req: &ReplayRequest, sink: &dyn EventSink, process: &dyn Process) -> Outcome {
    let out = RunSink::new(sink, req.run_id);
    let ran = in_new_session(req, out, process, false, None, &mut false).map(|(ok, _, _)| ok);
    finish(ran, out)
}

/// A job refused before it ran, whose run is known (`message` says why): its `start`, `error`
/// and `done`.
pub fn refused(run: u64, message: String, sink: &dyn EventSink) -> Outcome {
    let out = RunSink::new(sink, run);
    start(out, Path::new(""));
    finish(Err(Error::invalid(message).into()), out)
}

/// Install the watchdog's report of a hung kernel (see [`crate::replay::watchdog`]) as the end
/// of run `run` in `sink`: an `error` (a fault), then `done`. Once per process.
pub fn report_hangs<S: EventSink + Send + Sync + 'static>(sink: S, run: u64) {
    super::watchdog::on_hang(Box::new(move |message| {
        sink.emit(
            run,
            Event::Error {
                kind: super::protocol::ErrorKind::Fault,
                message: message.to_string(),
            },
        );
        sink.emit(run, Event::Done { ok: false });
    }));
}

/// Say how a replay ended (`done`, after the `error` when it failed).
fn finish(ran: Result<bool, Failure>, out: RunSink) -> Outcome {
    match ran {
        Ok(ok) => {
            out.emit(Event::Done { ok });
            if ok {
                Outcome::Passed
            } else {
                Outcome::Failed
            }
        }
        Err(e) => {
            // A failed run is 1; what the flags or the record get wrong is 2, as in every
            // command (`Error::exit_status`).
            let (kind, message, status) = match &e {
                Failure::Run(r) => (r.kind(), r.to_string(), 1),
                Failure::Setup(e) => (error_kind(e), e.to_string(), e.exit_status()),
            };
            out.emit(Event::Error { kind, message });
            out.emit(Event::Done { ok: false });
            Outcome::Refused { status }
        }
    }
}

/// What is said, and refused, between the checks and the GPU (see [`checks::screen`]); then the
/// launch.
fn announce(req: &ReplayRequest, checked: &Checked, out: RunSink) -> Result<(), Failure> {
    let (said, verdict) = checks::screen(req, checked);
    for e in said {
        out.emit(e);
    }
    verdict?;
    out.emit(timed::launch_event(req, checked));
    Ok(())
}

/// The `start` event: first of every run.
fn start(out: RunSink, descriptor: &Path) {
    out.emit(Event::Start {
        protocol: PROTOCOL_VERSION,
        descriptor: descriptor.display().to_string(),
    });
}

/// A replay from its `start` (then `note`, when given) to its result, in a session opened for
/// it (`serving`: kept for further replays): whether it passed, the session and its device.
/// `opened` is set once it tries to open one (what failed before that touched nothing).
fn in_new_session(
    req: &ReplayRequest,
    out: RunSink,
    process: &dyn Process,
    serving: bool,
    note: Option<Event>,
    opened: &mut bool,
) -> Result<(bool, Session, i32), Failure> {
    start(out, &req.descriptor);
    if let Some(e) = note {
        out.emit(e);
    }
    let checked = preflight(req)?;
    announce(req, &checked, out)?;
    *opened = true;
    let mut session = open::for_request(req, &checked, out, process, serving)?;
    let device = checked.launch.device_id;
    let ok = timed::run_on(req, checked, &mut session, out)?;
    Ok((ok, session, device))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::protocol::ErrorKind;
    use crate::replay::sink::Collect;

    /// A runner that must never start afresh (nothing here reaches the GPU).
    struct NoFreshCopy;

    impl Process for NoFreshCopy {
        fn may_start_afresh(&self) -> bool {
            false
        }
        fn start_afresh(&self) -> Error {
            unreachable!("no session is opened")
        }
    }

    /// A replay refused by the checks says `start`, the `error` (an input error: exit status
    /// 2) and `done`, all under its run id.
    #[test]
    fn a_refused_replay_starts_errs_and_ends_under_its_run() {
        let mut req = ReplayRequest::new("/nonexistent/x.json".into());
        req.run_id = 12;
        let sink = Collect::default();
        let outcome = run(&req, &sink, &NoFreshCopy);
        assert_eq!(outcome, Outcome::Refused { status: 2 });
        let events = sink.take();
        assert!(events.iter().all(|t| t.run == 12), "{events:?}");
        let kinds: Vec<&Event> = events.iter().map(|t| &t.event).collect();
        assert!(
            matches!(kinds[0], Event::Start { descriptor, .. } if descriptor == "/nonexistent/x.json")
        );
        assert!(matches!(
            kinds[1],
            Event::Error {
                kind: ErrorKind::Input,
                ..
            }
        ));
        assert_eq!(kinds[2], &Event::Done { ok: false });
        assert_eq!(kinds.len(), 3);
    }

    #[test]
    fn a_refused_job_answers_under_the_run_it_names() {
        let sink = Collect::default();
        let outcome = refused(5, "--repetitions 0: from 1 to 10000000".into(), &sink);
        assert_eq!(outcome.exit_status(), 2);
        let events = sink.take_events();
        assert_eq!(
            events[1],
            Event::Error {
                kind: ErrorKind::Input,
                message: "--repetitions 0: from 1 to 10000000".into()
            }
        );
        assert_eq!(events.len(), 3);
    }
}
