//! Sweeps: starting one (the form's job, the command's own checks on a worker), several
//! marked instances one after the other, cancelling, their events, exporting. Like replays,
//! one sweep runs at a time (they share the GPU), in a child process with a run id of its own,
//! so the last words of a cancelled sweep never reach the one that replaced it.

use super::run::TuneRun;
use super::TuneScreen;
use crate::tui::app::replays::Phase;
use crate::tui::app::{App, Cmd, GpuWork, Msg, Work};
use crate::tui::format::duration_ns;
use rr_engine::replay::{Event, Tagged};
use rr_tune::Config;

impl TuneScreen {
    pub(crate) fn start(app: &mut App) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("no instance selected", true);
            return vec![];
        };
        // A sweep opened from its file is not replaced without asking: `r` again does (the file
        // keeps it: `rr-tui FILE` opens it again).
        let asked = app.tune.replace_asked.take() == Some(i);
        if let Some(run) = app
            .tune
            .runs
            .get(&i)
            .filter(|_| !asked && app.jobs.of(GpuWork::Sweep).is_none())
        {
            if let Some(file) = &run.opened_from {
                let rows = run.report.trials.len();
                app.tune.replace_asked = Some(i);
                app.set_status(
                    format!(
                        "r again replaces the sweep opened from {file} ({rows} configuration(s)) with a new one (the file keeps it: rr-tui {file} opens it again); any other key keeps it"
                    ),
                    true,
                );
                return vec![];
            }
        }
        app.tune.queue.clear();
        Self::start_of(app, i)
    }

    /// `R`: sweep every instance marked with `M`, one after the other, with the form's axes
    /// and settings (as `rr-tui tune DIR` sweeps a recording's instances); each keeps its own
    /// results, as if swept alone.
    pub(crate) fn start_marked(app: &mut App) -> Vec<Cmd> {
        if app.tune.marks.is_empty() {
            app.set_status(
                "no instance marked for a sweep: M on the instance list marks them (several)",
                true,
            );
            return vec![];
        }
        if let Some(why) = app.gpu_busy(GpuWork::Sweep) {
            app.set_status(why, true);
            return vec![];
        }
        app.tune.queue = app.tune.marks.iter().copied().collect();
        Self::next_marked(app)
    }

    /// The next marked instance's sweep, if any are left.
    fn next_marked(app: &mut App) -> Vec<Cmd> {
        let Some(i) = app.tune.queue.pop_front() else {
            return vec![];
        };
        let left = app.tune.queue.len();
        let cmds = Self::start_of(app, i);
        if cmds.is_empty() && left > 0 {
            // Refused (its reason is on the status line only until the next one starts).
            return Self::next_marked(app);
        }
        cmds
    }

    fn start_of(app: &mut App, i: usize) -> Vec<Cmd> {
        // In the order `rr-tui tune` refuses: the form's values (its flags) first, then the
        // record's and the machine's reasons.
        let job = match app
            .tune
            .form
            .settings
            .job(app.rows[i].json_path.clone(), app.jobs.next_run())
        {
            // What a legacy record lacks, as given on the replay screen (I, A).
            Ok(job) => rr_tune::job::TuneJob {
                supplied: app.settings.supplied.supplied(),
                ..job
            },
            Err((field, why)) => {
                app.tune.form.cursor = crate::tui::app::Field::ALL
                    .iter()
                    .position(|&f| f == field)
                    .unwrap_or(0);
                app.set_status(format!("{}: {why}", field.label()), true);
                return vec![];
            }
        };
        // A simulated sweep needs no GPU: only what the record itself lacks stops it.
        let blocker = app.replay_blocker(i).filter(|b| {
            job.simulate.is_none() || matches!(b, crate::tui::app::ReplayBlocker::Record(_))
        });
        if let Some(blocker) = blocker {
            app.set_status(blocker.refusal("tune", "tuned"), true);
            return vec![];
        }
        if let Some(why) = app.gpu_busy(GpuWork::Sweep) {
            app.set_status(why, true);
            return vec![];
        }
        let row = &app.rows[i];
        // The command's own checks first, on a worker (they read the instance's files): the
        // form never starts what `rr-tui tune` would refuse.
        app.set_status(format!("checking the sweep of {}…", row.demangled), false);
        vec![Cmd::Work(Work::new(move || Msg::TuneChecked {
            instance: i,
            result: rr_tune::sweep::preflight(&job)
                .and_then(|(inst, space)| rr_tune::sweep::preflight_simulate(&job, &inst, &space))
                .map(|_| Box::new(job))
                .map_err(|e| e.to_string()),
        }))]
    }

    /// The command's checks answered: start the sweep, or say why not.
    pub(crate) fn on_checked(
        app: &mut App,
        i: usize,
        result: Result<Box<rr_tune::job::TuneJob>, String>,
    ) -> Vec<Cmd> {
        let job = match result {
            Ok(job) => job,
            Err(why) => {
                let name = app
                    .rows
                    .get(i)
                    .map(|r| r.demangled.clone())
                    .unwrap_or_default();
                app.set_status(format!("cannot tune {name}: {why}"), true);
                // A marked instance the command refuses: the next one goes on.
                return Self::next_marked(app);
            }
        };
        if app.jobs.running().is_some() || i >= app.rows.len() {
            return vec![]; // something else started meanwhile: the user asks again
        }
        let run_id = app.jobs.begin(GpuWork::Sweep, i);
        let row = &app.rows[i];
        let job = Box::new(rr_tune::job::TuneJob { run_id, ..*job });
        // What the explorer knows of the recorded launch until the sweep says exactly.
        let recorded = Config {
            grid: row.grid.unwrap_or([1, 1, 1]),
            block: row.block.unwrap_or([1, 1, 1]),
            shared_mem: 0,
            max_registers: None,
            variant: None,
        };
        let run = TuneRun::new(run_id, &job, &row.kernel, recorded);
        let configs = app.tune.form.settings.space_size().unwrap_or(0);
        app.set_status(
            format!(
                "tuning {}: {configs} configuration(s), {}…",
                row.demangled,
                job.strategy.name()
            ),
            false,
        );
        app.tune.runs.insert(i, run);
        app.tune.heat_scroll = (0, 0);
        app.screen = crate::tui::app::Screen::Tune;
        vec![Cmd::StartTune {
            instance: i,
            run: run_id,
            job,
        }]
    }

    pub(crate) fn cancel(app: &mut App) -> Vec<Cmd> {
        let queued = std::mem::take(&mut app.tune.queue).len();
        let Some((running, cmd)) = app.jobs.cancel(GpuWork::Sweep) else {
            app.set_status("nothing to cancel: no sweep is running", false);
            return vec![];
        };
        let i = running.instance;
        let kept = app.tune.runs.get_mut(&i).map_or(0, |r| {
            r.phase = Phase::Cancelled;
            r.clock.stop();
            r.report.trials.len()
        });
        app.set_status(
            format!(
                "sweep cancelled; {kept} configuration(s) kept (x exports them){}",
                if queued > 0 {
                    format!("; {queued} marked instance(s) not swept")
                } else {
                    String::new()
                }
            ),
            false,
        );
        vec![cmd]
    }

    pub(crate) fn on_event(app: &mut App, Tagged { run, event }: Tagged) -> Vec<Cmd> {
        let Some(i) = crate::tui::app::replays::waiting_for(&app.tune.runs, run) else {
            return vec![];
        };
        let done = matches!(event, Event::Done { .. });
        let Some(r) = app.tune.runs.get_mut(&i) else {
            return vec![];
        };
        r.apply(event);
        if !done || app.jobs.of(GpuWork::Sweep) != Some(i) {
            return vec![];
        }
        app.jobs.end(GpuWork::Sweep);
        let name = app.rows[i].demangled.clone();
        let (text, error) = match (&r.phase, &r.report.best) {
            (Phase::Failed(m), _) => (format!("sweep of {name} failed: {m}"), true),
            (_, None) => (
                format!("sweep of {name} done: no configuration verified"),
                true,
            ),
            (_, Some(best)) => {
                let time = best.cost().map(duration_ns).unwrap_or_default();
                let speedup = r
                    .report
                    .speedup
                    .map(|s| format!(", {s:.2}× the recorded one"))
                    .unwrap_or_default();
                let energy = best
                    .joules()
                    .map(|j| {
                        format!(
                            ", {} per execution",
                            rr_engine::replay::energy::joules_text(j)
                        )
                    })
                    .unwrap_or_default();
                let by = match r.report.objective {
                    rr_tune::Objective::Time => String::new(),
                    o => format!(" by {}", o.name()),
                };
                (
                    format!(
                        "sweep of {name} done: best{by} {} at {time}{speedup}{energy}",
                        best.config
                    ),
                    false,
                )
            }
        };
        app.set_status(text, error);
        // Marked instances swept one after the other: the next starts (its status replaces
        // this one; each instance keeps its results).
        Self::next_marked(app)
    }

    pub(crate) fn export(app: &mut App) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("nothing to export: no instance selected", true);
            return vec![];
        };
        let Some(run) = app.tune.runs.get(&i) else {
            app.set_status(
                "nothing to export: no sweep of this instance yet (r starts one)",
                true,
            );
            return vec![];
        };
        if run.report.trials.is_empty() {
            app.set_status("nothing to export yet: no configuration has finished", true);
            return vec![];
        }
        let run = run.clone();
        let stem = app.rows[i].json_file.trim_end_matches(".json").to_string();
        let dir = app.export_dir.clone();
        app.set_status("exporting…", false);
        vec![Cmd::Work(Work::new(move || {
            Msg::Exported(run.export(&dir, &stem).map_err(|e| e.to_string()))
        }))]
    }
}
