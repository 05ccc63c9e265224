//! Summary statistics of per-repetition timings.

#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub count: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub stddev: f64,
    pub max: f64,
}

/// No measured value is larger (in nanoseconds, about 11.6 days; in any unit, nothing a
/// measurement produces).
const MAX_PLAUSIBLE: f64 = 1e15;

impl Stats {
    /// Finite, non-negative, ordered: what a measurement can produce (a report read back may
    /// hold anything).
    pub fn is_plausible(&self) -> bool {
        let v = [self.min, self.median, self.mean, self.stddev, self.max];
        v.iter().all(|x| x.is_finite() && *x >= 0.0 && *x <= MAX_PLAUSIBLE)
            && self.min <= self.median
            && self.median <= self.max
            // No measured kernel takes no time.
            && self.median > 0.0
            && self.count > 0
    }

    pub fn of(values: &[f64]) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Stats {
            count: n,
            min: v[0],
            median,
            mean,
            stddev: var.sqrt(),
            max: v[n - 1],
        }
    }
}

/// A duration in ns, in the unit that reads best.
pub fn ns_text(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(
            (s.min, s.median, s.mean, s.max, s.count),
            (1.0, 2.5, 2.5, 4.0, 4)
        );
        assert!((s.stddev - 1.2909944).abs() < 1e-6);
        assert_eq!(Stats::of(&[]).count, 0);
        assert_eq!(Stats::of(&[5.0]).stddev, 0.0);
    }
}
