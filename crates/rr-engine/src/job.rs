//! The one child-process protocol: how one rr-tui process hands typed work to another (the
//! explorer to its replay, tune and A/B children, `profile` to the replay ncu runs, the tuner to
//! its engines, a serving replay to its successor) without turning the typed job back into
//! command-line text. A job is one JSON object on one line, `{"protocol": 1, "<kind>": {…}}`,
//! where `<kind>` names the job type ([`Job::KIND`]); results come back as JSON event lines.
//!
//! Reading a job is strict, as it is input from another process: the protocol version is read
//! first, unknown keys (at every depth: the job types deny them) and keys given twice are
//! refused, and the job must pass the same limits as the command line ([`Job::check`]) before
//! anything runs. Defaults and limits live on the job types, nowhere else.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The version of the job envelope (the events have their own versions).
pub const JOB_PROTOCOL: u32 = 1;
/// Where a job is handed to a process that cannot read it from a pipe: a fresh copy of a serving
/// replay, or a replay started by a tool in between (ncu, for `profile`). Other children read
/// their job as the first line of their standard input ([`spawn`]).
pub const JOB_ENV: &str = "RR_TUI_JOB";
/// A job line longer than this is not one of ours (a job is a few hundred bytes). Below the
/// 128 KiB Linux allows one environment variable, where a job may be handed over.
pub const MAX_JOB_LINE: usize = 64 << 10;

/// A kind of job one rr-tui process hands to another.
pub trait Job: Serialize + DeserializeOwned {
    /// The key that names this kind in the envelope: `replay`, `tune`, `engine`, …
    const KIND: &'static str;
    /// Whether the job keeps the command line's limits; the message names the flag it breaks.
    fn check(&self) -> Result<(), String>;
}

/// Why a job line was refused, with the run it names when that could be read (a serving process
/// answers that run with an error and goes on; a line with no run ends it).
#[derive(Debug, Clone, PartialEq)]
pub struct JobError {
    pub run: Option<u64>,
    pub message: String,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

struct Outgoing<'a, J>(&'a J);

impl<J: Job> Serialize for Outgoing<'_, J> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("protocol", &JOB_PROTOCOL)?;
        map.serialize_entry(J::KIND, self.0)?;
        map.end()
    }
}

/// One job as a line of JSON (without the newline).
pub fn encode<J: Job>(job: &J) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec(&Outgoing(job)).map_err(std::io::Error::other)
}

/// One job as the line a process reads it from, newline included; a job longer than a process
/// takes ([`MAX_JOB_LINE`]) is refused here, before any process starts.
pub fn line<J: Job>(job: &J) -> std::io::Result<Vec<u8>> {
    let mut line = encode(job)?;
    if line.len() > MAX_JOB_LINE {
        return Err(std::io::Error::other(format!(
            "a {} job of {} bytes: more than the {MAX_JOB_LINE} one may take",
            J::KIND,
            line.len()
        )));
    }
    line.push(b'\n');
    Ok(line)
}

/// One job as the value of [`JOB_ENV`], for a process that cannot be handed it on a pipe (the
/// program ncu runs); refused as [`line`] refuses it.
pub fn env_value<J: Job>(job: &J) -> std::io::Result<std::ffi::OsString> {
    use std::os::unix::ffi::OsStringExt;
    let mut line = line(job)?;
    line.pop();
    // JSON escapes every control character: the line holds no NUL.
    Ok(std::ffi::OsString::from_vec(line))
}

/// `exe job`: the process that runs the job [`spawn`] hands it (and none from this process's
/// environment).
pub fn command(exe: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("job").env_remove(JOB_ENV);
    cmd
}

/// Start `cmd` (an `rr-tui job`, [`command`]) and hand it `job` as the one line on its standard
/// input, which then closes. A child that ends before taking it is seen as it ends.
pub fn spawn<J: Job>(
    cmd: &mut std::process::Command,
    job: &J,
) -> std::io::Result<std::process::Child> {
    use std::io::Write;
    let line = line(job)?;
    let mut child = cmd.stdin(std::process::Stdio::piped()).spawn()?;
    if let Some(mut pipe) = child.stdin.take() {
        let _ = pipe.write_all(&line);
    }
    Ok(child)
}

/// The kind a job line names (the envelope's key other than `protocol`), after its version:
/// what a process that runs any job reads first to know which to decode.
pub fn kind_of(line: &[u8]) -> Result<String, JobError> {
    let value = envelope(line)?;
    let kinds: Vec<&String> = value.keys().filter(|k| *k != "protocol").collect();
    match kinds.as_slice() {
        [kind] => Ok((*kind).clone()),
        _ => Err(JobError {
            run: None,
            message: "a job line must name exactly one kind of job beside its protocol".into(),
        }),
    }
}

/// Read one job line of kind `J`: its version, its fields, its limits.
pub fn decode<J: Job>(line: &[u8]) -> Result<J, JobError> {
    let value = envelope(line)?;
    let run = value
        .get(J::KIND)
        .and_then(|r| r.get("run_id"))
        .and_then(Value::as_u64);
    // What serde and the checks quote of a hostile value (a 300-digit number) is cut short.
    let refuse = |message: String| JobError {
        run,
        message: rr_format::text::numbers_capped(&message).into_owned(),
    };
    // Typed from the bytes, not the value: a key given twice is refused, not merged.
    let mut de = serde_json::Deserializer::from_slice(line);
    let job = de
        .deserialize_map(EnvelopeVisitor::<J>(PhantomData))
        .and_then(|job| de.end().map(|()| job))
        .map_err(|e| refuse(format!("not a job of kind `{}`: {e}", J::KIND)))?;
    job.check().map_err(refuse)?;
    Ok(job)
}

/// The line as a JSON object whose protocol this rr-tui reads.
fn envelope(line: &[u8]) -> Result<serde_json::Map<String, Value>, JobError> {
    let refuse = |message: String| JobError {
        run: None,
        message: rr_format::text::numbers_capped(&message).into_owned(),
    };
    // Its newline, as a reader hands it over, is not the job's.
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    if body.len() > MAX_JOB_LINE {
        return Err(refuse(format!(
            "a job line of {} bytes: more than {MAX_JOB_LINE}",
            body.len()
        )));
    }
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| refuse(format!("a job line that is not JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(refuse("a line that is no job: not a JSON object".into()));
    };
    let run = map
        .values()
        .find_map(|v| v.get("run_id"))
        .and_then(Value::as_u64);
    match map.get("protocol").and_then(Value::as_u64) {
        Some(v) if v == u64::from(JOB_PROTOCOL) => Ok(map),
        Some(v) => Err(JobError {
            run,
            message: format!("a job of protocol {v}: this rr-tui reads protocol {JOB_PROTOCOL}"),
        }),
        None => Err(JobError {
            run,
            message: "a line that is no job: no protocol version".into(),
        }),
    }
}

/// Reads `{"protocol": 1, "<J::KIND>": J}`, refusing other keys and keys given twice.
struct EnvelopeVisitor<J>(PhantomData<J>);

impl<'de, J: Job> Visitor<'de> for EnvelopeVisitor<J> {
    type Value = J;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a {} job", J::KIND)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut protocol: Option<u32> = None;
        let mut job: Option<J> = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "protocol" {
                if protocol.replace(map.next_value()?).is_some() {
                    return Err(de::Error::duplicate_field("protocol"));
                }
            } else if key == J::KIND {
                if job.replace(map.next_value()?).is_some() {
                    return Err(de::Error::duplicate_field(J::KIND));
                }
            } else {
                return Err(de::Error::unknown_field(&key, &["protocol", J::KIND]));
            }
        }
        match (protocol, job) {
            (Some(JOB_PROTOCOL), Some(job)) => Ok(job),
            (Some(v), _) if v != JOB_PROTOCOL => Err(de::Error::custom(format!(
                "a job of protocol {v}: this rr-tui reads protocol {JOB_PROTOCOL}"
            ))),
            (None, _) => Err(de::Error::missing_field("protocol")),
            _ => Err(de::Error::missing_field(J::KIND)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Probe {
        run_id: u64,
        count: u32,
    }

    impl Job for Probe {
        const KIND: &'static str = "probe";
        fn check(&self) -> Result<(), String> {
            match self.count {
                0 => Err("--count must be at least 1".into()),
                _ => Ok(()),
            }
        }
    }

    #[test]
    fn a_job_reads_back_and_names_its_kind() {
        let job = Probe {
            run_id: 7,
            count: 3,
        };
        let line = encode(&job).unwrap();
        assert_eq!(line, br#"{"protocol":1,"probe":{"run_id":7,"count":3}}"#);
        assert_eq!(kind_of(&line).unwrap(), "probe");
        assert_eq!(decode::<Probe>(&line), Ok(job));
    }

    #[test]
    fn a_job_is_handed_over_as_one_line_or_in_the_environment() {
        let job = Probe {
            run_id: 7,
            count: 3,
        };
        let cmd = command(std::path::Path::new("/bin/rr-tui"));
        assert_eq!(cmd.get_args().collect::<Vec<_>>(), ["job"]);
        // No job of this process's environment reaches the child.
        assert_eq!(
            cmd.get_envs().collect::<Vec<_>>(),
            [(std::ffi::OsStr::new(JOB_ENV), None)]
        );
        let l = line(&job).unwrap();
        assert_eq!(l.last(), Some(&b'\n'));
        assert_eq!(decode::<Probe>(&l[..l.len() - 1]), Ok(job));
        let v = env_value(&Probe {
            run_id: 7,
            count: 3,
        })
        .unwrap();
        assert_eq!(v.as_encoded_bytes(), &l[..l.len() - 1]);
        // Handed to a process on its standard input, which then closes.
        let mut sh = std::process::Command::new("/bin/sh");
        sh.args([
            "-c",
            "read -r l; read -r more && exit 4; printf '%s' \"$l\"",
        ])
        .stdout(std::process::Stdio::piped());
        let out = spawn(
            &mut sh,
            &Probe {
                run_id: 7,
                count: 3,
            },
        )
        .unwrap()
        .wait_with_output()
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, &l[..l.len() - 1]);
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Big {
        text: String,
    }

    impl Job for Big {
        const KIND: &'static str = "big";
        fn check(&self) -> Result<(), String> {
            Ok(())
        }
    }

    /// A job too large for the line a process reads is refused before any process starts.
    #[test]
    fn a_job_over_the_line_limit_is_not_handed_over() {
        let big = Big {
            text: "x".repeat(MAX_JOB_LINE),
        };
        let e = line(&big).unwrap_err().to_string();
        assert!(e.contains("big job") && e.contains("more than"), "{e}");
        assert!(env_value(&big).is_err());
        let mut sh = std::process::Command::new("/bin/true");
        assert!(spawn(&mut sh, &big).is_err());
        let fits = Big {
            text: "x".repeat(MAX_JOB_LINE - 100),
        };
        assert!(line(&fits).is_ok() && env_value(&fits).is_ok());
    }

    #[test]
    fn versions_kinds_keys_and_limits_are_checked() {
        let e = decode::<Probe>(br#"{"protocol":2,"probe":{"run_id":7,"count":3}}"#).unwrap_err();
        assert_eq!(e.run, Some(7));
        assert!(e.message.contains("protocol 2"), "{e}");
        let e = decode::<Probe>(br#"{"protocol":1,"tune":{"run_id":7}}"#).unwrap_err();
        assert!(e.message.contains("tune"), "{e}");
        let e =
            decode::<Probe>(br#"{"protocol":1,"probe":{"run_id":7,"count":3,"x":1}}"#).unwrap_err();
        assert!(e.message.contains("`x`"), "{e}");
        let twice =
            br#"{"protocol":1,"probe":{"run_id":1,"count":1},"probe":{"run_id":1,"count":9}}"#;
        assert!(decode::<Probe>(twice)
            .unwrap_err()
            .message
            .contains("duplicate"));
        let e = decode::<Probe>(br#"{"protocol":1,"probe":{"run_id":5,"count":0}}"#).unwrap_err();
        assert_eq!(
            (e.run, e.message.as_str()),
            (Some(5), "--count must be at least 1")
        );
        assert!(decode::<Probe>(br#"["probe"]"#)
            .unwrap_err()
            .message
            .contains("no job"));
        assert!(decode::<Probe>(b"{")
            .unwrap_err()
            .message
            .contains("not JSON"));
        assert!(decode::<Probe>(&vec![b' '; MAX_JOB_LINE + 1]).is_err());
        let both = br#"{"protocol":1,"probe":{},"tune":{}}"#;
        assert!(kind_of(both).unwrap_err().message.contains("exactly one"));
    }
}
