//! The sweep's shared state between GPU workers: which configuration comes next (the recorded
//! one first, then the strategy's picks), the budget and the time limit, and the costs the
//! strategy learns from. Configurations over a limit come out as skipped trials without
//! reaching an engine (and without using the budget).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::shard::Shard;
use crate::trial::index_of;
use crate::{Config, Objective, Search, Space, Status, Trial};

pub enum Work {
    Measure {
        index: Option<u64>,
        config: Config,
        recorded: bool,
    },
    Skip {
        index: u64,
        trial: Box<Trial>,
    },
    Done,
}

/// When a sweep stops handing out configurations: after `budget` measured, at `deadline`, or
/// when `stop` is set (a signal).
pub struct Limits {
    pub budget: Option<u64>,
    pub deadline: Option<Instant>,
    pub stop: Arc<AtomicBool>,
}

pub struct Scheduler {
    space: Space,
    search: Search,
    /// What the search minimises.
    objective: Objective,
    /// The recorded configuration, until a worker takes it.
    recorded: Option<Config>,
    recorded_index: Option<u64>,
    budget: Option<u64>,
    measured: u64,
    deadline: Option<Instant>,
    stop: Arc<AtomicBool>,
    /// `--shard K/N`: only the configurations this part of the sweep measures.
    shard: Option<Shard>,
    /// Configurations handed out whose engine was lost before it answered (an engine hub's
    /// machine or process): handed out again first, to whichever engine asks.
    returned: VecDeque<(Option<u64>, Config, bool)>,
    /// How often each configuration came back so.
    returns: HashMap<Config, u32>,
}

/// A configuration whose engine was lost this often is not handed out again.
pub const MAX_RETURNS: u32 = 3;

impl Scheduler {
    /// `done`: trials of a resumed run (never measured again). The recorded configuration is
    /// measured first unless `done` holds it.
    pub fn new(
        space: Space,
        search: Search,
        objective: Objective,
        done: &[Trial],
        Limits {
            budget,
            deadline,
            stop,
        }: Limits,
        shard: Option<Shard>,
    ) -> Scheduler {
        let recorded_config = space.rules.recorded;
        let recorded_index = index_of(&space, &recorded_config);
        let mut s = Scheduler {
            space,
            search,
            objective,
            recorded: Some(recorded_config),
            recorded_index,
            budget,
            measured: 0,
            deadline,
            stop,
            shard,
            returned: VecDeque::new(),
            returns: HashMap::new(),
        };
        for t in done {
            if t.recorded || t.config == recorded_config {
                s.recorded = None;
            }
            if let Some(i) = index_of(&s.space, &t.config) {
                s.search.known(i, objective.of(t));
            }
        }
        if let (Some(i), Some(_)) = (recorded_index, s.recorded) {
            // Measured as the baseline: the strategy must not propose it again.
            s.search.known(i, None);
        }
        // The recorded configuration is shard 1's (and no other shard's to propose).
        if shard.is_some_and(|s| s.k != 1) {
            s.recorded = None;
        }
        s
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.budget.is_some_and(|b| self.measured >= b)
    }

    pub fn next(&mut self) -> Work {
        if self.stopped() {
            return Work::Done;
        }
        if let Some((index, config, recorded)) = self.returned.pop_front() {
            self.measured += 1;
            return Work::Measure {
                index,
                config,
                recorded,
            };
        }
        if let Some(config) = self.recorded.take() {
            self.measured += 1;
            return Work::Measure {
                index: self.recorded_index,
                config,
                recorded: true,
            };
        }
        let index = loop {
            let Some(index) = self.search.propose() else {
                return Work::Done;
            };
            match self.shard {
                // Another shard's: proposed, never measured here.
                Some(s) if !s.owns(index) => self.search.report(index, None),
                _ => break index,
            }
        };
        let config = self.space.config(index);
        if let Some(reason) = self.space.rules.skip_reason(&config) {
            self.search.report(index, None);
            return Work::Skip {
                index,
                trial: Box::new(Trial::refused(config, Status::Skipped, reason)),
            };
        }
        self.measured += 1;
        Work::Measure {
            index: Some(index),
            config,
            recorded: false,
        }
    }

    /// A configuration handed out came back unmeasured (its engine was lost through no fault
    /// of its own): it is handed out again, unless that happened [`MAX_RETURNS`] times (false).
    pub fn give_back(&mut self, index: Option<u64>, config: Config, recorded: bool) -> bool {
        let n = self.returns.entry(config).or_insert(0);
        *n += 1;
        if *n >= MAX_RETURNS {
            return false;
        }
        self.requeue(index, config, recorded);
        true
    }

    /// A configuration handed out came back unmeasured and the fault was certainly its
    /// engine's (it broke the protocol): handed out again, uncounted. The worker counts the
    /// failure against its engines instead, which bounds how often this happens.
    pub fn requeue(&mut self, index: Option<u64>, config: Config, recorded: bool) {
        self.measured = self.measured.saturating_sub(1);
        self.returned.push_back((index, config, recorded));
    }

    /// A finished configuration's cost (by the objective) goes to the search.
    pub fn report(&mut self, index: Option<u64>, trial: &Trial) {
        if let Some(i) = index {
            self.search.report(i, self.objective.of(trial));
        }
    }

    /// How many configurations this run expects to measure (for progress): of a shard, its
    /// own configurations, and the recorded one in shard 1.
    pub fn planned(
        space_len: u64,
        resumed: u64,
        budget: Option<u64>,
        recorded_index: Option<u64>,
        shard: Option<Shard>,
    ) -> u64 {
        let left = match shard {
            None => space_len.saturating_sub(resumed) + u64::from(recorded_index.is_none()),
            Some(s) => {
                let recorded_elsewhere = recorded_index.is_none_or(|i| !s.owns(i));
                s.count(space_len)
                    .saturating_sub(resumed)
                    .saturating_sub(u64::from(
                        recorded_index.is_some_and(|i| s.owns(i)) && s.k != 1,
                    ))
                    .saturating_add(u64::from(s.k == 1 && recorded_elsewhere))
            }
        };
        budget.map_or(left, |b| b.min(left))
    }
}
