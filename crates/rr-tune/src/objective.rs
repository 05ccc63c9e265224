//! What a sweep minimises (`tune --objective`), and the Pareto front of time against energy.
//!
//! Time is the median kernel time; energy the joules per execution NVML measured (`--energy`);
//! the energy-delay product (EDP) weighs both, joules × seconds, as Kernel Tuner's
//! multi-objective runs do. A configuration is on the front when no other verified one is at
//! least as fast *and* at least as frugal while strictly better in one of the two.

use serde::{Deserialize, Serialize};

use rr_engine::replay::variant::trial::Trial;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// The median kernel time.
    #[default]
    Time,
    /// Joules per execution.
    Energy,
    /// Energy-delay product: joules × seconds per execution.
    Edp,
}

/// Its name, as `--objective` takes it.
impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Objective {
    pub const ALL: [Objective; 3] = [Objective::Time, Objective::Energy, Objective::Edp];

    pub fn name(self) -> &'static str {
        match self {
            Objective::Time => "time",
            Objective::Energy => "energy",
            Objective::Edp => "edp",
        }
    }

    pub fn parse(s: &str) -> Option<Objective> {
        Self::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Whether measuring it needs the energy counter.
    pub fn needs_energy(self) -> bool {
        self != Objective::Time
    }

    /// The value minimised for `t`: `None` unless it verified and what this objective needs
    /// was measured.
    pub fn of(self, t: &Trial) -> Option<f64> {
        let ns = t.cost()?;
        match self {
            Objective::Time => Some(ns),
            Objective::Energy => t.joules(),
            Objective::Edp => t.joules().map(|j| j * ns / 1e9),
        }
    }

    /// How `t` ranks: by the objective, ties by time (of two configurations equally frugal,
    /// the faster is better, and on the Pareto front).
    pub fn rank(self, t: &Trial) -> Option<(f64, f64)> {
        Some((self.of(t)?, t.cost()?))
    }

    /// Whether rank `a` comes before (or with) rank `b`.
    pub fn cmp_rank(a: (f64, f64), b: (f64, f64)) -> std::cmp::Ordering {
        a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1))
    }

    /// `v` (a value of [`Objective::of`]) as the report prints it.
    pub fn describe(self, v: f64) -> String {
        match self {
            Objective::Time => rr_engine::replay::stats::ns_text(v),
            Objective::Energy => rr_engine::replay::outcome::joules_text(v),
            Objective::Edp => format!("{v:.3e} J·s"),
        }
    }
}

/// The indices of `trials` on the Pareto front of median time against energy per execution,
/// fastest first. Trials without both (failed, or measured without `--energy`) are left out;
/// of exact ties on both, the first is kept.
pub fn pareto_front(trials: &[Trial]) -> Vec<usize> {
    let mut points: Vec<(usize, f64, f64)> = trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| Some((i, t.cost()?, t.joules()?)))
        .collect();
    // Fastest first; of equal times, the most frugal first: then a point is on the front
    // exactly when it uses less energy than every point before it.
    points.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)));
    let mut front = Vec::new();
    let mut least = f64::INFINITY;
    for (i, _, joules) in points {
        if joules < least {
            least = joules;
            front.push(i);
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::{Status, TrialEnergy};
    use crate::Config;
    use rr_engine::replay::stats::Stats;

    fn trial(block: u32, ns: f64, joules: Option<f64>, status: Status) -> Trial {
        let mut t = Trial::new(
            Config {
                grid: [1, 1, 1],
                block: [block, 1, 1],
                shared_mem: 0,
                max_registers: None,
                variant: None,
            },
            status,
        );
        t.kernel_ns = Some(Stats::of(&[ns]));
        t.energy = joules.map(|j| TrialEnergy {
            joules: j,
            power_w: 300.0,
            noise: 0.01,
            windows: 5,
        });
        t
    }

    #[test]
    fn the_front_holds_the_fastest_and_the_most_frugal_and_nothing_dominated() {
        let trials = vec![
            trial(32, 100.0, Some(5.0), Status::Ok),           // fastest
            trial(64, 150.0, Some(3.0), Status::Ok),           // between
            trial(128, 160.0, Some(4.0), Status::Ok),          // dominated by 64
            trial(256, 300.0, Some(1.0), Status::Ok),          // most frugal
            trial(512, 50.0, Some(0.1), Status::VerifyFailed), // not verified
            trial(1024, 120.0, None, Status::Ok),              // no energy
            trial(16, 100.0, Some(5.0), Status::Ok),           // a tie with the fastest
        ];
        assert_eq!(pareto_front(&trials), vec![0, 1, 3]);
        assert!(pareto_front(&[]).is_empty());
    }

    #[test]
    fn objectives_minimise_what_they_name() {
        let t = trial(32, 2e6, Some(0.5), Status::Ok);
        assert_eq!(Objective::Time.of(&t), Some(2e6));
        assert_eq!(Objective::Energy.of(&t), Some(0.5));
        assert!((Objective::Edp.of(&t).unwrap() - 1e-3).abs() < 1e-12);
        let no_energy = trial(32, 2e6, None, Status::Ok);
        assert_eq!(Objective::Energy.of(&no_energy), None);
        assert_eq!(Objective::Edp.of(&no_energy), None);
        for o in Objective::ALL {
            assert_eq!(Objective::parse(o.name()), Some(o));
        }
        assert_eq!(Objective::parse("power"), None);
        // Equally frugal: the faster ranks first.
        let slow = trial(64, 3e6, Some(0.5), Status::Ok);
        let (a, b) = (
            Objective::Energy.rank(&t).unwrap(),
            Objective::Energy.rank(&slow).unwrap(),
        );
        assert!(Objective::cmp_rank(a, b).is_lt());
    }
}
