//! A/B timing: the recorded kernel (A) and a candidate (B) launched in pairs in one process, on
//! the same restored input, the order alternating (AB, BA, AB, …) so that neither side always
//! runs first; then a verdict in the manner of nvbench's compare (faster, slower, same within
//! noise, undecided) from the paired ratios.
//!
//! The ratio is the median of the per-pair ratios B/A; its 95 % interval is distribution-free
//! (the order statistics a sign test gives the median), so a few slow outliers neither move it
//! nor widen it much. The threshold of "the same" is the quieter side's noise (robust relative
//! spread), at least [`MIN_THRESHOLD`].

use super::session::{RunError, Sample, Session};
use super::stats::Stats;
use rr_cuda::LaunchConfig;

pub use super::outcome::{AbOutcome, Verdict};

/// Differences below 3 % are "the same" however quiet the kernels: the recorded image against
/// itself, 20 runs of 100 pairs each, measured ratios of 0.985–0.999 on one H100 and
/// 1.009–1.017 on another (a bias of up to 1.7 % either way between two loaded copies of one
/// kernel, steady within a run, with intervals about ±0.5 % wide), so a finer line would call
/// identical code faster or slower.
pub const MIN_THRESHOLD: f64 = 0.03;
/// Fewer pairs give no interval worth a verdict.
pub const MIN_PAIRS: usize = 6;
/// Pairs when the user names no count.
pub const DEFAULT_PAIRS: u32 = 100;

/// Robust relative spread: 1.4826 × the median absolute deviation over the median (the
/// standard deviation of normal data, untouched by a few outliers).
fn relative_noise(v: &[f64]) -> f64 {
    let median = median(v);
    if median <= 0.0 {
        return 0.0;
    }
    let dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
    1.4826 * self::median(&dev) / median
}

fn median(v: &[f64]) -> f64 {
    Stats::of(v).median
}

/// The verdict on paired times `a[i]`, `b[i]` (ns); `None` below [`MIN_PAIRS`] pairs or when a
/// time is not positive and finite.
pub fn judge(a: &[f64], b: &[f64]) -> Option<AbOutcome> {
    let n = a.len().min(b.len());
    if n < MIN_PAIRS {
        return None;
    }
    let (a, b) = (&a[..n], &b[..n]);
    if !a.iter().chain(b).all(|x| x.is_finite() && *x > 0.0) {
        return None;
    }
    let mut logs: Vec<f64> = a.iter().zip(b).map(|(x, y)| (y / x).ln()).collect();
    logs.sort_by(f64::total_cmp);
    // The sign test's interval for the median: order statistics k and n-1-k (0-based) with
    // k = ⌊(n − 1.96·√n) / 2⌋.
    let k = ((n as f64 - 1.96 * (n as f64).sqrt()) / 2.0)
        .floor()
        .max(0.0) as usize;
    let ci = [logs[k].exp(), logs[n - 1 - k].exp()];
    let ratio = median(&logs).exp();
    let noise = [relative_noise(a), relative_noise(b)];
    let threshold = noise[0].min(noise[1]).max(MIN_THRESHOLD);
    let (low, high) = (1.0 / (1.0 + threshold), 1.0 + threshold);
    // A difference smaller than the threshold is "the same" even when the interval is tight
    // enough to tell it from 1: it is of the size identical code shows.
    let verdict = if ci[0] >= low && ci[1] <= high {
        Verdict::Same
    } else if ci[1] < low {
        Verdict::Faster
    } else if ci[0] > high {
        Verdict::Slower
    } else {
        Verdict::Undecided
    };
    Some(AbOutcome {
        pairs: n,
        baseline_ns: Stats::of(a),
        candidate_ns: Stats::of(b),
        ratio,
        ci,
        noise,
        threshold,
        verdict,
    })
}

/// Which kernel a sample belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Recorded,
    Candidate,
}

/// `warmup` untimed launches of each, then `pairs` measured pairs, alternating which runs
/// first; every sample goes to `on_rep` (1-based pair index) as it completes. The session has
/// a candidate loaded ([`Session::load_candidate`]); it ends with the recorded kernel bound.
pub fn measure(
    session: &mut Session,
    cfg: &LaunchConfig,
    pairs: u32,
    warmup: u32,
    cold: bool,
    on_rep: &mut dyn FnMut(Side, u32, &Sample),
) -> Result<(Vec<Sample>, Vec<Sample>), RunError> {
    let mut a = Vec::with_capacity(pairs.min(1 << 16) as usize);
    let mut b = Vec::with_capacity(pairs.min(1 << 16) as usize);
    for w in 1..=warmup {
        session.launch(cfg, &format!("rr-tui warmup {w} recorded"), cold)?;
        session.with_candidate(|s| s.launch(cfg, &format!("rr-tui warmup {w} candidate"), cold))?;
    }
    for pair in 1..=pairs {
        let order = if pair % 2 == 1 {
            [Side::Recorded, Side::Candidate]
        } else {
            [Side::Candidate, Side::Recorded]
        };
        for side in order {
            let s = match side {
                Side::Recorded => {
                    session.launch(cfg, &format!("rr-tui rep {pair} recorded"), cold)?
                }
                Side::Candidate => session.with_candidate(|s| {
                    s.launch(cfg, &format!("rr-tui rep {pair} candidate"), cold)
                })?,
            };
            on_rep(side, pair, &s);
            match side {
                Side::Recorded => a.push(s),
                Side::Candidate => b.push(s),
            }
        }
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(base: f64, n: usize, wobble: f64) -> Vec<f64> {
        // Deterministic noise: a sawtooth of ±wobble.
        (0..n)
            .map(|i| base * (1.0 + wobble * (((i * 7919) % 21) as f64 / 10.0 - 1.0)))
            .collect()
    }

    #[test]
    fn verdicts() {
        let a = series(1000.0, 100, 0.005);
        let same = judge(&a, &series(1000.0, 100, 0.005)).unwrap();
        assert_eq!(same.verdict, Verdict::Same, "{same:?}");
        assert!((same.ratio - 1.0).abs() < 1e-9);
        let faster = judge(&a, &series(800.0, 100, 0.005)).unwrap();
        assert_eq!(faster.verdict, Verdict::Faster);
        assert!((faster.ratio - 0.8).abs() < 1e-9 && faster.ci[1] < 1.0);
        let slower = judge(&a, &series(1300.0, 100, 0.005)).unwrap();
        assert_eq!(slower.verdict, Verdict::Slower);
        // 0.5 % and 1.5 % slower on quiet kernels: tight intervals, but below the 3 % floor
        // (what identical code loaded twice shows), the same.
        for slower_by in [1005.0, 1015.0] {
            let o = judge(&a, &series(slower_by, 100, 0.001)).unwrap();
            assert_eq!(o.verdict, Verdict::Same, "{o:?}");
        }
        // An interval from 2 % to 4 % crosses the floor: undecided, not "slower".
        let crossing: Vec<f64> = (0..100).map(|i| 1020.0 + (i % 21) as f64).collect();
        let o = judge(&vec![1000.0; 100], &crossing).unwrap();
        assert_eq!(o.verdict, Verdict::Undecided, "{o:?}");
        // Wildly noisy and few pairs, centred on 1: no decision.
        let noisy_a = [1000.0, 1400.0, 700.0, 1300.0, 800.0, 1200.0, 900.0];
        let noisy_b = [1300.0, 800.0, 1200.0, 700.0, 1400.0, 900.0, 1000.0];
        assert_eq!(
            judge(&noisy_a, &noisy_b).unwrap().verdict,
            Verdict::Undecided
        );
    }

    #[test]
    fn outliers_do_not_move_the_ratio() {
        let a = series(1000.0, 100, 0.002);
        let mut b = series(900.0, 100, 0.002);
        for x in b.iter_mut().step_by(10) {
            *x *= 5.0;
        }
        let o = judge(&a, &b).unwrap();
        assert_eq!(o.verdict, Verdict::Faster);
        assert!((o.ratio - 0.9).abs() < 0.01, "{o:?}");
    }

    #[test]
    fn too_few_or_bad_samples_give_no_verdict() {
        assert!(judge(&[1.0; 5], &[1.0; 5]).is_none());
        assert!(judge(&[1.0; 10], &[1.0; 4]).is_none());
        let mut b = vec![1.0; 10];
        b[3] = f64::NAN;
        assert!(judge(&[1.0; 10], &b).is_none());
        assert!(judge(&[0.0; 10], &[1.0; 10]).is_none());
    }

    #[test]
    fn the_line_says_ratio_interval_and_verdict() {
        let o = judge(&series(1000.0, 50, 0.001), &series(500.0, 50, 0.001)).unwrap();
        let line = o.describe();
        assert!(
            line.starts_with("candidate 0.500×") && line.ends_with("faster"),
            "{line}"
        );
        let json = serde_json::to_string(&o).unwrap();
        assert!(json.contains("\"verdict\":\"faster\""));
        let back: AbOutcome = serde_json::from_str(&json).unwrap();
        assert_eq!(
            (back.verdict, back.pairs, back.ci),
            (o.verdict, o.pairs, o.ci)
        );
    }
}
