//! What a replay is asked to do, as typed values: the replay job. The CLI parses text into
//! one, the explorer and `tune` build them directly; a replay process receives one as JSON
//! ([`super::job`]). Its limits live here, on the job ([`ReplayRequest::check`]): the command
//! line's parsers apply the same ones, so the explorer never sends what the CLI refuses.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::candidate::CandidateSpec;
use super::timing::NoiseTarget;
use crate::diff::Comparison;

/// A replay job: what `ReplayRequest` is to a replay process.
pub type ReplayJob = ReplayRequest;

/// Repetitions one replay takes at most: each keeps its times in memory.
pub const MAX_REPETITIONS: u32 = 10_000_000;
/// Warm-ups one replay takes at most (`--warmup`): untimed launches, which only heat the GPU and
/// its caches; more than this is a mistake, and would keep a replay busy for nothing.
pub const MAX_WARMUP: u32 = 100_000;
/// `--kernel-timeout` at most (seconds; 0 is no limit).
pub const MAX_KERNEL_TIMEOUT: f64 = 86_400.0;
/// Sampling one configuration for more than an hour is a mistake, not a measurement
/// (`--timeout`, `--min-time`).
pub const MAX_SAMPLING_SECONDS: f64 = 3600.0;
/// Adaptive sampling keeps at least this many samples before the noise may stop it.
pub const LEAST_MIN_SAMPLES: u32 = 2;

/// Changes to the recorded launch. `None` keeps the recorded value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    /// Grid x (LLVM: number of teams); 0 means "recorded", as in LLVM's tool.
    pub num_teams: Option<u32>,
    /// Block x (LLVM: number of threads); 0 means "recorded".
    pub num_threads: Option<u32>,
    pub shared_mem: Option<u32>,
    pub device_id: Option<i32>,
    /// Skip the TeamsLimits/ThreadsLimits checks.
    pub ignore_limits: bool,
}

/// What the user supplies that a record lacks: LLVM 16–17 records store neither their device
/// image nor the start of their memory, and LLVM 18–22 records may not show whether their
/// arguments are values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Supplied {
    /// The device image to load instead of the record's (LLVM 16–17 records have none).
    #[serde(with = "super::pathjson::option")]
    pub image: Option<PathBuf>,
    /// Where an LLVM 16–17 record's memory starts (otherwise inferred when unambiguous).
    pub base_address: Option<u64>,
    /// Replay an LLVM 18–22 record whose generation is undetermined as LLVM 18 (values).
    pub assume_llvm18: bool,
}

/// How the replayed memory is compared with `.record_output`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verify {
    #[default]
    No,
    /// Byte for byte, lengths included (LLVM's semantics).
    Bytes,
    /// As typed elements with tolerances.
    Typed(Comparison),
}

impl Verify {
    pub fn is_on(&self) -> bool {
        !matches!(self, Verify::No)
    }
    pub fn typed(&self) -> Option<&Comparison> {
        match self {
            Verify::Typed(c) => Some(c),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayRequest {
    #[serde(with = "super::pathjson")]
    pub descriptor: PathBuf,
    pub overrides: Overrides,
    pub supplied: Supplied,
    /// Measured launches: exactly this many, or at most this many with `noise`.
    pub repetitions: u32,
    pub warmup: u32,
    /// Flush the L2 cache before each launch, outside the timed interval.
    pub cold: bool,
    /// Sample until this target is met instead of a fixed count; throttled samples are
    /// discarded.
    pub noise: Option<NoiseTarget>,
    pub verify: Verify,
    /// Compare every byte on the host even when fingerprints computed on the GPU show the
    /// replay equal to the recorded output.
    pub verify_on_host: bool,
    /// Write `.replay_output` (into `output_dir`, or beside the descriptor).
    pub save_output: bool,
    #[serde(with = "super::pathjson::option")]
    pub output_dir: Option<PathBuf>,
    /// The run this replay belongs to; every event carries it.
    pub run_id: u64,
    /// Refuse to run when a parameter word points outside the recorded memory (otherwise a
    /// warning).
    pub strict: bool,
    /// A kernel still running after this many seconds ends the replay with a message (0: no
    /// limit).
    pub kernel_timeout: f64,
    /// An A/B replay's candidate kernel ([`super::ab`]).
    pub candidate: Option<CandidateSpec>,
    /// Measure energy per execution with NVML before the timed repetitions ([`super::energy`]).
    pub energy: bool,
    /// Time with CUDA events alone (no blocking kernel, no clock probe): for profilers that
    /// serialise kernels.
    pub events_only: bool,
}

/// The default of `--kernel-timeout`: far beyond any kernel a replay is used for, short enough
/// that a kernel waiting for a host thread that is not there does not look like a hang.
pub const DEFAULT_KERNEL_TIMEOUT: f64 = 30.0;

impl ReplayRequest {
    pub fn new(descriptor: PathBuf) -> ReplayRequest {
        ReplayRequest {
            descriptor,
            overrides: Overrides::default(),
            supplied: Supplied::default(),
            repetitions: 1,
            warmup: 0,
            cold: false,
            noise: None,
            verify: Verify::No,
            verify_on_host: false,
            save_output: false,
            output_dir: None,
            run_id: 1,
            strict: false,
            kernel_timeout: DEFAULT_KERNEL_TIMEOUT,
            candidate: None,
            energy: false,
            events_only: false,
        }
    }

    /// Whether the command line could have asked for this job: every limit and every pair of
    /// flags that exclude each other, as `rr-tui replay`'s parsers hold them. A replay process
    /// checks each job it receives with it before anything runs; the message names the flag.
    pub fn check(&self) -> std::result::Result<(), String> {
        self.check_counts()?;
        check_kernel_timeout(self.kernel_timeout)?;
        if let Some(n) = &self.noise {
            check_noise(n)?;
        }
        self.overrides.check()?;
        check_verify(&self.verify)?;
        if self.energy && self.candidate.is_some() {
            return Err("--energy cannot be used with --candidate".into());
        }
        if let Some(c) = &self.candidate {
            for d in &c.defines {
                if super::candidate::Define::parse(&d.spec()).as_ref() != Ok(d) {
                    return Err(format!("--define {}: not a definition", d.spec()));
                }
            }
        }
        Ok(())
    }
}

impl Overrides {
    /// `--grid`/`--block` dimensions from 1, a device ordinal from 0, and `--num-teams` or
    /// `--num-threads` never beside the whole grid or block they would change.
    fn check(&self) -> std::result::Result<(), String> {
        for (flag, dims) in [("--grid", self.grid), ("--block", self.block)] {
            if let Some(d) = dims.filter(|d| d.contains(&0)) {
                return Err(format!(
                    "{flag} {}x{}x{}: every dimension is at least 1",
                    d[0], d[1], d[2]
                ));
            }
        }
        if let Some(d) = self.device_id.filter(|d| *d < 0) {
            return Err(format!("--device {d}: must be ≥ 0 (a device ordinal)"));
        }
        if self.num_teams.is_some() && self.grid.is_some() {
            return Err("--num-teams cannot be used with --grid".into());
        }
        if self.num_threads.is_some() && self.block.is_some() {
            return Err("--num-threads cannot be used with --block".into());
        }
        Ok(())
    }
}

/// `--kernel-timeout`'s limits (the replay's, the sweep's and the engine's).
pub fn check_kernel_timeout(seconds: f64) -> std::result::Result<(), String> {
    if seconds.is_finite() && (0.0..=MAX_KERNEL_TIMEOUT).contains(&seconds) {
        return Ok(());
    }
    Err(format!(
        "--kernel-timeout {seconds}: seconds from 0 (no limit) to {MAX_KERNEL_TIMEOUT}"
    ))
}

/// A typed verification must be one `--tolerance` gives: the spec syntax is the rule, and a
/// comparison it cannot write and read back the same (a negative or non-finite tolerance) is
/// not one.
pub fn check_verify(verify: &Verify) -> std::result::Result<(), String> {
    match verify {
        Verify::Typed(c) if Comparison::parse_spec(&c.to_spec()).as_ref() != Ok(c) => {
            Err(format!("--tolerance {}: not a tolerance", c.to_spec()))
        }
        _ => Ok(()),
    }
}

/// The adaptive-sampling flags' limits (`--max-noise`, `--min-samples`, `--min-time`,
/// `--timeout`).
pub fn check_noise(n: &NoiseTarget) -> std::result::Result<(), String> {
    if let Some(x) = n.max_noise.filter(|x| !(x.is_finite() && *x > 0.0)) {
        return Err(format!(
            "--max-noise {}: expected a positive number",
            x * 100.0
        ));
    }
    if n.min_samples < LEAST_MIN_SAMPLES {
        return Err(format!(
            "--min-samples {}: at least {LEAST_MIN_SAMPLES}",
            n.min_samples
        ));
    }
    if !(n.min_gpu_time.is_finite() && (0.0..=MAX_SAMPLING_SECONDS).contains(&n.min_gpu_time)) {
        return Err(format!(
            "--min-time {}: expected seconds, from 0 to {MAX_SAMPLING_SECONDS}",
            n.min_gpu_time
        ));
    }
    if !(n.timeout.is_finite() && n.timeout > 0.0 && n.timeout <= MAX_SAMPLING_SECONDS) {
        return Err(format!(
            "--timeout {}: expected seconds, above 0 and at most {MAX_SAMPLING_SECONDS}",
            n.timeout
        ));
    }
    Ok(())
}

impl ReplayRequest {
    /// `--repetitions` from 1 to [`MAX_REPETITIONS`] and `--warmup` at most [`MAX_WARMUP`] (a
    /// part of [`ReplayRequest::check`] that `replay`'s own checks apply too).
    pub fn check_counts(&self) -> std::result::Result<(), String> {
        if !(1..=MAX_REPETITIONS).contains(&self.repetitions) {
            return Err(format!(
                "--repetitions {}: from 1 to {MAX_REPETITIONS}",
                self.repetitions
            ));
        }
        if self.warmup > MAX_WARMUP {
            return Err(format!("--warmup {}: at most {MAX_WARMUP}", self.warmup));
        }
        Ok(())
    }

    /// How many times the replay launches the kernel: its warm-ups and repetitions; an A/B
    /// replay launches each side at least twice (a warm-up, then the pairs).
    pub fn launches(&self) -> u32 {
        match self.candidate {
            Some(_) => self
                .repetitions
                .saturating_add(self.warmup.max(1))
                .saturating_mul(2),
            None => self.repetitions.saturating_add(self.warmup),
        }
    }
}

/// A number of repetitions, `1000` or `1_000`, from 1 to [`MAX_REPETITIONS`]: the parser of
/// `--repetitions` and of the explorer's prompt and config file alike.
pub fn parse_repetitions(text: &str) -> std::result::Result<u32, String> {
    parse_count(text)
        .filter(|n| (1..=MAX_REPETITIONS).contains(n))
        .ok_or_else(|| {
            format!(
                "{} is not a number of repetitions (1 to {MAX_REPETITIONS})",
                rr_format::text::quoted(text)
            )
        })
}

/// A number of warm-ups, `100` or `1_000`, from 0 to [`MAX_WARMUP`]: the parser of `--warmup`.
pub fn parse_warmup(text: &str) -> std::result::Result<u32, String> {
    parse_count(text)
        .filter(|n| *n <= MAX_WARMUP)
        .ok_or_else(|| {
            format!(
                "{} is not a number of warm-ups (0 to {MAX_WARMUP})",
                rr_format::text::quoted(text)
            )
        })
}

/// A count written in decimal, `_` between digits allowed.
fn parse_count(text: &str) -> Option<u32> {
    text.trim().replace('_', "").parse::<u32>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetitions_are_counted_from_one_to_the_limit() {
        assert_eq!(parse_repetitions("20"), Ok(20));
        assert_eq!(parse_repetitions("1_000"), Ok(1000));
        assert_eq!(parse_repetitions("10000000"), Ok(10_000_000));
        for bad in ["", "0", "-1", "abc", "1.5", "10000001", "99999999999"] {
            let e = parse_repetitions(bad).unwrap_err();
            assert!(e.contains("(1 to 10000000)"), "{bad}: {e}");
        }
    }

    /// `--warmup` has its limit, held by the parser and by the job's check alike.
    #[test]
    fn warm_ups_are_counted_from_zero_to_the_limit() {
        assert_eq!(parse_warmup("0"), Ok(0));
        assert_eq!(parse_warmup("100_000"), Ok(MAX_WARMUP));
        for bad in ["", "-1", "abc", "100001", "4294967295", "99999999999"] {
            let e = parse_warmup(bad).unwrap_err();
            assert!(e.contains("(0 to 100000)"), "{bad}: {e}");
        }
        let mut r = ReplayRequest::new("x.json".into());
        r.warmup = MAX_WARMUP;
        assert_eq!(r.check(), Ok(()));
        r.warmup = MAX_WARMUP + 1;
        assert_eq!(r.check(), Err("--warmup 100001: at most 100000".into()));
        r.warmup = u32::MAX;
        assert!(r.check_counts().unwrap_err().starts_with("--warmup "));
    }

    #[test]
    fn an_ab_replay_launches_each_side_at_least_twice() {
        let mut r = ReplayRequest::new("x.json".into());
        r.repetitions = 5;
        assert_eq!(r.launches(), 5);
        r.warmup = 2;
        assert_eq!(r.launches(), 7);
        r.candidate = Some(crate::replay::candidate::CandidateSpec {
            path: "k.cu".into(),
            kernel: None,
            defines: vec![],
            options: vec![],
        });
        assert_eq!(r.launches(), 14);
        r.warmup = 0;
        assert_eq!(r.launches(), 12);
        r.repetitions = MAX_REPETITIONS;
        r.warmup = MAX_WARMUP;
        assert_eq!(r.launches(), 2 * (MAX_REPETITIONS + MAX_WARMUP));
    }
}
