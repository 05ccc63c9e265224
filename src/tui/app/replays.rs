//! Replay results kept per instance for the session.

use std::path::Path;

use rr_engine::replay::stats::Stats;
use rr_engine::replay::{Event, VerifyOutcome};

/// A run in a child process (a replay or a sweep) that an instance may be waiting for.
pub trait ChildRunState {
    fn run_id(&self) -> u64;
    fn phase(&self) -> &Phase;
}

/// The instance whose current run is `run`, if one is waiting for it: a cancelled run's child
/// can still be talking after a new run of the same instance has started, and must not touch it.
pub fn waiting_for<R: ChildRunState>(
    runs: &std::collections::HashMap<usize, R>,
    run: u64,
) -> Option<usize> {
    runs.iter()
        .find(|(_, r)| r.run_id() == run && *r.phase() != Phase::Cancelled)
        .map(|(&i, _)| i)
}

#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    Running,
    Done,
    Failed(String),
    Cancelled,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRun {
    /// The run id its events carry.
    pub run: u64,
    pub verify: bool,
    pub phase: Phase,
    pub device: Option<String>,
    pub detail: String,
    pub repetitions: u32,
    pub kernel_ns: Vec<f64>,
    pub host_ns: Vec<f64>,
    pub restore_ns: Vec<f64>,
    pub restore_gbps: Option<f64>,
    pub verification: Option<VerifyOutcome>,
    pub saved: Option<String>,
}

impl ReplayRun {
    pub fn new(run: u64, verify: bool, repetitions: u32) -> ReplayRun {
        ReplayRun {
            run,
            verify,
            phase: Phase::Running,
            device: None,
            detail: "starting the replay process".into(),
            repetitions,
            kernel_ns: vec![],
            host_ns: vec![],
            restore_ns: vec![],
            restore_gbps: None,
            verification: None,
            saved: None,
        }
    }

    pub fn apply(&mut self, e: Event) {
        match e {
            Event::Start { .. } | Event::Launch { .. } => {
                self.detail = "preparing the replay".into()
            }
            Event::Device { name, sm, .. } => {
                self.device = Some(format!("{name} (sm_{sm})"));
                self.detail = "reserving recorded addresses".into();
            }
            Event::Phase { name, detail } => self.detail = format!("{name}: {detail}"),
            Event::Restore {
                gb_per_s,
                between_reps,
                ..
            } => {
                self.restore_gbps = Some(gb_per_s);
                self.detail = format!(
                    "restored input at {gb_per_s:.1} GB/s; {}",
                    rr_engine::replay::protocol::between_reps_text(&between_reps)
                );
            }
            Event::Rep {
                kernel_ns,
                host_ns,
                restore_ns,
                ..
            } => {
                self.kernel_ns.push(kernel_ns);
                self.host_ns.push(host_ns);
                self.restore_ns.push(restore_ns);
            }
            Event::Summary { .. } => self.detail = "repetitions done".into(),
            // Events of sweeps: a replay never emits them.
            Event::Ready { .. } | Event::Sweep { .. } | Event::Trial(_) => {}
            Event::Verify(v) => self.verification = Some(v),
            Event::Saved { path } => self.saved = Some(path),
            Event::Error { message, .. } => self.phase = Phase::Failed(message),
            Event::Done { ok } => {
                if self.phase == Phase::Running {
                    self.phase = if ok || self.verification.as_ref().is_some_and(|v| !v.passed) {
                        Phase::Done
                    } else {
                        Phase::Failed("the replay failed".into())
                    };
                }
            }
        }
    }

    pub fn kernel_stats(&self) -> Stats {
        Stats::of(&self.kernel_ns)
    }
    pub fn host_stats(&self) -> Stats {
        Stats::of(&self.host_ns)
    }

    /// Badge for the instance table.
    pub fn badge(&self) -> (&'static str, u8) {
        match (&self.phase, &self.verification) {
            (Phase::Running, _) => ("running", 1),
            (Phase::Failed(_), _) => ("failed", 4),
            (Phase::Cancelled, _) => ("cancelled", 2),
            (Phase::Done, Some(v)) if v.passed => ("verified", 5),
            (Phase::Done, Some(_)) => ("mismatch", 4),
            (Phase::Done, None) => ("replayed", 3),
        }
    }

    /// CSV of the repetitions and a JSON summary with the same fields, written fresh into `dir`
    /// as `<stem>.replay.csv` / `.json` (or `<stem>.replay-2.csv`, … when those exist: an
    /// export never replaces a file). Returns what was written.
    pub fn export(&self, dir: &Path, stem: &str, kernel: &str) -> Result<String, rr_format::Error> {
        let mut csv = Vec::new();
        {
            let mut w = csv::Writer::from_writer(&mut csv);
            let io = |e: csv::Error| rr_format::Error::Invalid(format!("CSV: {e}"));
            w.write_record(["repetition", "kernel_ns", "host_ns", "restore_ns"])
                .map_err(io)?;
            for i in 0..self.kernel_ns.len() {
                w.write_record([
                    (i + 1).to_string(),
                    self.kernel_ns[i].to_string(),
                    self.host_ns[i].to_string(),
                    self.restore_ns[i].to_string(),
                ])
                .map_err(io)?;
            }
            w.flush()
                .map_err(|e| rr_format::Error::Invalid(format!("CSV: {e}")))?;
        }
        let summary = serde_json::json!({
            "kernel": kernel,
            "device": self.device,
            "repetitions": self.kernel_ns.len(),
            "kernel_ns": self.kernel_stats(),
            "host_ns": self.host_stats(),
            "restore_ns": Stats::of(&self.restore_ns),
            "verification": self.verification,
        });
        let json = serde_json::to_string_pretty(&summary).unwrap_or_default();
        super::export::write_pair(dir, stem, "replay", &csv, json.as_bytes())
    }
}

impl ChildRunState for ReplayRun {
    fn run_id(&self) -> u64 {
        self.run
    }
    fn phase(&self) -> &Phase {
        &self.phase
    }
}
