//! `rr-tui ab`'s arguments: candidates judged on every recorded instance of a kernel, converted
//! once into the A/B job ([`AbJob`]) that `commands::ab` runs.

use clap::Args;
use std::path::PathBuf;

use rr_engine::replay::ab_job::{AbJob, WorkerSpan};
use rr_engine::replay::candidate::is_source;

use super::deprecated::OldSpelling;
use super::replay::{parse_kernel_timeout, CandidateBuildArgs};
use super::{flags, parse_repetitions, parse_tolerance};

#[derive(Debug, Args, Clone)]
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
    /// refused: give each in turn. For one instance, `replay X.json --candidate FILE`.
    pub dir: PathBuf,
    /// The kernels to judge: a regular expression over their names.
    ///
    /// Matched against the mangled and the demangled name, as `record --kernels` and `tune DIR
    /// --kernels` select kernels (anchor it with ^…$ for one kernel). Every recorded instance
    /// of a matching kernel is run, the candidate under that kernel's name. `rr-tui report DIR`
    /// names each instance's kernel; `tune --list DIR --kernels REGEX` lists what a pattern
    /// selects.
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
    /// Timed pairs per instance.
    ///
    /// Each pair runs the recorded kernel and the candidate, alternating which goes first.
    #[arg(long, value_name = "N", default_value_t = rr_engine::replay::ab::DEFAULT_PAIRS, value_parser = parse_repetitions, allow_negative_numbers = true)]
    pub repetitions: u32,
    /// Untimed replays before the measured ones.
    #[arg(long, default_value_t = 0, value_parser = super::parse_warmup)]
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
    /// Run as a worker of one candidate: the instances FROM..TO (0-based, TO excluded) of the
    /// selection, one JSON result a line (what `ab` hands each of its workers as a job).
    #[arg(long, value_name = "FROM..TO", hide = true, value_parser = parse_span)]
    pub worker: Option<(usize, usize)>,
}

/// `FROM..TO`, FROM < TO.
fn parse_span(s: &str) -> Result<(usize, usize), String> {
    s.split_once("..")
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .filter(|(a, b)| a < b)
        .ok_or_else(|| format!("{} is not FROM..TO", rr_format::text::quoted(s)))
}

impl AbArgs {
    /// The kernel pattern (`--kernels`, or its old spelling `--kernel`).
    pub fn pattern(&self) -> &str {
        self.kernels
            .as_deref()
            .or(self.kernel_old.as_deref())
            .unwrap_or_default()
    }

    /// The A/B job these flags ask for: the one conversion from text. `-D` and `--nvrtc-opt`
    /// apply to the source candidates when there is one (compiled ones ignore them, as
    /// `commands::ab` notes), else to every candidate (which refuses them, as `replay` does).
    /// `--candidate-kernel` applies to every candidate.
    pub fn job(&self) -> AbJob {
        let any_source = self.candidate.iter().any(|c| is_source(c));
        let spec = |c: &PathBuf| {
            let mut s = self.build.spec(c);
            if any_source && !is_source(c) {
                s.defines.clear();
                s.options.clear();
            }
            s
        };
        AbJob {
            dir: self.dir.clone(),
            kernels: self.pattern().to_string(),
            candidates: self.candidate.iter().map(spec).collect(),
            pairs: self.repetitions,
            warmup: self.warmup,
            device: self.device,
            kernel_timeout: self.kernel_timeout,
            tolerance: self.tolerance,
            supplied: self.supplied.supplied(),
            events_only: self.events_only,
            worker: self.worker.map(|(from, to)| WorkerSpan { from, to }),
            worker_skip: Vec::new(),
            json: self.json,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use rr_engine::replay::candidate::{CandidateSpec, Define};

    fn parse(words: &[&str]) -> AbArgs {
        let argv = ["rr-tui", "ab"].iter().chain(words).copied();
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            Some(crate::cli::Command::Ab(a)) => a,
            other => panic!("{other:?}"),
        }
    }

    fn read(job: &AbJob) -> AbJob {
        rr_engine::job::decode(&rr_engine::job::encode(job).unwrap()).unwrap()
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
        let job = a.job();
        assert_eq!(job.kernels, "scale");
        assert_eq!(job.pairs, 100);
        // The defines apply to the source; the compiled candidate ignores them.
        let paths: Vec<&std::path::Path> =
            job.candidates.iter().map(|c| c.path.as_path()).collect();
        assert_eq!(
            paths,
            [
                std::path::Path::new("a.cu"),
                std::path::Path::new("b.cubin")
            ]
        );
        assert_eq!(
            job.candidates[0].defines,
            [Define::parse("TILE=8").unwrap()]
        );
        assert!(job.candidates[1].defines.is_empty());
        // With no source among them, every candidate has them (and `preflight` refuses them).
        let only = parse(&[
            "rec",
            "--kernels",
            "k",
            "--candidate",
            "b.cubin",
            "--nvrtc-opt=-O3",
        ]);
        assert_eq!(only.job().candidates[0].options, ["-O3"]);
        let w = job.worker_job(&job.candidates[0], 2, 5);
        assert_eq!(w.worker, Some(WorkerSpan { from: 2, to: 5 }));
        assert_eq!(w.candidates, job.candidates[..1]);
        // The worker's job reads back as it was sent, and is what its command line would ask.
        assert_eq!(read(&w), w);
        let by_hand = parse(&[
            "rec",
            "--kernels",
            "scale",
            "--candidate",
            "a.cu",
            "-D",
            "TILE=8",
            "--tolerance",
            "f32:rtol=1e-5",
            "--worker=2..5",
        ]);
        assert_eq!(by_hand.job(), w);
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
        let job = a.job();
        let w = read(&job.worker_job(&job.candidates[0], 0, 1));
        assert_eq!(w.supplied, a.supplied.supplied());
        assert_eq!(w.supplied.base_address, Some(0x1000));
        assert!(parse_span("5..2").is_err() && parse_span("x").is_err());
    }

    /// Every flag reaches its field of the job.
    #[test]
    fn every_flag_becomes_the_job() {
        let a = parse(&[
            "rec",
            "--kernels=^k$",
            "--candidate",
            "a.cu",
            "--candidate-kernel=-k2",
            "-D",
            "ILP=4",
            "--nvrtc-opt=--use_fast_math",
            "--tolerance",
            "f32:rtol=1e-5,ulp=4",
            "--repetitions",
            "7",
            "--warmup",
            "3",
            "--device",
            "1",
            "--kernel-timeout",
            "4.5",
            "--json",
            "--image",
            "k.cubin",
            "--base-address",
            "0x1000",
            "--assume-llvm18",
            "--events-only",
            "--worker=0..9",
        ]);
        let want = AbJob {
            dir: "rec".into(),
            kernels: "^k$".into(),
            candidates: vec![CandidateSpec {
                path: "a.cu".into(),
                kernel: Some("-k2".into()),
                defines: vec![Define::parse("ILP=4").unwrap()],
                options: vec!["--use_fast_math".into()],
            }],
            pairs: 7,
            warmup: 3,
            device: Some(1),
            kernel_timeout: 4.5,
            tolerance: Some(
                rr_engine::diff::Comparison::parse_spec("f32:rtol=1e-5,ulp=4").unwrap(),
            ),
            supplied: rr_engine::replay::Supplied {
                image: Some("k.cubin".into()),
                base_address: Some(0x1000),
                assume_llvm18: true,
            },
            events_only: true,
            worker: Some(WorkerSpan { from: 0, to: 9 }),
            worker_skip: Vec::new(),
            json: true,
        };
        assert_eq!(a.job(), want);
        want.check().unwrap();
        // And nothing: the job's defaults.
        let a = parse(&["rec", "--kernels", ".", "--candidate", "a.cu"]);
        let plain = AbJob::new(
            "rec".into(),
            ".".into(),
            vec![CandidateSpec {
                path: "a.cu".into(),
                ..Default::default()
            }],
        );
        assert_eq!(a.job(), plain);
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
        let argv: Vec<&std::ffi::OsStr> = ["rr-tui", "ab", "rec", "--kernels", ".", "--candidate"]
            .into_iter()
            .map(std::ffi::OsStr::new)
            .chain([odd])
            .collect();
        let Some(crate::cli::Command::Ab(a)) =
            crate::cli::Cli::try_parse_from(argv).unwrap().command
        else {
            panic!("not ab")
        };
        let job = a.job();
        let w = read(&job.worker_job(&job.candidates[0], 0, 1));
        assert_eq!(w.candidates[0].path.as_os_str(), odd);
    }
}
