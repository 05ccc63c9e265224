//! Opening a replay session at the recorded addresses: placeholders over the recorded ranges
//! before the driver loads, and a fresh copy of the process when this one's own mappings (or
//! ASLR) sit on them. Shared by `replay` and the tuning engine.

use rr_engine::replay::launch::Launch;
use rr_engine::replay::protocol::Event;
use rr_engine::replay::{Placeholders, ReplayInstance, Session};

use super::printer::Printer;
use crate::error::Error;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// How many times a replay re-executes itself when its own mappings sit on recorded ranges.
const MAX_FRESH_PROCESSES: u32 = 3;
const REEXEC_ENV: &str = "RR_TUI_REPLAY_ATTEMPT";

/// Open `inst` for `launch`'s device; with `keep_pristine`, any number of launches may follow;
/// with `kernel_timeout`, a kernel running longer ends the process (see
/// `rr_engine::replay::watchdog`). Progress goes to `printer`. On success the process may have
/// been replaced by a fresh copy (this call then never returns).
pub(crate) fn session(
    inst: &ReplayInstance,
    launch: &Launch,
    keep_pristine: bool,
    kernel_timeout: Option<std::time::Duration>,
    printer: &Printer,
) -> Result<Session, Error> {
    // Placeholders first: before the driver loads and before big host allocations.
    let mut placeholders = Placeholders::take_with_host(&inst.plan.reservations, &inst.host);
    let attempt: u32 = std::env::var(REEXEC_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let blocked = placeholders.blocked();
    if !blocked.is_empty() {
        if attempt < MAX_FRESH_PROCESSES {
            drop(placeholders);
            return Err(reexec(attempt + 1));
        }
        let list: Vec<String> = blocked
            .iter()
            .map(|r| format!("{:#x}+{:#x}", r.addr, r.size))
            .collect();
        printer.emit(Event::Phase {
            name: "warning".into(),
            detail: format!(
                "host mappings of this process cover recorded ranges {}; reserving anyway",
                list.join(", ")
            ),
        });
    }
    match Session::open(
        inst,
        launch.device_id,
        keep_pristine,
        &mut placeholders,
        kernel_timeout,
        &mut |e| printer.emit(e),
    ) {
        Ok(s) => Ok(s),
        // Another process has another layout (ASLR): retry the reservation in a fresh one.
        Err(Error::AddressInUse(msg)) if attempt < MAX_FRESH_PROCESSES => {
            printer.emit(Event::Phase {
                name: "retry".into(),
                detail: format!("{msg}; retrying in a fresh process"),
            });
            drop(placeholders);
            Err(reexec(attempt + 1))
        }
        Err(e) => Err(e),
    }
}

/// Replace this process with a fresh copy of itself (new address-space layout under ASLR).
fn reexec(attempt: u32) -> Error {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    exec_fresh(&args, &[(REEXEC_ENV, &attempt.to_string())])
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
    Error::invalid(format!("cannot start a fresh replay process: {err}"))
}
