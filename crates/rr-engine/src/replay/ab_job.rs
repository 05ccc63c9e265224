//! The A/B job: candidates judged on every recorded instance of the kernels a pattern selects
//! (`rr-tui ab`), as a typed value. The command line parses its flags into one ([`AbJob`]), the
//! explorer's leaderboard builds one directly, and `ab` hands each of its worker processes one
//! with a single candidate and the span of instances it runs ([`AbJob::worker_job`]); both go to
//! `rr-tui job` ([`crate::job`]), never as a command line. Defaults and limits live here: the
//! command line's flags take theirs from these constants, and a job that breaks a limit is
//! refused naming the flag ([`AbJob::check`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ab::DEFAULT_PAIRS;
use super::candidate::CandidateSpec;
use super::request::{ReplayRequest, Supplied, Verify, DEFAULT_KERNEL_TIMEOUT};
use crate::diff::Comparison;
use crate::job::Job;

/// The instances `FROM..TO` (0-based, TO excluded) of the selection one worker process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerSpan {
    pub from: usize,
    pub to: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AbJob {
    /// The record directory (with the pid-N/ and rank-N/ recordings below it).
    #[serde(with = "super::pathjson")]
    pub dir: PathBuf,
    /// The kernels judged: a regular expression over their mangled and demangled names
    /// (`--kernels`).
    pub kernels: String,
    /// The candidates, each judged on every instance (`--candidate`, with its build flags).
    pub candidates: Vec<CandidateSpec>,
    /// Timed pairs per instance (`--repetitions`).
    pub pairs: u32,
    /// Untimed replays before the measured ones (`--warmup`).
    pub warmup: u32,
    /// The CUDA device (`--device`; None: the recorded one).
    pub device: Option<i32>,
    /// Seconds a kernel may run (`--kernel-timeout`; 0: no limit).
    pub kernel_timeout: f64,
    /// How results are compared (`--tolerance`; None: byte for byte).
    pub tolerance: Option<Comparison>,
    /// What a legacy record lacks (`--image`, `--base-address`, `--assume-llvm18`).
    pub supplied: Supplied,
    /// Time with CUDA events alone (`--events-only`).
    pub events_only: bool,
    /// A worker process's job: one candidate on these instances, one result line each.
    pub worker: Option<WorkerSpan>,
    /// Instances of the worker's span it leaves out (0-based in the selection): those judged
    /// already when a worker goes on after another ended part way, so that the instances left
    /// rotate together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worker_skip: Vec<usize>,
    /// The leaderboard as one JSON document (`--json`) rather than text.
    pub json: bool,
}

impl AbJob {
    /// Judge `candidates` on the instances of `dir` whose kernel `kernels` matches, with every
    /// default.
    pub fn new(dir: PathBuf, kernels: String, candidates: Vec<CandidateSpec>) -> AbJob {
        AbJob {
            dir,
            kernels,
            candidates,
            pairs: DEFAULT_PAIRS,
            warmup: 0,
            device: None,
            kernel_timeout: DEFAULT_KERNEL_TIMEOUT,
            tolerance: None,
            supplied: Supplied::default(),
            events_only: false,
            worker: None,
            worker_skip: Vec::new(),
            json: false,
        }
    }

    /// How results are compared: the tolerance, else byte for byte.
    pub fn verify(&self) -> Verify {
        match self.tolerance {
            Some(c) => Verify::Typed(c),
            None => Verify::Bytes,
        }
    }

    /// The job of the worker process that judges `candidate` on the instances `from..to`: one
    /// result line each on stdout, and what ends it said on stderr, where its parent quotes it
    /// (so never `json`, which says errors on stdout).
    pub fn worker_job(&self, candidate: &CandidateSpec, from: usize, to: usize) -> AbJob {
        AbJob {
            candidates: vec![candidate.clone()],
            worker: Some(WorkerSpan { from, to }),
            json: false,
            ..self.clone()
        }
    }

    /// Whether the command line could have asked for this job: at least one candidate, the
    /// limits a replay of each candidate keeps ([`ReplayRequest::check`]: `--repetitions`,
    /// `--kernel-timeout`, `--device`, `--tolerance`, `--define`), and a worker's span and
    /// single candidate. The message names the flag.
    pub fn check(&self) -> Result<(), String> {
        if self.candidates.is_empty() {
            return Err("--candidate: at least one candidate file is judged".into());
        }
        for c in &self.candidates {
            let mut r = ReplayRequest::new(self.dir.clone());
            r.repetitions = self.pairs;
            r.warmup = self.warmup;
            r.kernel_timeout = self.kernel_timeout;
            r.overrides.device_id = self.device;
            r.verify = self.verify();
            r.supplied = self.supplied.clone();
            r.events_only = self.events_only;
            r.candidate = Some(c.clone());
            r.check()?;
        }
        if let Some(WorkerSpan { from, to }) = self.worker {
            if from >= to {
                return Err(format!("--worker {from}..{to}: FROM must be below TO"));
            }
            if self.candidates.len() != 1 {
                return Err("--worker judges one candidate".into());
            }
        }
        Ok(())
    }
}

impl Job for AbJob {
    const KIND: &'static str = "ab";
    fn check(&self) -> Result<(), String> {
        AbJob::check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{decode, encode, JobError};
    use crate::replay::candidate::Define;
    use crate::replay::request::MAX_REPETITIONS;
    use serde_json::Value;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    /// A job with every field away from its default.
    fn full() -> AbJob {
        let odd = |b: &[u8]| PathBuf::from(OsString::from_vec(b.to_vec()));
        AbJob {
            dir: odd(b"rec\xff"),
            kernels: "^_Z5scalePfi$".into(),
            candidates: vec![CandidateSpec {
                path: odd(b"c\xfe.cu"),
                kernel: Some("-k2".into()),
                defines: vec![
                    Define::parse("TILE=8").unwrap(),
                    Define::parse("FAST").unwrap(),
                ],
                options: vec!["--use_fast_math".into()],
            }],
            pairs: 37,
            warmup: 3,
            device: Some(2),
            kernel_timeout: 4.5,
            tolerance: Some(Comparison::parse_spec("f32:rtol=1e-5,ulp=4").unwrap()),
            supplied: Supplied {
                image: Some(PathBuf::from("img.cubin")),
                base_address: Some(0x7f00_0000_0000),
                assume_llvm18: true,
            },
            events_only: true,
            worker: Some(WorkerSpan { from: 2, to: 5 }),
            worker_skip: vec![3],
            json: true,
        }
    }

    fn read(line: &[u8]) -> Result<AbJob, JobError> {
        decode(line)
    }

    #[test]
    fn a_job_reads_back_as_it_was_sent() {
        let job = full();
        assert_eq!(read(&encode(&job).unwrap()), Ok(job));
        let plain = AbJob::new(
            PathBuf::from("rec"),
            ".".into(),
            vec![CandidateSpec {
                path: "a.cubin".into(),
                ..Default::default()
            }],
        );
        assert_eq!(read(&encode(&plain).unwrap()), Ok(plain.clone()));
        assert_eq!(
            (plain.pairs, plain.kernel_timeout, plain.verify()),
            (DEFAULT_PAIRS, DEFAULT_KERNEL_TIMEOUT, Verify::Bytes)
        );
    }

    #[test]
    fn a_worker_gets_one_candidate_and_its_span_and_all_else_as_it_was() {
        let mut job = full();
        job.worker = None;
        let second = CandidateSpec {
            path: "b.cu".into(),
            ..job.candidates[0].clone()
        };
        job.candidates.push(second.clone());
        job.check().unwrap();
        let w = job.worker_job(&second, 4, 9);
        assert_eq!(w.candidates, [second]);
        assert_eq!(w.worker, Some(WorkerSpan { from: 4, to: 9 }));
        assert!(!w.json);
        assert_eq!(
            AbJob {
                candidates: job.candidates.clone(),
                worker: None,
                json: true,
                ..w.clone()
            },
            job
        );
        assert_eq!(read(&encode(&w).unwrap()), Ok(w));
    }

    #[test]
    fn unknown_fields_are_refused_at_every_depth() {
        for path in [
            &["ab"][..],
            &["ab", "worker"],
            &["ab", "supplied"],
            &["ab", "tolerance", "tolerance"],
        ] {
            let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
            let mut at = &mut v;
            for p in path {
                at = &mut at[*p];
            }
            at["surprise"] = 1.into();
            let e = read(&serde_json::to_vec(&v).unwrap()).unwrap_err();
            assert!(e.message.contains("surprise"), "{path:?}: {}", e.message);
        }
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["ab"]["candidates"][0]["surprise"] = 1.into();
        assert!(read(&serde_json::to_vec(&v).unwrap())
            .unwrap_err()
            .message
            .contains("surprise"));
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["ab"].as_object_mut().unwrap().remove("pairs");
        assert!(read(&serde_json::to_vec(&v).unwrap())
            .unwrap_err()
            .message
            .contains("pairs"));
    }

    type Breaker = Box<dyn Fn(&mut AbJob)>;

    /// The command line's limits hold for jobs too: each broken one is refused naming its flag.
    #[test]
    fn a_job_outside_the_command_lines_limits_is_refused_naming_the_flag() {
        let cases: Vec<(&str, Breaker)> = vec![
            ("--candidate", Box::new(|j| j.candidates.clear())),
            ("--repetitions", Box::new(|j| j.pairs = 0)),
            ("--repetitions", Box::new(|j| j.pairs = MAX_REPETITIONS + 1)),
            ("--kernel-timeout", Box::new(|j| j.kernel_timeout = -1.0)),
            (
                "--kernel-timeout",
                Box::new(|j| j.kernel_timeout = 86_401.0),
            ),
            ("--device", Box::new(|j| j.device = Some(-1))),
            (
                "--tolerance",
                Box::new(|j| j.tolerance.as_mut().unwrap().tolerance.atol = -1.0),
            ),
            (
                "--define",
                Box::new(|j| j.candidates[0].defines[0].name = "1BAD".into()),
            ),
            (
                "--worker",
                Box::new(|j| j.worker = Some(WorkerSpan { from: 5, to: 5 })),
            ),
            (
                "--worker",
                Box::new(|j| {
                    let c = j.candidates[0].clone();
                    j.candidates.push(c);
                }),
            ),
        ];
        for (flag, break_it) in cases {
            let mut job = full();
            break_it(&mut job);
            let e = read(&encode(&job).unwrap()).unwrap_err();
            assert!(e.message.contains(flag), "{flag}: {}", e.message);
        }
    }
}
