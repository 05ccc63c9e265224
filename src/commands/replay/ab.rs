//! `rr-tui replay --candidate`: the recorded kernel and a candidate on the same recorded input,
//! the candidate verified against the recorded output, both timed in alternating pairs, and
//! the verdict ([`rr_engine::replay::ab`]).

use rr_engine::replay::ab::{self, Side};
use rr_engine::replay::candidate::{CandidateFile, CandidateSpec};
use rr_engine::replay::guards::{self, Plausibility};
use rr_engine::replay::protocol::Event;
use rr_engine::replay::LaunchConfig;
use rr_engine::replay::Session;

use super::{ab_verify, Failure, Outputs};

/// Compile or load the candidate, verify it (and the recorded kernel with `--verify`), time
/// both, judge. Whether everything verified.
pub(super) fn run(
    session: &mut Session,
    spec: &CandidateSpec,
    file: CandidateFile,
    out: &Outputs,
    cfg: &LaunchConfig,
) -> Result<bool, Failure> {
    let (req, printer) = (out.req, out.printer);
    if let CandidateFile::Source(text) = &file {
        for d in spec
            .defines
            .iter()
            .filter(|d| !text.contains(d.name.as_str()))
        {
            printer.emit(Event::Phase {
                name: "warning".into(),
                detail: format!("-D {}: the name does not appear in the source", d.name),
            });
        }
    }
    let c = spec.prepare(file, &out.inst.descriptor.name, session.device.sm)?;
    if !c.log.is_empty() {
        printer.emit(Event::Phase {
            name: "warning".into(),
            detail: format!(
                "the compiler says: {}",
                rr_engine::replay::candidate::visible_log(&c.log)
            ),
        });
    }
    let notes = session.load_candidate(&c)?;
    printer.emit(Event::Candidate {
        path: spec.path.display().to_string(),
        kernel: c.kernel.clone(),
        kind: c.kind.clone(),
        compile_seconds: c.compile_seconds,
    });
    for detail in notes {
        printer.emit(Event::Phase {
            name: "note".into(),
            detail,
        });
    }
    // The guards of `rr_engine::replay::guards`: the bytes the kernel writes are poisoned
    // before every candidate run (checked on the recorded kernel first).
    let (plan, _, said) =
        rr_engine::replay::trial::arm_poison(session, out.inst, cfg, &ab_verify(req), req.cold)?;
    for detail in said {
        printer.emit(Event::Phase {
            name: "note".into(),
            detail,
        });
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
        &mut |side, index, s| printer.emit(Event::rep(index, s, false, side == Side::Candidate)),
    )?;
    let times = |v: &[rr_engine::replay::session::Sample]| -> Vec<f64> {
        v.iter().map(|s| s.kernel_ns).collect()
    };
    let (peak, l2) = session.bandwidth_bound();
    let median = rr_engine::replay::stats::Stats::of(&times(&b)).median;
    if let Plausibility::Implausible { floor_ns } =
        guards::plausibility(median, plan.changed_bytes, peak, l2)
    {
        ok = false;
        printer.emit(Event::Phase {
            name: "warning".into(),
            detail: format!(
                "implausible: the candidate's median {median:.0} ns is below the {floor_ns:.0} ns that writing the {} bytes it must write takes at the GPU's peak bandwidth",
                plan.changed_bytes
            ),
        });
    }
    match ab::judge(&times(&a), &times(&b)) {
        Some(outcome) => printer.emit(Event::Compare(outcome)),
        None => printer.emit(Event::Phase {
            name: "warning".into(),
            detail: format!(
                "{} pair(s) give no verdict: ask for at least {} with --repetitions",
                a.len().min(b.len()),
                ab::MIN_PAIRS
            ),
        }),
    }
    Ok(ok)
}
