//! The bounds a sweep and its report are held to (how many configurations are measured, how
//! many trials a report read back may hold, how long a kernel name is) and the one rule for a
//! kernel time measured elsewhere. A leaf: the space, the report and the shard merge all read it.

use rr_engine::replay::stats::Stats;

/// Configurations one sweep measures at most: larger spaces are sampled (`--budget`).
pub const MAX_MEASURED: u64 = 1 << 20;

/// A kernel name read back is at most this many bytes (the symbol-name bound every reader of
/// records applies): it goes into every CSV row.
pub const MAX_NAME_BYTES: usize = rr_format::limits::MAX_SYMBOL_NAME_BYTES;

/// No launch is measured faster than this (ns): even an empty kernel keeps the GPU about a
/// microsecond between the events around it, and CUDA events resolve about half of one; a
/// tenth of that leaves room for GPUs to come. Below it a time is no measurement (1e-300 ns
/// once made "0 ns" and a 300-digit speed-up).
pub const MIN_KERNEL_NS: f64 = 100.0;

/// The one rule for a kernel time this process did not measure itself: an engine's or a hub's
/// answer, a part to merge, a sweep to resume or simulate from. What a measurement can give:
/// finite, ordered, no sample faster than a launch, none slower than days.
pub fn plausible_time(k: &Stats) -> bool {
    k.is_plausible() && k.min >= MIN_KERNEL_NS
}

/// Trials a report may hold: every measured configuration of the largest sweep, plus the
/// skipped ones it lists.
pub const MAX_TRIALS: usize = (MAX_MEASURED as usize) + MAX_SKIPPED_LISTED;
/// Skipped configurations a report lists one by one; more are only counted.
pub const MAX_SKIPPED_LISTED: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    /// One rule for every time read from elsewhere: nothing faster than a launch, nothing
    /// unordered or beyond days.
    #[test]
    fn a_time_is_plausible_from_a_launchs_minimum_on() {
        let ok = |v: &[f64]| plausible_time(&Stats::of(v));
        assert!(ok(&[1000.0, 1200.0]));
        assert!(ok(&[MIN_KERNEL_NS]));
        for bad in [1e-300, 0.0, 99.0, -5.0, f64::NAN, 1e16] {
            assert!(!ok(&[bad]), "{bad}");
        }
        assert!(!ok(&[1e-300, 2000.0, 3000.0]), "a sample under the floor");
        let unordered = Stats {
            min: 3000.0,
            ..Stats::of(&[2000.0])
        };
        assert!(!plausible_time(&unordered));
    }
}
