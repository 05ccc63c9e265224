//! How samples are taken, shared by `replay` and `tune` (they differ only in defaults: replay
//! is hot with a fixed count, tune is cold and adaptive). In `replay`, any of the noise options
//! switches to adaptive sampling, with `--repetitions` as the most samples to take.

use clap::Args;
use rr_engine::replay::timing::NoiseTarget;
use rr_tune::job::SweepTiming;

#[derive(Debug, Args, Clone, Default, PartialEq)]
pub struct TimingArgs {
    /// Flush the L2 cache before each sample (tune's default).
    ///
    /// The flush is outside the timed interval.
    #[arg(long, conflicts_with = "hot", help_heading = "Timing")]
    pub cold: bool,
    /// Keep caches warm between samples (replay's default).
    #[arg(long, help_heading = "Timing")]
    pub hot: bool,
    /// Adaptive sampling: the noise to stop at, in percent.
    ///
    /// Sampling stops when the relative standard deviation of the kernel time is under PCT
    /// percent. Any of these four options turns adaptive sampling on where it is not the
    /// default. Samples taken while the SM clock ran below 75 % of its rating are discarded
    /// [default: 0.5].
    #[arg(long, value_name = "PCT", value_parser = positive_f64, allow_negative_numbers = true, help_heading = "Timing")]
    pub max_noise: Option<f64>,
    /// Adaptive sampling: samples before the noise may stop it.
    ///
    /// Kept samples, at least 2 [default: 10].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(rr_engine::replay::request::LEAST_MIN_SAMPLES as i64..), allow_negative_numbers = true, help_heading = "Timing")]
    pub min_samples: Option<u32>,
    /// Adaptive sampling: kernel time before the noise may stop it.
    ///
    /// Kernel time to accumulate, in seconds [default: 0].
    #[arg(long, value_name = "SECONDS", value_parser = seconds_or_zero, allow_negative_numbers = true, help_heading = "Timing")]
    pub min_time: Option<f64>,
    /// Adaptive sampling: stop after this long.
    ///
    /// Seconds, whatever the noise [default: 2].
    #[arg(long, value_name = "SECONDS", value_parser = seconds, allow_negative_numbers = true, help_heading = "Timing")]
    pub timeout: Option<f64>,
}

impl TimingArgs {
    pub fn cold(&self, default: bool) -> bool {
        if self.cold {
            true
        } else if self.hot {
            false
        } else {
            default
        }
    }

    /// The flags as a job holds them (`--cold`/`--hot` as given, or neither).
    pub fn sweep(&self) -> SweepTiming {
        SweepTiming {
            cold: (self.cold || self.hot).then_some(self.cold),
            max_noise: self.max_noise,
            min_samples: self.min_samples,
            min_time: self.min_time,
            timeout: self.timeout,
        }
    }

    /// Whether any option of the adaptive stop rule was given.
    pub fn adaptive(&self) -> bool {
        self.sweep().adaptive()
    }

    /// The stop rule: the options given over nvbench-like defaults (one rule with the job's).
    pub fn target(&self) -> NoiseTarget {
        self.sweep().target()
    }
}

pub(crate) fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "{}: expected a positive number",
            rr_format::text::quoted(s)
        )),
    }
}

/// Sampling one configuration for more than an hour is a mistake, not a measurement (the job's
/// limit, [`rr_engine::replay::ReplayRequest::check`]).
pub(crate) const MAX_SECONDS: f64 = rr_engine::replay::request::MAX_SAMPLING_SECONDS;

fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= MAX_SECONDS => Ok(v),
        _ => Err(format!(
            "{}: expected seconds, above 0 and at most {MAX_SECONDS}",
            rr_format::text::quoted(s)
        )),
    }
}

fn seconds_or_zero(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=MAX_SECONDS).contains(&v) => Ok(v),
        _ => Err(format!(
            "{}: expected seconds, from 0 to {MAX_SECONDS}",
            rr_format::text::quoted(s)
        )),
    }
}
