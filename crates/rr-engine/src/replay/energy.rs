//! Energy per kernel execution from NVML's total-energy counter (read only).
//!
//! The counter moves in steps (every ~100 ms on the H100s measured, `tests/gpu/probes/
//! profile_probe.sh`), far coarser than one kernel, so the kernel runs back to back — no
//! restore between launches, a few batches of ~10 ms queued ahead so the GPU never waits —
//! while a second thread polls the counter and notes the moments it moves. The average power
//! is the energy between the first and the last move seen while the GPU was busy over the time
//! between them; each window between two moves gives a power too, and their spread is the
//! noise. Energy per execution is that power times the GPU time per execution (CUDA events over
//! all the launches, launch gaps included): what running the kernel costs the device, its
//! static power included, as nvbench and Kernel Tuner's NVML observer count it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub use rr_cuda::nvml::Meter;
use rr_cuda::LaunchConfig;

pub use super::outcome::{joules_text, Energy, EnergyPolicy};
use super::session::{RunError, Session};
use super::stats::Stats;
use crate::error::Error;

/// GPU work queued per batch (the host waits for the batch before last, so ~2 batches stay
/// queued and the GPU never idles).
const BATCH: Duration = Duration::from_millis(10);
/// Counter moves this soon after the GPU got busy may still hold idle time, and the power is
/// still climbing.
const SETTLE: Duration = Duration::from_millis(250);
/// Counter windows per group the noise is judged over: one window's ends are known only to
/// one NVML poll (~4 ms of ~100 ms), so single windows spread by several per cent whatever the
/// power does; half a second's do not.
const NOISE_GROUP: usize = 5;

/// The counter's moves: when the host saw each (seconds from the start) and its value (mJ).
#[derive(Debug, Default, Clone)]
struct Trace {
    moves: Vec<(f64, u64)>,
    polls: u64,
    polled_seconds: f64,
}

/// Average power (W), the windows' powers (W) and the span (s) over the moves inside
/// `[from, to]` (seconds). `None` with fewer than two moves there.
fn power_between(moves: &[(f64, u64)], from: f64, to: f64) -> Option<(f64, Vec<f64>, f64)> {
    let inside: Vec<&(f64, u64)> = moves
        .iter()
        .filter(|(t, _)| *t >= from && *t <= to)
        .collect();
    let (first, last) = (inside.first()?, inside.last()?);
    let span = last.0 - first.0;
    if inside.len() < 2 || span <= 0.0 || last.1 < first.1 {
        return None;
    }
    let windows: Vec<f64> = inside
        .windows(2)
        .filter(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1)
        .map(|w| (w[1].1 - w[0].1) as f64 / 1e3 / (w[1].0 - w[0].0))
        .collect();
    Some(((last.1 - first.1) as f64 / 1e3 / span, windows, span))
}

/// The mean power of each run of `n` consecutive windows (a partial last run is dropped;
/// fewer than `n` windows: each window alone).
fn group_powers(windows: &[f64], n: usize) -> Vec<f64> {
    if windows.len() < n * 2 {
        return windows.to_vec();
    }
    windows
        .chunks_exact(n)
        .map(|c| c.iter().sum::<f64>() / n as f64)
        .collect()
}

fn interval_ms(moves: &[(f64, u64)]) -> f64 {
    let gaps: Vec<f64> = moves.windows(2).map(|w| (w[1].0 - w[0].0) * 1e3).collect();
    if gaps.is_empty() {
        0.0
    } else {
        Stats::of(&gaps).median
    }
}

/// The NVML meter of the device `session` runs on.
pub fn meter(session: &Session) -> Result<Meter, Error> {
    Meter::open(&session.cuda_device()?).map_err(Error::Failed)
}

fn cuda(e: rr_cuda::CudaError) -> RunError {
    RunError::Other(Error::Cuda(e))
}

/// Poll the counter until `stop`, noting each move; moves after [`SETTLE`] are counted in
/// `settled` as they come (the launching side stops on them).
fn poll(meter: &Meter, stop: &AtomicBool, settled: &AtomicUsize, origin: Instant) -> Trace {
    let mut trace = Trace::default();
    let mut last = None;
    while !stop.load(Ordering::Relaxed) {
        let Ok(value) = meter.energy_mj() else {
            break;
        };
        trace.polls += 1;
        let at = origin.elapsed().as_secs_f64();
        if last.is_some_and(|v| v != value) {
            trace.moves.push((at, value));
            if at >= SETTLE.as_secs_f64() {
                settled.fetch_add(1, Ordering::Relaxed);
            }
        }
        last = Some(value);
        // A short pause: the counter moves every ~100 ms; a poll costs ~4 ms of NVML anyway.
        std::thread::sleep(Duration::from_micros(200));
    }
    trace.polled_seconds = origin.elapsed().as_secs_f64();
    trace
}

/// Run `cfg` back to back on `session` and measure its energy per execution with `meter`.
/// Leaves the memory as the last launch did: restore before verifying.
pub fn measure(
    session: &mut Session,
    cfg: &LaunchConfig,
    meter: &Meter,
    policy: &EnergyPolicy,
) -> Result<Energy, RunError> {
    let nvml = |e: String| RunError::Other(Error::Failed(e));
    session.restore_and_wait()?;
    // How many launches make a batch: one timed launch tells.
    let started = Instant::now();
    session.enqueue(cfg, 1)?.synchronize().map_err(cuda)?;
    let one = started.elapsed().as_secs_f64().max(1e-7);
    let batch = ((BATCH.as_secs_f64() / one).ceil() as u32).clamp(1, 100_000);
    let idle_power_w = meter.power_w().map_err(nvml)?;
    let power_limit_w = meter.power_limit_w().map_err(nvml)?;

    let stop = AtomicBool::new(false);
    let settled_moves = AtomicUsize::new(0);
    let origin = Instant::now();
    let mut executions = 0u64;
    let (mut sm, mut mem) = (Vec::new(), Vec::new());
    let (trace, busy_until, gpu_ms) = std::thread::scope(|scope| {
        let poller = scope.spawn(|| poll(meter, &stop, &settled_moves, origin));
        let run = (|| -> Result<(f64, f32), RunError> {
            let first = session.enqueue(cfg, 0)?;
            let mut queued = VecDeque::new();
            let mut last_clock: Option<Instant> = None;
            loop {
                queued.push_back(session.enqueue(cfg, batch)?);
                executions += batch as u64;
                if queued.len() > 2 {
                    if let Some(done) = queued.pop_front() {
                        done.synchronize().map_err(cuda)?;
                    }
                }
                if last_clock.is_none_or(|t| t.elapsed() >= Duration::from_millis(50)) {
                    last_clock = Some(Instant::now());
                    if let Ok(c) = meter.clocks() {
                        sm.push(c.sm_mhz as f64);
                        mem.push(c.memory_mhz as f64);
                    }
                }
                let elapsed = origin.elapsed().as_secs_f64();
                // Windows are between moves: one more move than windows.
                let windows = settled_moves.load(Ordering::Relaxed).saturating_sub(1);
                if elapsed >= policy.max_seconds
                    || (elapsed >= policy.min_seconds && windows >= policy.min_windows)
                {
                    break;
                }
            }
            // The GPU is busy at least until the last batch was queued.
            let busy_until = origin.elapsed().as_secs_f64();
            let end = session.enqueue(cfg, 0)?;
            end.synchronize().map_err(cuda)?;
            Ok((busy_until, first.elapsed_ms(&end).map_err(cuda)?))
        })();
        stop.store(true, Ordering::Relaxed);
        let trace = poller.join().unwrap_or_default();
        run.map(|(busy_until, gpu_ms)| (trace, busy_until, gpu_ms))
    })?;
    let from = SETTLE.as_secs_f64();
    let Some((power_w, windows, seconds)) = power_between(&trace.moves, from, busy_until) else {
        return Err(nvml(format!(
            "the energy counter moved {} time(s) in {busy_until:.2} s: too few to measure (it may not be supported on this GPU)",
            trace.moves.len()
        )));
    };
    let w = Stats::of(&group_powers(&windows, NOISE_GROUP));
    let execution_ns = gpu_ms as f64 * 1e6 / executions.max(1) as f64;
    Ok(Energy {
        joules: power_w * execution_ns / 1e9,
        power_w,
        noise: if w.mean > 0.0 { w.stddev / w.mean } else { 0.0 },
        windows: windows.len(),
        executions,
        execution_ns,
        seconds,
        counter_interval_ms: interval_ms(&trace.moves),
        poll_ms: if trace.polls > 0 {
            trace.polled_seconds * 1e3 / trace.polls as f64
        } else {
            0.0
        },
        idle_power_w,
        power_limit_w,
        sm_clock_mhz: Stats::of(&sm),
        memory_clock_mhz: Stats::of(&mem),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter at `watts` that moves every 100 ms, seen `jitter_ms` late on every other move.
    fn moves(watts: f64, n: usize, jitter_ms: f64) -> Vec<(f64, u64)> {
        (0..n)
            .map(|i| {
                let t = 0.05 + i as f64 * 0.1;
                let seen = t + if i % 2 == 1 { jitter_ms / 1e3 } else { 0.0 };
                (seen, 1_000_000 + (watts * t * 1e3) as u64)
            })
            .collect()
    }

    #[test]
    fn power_is_energy_over_the_span_of_the_moves_inside() {
        let m = moves(300.0, 30, 0.0);
        let (p, windows, span) = power_between(&m, 0.12, 2.0).unwrap();
        assert!((p - 300.0).abs() < 0.5, "{p}");
        assert!(
            windows.iter().all(|w| (w - 300.0).abs() < 1.0),
            "{windows:?}"
        );
        // Moves at 0.15 … 1.95 s: 18 windows over 1.8 s.
        assert_eq!(windows.len(), 18);
        assert!((span - 1.8).abs() < 1e-9, "{span}");
    }

    #[test]
    fn late_observations_spread_the_windows_not_the_average() {
        let m = moves(250.0, 40, 3.0);
        let (p, windows, _) = power_between(&m, 0.12, 10.0).unwrap();
        let w = Stats::of(&windows);
        assert!((p - 250.0).abs() / 250.0 < 0.005, "{p}");
        assert!(w.stddev / w.mean > 0.01, "{w:?}");
    }

    #[test]
    fn noise_is_judged_over_groups_of_windows() {
        // Windows alternately 4 % high and low (a poll's lateness) average out in a group.
        let w: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 104.0 } else { 96.0 })
            .collect();
        let g = group_powers(&w, 5);
        assert_eq!(g.len(), 4);
        let s = Stats::of(&g);
        assert!(
            s.stddev / s.mean < 0.01 && Stats::of(&w).stddev / 100.0 > 0.03,
            "{g:?}"
        );
        assert_eq!(group_powers(&w[..6], 5).len(), 6);
    }

    #[test]
    fn too_few_moves_measure_nothing() {
        assert!(power_between(&[], 0.0, 1.0).is_none());
        assert!(power_between(&[(0.5, 10)], 0.0, 1.0).is_none());
        // A counter that went backwards (a driver reload) is no measurement.
        assert!(power_between(&[(0.2, 100), (0.3, 50)], 0.0, 1.0).is_none());
        assert_eq!(interval_ms(&moves(100.0, 5, 0.0)).round(), 100.0);
    }
}
