//! One answer, for every screen, to "may this GPU work start now?": replays, sweeps, profiles
//! and candidates' leaderboards all time kernels on the same GPU, and a timing taken while
//! another runs means nothing. So one at a time, and one way of saying why not.
//!
//! [`GpuJobs`] is the explorer's side of the executor (`tui::executor`, which owns every child
//! process): every screen starts and ends its GPU work through it, and gets the command the
//! executor carries out; the executor reports back what only it knows (whether the last
//! replay's process is kept). `update` stays free of processes, so tests drive it alone.

use super::{App, Cmd, Row};

/// The kinds of work that hold the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuWork {
    Replay,
    Sweep,
    Profile,
    Leaderboard,
}

impl GpuWork {
    /// Where it is cancelled: its screen's key, then `c`.
    fn cancel_keys(self) -> &'static str {
        match self {
            GpuWork::Replay | GpuWork::Leaderboard => "4, then c",
            GpuWork::Sweep => "5, then c",
            GpuWork::Profile => "6, then c",
        }
    }

    /// The command that ends its process (and what that started).
    fn cancel(self) -> Cmd {
        match self {
            GpuWork::Replay => Cmd::CancelReplay,
            GpuWork::Sweep => Cmd::CancelTune,
            GpuWork::Profile => Cmd::CancelProfile,
            GpuWork::Leaderboard => Cmd::CancelLeaderboard,
        }
    }
}

/// The GPU work running: its kind, the instance it is of, its run id (the one its events carry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub work: GpuWork,
    pub instance: usize,
    pub run: u64,
}

/// What holds the GPU, and the run ids handed out.
#[derive(Debug, Clone, Default)]
pub struct GpuJobs {
    /// The id of the latest run; every run gets a new one, so the last words of a cancelled
    /// run never pass for the one that replaced it.
    last_run: u64,
    running: Option<Running>,
    /// The last replay's process waits for the next replay, holding its instance's memory on
    /// the GPU (set by the executor, which owns the process).
    pub kept: bool,
}

impl GpuJobs {
    /// The GPU work running now (at most one: every start asks [`GpuJobs::busy`] first).
    pub fn running(&self) -> Option<Running> {
        self.running
    }

    /// The instance `work` runs on, when that is what holds the GPU.
    pub fn of(&self, work: GpuWork) -> Option<usize> {
        self.running.filter(|r| r.work == work).map(|r| r.instance)
    }

    /// The id the next run will get.
    pub fn next_run(&self) -> u64 {
        self.last_run + 1
    }

    /// Runs up to `run` exist already (a sweep opened from its file): later ones count on.
    pub fn seen_run(&mut self, run: u64) {
        self.last_run = self.last_run.max(run);
    }

    /// The same numbering with nothing running (another record opened in the same explorer,
    /// after everything of the one before was ended).
    pub fn numbering(&self) -> GpuJobs {
        GpuJobs {
            last_run: self.last_run,
            ..GpuJobs::default()
        }
    }

    /// `work` of `instance` holds the GPU from now: its run id.
    pub fn begin(&mut self, work: GpuWork, instance: usize) -> u64 {
        self.last_run += 1;
        self.running = Some(Running {
            work,
            instance,
            run: self.last_run,
        });
        self.last_run
    }

    /// `work` ended: what ran, if `work` was what held the GPU.
    pub fn end(&mut self, work: GpuWork) -> Option<Running> {
        match self.running {
            Some(r) if r.work == work => self.running.take(),
            _ => None,
        }
    }

    /// `work` is cancelled: what ran, and the command that ends its process.
    pub fn cancel(&mut self, work: GpuWork) -> Option<(Running, Cmd)> {
        self.end(work).map(|r| (r, work.cancel()))
    }

    /// Everything ends (quitting, or leaving the record for the picker): the commands that end
    /// every process, the kept replay process too, whatever the ledger says.
    pub fn end_all(&mut self) -> Vec<Cmd> {
        self.running = None;
        self.kept = false;
        [
            GpuWork::Replay,
            GpuWork::Sweep,
            GpuWork::Profile,
            GpuWork::Leaderboard,
        ]
        .map(GpuWork::cancel)
        .into()
    }

    /// Why `wanted` cannot start now, if it cannot: the work that holds the GPU, and how to
    /// end it (`rows` name a sweep's instance).
    pub fn busy(&self, wanted: GpuWork, rows: &[Row]) -> Option<String> {
        let running = self.running?;
        let label = match running.work {
            GpuWork::Replay => "a replay".to_string(),
            GpuWork::Sweep => {
                let name = rows
                    .get(running.instance)
                    .map(|r| r.demangled.as_str())
                    .unwrap_or("");
                format!("a sweep of {name}")
            }
            GpuWork::Profile => "a profile".into(),
            GpuWork::Leaderboard => "the candidates' leaderboard".into(),
        };
        let already = if running.work == wanted {
            " already"
        } else {
            ""
        };
        let keys = running.work.cancel_keys();
        Some(format!(
            "{label} is{already} running: let it finish or cancel it ({keys})"
        ))
    }
}

impl App {
    /// Why `wanted` cannot start now, if it cannot ([`GpuJobs::busy`]).
    pub(super) fn gpu_busy(&self, wanted: GpuWork) -> Option<String> {
        self.jobs.busy(wanted, &self.rows)
    }
}
