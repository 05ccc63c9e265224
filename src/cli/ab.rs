//! `rr-tui ab`'s arguments: candidates judged on every recorded instance of a kernel.

use clap::Args;
use std::path::PathBuf;

use super::deprecated::OldSpelling;
use super::replay::{parse_kernel_timeout, CandidateBuildArgs};
use super::{flags, parse_repetitions, parse_tolerance};

#[derive(Debug, Args, Clone, Default)]
// `--kernels` is required, but through its old spelling too (a group: the completion scripts
// drop hidden flags, and what refers to them): the usage says so itself.
#[command(
    override_usage = "rr-tui ab [OPTIONS] --kernels <REGEX> --candidate <FILE> <DIR>",
    group = clap::ArgGroup::new("pattern").required(true).args(["kernels", "kernel_old"])
)]
pub struct AbArgs {
    /// Record directory (with the pid-N/ and rank-N/ recordings below it).
    ///
    /// One record directory, as `record --dir` wrote it: the recordings of the program's other
    /// processes and MPI ranks below it count too. A directory of record directories is
    /// refused: give each in turn.
    pub dir: PathBuf,
    /// The kernels to judge: a regular expression over their names.
    ///
    /// Matched against the mangled and the demangled name, as `record --kernels` and `tune DIR
    /// --kernels` select kernels (anchor it with ^…$ for one kernel). Every recorded instance
    /// of a matching kernel is run.
    #[arg(long, value_name = "REGEX")]
    pub kernels: Option<String>,
    /// `--kernels`' old spelling, taken for now with a note.
    #[arg(
        long = "kernel",
        value_name = "REGEX",
        hide = true,
        conflicts_with = "kernels",
        value_parser = OldSpelling::new("--kernel", "--kernels", clap::builder::StringValueParser::new())
    )]
    pub kernel_old: Option<String>,
    // One file a flag, repeated for several (`--candidate a.cu --candidate b.cu`): a list would
    // take DIR after it for a candidate. Each is judged on every instance. One text with
    // `replay`'s (`flags`).
    #[arg(long, value_name = "FILE", num_args = 1, action = clap::ArgAction::Append, required = true, help = flags::CANDIDATE, long_help = flags::CANDIDATE_LONG)]
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
    #[command(flatten)]
    pub supplied: super::SuppliedArgs,
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

    /// The kernel pattern (`--kernels`, or its old spelling `--kernel`).
    pub fn pattern(&self) -> &str {
        self.kernels
            .as_deref()
            .or(self.kernel_old.as_deref())
            .unwrap_or_default()
    }

    /// The arguments of the worker process of `candidate` over instances `from..to`: paths as
    /// they are (a name that is not UTF-8 reaches the worker unchanged).
    pub fn worker_args(
        &self,
        candidate: &std::path::Path,
        from: usize,
        to: usize,
    ) -> Vec<std::ffi::OsString> {
        let mut v: Vec<std::ffi::OsString> = vec![
            "ab".into(),
            self.dir.clone().into(),
            format!("--kernels={}", self.pattern()).into(),
            format!("--repetitions={}", self.pairs()).into(),
            format!("--warmup={}", self.warmup).into(),
            format!("--kernel-timeout={}", self.kernel_timeout).into(),
            format!("--worker={from}..{to}").into(),
            "--candidate".into(),
            candidate.into(),
        ];
        // The build flags; the file is given above, as it is.
        v.extend(
            self.build
                .spec(candidate)
                .to_args()
                .into_iter()
                .skip(2)
                .map(Into::into),
        );
        if let Some(t) = &self.tolerance {
            v.push(format!("--tolerance={}", t.to_spec()).into());
        }
        if let Some(image) = &self.supplied.image {
            v.extend(["--image".into(), image.clone().into()]);
        }
        if let Some(a) = self.supplied.base_address {
            v.push(format!("--base-address={a:#x}").into());
        }
        if self.supplied.assume_llvm18 {
            v.push("--assume-llvm18".into());
        }
        if let Some(d) = self.device {
            v.push(format!("--device={d}").into());
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
            "--kernels",
            "scale",
            "--candidate",
            "a.cu",
            "--candidate",
            "b.cubin",
            "-D",
            "TILE=8",
            "--tolerance",
            "f32:rtol=1e-5",
        ]);
        assert_eq!(
            a.candidate,
            [PathBuf::from("a.cu"), PathBuf::from("b.cubin")]
        );
        assert_eq!(a.pattern(), "scale");
        assert_eq!(a.pairs(), 100);
        let w = a.worker_args(&a.candidate[0], 2, 5);
        let w: Vec<String> = w.iter().map(|s| s.to_str().unwrap().to_string()).collect();
        assert!(w.contains(&"--worker=2..5".to_string()), "{w:?}");
        assert!(w.contains(&"--define".to_string()) && w.contains(&"TILE=8".to_string()));
        // The worker's own arguments parse back to the same request.
        let argv: Vec<&str> = w.iter().skip(1).map(String::as_str).collect();
        let back = parse(&argv);
        assert_eq!(back.worker, Some((2, 5)));
        assert_eq!(back.candidate, [PathBuf::from("a.cu")]);
        assert_eq!(back.pattern(), "scale");
        assert_eq!(back.tolerance, a.tolerance);
        // What a legacy record lacks reaches the worker too.
        let a = parse(&[
            "rec",
            "--kernels",
            ".",
            "--candidate",
            "a.cu",
            "--image",
            "k.cubin",
            "--base-address",
            "0x1000",
            "--assume-llvm18",
        ]);
        let w = a.worker_args(&a.candidate[0], 0, 1);
        let argv: Vec<&str> = w.iter().skip(1).map(|s| s.to_str().unwrap()).collect();
        assert_eq!(parse(&argv).supplied, a.supplied);
        assert!(parse_span("5..2").is_err() && parse_span("x").is_err());
    }

    /// The usage line as written: DIR after the flags is DIR, not one more candidate.
    #[test]
    fn dir_after_the_candidate_is_the_dir() {
        let a = parse(&["--kernels", ".", "--candidate", "cand.cu", "rec"]);
        assert_eq!(a.dir, PathBuf::from("rec"));
        assert_eq!(a.candidate, [PathBuf::from("cand.cu")]);
        // One file per --candidate: a second word is an argument of its own.
        let argv = [
            "rr-tui",
            "ab",
            "rec",
            "--kernels",
            ".",
            "--candidate",
            "a.cu",
            "b.cu",
        ];
        assert!(crate::cli::Cli::try_parse_from(argv).is_err());
    }

    /// `--kernel`, the old spelling of `--kernels`, still works; both at once do not.
    #[test]
    fn kernel_is_the_old_spelling_of_kernels() {
        let a = parse(&["rec", "--kernel", "scale", "--candidate", "a.cu"]);
        assert_eq!(a.pattern(), "scale");
        let both = [
            "rr-tui",
            "ab",
            "rec",
            "--kernel",
            "a",
            "--kernels",
            "b",
            "--candidate",
            "a.cu",
        ];
        assert!(crate::cli::Cli::try_parse_from(both).is_err());
        let none = ["rr-tui", "ab", "rec", "--candidate", "a.cu"];
        let e = crate::cli::Cli::try_parse_from(none)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--kernels"), "{e}");
    }

    /// A path that is not UTF-8 reaches the worker as it is.
    #[test]
    fn worker_paths_are_passed_as_they_are() {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"c\xff.cu");
        let a = parse(&["rec", "--kernels", ".", "--candidate", "a.cu"]);
        let w = a.worker_args(std::path::Path::new(odd), 0, 1);
        assert!(w.iter().any(|s| s.as_os_str() == odd), "{w:?}");
    }
}
