//! One candidate judged on one instance with every guard of [`super::guards`]: poison checked
//! against the recorded kernel and armed and the candidate's first run verified ([`begin`]),
//! then its paired times judged and checked against the bandwidth floor ([`finish`]). Between
//! the two, `rr-tui ab` times it in rounds that rotate the instances and verifies it around
//! each round ([`super::rotation`]); `replay --candidate` arms the same poison ([`arm_poison`]).

use rr_cuda::LaunchConfig;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;

use super::ab;
use super::guards::{self, PoisonPlan};
use super::leaderboard::{InstanceResult, Status};
use super::protocol::VerifyOutcome;
use super::session::{RunError, Session};
use super::stats::Stats;
use super::{verify, ReplayInstance, Verify};
use crate::snapshot::open_recorded;

/// How a trial runs: pairs timed, warm-ups, cold L2, how results are compared.
#[derive(Debug, Clone)]
pub struct TrialOptions {
    pub pairs: u32,
    pub warmup: u32,
    pub cold: bool,
    pub verify: Verify,
}

fn other(e: impl Into<crate::error::Error>) -> RunError {
    RunError::Other(e.into())
}

/// Plan the poison of `inst` (the bytes its recorded output changed) and check it on the
/// recorded kernel: when the recorded kernel still verifies on poisoned memory, the poison is
/// armed for the candidate's runs; otherwise (it reads what it writes) it is left off. The
/// plan, whether it is armed, and what to say about it.
pub fn arm_poison(
    session: &mut Session,
    inst: &ReplayInstance,
    cfg: &LaunchConfig,
    verify: &Verify,
    cold: bool,
) -> Result<(PoisonPlan, bool, Vec<String>), RunError> {
    session.set_poison(None, false);
    let input = open_recorded(&inst.files, &inst.descriptor, Side::Input).map_err(other)?;
    let output = open_recorded(&inst.files, &inst.descriptor, Side::Output).map_err(other)?;
    if input.len() != output.len() {
        let why = "the recorded input and output differ in length: nothing is poisoned";
        return Ok((PoisonPlan::default(), false, vec![why.into()]));
    }
    let plan = guards::plan_poison(&inst.copies(), input.bytes(), output.bytes());
    input.check_intact().map_err(other)?;
    output.check_intact().map_err(other)?;
    drop((input, output));
    if plan.ranges.is_empty() {
        let why = "the recorded output equals the recorded input: nothing to poison (a candidate \
                   that writes nothing passes this instance)";
        return Ok((plan, false, vec![why.into()]));
    }
    // The padding of the mappings too, where a result could be stashed between runs.
    let mappings: Vec<(u64, u64)> = inst
        .plan
        .mappings
        .iter()
        .map(|m| (m.addr, m.size))
        .collect();
    let mut padding = guards::unrecorded(&mappings, &inst.copies());
    let padded: u64 = padding.iter().map(|r| r.1 as u64).sum();
    let mut said = Vec::new();
    if padded > guards::MAX_UNRECORDED_POISON {
        said.push(format!(
            "{padded} unrecorded mapped byte(s) are not poisoned (over {} MiB)",
            guards::MAX_UNRECORDED_POISON >> 20
        ));
        padding.clear();
    }
    let ranges: Vec<(u64, usize)> = plan.ranges.iter().copied().chain(padding).collect();
    session.set_poison(Some(ranges.clone()), true);
    session.launch(cfg, "rr-tui poison check", cold)?;
    let passed = verify_quietly(session, inst, verify)?.passed;
    if !passed {
        session.set_poison(None, false);
        let why = "the recorded kernel reads bytes it writes (it does not verify on poisoned \
                   memory): poisoning is off for this instance";
        return Ok((plan, false, vec![why.into()]));
    }
    session.set_poison(Some(ranges), false);
    said.push(format!(
        "{} byte(s) the kernel writes are poisoned before every candidate run ({} range(s)), and \
         the unrecorded padding of the mapped memory",
        plan.poisoned_bytes(),
        plan.ranges.len()
    ));
    Ok((plan, true, said))
}

/// Compare the memory the last launch left with the recorded output, every byte of every
/// recorded segment (fingerprints on the GPU where the record allows, else on the host),
/// without saying anything.
pub fn verify_quietly(
    session: &mut Session,
    inst: &ReplayInstance,
    how: &Verify,
) -> Result<VerifyOutcome, RunError> {
    let d = &inst.descriptor;
    let map = MemoryMap::new(d, inst.input_len);
    let differing = session.differing_on_device(inst).map_err(other)?;
    if differing.as_ref().is_some_and(|r| r.is_empty()) {
        return Ok(verify::equal_on_device(inst.input_len, how.typed()));
    }
    let expected = open_recorded(&inst.files, d, Side::Output).map_err(other)?;
    let outcome = match differing {
        Some(ranges) => {
            let replayed = session.read_back_differing()?;
            verify::verify_within(&map, expected.bytes(), &replayed, &ranges, how.typed())
        }
        None => {
            let replayed = session.read_back()?;
            verify::verify(&map, expected.bytes(), &replayed, how.typed())
        }
    };
    expected.check_intact().map_err(other)?;
    Ok(outcome)
}

/// Run the candidate once (its kernel bound, poisoned as armed) and verify what it left: None
/// when it verifies, else the first line of what differs.
pub fn candidate_verifies(
    session: &mut Session,
    inst: &ReplayInstance,
    cfg: &LaunchConfig,
    opts: &TrialOptions,
    label: &str,
) -> Result<Option<String>, RunError> {
    session.with_candidate(|s| s.launch(cfg, label, opts.cold))?;
    let v = verify_quietly(session, inst, &opts.verify)?;
    Ok((!v.passed).then(|| {
        verify::describe(&v)
            .into_iter()
            .next()
            .unwrap_or_else(|| "the result differs from the recorded output".into())
    }))
}

/// Device ranges `(address, length)`.
pub type Ranges = Vec<(u64, usize)>;

/// The start of judging the loaded candidate on `inst` (the session's instance), named `name`
/// in the result: the poison planned, checked and armed, and the candidate's first run
/// verified. The result so far (`Verified`, or `Wrong` with the reason: final), and the ranges
/// armed for poisoning (to arm again after a switch). An error is returned only when the run
/// could not go on (the caller makes it the instance's result; a fault also ends the process).
pub fn begin(
    session: &mut Session,
    inst: &ReplayInstance,
    name: &str,
    cfg: &LaunchConfig,
    opts: &TrialOptions,
) -> Result<(InstanceResult, Option<Ranges>), RunError> {
    let (plan, armed, notes) = arm_poison(session, inst, cfg, &opts.verify, opts.cold)?;
    let ranges = session.poison_ranges().map(<[_]>::to_vec);
    let mut result = InstanceResult {
        status: Status::Verified,
        reason: None,
        changed_bytes: plan.changed_bytes,
        poisoned_bytes: if armed { plan.poisoned_bytes() } else { 0 },
        notes,
        ..InstanceResult::error(name, "")
    };
    if let Some(why) = candidate_verifies(session, inst, cfg, opts, "rr-tui verify candidate")? {
        result.status = Status::Wrong;
        result.reason = Some(why);
    }
    Ok((result, ranges))
}

/// The end of judging a candidate that verified throughout: the speed-up from its paired times
/// (`recorded`, `candidate`: kernel ns of this instance only), and its median time against the
/// bandwidth floor of the bytes it must write (`result.changed_bytes`).
pub fn finish(
    session: &Session,
    mut result: InstanceResult,
    recorded: &[f64],
    candidate: &[f64],
) -> InstanceResult {
    match ab::judge(recorded, candidate) {
        Some(o) => result = result.with_compare(o),
        None => result.notes.push(format!(
            "{} pair(s) give no speed-up: ask for at least {} with --repetitions",
            candidate.len(),
            ab::MIN_PAIRS
        )),
    }
    let (peak, l2) = session.bandwidth_bound();
    let p = guards::plausibility(Stats::of(candidate).median, result.changed_bytes, peak, l2);
    if p.is_implausible() {
        result.status = Status::Implausible;
        result.reason =
            Some("faster than writing the bytes it must write at the GPU's peak bandwidth".into());
    }
    result.plausibility = Some(p);
    result
}
