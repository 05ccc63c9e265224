//! The explorer's state. `App::update(Msg) -> Vec<Cmd>` is the only way it changes; it reads no
//! clock and no terminal, so tests drive it with messages. Side effects (processes, threads)
//! are `Cmd`s the runtime performs.

pub mod instances;
pub mod replays;
pub mod snapview;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::keymap::{self, Action, Scope};
pub use instances::{Row, SortKey};
pub use replays::{Phase, ReplayRun};
use rr_engine::diff::job::IndexEvent;
use rr_engine::diff::Comparison;
use rr_engine::diff::DType;
use rr_engine::replay::{Event, ReplayRequest, Tagged, Verify};
use rr_engine::snapshot::Snapshot;
use rr_format::inspect::Inspection;
use rr_format::memory::MemoryMap;
use rr_format::{Descriptor, InstanceFiles};
pub use snapview::{Pair, SnapView};

#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    /// Mouse wheel: positive scrolls down.
    Scroll(i32),
    Resize(u16, u16),
    Tick,
    /// An event of a replay run (tagged with its run id; events of runs the explorer no longer
    /// waits for are dropped).
    Replay(Tagged),
    Index {
        job: u64,
        event: IndexEvent,
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
    /// An export finished: what was written, or why not.
    Exported(Result<String, String>),
    Quit,
}

/// Two mapped snapshots and the memory map that labels them.
pub struct OpenedPair {
    pub a: Arc<Snapshot>,
    pub b: Arc<Snapshot>,
    pub map: MemoryMap,
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
    StartIndex {
        job: u64,
        a: Arc<Snapshot>,
        b: Arc<Snapshot>,
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
}

impl Screen {
    pub const ALL: [Screen; 4] = [
        Screen::Instances,
        Screen::Descriptor,
        Screen::Snapshots,
        Screen::Replay,
    ];
    pub fn title(self) -> &'static str {
        match self {
            Screen::Instances => "Instances",
            Screen::Descriptor => "Descriptor",
            Screen::Snapshots => "Snapshots",
            Screen::Replay => "Replay",
        }
    }
    fn scope(self) -> Scope {
        match self {
            Screen::Instances => Scope::Instances,
            Screen::Descriptor => Scope::Descriptor,
            Screen::Snapshots => Scope::Snapshots,
            Screen::Replay => Scope::Replay,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Filter,
    Goto,
    Repetitions,
    Grid,
    Block,
    Tolerance,
}

impl InputKind {
    pub fn prompt(self) -> &'static str {
        match self {
            InputKind::Filter => "filter",
            InputKind::Goto => "go to (offset, 0xADDRESS, argN)",
            InputKind::Repetitions => "repetitions",
            InputKind::Grid => "grid X,Y,Z (empty: recorded)",
            InputKind::Block => "block X,Y,Z (empty: recorded)",
            InputKind::Tolerance => "tolerance TYPE[:atol=,rtol=,ulp=] (empty: bytes)",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub kind: InputKind,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySettings {
    pub repetitions: u32,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub tolerance: Option<Comparison>,
}

pub struct App {
    pub dir: PathBuf,
    pub rows: Vec<Row>,
    pub view: Vec<usize>,
    pub selected: usize,
    pub sort: SortKey,
    pub descending: bool,
    pub filter: String,
    pub screen: Screen,
    pub help: bool,
    pub input: Option<Input>,
    pub status: Option<Status>,
    pub raw_names: bool,
    pub mark: Option<usize>,
    pub inspections: HashMap<usize, Result<Box<Inspection>, String>>,
    /// Inspections asked of a worker and not back yet.
    pub inspecting: std::collections::HashSet<usize>,
    /// Snapshots asked of a worker and not back yet (instance, pair).
    pub opening: Option<(usize, Pair)>,
    pub descriptor_scroll: u16,
    pub snap: Option<SnapView>,
    next_job: u64,
    /// The id of the latest replay run; every run gets a new one.
    next_run: u64,
    pub replays: HashMap<usize, ReplayRun>,
    pub running: Option<usize>,
    pub settings: ReplaySettings,
    /// Number of repetitions shown while the chart is frozen.
    pub frozen: Option<usize>,
    /// `Err(why)` when replay cannot run here (no CUDA driver).
    pub gpu: Result<(), String>,
    /// Where replays write `.replay_output` (record directories are never modified).
    pub output_dir: PathBuf,
    /// Where `x` exports timings (the directory the explorer was started in).
    pub export_dir: PathBuf,
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
            sort: SortKey::Report,
            descending: false,
            filter: String::new(),
            screen: Screen::Instances,
            help: false,
            input: None,
            status: None,
            raw_names: false,
            mark: None,
            inspections: HashMap::new(),
            inspecting: std::collections::HashSet::new(),
            opening: None,
            descriptor_scroll: 0,
            snap: None,
            next_job: 0,
            next_run: 0,
            replays: HashMap::new(),
            running: None,
            settings: ReplaySettings {
                repetitions: 20,
                grid: None,
                block: None,
                tolerance: None,
            },
            frozen: None,
            gpu,
            output_dir,
            export_dir: PathBuf::from("."),
            height: 24,
            quit: false,
        };
        if app.rows.is_empty() {
            app.set_status("no instances in this directory (expected <KernelHash>_<LaunchConfigHash>.json files)", true);
        }
        app
    }

    /// The instance under the cursor (index into `rows`).
    pub fn current(&self) -> Option<usize> {
        self.view.get(self.selected).copied()
    }

    /// Show a message; names from record files in it are made visible.
    pub fn set_status(&mut self, text: impl Into<String>, error: bool) {
        let text: String = text.into();
        self.status = Some(Status {
            text: rr_format::text::visible(&text).into_owned(),
            error,
        });
    }

    fn page(&self) -> usize {
        (self.height as usize).saturating_sub(8).max(1)
    }

    fn refresh_view(&mut self) {
        let keep = self.current();
        let replays = &self.replays;
        self.view = instances::view(&self.rows, &self.filter, self.sort, self.descending, |i| {
            replays.get(&i).map(|r| r.badge().1).unwrap_or(0)
        });
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

    pub fn update(&mut self, msg: Msg) -> Vec<Cmd> {
        match msg {
            Msg::Key(k) => self.on_key(k),
            Msg::Scroll(d) => {
                let (a, n) = if d > 0 {
                    (Action::Down, d as usize)
                } else {
                    (Action::Up, d.unsigned_abs() as usize)
                };
                for _ in 0..n.min(50) {
                    self.on_action(a);
                }
                vec![]
            }
            Msg::Resize(_, h) => {
                self.height = h;
                vec![]
            }
            Msg::Tick => vec![],
            Msg::Quit => {
                self.quit = true;
                vec![Cmd::CancelReplay, Cmd::Quit]
            }
            Msg::Replay(Tagged { run, event }) => {
                // Only the run an instance waits for may change it: a cancelled run's child can
                // still be talking after a new run of the same instance has started.
                let Some(instance) = self
                    .replays
                    .iter()
                    .find(|(_, r)| r.run == run && r.phase != Phase::Cancelled)
                    .map(|(&i, _)| i)
                else {
                    return vec![];
                };
                let done = matches!(event, Event::Done { .. });
                if let Some(r) = self.replays.get_mut(&instance) {
                    r.apply(event);
                }
                if done && self.running == Some(instance) {
                    self.running = None;
                    let name = self.rows[instance].demangled.clone();
                    match self
                        .replays
                        .get(&instance)
                        .map(|r| (r.badge().0, r.phase.clone()))
                    {
                        Some((_, Phase::Failed(m))) => {
                            self.set_status(format!("replay of {name} failed: {m}"), true)
                        }
                        Some((badge, _)) => self
                            .set_status(format!("replay of {name}: {badge}"), badge == "mismatch"),
                        None => {}
                    }
                    if self.sort == SortKey::Status {
                        self.refresh_view();
                    }
                }
                vec![]
            }
            Msg::Inspected { instance, result } => {
                self.inspecting.remove(&instance);
                self.inspections.insert(instance, result);
                vec![]
            }
            Msg::SnapshotsOpened {
                instance,
                pair,
                result,
            } => {
                if self.opening != Some((instance, pair)) {
                    return vec![]; // superseded by a later request
                }
                self.opening = None;
                match result {
                    Ok(o) => {
                        self.next_job += 1;
                        let view = SnapView::new(
                            instance,
                            pair,
                            o.a.clone(),
                            o.b.clone(),
                            o.map,
                            self.next_job,
                        );
                        let dtype = self.snap.as_ref().and_then(|s| s.dtype);
                        self.snap = Some(SnapView { dtype, ..view });
                        vec![Cmd::StartIndex {
                            job: self.next_job,
                            a: o.a,
                            b: o.b,
                        }]
                    }
                    Err(e) => {
                        self.set_status(e, true);
                        vec![]
                    }
                }
            }
            Msg::SnapshotsChanged => {
                if let Some(s) = self.snap.as_mut() {
                    if !s.stale {
                        s.stale = true;
                        let msg = "a snapshot was truncated or rewritten after it was indexed: this view is stale (press Enter to reopen)";
                        s.error = Some(msg.into());
                        self.set_status(msg, true);
                    }
                }
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
                if let Some(s) = self.snap.as_mut().filter(|s| s.job == job) {
                    match event {
                        IndexEvent::Progress {
                            scanned,
                            new_ranges,
                            differing_bytes,
                            ..
                        } => {
                            s.index.absorb(new_ranges, differing_bytes);
                            s.scanned = scanned;
                        }
                        IndexEvent::Done(Ok(out)) => {
                            s.index = out.index;
                            s.scanned = out.compared;
                            s.done = true;
                        }
                        IndexEvent::Done(Err(e)) => {
                            s.done = true;
                            s.error = Some(e.clone());
                            self.set_status(e, true);
                        }
                    }
                }
                vec![]
            }
        }
    }

    fn on_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return vec![Cmd::CancelReplay, Cmd::Quit];
        }
        if let Some(input) = self.input.as_mut() {
            match k.code {
                KeyCode::Esc => {
                    if input.kind == InputKind::Filter {
                        self.filter.clear();
                        self.refresh_view();
                    }
                    self.input = None;
                }
                KeyCode::Enter => {
                    let input = self.input.take().expect("input is open");
                    return self.apply_input(input);
                }
                KeyCode::Backspace => {
                    input.text.pop();
                    if input.kind == InputKind::Filter {
                        self.filter = input.text.clone();
                        self.refresh_view();
                    }
                }
                KeyCode::Char(c) => {
                    input.text.push(c);
                    if input.kind == InputKind::Filter {
                        self.filter = input.text.clone();
                        self.refresh_view();
                    }
                }
                _ => {}
            }
            return vec![];
        }
        if self.help {
            if matches!(
                k.code,
                KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::F(1)
            ) {
                self.help = false;
            }
            return vec![];
        }
        match keymap::lookup(self.screen.scope(), &k) {
            Some(a) => self.on_action(a),
            None => vec![],
        }
    }

    fn open_input(&mut self, kind: InputKind, text: String) {
        self.input = Some(Input { kind, text });
    }

    fn apply_input(&mut self, input: Input) -> Vec<Cmd> {
        let text = input.text.trim().to_string();
        let opt = |t: &str| (!t.is_empty()).then(|| t.to_string());
        match input.kind {
            InputKind::Filter => {}
            InputKind::Goto => {
                if let Some(s) = self.snap.as_mut() {
                    if let Err(e) = s.goto(&text) {
                        self.set_status(e, true);
                    }
                }
            }
            InputKind::Repetitions => match text.parse::<u32>() {
                Ok(n) if n > 0 => self.settings.repetitions = n,
                _ => self.set_status(
                    format!("{text:?} is not a positive number of repetitions"),
                    true,
                ),
            },
            InputKind::Grid | InputKind::Block => {
                let parsed = match opt(&text) {
                    None => Ok(None),
                    Some(t) => crate::cli::parse_dim3(&t).map(Some),
                };
                match (parsed, input.kind) {
                    (Ok(v), InputKind::Grid) => self.settings.grid = v,
                    (Ok(v), _) => self.settings.block = v,
                    (Err(e), kind) => self.set_status(
                        format!(
                            "{} not changed: {e}",
                            if kind == InputKind::Grid {
                                "grid"
                            } else {
                                "block"
                            }
                        ),
                        true,
                    ),
                }
            }
            InputKind::Tolerance => match opt(&text) {
                Some(t) => match Comparison::parse_spec(&t) {
                    Ok(c) => self.settings.tolerance = Some(c),
                    Err(e) => self.set_status(e, true),
                },
                None => self.settings.tolerance = None,
            },
        }
        vec![]
    }

    fn switch(&mut self, screen: Screen) -> Vec<Cmd> {
        self.screen = screen;
        match screen {
            Screen::Descriptor => {
                self.descriptor_scroll = 0;
                self.ensure_inspection()
            }
            Screen::Snapshots => {
                let cur = self.current();
                if cur.is_some() && self.snap.as_ref().map(|s| s.instance) != cur {
                    return self.open_snapshots(Pair::InputOutput);
                }
                vec![]
            }
            _ => vec![],
        }
    }

    /// Ask a worker to inspect the selected (and the marked) instance, once each.
    pub fn ensure_inspection(&mut self) -> Vec<Cmd> {
        let mut cmds = Vec::new();
        for i in [self.current(), self.mark].into_iter().flatten() {
            if !self.inspections.contains_key(&i) && self.inspecting.insert(i) {
                let path = self.rows[i].json_path.clone();
                cmds.push(Cmd::Work(Work::new(move || Msg::Inspected {
                    instance: i,
                    result: Inspection::of(&path)
                        .map(Box::new)
                        .map_err(|e| e.to_string()),
                })));
            }
        }
        cmds
    }

    /// Ask a worker to map the two snapshots of a pair; indexing starts when they arrive.
    pub fn open_snapshots(&mut self, pair: Pair) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            return vec![];
        };
        let json = self.rows[i].json_path.clone();
        let replay_output = match pair {
            Pair::InputOutput => None,
            Pair::OutputReplay => match self.replays.get(&i).and_then(|r| r.saved.clone()) {
                Some(p) => Some(PathBuf::from(p)),
                None => {
                    self.set_status(
                        "no replay output for this instance yet: press v to replay and verify",
                        true,
                    );
                    return vec![];
                }
            },
        };
        self.opening = Some((i, pair));
        vec![Cmd::Work(Work::new(move || Msg::SnapshotsOpened {
            instance: i,
            pair,
            result: open_pair(&json, replay_output.as_deref()),
        }))]
    }

    fn start_replay(&mut self, verify: bool) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            return vec![];
        };
        if let Err(why) = &self.gpu {
            self.set_status(format!("cannot replay here: {why}"), true);
            return vec![];
        }
        if self.running.is_some() {
            self.set_status("a replay is already running (c cancels it)", true);
            return vec![];
        }
        let s = &self.settings;
        self.next_run += 1;
        let mut request = ReplayRequest::new(self.rows[i].json_path.clone());
        request.run_id = self.next_run;
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
        self.replays
            .insert(i, ReplayRun::new(self.next_run, verify, s.repetitions));
        self.running = Some(i);
        self.frozen = None;
        self.screen = Screen::Replay;
        self.set_status(format!("replaying {}…", self.rows[i].demangled), false);
        vec![Cmd::StartReplay {
            instance: i,
            request: Box::new(request),
        }]
    }

    fn move_selection(&mut self, delta: isize) -> Vec<Cmd> {
        if self.view.is_empty() {
            return vec![];
        }
        let n = self.view.len() as isize;
        self.selected = (self.selected as isize + delta).clamp(0, n - 1) as usize;
        if self.screen == Screen::Descriptor {
            return self.ensure_inspection();
        }
        vec![]
    }

    fn on_action(&mut self, a: Action) -> Vec<Cmd> {
        let page = self.page();
        match a {
            Action::Quit => {
                self.quit = true;
                return vec![Cmd::CancelReplay, Cmd::Quit];
            }
            Action::Help => self.help = true,
            Action::Back => {
                if !self.filter.is_empty() && self.screen == Screen::Instances {
                    self.filter.clear();
                    self.refresh_view();
                } else if self.screen != Screen::Instances {
                    self.screen = Screen::Instances;
                }
                self.status = None;
            }
            Action::ScreenInstances => return self.switch(Screen::Instances),
            Action::ScreenDescriptor => return self.switch(Screen::Descriptor),
            Action::ScreenSnapshots => return self.switch(Screen::Snapshots),
            Action::ScreenReplay => return self.switch(Screen::Replay),
            Action::NextScreen | Action::PrevScreen => {
                let i = Screen::ALL
                    .iter()
                    .position(|&s| s == self.screen)
                    .unwrap_or(0);
                let j = if a == Action::NextScreen {
                    (i + 1) % 4
                } else {
                    (i + 3) % 4
                };
                return self.switch(Screen::ALL[j]);
            }
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => return self.scroll(a, page),
            Action::Open => return self.switch(Screen::Snapshots),
            Action::Filter => {
                let f = self.filter.clone();
                self.open_input(InputKind::Filter, f);
            }
            Action::Sort => {
                self.sort = self.sort.next();
                self.refresh_view();
                self.set_status(format!("sorted by {}", self.sort.label()), false);
            }
            Action::ReverseSort => {
                self.descending = !self.descending;
                self.refresh_view();
            }
            Action::RawNames => self.raw_names = !self.raw_names,
            Action::Mark => {
                self.mark = if self.mark == self.current() {
                    None
                } else {
                    self.current()
                };
                let cmds = self.ensure_inspection();
                let text = match self.mark {
                    Some(i) => format!(
                        "marked {}: the descriptor screen now diffs it against the selection",
                        self.rows[i].json_file
                    ),
                    None => "mark cleared".into(),
                };
                self.set_status(text, false);
                return cmds;
            }
            Action::NextDiff | Action::PrevDiff => {
                if let Some(s) = self.snap.as_mut() {
                    let found = if a == Action::NextDiff {
                        s.next_diff()
                    } else {
                        s.prev_diff()
                    };
                    if !found {
                        let text = if s.done {
                            "no more differences"
                        } else {
                            "no more differences found yet (indexing)"
                        };
                        self.set_status(text, false);
                    }
                }
            }
            Action::Goto => {
                if self.snap.is_some() {
                    self.open_input(InputKind::Goto, String::new());
                }
            }
            Action::CyclePair => {
                // The pair being opened counts as the current one (keys can outrun the worker).
                let current = self
                    .opening
                    .map(|(_, p)| p)
                    .or(self.snap.as_ref().map(|s| s.pair));
                let next = match current {
                    Some(Pair::InputOutput) => Pair::OutputReplay,
                    _ => Pair::InputOutput,
                };
                return self.open_snapshots(next);
            }
            Action::CycleType => {
                if let Some(s) = self.snap.as_mut() {
                    s.dtype = match s.dtype {
                        None => Some(DType::U8),
                        Some(DType::F64) => None,
                        Some(d) => Some(d.next()),
                    };
                }
            }
            Action::Endian => {
                if let Some(s) = self.snap.as_mut() {
                    s.big_endian = !s.big_endian;
                }
            }
            Action::Squeeze => {
                if let Some(s) = self.snap.as_mut() {
                    s.squeeze = !s.squeeze;
                }
            }
            Action::Replay => return self.start_replay(false),
            Action::Verify => return self.start_replay(true),
            Action::Cancel => {
                if let Some(i) = self.running.take() {
                    if let Some(r) = self.replays.get_mut(&i) {
                        r.phase = Phase::Cancelled;
                    }
                    self.set_status("replay cancelled", false);
                    return vec![Cmd::CancelReplay];
                }
            }
            Action::EditRepetitions => self.open_input(
                InputKind::Repetitions,
                self.settings.repetitions.to_string(),
            ),
            Action::EditGrid => self.open_input(
                InputKind::Grid,
                self.settings.grid.map(dim3).unwrap_or_default(),
            ),
            Action::EditBlock => self.open_input(
                InputKind::Block,
                self.settings.block.map(dim3).unwrap_or_default(),
            ),
            Action::EditTolerance => self.open_input(
                InputKind::Tolerance,
                self.settings
                    .tolerance
                    .map(|c| c.to_spec())
                    .unwrap_or_default(),
            ),
            Action::Freeze => {
                self.frozen = match self.frozen {
                    Some(_) => None,
                    None => self
                        .current()
                        .and_then(|i| self.replays.get(&i))
                        .map(|r| r.kernel_ns.len()),
                };
            }
            Action::Export => return self.export(),
        }
        vec![]
    }

    fn scroll(&mut self, a: Action, page: usize) -> Vec<Cmd> {
        let step: isize = match a {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -(page as isize),
            Action::PageDown => page as isize,
            _ => 0,
        };
        match self.screen {
            Screen::Instances | Screen::Replay => {
                return match a {
                    Action::Top => self.move_selection(-(self.selected as isize)),
                    Action::Bottom => self.move_selection(self.view.len() as isize),
                    _ => self.move_selection(step),
                }
            }
            Screen::Descriptor => {
                self.descriptor_scroll = match a {
                    Action::Top => 0,
                    Action::Bottom => u16::MAX / 2,
                    _ => (self.descriptor_scroll as isize + step).clamp(0, u16::MAX as isize / 2)
                        as u16,
                }
            }
            Screen::Snapshots => {
                if let Some(s) = self.snap.as_mut() {
                    match a {
                        Action::Top => s.to_top(),
                        Action::Bottom => s.to_bottom(),
                        _ if step > 0 => s.scroll_down(step as usize),
                        _ => s.scroll_up(step.unsigned_abs()),
                    }
                }
            }
        }
        vec![]
    }

    fn export(&mut self) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            return vec![];
        };
        let Some(run) = self.replays.get(&i).cloned() else {
            self.set_status(
                "nothing to export: replay this instance first (r or v)",
                true,
            );
            return vec![];
        };
        let stem = self.rows[i].json_file.trim_end_matches(".json").to_string();
        let dir = self.export_dir.clone();
        let kernel = self.rows[i].kernel.clone();
        self.set_status("exporting…", false);
        vec![Cmd::Work(Work::new(move || {
            Msg::Exported(run.export(&dir, &stem, &kernel).map_err(|e| e.to_string()))
        }))]
    }
}

/// Map both snapshots of a pair (recorded input and output, or recorded output and a replay's
/// output) and build the memory map that labels them (on a worker).
fn open_pair(
    json: &std::path::Path,
    replay_output: Option<&std::path::Path>,
) -> Result<OpenedPair, String> {
    use rr_engine::snapshot::open_recorded;
    use rr_format::instance::Side;
    let text = |e: rr_engine::Error| e.to_string();
    let d = Descriptor::read(json).map_err(|e| e.to_string())?;
    let files = InstanceFiles::from_descriptor_path(json);
    let (a, b) = match replay_output {
        None => (
            open_recorded(&files, &d, Side::Input).map_err(text)?,
            open_recorded(&files, &d, Side::Output).map_err(text)?,
        ),
        Some(p) => (
            open_recorded(&files, &d, Side::Output).map_err(text)?,
            Snapshot::open(p).map_err(text)?,
        ),
    };
    let map = MemoryMap::new(&d, a.len());
    Ok(OpenedPair {
        a: Arc::new(a),
        b: Arc::new(b),
        map,
    })
}

/// `X,Y,Z` as the prompts take it.
pub fn dim3(v: [u32; 3]) -> String {
    format!("{},{},{}", v[0], v[1], v[2])
}
