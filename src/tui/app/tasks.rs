//! Actions that start slow work: replays, exports and the background checks and reading of
//! the rows. Each returns the `Cmd`s for the runtime; the results come back as messages.

use super::replays::SAVED_OUTPUT_LIMIT;
use super::{checks, App, Cmd, Msg, ReplayRun, Screen, Work};
use rr_engine::replay::{ab, ReplayRequest, Verify};

impl App {
    pub(super) fn start_replay(&mut self, verify: bool) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("no instance selected", true);
            return vec![];
        };
        if let Some(blocker) = self.replay_blocker(i) {
            self.set_status(blocker.refusal("replay", "replayed"), true);
            return vec![];
        }
        // Both would use the GPU: the other's timings would mean nothing.
        if let Some(why) = self.gpu_busy(super::gpu_work::GpuWork::Replay) {
            self.set_status(why, true);
            return vec![];
        }
        let s = &self.settings;
        let mut request = ReplayRequest::new(self.rows[i].json_path.clone());
        request.verify = match (verify, s.tolerance) {
            (false, _) => Verify::No,
            (true, Some(c)) => Verify::Typed(c),
            (true, None) => Verify::Bytes,
        };
        request.save_output = true;
        request.output_dir = Some(self.output_dir.clone());
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
        // The command's own checks first, on a worker (they read the instance's files): the
        // explorer never starts a replay `rr-tui replay` would refuse.
        self.set_status(format!("checking {}…", self.rows[i].demangled), false);
        vec![Cmd::Work(Work::new(move || Msg::ReplayChecked {
            instance: i,
            result: crate::commands::replay::preflight(&request)
                .map(|checked| {
                    request.save_output = checked.inst.input_len <= SAVED_OUTPUT_LIMIT;
                    Box::new(request)
                })
                .map_err(|e| e.to_string()),
        }))]
    }

    /// The command's checks answered: start the replay, or say why not.
    pub(super) fn on_replay_checked(
        &mut self,
        i: usize,
        result: Result<Box<ReplayRequest>, String>,
    ) -> Vec<Cmd> {
        let mut request = match result {
            Ok(r) => r,
            Err(why) => {
                self.set_status(format!("cannot replay: {why}"), true);
                return vec![];
            }
        };
        if self.running.is_some() || self.tuning.is_some() || i >= self.rows.len() {
            return vec![]; // something else started meanwhile: the user asks again
        }
        self.next_run += 1;
        request.run_id = self.next_run;
        let verify = request.verify.is_on();
        self.replays.insert(
            i,
            ReplayRun::new(self.next_run, verify, request.repetitions),
        );
        self.running = Some(i);
        self.frozen = None;
        self.screen = Screen::Replay;
        self.set_status(format!("replaying {}…", self.rows[i].demangled), false);
        vec![Cmd::StartReplay {
            instance: i,
            request,
        }]
    }

    pub(super) fn export(&mut self) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("nothing to export: no instance selected", true);
            return vec![];
        };
        let Some(run) = self.replays.get(&i).cloned() else {
            self.set_status(
                "nothing to export: replay this instance first (r or v)",
                true,
            );
            return vec![];
        };
        if run.kernel_ns.is_empty() {
            self.set_status("nothing to export yet: no repetition has finished", true);
            return vec![];
        }
        let stem = self.rows[i].json_file.trim_end_matches(".json").to_string();
        let dir = self.export_dir.clone();
        let kernel = self.rows[i].kernel.clone();
        self.set_status("exporting…", false);
        vec![Cmd::Work(Work::new(move || {
            Msg::Exported(run.export(&dir, &stem, &kernel).map_err(|e| e.to_string()))
        }))]
    }

    /// Start the background checks (once, after the first frame).
    /// Hand the next batch of pending rows to a worker (nothing when none is pending).
    pub(super) fn read_more_rows(&mut self) -> Vec<Cmd> {
        if self.pending_rows.is_empty() {
            return vec![];
        }
        let (done, total) = *self
            .rows_loading
            .get_or_insert((0, self.pending_rows.len()));
        self.set_status(
            format!("reading the descriptors of {total} more instances: {done} done…"),
            false,
        );
        let take = self
            .pending_rows
            .len()
            .min(super::instances::ROWS_PER_BATCH);
        let batch: Vec<_> = self.pending_rows.drain(..take).collect();
        vec![Cmd::Work(Work::new(move || {
            Msg::RowsLoaded(super::instances::read_rows(&batch))
        }))]
    }

    /// A batch of rows read: in place of their placeholders (a problem `check` found meanwhile
    /// is kept), the view sorted and filtered again, the next batch asked for.
    pub(super) fn on_rows_loaded(&mut self, rows: Vec<(usize, super::Row)>) -> Vec<Cmd> {
        let n = rows.len();
        for (i, mut row) in rows {
            let Some(slot) = self.rows.get_mut(i) else {
                continue;
            };
            if row.problem.is_none() {
                row.problem = slot.problem.take();
            }
            *slot = row;
        }
        let selected = self.current();
        self.refresh_view();
        if let Some(pos) = selected.and_then(|i| self.view.iter().position(|&v| v == i)) {
            self.selected = pos;
        }
        if let Some((done, total)) = self.rows_loading.as_mut() {
            *done += n;
            if *done >= *total {
                let total = *total;
                self.rows_loading = None;
                self.set_status(format!("all {total} descriptors read"), false);
            }
        }
        self.read_more_rows()
    }

    pub(super) fn start_checks(&mut self) -> Vec<Cmd> {
        if self.checked.is_some() {
            return vec![];
        }
        self.checked = Some(0);
        checks::batch(&self.rows, 0)
            .map(|w| vec![Cmd::Work(w)])
            .unwrap_or_default()
    }
}
