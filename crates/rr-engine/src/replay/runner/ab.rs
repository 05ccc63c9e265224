//! A replay with a candidate (`--candidate`): the recorded kernel and the candidate on the same
//! recorded input, the candidate verified against the recorded output, both timed in
//! alternating pairs, and the verdict ([`crate::replay::ab`]).

use crate::replay::ab::{self, Side};
use crate::replay::candidate::{self, CandidateFile, CandidateSpec};
use crate::replay::guards::{self, Plausibility};
use crate::replay::protocol::Event;
use crate::replay::session::{Sample, Session};
use crate::replay::stats::Stats;
use rr_cuda::LaunchConfig;

use super::checks::ab_verify;
use super::outputs::Outputs;
use super::Failure;

/// A `phase` event.
fn phase(name: &str, detail: String) -> Event {
    Event::Phase {
        name: name.into(),
        detail,
    }
}

/// Compile or load the candidate, verify it (and the recorded kernel with `--verify`), time
/// both, judge. Whether everything verified.
pub(super) fn run(
    session: &mut Session,
    spec: &CandidateSpec,
    file: CandidateFile,
    out: &Outputs,
    cfg: &LaunchConfig,
) -> Result<bool, Failure> {
    let (req, sink) = (out.req, out.out);
    load(session, spec, file, out)?;
    // The guards of `crate::replay::guards`: the bytes the kernel writes are poisoned before
    // every candidate run (checked on the recorded kernel first).
    let (plan, _, said) =
        crate::replay::trial::arm_poison(session, out.inst, cfg, &ab_verify(req), req.cold)?;
    for detail in said {
        sink.emit(phase("note", detail));
    }
    let mut ok = true;
    if req.verify.is_on() {
        session.launch(cfg, "rr-tui verify recorded", req.cold)?;
        ok &= out.check(session, req.verify, false)?;
    }
    session.with_candidate(|s| s.launch(cfg, "rr-tui verify candidate", req.cold))?;
    ok &= out.check(session, ab_verify(req), true)?;

    let (a, b) = ab::measure(
        session,
        cfg,
        req.repetitions,
        req.warmup.max(1),
        req.cold,
        &mut |side, index, s| sink.emit(Event::rep(index, s, false, side == Side::Candidate)),
    )?;
    let times = |v: &[Sample]| -> Vec<f64> { v.iter().map(|s| s.kernel_ns).collect() };
    let (peak, l2) = session.bandwidth_bound();
    let median = Stats::of(&times(&b)).median;
    if let Plausibility::Implausible { floor_ns } =
        guards::plausibility(median, plan.changed_bytes, peak, l2)
    {
        ok = false;
        sink.emit(phase("warning", format!(
            "implausible: the candidate's median {median:.0} ns is below the {floor_ns:.0} ns that writing the {} bytes it must write takes at the GPU's peak bandwidth",
            plan.changed_bytes
        )));
    }
    match ab::judge(&times(&a), &times(&b)) {
        Some(outcome) => sink.emit(Event::Compare(outcome)),
        None => sink.emit(phase(
            "warning",
            format!(
                "{} pair(s) give no verdict: ask for at least {} with --repetitions",
                a.len().min(b.len()),
                ab::MIN_PAIRS
            ),
        )),
    }
    Ok(ok)
}

/// Compile (or load) the candidate for the recorded kernel's device and bind it in `session`,
/// saying what the compiler and the binding had to say.
fn load(
    session: &mut Session,
    spec: &CandidateSpec,
    file: CandidateFile,
    out: &Outputs,
) -> Result<(), Failure> {
    let sink = out.out;
    if let CandidateFile::Source(text) = &file {
        for d in spec
            .defines
            .iter()
            .filter(|d| !text.contains(d.name.as_str()))
        {
            sink.emit(phase(
                "warning",
                format!("-D {}: the name does not appear in the source", d.name),
            ));
        }
    }
    let c = spec.prepare(file, &out.inst.descriptor.name, session.device.sm)?;
    if !c.log.is_empty() {
        sink.emit(phase(
            "warning",
            format!("the compiler says: {}", candidate::visible_log(&c.log)),
        ));
    }
    let notes = session.load_candidate(&c)?;
    sink.emit(Event::Candidate {
        path: spec.path.display().to_string(),
        kernel: c.kernel.clone(),
        kind: c.kind.clone(),
        compile_seconds: c.compile_seconds,
    });
    for detail in notes {
        sink.emit(phase("note", detail));
    }
    Ok(())
}
