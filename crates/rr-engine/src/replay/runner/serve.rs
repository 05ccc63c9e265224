//! One replay session kept from one request to the next (the explorer's kept replay process,
//! `rr-tui replay - --json --serve`): a neighbouring instance of the same recording switches in
//! with the memory already on the GPU ([`Session::switch_to`]). A request the held session
//! cannot serve (memory laid out differently, another GPU or kernel timeout, host memory,
//! textures, an A/B candidate) needs a fresh process, which the program makes
//! ([`Served::Fresh`]). A failure after the checks drops the session (a fault leaves the context
//! unusable) and the next request needs a fresh process too; a refusal by the checks keeps it.

use crate::replay::protocol::Event;
use crate::replay::request::ReplayRequest;
use crate::replay::session::Session;
use crate::replay::sink::{EventSink, RunSink};

use super::checks::{preflight, screen, Checked};
use super::open::Process;
use super::timed::{launch_event, run_on};
use super::{finish, in_new_session, start, Failure, Outcome};

/// The open session and what it was opened with that a switch cannot change.
struct Held {
    session: Session,
    device_id: i32,
    kernel_timeout: f64,
    events_only: bool,
}

/// What serving a request came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Served {
    /// The replay ran, or was refused or failed (then its events end with `done`).
    Finished(Outcome),
    /// It needs a process of its own, for this reason: nothing of it was said. Release the
    /// session ([`Server::release`]) before starting that process.
    Fresh(String),
}

/// A session kept from one replay to the next.
pub struct Server<'a> {
    process: &'a dyn Process,
    held: Option<Held>,
    /// Whether a session was opened (a later replay without one needs a fresh process: this
    /// one's state after a failure on the GPU is not to be trusted).
    opened: bool,
    /// Why this process is a fresh copy of one that served before, if it is one.
    fresh_because: Option<String>,
}

impl<'a> Server<'a> {
    /// A server with no session yet; `fresh_because`: why this process replaced another that
    /// served (said as a `fresh` phase by the first replay that opens a session).
    pub fn new(process: &'a dyn Process, fresh_because: Option<String>) -> Server<'a> {
        Server {
            process,
            held: None,
            opened: false,
            fresh_because,
        }
    }

    /// Serve `req` into `sink`: in a new session when none is held (and this process never
    /// opened one), in the held one when it can switch, else in a fresh process. Whatever is
    /// refused before the GPU is refused here, keeping the session, whether or not it could
    /// have switched.
    pub fn serve(&mut self, req: &ReplayRequest, sink: &dyn EventSink) -> Served {
        let out = RunSink::new(sink, req.run_id);
        let Some(held) = self.held.as_mut() else {
            return self.first(req, out);
        };
        let refused = |e: Failure, said: Vec<Event>| {
            start(out, &req.descriptor);
            for e in said {
                out.emit(e);
            }
            Served::Finished(finish(Err(e), out))
        };
        let checked = match preflight(req) {
            Ok(c) => c,
            Err(e) => return refused(e.into(), vec![]),
        };
        let (said, verdict) = screen(req, &checked);
        if let Err(e) = verdict {
            return refused(e, said);
        }
        if let Some(why) = cannot_switch(held, req, &checked) {
            return Served::Fresh(why);
        }
        start(out, &req.descriptor);
        for e in said {
            out.emit(e);
        }
        out.emit(launch_event(req, &checked));
        let ran = switch_and_run(req, checked, &mut held.session, out);
        if ran.is_err() {
            self.held = None;
        }
        Served::Finished(finish(ran, out))
    }

    /// Free the held session (before the process is replaced: the device memory must be free
    /// for its copy).
    pub fn release(&mut self) {
        self.held = None;
    }

    /// The first replay: as a replay of its own runs it, keeping the session, after saying why
    /// this process is a fresh copy when it is one.
    fn first(&mut self, req: &ReplayRequest, out: RunSink) -> Served {
        if self.opened {
            return Served::Fresh("the last replay failed on the GPU in the process before".into());
        }
        let note = self.fresh_because.as_ref().map(|why| Event::Phase {
            name: "fresh".into(),
            detail: format!("a new replay process: {why}"),
        });
        let ran = in_new_session(req, out, self.process, true, note, &mut self.opened);
        let ran = ran.map(|(ok, session, device_id)| {
            self.held = Some(Held {
                session,
                device_id,
                kernel_timeout: req.kernel_timeout,
                events_only: req.events_only,
            });
            ok
        });
        Served::Finished(finish(ran, out))
    }
}

/// Switch the held session to `checked`'s instance (said as a `switched` phase), then replay.
fn switch_and_run(
    req: &ReplayRequest,
    checked: Checked,
    session: &mut Session,
    out: RunSink,
) -> Result<bool, Failure> {
    let switched = session.switch_to(&checked.inst, &mut |e| out.emit(e))?;
    out.emit(Event::Phase {
        name: "switched".into(),
        detail: switched.to_string(),
    });
    run_on(req, checked, session, out)
}

/// Why the held session cannot serve `req` (None: it can).
fn cannot_switch(held: &Held, req: &ReplayRequest, checked: &Checked) -> Option<String> {
    if req.candidate.is_some() {
        Some("an A/B replay loads its candidate in a process of its own".into())
    } else if checked.launch.device_id != held.device_id {
        Some(format!(
            "GPU {} is asked for, the last replay ran on GPU {}",
            checked.launch.device_id, held.device_id
        ))
    } else if req.kernel_timeout != held.kernel_timeout {
        Some("another kernel timeout is asked for".into())
    } else if req.events_only != held.events_only {
        Some("another timing method (events only) is asked for".into())
    } else {
        held.session.unswitchable(&checked.inst).map(str::to_string)
    }
}
