//! One answer, for every screen, to "may this GPU work start now?": replays, sweeps, profiles
//! and candidates' leaderboards all time kernels on the same GPU, and a timing taken while
//! another runs means nothing. So one at a time, and one way of saying why not.

use super::App;

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
    fn cancel(self) -> &'static str {
        match self {
            GpuWork::Replay | GpuWork::Leaderboard => "4, then c",
            GpuWork::Sweep => "5, then c",
            GpuWork::Profile => "6, then c",
        }
    }
}

impl App {
    /// The GPU work running now, and how to name it (at most one runs: every start asks
    /// [`App::gpu_busy`] first).
    pub(super) fn gpu_work(&self) -> Option<(GpuWork, String)> {
        if self.running.is_some() {
            return Some((GpuWork::Replay, "a replay".into()));
        }
        if let Some(t) = self.tuning {
            let name = self.rows.get(t).map(|r| r.demangled.as_str()).unwrap_or("");
            return Some((GpuWork::Sweep, format!("a sweep of {name}")));
        }
        if self.profile.running.is_some() {
            return Some((GpuWork::Profile, "a profile".into()));
        }
        if self.leaderboard.as_ref().is_some_and(|l| l.is_running()) {
            return Some((GpuWork::Leaderboard, "the candidates' leaderboard".into()));
        }
        None
    }

    /// Why `wanted` cannot start now, if it cannot: the work that holds the GPU, and how to end it.
    pub(super) fn gpu_busy(&self, wanted: GpuWork) -> Option<String> {
        let (running, label) = self.gpu_work()?;
        let already = if running == wanted { " already" } else { "" };
        let keys = running.cancel();
        Some(format!(
            "{label} is{already} running: let it finish or cancel it ({keys})"
        ))
    }
}
