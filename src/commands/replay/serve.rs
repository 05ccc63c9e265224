//! `rr-tui replay … --json --serve` (hidden): the explorer's replay process. After the replay
//! its arguments ask for, it reads further replays from stdin, one JSON array of `rr-tui`
//! arguments a line (`["replay", "DESC.json", "--json", "--run-id", "7", …]`, parsed by the
//! command line's own parser), and keeps its session from one to the next: a neighbouring
//! instance of the same recording switches in with the memory already on the GPU
//! ([`Session::switch_to`]), so a replay of a 24 GiB model's next kernel uploads what changed,
//! not everything. A replay that cannot switch (other addresses, another GPU or kernel timeout,
//! host memory, textures, an A/B candidate) gets a fresh process: this one replaces itself
//! with a copy running the new arguments, on the same pipes. A failure after the checks ends
//! the process (a fault leaves the context unusable); the explorer starts another for the
//! next replay. The end of input ends it.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use rr_engine::replay::protocol::{Event, PROTOCOL_VERSION};
use rr_engine::replay::{ReplayRequest, Session};

use super::printer::Printer;
use super::{announce, finish, open, open_session, preflight, run_on, Checked, Failure};
use crate::cli::{Cli, Command, ReplayArgs};
use crate::error::{Error, Result};
use crate::lines::Line;

/// Set while this process serves replays (its sessions keep their input copy).
pub(super) static SERVING: AtomicBool = AtomicBool::new(false);

/// A request line longer than this is not one of ours.
const MAX_REQUEST: u64 = 1 << 20;

/// Set on the fresh copy of a serving process: why the replay it runs could not switch in.
const FRESH_REASON_ENV: &str = "RR_TUI_SERVE_FRESH";

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
    let mut stdin = std::io::stdin().lock();
    let mut line = Vec::new();
    loop {
        let printer = Printer {
            json: true,
            run: request.run_id,
        };
        match serve_one(&request, &printer, &mut held) {
            Served::Finished(outcome) => {
                let failed = outcome.is_err();
                let status = finish(outcome, &printer);
                if failed && held.is_none() {
                    return Ok(status);
                }
            }
            Served::Fresh { why, args } => {
                // Freed here, not by exec: the device memory must be free for the copy.
                drop(held.take());
                return Err(open::exec_fresh(&args, &[(FRESH_REASON_ENV, &why)]));
            }
        }
        match next_request(&mut stdin, &mut line)? {
            Some(next) => request = next,
            None => return Ok(0),
        }
    }
}

enum Served {
    /// The replay ran (or failed: then `held` is emptied unless nothing was touched).
    Finished(std::result::Result<bool, Failure>),
    /// It needs a process of its own: `why`, and the arguments to run it with.
    Fresh { why: String, args: Vec<OsString> },
}

/// Serve `req`: in a new session when none is held, in the held one when it can switch.
fn serve_one(req: &ReplayRequest, printer: &Printer, held: &mut Option<Held>) -> Served {
    let Some(h) = held.as_mut() else {
        let opened = first(req, printer);
        return Served::Finished(opened.map(|(ok, h)| {
            *held = Some(h);
            ok
        }));
    };
    let checked = match preflight(req) {
        Ok(c) => c,
        Err(e) => {
            // Refused before anything was touched: the session stays for the next replay.
            start(req, printer);
            return Served::Finished(Err(e.into()));
        }
    };
    if let Some(why) = cannot_switch(h, req, &checked) {
        let mut args: Vec<OsString> = req.to_args().into_iter().map(OsString::from).collect();
        args.push("--serve".into());
        return Served::Fresh { why, args };
    }
    start(req, printer);
    let outcome = (|| {
        announce(req, &checked, printer)?;
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

/// The first replay: as `replay` runs it, keeping the session.
fn first(req: &ReplayRequest, printer: &Printer) -> std::result::Result<(bool, Held), Failure> {
    start(req, printer);
    if let Ok(why) = std::env::var(FRESH_REASON_ENV) {
        printer.emit(Event::Phase {
            name: "fresh".into(),
            detail: format!("a new replay process: {why}"),
        });
    }
    let checked = preflight(req)?;
    announce(req, &checked, printer)?;
    let mut session = open_session(req, &checked, printer)?;
    let device_id = checked.launch.device_id;
    let ok = run_on(req, checked, &mut session, printer)?;
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

fn start(req: &ReplayRequest, printer: &Printer) {
    printer.emit(Event::Start {
        protocol: PROTOCOL_VERSION,
        descriptor: req.descriptor.display().to_string(),
    });
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
        held.session
            .unswitchable(&checked.inst)
            .map(|why| format!("the last replay's memory cannot be reused: {why}"))
    }
}

/// The next request on stdin; None at the end of input.
fn next_request(
    stdin: &mut std::io::StdinLock<'static>,
    line: &mut Vec<u8>,
) -> Result<Option<ReplayRequest>> {
    loop {
        match crate::lines::next(stdin, MAX_REQUEST, line)
            .map_err(|e| Error::invalid(format!("reading replay requests: {e}")))?
        {
            None => return Ok(None),
            Some(Line::Cut) => {
                return Err(Error::invalid(format!(
                    "a replay request longer than {MAX_REQUEST} bytes"
                )))
            }
            Some(Line::Whole) if line.trim_ascii().is_empty() => continue,
            Some(Line::Whole) => return parse_request(line).map(Some),
        }
    }
}

/// A request line: a JSON array of the arguments of `rr-tui replay … --json`.
fn parse_request(line: &[u8]) -> Result<ReplayRequest> {
    let args: Vec<String> = serde_json::from_slice(line).map_err(|e| {
        Error::invalid(format!(
            "a replay request is a JSON array of rr-tui's arguments: {e}"
        ))
    })?;
    let cli =
        Cli::try_parse_from(std::iter::once("rr-tui".to_string()).chain(args)).map_err(|e| {
            let said = e.to_string();
            let first = said.lines().next().unwrap_or_default();
            Error::invalid(format!(
                "a replay request's arguments: {}",
                first.trim_start_matches("error: ")
            ))
        })?;
    match cli.command {
        Some(Command::Replay(a)) if a.json => Ok(a.request()),
        _ => Err(Error::invalid(
            "a replay request must be the arguments of `replay … --json`",
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
        assert_eq!(parse_request(&line).unwrap(), want);
    }

    #[test]
    fn anything_else_is_refused_with_the_reason() {
        for (line, says) in [
            (&b"{\"replay\": 1}"[..], "JSON array"),
            (
                b"[\"replay\", \"x.json\", \"--repetitions\", \"0x\"]",
                "arguments",
            ),
            (b"[\"replay\", \"x.json\"]", "--json"),
            (b"[\"inspect\", \"x.json\"]", "--json"),
        ] {
            let e = parse_request(line).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }
}
