//! `rr-tui replay … --json --serve` (hidden): the explorer's replay process. After the replay
//! its arguments ask for, it reads further replays from stdin, one JSON array of `rr-tui`
//! arguments a line (`["replay", "DESC.json", "--json", "--run-id", "7", …]`, parsed by the
//! command line's own parser), and keeps its session from one to the next: a neighbouring
//! instance of the same recording switches in with the memory already on the GPU
//! ([`Session::switch_to`]), so a replay of a 24 GiB model's next kernel uploads what changed,
//! not everything. A replay that cannot switch (memory laid out differently, another GPU or
//! kernel timeout, host memory, textures, an A/B candidate) gets a fresh process: this one
//! replaces itself with a copy running the new arguments, on the same pipes (requests are read
//! a byte at a time, so those queued behind are left for the copy). A failure after the checks
//! drops the session (a fault leaves the context unusable) and the next request gets a fresh
//! process; a refusal by the checks keeps it. Only the end of input, or a line that is no
//! request, ends the process.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use rr_engine::replay::protocol::Event;
use rr_engine::replay::{ReplayRequest, Session};

use super::open::FRESH_REASON_ENV;
use super::printer::Printer;
use super::{
    finish, in_new_session, launch_event, open, preflight, run_on, screen, start, Checked, Failure,
};
use crate::cli::{Cli, Command, ReplayArgs};
use crate::error::{Error, Result};
use crate::lines::Line;

/// Set while this process serves replays (its sessions keep their input copy).
pub(super) static SERVING: AtomicBool = AtomicBool::new(false);

/// A request line longer than this is not one of ours.
const MAX_REQUEST: u64 = 1 << 20;

/// The open session and what it was opened with that a switch cannot change.
struct Held {
    session: Session,
    device_id: i32,
    kernel_timeout: f64,
    events_only: bool,
}

pub fn run(a: &ReplayArgs) -> Result<i32> {
    SERVING.store(true, Ordering::Relaxed);
    let mut request = a.request();
    let mut held: Option<Held> = None;
    // Whether this process has opened a session (a later replay without one needs a fresh
    // process: this one's state after a failure on the GPU is not to be trusted).
    let mut opened = false;
    let mut stdin = BufReader::with_capacity(1, UnbufferedStdin);
    let mut line = Vec::new();
    let mut status;
    loop {
        let printer = Printer {
            json: true,
            run: request.run_id,
        };
        match serve_one(&request, &printer, &mut held, &mut opened) {
            Served::Finished(outcome) => status = finish(outcome, &printer),
            Served::Fresh(why) => {
                let mut args: Vec<OsString> =
                    request.to_args().into_iter().map(OsString::from).collect();
                args.push("--serve".into());
                // Freed here, not by exec: the device memory must be free for the copy.
                drop(held.take());
                return Err(open::exec_fresh(&args, &[(FRESH_REASON_ENV, &why)]));
            }
        }
        // The process goes on after a failure too, until the end of input: a `done` is never
        // followed by an exit that would drop the next request on the floor.
        request = loop {
            match next_request(&mut stdin, &mut line) {
                Ok(Some(next)) => break next,
                Ok(None) => return Ok(status),
                Err((Some(run), e)) => {
                    // A request whose run is known gets its answer; the session stays.
                    let printer = Printer { json: true, run };
                    start(&printer, std::path::Path::new(""));
                    status = finish(Err(e.into()), &printer);
                }
                Err((None, e)) => return Err(e),
            }
        };
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

/// A request that cannot be served, with its run id when the line names one.
type Refused = (Option<u64>, Error);

/// The next request on stdin; None at the end of input.
fn next_request(
    stdin: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::result::Result<Option<ReplayRequest>, Refused> {
    let read = crate::lines::next_nonblank(stdin, MAX_REQUEST, line).map_err(|e| {
        let why = format!("reading replay requests: {e}");
        (None, Error::invalid(why))
    })?;
    match read {
        None => Ok(None),
        Some(Line::Cut) => Err((
            None,
            Error::invalid(format!("a replay request longer than {MAX_REQUEST} bytes")),
        )),
        Some(Line::Whole) => parse_request(line).map(Some),
    }
}

/// A request line: a JSON array of the arguments of `rr-tui replay … --json`.
fn parse_request(line: &[u8]) -> std::result::Result<ReplayRequest, Refused> {
    let args: Vec<String> = serde_json::from_slice(line).map_err(|e| {
        let why = format!("a replay request is a JSON array of rr-tui's arguments: {e}");
        (None, Error::invalid(why))
    })?;
    let run = args
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--run-id") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(v) => v.strip_prefix('='),
            None => None,
        })
        .and_then(|v| v.parse().ok());
    let cli =
        Cli::try_parse_from(std::iter::once("rr-tui".to_string()).chain(args)).map_err(|e| {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            let why = match e.kind() {
                DisplayHelp | DisplayVersion => "--help and --version are not replays".into(),
                _ => {
                    let said = e.to_string();
                    let first = said.lines().next().unwrap_or_default();
                    first.trim_start_matches("error: ").to_string()
                }
            };
            let why = format!("a replay request's arguments: {why}");
            (run, Error::invalid(why))
        })?;
    match cli.command {
        Some(Command::Replay(a)) if a.json => Ok(a.request()),
        _ => Err((
            run,
            Error::invalid("a replay request must be the arguments of `replay … --json`"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_parsed_by_the_command_lines_parser() {
        let mut want = ReplayRequest::new("x.json".into());
        want.run_id = 7;
        want.repetitions = 5;
        let line = serde_json::to_vec(&want.to_args()).unwrap();
        assert_eq!(parse_request(&line).map_err(|e| e.1).unwrap(), want);
    }

    #[test]
    fn anything_else_is_refused_with_the_reason_and_the_run_when_it_is_named() {
        let cases: [(&[u8], Option<u64>, &str); 7] = [
            (br#"{"replay": 1}"#, None, "JSON array"),
            (
                br#"["replay", "x.json", "--repetitions", "0x"]"#,
                None,
                "arguments",
            ),
            (
                br#"["replay", "x.json", "--run-id", "4", "--repetitions", "0x"]"#,
                Some(4),
                "invalid value",
            ),
            (
                br#"["replay", "x.json", "--help"]"#,
                None,
                "--help and --version are not replays",
            ),
            (
                br#"["replay", "x.json", "--run-id", "9"]"#,
                Some(9),
                "--json",
            ),
            (br#"["replay", "x.json", "--run-id=8"]"#, Some(8), "--json"),
            (br#"["inspect", "x.json"]"#, None, "--json"),
        ];
        for (line, run, says) in cases {
            let (got, e) = parse_request(line).unwrap_err();
            assert_eq!(got, run);
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    /// Requests are read a byte at a time: nothing after the first line is taken from the pipe
    /// (a process that replaces itself leaves the rest to its successor).
    #[test]
    fn a_request_is_read_without_taking_the_next_one() {
        let mut want = ReplayRequest::new("x.json".into());
        want.run_id = 3;
        let mut pipe = serde_json::to_vec(&want.to_args()).unwrap();
        pipe.extend_from_slice(b"\n[\"next\"]\n");
        let mut reader = BufReader::with_capacity(1, &pipe[..]);
        let mut line = Vec::new();
        let got = next_request(&mut reader, &mut line)
            .map_err(|e| e.1)
            .unwrap();
        assert_eq!(got, Some(want));
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"[\"next\"]\n");
    }
}
