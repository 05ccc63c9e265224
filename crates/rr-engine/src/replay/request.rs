//! What a replay is asked to do, as typed values (the CLI parses text into these; the explorer
//! and `tune` build them directly), and the command line that asks a child process for it.

use std::path::PathBuf;

use super::candidate::CandidateSpec;
use super::timing::NoiseTarget;
use crate::diff::Comparison;

/// Changes to the recorded launch. `None` keeps the recorded value.
#[derive(Debug, Clone, Default, PartialEq)]
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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Supplied {
    /// The device image to load instead of the record's (LLVM 16–17 records have none).
    pub image: Option<PathBuf>,
    /// Where an LLVM 16–17 record's memory starts (otherwise inferred when unambiguous).
    pub base_address: Option<u64>,
    /// Replay an LLVM 18–22 record whose generation is undetermined as LLVM 18 (values).
    pub assume_llvm18: bool,
}

impl Supplied {
    /// The command-line flags that supply the same (`replay`, `tune`, `engine` share them).
    pub fn to_args(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(i) = &self.image {
            v.extend(["--image".into(), i.display().to_string()]);
        }
        if let Some(a) = self.base_address {
            v.extend(["--base-address".into(), format!("{a:#x}")]);
        }
        if self.assume_llvm18 {
            v.push("--assume-llvm18".into());
        }
        v
    }
}

/// How the replayed memory is compared with `.record_output`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
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

#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRequest {
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

    /// The arguments of `rr-tui` that perform this request and stream its events
    /// (`replay DESC --json --run-id N …`).
    pub fn to_args(&self) -> Vec<String> {
        let dim = |v: [u32; 3]| format!("{}x{}x{}", v[0], v[1], v[2]);
        let o = &self.overrides;
        let mut v = vec![
            "replay".to_string(),
            self.descriptor.display().to_string(),
            "--json".into(),
            "--run-id".into(),
            self.run_id.to_string(),
            "--repetitions".into(),
            self.repetitions.to_string(),
        ];
        let mut opt = |flag: &str, val: Option<String>| {
            if let Some(val) = val {
                v.push(flag.into());
                v.push(val);
            }
        };
        opt(
            "--warmup",
            (self.warmup > 0).then(|| self.warmup.to_string()),
        );
        opt("--tolerance", self.verify.typed().map(Comparison::to_spec));
        if let Some(t) = &self.noise {
            opt("--max-noise", t.max_noise.map(|x| (x * 100.0).to_string()));
            opt("--min-samples", Some(t.min_samples.to_string()));
            opt("--min-time", Some(t.min_gpu_time.to_string()));
            opt("--timeout", Some(t.timeout.to_string()));
        }
        opt(
            "--output-dir",
            self.output_dir.as_ref().map(|p| p.display().to_string()),
        );
        opt("--num-teams", o.num_teams.map(|x| x.to_string()));
        opt("--num-threads", o.num_threads.map(|x| x.to_string()));
        opt("--grid", o.grid.map(dim));
        opt("--block", o.block.map(dim));
        opt("--shared-mem", o.shared_mem.map(|x| x.to_string()));
        opt("--device", o.device_id.map(|x| x.to_string()));
        opt(
            "--kernel-timeout",
            (self.kernel_timeout != DEFAULT_KERNEL_TIMEOUT)
                .then(|| self.kernel_timeout.to_string()),
        );
        for (flag, on) in [
            ("--verify", self.verify == Verify::Bytes),
            ("--cold", self.cold),
            ("--save-output", self.save_output),
            ("--verify-on-host", self.verify_on_host),
            ("--ignore-limits", o.ignore_limits),
            ("--strict", self.strict),
            ("--energy", self.energy),
            ("--events-only", self.events_only),
        ] {
            if on {
                v.push(flag.into());
            }
        }
        v.extend(self.supplied.to_args());
        if let Some(c) = &self.candidate {
            v.extend(c.to_args());
        }
        v
    }
}
