//! `rr-tui replay - --json --serve` (hidden): the explorer's replay process. It reads replay
//! jobs from stdin, one JSON line each (`rr_engine::replay::job`: the typed job itself, held to
//! the command line's limits, never command-line text); `replay DESC.json --json --serve` runs
//! the replay its arguments ask for first. The engine's [`Server`] runs each job and keeps its
//! session from one job to the next (a neighbouring instance of the same recording switches in
//! with the memory already on the GPU). This file is the process around it: the jobs read, a
//! refused job answered, and a replay that cannot switch given a fresh process — this one
//! replaces itself with a copy that takes the job from its environment ([`handover`]), on the
//! same pipes (jobs are read a byte at a time, so those queued behind are left for the copy).
//! Only the end of input, or a line that is no request, ends the process (the latter with one
//! JSON error line, [`crate::fail`]).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;

use rr_engine::job::{self, JobError, MAX_JOB_LINE};
use rr_engine::replay::runner::serve::{Served, Server};
use rr_engine::replay::{runner, ReplayRequest};

use super::handover::{self, JOB_ENV};
use super::open::{self, FreshCopy, FRESH_REASON_ENV};
use super::printer::JsonLines;
use crate::cli::ReplayArgs;
use crate::error::{Error, Result};
use crate::lines::Line;
use crate::output;

pub fn run(a: &ReplayArgs) -> Result<i32> {
    // A kept replay process says a hung kernel on stderr and ends without `done`: a `done`
    // would let the next request be sent to a process about to exit. Its reader ends the run,
    // quoting the message.
    rr_engine::replay::watchdog::on_hang(Box::new(output::error));
    // `-`: every job comes as a job line; otherwise the first is the command line's.
    let from_jobs = a.descriptor.as_os_str() == "-";
    let mut next = (!from_jobs).then(|| a.request());
    // A job handed over by a predecessor is read only by a process started for jobs (`-`): one
    // started with a descriptor re-executes itself with that descriptor, its first job.
    let mut jobs = Jobs::new(from_jobs);
    let mut server = Server::new(&FreshCopy, std::env::var(FRESH_REASON_ENV).ok());
    let mut status = 0;
    loop {
        let request = match next.take() {
            Some(r) => r,
            // The process goes on after a failure too, until the end of input: a `done` is
            // never followed by an exit that would drop the next job on the floor.
            None => match jobs.next() {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(status),
                // A job whose run is known gets its answer; the session stays.
                Err(JobError {
                    run: Some(run),
                    message,
                }) => {
                    status = runner::refused(run, message, &JsonLines).exit_status();
                    continue;
                }
                // No run to answer under: the process ends with one error line (`fail`).
                Err(JobError { run: None, message }) => return Err(Error::invalid(message)),
            },
        };
        handover::serving(job::encode(&request).map_err(|e| Error::invalid(e.to_string()))?);
        match server.serve(&request, &JsonLines) {
            Served::Finished(outcome) => status = outcome.exit_status(),
            Served::Fresh(why) => {
                let args: Vec<OsString> = ["replay", "-", "--json", "--serve"]
                    .into_iter()
                    .map(OsString::from)
                    .collect();
                // Freed here, not by exec: the device memory must be free for the copy.
                server.release();
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
