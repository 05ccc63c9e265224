//! The program's part of opening a replay session at the recorded addresses
//! ([`rr_engine::replay::runner::open_session`]): a fresh copy of this process when its own
//! mappings (or ASLR) sit on the recorded ranges ([`FreshCopy`], the runner's
//! [`Process`]). Shared by `replay`, the tuning engine and the A/B workers.

use rr_engine::replay::launch::Launch;
use rr_engine::replay::runner::{open_session, Process};
use rr_engine::replay::sink::RunSink;
use rr_engine::replay::{ReplayInstance, Session};
use rr_format::text::io_reason;

use super::printer::Printer;
use crate::error::Error;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// How many times a replay re-executes itself when its own mappings sit on recorded ranges.
const MAX_FRESH_PROCESSES: u32 = 3;
const REEXEC_ENV: &str = "RR_TUI_REPLAY_ATTEMPT";

/// This process, replaced by a fresh copy of itself running the same command line (a new
/// address-space layout under ASLR), at most [`MAX_FRESH_PROCESSES`] times in a row.
pub(crate) struct FreshCopy;

impl FreshCopy {
    /// How many copies came before this process (0: it is the first).
    fn attempt() -> u32 {
        std::env::var(REEXEC_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

impl Process for FreshCopy {
    fn may_start_afresh(&self) -> bool {
        FreshCopy::attempt() < MAX_FRESH_PROCESSES
    }

    fn start_afresh(&self) -> Error {
        let args: Vec<OsString> = std::env::args_os().skip(1).collect();
        let attempt = FreshCopy::attempt() + 1;
        exec_fresh(&args, &[(REEXEC_ENV, &attempt.to_string())])
    }
}

/// Open `inst` for `launch`'s device (see [`open_session`]), its progress printed by `printer`,
/// starting afresh as [`FreshCopy`] does. On success the process may have been replaced by a
/// fresh copy (this call then never returns).
pub(crate) fn session(
    inst: &ReplayInstance,
    launch: &Launch,
    keep_pristine: bool,
    kernel_timeout: Option<std::time::Duration>,
    printer: &Printer,
) -> Result<Session, Error> {
    let out = RunSink::new(printer, printer.run);
    open_session(inst, launch, keep_pristine, kernel_timeout, out, &FreshCopy)
}

/// Set on the fresh copy of a serving replay process: why the replay it runs could not switch
/// in (`commands::replay::serve`).
pub(crate) const FRESH_REASON_ENV: &str = "RR_TUI_SERVE_FRESH";

/// Replace this process with a copy of the executable running `args`, with `env` added (and
/// neither a count of earlier attempts nor a reason for a fresh copy unless `env` sets them;
/// the job a serving process serves goes with it).
/// Returns only when that fails, with why.
pub(crate) fn exec_fresh(args: &[OsString], env: &[(&str, &str)]) -> Error {
    use std::os::unix::process::CommandExt;
    let exe = match crate::this_binary() {
        Ok(e) => e,
        Err(e) => return Error::invalid(format!("cannot start a fresh replay process: {e}")),
    };
    let mut command = std::process::Command::new(exe);
    if let Some(arg0) = std::env::args_os().next() {
        command.arg0(arg0);
    }
    command
        .args(args)
        .env_remove(REEXEC_ENV)
        .env_remove(FRESH_REASON_ENV)
        .env_remove(super::handover::JOB_ENV);
    // A serving process hands the job it serves to its copy, which reads no command line for it.
    if let Some(job) = super::handover::current_job() {
        command.env(super::handover::JOB_ENV, std::ffi::OsStr::from_bytes(&job));
    }
    for (k, v) in env {
        command.env(k, v);
    }
    let err = command.exec();
    Error::invalid(format!(
        "cannot start a fresh replay process: {}",
        io_reason(&err)
    ))
}
