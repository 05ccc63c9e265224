//! The replay event stream: what `rr-tui replay --json` prints, one JSON object per line, and
//! what the explorer's worker reads from its child process (ARCHITECTURE.md, "Replay protocol").
//!
//! Order: `start`, `phase`*, `restore`, `rep`* (one per measured repetition, as it happens),
//! `summary`, `verify`?, `saved`?, then `done`. On failure: `error`, then `done {ok: false}`.
//! A child that dies without `done` (a crash, a kill) is reported by the reader as an error.

use serde::{Deserialize, Serialize};

use super::stats::Stats;
use crate::diff::regions::RegionReport;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Start {
        kernel: String,
        device: String,
        sm: u32,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem: u32,
        repetitions: u32,
        warmup: u32,
    },
    Phase {
        name: String,
        detail: String,
    },
    /// The first restore of the recorded input, from host memory.
    Restore {
        bytes: u64,
        seconds: f64,
        gb_per_s: f64,
        /// Where later repetitions restore from: "device" (pristine copy) or "host".
        between_reps: String,
    },
    Rep {
        index: u32,
        kernel_ns: f64,
        host_ns: f64,
        restore_ns: f64,
    },
    Summary {
        kernel_ns: Stats,
        host_ns: Stats,
        restore_ns: Stats,
    },
    Verify(VerifyOutcome),
    Saved {
        path: String,
    },
    Error {
        message: String,
    },
    Done {
        ok: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyOutcome {
    pub passed: bool,
    /// "bytes" or the typed comparison, e.g. "f32 atol=0 rtol=0.00001 ulp=0".
    pub mode: String,
    pub expected_len: u64,
    pub replayed_len: u64,
    pub differing_bytes: u64,
    pub differing_ranges: usize,
    /// The first differing byte ranges, `[offset, length]`.
    pub first_ranges: Vec<[u64; 2]>,
    /// Regions (arguments, segments) with differences.
    pub regions: Vec<RegionReport>,
}

impl Event {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"event":"error","message":"cannot encode event: {e}"}}"#)
        })
    }
    pub fn parse(line: &str) -> Result<Event, String> {
        serde_json::from_str(line).map_err(|e| format!("bad replay event {line:?}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let events = [
            Event::Rep {
                index: 3,
                kernel_ns: 1000.5,
                host_ns: 5000.0,
                restore_ns: 20.0,
            },
            Event::Done { ok: true },
            Event::Verify(VerifyOutcome {
                passed: false,
                mode: "bytes".into(),
                expected_len: 4,
                replayed_len: 4,
                differing_bytes: 1,
                differing_ranges: 1,
                first_ranges: vec![[2, 1]],
                regions: vec![],
            }),
        ];
        for e in events {
            assert_eq!(Event::parse(&e.to_line()).unwrap(), e);
        }
        assert!(Event::to_line(&Event::Done { ok: true }).contains(r#""event":"done""#));
        assert!(Event::parse("{}").is_err());
    }
}
