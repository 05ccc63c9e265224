//! The replay job ([`ReplayRequest`]) in the child-process protocol ([`crate::job`]): how the
//! explorer hands a replay to its replay process, `profile` to the replay ncu runs, and a
//! serving process the job it cannot run itself to its successor. Its limits are the command
//! line's ([`ReplayRequest::check`]).

use super::request::ReplayRequest;
use crate::job::Job;

impl Job for ReplayRequest {
    const KIND: &'static str = "replay";
    fn check(&self) -> Result<(), String> {
        ReplayRequest::check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Comparison;
    use crate::job::{encode, JobError, MAX_JOB_LINE};
    use crate::replay::candidate::{CandidateSpec, Define};
    use crate::replay::request::{Overrides, Supplied, Verify, MAX_REPETITIONS, MAX_WARMUP};
    use crate::replay::timing::NoiseTarget;
    use serde_json::Value;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    use std::path::PathBuf;

    fn decode(line: &[u8]) -> Result<ReplayRequest, JobError> {
        crate::job::decode(line)
    }

    /// A job with every field away from its default.
    fn full() -> ReplayRequest {
        let mut r = ReplayRequest::new(PathBuf::from(OsString::from_vec(
            b"rec\xff/k.json".to_vec(),
        )));
        r.overrides = Overrides {
            grid: Some([4, 2, 1]),
            block: None,
            num_teams: None,
            num_threads: Some(64),
            shared_mem: Some(1024),
            device_id: Some(1),
            ignore_limits: true,
        };
        r.supplied = Supplied {
            image: Some(PathBuf::from("img.cubin")),
            base_address: Some(0x7f00_0000_0000),
            assume_llvm18: true,
        };
        r.repetitions = 500;
        r.warmup = 3;
        r.cold = true;
        r.noise = Some(NoiseTarget::default());
        r.verify = Verify::Typed(Comparison::parse_spec("f32:rtol=1e-5,ulp=4").unwrap());
        r.verify_on_host = true;
        r.save_output = true;
        r.output_dir = Some(PathBuf::from("out dir"));
        r.run_id = u64::MAX;
        r.strict = true;
        r.kernel_timeout = 2.5;
        r.candidate = Some(CandidateSpec {
            path: PathBuf::from("-k.cu"),
            kernel: Some("-name".into()),
            defines: vec![
                Define::parse("ILP=4").unwrap(),
                Define::parse("FAST").unwrap(),
            ],
            options: vec!["--use_fast_math".into()],
        });
        r.events_only = true;
        r
    }

    #[test]
    fn a_job_reads_back_as_it_was_sent_paths_in_any_bytes_included() {
        let job = full();
        assert_eq!(decode(&encode(&job).unwrap()), Ok(job));
        let plain = ReplayRequest::new(PathBuf::from("a.json"));
        assert_eq!(decode(&encode(&plain).unwrap()), Ok(plain));
    }

    #[test]
    fn the_version_is_read_first_and_names_the_run() {
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["protocol"] = 2.into();
        v["replay"]["surprise"] = 1.into();
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert_eq!(e.run, Some(u64::MAX));
        assert!(e.message.contains("protocol 2"), "{}", e.message);
        let e = decode(br#"["replay", "x.json", "--json"]"#).unwrap_err();
        assert_eq!(e.run, None);
        assert!(e.message.contains("no job"), "{}", e.message);
        let e = decode(b"{").unwrap_err();
        assert!(e.message.contains("not JSON"), "{}", e.message);
    }

    #[test]
    fn unknown_and_missing_fields_are_refused() {
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["replay"]["surprise"] = 1.into();
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(e.message.contains("surprise"), "{}", e.message);
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["replay"].as_object_mut().unwrap().remove("repetitions");
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(e.message.contains("repetitions"), "{}", e.message);
        assert!(decode(&vec![b' '; MAX_JOB_LINE + 1]).is_err());
        // Inside nested values too, and a key given twice is no job either.
        let mut v: Value = serde_json::from_slice(&encode(&full()).unwrap()).unwrap();
        v["replay"]["verify"]["typed"]["tolerance"]["evil"] = 1.into();
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(e.message.contains("evil"), "{}", e.message);
        let twice = String::from_utf8(encode(&full()).unwrap())
            .unwrap()
            .replacen("\"protocol\":1,", "\"protocol\":2,\"protocol\":1,", 1);
        let e = decode(twice.as_bytes()).unwrap_err();
        assert!(e.message.contains("duplicate"), "{}", e.message);
    }

    /// How a test breaks a job.
    type Breaker = Box<dyn Fn(&mut ReplayRequest)>;

    /// The command line's limits hold for jobs too: each broken one is refused naming its flag.
    #[test]
    fn a_job_outside_the_command_lines_limits_is_refused_naming_the_flag() {
        let cases: Vec<(&str, Breaker)> = vec![
            ("--repetitions", Box::new(|r| r.repetitions = 0)),
            (
                "--repetitions",
                Box::new(|r| r.repetitions = MAX_REPETITIONS + 1),
            ),
            ("--warmup", Box::new(|r| r.warmup = MAX_WARMUP + 1)),
            ("--kernel-timeout", Box::new(|r| r.kernel_timeout = -1.0)),
            (
                "--kernel-timeout",
                Box::new(|r| r.kernel_timeout = 86_401.0),
            ),
            ("--grid", Box::new(|r| r.overrides.grid = Some([0, 1, 1]))),
            ("--num-teams", Box::new(|r| r.overrides.num_teams = Some(2))),
            (
                "--num-threads",
                Box::new(|r| r.overrides.block = Some([32, 1, 1])),
            ),
            ("--device", Box::new(|r| r.overrides.device_id = Some(-1))),
            (
                "--max-noise",
                Box::new(|r| r.noise.as_mut().unwrap().max_noise = Some(0.0)),
            ),
            (
                "--min-samples",
                Box::new(|r| r.noise.as_mut().unwrap().min_samples = 1),
            ),
            (
                "--timeout",
                Box::new(|r| r.noise.as_mut().unwrap().timeout = 0.0),
            ),
            (
                "--min-time",
                Box::new(|r| r.noise.as_mut().unwrap().min_gpu_time = 3601.0),
            ),
            (
                "--tolerance",
                Box::new(|r| {
                    if let Verify::Typed(c) = &mut r.verify {
                        c.tolerance.atol = -1.0
                    }
                }),
            ),
            ("--energy", Box::new(|r| r.energy = true)),
            (
                "--define",
                Box::new(|r| {
                    r.candidate.as_mut().unwrap().defines[0].name = "1BAD".into();
                }),
            ),
        ];
        for (flag, break_it) in cases {
            let mut job = full();
            break_it(&mut job);
            let e = decode(&encode(&job).unwrap()).unwrap_err();
            assert!(e.message.contains(flag), "{flag}: {}", e.message);
            assert_eq!(e.run, Some(u64::MAX), "{flag}");
        }
    }
}
