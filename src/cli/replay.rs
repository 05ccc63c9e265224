//! `rr-tui replay`'s arguments, and the request they make.

use clap::Args;
use std::path::PathBuf;

use rr_engine::replay::candidate::{CandidateSpec, Define};

use super::deprecated::{Dim3Flag, OldSpelling};
use super::{flags, parse_tolerance, SuppliedArgs, TimingArgs};

#[derive(Debug, Args, Clone, Default)]
pub struct ReplayArgs {
    /// The instance's descriptor.
    ///
    /// `<KernelHash>_<LaunchConfigHash>.json`, or `<Name>.json` of LLVM 16–22.
    pub descriptor: PathBuf,
    /// Compare replayed memory with the recorded output.
    ///
    /// The recorded output is .record_output, blobs, or a legacy record's .original.output;
    /// compared byte for byte unless --tolerance. An rr-tui record is first compared by 128-bit
    /// fingerprints computed on the GPU; only a replay they do not show equal is read back and
    /// compared on the host.
    #[arg(long)]
    pub verify: bool,
    /// With --verify, compare on the host too.
    ///
    /// Read everything back and compare it on the host even when the fingerprints computed on
    /// the GPU are equal.
    #[arg(long)]
    pub verify_on_host: bool,
    // The help of the flags `tune` (and `diff`) take too is theirs: `super::flags`.
    #[arg(long, value_name = "SPEC", value_parser = parse_tolerance, help = flags::TOLERANCE, long_help = flags::TOLERANCE_LONG)]
    pub tolerance: Option<rr_engine::diff::Comparison>,
    /// Write .replay_output, named as LLVM names it.
    #[arg(long)]
    pub save_output: bool,
    /// Where to write .replay_output.
    ///
    /// For read-only record directories.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Measured replays in one process [default: 1].
    ///
    /// Input memory and globals are restored before each, untimed. With --max-noise: the most
    /// to take (default 10000); with --candidate: pairs (default 100).
    #[arg(long, value_name = "N", value_parser = parse_repetitions, allow_negative_numbers = true)]
    pub repetitions: Option<u32>,
    /// Untimed replays before the measured ones.
    #[arg(long, default_value_t = 0, value_parser = parse_warmup)]
    pub warmup: u32,
    /// Override grid x (LLVM: number of teams).
    ///
    /// 0 keeps the recorded value, as LLVM's tool. Checked against TeamsLimits.
    #[arg(long, conflicts_with = "grid")]
    pub num_teams: Option<u32>,
    /// Override block x (LLVM: number of threads).
    ///
    /// 0 keeps the recorded value. Checked against ThreadsLimits.
    #[arg(long, conflicts_with = "block")]
    pub num_threads: Option<u32>,
    #[command(flatten)]
    pub geometry: GeometryArgs,
    #[arg(long, help = flags::IGNORE_LIMITS, long_help = flags::IGNORE_LIMITS_LONG)]
    pub ignore_limits: bool,
    #[arg(long, help = flags::STRICT, long_help = flags::STRICT_LONG)]
    pub strict: bool,
    #[arg(long, value_name = "SECONDS", default_value_t = rr_engine::replay::request::DEFAULT_KERNEL_TIMEOUT, value_parser = parse_kernel_timeout, help = flags::KERNEL_TIMEOUT, long_help = flags::KERNEL_TIMEOUT_LONG)]
    pub kernel_timeout: f64,
    #[command(flatten)]
    pub ab: CandidateArgs,
    /// Energy per execution from NVML's energy counter.
    ///
    /// Read only: clocks and power limits are never changed. The kernel runs back to back for
    /// at least 2 s and 20 counter windows (~100 ms each), before the timed repetitions; prints
    /// the energy, average power, its noise over half-second groups of windows, idle power,
    /// power limit and clocks.
    #[arg(long, conflicts_with = "candidate")]
    pub energy: bool,
    /// Time with CUDA events alone.
    ///
    /// No blocking kernel before each launch and no clock probe after it, so a profiler that
    /// serialises kernels (Nsight Compute) sees only the replayed kernel. `rr-tui profile` sets
    /// it.
    #[arg(long)]
    pub events_only: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub supplied: SuppliedArgs,
    /// Stream one JSON event per line.
    ///
    /// The explorer's protocol; see docs/internals/protocol.md.
    #[arg(long)]
    pub json: bool,
    /// The run id every JSON event carries (set by the explorer and `tune`).
    #[arg(long, default_value_t = 1, hide = true)]
    pub run_id: u64,
    /// After this replay (none with `-` as the descriptor), read replay jobs from stdin (one
    /// JSON line each, `rr_engine::replay::job`) and keep the memory on the GPU when the next
    /// instance maps the same ranges (the explorer's replay process).
    #[arg(long, requires = "json", hide = true)]
    pub serve: bool,
}

/// The launch a replay runs instead of the recorded one (`replay` and `profile`), checked
/// against the record's limits like the recorded one.
#[derive(Debug, Args, Clone, Default)]
pub struct GeometryArgs {
    /// Override the whole grid.
    ///
    /// XxYxZ, as `tune` writes one 3-D value (128x1x1); missing dimensions are 1. The old
    /// comma-separated form is taken for now, with a note.
    #[arg(long, value_name = "XxYxZ", value_parser = Dim3Flag)]
    pub grid: Option<[u32; 3]>,
    /// Override the whole block.
    ///
    /// XxYxZ, as `tune` writes one 3-D value (128x1x1); missing dimensions are 1. The old
    /// comma-separated form is taken for now, with a note.
    #[arg(long, value_name = "XxYxZ", value_parser = Dim3Flag)]
    pub block: Option<[u32; 3]>,
    /// Override the dynamic shared memory bytes.
    #[arg(long)]
    pub shared_mem: Option<u32>,
    /// The CUDA device to run on [default: the recorded one].
    ///
    /// Its ordinal, as `record --device` (`tune --devices` takes several).
    #[arg(long, value_name = "N", value_parser = super::parse_device, allow_negative_numbers = true)]
    pub device: Option<i32>,
    /// `--device`'s old spelling, taken for now with a note.
    #[arg(
        long = "device-id",
        value_name = "N",
        hide = true,
        conflicts_with = "device",
        allow_negative_numbers = true,
        value_parser = OldSpelling::new("--device-id", "--device", super::parse_device)
    )]
    pub device_id: Option<i32>,
}

impl GeometryArgs {
    pub fn overrides(&self) -> rr_engine::replay::Overrides {
        rr_engine::replay::Overrides {
            grid: self.grid,
            block: self.block,
            shared_mem: self.shared_mem,
            device_id: self.device.or(self.device_id),
            ..Default::default()
        }
    }
}

impl ReplayArgs {
    /// The typed request the engine performs.
    pub fn request(&self) -> rr_engine::replay::ReplayRequest {
        use rr_engine::replay::{Overrides, ReplayRequest, Verify};
        let noise = self.timing.adaptive().then(|| self.timing.target());
        ReplayRequest {
            descriptor: self.descriptor.clone(),
            overrides: Overrides {
                num_teams: self.num_teams,
                num_threads: self.num_threads,
                ignore_limits: self.ignore_limits,
                ..self.geometry.overrides()
            },
            supplied: self.supplied.supplied(),
            repetitions: self
                .repetitions
                .unwrap_or(match (&noise, &self.ab.candidate) {
                    (Some(_), _) => 10_000,
                    (None, Some(_)) => rr_engine::replay::ab::DEFAULT_PAIRS,
                    (None, None) => 1,
                }),
            warmup: self.warmup,
            cold: self.timing.cold(false),
            noise,
            verify: match (self.tolerance, self.verify) {
                (Some(c), _) => Verify::Typed(c),
                (None, true) => Verify::Bytes,
                (None, false) => Verify::No,
            },
            verify_on_host: self.verify_on_host,
            save_output: self.save_output,
            output_dir: self.output_dir.clone(),
            run_id: self.run_id,
            strict: self.strict,
            kernel_timeout: self.kernel_timeout,
            candidate: self.ab.spec(),
            energy: self.energy,
            events_only: self.events_only,
        }
    }
}

/// An A/B candidate: the flags `replay` and `profile` share.
#[derive(Debug, Args, Clone, Default)]
pub struct CandidateArgs {
    #[arg(long, value_name = "FILE", help = flags::CANDIDATE, long_help = flags::CANDIDATE_LONG)]
    pub candidate: Option<PathBuf>,
    #[command(flatten)]
    pub build: CandidateBuildArgs,
}

/// How a candidate is built and which of its kernels runs: the flags `replay`, `profile` and
/// `ab` share (each requires `--candidate`).
#[derive(Debug, Args, Clone, Default)]
pub struct CandidateBuildArgs {
    /// The candidate's kernel, when not named as the recorded one.
    ///
    /// A mangled name, as `rr-tui inspect` shows the recorded one.
    #[arg(long, value_name = "NAME", requires = "candidate")]
    pub candidate_kernel: Option<String>,
    /// A macro for a source candidate (repeatable).
    ///
    /// NAME or NAME=VALUE.
    #[arg(long = "define", short = 'D', value_name = "NAME[=VALUE]", requires = "candidate", value_parser = parse_define)]
    pub defines: Vec<rr_engine::replay::candidate::Define>,
    /// A further NVRTC option for a source candidate (repeatable).
    ///
    /// E.g. --nvrtc-opt=--use_fast_math; the architecture, -I of the source's directory and of
    /// the CUDA headers are given already.
    #[arg(
        long = "nvrtc-opt",
        value_name = "OPTION",
        requires = "candidate",
        allow_hyphen_values = true
    )]
    pub nvrtc_opts: Vec<String>,
}

impl CandidateBuildArgs {
    /// The candidate at `path` as the engine takes it.
    pub fn spec(&self, path: &std::path::Path) -> CandidateSpec {
        CandidateSpec {
            path: path.to_path_buf(),
            kernel: self.candidate_kernel.clone(),
            defines: self.defines.clone(),
            options: self.nvrtc_opts.clone(),
        }
    }
}

impl CandidateArgs {
    /// The candidate as the engine takes it.
    pub fn spec(&self) -> Option<CandidateSpec> {
        self.candidate.as_ref().map(|path| self.build.spec(path))
    }
}

/// The explorer's A/B prompt: `FILE [-D NAME[=VALUE]]… [--nvrtc-opt=OPT]… [--candidate-kernel
/// NAME]`, split as a shell splits words and parsed by `replay`'s own flags (nothing else may
/// follow the file).
pub(crate) fn parse_candidate(text: &str) -> Result<Option<CandidateSpec>, String> {
    let words = shell_words::split(text).map_err(|e| format!("{e} (quote paths with spaces)"))?;
    let Some((file, flags)) = words.split_first() else {
        return Ok(None);
    };
    let mut takes_value = false;
    for w in flags {
        let allowed = takes_value
            || ["-D", "--define", "--candidate-kernel", "--nvrtc-opt"].contains(&w.as_str())
            || ["-D", "--define=", "--nvrtc-opt=", "--candidate-kernel="]
                .iter()
                .any(|p| w.starts_with(p) && w.len() > p.len());
        if !allowed {
            return Err(format!(
                "{}: after the file come only -D NAME=VALUE, --nvrtc-opt OPT and --candidate-kernel NAME",
                rr_format::text::quoted(w)
            ));
        }
        takes_value =
            !takes_value && ["-D", "--define", "--candidate-kernel"].contains(&w.as_str());
    }
    let argv = ["rr-tui", "replay", "x.json", "--candidate", file.as_str()]
        .into_iter()
        .map(String::from)
        .chain(flags.iter().cloned());
    match <super::Cli as clap::Parser>::try_parse_from(argv) {
        Ok(super::Cli {
            command: Some(super::Command::Replay(a)),
            ..
        }) => Ok(a.request().candidate),
        Ok(_) => Err("not a candidate".into()),
        Err(e) => Err(e
            .to_string()
            .lines()
            .next()
            .unwrap_or("not a candidate")
            .trim_start_matches("error: ")
            .to_string()),
    }
}

/// The text the A/B prompt shows for `spec`, which [`parse_candidate`] reads back as `spec`: the
/// prompt opens holding the candidate in force. (What the user edits, not a child's command
/// line: children get typed jobs.)
pub(crate) fn candidate_text(spec: &CandidateSpec) -> String {
    let mut words = vec![spec.path.display().to_string()];
    if let Some(k) = &spec.kernel {
        // `=`: a name starting with `-` is a value, not a flag.
        words.push(format!("--candidate-kernel={k}"));
    }
    for d in &spec.defines {
        words.extend(["-D".to_string(), d.spec()]);
    }
    for o in &spec.options {
        words.push(format!("--nvrtc-opt={o}"));
    }
    shell_words::join(words)
}

/// `NAME` or `NAME=VALUE` (see [`Define::parse`]).
pub(crate) fn parse_define(s: &str) -> Result<Define, String> {
    Define::parse(s)
}

/// The job's limits and their parsers (`--repetitions`, `--warmup`, the explorer's prompt and
/// config file), which [`rr_engine::replay::ReplayRequest::check`] holds jobs to: one rule, one
/// place.
pub(crate) use rr_engine::replay::request::{parse_repetitions, parse_warmup};

/// Seconds from 0 (no limit) to a day (the job's limit).
pub(crate) fn parse_kernel_timeout(s: &str) -> Result<f64, String> {
    use rr_engine::replay::request::MAX_KERNEL_TIMEOUT;
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=MAX_KERNEL_TIMEOUT).contains(&v) => Ok(v),
        _ => Err(format!(
            "{} is not a number of seconds from 0 (no limit) to {MAX_KERNEL_TIMEOUT}",
            rr_format::text::quoted(s)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{candidate_text, parse_candidate};
    use rr_engine::replay::candidate::{CandidateSpec, Define};

    /// A flag's value a parser refuses is quoted once escaped and at most 40 characters long:
    /// a 300-digit number or an escape sequence typed as a number is not echoed back as it is.
    #[test]
    fn a_refused_value_is_quoted_short_and_escaped_once() {
        let long = format!("{}x", "9".repeat(300));
        for e in [
            crate::cli::positive_f64(&long).unwrap_err(),
            super::parse_kernel_timeout(&long).unwrap_err(),
            crate::cli::parse_repetitions(&long).unwrap_err(),
        ] {
            assert!(
                e.len() < 150 && e.contains(&format!("\"{}…\"", "9".repeat(40))),
                "{e}"
            );
        }
        let e = crate::cli::positive_f64("1\x1b[2J").unwrap_err();
        assert!(e.starts_with("\"1\\x1b[2J\": "), "{e}");
    }

    /// A dimension past u32 is said to be too large, with the limit and which dimension; zero,
    /// a sign or a word is still "expected … positive integers".
    #[test]
    fn a_launch_dimension_too_large_is_said_so() {
        use crate::cli::parse_dim3;
        assert_eq!(parse_dim3("4294967295x1"), Ok([u32::MAX, 1, 1]));
        let e = parse_dim3("99999999999").unwrap_err();
        assert_eq!(e, "\"99999999999\": X is too large (at most 4294967295)");
        let e = parse_dim3("1x4294967296x1").unwrap_err();
        assert!(e.ends_with(": Y is too large (at most 4294967295)"), "{e}");
        for refused in ["0", "-5", "1x0", "ax1", "1x2x3x4"] {
            let e = parse_dim3(refused).unwrap_err();
            assert!(e.contains("positive integers"), "{refused}: {e}");
        }
    }

    /// The A/B prompt opens holding the candidate in force, which it reads back unchanged: names
    /// and options that look like flags, paths with spaces.
    #[test]
    fn the_candidates_prompt_text_reads_back_as_the_candidate() {
        let spec = CandidateSpec {
            path: "my dir/k.cu".into(),
            kernel: Some("-k2".into()),
            defines: vec![Define::parse("A=1").unwrap(), Define::parse("B").unwrap()],
            options: vec!["--use_fast_math".into(), "-maxrregcount=64".into()],
        };
        let text = candidate_text(&spec);
        assert_eq!(parse_candidate(&text), Ok(Some(spec)));
        let plain = CandidateSpec {
            path: "k.cubin".into(),
            ..Default::default()
        };
        assert_eq!(candidate_text(&plain), "k.cubin");
        assert_eq!(parse_candidate(&candidate_text(&plain)), Ok(Some(plain)));
    }
}
