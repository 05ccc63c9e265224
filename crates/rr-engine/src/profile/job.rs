//! The profile job: what `rr-tui profile` is asked to do, as a typed value. The command line
//! parses its flags into one ([`ProfileJob`]), the explorer builds one directly and hands it to
//! `rr-tui job` ([`crate::job`]); the replay the job runs under Nsight Compute is a replay job
//! ([`ProfileJob::replay`]) handed to ncu's target in the environment. Defaults and limits live
//! here: the command line's flags take their defaults from these constants, and a job that breaks
//! a limit is refused naming the flag ([`ProfileJob::check`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::job::Job;
use crate::replay::candidate::CandidateSpec;
use crate::replay::{Overrides, ReplayRequest, Supplied};

/// `--timeout` when none is given: a profile with many passes over a large replay takes
/// minutes, a hung one for ever.
pub const DEFAULT_TIMEOUT: f64 = 1800.0;
/// The section set when none is named.
pub const DEFAULT_SET: SectionSet = SectionSet::Basic;

/// Nsight Compute's section set kept in the report for `ncu-ui` (`--set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionSet {
    /// Speed of Light, launch statistics, occupancy, workload distribution.
    Basic,
    /// Every section ncu has (many more passes: slower).
    Full,
}

impl SectionSet {
    pub const ALL: [SectionSet; 2] = [SectionSet::Basic, SectionSet::Full];

    /// The set's name on ncu's command line (and on rr-tui's).
    pub const fn name(self) -> &'static str {
        match self {
            SectionSet::Basic => "basic",
            SectionSet::Full => "full",
        }
    }

    /// What the set holds, in words (the flag's help).
    pub const fn describe(self) -> &'static str {
        match self {
            SectionSet::Basic => {
                "Speed of Light, launch statistics, occupancy, workload distribution"
            }
            SectionSet::Full => "every section ncu has (many more passes: slower)",
        }
    }

    pub fn from_name(name: &str) -> Option<SectionSet> {
        SectionSet::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// How the result is said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileOutput {
    /// The summary as text, the progress on stderr.
    #[default]
    Text,
    /// The result as one JSON document (`--json`).
    Json,
    /// Protocol events tagged with the run id (the explorer's profile view): ncu's progress,
    /// then `profile` or `error`, then `done`.
    Events,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileJob {
    /// The instance's descriptor.
    #[serde(with = "crate::replay::pathjson")]
    pub descriptor: PathBuf,
    /// The launch profiled instead of the recorded one (`--grid`, `--block`, `--shared-mem`;
    /// None keeps the recorded value).
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub shared_mem: Option<u32>,
    /// The CUDA device (`--device`; None: the recorded one).
    pub device: Option<i32>,
    /// What a legacy record lacks (`--image`, `--base-address`, `--assume-llvm18`).
    pub supplied: Supplied,
    /// An A/B candidate profiled instead of the recorded kernel (its first repetition).
    pub candidate: Option<CandidateSpec>,
    /// Where the report goes (`--output-dir`; None: beside the descriptor).
    #[serde(with = "crate::replay::pathjson::option")]
    pub output_dir: Option<PathBuf>,
    /// The section set (`--set`), unless `sections` are named instead.
    pub set: SectionSet,
    /// Sections collected instead of a set (`--section`).
    pub sections: Vec<String>,
    /// The ncu executable (`--ncu`; None: the one found on this machine).
    #[serde(with = "crate::replay::pathjson::option")]
    pub ncu: Option<PathBuf>,
    /// ncu and the replay under it are stopped after this many seconds (`--timeout`).
    pub timeout: f64,
    pub output: ProfileOutput,
    /// The run the events carry (`--run-id`).
    pub run_id: u64,
}

impl ProfileJob {
    /// Profile `descriptor` as recorded, with every default.
    pub fn new(descriptor: PathBuf) -> ProfileJob {
        ProfileJob {
            descriptor,
            grid: None,
            block: None,
            shared_mem: None,
            device: None,
            supplied: Supplied::default(),
            candidate: None,
            output_dir: None,
            set: DEFAULT_SET,
            sections: Vec::new(),
            ncu: None,
            timeout: DEFAULT_TIMEOUT,
            output: ProfileOutput::Text,
            run_id: 1,
        }
    }

    /// The replay ncu runs: one repetition, timed with events alone (no blocking kernel for
    /// ncu to serialise behind); an A/B replay of one pair when a candidate is profiled (its
    /// first repetition is the one profiled).
    pub fn replay(&self) -> ReplayRequest {
        let mut r = ReplayRequest::new(self.descriptor.clone());
        r.overrides = Overrides {
            grid: self.grid,
            block: self.block,
            shared_mem: self.shared_mem,
            device_id: self.device,
            ..Overrides::default()
        };
        r.supplied = self.supplied.clone();
        r.output_dir = self.output_dir.clone();
        r.events_only = true;
        r.candidate = self.candidate.clone();
        r
    }

    /// Whether the command line could have asked for this job: its own flags' limits and the
    /// replay's ([`ReplayRequest::check`]); the message names the flag.
    pub fn check(&self) -> Result<(), String> {
        check_timeout(self.timeout)?;
        if !self.sections.is_empty() && self.set != DEFAULT_SET {
            return Err("--set cannot be used with --section".into());
        }
        for s in &self.sections {
            check_section(s)?;
        }
        self.replay().check()
    }
}

/// `--timeout`: a positive number of seconds.
pub fn check_timeout(seconds: f64) -> Result<(), String> {
    if seconds.is_finite() && seconds > 0.0 {
        return Ok(());
    }
    Err(format!(
        "--timeout {seconds}: expected a positive number of seconds"
    ))
}

/// A section ncu could know (`--section`: an identifier `ncu --list-sections` names, or
/// `regex:…`): nothing its command line would take for something else (an empty word, a flag)
/// and no control characters.
pub fn check_section(s: &str) -> Result<(), String> {
    if s.is_empty() || s.starts_with('-') || s.chars().any(char::is_control) {
        return Err(format!(
            "--section {}: a section identifier (ncu --list-sections names them)",
            rr_format::text::quoted(s)
        ));
    }
    Ok(())
}

impl Job for ProfileJob {
    const KIND: &'static str = "profile";
    fn check(&self) -> Result<(), String> {
        ProfileJob::check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{decode, encode, JobError};
    use crate::replay::candidate::Define;
    use serde_json::Value;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    /// A job with every field away from its default.
    fn full() -> ProfileJob {
        ProfileJob {
            descriptor: PathBuf::from(OsString::from_vec(b"rec\xff/k.json".to_vec())),
            grid: Some([4, 2, 1]),
            block: Some([128, 1, 1]),
            shared_mem: Some(1024),
            device: Some(1),
            supplied: Supplied {
                image: Some(PathBuf::from("img.cubin")),
                base_address: Some(0x7f00_0000_0000),
                assume_llvm18: true,
            },
            candidate: Some(CandidateSpec {
                path: PathBuf::from("-k.cu"),
                kernel: Some("-name".into()),
                defines: vec![Define::parse("ILP=4").unwrap()],
                options: vec!["--use_fast_math".into()],
            }),
            output_dir: Some(PathBuf::from("out dir")),
            set: SectionSet::Basic,
            sections: vec!["MemoryWorkloadAnalysis".into()],
            ncu: Some(PathBuf::from(OsString::from_vec(b"/opt/n\xfecu".to_vec()))),
            timeout: 60.5,
            output: ProfileOutput::Events,
            run_id: u64::MAX,
        }
    }

    fn read(line: &[u8]) -> Result<ProfileJob, JobError> {
        decode(line)
    }

    #[test]
    fn a_job_reads_back_as_it_was_sent() {
        let job = full();
        assert_eq!(read(&encode(&job).unwrap()), Ok(job));
        // The other set, without sections; and every default.
        let job = ProfileJob {
            set: SectionSet::Full,
            sections: vec![],
            output: ProfileOutput::Json,
            ..full()
        };
        assert_eq!(read(&encode(&job).unwrap()), Ok(job));
        let plain = ProfileJob::new(PathBuf::from("a.json"));
        assert_eq!(read(&encode(&plain).unwrap()), Ok(plain));
    }

    #[test]
    fn the_replay_is_one_repetition_timed_with_events_alone() {
        let job = full();
        let r = job.replay();
        assert_eq!((r.repetitions, r.warmup, r.events_only), (1, 0, true));
        assert_eq!(r.descriptor, job.descriptor);
        assert_eq!(r.overrides.grid, job.grid);
        assert_eq!(r.overrides.block, job.block);
        assert_eq!(r.overrides.shared_mem, job.shared_mem);
        assert_eq!(r.overrides.device_id, job.device);
        assert_eq!(r.supplied, job.supplied);
        assert_eq!(r.candidate, job.candidate);
        assert_eq!(r.output_dir, job.output_dir);
        assert!(!r.verify.is_on() && !r.energy && r.noise.is_none());
    }

    #[test]
    fn unknown_fields_are_refused_at_every_depth() {
        for path in [
            &["profile"][..],
            &["profile", "supplied"],
            &["profile", "candidate"],
        ] {
            let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
            let mut at = &mut v;
            for p in path {
                at = &mut at[*p];
            }
            at["surprise"] = 1.into();
            let e = read(&serde_json::to_vec(&v).unwrap()).unwrap_err();
            assert!(e.message.contains("surprise"), "{path:?}: {}", e.message);
            assert_eq!(e.run, Some(u64::MAX));
        }
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["profile"].as_object_mut().unwrap().remove("timeout");
        assert!(read(&serde_json::to_vec(&v).unwrap())
            .unwrap_err()
            .message
            .contains("timeout"));
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["profile"]["set"] = "most".into();
        assert!(read(&serde_json::to_vec(&v).unwrap()).is_err());
    }

    type Breaker = Box<dyn Fn(&mut ProfileJob)>;

    /// The command line's limits hold for jobs too: each broken one is refused naming its flag.
    #[test]
    fn a_job_outside_the_command_lines_limits_is_refused_naming_the_flag() {
        let cases: Vec<(&str, Breaker)> = vec![
            ("--timeout", Box::new(|j| j.timeout = 0.0)),
            ("--timeout", Box::new(|j| j.timeout = -3.0)),
            ("--set", Box::new(|j| j.set = SectionSet::Full)),
            ("--section", Box::new(|j| j.sections.push(String::new()))),
            ("--section", Box::new(|j| j.sections.push("--x".into()))),
            ("--section", Box::new(|j| j.sections.push("a\nb".into()))),
            ("--grid", Box::new(|j| j.grid = Some([0, 1, 1]))),
            ("--block", Box::new(|j| j.block = Some([1, 0, 1]))),
            ("--device", Box::new(|j| j.device = Some(-1))),
            (
                "--define",
                Box::new(|j| j.candidate.as_mut().unwrap().defines[0].name = "1X".into()),
            ),
        ];
        for (flag, break_it) in cases {
            let mut job = full();
            break_it(&mut job);
            let e = read(&encode(&job).unwrap()).unwrap_err();
            assert!(e.message.contains(flag), "{flag}: {}", e.message);
            assert_eq!(e.run, Some(u64::MAX), "{flag}");
        }
        // A non-finite timeout is no JSON number: refused as it is read, and by the check.
        let job = ProfileJob {
            timeout: f64::INFINITY,
            ..full()
        };
        assert!(job.check().unwrap_err().contains("--timeout"));
        let line = String::from_utf8(encode(&full()).unwrap())
            .unwrap()
            .replace("\"timeout\":60.5", "\"timeout\":1e999");
        assert!(read(line.as_bytes()).is_err());
    }
}
