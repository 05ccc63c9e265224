//! The work that reads the record after the first frame: the background checks of every
//! instance and the rows still to be read. Each returns the `Cmd`s for the runtime; the
//! results come back as messages.

use super::{checks, App, Cmd, Msg, Work};

impl App {
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
