//! Replay jobs on a pipe: how the explorer hands a replay to its replay process, and a serving
//! process hands the job it cannot run itself to its successor, without turning the typed job
//! back into command-line text. One JSON object a line, `{"protocol": 1, "replay": {…}}`: the
//! protocol version is read first, unknown keys are refused, and the job must pass the limits
//! the command line applies ([`ReplayRequest::check`]) before anything runs. Results come back
//! as the event stream of [`super::protocol`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::ReplayRequest;

/// The version of this job format (the events have their own, `PROTOCOL_VERSION`).
pub const JOB_PROTOCOL: u32 = 1;
/// Where a serving replay process hands the job it cannot run to the fresh copy of itself.
pub const JOB_ENV: &str = "RR_TUI_REPLAY_JOB";
/// A job line longer than this is not one of ours (a job is a few hundred bytes). Below the
/// 128 KiB Linux allows one environment variable, where a job is handed to a fresh process.
pub const MAX_JOB_LINE: usize = 64 << 10;

#[derive(Serialize)]
struct Outgoing<'a> {
    protocol: u32,
    replay: &'a ReplayRequest,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Incoming {
    #[allow(dead_code)] // read (and checked) before the rest, through the untyped value
    protocol: u32,
    replay: ReplayRequest,
}

/// Why a job line was refused, with the run it names when that could be read (the process
/// answers that run with an error and goes on; a line with no run ends it).
#[derive(Debug, Clone, PartialEq)]
pub struct JobError {
    pub run: Option<u64>,
    pub message: String,
}

/// One job as a line of JSON (without the newline).
pub fn encode(job: &ReplayRequest) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec(&Outgoing {
        protocol: JOB_PROTOCOL,
        replay: job,
    })
    .map_err(std::io::Error::other)
}

/// Read one job line: its version, its fields, its limits.
pub fn decode(line: &[u8]) -> Result<ReplayRequest, JobError> {
    let refuse = |run, message: String| JobError { run, message };
    if line.len() > MAX_JOB_LINE {
        return Err(refuse(
            None,
            format!(
                "a job line of {} bytes: more than {MAX_JOB_LINE}",
                line.len()
            ),
        ));
    }
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| refuse(None, format!("a job line that is not JSON: {e}")))?;
    let run = value
        .get("replay")
        .and_then(|r| r.get("run_id"))
        .and_then(Value::as_u64);
    match value.get("protocol").and_then(Value::as_u64) {
        Some(v) if v == u64::from(JOB_PROTOCOL) => {}
        Some(v) => {
            return Err(refuse(
                run,
                format!("a job of protocol {v}: this rr-tui reads protocol {JOB_PROTOCOL}"),
            ))
        }
        None => {
            return Err(refuse(
                run,
                "a line that is no job: no protocol version".into(),
            ))
        }
    }
    // Typed from the bytes, not the value: a key given twice is refused, not merged.
    let job: Incoming =
        serde_json::from_slice(line).map_err(|e| refuse(run, format!("not a replay job: {e}")))?;
    job.replay
        .check()
        .map_err(|m| refuse(Some(job.replay.run_id), m))?;
    Ok(job.replay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Comparison;
    use crate::replay::candidate::{CandidateSpec, Define};
    use crate::replay::request::{Overrides, Supplied, Verify, MAX_REPETITIONS};
    use crate::replay::timing::NoiseTarget;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    use std::path::PathBuf;

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
