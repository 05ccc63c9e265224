//! Instances rotated inside the timing loop (`rr-tui ab`): one candidate, loaded once and kept
//! loaded, judged on the instances one process can switch between (same kernel, same memory
//! layout), its timed pairs cut into rounds that go from instance to instance. The resets
//! before every run (poison, globals) reach what the recording describes; a candidate can keep
//! a result elsewhere (a global too large to reset, memory of its own, a count of its
//! launches) and hand it back on a later run. Without rotation that later run is on the same
//! instance and the result verifies; with it, the candidate's first run on an instance follows
//! its runs on another one, and that run is verified: a result carried over is the other
//! instance's, and fails.
//!
//! Per instance: entered (its input, globals and poison put back), the candidate's first run
//! verified when it last ran on another instance, a round of timed pairs after one to three
//! untimed pairs (the caches settle after a switch as after the first warm-ups; how many is
//! drawn at random, so which launches are verified is no count a candidate can key on), the
//! candidate verified again after the round. Samples stay the instance's own, so each instance's ratio and verdict mean
//! what they meant without rotation; a candidate that fails an instance is dropped from the
//! rounds that follow. With one instance nothing rotates: one round, verified before and after,
//! as `replay --candidate` times it.
//!
//! One process holds one instance's memory at a time (a switch keeps what holds the same bytes
//! and uploads the rest), so memory never limits rotation; what does is the switch itself:
//! instances of another kernel, another memory layout, or with host memory, arrays or texture
//! objects run in processes of their own (`ab`'s spans), and are not rotated with the others.

use rr_cuda::LaunchConfig;

use super::ab;
use super::leaderboard::{InstanceResult, Status};
use super::protocol::Event;
use super::session::{RunError, Session, SwitchFailed};
use super::trial::{self, TrialOptions};
use super::ReplayInstance;

/// Rounds at most: each costs a switch per instance (the input uploaded again where it
/// differs), so more rounds buy little once every instance has followed another.
pub const MAX_ROUNDS: u32 = 4;
/// Timed pairs per round at least (fewer pairs make one round).
pub const MIN_ROUND_PAIRS: u32 = 5;
/// Untimed pairs added after entering an instance at most, drawn at random each time: which of
/// the candidate's launches are verified is then no fixed count a cheat could key on.
pub const MAX_EXTRA_WARMUP: u64 = 2;

/// The timed pairs of each round for `pairs` pairs per instance over `instances` instances:
/// one round when nothing rotates, else up to [`MAX_ROUNDS`] of at least [`MIN_ROUND_PAIRS`]
/// (the first rounds take the remainder). The rounds add up to `pairs`.
pub fn rounds(pairs: u32, instances: usize) -> Vec<u32> {
    if instances < 2 {
        return vec![pairs];
    }
    let n = (pairs / MIN_ROUND_PAIRS).clamp(1, MAX_ROUNDS);
    let (each, extra) = (pairs / n, pairs % n);
    (0..n).map(|r| each + u32::from(r < extra)).collect()
}

/// Why a step of the rotation did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum Failed {
    /// This instance cannot go on (a launch refused, an error of its own); the others can.
    Instance(String),
    /// The process cannot go on (a fault, a failed switch): this instance is the error, the
    /// others are judged again in a fresh process.
    All(String),
}

impl From<RunError> for Failed {
    fn from(e: RunError) -> Failed {
        match e {
            RunError::Fault(_) => Failed::All(e.to_string()),
            other => Failed::Instance(other.to_string()),
        }
    }
}

impl From<SwitchFailed> for Failed {
    fn from(e: SwitchFailed) -> Failed {
        match e {
            SwitchFailed::Refused(_) => Failed::Instance(e.to_string()),
            SwitchFailed::Broken(_) => Failed::All(e.to_string()),
        }
    }
}

/// What the rotation needs of a session (a GPU session in `ab`'s workers; a stand-in in the
/// tests). Instances are indices into the caller's list.
pub trait Rotated {
    /// Make instance `i` the current one, the candidate kept loaded (the session unchanged
    /// when it fails with [`Failed::Instance`]).
    fn enter(&mut self, i: usize) -> Result<(), Failed>;
    /// Run the candidate once on the current instance `i` and verify it: None when it
    /// verifies, else what differs.
    fn verify(&mut self, i: usize, label: &str) -> Result<Option<String>, Failed>;
    /// Time `pairs` pairs on the current instance `i` after `warmup` untimed ones: the
    /// recorded kernel's and the candidate's kernel times (ns).
    fn pairs(&mut self, i: usize, pairs: u32, warmup: u32) -> Result<(Vec<f64>, Vec<f64>), Failed>;
    /// Instance `i`'s lane is final: said as soon as it is, so that a process that ends later
    /// (a crash, a hang) loses no instance judged before.
    fn done(&mut self, i: usize, lane: Lane);
}

/// One instance at the end of the rotation.
#[derive(Debug, Clone, PartialEq)]
pub enum Lane {
    /// Verified throughout: its own paired times.
    Timed {
        recorded: Vec<f64>,
        candidate: Vec<f64>,
    },
    /// A verification failed: what differs, and when.
    Wrong(String),
    /// It could not run.
    Error(String),
}

/// How many runs the rotation times.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Timed pairs per instance.
    pub pairs: u32,
    /// Untimed pairs before the first round.
    pub warmup: u32,
    /// Where the draws of extra warm-ups start (0: none drawn).
    pub seed: u64,
}

/// Time the candidate on the instances `live` (indices into `names`, in order; each verified
/// on its first run) while the session holds instance `current`: `pairs` pairs each with
/// `warmup` untimed pairs first (and, when rotating, 0 to [`MAX_EXTRA_WARMUP`] more drawn from
/// `seed` each round), rotating them as the module's documentation says. Each instance's lane
/// goes to [`Rotated::done`] as soon as it is final; after a [`Failed::All`] only the
/// instance it stopped on is (an error), the others are left to a fresh process. Whether the
/// process can go on.
pub fn rotate(
    t: &mut dyn Rotated,
    names: &[String],
    live: &[usize],
    current: usize,
    Schedule {
        pairs,
        warmup,
        seed,
    }: Schedule,
) -> bool {
    let (draw, mut seed) = (seed != 0, seed);
    // Each instance's times so far; None once it is done.
    let mut lanes: Vec<(usize, Option<Times>)> = live
        .iter()
        .map(|&i| (i, Some((Vec::new(), Vec::new()))))
        .collect();
    let plan = rounds(pairs, live.len());
    let mut at = Turn {
        current: Some(current),
        rotating: live.len() > 1,
        rounds: plan.len(),
        round: 0,
    };
    for (r, &n) in plan.iter().enumerate() {
        at.round = r;
        for (i, lane) in lanes.iter_mut() {
            let Some((recorded, candidate)) = lane else {
                continue;
            };
            let mut warm = if r == 0 { warmup.max(1) } else { 1 };
            if at.rotating && draw {
                warm += (xorshift(&mut seed) % (MAX_EXTRA_WARMUP + 1)) as u32;
            }
            let end = match at.step(t, names, *i, n, warm) {
                Ok(Step::Timed(a, b)) => {
                    recorded.extend(a);
                    candidate.extend(b);
                    if r + 1 < plan.len() {
                        continue;
                    }
                    let (recorded, candidate) = lane.take().unwrap_or_default();
                    Lane::Timed {
                        recorded,
                        candidate,
                    }
                }
                Ok(Step::Wrong(why)) => Lane::Wrong(why),
                Err(Failed::Instance(why)) => Lane::Error(why),
                Err(Failed::All(why)) => {
                    t.done(*i, Lane::Error(why));
                    return false;
                }
            };
            *lane = None;
            t.done(*i, end);
        }
    }
    true
}

/// An instance's paired times so far: the recorded kernel's, the candidate's.
type Times = (Vec<f64>, Vec<f64>);

/// The next number of a xorshift64 sequence (`state` not 0): unpredictable enough for a
/// candidate that cannot see it.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Where the rotation stands.
struct Turn {
    /// The instance the session holds, which is the one the candidate ran on last.
    current: Option<usize>,
    rotating: bool,
    rounds: usize,
    round: usize,
}

enum Step {
    Timed(Vec<f64>, Vec<f64>),
    Wrong(String),
}

impl Turn {
    /// One round of instance `i`: entered (and verified first when the candidate last ran on
    /// another instance), `n` pairs timed after `warm` untimed ones, verified after them.
    fn step(
        &mut self,
        t: &mut dyn Rotated,
        names: &[String],
        i: usize,
        n: u32,
        warm: u32,
    ) -> Result<Step, Failed> {
        let round = format!("round {} of {}", self.round + 1, self.rounds);
        if self.current != Some(i) {
            let before = self.current.and_then(|p| names.get(p)).cloned();
            t.enter(i)?;
            self.current = Some(i);
            let label = format!("rr-tui verify candidate, {round}");
            if let Some(why) = t.verify(i, &label)? {
                let after =
                    before.map_or_else(String::new, |b| format!(", right after its runs on {b}"));
                return Ok(Step::Wrong(format!(
                    "entering {round} of the rotation{after}: {why}"
                )));
            }
        }
        let (a, b) = t.pairs(i, n, warm)?;
        let last = self.round + 1 == self.rounds;
        if self.rotating || last {
            let label = format!("rr-tui verify candidate after timing, {round}");
            if let Some(why) = t.verify(i, &label)? {
                let when = match self.rotating {
                    true => format!("after {} timed runs ({round} of the rotation)", b.len()),
                    false => format!("after {} timed runs", b.len()),
                };
                return Ok(Step::Wrong(format!("{when}: {why}")));
            }
        }
        Ok(Step::Timed(a, b))
    }
}

/// One instance of a rotation group: the instance, its name in the results, its launch.
pub struct Member<'a> {
    pub inst: &'a ReplayInstance,
    pub name: &'a str,
    pub cfg: LaunchConfig,
}

/// What [`judge_group`] says as it goes: which member it works on next (before every step that
/// runs the candidate or switches, so that a process that crashes or hangs there names it),
/// and each member's result as soon as it is final.
pub enum Report {
    At(usize),
    // Boxed: a result is large beside an index, and one goes by per instance.
    Done(usize, Box<InstanceResult>),
}

/// Each member begun ([`trial::begin`]), the candidate kept loaded from one to the next.
struct Begun {
    /// The first result of each member that verified on its first run, to be timed.
    results: Vec<Option<InstanceResult>>,
    /// The ranges armed for each member's candidate runs.
    poison: Vec<Option<trial::Ranges>>,
    /// The members that verified on their first run.
    live: Vec<usize>,
    /// The member the session holds.
    current: usize,
}

/// Begin every member in turn (switching to each, the candidate kept loaded), each member that
/// fails there reported at once; `None` when the process cannot go on (the member it stopped
/// on reported, the others left to a fresh process).
fn begin_each(
    session: &mut Session,
    members: &[Member],
    opts: &TrialOptions,
    progress: &mut dyn FnMut(Event),
    report: &mut dyn FnMut(Report),
) -> Option<Begun> {
    let mut b = Begun {
        results: members.iter().map(|_| None).collect(),
        poison: members.iter().map(|_| None).collect(),
        live: Vec::new(),
        current: 0,
    };
    for (k, m) in members.iter().enumerate() {
        report(Report::At(k));
        let before = b.current;
        let begun = match k {
            0 => Ok(()),
            _ => session
                .switch_keeping_candidate(m.inst, progress)
                .map(|_| b.current = k)
                .map_err(Failed::from),
        }
        .and_then(|()| trial::begin(session, m.inst, m.name, &m.cfg, opts).map_err(Failed::from));
        let (mut r, ranges) = match begun {
            Ok(begun) => begun,
            Err(Failed::Instance(why)) => {
                report(Report::Done(
                    k,
                    Box::new(InstanceResult::error(m.name, why)),
                ));
                continue;
            }
            Err(Failed::All(why)) => {
                report(Report::Done(
                    k,
                    Box::new(InstanceResult::error(m.name, why)),
                ));
                return None;
            }
        };
        if r.status != Status::Verified {
            if k > 0 {
                // The candidate stayed loaded from the instance before: say so, a result
                // carried over from there is the likeliest reason.
                let why = r.reason.take().unwrap_or_default();
                let before = members[before].name;
                r.reason = Some(format!(
                    "its first run here, right after its runs on {before}: {why}"
                ));
            }
            report(Report::Done(k, Box::new(r)));
            continue;
        }
        b.live.push(k);
        b.results[k] = Some(r);
        b.poison[k] = ranges;
    }
    Some(b)
}

/// Judge the candidate loaded in `session` (which holds `members[0]`'s instance) on every
/// member with every guard, the members rotated (see the module's documentation), each
/// member's result reported as soon as it is final. Whether the process can go on (not after
/// a fault or a failed switch): then the member it stopped on is reported as an error and the
/// members not reported are left to a fresh process.
pub fn judge_group(
    session: &mut Session,
    members: &[Member],
    opts: &TrialOptions,
    progress: &mut dyn FnMut(Event),
    report: &mut dyn FnMut(Report),
) -> bool {
    if members.is_empty() {
        return true;
    }
    let names: Vec<String> = members.iter().map(|m| m.name.to_string()).collect();
    let Some(Begun {
        results,
        poison,
        live,
        current,
    }) = begin_each(session, members, opts, progress, report)
    else {
        return false;
    };
    let rounds = rounds(opts.pairs, live.len()).len();
    let rotated = (live.len() > 1).then(|| {
        format!(
            "timed in {rounds} round(s) rotating {} instances in one process, the candidate \
             kept loaded: verified on entering each round and after it",
            live.len()
        )
    });
    let mut on = OnSession {
        session,
        members,
        opts,
        poison,
        progress,
        report,
        results,
        rotated,
        at: None,
    };
    // Where the extra warm-ups start: a phase no candidate can know in advance.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9, |d| d.as_nanos() as u64)
        | 1;
    let schedule = Schedule {
        pairs: opts.pairs,
        warmup: opts.warmup,
        seed,
    };
    rotate(&mut on, &names, &live, current, schedule)
}

/// The rotation on a GPU session.
struct OnSession<'a, 'm> {
    session: &'a mut Session,
    members: &'a [Member<'m>],
    opts: &'a TrialOptions,
    /// The ranges armed for each member's candidate runs (a switch stops poisoning).
    poison: Vec<Option<trial::Ranges>>,
    progress: &'a mut dyn FnMut(Event),
    report: &'a mut dyn FnMut(Report),
    /// Each live member's first result, finished when its lane is.
    results: Vec<Option<InstanceResult>>,
    /// The note of a rotation (None: one instance, nothing rotated).
    rotated: Option<String>,
    /// The member last reported as worked on.
    at: Option<usize>,
}

impl OnSession<'_, '_> {
    fn at(&mut self, i: usize) {
        if self.at != Some(i) {
            self.at = Some(i);
            (self.report)(Report::At(i));
        }
    }
}

impl Rotated for OnSession<'_, '_> {
    fn enter(&mut self, i: usize) -> Result<(), Failed> {
        self.at(i);
        let m = &self.members[i];
        self.session
            .switch_keeping_candidate(m.inst, self.progress)?;
        self.session.set_poison(self.poison[i].clone(), false);
        Ok(())
    }

    fn verify(&mut self, i: usize, label: &str) -> Result<Option<String>, Failed> {
        self.at(i);
        let m = &self.members[i];
        Ok(trial::candidate_verifies(
            self.session,
            m.inst,
            &m.cfg,
            self.opts,
            label,
        )?)
    }

    fn pairs(&mut self, i: usize, pairs: u32, warmup: u32) -> Result<(Vec<f64>, Vec<f64>), Failed> {
        self.at(i);
        let cfg = &self.members[i].cfg;
        let (a, b) = ab::measure(
            self.session,
            cfg,
            pairs,
            warmup,
            self.opts.cold,
            &mut |_, _, _| {},
        )?;
        let ns = |v: Vec<super::session::Sample>| v.iter().map(|s| s.kernel_ns).collect();
        Ok((ns(a), ns(b)))
    }

    fn done(&mut self, i: usize, lane: Lane) {
        let name = self.members[i].name;
        let mut r = self.results[i]
            .take()
            .unwrap_or_else(|| InstanceResult::error(name, ""));
        r.notes.extend(self.rotated.clone());
        let r = match lane {
            Lane::Timed {
                recorded,
                candidate,
            } => trial::finish(self.session, r, &recorded, &candidate),
            Lane::Wrong(why) => InstanceResult {
                status: Status::Wrong,
                reason: Some(why),
                ..r
            },
            Lane::Error(why) => InstanceResult {
                status: Status::Error,
                reason: Some(why),
                ..r
            },
        };
        (self.report)(Report::Done(i, Box::new(r)));
    }
}

#[cfg(test)]
#[path = "rotation_tests.rs"]
mod tests;
