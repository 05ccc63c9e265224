//! The record-directory picker: what the explorer shows for a directory that holds no record
//! but record directories below it (the bundled `record-fixtures/`, a `~/records/` of runs).
//! The search runs on a worker after the first frame (it reads up to 20 000 directory entries,
//! which a slow or network disk makes seconds): the picker says "searching…" until it ends.
//! Enter opens one (read on a worker); Esc on its instance list comes back here.

use std::path::PathBuf;

use rr_format::search::RecordDirsBelow;

use super::instances::{PendingRows, Row};
use super::{App, Cmd, Msg, Screen, Work};
use crate::tui::keymap::Action;

/// The record directories below the directory the explorer was given.
#[derive(Debug, Clone)]
pub struct Picker {
    /// The directory given (shown in the title).
    pub dir: PathBuf,
    pub below: RecordDirsBelow,
    /// The search for them is still running on a worker (`below` is empty until it ends).
    pub searching: bool,
    pub selected: usize,
    /// The first row on screen (`framelayout::first_row` keeps it).
    pub top: usize,
    /// The record directory being read on a worker (index into `below.found`), if any.
    pub opening: Option<usize>,
}

/// A record directory read on a worker, to replace the explorer's rows.
pub struct OpenedRecord {
    pub dir: PathBuf,
    pub rows: Vec<Row>,
    pub pending: PendingRows,
    pub recorder: Option<rr_format::report::RecorderSummary>,
}

impl std::fmt::Debug for OpenedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenedRecord({:?}, {} rows)", self.dir, self.rows.len())
    }
}

impl App {
    /// An explorer that starts on the picker of the record directories below `dir`, searching
    /// for them once the first frame is drawn ([`App::search_record_dirs`]).
    pub fn with_picker(dir: PathBuf, gpu: Result<(), String>, output_dir: PathBuf) -> App {
        let mut app = App::new(dir.clone(), Vec::new(), gpu, output_dir);
        app.status = None;
        app.picker = Some(Picker {
            dir,
            below: RecordDirsBelow::default(),
            searching: true,
            selected: 0,
            top: 0,
            opening: None,
        });
        app.picking = true;
        app
    }

    /// The search of a picker still searching, on a worker (once: the first frame).
    pub(super) fn search_record_dirs(&mut self) -> Vec<Cmd> {
        let Some(p) = self.picker.as_ref().filter(|p| p.searching) else {
            return vec![];
        };
        let dir = p.dir.clone();
        vec![Cmd::Work(Work::new(move || {
            Msg::RecordDirsFound(rr_format::search::record_dirs_below(&dir))
        }))]
    }

    /// The search has ended: its list is shown; when it found none, the directory is what it
    /// is, an empty record, and says so.
    pub(super) fn on_record_dirs_found(&mut self, below: RecordDirsBelow) {
        let Some(p) = self.picker.as_mut().filter(|p| p.searching) else {
            return;
        };
        if below.found.is_empty() {
            self.picker = None;
            self.picking = false;
            // A search cut short proves nothing: said, as `report` says it.
            match below.incomplete {
                true => self.set_status(
                    format!(
                        "{}; none was found below it, but {}",
                        super::NO_INSTANCES,
                        rr_format::search::did_not_see_everything()
                    ),
                    true,
                ),
                false => self.set_status(super::NO_INSTANCES, true),
            }
            return;
        }
        p.searching = false;
        p.below = below;
    }

    /// A key's action while the picker is shown.
    pub(super) fn on_picker_action(&mut self, a: Action) -> Vec<Cmd> {
        let page = self.page();
        let Some(p) = self.picker.as_mut() else {
            return vec![];
        };
        if p.searching && matches!(a, Action::Open) {
            self.set_status("still searching for record directories…", false);
            return vec![];
        }
        let last = p.below.found.len().saturating_sub(1);
        p.selected = match a {
            Action::Up => p.selected.saturating_sub(1),
            Action::Down => (p.selected + 1).min(last),
            Action::PageUp => p.selected.saturating_sub(page),
            Action::PageDown => (p.selected + page).min(last),
            Action::Top => 0,
            Action::Bottom => last,
            _ => p.selected,
        };
        match a {
            Action::Open => self.open_picked(),
            Action::Quit | Action::Help => self.on_action(a),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::Back => vec![],
            _ => {
                self.set_status(
                    "pick a record directory first: Enter opens it, q quits",
                    false,
                );
                vec![]
            }
        }
    }

    /// Read the selected record directory on a worker (a directory of many instances reads
    /// its first descriptors before it is shown).
    fn open_picked(&mut self) -> Vec<Cmd> {
        let Some(p) = self.picker.as_mut() else {
            return vec![];
        };
        let Some(found) = p.below.found.get(p.selected) else {
            self.set_status("no record directory to open here", true);
            return vec![];
        };
        p.opening = Some(p.selected);
        let dir = found.path.clone();
        let name = found.name.clone();
        self.set_status(format!("opening {name} …"), false);
        vec![Cmd::Work(Work::new(move || {
            let result = super::instances::load(&dir)
                .map(|(rd, rows, pending)| OpenedRecord {
                    recorder: rd.recorder_summary(),
                    dir: dir.clone(),
                    rows,
                    pending,
                })
                .map_err(|e| e.to_string());
            Msg::RecordOpened(result.map(Box::new))
        }))]
    }

    /// The record directory the picker asked for is read: it replaces the explorer's record
    /// (settings and the picker stay), and its checks start as a first frame's would.
    pub(super) fn on_record_opened(
        &mut self,
        result: Result<Box<OpenedRecord>, String>,
    ) -> Vec<Cmd> {
        let Some(mut picker) = self.picker.take() else {
            return vec![];
        };
        let asked = picker.opening.take();
        let opened = match result {
            Ok(opened) if asked.is_some() && self.picking => opened,
            Ok(_) => {
                self.picker = Some(picker);
                return vec![]; // the picker was left before the record was read
            }
            Err(e) => {
                self.picker = Some(picker);
                self.set_status(format!("cannot open it: {e}"), true);
                return vec![];
            }
        };
        let OpenedRecord {
            dir,
            rows,
            pending,
            recorder,
        } = *opened;
        let mut fresh = App::new(dir, rows, self.gpu.clone(), self.output_dir.clone());
        fresh.settings = self.settings.clone();
        fresh.tune.form = self.tune.form.clone();
        fresh.export_dir = self.export_dir.clone();
        fresh.width = self.width;
        fresh.height = self.height;
        fresh.recorder = recorder;
        fresh.pending_rows = pending;
        fresh.picker = Some(picker);
        // Answers about the record before are dropped; run and job numbers go on, so a late
        // event of a cancelled replay cannot pass for one of this record's.
        fresh.record_serial = self.record_serial + 1;
        fresh.jobs = self.jobs.numbering();
        fresh.snapshots.next_job = self.snapshots.next_job;
        *self = fresh;
        let mut cmds = self.start_checks();
        cmds.extend(self.read_more_rows());
        cmds
    }

    /// Esc on the instance list of a record opened from the picker: back to the picker. What
    /// runs for that record (a replay, a sweep, a profile) is ended: its rows are gone.
    pub(super) fn back_to_picker(&mut self) -> Vec<Cmd> {
        self.picking = true;
        self.screen = Screen::Instances;
        self.status = None;
        self.jobs.end_all()
    }
}
