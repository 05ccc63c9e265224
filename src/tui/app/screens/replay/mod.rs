//! The Replay screen (`4`): the selected instance's replay, its settings, its chart of times
//! and its verdict, and the leaderboard of several candidates below it (`board`). Its state is
//! the replays of the session by instance, the chart's freeze, the candidates `C` named and
//! their leaderboard; the settings are the `App`'s (sweeps, profiles and the leaderboard use
//! them too), as is `jobs` (what holds the GPU, whether the last replay's process is kept).
//! `r`, `v` and `c` replay, verify and cancel from every screen; the other keys edit the
//! settings, freeze the chart and export the times.

mod board;
mod draw;
mod settings;

use std::collections::HashMap;

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::Frame;
use rr_engine::replay::candidate::CandidateSpec;
use rr_engine::replay::{ab, Event, ReplayRequest, Tagged, Verify};

use super::{Component, DrawContext};
use crate::tui::app::leaderboard::LeaderboardView;
use crate::tui::app::prompt::PromptKind;
use crate::tui::app::replays::{self, Phase, ReplayRun, SAVED_OUTPUT_LIMIT};
use crate::tui::app::GpuWork;
use crate::tui::app::{App, Cmd, Msg, Screen, SortKey, Work};
use crate::tui::keymap::Action;

#[derive(Default)]
pub struct ReplayScreen {
    /// The replays of the session, by instance (the last of each).
    pub runs: HashMap<usize, ReplayRun>,
    /// Number of repetitions shown while the chart is frozen.
    pub frozen: Option<usize>,
    /// Several candidates the `C` prompt named, started as a leaderboard when it closes.
    pub asked_candidates: Vec<CandidateSpec>,
    /// The leaderboard of several candidates (`C` with several files), shown below the replay.
    pub leaderboard: Option<LeaderboardView>,
}

impl ReplayScreen {
    /// `r` (`v`: and verify): the command's own checks of the selection's replay first, on a
    /// worker; the replay starts when they pass (`on_checked`).
    fn start(app: &mut App, verify: bool) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("no instance selected", true);
            return vec![];
        };
        if let Some(blocker) = app.replay_blocker(i) {
            app.set_status(blocker.refusal("replay", "replayed"), true);
            return vec![];
        }
        // Both would use the GPU: the other's timings would mean nothing.
        if let Some(why) = app.gpu_busy(GpuWork::Replay) {
            app.set_status(why, true);
            return vec![];
        }
        let mut request = Self::request(app, i, verify);
        // The command's own checks first, on a worker (they read the instance's files): the
        // explorer never starts a replay `rr-tui replay` would refuse.
        app.set_status(format!("checking {}…", app.rows[i].demangled), false);
        vec![Cmd::Work(Work::new(move || Msg::ReplayChecked {
            instance: i,
            result: rr_engine::replay::runner::preflight(&request)
                .map(|checked| {
                    request.save_output = checked.inst.input_len <= SAVED_OUTPUT_LIMIT;
                    Box::new(request)
                })
                .map_err(|e| e.to_string()),
        }))]
    }

    /// The replay of instance `i` the settings ask for.
    fn request(app: &App, i: usize, verify: bool) -> ReplayRequest {
        let s = &app.settings;
        let mut request = ReplayRequest::new(app.rows[i].json_path.clone());
        request.verify = match (verify, s.tolerance) {
            (false, _) => Verify::No,
            (true, Some(c)) => Verify::Typed(c),
            (true, None) => Verify::Bytes,
        };
        request.save_output = true;
        request.output_dir = Some(app.output_dir.clone());
        request.repetitions = s.repetitions;
        request.overrides.grid = s.grid;
        request.overrides.block = s.block;
        request.supplied = s.supplied.supplied();
        if let Some(c) = &s.candidate {
            request.candidate = Some(c.clone());
            // A verdict needs pairs: too few repetitions become the command's default.
            if request.repetitions < ab::MIN_PAIRS as u32 {
                request.repetitions = ab::DEFAULT_PAIRS;
            }
        }
        request
    }

    /// The command's checks answered: start the replay, or say why not.
    pub fn on_checked(
        app: &mut App,
        i: usize,
        result: Result<Box<ReplayRequest>, String>,
    ) -> Vec<Cmd> {
        let mut request = match result {
            Ok(r) => r,
            Err(why) => {
                app.set_status(format!("cannot replay: {why}"), true);
                return vec![];
            }
        };
        if app.jobs.running().is_some() || i >= app.rows.len() {
            return vec![]; // something else started meanwhile: the user asks again
        }
        request.run_id = app.jobs.begin(GpuWork::Replay, i);
        let verify = request.verify.is_on();
        let run = ReplayRun::new(request.run_id, verify, request.repetitions);
        app.replay.runs.insert(i, run);
        app.replay.frozen = None;
        app.screen = Screen::Replay;
        app.set_status(format!("replaying {}…", app.rows[i].demangled), false);
        vec![Cmd::StartReplay {
            instance: i,
            request,
        }]
    }

    /// An event of a replay run: applied to the run waiting for it (a cancelled run's child
    /// may still be talking); its end is said on the status line.
    pub fn on_event(app: &mut App, Tagged { run, event }: Tagged) {
        let Some(instance) = replays::waiting_for(&app.replay.runs, run) else {
            return;
        };
        let done = matches!(event, Event::Done { .. });
        if let Some(r) = app.replay.runs.get_mut(&instance) {
            r.apply(event);
        }
        if !done || app.jobs.of(GpuWork::Replay) != Some(instance) {
            return;
        }
        app.jobs.end(GpuWork::Replay);
        let name = app.rows[instance].demangled.clone();
        let ended = app
            .replay
            .runs
            .get(&instance)
            .map(|r| (r.badge().0, r.phase.clone()));
        match ended {
            Some((_, Phase::Failed(m))) => {
                app.set_status(format!("replay of {name} failed: {m}"), true)
            }
            Some((badge, _)) => {
                app.set_status(format!("replay of {name}: {badge}"), badge == "mismatch")
            }
            None => {}
        }
        if app.instances.sort == SortKey::Status {
            app.refresh_view();
        }
    }

    /// `c`: the replay running, else the kept replay process, else a leaderboard being made.
    fn cancel(app: &mut App) -> Vec<Cmd> {
        let Some((running, cmd)) = app.jobs.cancel(GpuWork::Replay) else {
            if std::mem::take(&mut app.jobs.kept) {
                app.set_status(
                    "the kept replay process ended: its GPU memory is free",
                    false,
                );
                return vec![Cmd::CancelReplay];
            }
            if let Some(cmds) = app.cancel_leaderboard() {
                return cmds;
            }
            app.set_status("nothing to cancel: no replay is running", false);
            return vec![];
        };
        if let Some(r) = app.replay.runs.get_mut(&running.instance) {
            r.phase = Phase::Cancelled;
        }
        app.set_status("replay cancelled", false);
        vec![cmd]
    }

    /// `f`: the chart stops at the repetitions it shows, or goes live again.
    fn toggle_freeze(app: &mut App) {
        let Some(reps) = app
            .current()
            .and_then(|i| app.replay.runs.get(&i))
            .map(|r| r.kernel_ns.len())
        else {
            app.set_status(
                "nothing to freeze: this instance has not been replayed",
                true,
            );
            return;
        };
        let frozen = &mut app.replay.frozen;
        *frozen = match frozen {
            Some(_) => None,
            None => Some(reps),
        };
        let text = match *frozen {
            Some(n) => format!("chart frozen at {n} repetition(s); f goes live again"),
            None => "chart live".to_string(),
        };
        app.set_status(text, false);
    }

    /// `x`: the selection's times as CSV and a JSON summary, written on a worker.
    fn export(app: &mut App) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("nothing to export: no instance selected", true);
            return vec![];
        };
        let Some(run) = app.replay.runs.get(&i).cloned() else {
            app.set_status(
                "nothing to export: replay this instance first (r or v)",
                true,
            );
            return vec![];
        };
        if run.kernel_ns.is_empty() {
            app.set_status("nothing to export yet: no repetition has finished", true);
            return vec![];
        }
        let stem = app.rows[i].json_file.trim_end_matches(".json").to_string();
        let dir = app.export_dir.clone();
        let kernel = app.rows[i].kernel.clone();
        app.set_status("exporting…", false);
        vec![Cmd::Work(Work::new(move || {
            Msg::Exported(run.export(&dir, &stem, &kernel).map_err(|e| e.to_string()))
        }))]
    }
}

impl Component for ReplayScreen {
    fn draw(&self, cx: &DrawContext, f: &mut Frame, area: Rect) {
        draw::draw(self, cx, f, area);
    }

    /// Replays and their cancelling (also from the other screens), the settings' prompts,
    /// the chart's freeze and the export; the moving keys say that nothing scrolls here.
    fn on_action(app: &mut App, a: Action) -> Vec<Cmd> {
        match a {
            Action::Replay => return Self::start(app, false),
            Action::Verify => return Self::start(app, true),
            Action::Cancel => return Self::cancel(app),
            Action::Freeze => Self::toggle_freeze(app),
            Action::Export => return Self::export(app),
            // The screen shows one instance and its settings (a grid override with D was set
            // for it): moving the selection from here would replay another kernel with them,
            // unseen.
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => app.set_status(
                "nothing scrolls here: the instance to replay is chosen on the instances screen (1)",
                false,
            ),
            _ => settings::open_prompt(app, a),
        }
        vec![]
    }

    /// Enter steps through the leaderboard while there is one (its title says so; no binding:
    /// the screen has no other use for Enter).
    fn on_key(app: &mut App, k: &KeyEvent) -> Option<Vec<Cmd>> {
        if k.code != KeyCode::Enter || app.replay.leaderboard.is_none() {
            return None;
        }
        app.leaderboard_next();
        Some(vec![])
    }

    fn apply_prompt(app: &mut App, kind: PromptKind, text: &str) -> Result<String, String> {
        settings::apply_prompt(app, kind, text)
    }

    /// Several candidates named: their leaderboard starts.
    fn prompt_closed(app: &mut App, _kind: PromptKind) -> Vec<Cmd> {
        match app.replay.asked_candidates.is_empty() {
            true => vec![],
            false => {
                let specs = std::mem::take(&mut app.replay.asked_candidates);
                app.start_leaderboard(specs)
            }
        }
    }
}
