//! What each message does to the state: `App::update`, which hands a screen's messages to its
//! component (`screens`: replay events, opened snapshots, index and search progress,
//! inspections), and the handlers of the messages no screen owns (the checks, the rows read
//! after the first frame, exports, the picker).

use super::screens::{ProfileScreen, ReplayScreen, SnapshotsScreen, TuneScreen};
use super::{checks, App, Cmd, GpuWork, Msg, SortKey, Work};

impl App {
    pub fn update(&mut self, msg: Msg) -> Vec<Cmd> {
        let (screen, said) = (self.screen, self.status_serial);
        let placed = self.lists_placed();
        let cmds = self.apply(msg);
        if self.lists_placed() != placed {
            self.keep_lists_in_view();
        }
        // Workers answer about the record open when they started; the picker may open another.
        let serial = self.record_serial;
        let cmds = cmds
            .into_iter()
            .map(|cmd| match cmd {
                Cmd::Work(work) => Cmd::Work(Work::new(move || {
                    Msg::ForRecord(serial, Box::new((work.0)()))
                })),
                other => other,
            })
            .collect();
        // A message is about the screen it was said on: another screen starts without it,
        // unless what changed the screen said something (`replaying …`).
        if self.screen != screen && self.status_serial == said {
            self.status = None;
        }
        cmds
    }

    fn apply(&mut self, msg: Msg) -> Vec<Cmd> {
        match msg {
            Msg::Key(k) => self.on_key(k),
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Resize(w, h) => {
                self.width = w;
                self.height = h;
                self.relayout();
                vec![]
            }
            Msg::Tick(now) => {
                self.on_tick(now);
                vec![]
            }
            Msg::FirstFrameDrawn => self.on_first_frame(),
            Msg::RowsLoaded(rows) => self.on_rows_loaded(rows),
            Msg::Quit => self.quit_all(),
            Msg::Replay(tagged) => {
                ReplayScreen::on_event(self, tagged);
                vec![]
            }
            Msg::Tune(tagged) => TuneScreen::on_event(self, tagged),
            Msg::Profile(tagged) => {
                ProfileScreen::on_event(self, tagged);
                vec![]
            }
            Msg::TuneChecked { instance, result } => TuneScreen::on_checked(self, instance, result),
            Msg::ReplayChecked { instance, result } => {
                ReplayScreen::on_checked(self, instance, result)
            }
            Msg::Inspected { instance, result } => {
                self.descriptor.inspected(instance, result);
                vec![]
            }
            Msg::SnapshotsOpened {
                instance,
                pair,
                result,
            } => SnapshotsScreen::on_opened(self, instance, pair, result),
            Msg::SnapshotsChanged => {
                SnapshotsScreen::on_changed(self);
                vec![]
            }
            Msg::Checked { results, next } => self.on_checked(results, next),
            Msg::RecordDirsFound(below) => {
                self.on_record_dirs_found(below);
                vec![]
            }
            Msg::RecordOpened(result) => self.on_record_opened(result),
            Msg::SweepOpened(result) => self.on_sweep_opened(result),
            Msg::ForRecord(serial, msg) if serial == self.record_serial => self.apply(*msg),
            Msg::ForRecord(..) => vec![],
            Msg::Leaderboard { run, result } => {
                self.on_leaderboard(run, result);
                vec![]
            }
            Msg::Exported(result) => {
                match result {
                    Ok(what) => self.set_status(format!("exported {what}"), false),
                    Err(e) => self.set_status(format!("export failed: {e}"), true),
                }
                vec![]
            }
            Msg::Index { job, event } => {
                SnapshotsScreen::on_index_event(self, job, event);
                vec![]
            }
            Msg::Search { job, event } => {
                SnapshotsScreen::on_search_event(self, job, event);
                vec![]
            }
        }
    }

    /// Quit: no GPU work the explorer started goes on without it (Ctrl-C, `q`, a signal).
    pub(super) fn quit_all(&mut self) -> Vec<Cmd> {
        self.quit = true;
        let mut cmds = self.jobs.end_all();
        cmds.push(Cmd::Quit);
        cmds
    }

    /// The runtime's clock: status messages expire by it, and the sweep's clock ticks.
    fn on_tick(&mut self, now: std::time::Instant) {
        if self.status.as_mut().is_some_and(|s| s.expired(now)) {
            self.status = None;
        }
        if let Some(run) = (self.jobs.of(GpuWork::Sweep)).and_then(|i| self.tune.runs.get_mut(&i)) {
            run.clock.tick(now);
        }
    }

    /// The first frame is on screen: the work that waited for it starts.
    fn on_first_frame(&mut self) -> Vec<Cmd> {
        let mut cmds = self.search_record_dirs();
        cmds.extend(self.read_sweep());
        cmds.extend(self.start_checks());
        cmds.extend(self.read_more_rows());
        cmds
    }

    fn on_checked(&mut self, results: checks::CheckResults, next: usize) -> Vec<Cmd> {
        for (i, problem) in results {
            if let Some(row) = self.rows.get_mut(i) {
                // A problem found at load (an unreadable descriptor) says it first.
                if row.problem.is_none() {
                    row.problem = problem;
                }
            }
        }
        self.checked = Some(next);
        if self.instances.sort == SortKey::Status {
            self.refresh_view();
        }
        checks::batch(&self.rows, next)
            .map(|w| vec![Cmd::Work(w)])
            .unwrap_or_default()
    }
}
