//! The sweep's shared state between GPU workers: which configuration comes next (the recorded
//! one first, then the strategy's picks), the budget and the time limit, and the costs the
//! strategy learns from. Configurations over a limit come out as skipped trials without
//! reaching an engine (and without using the budget).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rr_engine::tune::trial::index_of;
use rr_engine::tune::{Config, Search, Space, Status, Trial};

pub enum Work {
    Measure {
        index: Option<u64>,
        config: Config,
        recorded: bool,
    },
    Skip {
        index: u64,
        trial: Trial,
    },
    Done,
}

pub struct Scheduler {
    space: Space,
    search: Search,
    /// The recorded configuration, until a worker takes it.
    recorded: Option<Config>,
    recorded_index: Option<u64>,
    budget: Option<u64>,
    measured: u64,
    deadline: Option<Instant>,
    stop: Arc<AtomicBool>,
}

impl Scheduler {
    /// `done`: trials of a resumed run (never measured again). The recorded configuration is
    /// measured first unless `done` holds it.
    pub fn new(
        space: Space,
        search: Search,
        done: &[Trial],
        budget: Option<u64>,
        deadline: Option<Instant>,
        stop: Arc<AtomicBool>,
    ) -> Scheduler {
        let recorded_config = space.rules.recorded;
        let recorded_index = index_of(&space, &recorded_config);
        let mut s = Scheduler {
            space,
            search,
            recorded: Some(recorded_config),
            recorded_index,
            budget,
            measured: 0,
            deadline,
            stop,
        };
        for t in done {
            if t.recorded || t.config == recorded_config {
                s.recorded = None;
            }
            if let Some(i) = index_of(&s.space, &t.config) {
                s.search.known(i, t.cost());
            }
        }
        if let (Some(i), Some(_)) = (recorded_index, s.recorded) {
            // Measured as the baseline: the strategy must not propose it again.
            s.search.known(i, None);
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
        if let Some(config) = self.recorded.take() {
            self.measured += 1;
            return Work::Measure {
                index: self.recorded_index,
                config,
                recorded: true,
            };
        }
        let Some(index) = self.search.next() else {
            return Work::Done;
        };
        let config = self.space.config(index);
        if let Some(reason) = self.space.rules.skip_reason(&config) {
            self.search.report(index, None);
            return Work::Skip {
                index,
                trial: Trial::refused(config, Status::Skipped, reason),
            };
        }
        self.measured += 1;
        Work::Measure {
            index: Some(index),
            config,
            recorded: false,
        }
    }

    pub fn report(&mut self, index: Option<u64>, cost: Option<f64>) {
        if let Some(i) = index {
            self.search.report(i, cost);
        }
    }

    /// How many configurations this run expects to measure (for progress).
    pub fn planned(
        space_len: u64,
        resumed: u64,
        budget: Option<u64>,
        recorded_in_space: bool,
    ) -> u64 {
        let left = space_len.saturating_sub(resumed) + u64::from(!recorded_in_space);
        budget.map_or(left, |b| b.min(left))
    }
}
