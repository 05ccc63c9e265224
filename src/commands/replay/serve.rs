//! `rr-tui replay - --json --serve` (hidden): the explorer's replay process. It reads replay
//! jobs from stdin, one JSON line each (`rr_engine::replay::job`: the typed job itself, held to
//! the command line's limits, never command-line text); `replay DESC.json --json --serve` runs
//! the replay its arguments ask for first. It keeps its session from one job to the next: a neighbouring
//! instance of the same recording switches in with the memory already on the GPU
//! ([`Session::switch_to`]), so a replay of a 24 GiB model's next kernel uploads what changed,
//! not everything. A replay that cannot switch (memory laid out differently, another GPU or
//! kernel timeout, host memory, textures, an A/B candidate) gets a fresh process: this one
//! replaces itself with a copy that takes the job from its environment ([`handover`]), on the
//! same pipes (jobs are read a byte at a time, so those queued behind are left for the copy). A failure after the checks
//! drops the session (a fault leaves the context unusable) and the next request gets a fresh
//! process; a refusal by the checks keeps it. Only the end of input, or a line that is no
//! request, ends the process.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use rr_engine::job::{self, JobError, MAX_JOB_LINE};
use rr_engine::replay::protocol::Event;
use rr_engine::replay::{ReplayRequest, Session};

use super::handover::{self, JOB_ENV};
use super::open::FRESH_REASON_ENV;
use super::printer::Printer;
use super::{
    finish, in_new_session, launch_event, open, preflight, run_on, screen, start, Checked, Failure,
};
use crate::cli::ReplayArgs;
use crate::error::{Error, Result};
use crate::lines::Line;

/// Set while this process serves replays (its sessions keep their input copy).
pub(super) static SERVING: AtomicBool = AtomicBool::new(false);

/// The open session and what it was opened with that a switch cannot change.
struct Held {
    session: Session,
    device_id: i32,
    kernel_timeout: f64,
    events_only: bool,
}

pub fn run(a: &ReplayArgs) -> Result<i32> {
    SERVING.store(true, Ordering::Relaxed);
    // `-`: every job comes as a job line; otherwise the first is the command line's.
    let from_jobs = a.descriptor.as_os_str() == "-";
    let mut next = (!from_jobs).then(|| a.request());
    // A job handed over by a predecessor is read only by a process started for jobs (`-`): one
    // started with a descriptor re-executes itself with that descriptor, its first job.
    let mut jobs = Jobs::new(from_jobs);
    let mut held: Option<Held> = None;
    // Whether this process has opened a session (a later replay without one needs a fresh
    // process: this one's state after a failure on the GPU is not to be trusted).
    let mut opened = false;
    let mut status = 0;
    loop {
        let request = match next.take() {
            Some(r) => r,
            // The process goes on after a failure too, until the end of input: a `done` is
            // never followed by an exit that would drop the next job on the floor.
            None => match jobs.next() {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(status),
                Err(JobError {
                    run: Some(run),
                    message,
                }) => {
                    // A job whose run is known gets its answer; the session stays.
                    let printer = Printer { json: true, run };
                    start(&printer, std::path::Path::new(""));
                    status = finish(Err(Error::invalid(message).into()), &printer);
                    continue;
                }
                Err(JobError { run: None, message }) => return Err(Error::invalid(message)),
            },
        };
        handover::serving(job::encode(&request).map_err(|e| Error::invalid(e.to_string()))?);
        let printer = Printer {
            json: true,
            run: request.run_id,
        };
        match serve_one(&request, &printer, &mut held, &mut opened) {
            Served::Finished(outcome) => status = finish(outcome, &printer),
            Served::Fresh(why) => {
                let args: Vec<OsString> = ["replay", "-", "--json", "--serve"]
                    .into_iter()
                    .map(OsString::from)
                    .collect();
                // Freed here, not by exec: the device memory must be free for the copy.
                drop(held.take());
                return Err(open::exec_fresh(&args, &[(FRESH_REASON_ENV, &why)]));
            }
        }
    }
}

/// Where jobs come from: the one a predecessor handed over in [`JOB_ENV`] first, then stdin.
struct Jobs {
    handed_over: Option<std::ffi::OsString>,
    stdin: BufReader<UnbufferedStdin>,
    line: Vec<u8>,
}

impl Jobs {
    fn new(from_jobs: bool) -> Jobs {
        Jobs {
            handed_over: std::env::var_os(JOB_ENV).filter(|_| from_jobs),
            stdin: BufReader::with_capacity(1, UnbufferedStdin),
            line: Vec::new(),
        }
    }

    /// The next job; None at the end of input.
    fn next(&mut self) -> std::result::Result<Option<ReplayRequest>, JobError> {
        if let Some(line) = self.handed_over.take() {
            use std::os::unix::ffi::OsStrExt;
            return job::decode(line.as_bytes()).map(Some);
        }
        next_job(&mut self.stdin, &mut self.line)
    }
}

/// Stdin read without read-ahead (through a one-byte buffer): a process that replaces itself
/// leaves the requests after the one it read in the pipe, for its successor.
struct UnbufferedStdin;

impl Read for UnbufferedStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        rustix::io::read(std::io::stdin().as_fd(), buf).map_err(std::io::Error::from)
    }
}

enum Served {
    /// The replay ran, or failed (then `held` is emptied unless nothing was touched).
    Finished(std::result::Result<bool, Failure>),
    /// It needs a process of its own, for this reason.
    Fresh(String),
}

/// Serve `req`: in a new session when none is held (and this process never opened one), in the
/// held one when it can switch, else in a fresh process. Whatever is refused before the GPU is
/// refused here, keeping the session, whether or not it could have switched.
fn serve_one(
    req: &ReplayRequest,
    printer: &Printer,
    held: &mut Option<Held>,
    opened: &mut bool,
) -> Served {
    let Some(h) = held.as_mut() else {
        if *opened {
            return Served::Fresh("the last replay failed on the GPU in the process before".into());
        }
        let first = first(req, printer, opened);
        return Served::Finished(first.map(|(ok, h)| {
            *held = Some(h);
            ok
        }));
    };
    let refused = |e: Failure, said: Vec<Event>| {
        start(printer, &req.descriptor);
        for e in said {
            printer.emit(e);
        }
        Served::Finished(Err(e))
    };
    let checked = match preflight(req) {
        Ok(c) => c,
        Err(e) => return refused(e.into(), vec![]),
    };
    let (said, verdict) = screen(req, &checked);
    if let Err(e) = verdict {
        return refused(e, said);
    }
    if let Some(why) = cannot_switch(h, req, &checked) {
        return Served::Fresh(why);
    }
    start(printer, &req.descriptor);
    for e in said {
        printer.emit(e);
    }
    printer.emit(launch_event(req, &checked));
    let outcome = (|| {
        let switched = h
            .session
            .switch_to(&checked.inst, &mut |e| printer.emit(e))?;
        printer.emit(Event::Phase {
            name: "switched".into(),
            detail: switched.to_string(),
        });
        run_on(req, checked, &mut h.session, printer)
    })();
    if outcome.is_err() {
        *held = None;
    }
    Served::Finished(outcome)
}

/// The first replay: as `replay` runs it, keeping the session (`opened` once it tries to open
/// one), after saying why this process is a fresh copy when it is one.
fn first(
    req: &ReplayRequest,
    printer: &Printer,
    opened: &mut bool,
) -> std::result::Result<(bool, Held), Failure> {
    let fresh = std::env::var(FRESH_REASON_ENV)
        .ok()
        .map(|why| Event::Phase {
            name: "fresh".into(),
            detail: format!("a new replay process: {why}"),
        });
    let (ok, session, device_id) = in_new_session(req, printer, fresh, opened)?;
    Ok((
        ok,
        Held {
            session,
            device_id,
            kernel_timeout: req.kernel_timeout,
            events_only: req.events_only,
        },
    ))
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

/// The next job on stdin; None at the end of input.
fn next_job(
    stdin: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::result::Result<Option<ReplayRequest>, JobError> {
    let refused = |message| JobError { run: None, message };
    let read = crate::lines::next_job_line(stdin, MAX_JOB_LINE as u64, line)
        .map_err(|e| refused(format!("reading replay jobs: {e}")))?;
    match read {
        None => Ok(None),
        Some(Line::Cut) => Err(refused(format!(
            "a replay job longer than {MAX_JOB_LINE} bytes"
        ))),
        Some(Line::Whole) => job::decode(line).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs are read a byte at a time: nothing after the first line is taken from the pipe (a
    /// process that replaces itself leaves the rest to its successor).
    #[test]
    fn a_job_is_read_without_taking_the_next_one() {
        let mut want = ReplayRequest::new("x.json".into());
        want.run_id = 3;
        let mut pipe = job::encode(&want).unwrap();
        pipe.extend_from_slice(b"\n[\"next\"]\n");
        let mut reader = BufReader::with_capacity(1, &pipe[..]);
        let mut line = Vec::new();
        assert_eq!(next_job(&mut reader, &mut line), Ok(Some(want)));
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"[\"next\"]\n");
        // That next line is no job: refused, with no run to answer.
        let mut reader = BufReader::with_capacity(1, &rest[..]);
        let e = next_job(&mut reader, &mut line).unwrap_err();
        assert_eq!(e.run, None);
        assert!(e.message.contains("no job"), "{}", e.message);
        assert_eq!(next_job(&mut reader, &mut line), Ok(None));
    }
}
