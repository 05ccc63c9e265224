//! The plain values replay's events and reports carry: a verification's outcome, an A/B
//! replay's verdict, and an energy measurement with the policy it ran under. A leaf: it names
//! nothing of the session, so the protocol ([`super::protocol`]) and the reports can carry these
//! without depending on what produces them ([`super::verify`], [`super::ab`],
//! [`super::energy`], which re-export them under their old paths).

use serde::{Deserialize, Serialize};

use super::stats::Stats;
use crate::diff::regions::RegionReport;

/// What comparing the replayed memory with the recorded output found (the `verify` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyOutcome {
    pub passed: bool,
    /// "bytes" or the typed comparison, e.g. "f32 atol=0 rtol=0.00001 ulp=0".
    pub mode: String,
    pub expected_len: u64,
    pub replayed_len: u64,
    /// Bytes present on one side only (the lengths differ): never verified.
    pub missing_bytes: u64,
    /// Bytes that differ over the common length (exact; ranges below are merged).
    pub differing_bytes: u64,
    pub differing_ranges: usize,
    /// The first differing byte ranges, `[offset, length]`.
    pub first_ranges: Vec<[u64; 2]>,
    /// Regions (arguments, segments) with differences, within tolerance included.
    pub regions: Vec<RegionReport>,
    /// Shown equal by fingerprints computed on the GPU, without copying the memory back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_device: bool,
    /// The memory an A/B replay's candidate left (otherwise the recorded kernel's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub candidate: bool,
}

/// An A/B replay's verdict on the candidate ([`super::ab::judge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval lies below 1 by more than the threshold.
    Faster,
    /// The whole interval lies above 1 by more than the threshold.
    Slower,
    /// The whole interval lies within the threshold of 1.
    Same,
    /// The interval crosses the threshold: more pairs may decide.
    Undecided,
}

impl Verdict {
    pub fn describe(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same within noise",
            Verdict::Undecided => "undecided",
        }
    }
}

/// The comparison of one A/B run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbOutcome {
    pub pairs: usize,
    /// Kernel times of the recorded kernel and of the candidate (ns).
    pub baseline_ns: Stats,
    pub candidate_ns: Stats,
    /// Candidate time over recorded time: the median of the paired ratios (< 1: faster).
    pub ratio: f64,
    /// Its 95 % interval.
    pub ci: [f64; 2],
    /// Relative noise (robust spread over the median) of each side: `[baseline, candidate]`.
    pub noise: [f64; 2],
    /// Ratios within this of 1 are "the same".
    pub threshold: f64,
    pub verdict: Verdict,
}

impl AbOutcome {
    /// One line: "candidate 0.842× the recorded kernel [0.838–0.846]: faster".
    pub fn describe(&self) -> String {
        format!(
            "candidate {:.3}× the recorded kernel's time [95 % CI {:.3}–{:.3}, {} pairs; noise {:.2} % / {:.2} %]: {}",
            self.ratio,
            self.ci[0],
            self.ci[1],
            self.pairs,
            self.noise[0] * 100.0,
            self.noise[1] * 100.0,
            self.verdict.describe()
        )
    }
}

/// How long a measurement runs at least, and at most.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EnergyPolicy {
    /// At least this long (seconds)…
    pub min_seconds: f64,
    /// …and at least this many counter windows while busy…
    pub min_windows: usize,
    /// …but never longer than this.
    pub max_seconds: f64,
}

impl EnergyPolicy {
    /// A sweep's: each configuration at least `seconds` and five counter windows (~0.5 s),
    /// at most three times as long.
    pub fn sweep(seconds: f64) -> EnergyPolicy {
        EnergyPolicy {
            min_seconds: seconds,
            min_windows: 5,
            max_seconds: (seconds * 3.0).max(seconds + 1.0),
        }
    }
}

impl EnergyPolicy {
    /// A policy a run can have (one read from a report may hold anything).
    pub fn is_plausible(&self) -> bool {
        (0.2..=3600.0).contains(&self.min_seconds)
            && (self.min_seconds..=36_000.0).contains(&self.max_seconds)
            && self.min_windows <= 100_000
    }
}

impl Default for EnergyPolicy {
    fn default() -> Self {
        // Twenty windows of ~100 ms: the span's ends are known to one poll (~4 ms), 0.2 % of
        // it, and the noise has four half-second groups to be judged from.
        EnergyPolicy {
            min_seconds: 2.0,
            min_windows: 20,
            max_seconds: 10.0,
        }
    }
}

/// One energy measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Energy {
    /// Energy per kernel execution, in joules.
    pub joules: f64,
    /// Average power while the kernel ran back to back, in watts.
    pub power_w: f64,
    /// Relative spread (standard deviation over mean) of the power over half-second groups of
    /// counter windows (`NOISE_GROUP` in [`super::energy`]).
    pub noise: f64,
    /// Counter windows the power is made of.
    pub windows: usize,
    /// Executions while measured, and the GPU time of each (ns; launch gaps included).
    pub executions: u64,
    pub execution_ns: f64,
    /// Seconds between the first and last counter moves used.
    pub seconds: f64,
    /// The counter's update interval (median, ms) and the host's polling interval (median,
    /// ms): the timing error of each window's ends.
    pub counter_interval_ms: f64,
    pub poll_ms: f64,
    /// The device's power before the run (idle), and its enforced power limit, in watts.
    pub idle_power_w: f64,
    pub power_limit_w: f64,
    /// SM and memory clocks sampled during the run (MHz).
    pub sm_clock_mhz: Stats,
    pub memory_clock_mhz: Stats,
}

impl Energy {
    /// "4.210 mJ per execution (312.4 W × 13.48 µs; noise 0.8 % over 20 counter windows …)".
    pub fn describe(&self) -> String {
        format!(
            "{} per execution ({:.1} W × {}; noise {:.1} % over {} counter windows of ~{:.0} ms, {:.2} s)",
            joules_text(self.joules),
            self.power_w,
            super::stats::ns_text(self.execution_ns),
            self.noise * 100.0,
            self.windows,
            self.counter_interval_ms,
            self.seconds
        )
    }

    /// "idle 71.3 W, limit 700 W; SM 1980 MHz (min 1965), memory 2619 MHz".
    pub fn conditions(&self) -> String {
        format!(
            "idle {:.1} W, power limit {:.0} W; SM clock median {:.0} MHz (min {:.0}), memory {:.0} MHz",
            self.idle_power_w,
            self.power_limit_w,
            self.sm_clock_mhz.median,
            self.sm_clock_mhz.min,
            self.memory_clock_mhz.median
        )
    }
}

/// Joules in the unit that reads best: J, mJ or µJ.
pub fn joules_text(j: f64) -> String {
    if j >= 1.0 {
        format!("{j:.3} J")
    } else if j >= 1e-3 {
        format!("{:.3} mJ", j * 1e3)
    } else {
        format!("{:.2} µJ", j * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joules_read_in_their_unit() {
        assert_eq!(joules_text(2.5), "2.500 J");
        assert_eq!(joules_text(0.0042), "4.200 mJ");
        assert_eq!(joules_text(3.1e-6), "3.10 µJ");
    }
}
