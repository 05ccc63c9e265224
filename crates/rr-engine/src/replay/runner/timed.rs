//! The replay itself, in a session opened (or switched) for it: the `launch` it announces, the
//! warm-ups and timed repetitions (a fixed count, or until the noise target is met), their
//! summary, then verification and the saved output; an A/B replay's pairs instead ([`super::ab`]).

use crate::replay::protocol::Event;
use crate::replay::request::ReplayRequest;
use crate::replay::session::{Sample, Session};
use crate::replay::sink::RunSink;
use crate::replay::stats::Stats;
use crate::replay::timing::TimingPolicy;
use rr_cuda::LaunchConfig;

use super::checks::{ab_verify, Checked};
use super::open::calibrating;
use super::outputs::Outputs;
use super::Failure;

/// The `launch` event of a checked replay: the resolved geometry, repetitions and warm-ups.
pub(super) fn launch_event(req: &ReplayRequest, checked: &Checked) -> Event {
    let l = &checked.launch;
    Event::Launch {
        kernel: checked.inst.descriptor.name.clone(),
        grid: l.grid,
        block: l.block,
        shared_mem: l.shared_mem,
        repetitions: req.repetitions,
        warmup: req.warmup,
    }
}

/// Time, verify and save the replay of `checked` in `session`, opened (or switched) for it.
/// Whether it passed.
pub(super) fn run_on(
    req: &ReplayRequest,
    checked: Checked,
    session: &mut Session,
    out: RunSink,
) -> Result<bool, Failure> {
    let Checked {
        inst,
        launch: l,
        candidate,
    } = checked;
    let verify = match candidate {
        Some(_) => ab_verify(req),
        None => req.verify,
    };
    let on_device = verify.is_on() && !req.save_output && !req.verify_on_host;
    if on_device {
        // While the recorded input is in place: its fingerprints are half of what verifying
        // on the device needs.
        session.prepare_device_verification(&inst)?;
    }
    if calibrating() {
        let detail = session.calibrate(&inst)?;
        out.emit(Event::Phase {
            name: "calibration".into(),
            detail,
        });
    }
    let cfg = l.config();
    let outputs = Outputs {
        inst: &inst,
        req,
        launch: &l,
        on_device,
        out,
    };
    if let (Some(file), Some(spec)) = (candidate, &req.candidate) {
        return super::ab::run(session, spec, file, &outputs, &cfg);
    }
    if req.energy {
        // Before the timed repetitions: they restore the input the back-to-back launches left.
        let meter = crate::replay::energy::meter(session)?;
        let energy = crate::replay::energy::measure(session, &cfg, &meter, &Default::default())?;
        out.emit(Event::Energy(energy));
    }
    let (samples, discarded) = timed(req, session, &cfg, out)?;
    out.emit(summary(&samples, discarded, session));
    // Verification off: nothing is said (the text printer says so at `done`).
    outputs.check(session, req.verify, false)
}

/// The warm-ups, then the timed repetitions, each said as a `rep` as it happens: exactly
/// `--repetitions`, or (`--max-noise`) until the noise target is met, throttled samples left
/// out. The samples kept and how many were left out.
fn timed(
    req: &ReplayRequest,
    session: &mut Session,
    cfg: &LaunchConfig,
    out: RunSink,
) -> Result<(Vec<Sample>, usize), Failure> {
    let emit_rep =
        |index: u32, s: &Sample, kept: bool| out.emit(Event::rep(index, s, !kept, false));
    match &req.noise {
        None => {
            let samples =
                session.run(cfg, req.repetitions, req.warmup, req.cold, &mut |i, s| {
                    emit_rep(i, &s, true)
                })?;
            Ok((samples, 0))
        }
        Some(target) => {
            session.run(cfg, 0, req.warmup, req.cold, &mut |_, _| {})?;
            let policy = TimingPolicy::adaptive(req.cold, *target, req.repetitions);
            let mut index = 0;
            let m = session.measure(cfg, &policy, &mut |s, kept| {
                index += 1;
                emit_rep(index, s, kept)
            })?;
            let discarded = m.throttled.len();
            Ok((m.samples, discarded))
        }
    }
}

/// The `summary` of the samples kept.
fn summary(samples: &[Sample], discarded: usize, session: &Session) -> Event {
    let of = |f: fn(&Sample) -> f64| Stats::of(&samples.iter().map(f).collect::<Vec<_>>());
    let clocks: Vec<f64> = samples.iter().filter_map(|s| s.clock_mhz).collect();
    Event::Summary {
        kernel_ns: of(|s| s.kernel_ns),
        host_ns: of(|s| s.host_ns),
        restore_ns: of(|s| s.restore_ns),
        clock_mhz: (!clocks.is_empty()).then(|| Stats::of(&clocks)),
        discarded,
        reference_clock_mhz: Some(session.reference_clock_mhz()),
    }
}
