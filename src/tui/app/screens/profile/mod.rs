//! The Profile screen (`6`): Nsight Compute's profiles of the selected instance, the recorded
//! configuration's (`P` anywhere) and one of a sweep's configurations (`P` on the tuning screen:
//! the best, or the row picked with `[`/`]`) or the A/B candidate (`b`), each a profile job
//! ([`ProfileJob`], asking for events) handed to an `rr-tui job` child in the background — the
//! same job and checks as `rr-tui profile` on the command line — and cancellable (`c`). It shows
//! one, or the two side by side with the differences marked. Its state is the profiles by
//! instance (`profiles`: a run's events); which one runs is `jobs`' (what holds the GPU).

mod draw;
pub mod runs;

use std::collections::HashMap;

use ratatui::layout::Rect;
use ratatui::Frame;
use rr_engine::profile::{ProfileJob, ProfileOutput};
use rr_engine::replay::{Event, Tagged};

use super::{Component, DrawContext};
use crate::tui::app::gpu_work::Running;
use crate::tui::app::replays::Phase;
use crate::tui::app::{App, Cmd, GpuWork, Screen};
use crate::tui::keymap::Action;
use runs::{ProfileRun, Profiles, Target};

/// The profile screen's state, kept for the session.
#[derive(Debug, Default)]
pub struct ProfileScreen {
    /// Nsight Compute profiles by instance: the recorded configuration's and a sweep's best.
    pub by_instance: HashMap<usize, Profiles>,
}

impl ProfileScreen {
    /// The profile run `running` is (a profile's run id is its slot's).
    fn run_of(&mut self, running: Running) -> Option<&mut ProfileRun> {
        let p = self.by_instance.get_mut(&running.instance)?;
        [&mut p.recorded, &mut p.tuned]
            .into_iter()
            .flatten()
            .find(|r| r.run == running.run)
    }

    /// Why the GPU cannot take a profile now (the record's own reason, or other GPU work), if it cannot.
    fn refused(app: &App, i: usize) -> Option<String> {
        if let Some(blocker) = app.replay_blocker(i) {
            return Some(blocker.refusal("profile", "profiled"));
        }
        app.gpu_busy(GpuWork::Profile)
    }

    /// `P`: profile the selected instance as recorded.
    pub(crate) fn start(app: &mut App) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("no instance selected", true);
            return vec![];
        };
        Self::start_of(app, i, Target::Recorded, None, None, "recorded".into())
    }

    /// `b` on the profile screen: profile the A/B candidate (`C` on the replay screen) in the
    /// second place, beside the recorded kernel.
    pub(crate) fn start_candidate(app: &mut App) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("no instance selected", true);
            return vec![];
        };
        let Some(c) = app.settings.candidate.clone() else {
            app.set_status(
                "no A/B candidate: set one with C on the replay screen (4), then b here",
                true,
            );
            return vec![];
        };
        let label = format!("candidate: {}", rr_format::text::visible_path(&c.path));
        Self::start_of(app, i, Target::Tuned, None, Some(c), label)
    }

    /// `P` on the tuning screen: profile the configuration picked in its table (`[`/`]`; the
    /// best unless another row was picked).
    pub(crate) fn start_tuned(app: &mut App) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("no instance selected", true);
            return vec![];
        };
        let picked = app.tune.runs.get(&i).and_then(|r| {
            let listed = r.listed(app.tune.show_front);
            let at = app.tune.pick.min(listed.len().checked_sub(1)?);
            Some((at, listed[at].clone()))
        });
        let Some((at, trial)) = picked else {
            app.set_status(
                "no verified configuration yet: r starts a sweep of this instance",
                true,
            );
            return vec![];
        };
        let c = trial.config;
        if c.variant.is_some() || c.max_registers.is_some() {
            app.set_status(
                "that configuration is a compiled variant or a register limit, which profile cannot replay: profile it with `rr-tui profile` after exporting it",
                true,
            );
            return vec![];
        }
        let label = match (at, app.tune.show_front) {
            (0, false) => format!("best: {c}"),
            (n, false) => format!("#{}: {c}", n + 1),
            (n, true) => format!("front #{}: {c}", n + 1),
        };
        Self::start_of(
            app,
            i,
            Target::Tuned,
            Some((c.grid, c.block, c.shared_mem)),
            None,
            label,
        )
    }

    fn start_of(
        app: &mut App,
        i: usize,
        target: Target,
        geometry: Option<([u32; 3], [u32; 3], u32)>,
        candidate: Option<rr_engine::replay::candidate::CandidateSpec>,
        label: String,
    ) -> Vec<Cmd> {
        if let Some(why) = Self::refused(app, i) {
            app.set_status(why, true);
            return vec![];
        }
        let run = app.jobs.begin(GpuWork::Profile, i);
        let job = ProfileJob {
            grid: geometry.map(|g| g.0),
            block: geometry.map(|g| g.1),
            shared_mem: geometry.map(|g| g.2),
            supplied: app.settings.supplied.supplied(),
            candidate,
            // Record directories are never written: the report goes where replays write.
            output_dir: Some(app.output_dir.clone()),
            output: ProfileOutput::Events,
            run_id: run,
            ..ProfileJob::new(app.rows[i].json_path.clone())
        };
        let name = app.rows[i].demangled.clone();
        app.set_status(
            format!("profiling {name} ({label}) with Nsight Compute… (c cancels)"),
            false,
        );
        *app.profile.by_instance.entry(i).or_default().slot(target) =
            Some(ProfileRun::new(run, label));
        app.screen = Screen::Profile;
        vec![Cmd::StartProfile {
            instance: i,
            job: Box::new(job),
        }]
    }

    pub(crate) fn cancel(app: &mut App) -> Vec<Cmd> {
        let Some((running, cmd)) = app.jobs.cancel(GpuWork::Profile) else {
            app.set_status("nothing to cancel: no profile is running", false);
            return vec![];
        };
        if let Some(r) = app.profile.run_of(running) {
            r.phase = Phase::Cancelled;
        }
        app.set_status("profile cancelled", false);
        vec![cmd]
    }

    pub(crate) fn on_event(app: &mut App, Tagged { run, event }: Tagged) {
        // Only the running profile's events count: a cancelled child may still be talking.
        let Some(running) = app
            .jobs
            .running()
            .filter(|r| r.work == GpuWork::Profile && r.run == run)
        else {
            return;
        };
        let done = matches!(event, Event::Done { .. });
        let i = running.instance;
        let Some(r) = app.profile.run_of(running) else {
            return;
        };
        r.apply(event);
        if !done {
            return;
        }
        let (text, error) = match (&r.phase, &r.result) {
            (Phase::Failed(m), _) => (format!("profile failed: {m}"), true),
            (_, Some(p)) => (
                format!(
                    "profiled {} ({}): the full report is {} (ncu-ui opens it)",
                    app.rows[i].demangled, r.label, p.report
                ),
                false,
            ),
            _ => ("profile ended without a result".into(), true),
        };
        app.jobs.end(GpuWork::Profile);
        app.set_status(text, error);
    }
}

impl Component for ProfileScreen {
    fn draw(&self, cx: &DrawContext, f: &mut Frame, area: Rect) {
        draw::draw(cx.app, cx.theme, f, area);
    }

    /// `P` from any screen (on the tuning screen: the row picked there), `b` and `c`; nothing
    /// scrolls here.
    fn on_action(app: &mut App, a: Action) -> Vec<Cmd> {
        match a {
            Action::Profile => Self::start(app),
            Action::ProfileBest => Self::start_tuned(app),
            Action::ProfileCancel => Self::cancel(app),
            Action::ProfileCandidate => Self::start_candidate(app),
            _ => vec![],
        }
    }
}
