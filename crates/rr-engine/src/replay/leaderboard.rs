//! The A/B leaderboard: candidates judged on every recorded instance of a kernel (`rr-tui ab`,
//! the explorer's `C` on several candidates). Its JSON is the versioned schema
//! [`SCHEMA`] (docs/ab-testing.md): fields are only ever added within one version.
//!
//! Per instance, the ratio is [`super::ab::judge`]'s: the median of the paired ratios
//! candidate/recorded, with the sign test's interval. Over instances, the speed-up is the
//! geometric mean of the per-instance speed-ups (recorded time / candidate time), and its 95 %
//! interval is Student's t-interval on their logarithms: it says how far the speed-up holds
//! across the recorded inputs, which is what a rewritten kernel tuned on one input gets wrong.
//! With one instance, that instance's own (sign-test) interval is used.

use rr_format::text::visible;
use serde::{Deserialize, Serialize};

use super::ab::{AbOutcome, MIN_THRESHOLD};
use super::guards::Plausibility;

/// The schema name and version of `rr-tui ab --json`.
pub const SCHEMA: &str = "rr-tui.ab/1";

/// What happened to one candidate on one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Verified before and after timing, and its time is possible.
    Verified,
    /// Its result differs from the recorded output.
    Wrong,
    /// Faster than the bytes it must write allow ([`super::guards::plausibility`]).
    Implausible,
    /// It could not run (refused, failed to compile or launch, faulted).
    Error,
}

/// One candidate on one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceResult {
    /// The descriptor, relative to the record directory.
    pub instance: String,
    pub status: Status,
    /// Why it is not verified: the first line of what differs, or the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Recorded time / candidate time (> 1: faster), from `compare`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    /// Its 95 % interval (from the sign test's interval of the ratio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup_ci: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<AbOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plausibility: Option<Plausibility>,
    /// Bytes the recorded kernel changed, and the bytes poisoned before each candidate run
    /// (0 when poisoning was off for this instance: see `notes`).
    pub changed_bytes: u64,
    pub poisoned_bytes: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl InstanceResult {
    /// A result that is an error before anything was measured.
    pub fn error(instance: &str, why: impl Into<String>) -> InstanceResult {
        InstanceResult {
            instance: instance.to_string(),
            status: Status::Error,
            reason: Some(why.into()),
            speedup: None,
            speedup_ci: None,
            compare: None,
            plausibility: None,
            changed_bytes: 0,
            poisoned_bytes: 0,
            notes: Vec::new(),
        }
    }

    /// This outcome in a few words, strings from files made visible: `ab`'s progress lines and
    /// leaderboard and the explorer's leaderboard detail show the same line.
    pub fn line(&self) -> String {
        let what = match self.status {
            Status::Verified => "verified",
            Status::Wrong => "WRONG",
            Status::Implausible => "IMPLAUSIBLE",
            Status::Error => "ERROR",
        };
        let speed = match (self.speedup, self.speedup_ci) {
            (Some(s), Some(ci)) => format!(", speed-up {} [{:.3}–{:.3}]", times(s), ci[0], ci[1]),
            _ => String::new(),
        };
        let why = self
            .reason
            .as_deref()
            .map(|w| format!(": {}", visible(w)))
            .unwrap_or_default();
        format!("{}: {what}{speed}{why}", visible(&self.instance))
    }

    /// Fill the speed-up from an A/B comparison.
    pub fn with_compare(mut self, o: AbOutcome) -> InstanceResult {
        self.speedup = Some(1.0 / o.ratio);
        self.speedup_ci = Some([1.0 / o.ci[1], 1.0 / o.ci[0]]);
        self.compare = Some(o);
        self
    }
}

/// A speed-up as the leaderboard's lines write it (`1.234×`).
pub fn times(x: f64) -> String {
    format!("{x:.3}×")
}

/// The candidate's verdict over all instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overall {
    /// Verified on every instance, and the speed-up interval lies above 1 + the threshold.
    Faster,
    Slower,
    Same,
    Undecided,
    /// Some instance did not verify or could not run.
    Rejected,
    /// Verified, but some instance's time is impossible for the bytes it must write.
    Implausible,
}

impl Overall {
    pub fn describe(&self) -> &'static str {
        match self {
            Overall::Faster => "faster",
            Overall::Slower => "slower",
            Overall::Same => "same within noise",
            Overall::Undecided => "undecided",
            Overall::Rejected => "rejected",
            Overall::Implausible => "implausible",
        }
    }
}

/// The worst instance: the smallest speed-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worst {
    pub instance: String,
    pub speedup: f64,
}

/// One candidate's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateRow {
    /// The candidate file, as given.
    pub candidate: String,
    /// Instances it verified on, of `total`.
    pub verified: usize,
    pub total: usize,
    /// The geometric mean of the per-instance speed-ups, and its 95 % interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_speedup: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_ci: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst: Option<Worst>,
    pub verdict: Overall,
    pub instances: Vec<InstanceResult>,
}

impl CandidateRow {
    /// Summarise a candidate's per-instance results (in instance order).
    pub fn of(candidate: &str, instances: Vec<InstanceResult>) -> CandidateRow {
        let total = instances.len();
        let verified = instances
            .iter()
            .filter(|r| r.status == Status::Verified)
            .count();
        let speedups: Vec<&InstanceResult> =
            instances.iter().filter(|r| r.speedup.is_some()).collect();
        let logs: Vec<f64> = speedups
            .iter()
            .filter_map(|r| r.speedup)
            .map(f64::ln)
            .collect();
        let (geomean, ci) = match speedups.as_slice() {
            [] => (None, None),
            [one] => (one.speedup, one.speedup_ci),
            _ => {
                let (mean, half) = t_interval(&logs);
                (
                    Some(mean.exp()),
                    Some([(mean - half).exp(), (mean + half).exp()]),
                )
            }
        };
        let worst = speedups
            .iter()
            .filter_map(|r| Some((r, r.speedup?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(r, s)| Worst {
                instance: r.instance.clone(),
                speedup: s,
            });
        let any = |s: Status| instances.iter().any(|r| r.status == s);
        let verdict = if total == 0 || any(Status::Wrong) || any(Status::Error) {
            Overall::Rejected
        } else if any(Status::Implausible) {
            Overall::Implausible
        } else {
            ci.map_or(Overall::Undecided, judge_interval)
        };
        CandidateRow {
            candidate: candidate.to_string(),
            verified,
            total,
            geomean_speedup: geomean,
            geomean_ci: ci,
            worst,
            verdict,
            instances,
        }
    }

    /// Whether it verified on every instance (what the exit status says).
    pub fn passed(&self) -> bool {
        self.total > 0 && self.verified == self.total
    }
}

/// A speed-up interval against 1 ± the smallest threshold a single comparison uses
/// ([`MIN_THRESHOLD`]), as [`super::ab::judge`] reads a ratio's.
fn judge_interval(ci: [f64; 2]) -> Overall {
    let (low, high) = (1.0 / (1.0 + MIN_THRESHOLD), 1.0 + MIN_THRESHOLD);
    if ci[0] >= low && ci[1] <= high {
        Overall::Same
    } else if ci[0] > high {
        Overall::Faster
    } else if ci[1] < low {
        Overall::Slower
    } else {
        Overall::Undecided
    }
}

/// The mean of `v` (at least two values) and the half-width of its 95 % t-interval.
pub fn t_interval(v: &[f64]) -> (f64, f64) {
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t_975(n - 1) * (var / n as f64).sqrt())
}

/// Student's t 97.5 % quantile for `df` degrees of freedom (the normal's 1.96 beyond 30).
fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.96,
    }
}

/// The whole leaderboard, as `--json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leaderboard {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The record directory and the kernel pattern.
    pub dir: String,
    pub kernel: String,
    /// The instances every candidate ran on.
    pub instances: Vec<String>,
    /// Best first: verified on every instance before not, then by geometric-mean speed-up.
    pub candidates: Vec<CandidateRow>,
    /// Whether at least one candidate verified on every instance (exit status 0).
    pub passed: bool,
}

impl Leaderboard {
    pub fn new(
        dir: &str,
        kernel: &str,
        instances: Vec<String>,
        mut rows: Vec<CandidateRow>,
    ) -> Leaderboard {
        let rank = |r: &CandidateRow| (!r.passed(), -r.geomean_speedup.unwrap_or(0.0));
        rows.sort_by(|a, b| {
            let (x, y) = (rank(a), rank(b));
            x.0.cmp(&y.0).then(x.1.total_cmp(&y.1))
        });
        let passed = rows.iter().any(CandidateRow::passed);
        Leaderboard {
            schema: SCHEMA.into(),
            dir: dir.into(),
            kernel: kernel.into(),
            instances,
            candidates: rows,
            passed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::ab::judge;

    fn timed(name: &str, recorded: f64, candidate: f64) -> InstanceResult {
        let a: Vec<f64> = (0..20)
            .map(|i| recorded * (1.0 + i as f64 * 1e-4))
            .collect();
        let b: Vec<f64> = (0..20)
            .map(|i| candidate * (1.0 + i as f64 * 1e-4))
            .collect();
        InstanceResult {
            status: Status::Verified,
            reason: None,
            ..InstanceResult::error(name, "")
        }
        .with_compare(judge(&a, &b).unwrap())
    }

    #[test]
    fn the_geometric_mean_and_its_t_interval() {
        // Speed-ups 2, 1 and 0.5: geometric mean 1, the interval wide and across 1.
        let row = CandidateRow::of(
            "k.cu",
            vec![
                timed("a", 200.0, 100.0),
                timed("b", 100.0, 100.0),
                timed("c", 100.0, 200.0),
            ],
        );
        let g = row.geomean_speedup.unwrap();
        assert!((g - 1.0).abs() < 1e-3, "{g}");
        let ci = row.geomean_ci.unwrap();
        // ln 2 × t(2) × 1/√3 = 0.693 × 4.303 / 1.732.
        let half = 2f64.ln() * 4.303 / 3f64.sqrt();
        assert!((ci[1].ln() - half).abs() < 1e-3, "{ci:?}");
        assert_eq!(row.verdict, Overall::Undecided);
        assert_eq!(row.worst.as_ref().unwrap().instance, "c");
        assert!(row.passed());
        // Consistently twice as fast: faster.
        let fast = CandidateRow::of(
            "f.cu",
            vec![timed("a", 200.0, 100.0), timed("b", 210.0, 100.0)],
        );
        assert_eq!(fast.verdict, Overall::Faster, "{fast:?}");
        // One instance: its own interval.
        let one = CandidateRow::of("o.cu", vec![timed("a", 100.0, 50.0)]);
        assert!((one.geomean_speedup.unwrap() - 2.0).abs() < 1e-6);
        assert_eq!(one.verdict, Overall::Faster);
    }

    #[test]
    fn one_bad_instance_rejects_the_candidate() {
        let mut wrong = timed("b", 100.0, 10.0);
        wrong.status = Status::Wrong;
        let row = CandidateRow::of("k.cu", vec![timed("a", 100.0, 50.0), wrong]);
        assert_eq!((row.verified, row.total), (1, 2));
        assert_eq!(row.verdict, Overall::Rejected);
        assert!(!row.passed());
        let mut fast = timed("b", 100.0, 1.0);
        fast.status = Status::Implausible;
        let row = CandidateRow::of("k.cu", vec![timed("a", 100.0, 50.0), fast]);
        assert_eq!(row.verdict, Overall::Implausible);
        let none = CandidateRow::of("e.cu", vec![InstanceResult::error("a", "did not compile")]);
        assert_eq!(none.verdict, Overall::Rejected);
        assert_eq!(none.geomean_speedup, None);
    }

    #[test]
    fn the_board_ranks_passing_candidates_first_and_round_trips() {
        let mut wrong = timed("a", 100.0, 10.0);
        wrong.status = Status::Wrong;
        let board = Leaderboard::new(
            "rec",
            "scale",
            vec!["a".into()],
            vec![
                CandidateRow::of("cheat.cu", vec![wrong]),
                CandidateRow::of("slow.cu", vec![timed("a", 100.0, 150.0)]),
                CandidateRow::of("fast.cu", vec![timed("a", 100.0, 50.0)]),
            ],
        );
        let order: Vec<&str> = board
            .candidates
            .iter()
            .map(|c| c.candidate.as_str())
            .collect();
        assert_eq!(order, ["fast.cu", "slow.cu", "cheat.cu"]);
        assert!(board.passed);
        let json = serde_json::to_value(&board).unwrap();
        assert_eq!(json["schema"], "rr-tui.ab/1");
        assert_eq!(json["candidates"][0]["verdict"], "faster");
        assert_eq!(json["candidates"][2]["instances"][0]["status"], "wrong");
        let back: Leaderboard = serde_json::from_value(json).unwrap();
        assert_eq!(back, board);
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(30), 2.042);
        assert_eq!(t_975(500), 1.96);
        let (m, h) = t_interval(&[1.0, 1.0, 1.0]);
        assert_eq!((m, h), (1.0, 0.0));
    }
}
