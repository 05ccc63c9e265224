//! `rr-tui ab`'s arguments: candidates judged on every recorded instance of a kernel.

use clap::Args;
use std::path::PathBuf;

use super::replay::{parse_kernel_timeout, CandidateBuildArgs};
use super::{flags, parse_repetitions, parse_tolerance};

#[derive(Debug, Args, Clone, Default)]
pub struct AbArgs {
    /// Record directory.
    pub dir: PathBuf,
    /// The kernels to judge: a regular expression over their names.
    ///
    /// Matched against the mangled and the demangled name, as the recorder and `tune DIR`
    /// select kernels (anchor it with ^…$ for one kernel). Every recorded instance of a
    /// matching kernel is run.
    #[arg(long, value_name = "REGEX")]
    pub kernel: String,
    // Several: each is judged on every instance. One text with `replay`'s (`flags`).
    #[arg(long, value_name = "FILE", num_args = 1.., required = true, help = flags::CANDIDATE, long_help = flags::CANDIDATE_LONG)]
    pub candidate: Vec<PathBuf>,
    #[command(flatten)]
    pub build: CandidateBuildArgs,
    #[arg(long, value_name = "SPEC", value_parser = parse_tolerance, help = flags::TOLERANCE, long_help = flags::TOLERANCE_LONG)]
    pub tolerance: Option<rr_engine::diff::Comparison>,
    /// Timed pairs per instance [default: 100].
    ///
    /// Each pair runs the recorded kernel and the candidate, alternating which goes first.
    #[arg(long, value_name = "N", value_parser = parse_repetitions, allow_negative_numbers = true)]
    pub repetitions: Option<u32>,
    /// Untimed replays before the measured ones.
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// The CUDA device to run on [default: the recorded one].
    ///
    /// Its ordinal, as `record --device` (`tune --devices` takes several).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..))]
    pub device: Option<i32>,
    #[arg(long, value_name = "SECONDS", default_value_t = rr_engine::replay::request::DEFAULT_KERNEL_TIMEOUT, value_parser = parse_kernel_timeout, help = flags::KERNEL_TIMEOUT, long_help = flags::KERNEL_TIMEOUT_LONG)]
    pub kernel_timeout: f64,
    /// The leaderboard as one JSON document (schema rr-tui.ab/1).
    ///
    /// Described in docs/ab-testing.md; fields are only added within a schema version.
    #[arg(long)]
    pub json: bool,
    /// Time with CUDA events alone (as `replay --events-only`): for stand-in drivers in tests.
    #[arg(long, hide = true)]
    pub events_only: bool,
    /// The worker process of one candidate: the instances FROM..TO (0-based, TO excluded) of
    /// the selection, one JSON result a line.
    #[arg(long, value_name = "FROM..TO", hide = true, value_parser = parse_span)]
    pub worker: Option<(usize, usize)>,
}

/// `FROM..TO`, FROM < TO.
fn parse_span(s: &str) -> Result<(usize, usize), String> {
    s.split_once("..")
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .filter(|(a, b)| a < b)
        .ok_or_else(|| format!("{s:?} is not FROM..TO"))
}

impl AbArgs {
    /// The pairs timed per instance.
    pub fn pairs(&self) -> u32 {
        self.repetitions
            .unwrap_or(rr_engine::replay::ab::DEFAULT_PAIRS)
    }

    /// How results are compared: bytes, or the tolerance.
    pub fn verify(&self) -> rr_engine::replay::Verify {
        match self.tolerance {
            Some(c) => rr_engine::replay::Verify::Typed(c),
            None => rr_engine::replay::Verify::Bytes,
        }
    }

    /// The arguments of the worker process of `candidate` over instances `from..to`.
    pub fn worker_args(&self, candidate: &std::path::Path, from: usize, to: usize) -> Vec<String> {
        let mut v = vec![
            "ab".to_string(),
            self.dir.display().to_string(),
            format!("--kernel={}", self.kernel),
            format!("--repetitions={}", self.pairs()),
            format!("--warmup={}", self.warmup),
            format!("--kernel-timeout={}", self.kernel_timeout),
            format!("--worker={from}..{to}"),
        ];
        v.extend(self.build.spec(candidate).to_args());
        if let Some(t) = &self.tolerance {
            v.push(format!("--tolerance={}", t.to_spec()));
        }
        if let Some(d) = self.device {
            v.push(format!("--device={d}"));
        }
        if self.events_only {
            v.push("--events-only".into());
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(words: &[&str]) -> AbArgs {
        let argv = ["rr-tui", "ab"].iter().chain(words).copied();
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            Some(crate::cli::Command::Ab(a)) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn several_candidates_and_their_build_flags() {
        let a = parse(&[
            "rec",
            "--kernel",
            "scale",
            "--candidate",
            "a.cu",
            "b.cubin",
            "-D",
            "TILE=8",
            "--tolerance",
            "f32:rtol=1e-5",
        ]);
        assert_eq!(a.candidate.len(), 2);
        assert_eq!(a.pairs(), 100);
        let w = a.worker_args(&a.candidate[0], 2, 5);
        assert!(w.contains(&"--worker=2..5".to_string()), "{w:?}");
        assert!(w.contains(&"--define".to_string()) && w.contains(&"TILE=8".to_string()));
        // The worker's own arguments parse back to the same request.
        let argv: Vec<&str> = w.iter().skip(1).map(String::as_str).collect();
        let back = parse(&argv);
        assert_eq!(back.worker, Some((2, 5)));
        assert_eq!(back.candidate, [PathBuf::from("a.cu")]);
        assert_eq!(back.tolerance, a.tolerance);
        assert!(parse_span("5..2").is_err() && parse_span("x").is_err());
    }
}
