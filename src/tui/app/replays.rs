//! Replay results kept per instance for the session.

use std::path::Path;

use rr_engine::replay::ab::AbOutcome;
use rr_engine::replay::stats::Stats;
use rr_engine::replay::{Event, VerifyOutcome};

/// Replays of instances with more memory than this write no `.replay_output`: they are verified
/// on the GPU (only differing chunks come back), so a neighbouring instance's replay in the
/// kept process takes a fraction of a second, not the minute of reading back and writing tens
/// of GiB into the session directory.
pub const SAVED_OUTPUT_LIMIT: u64 = 1 << 30;

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
    /// What a kept replay process did with the last replay's memory: kept it (`switched`) or
    /// could not (`fresh`, why).
    pub memory: Option<String>,
    /// An A/B replay's candidate: what it is, its times, its verification and the verdict.
    pub candidate: Option<CandidateRun>,
}

/// The candidate side of an A/B replay.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CandidateRun {
    /// "kernel k (compiled from k.cu with NVRTC for sm_90, compiled in 0.41 s)".
    pub what: String,
    pub kernel_ns: Vec<f64>,
    pub verification: Option<VerifyOutcome>,
    pub compare: Option<AbOutcome>,
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
            memory: None,
            candidate: None,
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
            Event::Phase { name, detail } => {
                match name.as_str() {
                    "switched" => {
                        self.memory = Some(format!("memory kept from the last replay: {detail}"))
                    }
                    "fresh" => self.memory = Some(detail.clone()),
                    _ => {}
                }
                self.detail = format!("{name}: {detail}");
            }
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
                candidate: true,
                ..
            } => self.candidate_mut().kernel_ns.push(kernel_ns),
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
            Event::Energy(e) => self.detail = format!("energy: {}", e.describe()),
            // Events of sweeps and profiles: a replay never emits them.
            Event::Ready { .. } | Event::Sweep { .. } | Event::Trial(_) | Event::Profile(_) => {}
            Event::Verify(v) if v.candidate => self.candidate_mut().verification = Some(v),
            Event::Verify(v) => self.verification = Some(v),
            Event::Candidate {
                path,
                kernel,
                kind,
                compile_seconds,
            } => {
                self.candidate_mut().what = format!(
                    "{}: kernel {} ({kind}{})",
                    rr_format::text::visible(&path),
                    rr_format::demangle(&kernel),
                    compile_seconds
                        .map(|s| format!(", compiled in {s:.2} s"))
                        .unwrap_or_default()
                );
                self.detail = "A/B: verifying the candidate, then alternating pairs".into();
            }
            Event::Compare(o) => {
                self.detail = format!("A/B done: {}", o.verdict.describe());
                self.candidate_mut().compare = Some(o);
            }
            Event::Saved { path } => self.saved = Some(path),
            Event::Error { message, .. } => self.phase = Phase::Failed(message),
            Event::Done { ok } => {
                if self.phase == Phase::Running {
                    self.phase = if ok || self.deciding_verification().is_some_and(|v| !v.passed) {
                        Phase::Done
                    } else {
                        Phase::Failed("the replay failed".into())
                    };
                }
            }
        }
    }

    fn candidate_mut(&mut self) -> &mut CandidateRun {
        self.candidate.get_or_insert_with(CandidateRun::default)
    }

    /// The verification that decides the badge: an A/B replay's candidate's, else the replay's.
    fn deciding_verification(&self) -> Option<&VerifyOutcome> {
        match &self.candidate {
            Some(c) => c.verification.as_ref(),
            None => self.verification.as_ref(),
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
        match (&self.phase, self.deciding_verification()) {
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
            // An A/B replay adds the candidate's time of the same pair.
            let b = self.candidate.as_ref().map(|c| &c.kernel_ns);
            let mut header = vec!["repetition", "kernel_ns", "host_ns", "restore_ns"];
            if b.is_some() {
                header.push("candidate_kernel_ns");
            }
            w.write_record(&header).map_err(io)?;
            for i in 0..self.kernel_ns.len() {
                let mut row = vec![
                    (i + 1).to_string(),
                    self.kernel_ns[i].to_string(),
                    self.host_ns[i].to_string(),
                    self.restore_ns[i].to_string(),
                ];
                if let Some(b) = b {
                    row.push(b.get(i).map(f64::to_string).unwrap_or_default());
                }
                w.write_record(&row).map_err(io)?;
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
            "candidate": self.candidate.as_ref().map(|c| serde_json::json!({
                "candidate": c.what,
                "kernel_ns": Stats::of(&c.kernel_ns),
                "verification": c.verification,
                "compare": c.compare,
            })),
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
