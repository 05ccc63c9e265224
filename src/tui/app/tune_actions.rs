//! The tuning screen's actions: editing the form, starting and cancelling a sweep, its events,
//! scrolling the heatmap, exporting. Like replays, one sweep runs at a time (they share the
//! GPU), in a child process with a run id of its own, so the last words of a cancelled sweep
//! never reach the one that replaced it.

use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

use super::heatmap::{HeatAxis, Heatmap};
use super::replays::Phase;
use super::tuneform::EditOutcome;
use super::tunelayout::{self, HeatGeometry};
use super::tuning::TuneRun;
use super::{App, Cmd, Msg, Work, TITLE_LINES};
use crate::tui::format::duration_ns;
use crate::tui::keymap::Action;
use rr_engine::replay::{Event, Tagged};
use rr_engine::tune::Config;

/// Sweeps up to this many configurations are redrawn on other axes at a key press (a few tens
/// of milliseconds); larger ones keep their axes.
const MAX_REDRAWN: usize = 200_000;

impl App {
    /// The tuning screen's content area (below the tab bar and its title, above the status
    /// and hint bars), as the drawing gets it.
    pub fn tune_area(&self) -> Rect {
        Rect::new(
            0,
            2,
            self.width,
            self.height.saturating_sub(self.frame_lines() + TITLE_LINES),
        )
    }

    pub(super) fn on_tune_edit_key(&mut self, k: KeyEvent) {
        match self.tune.form.edit_key(&k) {
            EditOutcome::Applied(field) => {
                let (shown, _) = self.tune.form.shown(field);
                self.set_status(format!("{} {shown}", field.label()), false);
            }
            EditOutcome::Cancelled => self.set_status("field unchanged", false),
            // The reason is on screen already (the form's info line and the hint bar).
            EditOutcome::Refused | EditOutcome::Editing => {}
        }
    }

    pub(super) fn edit_tune_field(&mut self) {
        if let Some(what) = self.tune.form.activate() {
            self.set_status(what, false);
        }
    }

    /// j/k move between fields; PgUp/PgDn scroll the heatmap's rows.
    pub(super) fn tune_scroll(&mut self, a: Action) {
        match a {
            Action::Up => self.tune.form.move_cursor(-1),
            Action::Down => self.tune.form.move_cursor(1),
            Action::Top => self.tune.form.cursor = 0,
            Action::Bottom => self.tune.form.cursor = super::Field::ALL.len() - 1,
            Action::PageUp => self.scroll_heat(-1, 0),
            Action::PageDown => self.scroll_heat(1, 0),
            _ => {}
        }
    }

    /// `[`/`]`: the row of the table `P` profiles.
    pub(super) fn pick_tuned(&mut self, delta: isize) {
        let n = self
            .current()
            .and_then(|i| self.tune.runs.get(&i))
            .map_or(0, |r| r.listed(self.tune.show_front).len());
        if n == 0 {
            self.set_status("no verified configuration to pick yet", true);
            return;
        }
        self.tune.pick =
            (self.tune.pick.min(n - 1) as isize + delta).clamp(0, n as isize - 1) as usize;
        self.set_status(
            format!("row {} picked: P profiles it", self.tune.pick + 1),
            false,
        );
    }

    /// The table: the best configurations, or the Pareto front of time against energy (a
    /// sweep that measures energy: the form's objective field).
    pub(super) fn toggle_front(&mut self) {
        let front = self
            .current()
            .and_then(|i| self.tune.runs.get(&i))
            .map(|run| (run.report.energy.is_some(), run.front().len()));
        match front {
            None => self.set_status(
                "no sweep of this instance yet: r starts one (an objective other than time measures energy too)",
                true,
            ),
            Some((true, n)) => {
                self.tune.show_front = !self.tune.show_front;
                self.tune.pick = 0;
                self.set_status(
                    if self.tune.show_front {
                        format!("table: the Pareto front of time against energy ({n} configuration(s), fastest first; p for the best)")
                    } else {
                        "table: the best configurations by the objective (p for the Pareto front)".into()
                    },
                    false,
                );
            }
            Some(_) => self.set_status(
                "this sweep measured no energy: set the form's objective to time (+ energy), energy or edp, then r",
                true,
            ),
        }
    }

    /// Show the heatmap on the next pair of axes whose values vary in the sweep (grid × block
    /// first), rebuilt from the configurations measured so far.
    pub(super) fn cycle_heat_axes(&mut self) {
        let Some(run) = self.current().and_then(|i| self.tune.runs.get_mut(&i)) else {
            self.set_status("no heatmap yet: r starts a sweep of this instance", false);
            return;
        };
        let trials = &run.report.trials;
        if trials.len() > MAX_REDRAWN {
            let n = trials.len();
            self.set_status(
                format!("{n} configurations are too many to redraw on other axes"),
                true,
            );
            return;
        }
        let defines = run.report.defines.clone();
        let varies = |a: HeatAxis| {
            let probe = Heatmap::new((a, a), defines.clone());
            let mut seen = std::collections::HashSet::new();
            trials.iter().any(|t| {
                seen.insert(probe.place(&t.config).0);
                seen.len() > 1
            })
        };
        let axes: Vec<HeatAxis> = HeatAxis::all(&defines)
            .into_iter()
            .filter(|&a| varies(a))
            .collect();
        let mut pairs = vec![(HeatAxis::Grid, HeatAxis::Block)];
        for &r in &axes {
            for &c in &axes {
                if r != c && !pairs.contains(&(r, c)) {
                    pairs.push((r, c));
                }
            }
        }
        let at = pairs.iter().position(|p| *p == run.heat.axes).unwrap_or(0);
        let next = pairs[(at + 1) % pairs.len()];
        run.heat = Heatmap::rebuilt(next, defines, run.report.objective, trials);
        let (r, c) = run.heat.axis_names();
        self.tune.heat_scroll = (0, 0);
        self.set_status(
            if pairs.len() == 1 {
                format!("heatmap: {r} × {c} (no other axis varies in this sweep)")
            } else {
                format!("heatmap: {r} × {c} (a for the next)")
            },
            false,
        );
    }

    /// Scroll the heatmap by pages of rows and by single columns, never past its ends.
    pub(super) fn scroll_heat(&mut self, pages: isize, columns: isize) {
        let Some(run) = self.current().and_then(|i| self.tune.runs.get(&i)) else {
            self.set_status("no heatmap yet: r starts a sweep of this instance", false);
            return;
        };
        let area = tunelayout::layout(self.tune_area(), Some(run)).heat;
        let g = HeatGeometry::of(&run.heat, area);
        let (rows, cols) = (run.heat.rows.len(), run.heat.cols.len());
        let (r, c) = self.tune.heat_scroll;
        let r = tunelayout::first(r, rows, g.rows);
        let c = tunelayout::first(c, cols, g.cols);
        let step = |at: usize, by: isize, len: usize, visible: usize| {
            at.saturating_add_signed(by)
                .min(len.saturating_sub(visible))
        };
        self.tune.heat_scroll = (
            step(r, pages * g.rows as isize, rows, g.rows),
            step(c, columns, cols, g.cols),
        );
        if columns != 0 && cols <= g.cols {
            self.set_status("every column of the heatmap is on screen", false);
        }
    }

    pub(super) fn start_tune(&mut self) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("no instance selected", true);
            return vec![];
        };
        // A sweep opened from its file is not replaced without asking: `r` again does (the file
        // keeps it: `rr-tui FILE` opens it again).
        let asked = self.tune.replace_asked.take() == Some(i);
        if let Some(run) = self
            .tune
            .runs
            .get(&i)
            .filter(|_| !asked && self.tuning.is_none())
        {
            if let Some(file) = &run.opened_from {
                let rows = run.report.trials.len();
                self.tune.replace_asked = Some(i);
                self.set_status(
                    format!(
                        "r again replaces the sweep opened from {file} ({rows} configuration(s)) with a new one (the file keeps it: rr-tui {file} opens it again); any other key keeps it"
                    ),
                    true,
                );
                return vec![];
            }
        }
        self.tune.queue.clear();
        self.start_tune_of(i)
    }

    /// `R`: sweep every instance marked with `M`, one after the other, with the form's axes
    /// and settings (as `rr-tui tune DIR` sweeps a recording's instances); each keeps its own
    /// results, as if swept alone.
    pub(super) fn start_marked_tunes(&mut self) -> Vec<Cmd> {
        if self.tune.marks.is_empty() {
            self.set_status(
                "no instance marked for a sweep: M on the instance list marks them (several)",
                true,
            );
            return vec![];
        }
        if let Some(why) = self.gpu_busy(super::gpu_work::GpuWork::Sweep) {
            self.set_status(why, true);
            return vec![];
        }
        self.tune.queue = self.tune.marks.iter().copied().collect();
        self.next_marked_tune()
    }

    /// The next marked instance's sweep, if any are left.
    fn next_marked_tune(&mut self) -> Vec<Cmd> {
        let Some(i) = self.tune.queue.pop_front() else {
            return vec![];
        };
        let left = self.tune.queue.len();
        let cmds = self.start_tune_of(i);
        if cmds.is_empty() && left > 0 {
            // Refused (its reason is on the status line only until the next one starts).
            return self.next_marked_tune();
        }
        cmds
    }

    fn start_tune_of(&mut self, i: usize) -> Vec<Cmd> {
        // In the order `rr-tui tune` refuses: the form's values (its flags) first, then the
        // record's and the machine's reasons.
        let job = match self
            .tune
            .form
            .job(self.rows[i].json_path.clone(), self.next_run + 1)
        {
            // What a legacy record lacks, as given on the replay screen (I, A).
            Ok(job) => rr_engine::tune::job::TuneJob {
                supplied: self.settings.supplied.supplied(),
                ..job
            },
            Err((field, why)) => {
                self.tune.form.cursor = super::Field::ALL
                    .iter()
                    .position(|&f| f == field)
                    .unwrap_or(0);
                self.set_status(format!("{}: {why}", field.label()), true);
                return vec![];
            }
        };
        // A simulated sweep needs no GPU: only what the record itself lacks stops it.
        let blocker = self
            .replay_blocker(i)
            .filter(|b| job.simulate.is_none() || matches!(b, super::ReplayBlocker::Record(_)));
        if let Some(blocker) = blocker {
            self.set_status(blocker.refusal("tune", "tuned"), true);
            return vec![];
        }
        if let Some(why) = self.gpu_busy(super::gpu_work::GpuWork::Sweep) {
            self.set_status(why, true);
            return vec![];
        }
        let row = &self.rows[i];
        // The command's own checks first, on a worker (they read the instance's files): the
        // form never starts what `rr-tui tune` would refuse.
        self.set_status(format!("checking the sweep of {}…", row.demangled), false);
        vec![Cmd::Work(Work::new(move || Msg::TuneChecked {
            instance: i,
            result: crate::commands::tune::preflight(&job)
                .and_then(|(inst, space)| {
                    crate::commands::tune::preflight_simulate(&job, &inst, &space)
                })
                .map(|_| Box::new(job))
                .map_err(|e| e.to_string()),
        }))]
    }

    /// The command's checks answered: start the sweep, or say why not.
    pub(super) fn on_tune_checked(
        &mut self,
        i: usize,
        result: Result<Box<rr_engine::tune::job::TuneJob>, String>,
    ) -> Vec<Cmd> {
        let job = match result {
            Ok(job) => job,
            Err(why) => {
                let name = self
                    .rows
                    .get(i)
                    .map(|r| r.demangled.clone())
                    .unwrap_or_default();
                self.set_status(format!("cannot tune {name}: {why}"), true);
                // A marked instance the command refuses: the next one goes on.
                return self.next_marked_tune();
            }
        };
        if self.tuning.is_some() || self.running.is_some() || i >= self.rows.len() {
            return vec![]; // something else started meanwhile: the user asks again
        }
        let row = &self.rows[i];
        self.next_run += 1;
        let job = Box::new(rr_engine::tune::job::TuneJob {
            run_id: self.next_run,
            ..*job
        });
        // What the explorer knows of the recorded launch until the sweep says exactly.
        let recorded = Config {
            grid: row.grid.unwrap_or([1, 1, 1]),
            block: row.block.unwrap_or([1, 1, 1]),
            shared_mem: 0,
            max_registers: None,
            variant: None,
        };
        let run = TuneRun::new(self.next_run, &job, &row.kernel, recorded);
        let configs = self.tune.form.space_size().unwrap_or(0);
        self.set_status(
            format!(
                "tuning {}: {configs} configuration(s), {}…",
                row.demangled,
                job.strategy.name()
            ),
            false,
        );
        self.tune.runs.insert(i, run);
        self.tuning = Some(i);
        self.tune.heat_scroll = (0, 0);
        self.screen = super::Screen::Tune;
        vec![Cmd::StartTune {
            instance: i,
            run: self.next_run,
            job,
        }]
    }

    pub(super) fn cancel_tune(&mut self) -> Vec<Cmd> {
        let queued = std::mem::take(&mut self.tune.queue).len();
        let Some(i) = self.tuning.take() else {
            self.set_status("nothing to cancel: no sweep is running", false);
            return vec![];
        };
        let kept = self.tune.runs.get_mut(&i).map_or(0, |r| {
            r.phase = Phase::Cancelled;
            r.clock.stop();
            r.report.trials.len()
        });
        self.set_status(
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
        vec![Cmd::CancelTune]
    }

    pub(super) fn on_tune_event(&mut self, Tagged { run, event }: Tagged) -> Vec<Cmd> {
        let Some(i) = super::replays::waiting_for(&self.tune.runs, run) else {
            return vec![];
        };
        let done = matches!(event, Event::Done { .. });
        let Some(r) = self.tune.runs.get_mut(&i) else {
            return vec![];
        };
        r.apply(event);
        if !done || self.tuning != Some(i) {
            return vec![];
        }
        self.tuning = None;
        let name = self.rows[i].demangled.clone();
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
                    rr_engine::tune::Objective::Time => String::new(),
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
        self.set_status(text, error);
        // Marked instances swept one after the other: the next starts (its status replaces
        // this one; each instance keeps its results).
        self.next_marked_tune()
    }

    pub(super) fn export_tune(&mut self) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("nothing to export: no instance selected", true);
            return vec![];
        };
        let Some(run) = self.tune.runs.get(&i) else {
            self.set_status(
                "nothing to export: no sweep of this instance yet (r starts one)",
                true,
            );
            return vec![];
        };
        if run.report.trials.is_empty() {
            self.set_status("nothing to export yet: no configuration has finished", true);
            return vec![];
        }
        let run = run.clone();
        let stem = self.rows[i].json_file.trim_end_matches(".json").to_string();
        let dir = self.export_dir.clone();
        self.set_status("exporting…", false);
        vec![Cmd::Work(Work::new(move || {
            Msg::Exported(run.export(&dir, &stem).map_err(|e| e.to_string()))
        }))]
    }
}
