//! The explorer's state. `App::update(Msg) -> Vec<Cmd>` is the only way it changes; it reads no
//! clock, no terminal and no file, so tests drive it with messages. Side effects (processes,
//! threads, files) are `Cmd`s the runtime performs.
//!
//! Each screen is a component in `screens` (its state, its drawing, its keys); the `App` holds
//! them and what they share. `actions` hands keys to them (and keeps navigation), `update` hands
//! them their messages, `tasks` starts the reading of the record after the first frame.

mod actions;
pub mod checks;
mod export;
pub mod framelayout;
pub mod gpu_work;
pub mod instances;
pub mod leaderboard;
pub mod mouse;
pub mod picker;
mod pointer;
pub mod prompt;
mod prompt_actions;
pub mod replays;
pub mod screens;
pub mod status;
mod tasks;
mod update;

use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

pub use framelayout::first_row;
pub use gpu_work::{GpuJobs, GpuWork};
pub use instances::{Row, SortKey};
pub use pointer::{MouseAction, Pane};
pub use prompt::{LineEditor, Prompt, PromptKind};
pub use replays::{CandidateRun, Phase, ReplayRun};
use rr_engine::diff::job::IndexEvent;
use rr_engine::diff::Comparison;
use rr_engine::replay::{ReplayRequest, Tagged};
use rr_engine::snapshot::Snapshot;
use rr_format::inspect::Inspection;
use rr_format::memory::MemoryMap;
pub use screens::snapshots::view::{Pair, SnapView};
pub use screens::tune::form::{Field, TuneForm};
pub use screens::tune::run::TuneRun;
pub use status::Status;

use super::keymap::Scope;

#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    /// A click or a turn of the wheel (`MouseAction` says what it means where it is).
    Mouse(MouseEvent),
    Resize(u16, u16),
    /// The runtime's clock, on every loop turn (`update` reads no clock itself): status
    /// messages expire by it.
    Tick(Instant),
    /// The first frame is on screen: background checks of every instance may start.
    FirstFrameDrawn,
    /// An event of a replay run (tagged with its run id; events of runs the explorer no longer
    /// waits for are dropped).
    Replay(Tagged),
    /// An event of a sweep (`rr-tui tune --events`), dropped likewise when its run is over.
    Tune(Tagged),
    /// An event of a profile (`rr-tui profile --events`), likewise.
    Profile(Tagged),
    /// Rows read by a worker after the first frame (index, row).
    RowsLoaded(Vec<(usize, Row)>),
    /// `replay`'s own checks of a replay asked for (`preflight`), done on a worker.
    ReplayChecked {
        instance: usize,
        result: Result<Box<ReplayRequest>, String>,
    },
    /// `tune`'s own checks of a sweep the form asked for (`preflight`), done on a worker.
    TuneChecked {
        instance: usize,
        result: Result<Box<rr_tune::job::TuneJob>, String>,
    },
    Index {
        job: u64,
        event: IndexEvent,
    },
    /// An event of a snapshot search (`/`).
    Search {
        job: u64,
        event: rr_engine::diff::search::SearchEvent,
    },
    /// A descriptor was inspected on a worker.
    Inspected {
        instance: usize,
        result: Result<Box<Inspection>, String>,
    },
    /// The two snapshots of a pair were mapped on a worker.
    SnapshotsOpened {
        instance: usize,
        pair: Pair,
        result: Result<OpenedPair, String>,
    },
    /// A snapshot of the open view shrank (or a page of it vanished) after it was indexed.
    SnapshotsChanged,
    /// A batch of instances was checked on a worker; `next` is the first row not yet checked.
    Checked {
        results: checks::CheckResults,
        next: usize,
    },
    /// An export finished: what was written, or why not.
    Exported(Result<String, String>),
    /// `rr-tui ab`'s leaderboard of the candidates `C` named, or why there is none; `run` is the
    /// run it answers (a cancelled one's late answer is dropped).
    Leaderboard {
        run: u64,
        result: Result<Box<rr_engine::replay::leaderboard::Leaderboard>, String>,
    },
    /// The search for record directories below the directory given, done on a worker.
    RecordDirsFound(rr_format::search::RecordDirsBelow),
    /// The record directory the picker asked for, read on a worker.
    RecordOpened(Result<Box<picker::OpenedRecord>, String>),
    /// The sweep file the explorer was started with, read on a worker with its record
    /// (`rr-tui SWEEP.json`), or why it cannot be shown.
    SweepOpened(Result<Box<screens::tune::sweepfile::OpenedSweep>, String>),
    /// A worker's answer about the record that was open when it started (its number): dropped
    /// when the picker has opened another since.
    ForRecord(u64, Box<Msg>),
    Quit,
}

/// Two mapped snapshots and the memory map that labels them.
pub struct OpenedPair {
    pub a: Arc<Snapshot>,
    pub b: Arc<Snapshot>,
    pub map: MemoryMap,
    /// Said on opening: the input shown alone, when no output was recorded.
    pub note: Option<String>,
}

impl std::fmt::Debug for OpenedPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenedPair({:?}, {:?})", self.a, self.b)
    }
}

/// Slow work (reading or writing files) for a worker thread; its result comes back as a
/// message, so `update` itself never touches a file.
pub struct Work(pub Box<dyn FnOnce() -> Msg + Send>);

impl Work {
    fn new(f: impl FnOnce() -> Msg + Send + 'static) -> Work {
        Work(Box::new(f))
    }
}

pub enum Cmd {
    StartReplay {
        instance: usize,
        request: Box<ReplayRequest>,
    },
    CancelReplay,
    /// Start `rr-tui job` with this sweep (its events asked for, its run id RUN), its events
    /// as `Msg::Tune`.
    StartTune {
        instance: usize,
        run: u64,
        job: Box<rr_tune::job::TuneJob>,
    },
    /// Kill the running sweep (and its engine processes).
    CancelTune,
    /// Start `rr-tui job` on a profile job (events tagged with its run id), its events as
    /// `Msg::Profile`.
    StartProfile {
        instance: usize,
        job: Box<rr_engine::profile::ProfileJob>,
    },
    /// Kill the running profile (ncu and the replay under it).
    CancelProfile,
    /// Rank the candidates of an A/B job (`rr-tui job`, its leaderboard in JSON) in a process
    /// group of its own; its leaderboard comes back as `Msg::Leaderboard`, an answer about the
    /// record then open (`record`: its number, as `Msg::ForRecord` says).
    StartLeaderboard {
        job: Box<rr_engine::replay::ab_job::AbJob>,
        record: u64,
        /// The run the answer belongs to.
        run: u64,
    },
    /// End the running leaderboard (`rr-tui ab` and its workers).
    CancelLeaderboard,
    StartIndex {
        job: u64,
        a: Arc<Snapshot>,
        b: Arc<Snapshot>,
    },
    /// Search the two snapshots on a worker (replacing, and so cancelling, the one before);
    /// its events as `Msg::Search`.
    StartSearch {
        job: u64,
        a: Arc<Snapshot>,
        b: Arc<Snapshot>,
        query: rr_engine::diff::search::Query,
    },
    Quit,
    Work(Work),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Instances,
    Descriptor,
    Snapshots,
    Replay,
    Tune,
    Profile,
}

impl Screen {
    pub const ALL: [Screen; 6] = [
        Screen::Instances,
        Screen::Descriptor,
        Screen::Snapshots,
        Screen::Replay,
        Screen::Tune,
        Screen::Profile,
    ];
    pub fn title(self) -> &'static str {
        match self {
            Screen::Instances => "Instances",
            Screen::Descriptor => "Descriptor",
            Screen::Snapshots => "Snapshots",
            Screen::Replay => "Replay",
            Screen::Tune => "Tune",
            Screen::Profile => "Profile",
        }
    }
    /// The tab's title where the full ones leave no room for the directory's name.
    pub fn short_title(self) -> &'static str {
        match self {
            Screen::Instances => "Inst",
            Screen::Descriptor => "Desc",
            Screen::Snapshots => "Snap",
            Screen::Replay => "Repl",
            Screen::Tune => "Tune",
            Screen::Profile => "Prof",
        }
    }
    pub fn scope(self) -> Scope {
        match self {
            Screen::Instances => Scope::Instances,
            Screen::Descriptor => Scope::Descriptor,
            Screen::Snapshots => Scope::Snapshots,
            Screen::Replay => Scope::Replay,
            Screen::Tune => Scope::Tune,
            Screen::Profile => Scope::Profile,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySettings {
    pub repetitions: u32,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub tolerance: Option<Comparison>,
    /// What a legacy LLVM record lacks (`--image`, `--base-address`), for replays and sweeps.
    pub supplied: crate::cli::SuppliedArgs,
    /// An A/B candidate: replays then run it beside the recorded kernel (`--candidate`).
    pub candidate: Option<rr_engine::replay::candidate::CandidateSpec>,
}

pub use crate::settings::config::DEFAULT_REPETITIONS;

/// Said on a directory that holds no instance (and no record directory below it).
pub const NO_INSTANCES: &str = "no instances in this directory: none of the layouts listed above";

/// The title line each screen draws above its content.
pub const TITLE_LINES: u16 = 1;

pub struct App {
    pub dir: PathBuf,
    pub rows: Vec<Row>,
    /// The rows listed, in the list's order (`refresh_view`: the Instances screen's filter and
    /// order): indices into `rows`.
    pub view: Vec<usize>,
    /// The selected instance: its place in `view` (every screen shows it).
    pub selected: usize,
    pub screen: Screen,
    /// The Instances screen (`1`): the list's order, filter and scrolling.
    pub instances: screens::InstancesScreen,
    /// The Descriptor screen (`2`): inspections, the comparison, the view and its scrolling.
    pub descriptor: screens::DescriptorScreen,
    /// The Snapshots screen (`3`): the pair open and the one being opened.
    pub snapshots: screens::SnapshotsScreen,
    /// The Replay screen (`4`): the session's replays, the chart's freeze, the kept process.
    pub replay: screens::ReplayScreen,
    pub help: bool,
    /// First line of the help popup on screen.
    pub help_scroll: usize,
    pub prompt: Option<Prompt>,
    pub status: Option<Status>,
    /// Counts the messages said, so that `update` knows whether one was said meanwhile.
    status_serial: u64,
    pub raw_names: bool,
    pub mark: Option<usize>,
    /// Rows still to be read (large directories: after the first frame, a batch at a time).
    pub pending_rows: instances::PendingRows,
    /// Rows read so far of those that were pending, and how many there were.
    pub rows_loading: Option<(usize, usize)>,
    /// What holds the GPU (one replay, sweep, profile or leaderboard at a time), the run ids,
    /// whether the executor keeps the last replay's process.
    pub jobs: GpuJobs,
    pub settings: ReplaySettings,
    /// The Tune screen (`5`): the form, the sweeps, the heatmap and table, the marks.
    pub tune: screens::TuneScreen,
    /// The Profile screen (`6`): the profiles by instance and the one running.
    pub profile: screens::ProfileScreen,
    /// `Err(why)` when replay cannot run here (no CUDA driver).
    pub gpu: Result<(), String>,
    /// Where replays write `.replay_output` (record directories are never modified).
    pub output_dir: PathBuf,
    /// Where `x` exports timings (the directory the explorer was started in).
    pub export_dir: PathBuf,
    /// Rows checked by the background `check` so far (`None`: not started).
    pub checked: Option<usize>,
    /// The recorder's account of the recorded program's launches (rr-tui recordings).
    pub recorder: Option<rr_format::report::RecorderSummary>,
    /// The record directories below the directory given, when it holds none itself.
    pub picker: Option<picker::Picker>,
    /// The picker is shown (else the record opened from it, or the only one).
    pub picking: bool,
    /// Why the explorer ends with an error (a sweep file it was started with that cannot be
    /// shown): said on standard error once the terminal is restored.
    pub fatal: Option<String>,
    /// Which record is open: the picker opens another in the same `App`.
    record_serial: u64,
    pub width: u16,
    pub height: u16,
    pub quit: bool,
}

impl App {
    pub fn new(dir: PathBuf, rows: Vec<Row>, gpu: Result<(), String>, output_dir: PathBuf) -> App {
        let mut app = App {
            dir,
            view: (0..rows.len()).collect(),
            rows,
            selected: 0,
            screen: Screen::Instances,
            instances: Default::default(),
            descriptor: Default::default(),
            snapshots: Default::default(),
            replay: Default::default(),
            help: false,
            help_scroll: 0,
            prompt: None,
            status: None,
            status_serial: 0,
            raw_names: false,
            mark: None,
            pending_rows: Vec::new(),
            rows_loading: None,
            jobs: GpuJobs::default(),
            settings: ReplaySettings {
                repetitions: DEFAULT_REPETITIONS,
                grid: None,
                block: None,
                tolerance: None,
                supplied: Default::default(),
                candidate: None,
            },
            tune: Default::default(),
            profile: Default::default(),
            gpu,
            output_dir,
            export_dir: PathBuf::from("."),
            checked: None,
            recorder: None,
            picker: None,
            picking: false,
            record_serial: 0,
            width: 80,
            height: 24,
            quit: false,
            fatal: None,
        };
        if app.rows.is_empty() {
            // The instance list names every layout rr-tui reads; the message points at it.
            app.set_status(NO_INSTANCES, true);
        }
        app
    }

    /// The instance under the cursor (index into `rows`).
    pub fn current(&self) -> Option<usize> {
        self.view.get(self.selected).copied()
    }

    /// Select the instance of descriptor `json` (`rr-tui X.json`), if it is listed; the same
    /// file however its path is spelled.
    pub fn select_descriptor(&mut self, json: &std::path::Path) -> bool {
        let same =
            |p: &std::path::Path| match (std::fs::canonicalize(p), std::fs::canonicalize(json)) {
                (Ok(a), Ok(b)) => a == b,
                _ => p == json,
            };
        match self
            .view
            .iter()
            .position(|&i| same(&self.rows[i].json_path))
        {
            Some(at) => {
                self.selected = at;
                true
            }
            None => false,
        }
    }

    /// Show a message (replacing the previous one); names from record files in it are made
    /// visible.
    pub fn set_status(&mut self, text: impl Into<String>, error: bool) {
        let text: String = text.into();
        self.status_serial += 1;
        self.status = Some(Status::new(
            rr_format::text::visible(&text).into_owned(),
            error,
        ));
    }

    /// Lines the screen frame takes around a screen: the tab bar, the status line, the hint
    /// bar (one or two lines: every key of the screen).
    pub fn frame_lines(&self) -> u16 {
        2 + super::keymap::hint_line_count(self.scope(), self.width)
    }

    /// Lines of a screen's content below its title.
    pub fn content_lines(&self) -> usize {
        self.height.saturating_sub(self.frame_lines() + TITLE_LINES) as usize
    }

    fn page(&self) -> usize {
        self.content_lines().saturating_sub(2).max(1)
    }

    /// Fit the open snapshot view's rows to the terminal width and its element type.
    fn relayout(&mut self) {
        self.snapshots.relayout(self.width);
    }

    /// The rows listed again, after the rows, the list's filter or order, or (sorted by status)
    /// a replay changed; the selected instance stays selected when it is still listed.
    fn refresh_view(&mut self) {
        let keep = self.current();
        let (replays, rows, list) = (&self.replay.runs, &self.rows, &self.instances);
        self.view =
            instances::view(
                rows,
                &list.filter,
                list.sort,
                list.descending,
                |i| match replays.get(&i) {
                    Some(r) => r.badge().1,
                    None if rows[i].problem.is_some() => 4,
                    None => 0,
                },
            );
        self.selected = keep
            .and_then(|k| self.view.iter().position(|&i| i == k))
            .unwrap_or(0);
    }

    /// Apply a message and perform any [`Cmd::Work`] it asks for on this thread, feeding the
    /// results back, as the runtime would from its workers (tests and benchmarks). Returns the
    /// commands left for a runtime: replays, index jobs, quit.
    pub fn update_inline(&mut self, msg: Msg) -> Vec<Cmd> {
        let mut queue: std::collections::VecDeque<Cmd> = self.update(msg).into();
        let mut rest = Vec::new();
        while let Some(cmd) = queue.pop_front() {
            match cmd {
                Cmd::Work(work) => queue.extend(self.update((work.0)())),
                other => rest.push(other),
            }
        }
        rest
    }

    /// The keys that apply now: the picker's while it is shown, else the screen's.
    pub fn scope(&self) -> super::keymap::Scope {
        match self.picking {
            true => super::keymap::Scope::Picker,
            false => self.screen.scope(),
        }
    }

    /// Why no replay, sweep or profile of instance `i` can start here, if none can: the
    /// record's own reason first, in the order `rr-tui replay` gives them
    /// (`rr_format::inspect::unreplayable` applies the loader's rule, then an LLVM 16–17 record
    /// without its device image by `rr_engine::replay::legacy::missing_image`, unless `I` gave
    /// one), then the machine's (no CUDA driver). The refusals of `r`, `v`, `u`/`r` and `P` and
    /// every screen's standing line read this one rule.
    pub fn replay_blocker(&self, i: usize) -> Option<ReplayBlocker<'_>> {
        let row = self.rows.get(i);
        if let Some(why) = row.and_then(|r| r.unreplayable.as_deref()) {
            return Some(ReplayBlocker::Record(Cow::Borrowed(why)));
        }
        let image_given = self.settings.supplied.image.is_some();
        if let Some(image) = row
            .and_then(|r| r.missing_image.as_ref())
            .filter(|_| !image_given)
        {
            return Some(ReplayBlocker::Record(Cow::Owned(format!(
                "{}: {}; on the replay screen (4), I gives the kernel's image file (--image)",
                image.display(),
                rr_engine::replay::legacy::NO_IMAGE
            ))));
        }
        self.gpu
            .as_ref()
            .err()
            .map(|why| ReplayBlocker::Machine(why))
    }
}

/// Why an instance cannot be replayed here (see [`App::replay_blocker`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayBlocker<'a> {
    /// The record itself cannot be replayed, on any machine (or not until what it lacks is
    /// given).
    Record(Cow<'a, str>),
    /// This machine cannot replay (no CUDA driver).
    Machine(&'a str),
}

impl<'a> ReplayBlocker<'a> {
    /// The status line's refusal to `verb` (replay, tune, profile; `done`: replayed, tuned,
    /// profiled) the instance.
    pub fn refusal(self, verb: &str, done: &str) -> String {
        match self {
            ReplayBlocker::Record(why) if verb == "replay" => {
                format!("this instance cannot be replayed: {why}")
            }
            ReplayBlocker::Record(why) => {
                format!("this instance cannot be replayed, nor {done}: {why}")
            }
            ReplayBlocker::Machine(why) => format!("cannot {verb} here: {why}"),
        }
    }

    /// The reason alone.
    pub fn reason(self) -> Cow<'a, str> {
        match self {
            ReplayBlocker::Record(why) => why,
            ReplayBlocker::Machine(why) => Cow::Borrowed(why),
        }
    }
}

/// `XxYxZ` as the prompts and `replay --grid/--block` take it.
pub fn dim3(v: [u32; 3]) -> String {
    format!("{}x{}x{}", v[0], v[1], v[2])
}
