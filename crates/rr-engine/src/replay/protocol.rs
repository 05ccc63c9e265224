//! The replay event stream, protocol version 2: what `rr-tui replay --json` prints, one JSON
//! object per line, and what the explorer and `tune` read from their child processes
//! (ARCHITECTURE.md, "Replay in a child process").
//!
//! Every line is an event tagged with the run it belongs to (`"run": N`), so a reader that has
//! moved on (a cancelled replay, a restarted child) drops the lines of runs it no longer waits
//! for. Order within a run: `start` (always first; carries the protocol version), `launch`
//! (the resolved geometry), `phase`*, `device`, `restore`, `rep`* (one per measured repetition,
//! as it happens), `summary`, `verify`?, `saved`?, then `done`. An A/B replay (`--candidate`)
//! adds `candidate` after `restore`, a `verify` of the candidate before the `rep`s (tagged
//! `candidate`, as are the candidate's `rep`s), and `compare` in place of `summary`. On failure: `error` (with its kind), then `done {ok: false}`. A child
//! that dies without `done` is reported by the reader as `error` + `done`.

use serde::{Deserialize, Serialize};

pub use super::outcome::VerifyOutcome;
use super::outcome::{AbOutcome, Energy};
use super::stats::Stats;

pub const PROTOCOL_VERSION: u32 = 2;

/// What kind of failure an `error` event reports, so a driver of many runs knows what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The record or the request is wrong (a file, a flag, a limit); nothing ran.
    Input,
    /// The launch configuration was refused; the process's context is still usable.
    Launch,
    /// A sticky fault: the context is poisoned and the process ends; continue in a fresh one.
    Fault,
    /// Recorded addresses are taken in this process (a fresh one may succeed).
    Address,
    /// Anything else (no driver, no device, out of memory, a crashed child).
    Setup,
    /// An engine hub lost the engine's machine or process (a Ray actor or node) through no
    /// fault of the request, which can go to another engine.
    Lost,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Start {
        protocol: u32,
        descriptor: String,
    },
    Launch {
        kernel: String,
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
    Device {
        name: String,
        sm: u32,
        ordinal: i32,
        /// The rated SM clock in MHz, when known (`tune --events`: the report needs it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rated_clock_mhz: Option<f64>,
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
        /// The SM clock measured right after the kernel, in MHz (absent without the probes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock_mhz: Option<f64>,
        /// The SM clock ran below 75 % of its rating: left out of the summary (adaptive mode).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        throttled: bool,
        /// An A/B replay's candidate (otherwise the recorded kernel).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        candidate: bool,
    },
    Summary {
        kernel_ns: Stats,
        host_ns: Stats,
        restore_ns: Stats,
        /// The SM clock over the repetitions, in MHz (absent without the probes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock_mhz: Option<Stats>,
        /// Throttled samples left out.
        #[serde(default)]
        discarded: usize,
        /// The device's rated SM clock, in MHz.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reference_clock_mhz: Option<f64>,
    },
    Verify(VerifyOutcome),
    /// An A/B replay's candidate, loaded and bound (after `restore`).
    Candidate {
        path: String,
        kernel: String,
        kind: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        compile_seconds: Option<f64>,
    },
    /// Energy per execution (`--energy`; before the `rep`s).
    Energy(Energy),
    /// `rr-tui profile --events`: Nsight Compute's summary of one repetition.
    Profile(Box<crate::ncu::ProfileResult>),
    /// An A/B replay's verdict (after the `rep`s, instead of `summary`).
    Compare(AbOutcome),
    /// An engine process is ready for commands: the device's rated SM clock, and whether the
    /// image is PTX (register limits possible).
    Ready {
        rated_clock_mhz: f64,
        ptx: bool,
        /// A simulated engine's sweep (`engine --simulate`): its answers are that sweep's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        simulated_from: Option<String>,
    },
    /// A sweep starts: how many configurations the axes span and how many it plans to measure.
    Sweep {
        configs: u64,
        planned: u64,
        devices: Vec<i32>,
        strategy: String,
        /// The seed of the random and annealing strategies (so a sweep can be repeated).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seed: Option<u64>,
        /// The recorded configuration (the baseline every speedup is measured against).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        recorded: Option<crate::replay::variant::Config>,
        /// Compile-time tuning's define axes (a trial's `variant` indexes their combinations).
        #[serde(
            default,
            skip_serializing_if = "crate::replay::variant::Defines::is_empty"
        )]
        defines: crate::replay::variant::Defines,
    },
    /// One configuration of a sweep (the engine's reply to `measure`; `tune --events` too).
    Trial(Box<crate::replay::variant::Trial>),
    Saved {
        path: String,
    },
    Error {
        kind: ErrorKind,
        message: String,
    },
    Done {
        ok: bool,
    },
}

/// One line of the stream: an event and the run it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tagged {
    pub run: u64,
    #[serde(flatten)]
    pub event: Event,
}

impl Event {
    /// The `rep` of a measured sample (`candidate`: an A/B replay's candidate).
    pub fn rep(index: u32, s: &super::timing::Sample, throttled: bool, candidate: bool) -> Event {
        Event::Rep {
            index,
            kernel_ns: s.kernel_ns,
            host_ns: s.host_ns,
            restore_ns: s.restore_ns,
            clock_mhz: s.clock_mhz,
            throttled,
            candidate,
        }
    }
}

impl Tagged {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                r#"{{"run":{},"event":"error","kind":"setup","message":"cannot encode event: {e}"}}"#,
                self.run
            )
        })
    }

    pub fn parse(line: &str) -> Result<Tagged, String> {
        serde_json::from_str(line).map_err(|e| {
            format!(
                "bad replay event {:?}: {e}",
                line.chars().take(200).collect::<String>()
            )
        })
    }
}

/// What a `restore` event's `between_reps` means, in words (the text output and the explorer).
pub fn between_reps_text(between_reps: &str) -> String {
    match between_reps {
        "device" => "repetitions restore from a copy on the device".into(),
        "host" => "repetitions restore from the pinned host copy".into(),
        "none" => "a single launch: nothing to restore between repetitions".into(),
        other => format!(
            "repetitions restore from {}",
            rr_format::text::visible(other)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One repetition restores nothing in between: said so, not "from the none".
    #[test]
    fn restore_sources_read_as_sentences() {
        assert!(!between_reps_text("none").contains("the none"));
        assert!(between_reps_text("device").contains("device"));
        assert_eq!(
            between_reps_text("\u{1b}x"),
            "repetitions restore from \\x1bx"
        );
    }

    #[test]
    fn round_trip_with_run_ids() {
        let events = [
            Event::Rep {
                index: 3,
                kernel_ns: 1000.5,
                host_ns: 5000.0,
                restore_ns: 20.0,
                clock_mhz: Some(1980.0),
                throttled: false,
                candidate: true,
            },
            Event::Done { ok: true },
            Event::Error {
                kind: ErrorKind::Launch,
                message: "too many threads".into(),
            },
            Event::Verify(VerifyOutcome {
                passed: false,
                mode: "bytes".into(),
                expected_len: 4,
                replayed_len: 4,
                missing_bytes: 0,
                differing_bytes: 1,
                differing_ranges: 1,
                first_ranges: vec![[2, 1]],
                regions: vec![],
                on_device: false,
                candidate: false,
            }),
        ];
        for (i, event) in events.into_iter().enumerate() {
            let t = Tagged {
                run: 40 + i as u64,
                event,
            };
            let line = t.to_line();
            assert!(line.contains(&format!("\"run\":{}", 40 + i)), "{line}");
            assert_eq!(Tagged::parse(&line).unwrap(), t);
        }
        assert!(
            Tagged::parse(r#"{"event":"done","ok":true}"#).is_err(),
            "run is required"
        );
        assert!(Tagged::parse("{}").is_err());
    }
}
