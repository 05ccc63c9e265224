//! The rotation's order and verification, on a stand-in session whose "candidate" is a
//! function of the instance and of a state that no reset reaches (what a cheat keeps in a
//! global too large to reset, or in memory of its own): it verifies when it returns the
//! instance's own result.

use super::*;

/// A candidate: given the instance it runs on and its hidden state, the result it leaves.
type Behaviour = fn(usize, &mut Hidden) -> usize;

/// What a candidate keeps between runs where no reset reaches.
#[derive(Default)]
struct Hidden {
    stash: Option<usize>,
    launches: u64,
}

struct Stand {
    current: usize,
    behaviour: Behaviour,
    hidden: Hidden,
    log: Vec<String>,
    /// Fail `pairs` on (instance, round) with this failure.
    fail: Option<(usize, usize, Failed)>,
    /// Refuse to enter this instance (as a switch refused before it changed anything).
    refuse: Option<usize>,
    pairs_calls: Vec<usize>,
    /// The lanes reported, in the order they were.
    done: Vec<(usize, Lane)>,
}

impl Stand {
    fn new(behaviour: Behaviour, current: usize) -> Stand {
        Stand {
            current,
            behaviour,
            hidden: Hidden::default(),
            log: Vec::new(),
            fail: None,
            refuse: None,
            pairs_calls: Vec::new(),
            done: Vec::new(),
        }
    }

    fn run(&mut self) -> usize {
        self.hidden.launches += 1;
        (self.behaviour)(self.current, &mut self.hidden)
    }
}

impl Rotated for Stand {
    fn enter(&mut self, i: usize) -> Result<(), Failed> {
        self.log.push(format!("enter {i}"));
        if self.refuse == Some(i) {
            return Err(Failed::Instance(format!("{i} refused")));
        }
        self.current = i;
        Ok(())
    }

    fn verify(&mut self, i: usize, label: &str) -> Result<Option<String>, Failed> {
        assert_eq!(i, self.current, "verified on an instance not entered");
        self.log.push(format!("verify {i}: {label}"));
        let got = self.run();
        Ok((got != i).then(|| format!("instance {i}'s output holds {got}'s")))
    }

    fn pairs(&mut self, i: usize, n: u32, warmup: u32) -> Result<(Vec<f64>, Vec<f64>), Failed> {
        assert_eq!(i, self.current, "timed on an instance not entered");
        let round = self.pairs_calls.iter().filter(|&&j| j == i).count();
        self.pairs_calls.push(i);
        if let Some((fi, fr, f)) = &self.fail {
            if (*fi, *fr) == (i, round) {
                return Err(f.clone());
            }
        }
        self.log.push(format!("pairs {i} x{n} +{warmup}"));
        for _ in 0..n + warmup {
            self.run();
        }
        // Each instance's times are its own: recorded 1000 + i, candidate 500 + i.
        let a = vec![1000.0 + i as f64; n as usize];
        let b = vec![500.0 + i as f64; n as usize];
        Ok((a, b))
    }

    fn done(&mut self, i: usize, lane: Lane) {
        assert!(self.done.iter().all(|(j, _)| *j != i), "{i} reported twice");
        self.log.push(format!("done {i}"));
        self.done.push((i, lane));
    }
}

/// [`rotate`], the lanes reported in instance order.
fn run(
    s: &mut Stand,
    names: &[String],
    live: &[usize],
    current: usize,
    sched: Schedule,
) -> (Vec<(usize, Lane)>, bool) {
    let go_on = rotate(s, names, live, current, sched);
    let mut lanes = s.done.clone();
    lanes.sort_by_key(|(i, _)| *i);
    (lanes, go_on)
}

/// No warm-ups drawn: the tests that follow the exact sequence.
const SEED: u64 = 0;

fn sched(pairs: u32, warmup: u32, seed: u64) -> Schedule {
    Schedule {
        pairs,
        warmup,
        seed,
    }
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{i}.json")).collect()
}

fn honest(i: usize, _: &mut Hidden) -> usize {
    i
}

/// Computes once, then hands back the result it stashed, whatever the instance.
fn stash(i: usize, h: &mut Hidden) -> usize {
    *h.stash.get_or_insert(i)
}

/// Computes on every fourth launch and hands back the last result between: a result keyed on
/// the launch count.
fn every_fourth(i: usize, h: &mut Hidden) -> usize {
    if h.launches % 4 == 1 || h.stash.is_none() {
        h.stash = Some(i);
    }
    h.stash.unwrap_or(i)
}

#[test]
fn rounds_add_up_and_stay_within_bounds() {
    assert_eq!(rounds(20, 3), [5, 5, 5, 5]);
    assert_eq!(rounds(100, 2), [25, 25, 25, 25]);
    assert_eq!(rounds(17, 2), [6, 6, 5]);
    assert_eq!(rounds(6, 3), [6]);
    assert_eq!(rounds(100, 1), [100]);
    for pairs in 1..300 {
        for n in 1..5 {
            let r = rounds(pairs, n);
            assert_eq!(r.iter().sum::<u32>(), pairs, "{pairs} {n}");
            assert!(r.len() as u32 <= MAX_ROUNDS);
            assert!(r.len() == 1 || r.iter().all(|&p| p >= MIN_ROUND_PAIRS));
        }
    }
}

#[test]
fn an_honest_candidate_is_timed_on_every_instance_in_turn_with_its_own_samples() {
    let mut s = Stand::new(honest, 2);
    let (lanes, go_on) = run(&mut s, &names(3), &[0, 1, 2], 2, sched(20, 0, SEED));
    assert!(go_on);
    for (i, lane) in &lanes {
        let Lane::Timed {
            recorded,
            candidate,
        } = lane
        else {
            panic!("{i}: {lane:?}");
        };
        // All 20 pairs, and only this instance's times.
        assert_eq!(candidate.len(), 20);
        assert!(recorded.iter().all(|&t| t == 1000.0 + *i as f64));
        assert!(candidate.iter().all(|&t| t == 500.0 + *i as f64));
    }
    // Round after round, instance after instance; each entered, verified, timed, verified.
    // The session starts on the last instance, so round 1 begins by entering the first.
    let enters: Vec<&String> = s.log.iter().filter(|l| l.starts_with("enter")).collect();
    assert_eq!(enters.len(), 12, "{:?}", s.log);
    assert_eq!(s.pairs_calls, [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
    assert_eq!(
        &s.log[..5],
        [
            "enter 0",
            "verify 0: rr-tui verify candidate, round 1 of 4",
            "pairs 0 x5 +1",
            "verify 0: rr-tui verify candidate after timing, round 1 of 4",
            "enter 1",
        ]
    );
}

#[test]
fn a_result_carried_over_from_another_instance_fails() {
    // As after the first runs: the stash holds instance 0's result. Without rotation the
    // stash would verify everywhere (each instance alone, its first result its own).
    let mut s = Stand::new(stash, 2);
    s.hidden.stash = Some(0);
    let (lanes, go_on) = run(&mut s, &names(3), &[0, 1, 2], 2, sched(20, 0, SEED));
    assert!(go_on);
    assert!(matches!(lanes[0].1, Lane::Timed { .. }), "{lanes:?}");
    for (i, lane) in &lanes[1..] {
        let Lane::Wrong(why) = lane else {
            panic!("{i}: {lane:?}");
        };
        assert!(
            why.starts_with(
                "entering round 1 of 4 of the rotation, right after its runs on 0.json"
            ) || why.contains("right after its runs on"),
            "{why}"
        );
        assert!(why.contains("holds 0's"), "{why}");
    }
    // A wrong instance is dropped: later rounds time only instance 0.
    assert_eq!(s.pairs_calls, [0, 0, 0, 0]);

    // As `ab` meets it: instances 1 and 2 were found wrong on their first runs, the session
    // holds instance 2, and only instance 0 is left to time. Nothing rotates, but instance 0
    // is entered and verified first.
    let mut s = Stand::new(stash, 2);
    s.hidden.stash = Some(0);
    let (lanes, go_on) = run(&mut s, &names(3), &[0], 2, sched(20, 0, SEED));
    assert!(
        go_on && matches!(lanes[0].1, Lane::Timed { .. }),
        "{lanes:?}"
    );
    assert_eq!(
        s.log[..3],
        [
            "enter 0",
            "verify 0: rr-tui verify candidate, round 1 of 1",
            "pairs 0 x20 +1"
        ]
    );

    // A result keyed on the launch count: with a fixed number of warm-ups after each switch
    // (seed 0) its computing launches fall on the verified ones and it passes; the
    // warm-ups drawn at random catch it nearly always.
    let caught = |seed: u64| {
        let mut s = Stand::new(every_fourth, 1);
        let (lanes, _) = run(&mut s, &names(2), &[0, 1], 1, sched(20, 0, seed));
        lanes.iter().any(|(_, l)| matches!(l, Lane::Wrong(_)))
    };
    assert!(!caught(0));
    let seeds = 1..=200u64;
    let n = seeds.clone().filter(|&s| caught(s * 0x9e37_79b9)).count();
    assert!(n >= 190, "caught {n} of 200");
}

#[test]
fn one_instance_is_timed_in_one_round_verified_after() {
    // Nothing to rotate: the sequence of a single A/B (warm-ups, pairs, one verification).
    let mut s = Stand::new(stash, 0);
    let (lanes, go_on) = run(&mut s, &names(1), &[0], 0, sched(20, 3, SEED));
    assert!(go_on && matches!(lanes[0].1, Lane::Timed { .. }));
    assert_eq!(
        s.log,
        [
            "pairs 0 x20 +3",
            "verify 0: rr-tui verify candidate after timing, round 1 of 1",
            "done 0"
        ]
    );
    // One that stops doing the work after its first run is caught by that verification.
    fn first_only(i: usize, h: &mut Hidden) -> usize {
        if h.launches == 1 {
            i
        } else {
            usize::MAX
        }
    }
    let mut s = Stand::new(first_only, 0);
    let (lanes, _) = run(&mut s, &names(1), &[0], 0, sched(8, 0, SEED));
    let Lane::Wrong(why) = &lanes[0].1 else {
        panic!("{lanes:?}");
    };
    assert!(why.starts_with("after 8 timed runs:"), "{why}");
}

#[test]
fn a_failure_ends_its_instance_or_the_process() {
    // A refused launch on instance 1's second round: instance 1 is an error, the others go on.
    let mut s = Stand::new(honest, 2);
    s.fail = Some((1, 1, Failed::Instance("refused".into())));
    let (lanes, go_on) = run(&mut s, &names(3), &[0, 1, 2], 2, sched(20, 0, SEED));
    assert!(go_on);
    assert_eq!(lanes[1].1, Lane::Error("refused".into()));
    assert!(matches!(lanes[0].1, Lane::Timed { .. }) && matches!(lanes[2].1, Lane::Timed { .. }));
    assert_eq!(s.pairs_calls.iter().filter(|&&i| i == 1).count(), 2);

    // A fault there: nothing more runs; instance 1 is the error, and the others, not yet
    // final, are not reported (a fresh process judges them), nor called "not judged".
    let mut s = Stand::new(honest, 2);
    s.fail = Some((1, 1, Failed::All("the kernel failed".into())));
    let (lanes, go_on) = run(&mut s, &names(3), &[0, 1, 2], 2, sched(20, 0, SEED));
    assert!(!go_on);
    assert_eq!(lanes, [(1, Lane::Error("the kernel failed".into()))]);
    assert_eq!(s.pairs_calls, [0, 1, 2, 0, 1]);

    // An instance whose switch is refused (its kernel or the candidate does not bind there,
    // the session unchanged) is an error of its own; the others are timed throughout.
    let mut s = Stand::new(honest, 2);
    s.refuse = Some(1);
    let (lanes, go_on) = run(&mut s, &names(3), &[0, 1, 2], 2, sched(20, 0, SEED));
    assert!(go_on);
    assert_eq!(lanes[1], (1, Lane::Error("1 refused".into())));
    for k in [0, 2] {
        let Lane::Timed { candidate, .. } = &lanes[k].1 else {
            panic!("{lanes:?}");
        };
        assert_eq!(candidate.len(), 20, "{k}");
    }
}

#[test]
fn each_instance_is_reported_as_soon_as_it_is_final() {
    // A stash of instance 0's result: 1 and 2 are wrong on entering round 1, reported then,
    // before instance 0's last round; 0 is reported after it.
    let mut s = Stand::new(stash, 2);
    s.hidden.stash = Some(0);
    run(&mut s, &names(3), &[0, 1, 2], 2, sched(20, 0, SEED));
    let order: Vec<usize> = s.done.iter().map(|(i, _)| *i).collect();
    assert_eq!(order, [1, 2, 0]);
    let first_done = s.log.iter().position(|l| l == "done 1").unwrap();
    let timed_0 = s.log.iter().filter(|l| l.starts_with("pairs 0")).count();
    assert_eq!(timed_0, 4);
    assert!(
        s.log[..first_done]
            .iter()
            .filter(|l| l.starts_with("pairs 0"))
            .count()
            == 1,
        "{:?}",
        s.log
    );
    // An honest candidate: every instance reported once, after its last round.
    let mut s = Stand::new(honest, 2);
    run(&mut s, &names(3), &[0, 1, 2], 2, sched(20, 0, SEED));
    let last_pairs = s
        .log
        .iter()
        .rposition(|l| l.starts_with("pairs 0"))
        .unwrap();
    let done_0 = s.log.iter().position(|l| l == "done 0").unwrap();
    assert!(done_0 > last_pairs, "{:?}", s.log);
    assert_eq!(s.done.len(), 3);
}
