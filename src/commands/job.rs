//! `rr-tui job`: run one job another rr-tui process hands over (the child-process protocol,
//! `rr_engine::job`). The job is read from `RR_TUI_JOB` (removed from the environment at once, so
//! that nothing this process starts inherits it) or else from the first line of standard input;
//! the kind it names picks the command that runs it:
//!
//! - `replay`: a replay (`replay --json`'s events);
//! - `tune`: a sweep (the explorer's: `tune --events`'s events when the job asks for them; a
//!   failure is said on stderr, `rr-tui: error: …`, as `tune` says it; a job refused while
//!   asking for events is an `error` event, as a replay job's refusal is);
//! - `engine`: the engine a sweep drives on one GPU (the tuner's, an engine hub's): its commands
//!   follow the job's line on standard input; a job it refuses is an `error` event of run 0,
//!   as the engine says why it cannot start;
//! - `profile`: a profile (as its job says: the explorer's ask for events);
//! - `ab`: an A/B leaderboard (`ab`'s JSON document, the explorer's) or an A/B worker (result
//!   lines, `ab`'s workers).

use rr_engine::job::{self, JobError, JOB_ENV, MAX_JOB_LINE};
use rr_engine::lines::Line;
use rr_engine::profile::{ProfileJob, ProfileOutput};
use rr_engine::replay::ab_job::AbJob;
use rr_engine::replay::protocol::{ErrorKind, Event};

use crate::error::{Error, Result};

/// The kinds of job this process runs, for the message that refuses another.
const KINDS: &str = "replay, tune, engine, profile and ab";

pub fn run() -> Result<i32> {
    // A job refused (unreadable, of another kind or version, outside the limits) is said in one
    // line, an `error` object, as a process that answers in JSON lines says everything.
    Ok(run_line().unwrap_or_else(|e| crate::fail_in_stream(&e)))
}

fn run_line() -> Result<i32> {
    let line = read_job()?;
    let refused = |e: JobError| Error::invalid(format!("rr-tui job: {e}"));
    match job::kind_of(&line).map_err(refused)?.as_str() {
        "replay" => super::replay::run_job(job::decode(&line).map_err(refused)?),
        // A failed sweep is said as `tune` says it (the explorer quotes the end of stderr).
        "tune" => Ok(match job::decode(&line) {
            Ok(sweep) => super::tune::run(&sweep).unwrap_or_else(|e| crate::fail(&e, false)),
            Err(e) => refuse_tune(&line, e),
        }),
        "engine" => match job::decode(&line) {
            Ok(engine) => super::engine::run(&engine),
            Err(e) => {
                // As an engine says why it cannot start: the tuner and a hub read that.
                super::replay::printer::Printer { json: true, run: 0 }.emit(Event::Error {
                    kind: ErrorKind::Input,
                    message: format!("rr-tui job: {}", rr_format::text::visible(&e.to_string())),
                });
                Ok(2)
            }
        },
        "profile" => {
            let job: ProfileJob = job::decode(&line).map_err(refused)?;
            // Its errors as `profile` says them (in events, they are events already).
            let json = job.output != ProfileOutput::Text;
            Ok(super::profile::run(&job).unwrap_or_else(|e| crate::fail(&e, json)))
        }
        "ab" => {
            let job: AbJob = job::decode(&line).map_err(refused)?;
            // Its errors as `ab` says them: JSON for a leaderboard in JSON, else a line on
            // stderr (a worker's last words, which its parent quotes).
            Ok(super::ab::run(&job).unwrap_or_else(|e| crate::fail(&e, job.json)))
        }
        other => Err(Error::invalid(format!(
            "rr-tui job: a job of kind `{}`: this rr-tui runs {KINDS}",
            rr_format::text::visible(other)
        ))),
    }
}

/// A tune job refused (outside the command line's limits, flags that exclude each other, not a
/// tune job at all): for a job that asks for events, as a replay job is refused, an `error` line
/// on standard output, then `done`, both of the job's run when it names one (the explorer reads
/// its sweep's stream by run); else as `tune` says it, a line on stderr. Exit status 2.
fn refuse_tune(line: &[u8], e: JobError) -> i32 {
    let message = format!("rr-tui job: {e}");
    // The fields were refused, not necessarily the line: read `events` from it as it is.
    let events = serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| v.get("tune")?.get("events")?.as_bool())
        .unwrap_or(false);
    match (events, e.run) {
        (true, Some(run)) => {
            let printer = super::replay::printer::Printer { json: true, run };
            printer.emit(Event::Error {
                kind: ErrorKind::Input,
                message: rr_format::text::visible(&message).into_owned(),
            });
            printer.emit(Event::Done { ok: false });
            2
        }
        (true, None) => crate::fail_in_stream(&Error::invalid(message)),
        (false, _) => crate::fail(&Error::invalid(message), false),
    }
}

/// The job's line: from the environment, or the first non-blank line of standard input. Read
/// through standard input's own buffer, so that what follows the line (an engine's commands)
/// stays there for the command that runs the job.
fn read_job() -> Result<Vec<u8>> {
    if let Some(value) = std::env::var_os(JOB_ENV) {
        // Read and removed before this process starts any thread or child.
        std::env::remove_var(JOB_ENV);
        return Ok(std::os::unix::ffi::OsStringExt::into_vec(value));
    }
    let mut line = Vec::new();
    let mut stdin = std::io::stdin().lock();
    match rr_engine::lines::next_job_line(&mut stdin, MAX_JOB_LINE as u64, &mut line) {
        Ok(Some(Line::Whole)) => Ok(line),
        Ok(Some(Line::Cut)) => Err(Error::invalid(format!(
            "rr-tui job: a job line longer than {MAX_JOB_LINE} bytes"
        ))),
        Ok(None) => Err(Error::invalid(format!(
            "rr-tui job: no job (give one in {JOB_ENV} or as a line on standard input)"
        ))),
        Err(e) => Err(Error::invalid(format!("rr-tui job: reading the job: {e}"))),
    }
}
