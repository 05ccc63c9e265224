//! When to stop sampling a configuration, after nvbench's "stdrel" criterion: at least
//! `min_samples` samples and `min_gpu_time` seconds of kernel time, then stop once the relative
//! standard deviation is under `max_noise`; always stop at `max_samples` or `timeout` seconds.
//! A fixed sample count is `min_samples == max_samples` with no noise target. Pure: tested
//! without a GPU.

/// The timing kernels replay uses (a blocking kernel and a clock probe), as PTX, for programs
/// that must time the same way (`rr-tui repro`'s reproducers).
pub use rr_cuda::timing::PTX as TIMING_PTX;

use serde::{Deserialize, Serialize};

use super::stats::Stats;

/// One measured launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// CUDA-event time of the kernel (queued behind a blocking kernel, so the launch latency is
    /// not in it).
    pub kernel_ns: f64,
    /// Host time from releasing the queued kernel to the end of the synchronisation (the clock
    /// probe's own time taken out).
    pub host_ns: f64,
    /// Untimed restore before the launch (memory, globals, and the L2 flush when cold).
    pub restore_ns: f64,
    /// The SM clock measured just after the kernel (None without the timing probes).
    pub clock_mhz: Option<f64>,
}

/// When adaptive sampling may stop (nvbench's "stdrel" criterion).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoiseTarget {
    /// Relative standard deviation to reach (0.005 = 0.5 %); None: no target (a fixed count).
    pub max_noise: Option<f64>,
    /// Kept samples to take before the noise may stop sampling.
    pub min_samples: u32,
    /// Kernel time to accumulate before the noise may stop sampling, in seconds.
    pub min_gpu_time: f64,
    /// Wall time after which sampling stops whatever the noise, in seconds.
    pub timeout: f64,
}

impl Default for NoiseTarget {
    /// nvbench's defaults scaled for sweeps: 0.5 % after 10 samples, at most 2 s.
    fn default() -> NoiseTarget {
        NoiseTarget {
            max_noise: Some(0.005),
            min_samples: 10,
            min_gpu_time: 0.0,
            timeout: 2.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimingPolicy {
    /// Flush the L2 cache before each sample (outside the timed interval).
    pub cold: bool,
    pub target: NoiseTarget,
    /// Kept samples after which sampling stops whatever the noise.
    pub max_samples: u32,
    /// A sample whose SM clock is below this share of the device's rated clock was throttled
    /// (or the GPU was not yet clocked up) and is discarded.
    pub throttle: f64,
}

/// nvbench's throttle threshold: 75 % of the rated SM clock.
pub const THROTTLE_SHARE: f64 = 0.75;

impl TimingPolicy {
    /// Sample until `target` is met (or `max_samples`, or its timeout).
    pub fn adaptive(cold: bool, target: NoiseTarget, max_samples: u32) -> TimingPolicy {
        TimingPolicy {
            cold,
            target,
            max_samples: max_samples.max(1),
            throttle: THROTTLE_SHARE,
        }
    }

    /// Exactly `n` kept samples (throttled samples are retaken until a 60 s timeout).
    pub fn fixed(n: u32, cold: bool) -> TimingPolicy {
        TimingPolicy {
            cold,
            target: NoiseTarget {
                max_noise: None,
                min_samples: n.max(1),
                min_gpu_time: 0.0,
                timeout: 60.0,
            },
            max_samples: n.max(1),
            throttle: THROTTLE_SHARE,
        }
    }

    /// Whether a sample at `clock_mhz` ran throttled on a device rated `reference_mhz`.
    pub fn throttled(&self, clock_mhz: Option<f64>, reference_mhz: f64) -> bool {
        clock_mhz.is_some_and(|c| reference_mhz > 0.0 && c < self.throttle * reference_mhz)
    }

    /// Whether to stop after the samples so far (`elapsed` wall seconds).
    pub fn stop(&self, m: &Measurement, elapsed: f64) -> Option<StopReason> {
        let n = m.samples.len() as u32;
        if n >= self.max_samples {
            return Some(StopReason::MaxSamples);
        }
        if elapsed >= self.target.timeout {
            return Some(StopReason::Timeout);
        }
        // A GPU that stays throttled must not keep sampling (and storing samples) for ever.
        if m.throttled.len() as u64 >= u64::from(self.max_samples.max(MAX_THROTTLED)) {
            return Some(StopReason::Throttled);
        }
        let t = &self.target;
        let target = t.max_noise?;
        if n < t.min_samples.max(2) || m.sum_ns / 1e9 < t.min_gpu_time {
            return None;
        }
        if m.noise() <= target {
            return Some(StopReason::Noise);
        }
        // nvbench's second rule: a kernel whose noise stays above the target stops once the
        // noise estimate itself has settled (its last 64 values vary by under 5 %): more
        // samples would not change the answer, only cost time.
        let recent = m.noise_history.len().checked_sub(STABLE_WINDOW)?;
        let window = Stats::of(&m.noise_history[recent..]);
        (window.mean > 0.0 && window.stddev / window.mean < STABLE_SPREAD)
            .then_some(StopReason::Stable)
    }
}

/// Throttled samples after which sampling stops (unless the policy allows more samples).
const MAX_THROTTLED: u32 = 1000;

/// How many noise estimates the stability rule looks at, and how little they may vary.
const STABLE_WINDOW: usize = 64;
const STABLE_SPREAD: f64 = 0.05;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The noise fell under the target.
    #[default]
    Noise,
    /// The noise stayed above the target but stopped changing.
    Stable,
    MaxSamples,
    Timeout,
    /// Too many samples in a row ran below the throttle threshold.
    Throttled,
}

/// The samples of one configuration.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// Kept samples (add them with [`Measurement::keep`]).
    pub samples: Vec<Sample>,
    /// Running sums of the kept kernel times, so the noise costs O(1) per sample.
    sum_ns: f64,
    sum_sq: f64,
    /// The noise after each kept sample from the second on.
    noise_history: Vec<f64>,
    /// Samples discarded as throttled.
    pub throttled: Vec<Sample>,
    /// Every sample was throttled: `samples` holds them anyway.
    pub all_throttled: bool,
    pub stop: StopReason,
}

impl Measurement {
    /// Keep a sample (not throttled).
    pub fn keep(&mut self, s: Sample) {
        self.samples.push(s);
        self.sum_ns += s.kernel_ns;
        self.sum_sq += s.kernel_ns * s.kernel_ns;
        if self.samples.len() >= 2 {
            let n = self.noise();
            self.noise_history.push(n);
        }
    }

    pub fn kernel(&self) -> Stats {
        Stats::of(&self.samples.iter().map(|s| s.kernel_ns).collect::<Vec<_>>())
    }

    /// Relative standard deviation of the kept kernel times (infinite below two samples).
    pub fn noise(&self) -> f64 {
        let n = self.samples.len() as f64;
        let mean = self.sum_ns / n;
        if n < 2.0 || mean <= 0.0 {
            return f64::INFINITY;
        }
        let var = ((self.sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
        var.sqrt() / mean
    }

    /// The SM clock over the kept samples, in MHz.
    pub fn clock(&self) -> Stats {
        Stats::of(
            &self
                .samples
                .iter()
                .filter_map(|s| s.clock_mhz)
                .collect::<Vec<_>>(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ns: f64) -> Sample {
        Sample {
            kernel_ns: ns,
            host_ns: ns,
            restore_ns: 0.0,
            clock_mhz: Some(1980.0),
        }
    }

    #[test]
    fn stops_on_noise_after_the_minimum_and_always_at_the_limits() {
        let p = TimingPolicy::adaptive(true, NoiseTarget::default(), 10_000);
        let mut m = Measurement::default();
        for _ in 0..9 {
            m.keep(sample(1000.0));
            assert_eq!(p.stop(&m, 0.1), None, "below min_samples");
        }
        m.keep(sample(1000.0));
        assert_eq!(p.stop(&m, 0.1), Some(StopReason::Noise));
        let mut noisy = Measurement::default();
        for i in 0..50 {
            noisy.keep(sample(if i % 2 == 0 { 900.0 } else { 1100.0 }));
        }
        assert_eq!(p.stop(&noisy, 0.1), None, "10 % noise keeps sampling");
        for i in 0..150 {
            noisy.keep(sample(if i % 2 == 0 { 900.0 } else { 1100.0 }));
        }
        assert_eq!(
            p.stop(&noisy, 0.1),
            Some(StopReason::Stable),
            "a noise estimate that settled at 10 % stops sampling"
        );
        assert_eq!(p.stop(&noisy, 2.5), Some(StopReason::Timeout));
        let f = TimingPolicy::fixed(10, false);
        let mut m = Measurement::default();
        for _ in 0..9 {
            m.keep(sample(1.0));
        }
        assert_eq!(f.stop(&m, 0.0), None);
        m.keep(sample(1.0));
        assert_eq!(f.stop(&m, 0.0), Some(StopReason::MaxSamples));
        assert!((noisy.noise() - 0.1005).abs() < 1e-3);
    }
}
