//! Opening a replay session at the recorded addresses: placeholders over the recorded ranges
//! before the driver loads, and a fresh copy of the process (the program's, [`Process`]) when
//! this one's own mappings (or ASLR) sit on them. Shared by the runner, the tuning engine and
//! the A/B workers.

use std::time::Duration;

use crate::error::Error;
use crate::replay::instance::ReplayInstance;
use crate::replay::launch::Launch;
use crate::replay::protocol::Event;
use crate::replay::request::ReplayRequest;
use crate::replay::session::Session;
use crate::replay::sink::RunSink;
use rr_cuda::Placeholders;

use super::checks::Checked;
use super::Failure;

/// What only the program running a replay can do: replace its process with a fresh copy of
/// itself, which gets another address-space layout (ASLR), running the same.
pub trait Process {
    /// Whether this process may still replace itself (a few fresh copies at most, counted
    /// across them).
    fn may_start_afresh(&self) -> bool;
    /// Replace this process with a fresh copy of itself; returns only when that fails, with
    /// why.
    fn start_afresh(&self) -> Error;
}

/// Open `inst` for `launch`'s device; with `keep_pristine`, any number of launches may follow;
/// with `kernel_timeout`, a kernel running longer ends the process (see
/// [`crate::replay::watchdog`]). Progress goes to `out`. When the recorded ranges are taken in
/// this process, `process` may replace it with a fresh copy (this call then never returns).
pub fn open_session(
    inst: &ReplayInstance,
    launch: &Launch,
    keep_pristine: bool,
    kernel_timeout: Option<Duration>,
    out: RunSink,
    process: &dyn Process,
) -> Result<Session, Error> {
    // Placeholders first: before the driver loads and before big host allocations.
    let mut placeholders = Placeholders::take_with_host(&inst.plan.reservations, &inst.host);
    let blocked = placeholders.blocked();
    if !blocked.is_empty() {
        if process.may_start_afresh() {
            drop(placeholders);
            return Err(process.start_afresh());
        }
        let list: Vec<String> = blocked
            .iter()
            .map(|r| format!("{:#x}+{:#x}", r.addr, r.size))
            .collect();
        out.emit(Event::Phase {
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
        &mut |e| out.emit(e),
    ) {
        Ok(s) => Ok(s),
        // Another process has another layout (ASLR): retry the reservation in a fresh one.
        Err(Error::AddressInUse(msg)) if process.may_start_afresh() => {
            out.emit(Event::Phase {
                name: "retry".into(),
                detail: format!("{msg}; retrying in a fresh process"),
            });
            drop(placeholders);
            Err(process.start_afresh())
        }
        Err(e) => Err(e),
    }
}

/// Open the session of `checked`'s instance as `req` asks (see [`open_session`]); `serving`:
/// the session is kept for further replays, whatever they ask.
pub(super) fn for_request(
    req: &ReplayRequest,
    checked: &Checked,
    out: RunSink,
    process: &dyn Process,
    serving: bool,
) -> Result<Session, Failure> {
    // A served replay keeps its input copy: the next replay may be as long as it likes.
    let keep_pristine = req.launches() > 1 || calibrating() || req.energy || serving;
    let kernel_timeout =
        (req.kernel_timeout > 0.0).then(|| Duration::from_secs_f64(req.kernel_timeout));
    let mut session = open_session(
        &checked.inst,
        &checked.launch,
        keep_pristine,
        kernel_timeout,
        out,
        process,
    )?;
    if req.events_only {
        session.without_probes();
    }
    Ok(session)
}

/// Whether the replay measures the GPU's timing aids first (`RR_TUI_CALIBRATE`, the benchmarks').
pub(super) fn calibrating() -> bool {
    std::env::var_os("RR_TUI_CALIBRATE").is_some()
}
