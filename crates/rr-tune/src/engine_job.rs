//! The engine job ([`EngineJob`]) in the child-process protocol ([`rr_engine::job`]): what the tuner
//! hands the engine it starts on one GPU (`rr-tui job`, the job line first on the engine's
//! standard input, then the engine's commands, [`super::engine`]), and what an engine hub
//! (the Python package's Ray sweep) receives inside its first line and hands its actors.
//! Its defaults and limits live here ([`EngineJob::new`], [`EngineJob::check`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use rr_engine::job::Job;
use rr_engine::replay::pathjson;
use rr_engine::replay::request::{check_kernel_timeout, check_verify, Supplied, Verify};

pub use rr_engine::replay::request::DEFAULT_KERNEL_TIMEOUT;

/// A simulated engine takes this many times the engine time the sweep spent on each answer
/// unless told otherwise (`--pace`).
pub const DEFAULT_PACE: f64 = 1.0;
/// `--pace` at most.
pub const MAX_PACE: f64 = 100.0;

/// One engine: the instance it serves first, its GPU and how it measures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineJob {
    /// The instance served first (`load` commands switch to others).
    #[serde(with = "pathjson")]
    pub descriptor: PathBuf,
    /// The GPU (`--device-id`); None: the recorded one. An engine hub running the engine on a
    /// GPU of its own sets it to the one its process sees.
    pub device_id: Option<i32>,
    /// How each configuration's output is compared with the recorded one (`--tolerance`,
    /// `--no-verify`).
    pub verify: Verify,
    /// Open NVML at the start: the sweep measures energy (`--energy`).
    pub energy: bool,
    /// `--kernel-timeout`.
    pub kernel_timeout: f64,
    /// What a legacy record lacks (`--image`, `--base-address`, `--assume-llvm18`).
    pub supplied: Supplied,
    /// Answer from a finished sweep of the instance (a `tune --json-out` report) instead of a
    /// GPU (`--simulate`): what drives engines (`tune --engine-hub`, the Ray sweep) runs and is
    /// tested where there is no GPU.
    #[serde(with = "pathjson::option")]
    pub simulate: Option<PathBuf>,
    /// With `simulate`: this many times the engine time the sweep spent on each answer
    /// (`--pace`; 0: at once).
    pub pace: f64,
}

impl Job for EngineJob {
    const KIND: &'static str = "engine";
    fn check(&self) -> Result<(), String> {
        EngineJob::check(self)
    }
}

impl EngineJob {
    /// An engine of `descriptor` with every default: the recorded GPU, verified byte for byte.
    pub fn new(descriptor: PathBuf) -> EngineJob {
        EngineJob {
            descriptor,
            device_id: None,
            verify: Verify::Bytes,
            energy: false,
            kernel_timeout: DEFAULT_KERNEL_TIMEOUT,
            supplied: Supplied::default(),
            simulate: None,
            pace: DEFAULT_PACE,
        }
    }

    /// Whether `rr-tui engine`'s flags could have asked for this engine; the message names
    /// the flag.
    pub fn check(&self) -> Result<(), String> {
        if let Some(d) = self.device_id.filter(|d| *d < 0) {
            return Err(format!("--device-id {d}: must be ≥ 0 (a device ordinal)"));
        }
        check_kernel_timeout(self.kernel_timeout)?;
        check_verify(&self.verify)?;
        if !(self.pace.is_finite() && (0.0..=MAX_PACE).contains(&self.pace)) {
            return Err(format!(
                "--pace {}: expected a factor from 0 to {MAX_PACE}",
                self.pace
            ));
        }
        if self.simulate.is_none() && self.pace != DEFAULT_PACE {
            return Err("--pace goes with --simulate".into());
        }
        Ok(())
    }

    /// The engine's settings but the instance: engines with equal settings can serve each
    /// other's instances (a `load` command switches them).
    pub fn settings(&self) -> EngineJob {
        EngineJob {
            descriptor: PathBuf::new(),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_engine::diff::Comparison;
    use rr_engine::job::{encode, JobError};
    use serde_json::Value;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    fn decode(line: &[u8]) -> Result<EngineJob, JobError> {
        rr_engine::job::decode(line)
    }

    /// An engine job with every field away from its default.
    fn full() -> EngineJob {
        EngineJob {
            descriptor: PathBuf::from(OsString::from_vec(b"rec\xfe/k.json".to_vec())),
            device_id: Some(3),
            verify: Verify::Typed(Comparison::parse_spec("f16:atol=1e-3").unwrap()),
            energy: true,
            kernel_timeout: 0.0,
            supplied: Supplied {
                image: Some(PathBuf::from("img.cubin")),
                base_address: Some(0x1000),
                assume_llvm18: true,
            },
            simulate: Some(PathBuf::from("sweep.json")),
            pace: 0.0,
        }
    }

    #[test]
    fn an_engine_job_reads_back_as_it_was_sent() {
        let plain = EngineJob::new(PathBuf::from("a.json"));
        let (f, p) = (
            serde_json::to_value(full()).unwrap(),
            serde_json::to_value(&plain).unwrap(),
        );
        for (key, value) in p.as_object().unwrap() {
            assert_ne!(f[key], *value, "{key} is left at its default");
        }
        for job in [full(), plain] {
            assert_eq!(decode(&encode(&job).unwrap()), Ok(job));
        }
        // The line an engine hub receives and hands on.
        let line = String::from_utf8(encode(&EngineJob::new("a.json".into())).unwrap()).unwrap();
        assert!(
            line.starts_with(r#"{"protocol":1,"engine":{"descriptor":"a.json","device_id":null,"#),
            "{line}"
        );
    }

    /// How a test breaks a job.
    type Breaker = fn(&mut EngineJob);

    #[test]
    fn unknown_missing_and_out_of_limit_fields_are_refused_naming_the_flag() {
        let line = encode(&full()).unwrap();
        let mut v: Value = serde_json::from_slice(&line).unwrap();
        v["engine"]["argv"] = serde_json::json!(["engine"]);
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(e.message.contains("argv"), "{}", e.message);
        let mut v: Value = serde_json::from_slice(&line).unwrap();
        v["engine"].as_object_mut().unwrap().remove("pace");
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(e.message.contains("pace"), "{}", e.message);
        let cases: Vec<(&str, Breaker)> = vec![
            ("--device-id", |j: &mut EngineJob| j.device_id = Some(-1)),
            ("--kernel-timeout", |j: &mut EngineJob| {
                j.kernel_timeout = 86_401.0
            }),
            ("--pace", |j: &mut EngineJob| j.pace = 101.0),
            ("--pace", |j: &mut EngineJob| j.pace = -0.5),
            ("--pace goes with --simulate", |j: &mut EngineJob| {
                j.simulate = None
            }),
            ("--tolerance", |j: &mut EngineJob| {
                if let Verify::Typed(c) = &mut j.verify {
                    c.tolerance.rtol = -1.0;
                }
            }),
        ];
        for (flag, break_it) in cases {
            let mut job = full();
            break_it(&mut job);
            let e = decode(&encode(&job).unwrap()).unwrap_err();
            assert!(e.message.contains(flag), "{flag}: {}", e.message);
        }
    }

    #[test]
    fn settings_leave_the_instance_out() {
        let a = full();
        let b = EngineJob {
            descriptor: PathBuf::from("other.json"),
            ..full()
        };
        assert_eq!(a.settings(), b.settings());
        let c = EngineJob {
            device_id: Some(0),
            ..full()
        };
        assert_ne!(a.settings(), c.settings());
    }
}
