//! Sweeps kept per instance for the session: the report `tune` itself writes, built from the
//! events of a sweep child (`rr-tui job`, `tune --events`'s events) as they arrive, the heatmap, warnings, and the
//! clock (from the runtime's ticks: `update` reads no clock).

use std::path::Path;
use std::time::{Duration, Instant};

use rr_engine::replay::Event;
use rr_tune::trial::{plausible_time, DeviceInfo, MIN_KERNEL_NS};
use rr_tune::{Config, Objective, Status, Trial, TuneReport};

use super::heatmap::Heatmap;
use crate::tui::app::replays::Phase;
use rr_tune::job::TuneJob;

/// Wall time of a sweep, from the runtime's ticks: the first tick after the start, the last
/// one before the end.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunClock {
    started: Option<Instant>,
    last: Option<Instant>,
    stopped: bool,
}

impl RunClock {
    pub fn tick(&mut self, now: Instant) {
        if !self.stopped {
            self.started.get_or_insert(now);
            self.last = Some(now);
        }
    }

    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// None until a tick has been seen.
    pub fn elapsed(&self) -> Option<Duration> {
        Some(self.last?.saturating_duration_since(self.started?))
    }
}

#[derive(Debug, Clone)]
pub struct TuneRun {
    /// The run id its events carry.
    pub run: u64,
    pub phase: Phase,
    /// What the sweep has produced so far, with its metadata (exported as it is).
    pub report: TuneReport,
    /// Configurations the sweep plans to measure (known from its first event).
    pub planned: Option<u64>,
    pub warnings: Vec<String>,
    pub heat: Heatmap,
    pub clock: RunClock,
    /// The median of the recorded configuration, when it verified.
    recorded_cost: Option<f64>,
    /// Trials by status (in `Status` order), and the fastest verified ones in order: kept as
    /// trials arrive, so that a frame never scans or sorts a sweep of a million configurations.
    counts: [usize; 5],
    ranked: Vec<Trial>,
    /// The Pareto front of time against energy so far, fastest first (sweeps measuring energy
    /// take a second or more per configuration, so recomputing it per trial is cheap).
    front: Vec<Trial>,
    /// The file a finished sweep was opened from (`rr-tui SWEEP.json`), as shown; None for a
    /// sweep this session ran.
    pub opened_from: Option<String>,
}

/// The fastest configurations the screen can list (the export has them all).
pub const RANKED: usize = 20;

/// The Pareto front of time against energy of `trials`, fastest first.
fn front_of(trials: &[Trial]) -> Vec<Trial> {
    rr_tune::objective::pareto_front(trials)
        .into_iter()
        .map(|i| trials[i].clone())
        .collect()
}

fn status_index(s: Status) -> usize {
    match s {
        Status::Ok => 0,
        Status::VerifyFailed => 1,
        Status::Invalid => 2,
        Status::Fault => 3,
        Status::Skipped => 4,
    }
}

impl TuneRun {
    /// A sweep of `job` started for the kernel `kernel`; `recorded` is what the explorer
    /// knows of the recorded launch until the sweep says exactly.
    pub fn new(run: u64, job: &TuneJob, kernel: &str, recorded: Config) -> TuneRun {
        TuneRun {
            run,
            phase: Phase::Running,
            report: job.report(kernel, recorded, 0, 0),
            planned: None,
            warnings: vec![],
            heat: Heatmap::default().by(job.objective),
            clock: RunClock::default(),
            recorded_cost: None,
            counts: [0; 5],
            ranked: Vec::new(),
            front: Vec::new(),
            opened_from: None,
        }
    }

    /// A finished sweep read from its `--json-out` file (`file`, as shown), shown as if this
    /// session had run it. Its counts, best, speed-up, Pareto front and heatmap are worked out
    /// again from its rows, as for a sweep that streams in: a file may say anything in its
    /// summary fields. Rows `tune --resume` would not trust are left out and counted in a
    /// warning (a second row for a configuration, a time no launch takes); an energy no
    /// measurement gives, or one of a sweep that says it measured none, is dropped.
    pub fn from_report(run: u64, mut report: TuneReport, file: String) -> TuneRun {
        let trials = std::mem::take(&mut report.trials);
        report.best = None;
        report.speedup = None;
        report.energy_ratio = None;
        report.pareto.clear();
        if report.energy.is_some_and(|e| !e.is_plausible()) {
            report.energy = None;
        }
        let mut r = TuneRun {
            run,
            phase: Phase::Done,
            planned: Some(trials.len() as u64),
            warnings: vec![],
            heat: Heatmap::default(),
            clock: RunClock::default(),
            recorded_cost: None,
            counts: [0; 5],
            ranked: Vec::new(),
            front: Vec::new(),
            opened_from: Some(file),
            report,
        };
        r.clock.stop();
        let mut seen = std::collections::HashSet::with_capacity(trials.len());
        let (mut implausible, mut twice) = (0usize, 0usize);
        for mut t in trials {
            if t.kernel_ns.as_ref().is_some_and(|k| !plausible_time(k)) {
                implausible += 1;
                continue;
            }
            if !seen.insert(t.config) {
                twice += 1;
                continue;
            }
            if r.report.energy.is_none() || t.energy.is_some_and(|e| !e.is_plausible()) {
                t.energy = None;
            }
            t.recorded = t.config == r.report.recorded;
            t.pareto = false;
            r.rank(t);
        }
        r.front = front_of(&r.report.trials);
        // Built once over every row (rows and columns sorted once), not a row at a time.
        r.heat = Heatmap::rebuilt(
            r.heat.axes,
            r.report.defines.clone(),
            r.report.objective,
            &r.report.trials,
        );
        // The progress counts the rows shown, not those left out.
        r.planned = Some(r.report.trials.len() as u64);
        // Which reason left out how many, short: the notes line is one line of the screen.
        let mut reasons = Vec::new();
        if twice > 0 {
            reasons.push(format!("{twice} given twice"));
        }
        if implausible > 0 {
            reasons.push(format!(
                "{implausible} with an impossible time (<{MIN_KERNEL_NS} ns, …)"
            ));
        }
        if !reasons.is_empty() {
            r.warnings
                .push(format!("rows left out: {}", reasons.join(", ")));
        }
        r
    }

    pub fn apply(&mut self, e: Event) {
        match e {
            Event::Sweep {
                configs,
                planned,
                seed,
                recorded,
                defines,
                ..
            } => {
                self.heat = Heatmap::new(self.heat.axes, defines.clone()).by(self.report.objective);
                self.report.defines = defines;
                self.report.space_size = configs;
                self.planned = Some(planned);
                if let Some(s) = seed {
                    self.report.seed = s;
                }
                if let Some(r) = recorded {
                    self.report.recorded = r;
                }
            }
            Event::Device {
                name,
                sm,
                ordinal,
                rated_clock_mhz,
            } => {
                if !self.report.devices.iter().any(|d| d.ordinal == ordinal) {
                    self.report.devices.push(DeviceInfo {
                        ordinal,
                        name,
                        sm,
                        rated_clock_mhz: rated_clock_mhz.unwrap_or(0.0),
                    });
                }
            }
            Event::Trial(t) => self.add(*t),
            // `warning`s of the sweep, and lines that were no events at all.
            Event::Phase { name, detail } => self.warnings.push(if name == "warning" {
                detail
            } else {
                format!("{name}: {detail}")
            }),
            Event::Error { message, .. } => {
                self.phase = Phase::Failed(message);
                self.clock.stop();
            }
            Event::Done { .. } => {
                if self.phase == Phase::Running {
                    self.phase = Phase::Done;
                }
                self.clock.stop();
            }
            // A sweep's stream has none of these (they belong to replays and engines).
            Event::Start { .. }
            | Event::Launch { .. }
            | Event::Restore { .. }
            | Event::Rep { .. }
            | Event::Candidate { .. }
            | Event::Energy(_)
            | Event::Profile(_)
            | Event::Compare(_)
            | Event::Summary { .. }
            | Event::Verify(_)
            | Event::Ready { .. }
            | Event::Saved { .. } => {}
        }
    }

    fn add(&mut self, t: Trial) {
        self.heat.add(&t);
        let on_front = t.cost().is_some() && t.joules().is_some();
        self.rank(t);
        if on_front {
            self.front = front_of(&self.report.trials);
        }
    }

    /// Count, rank and keep one trial (the heatmap and the front are the caller's).
    fn rank(&mut self, t: Trial) {
        if t.recorded {
            self.report.recorded = t.config;
            self.recorded_cost = t.cost();
        }
        self.counts[status_index(t.status)] += 1;
        // The ranking by the objective, the best and the speedup, kept up to date without
        // rescanning.
        let objective = self.report.objective;
        if let Some(c) = objective.rank(&t) {
            let at = self.ranked.partition_point(|r| {
                objective
                    .rank(r)
                    .is_some_and(|rc| Objective::cmp_rank(rc, c).is_le())
            });
            if at < RANKED {
                self.ranked.insert(at, t.clone());
                self.ranked.truncate(RANKED);
            }
        }
        self.report.best = self.ranked.first().cloned();
        self.report.trials.push(t);
        let best = self.report.best.as_ref().and_then(Trial::cost);
        self.report.speedup = match (self.recorded_cost, best) {
            (Some(r), Some(b)) if b > 0.0 => Some(r / b),
            _ => None,
        };
    }

    /// The median of the recorded configuration, when it verified.
    pub fn recorded_cost(&self) -> Option<f64> {
        self.recorded_cost
    }

    /// Configurations that were launched (skipped ones were not).
    pub fn measured(&self) -> usize {
        self.report.trials.len() - self.count(Status::Skipped)
    }

    pub fn count(&self, s: Status) -> usize {
        self.counts[status_index(s)]
    }

    /// The best verified configurations by the objective, best first (at most [`RANKED`]).
    pub fn ranking(&self) -> &[Trial] {
        &self.ranked
    }

    /// What the table lists: the Pareto front (`front`, when energy was measured) or the best.
    pub fn listed(&self, front: bool) -> &[Trial] {
        if front && self.report.energy.is_some() {
            &self.front
        } else {
            &self.ranked
        }
    }

    /// The Pareto front of time against energy, fastest first (empty without energy).
    pub fn front(&self) -> &[Trial] {
        &self.front
    }

    /// Launched configurations per second of wall time.
    pub fn rate(&self) -> Option<f64> {
        let secs = self.clock.elapsed()?.as_secs_f64();
        (secs > 0.0).then(|| self.measured() as f64 / secs)
    }

    /// The report as `tune --json-out` would write it now (a sweep opened from a file keeps
    /// its own wall time and rate: this session did not run it).
    pub fn final_report(&self) -> TuneReport {
        let mut r = self.report.clone();
        r.summarise();
        if self.opened_from.is_none() {
            r.elapsed_s = self.clock.elapsed().map_or(0.0, |d| d.as_secs_f64());
            r.configs_per_s = self.rate().unwrap_or(0.0);
        }
        r
    }

    /// Every configuration as CSV and the report as JSON (`tune`'s own writers), written fresh
    /// into `dir` as `<stem>.tune.csv` / `.json` (never over an existing file). Returns what
    /// was written.
    pub fn export(&self, dir: &Path, stem: &str) -> Result<String, rr_format::Error> {
        let report = self.final_report();
        let csv = report
            .to_csv()
            .map_err(|e| rr_format::Error::Invalid(format!("CSV: {e}")))?;
        crate::tui::app::export::write_pair(dir, stem, "tune", &csv, &report.to_json())
    }
}

impl crate::tui::app::replays::ChildRunState for TuneRun {
    fn run_id(&self) -> u64 {
        self.run
    }
    fn phase(&self) -> &Phase {
        &self.phase
    }
}
