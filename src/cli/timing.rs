//! How samples are taken, shared by `replay` and `tune` (they differ only in defaults: replay
//! is hot with a fixed count, tune is cold and adaptive).

use clap::Args;
use rr_engine::replay::timing::NoiseTarget;

#[derive(Debug, Args, Clone, Default, PartialEq)]
pub struct TimingArgs {
    /// Flush the L2 cache before each sample, outside the timed interval (tune's default).
    #[arg(long, conflicts_with = "hot", help_heading = "Timing")]
    pub cold: bool,
    /// Keep caches warm between samples (replay's default).
    #[arg(long, help_heading = "Timing")]
    pub hot: bool,
    /// Sample until the relative standard deviation of the kernel time is under PCT percent
    /// [default 0.5]; samples taken while the SM clock ran below 75 % of its rating are discarded.
    #[arg(long, value_name = "PCT", value_parser = positive_f64, help_heading = "Timing")]
    pub max_noise: Option<f64>,
    /// Kept samples before the noise may stop sampling [default 10].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..), help_heading = "Timing")]
    pub min_samples: Option<u32>,
    /// Kernel time to accumulate before the noise may stop sampling [default 0].
    #[arg(long, value_name = "SECONDS", value_parser = non_negative_f64, help_heading = "Timing")]
    pub min_time: Option<f64>,
    /// Stop sampling one configuration after this long whatever the noise [default 2].
    #[arg(long, value_name = "SECONDS", value_parser = positive_f64, help_heading = "Timing")]
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

    /// Whether any option of the adaptive stop rule was given.
    pub fn adaptive(&self) -> bool {
        self.max_noise.is_some()
            || self.min_samples.is_some()
            || self.min_time.is_some()
            || self.timeout.is_some()
    }

    /// The stop rule: the options given over nvbench-like defaults.
    pub fn target(&self) -> NoiseTarget {
        let d = NoiseTarget::default();
        NoiseTarget {
            max_noise: self.max_noise.map(|p| p / 100.0).or(d.max_noise),
            min_samples: self.min_samples.unwrap_or(d.min_samples),
            min_gpu_time: self.min_time.unwrap_or(d.min_gpu_time),
            timeout: self.timeout.unwrap_or(d.timeout),
        }
    }
}

fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?}: expected a positive number")),
    }
}

fn non_negative_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?}: expected a number >= 0")),
    }
}
