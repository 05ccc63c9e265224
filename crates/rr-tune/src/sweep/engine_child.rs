//! One engine on one GPU, seen from the tuner: start it (a child process here, or a connection
//! to an engine hub that runs it elsewhere), wait until it is ready, send it `measure` commands
//! and wait for the replies, with a watchdog for kernels that never finish. A fault, a crash or
//! a timeout ends the engine; the caller starts a new one.
//!
//! A local engine is `rr-tui job`: its [`EngineJob`] is the first line on its standard input
//! (the child-process protocol, `rr_engine::job`), and the engine's commands follow on the same
//! input. An engine hub (`tune --engine-hub SOCKET`, served by the Python package's Ray sweep)
//! takes one connection per engine. The tuner sends one line first,
//! `{"hub":2,"cwd":…,"job":{"protocol":1,"engine":{…}}}` (the directory to run it in and its
//! job, which the hub hands its `rr-tui job` as that first line), then the engine protocol
//! flows both ways unchanged. An `error` event of kind `lost` says the engine's machine or
//! process was lost through no fault of the configuration, which then goes to another engine.

use rr_format::text::io_reason;
use std::io::{BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::{Command as EngineCommand, VariantImage};
use crate::trial::{plausible_time, DeviceInfo};
use crate::{Config, Status, Trial};
use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use rr_engine::replay::energy::EnergyPolicy;
use rr_engine::replay::protocol::{ErrorKind, Event, Tagged};
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::stderr_tail::StderrTail;

use crate::engine_job::EngineJob;

/// How long an engine may take to open its session (driver start, reservation, restore; through
/// a hub, its placement too): 300 s, or `RR_TUI_START_TIMEOUT` seconds (1 to 86400: a large
/// recording on slow disks, or a cluster that must first start a node).
pub fn start_timeout() -> Duration {
    std::env::var("RR_TUI_START_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| (1..=86_400).contains(s))
        .map_or(Duration::from_secs(300), Duration::from_secs)
}
/// Stderr lines kept to explain a death.
const STDERR_LINES: usize = 4;

/// How the tuner reaches an engine.
enum Link {
    /// An `rr-tui engine` child of this process.
    Local(Child),
    /// A connection to an engine hub, which runs the engine where it likes.
    Hub(UnixStream),
}

pub struct EngineChild {
    link: Link,
    input: Box<dyn Write + Send>,
    events: Receiver<Option<Line>>,
    /// What a local engine wrote on stderr, kept to explain its death.
    stderr: Arc<Mutex<StderrTail>>,
    pub info: DeviceInfo,
    /// The image is PTX: register limits can be applied.
    pub ptx: bool,
    /// A simulated engine's sweep: the report must say its answers are not measurements.
    pub simulated_from: Option<String>,
    /// What the last [`EngineChild::switch`] kept on the GPU, in words.
    pub switched: Option<String>,
    next_id: u64,
}

/// What became of one configuration sent to an engine.
pub enum Reply {
    Trial(Box<Trial>),
    /// The engine ended (fault, crash, timeout): it must be replaced.
    Lost(String),
    /// The hub lost the engine's machine or process before it answered: the configuration was
    /// not at fault and goes to another engine; this one must be replaced.
    Unrun(String),
    /// The engine (or its hub) broke the protocol, answering for a run it was never sent:
    /// nothing it says can be matched to a configuration. The configuration was not at fault
    /// and goes to another engine; the failure counts against where engines come from.
    Broken(String),
    /// The sweep was stopped (a signal) while waiting: the engine was ended.
    Interrupted,
}

/// Why an engine did not start, or could not switch to another instance: in words, and whether
/// a local engine refused the instance itself (an `error` of kind `input`: a record no replay
/// can run, which no other attempt and no other GPU changes, so it is not tried again).
#[derive(Debug, Clone, PartialEq)]
pub struct NotStarted {
    pub why: String,
    pub input: bool,
}

impl From<String> for NotStarted {
    fn from(why: String) -> NotStarted {
        NotStarted { why, input: false }
    }
}

impl From<&str> for NotStarted {
    fn from(why: &str) -> NotStarted {
        why.to_string().into()
    }
}

impl std::fmt::Display for NotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// `job` as the line an engine reads first (with its newline).
fn job_line(job: &EngineJob) -> Result<Vec<u8>, String> {
    rr_engine::job::line(job).map_err(|e| format!("the engine's job: {e}"))
}

/// The first line an engine hub reads: the hub protocol's version, the directory to run the
/// engine in and its job (the line the hub hands its `rr-tui job` first), with its newline.
fn hub_hello(cwd: &str, job: &EngineJob) -> Result<Vec<u8>, String> {
    let cwd = serde_json::to_string(cwd).map_err(|e| format!("the engine hub's line: {e}"))?;
    let mut line = format!("{{\"hub\":{HUB_VERSION},\"cwd\":{cwd},\"job\":").into_bytes();
    line.extend(rr_engine::job::encode(job).map_err(|e| format!("the engine's job: {e}"))?);
    line.extend(b"}\n");
    Ok(line)
}

impl EngineChild {
    /// Start an engine for `job` as a child of this process (`rr-tui job`, the job its first
    /// line of input) and wait until it is ready.
    pub fn start(exe: &Path, job: &EngineJob) -> Result<EngineChild, NotStarted> {
        let line = job_line(job)?;
        let mut child = Command::new(exe)
            .arg("job")
            // Its job is the one on its input: one in our environment is none of its.
            .env_remove(rr_engine::job::JOB_ENV)
            .env(crate::engine::TUNER_PID_ENV, std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the engine {}: {}",
                    exe.display(),
                    io_reason(&e)
                )
            })?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the engine's pipes could not be opened".into());
        };
        let (stderr_tail, _) = StderrTail::drain(stderr);
        // A child that cannot take its job ends: said when it is not ready, with its status
        // and stderr.
        let _ = stdin.write_all(&line).and_then(|()| stdin.flush());
        let engine = EngineChild::new(Link::Local(child), Box::new(stdin), stdout, job);
        engine.with_stderr(stderr_tail).ready()
    }

    /// Have the engine hub at `hub` run an engine for `job`, and wait until it is ready.
    pub fn connect(hub: &Path, job: &EngineJob) -> Result<EngineChild, NotStarted> {
        let shown = rr_format::text::visible_path(hub);
        let mut stream = UnixStream::connect(hub)
            .map_err(|e| format!("cannot reach the engine hub {shown}: {}", io_reason(&e)))?;
        let cwd = std::env::current_dir()
            .map_err(|e| format!("the current directory: {}", io_reason(&e)))?
            .into_os_string()
            .into_string()
            .map_err(|d| {
                format!(
                    "{}: the engine hub takes a UTF-8 working directory only",
                    rr_format::text::visible(&d.to_string_lossy())
                )
            })?;
        let hello = hub_hello(&cwd, job)?;
        let reader = stream
            .try_clone()
            .map_err(|e| format!("the engine hub {shown}: {}", io_reason(&e)))?;
        stream
            .write_all(&hello)
            .map_err(|e| format!("the engine hub {shown} does not listen: {}", io_reason(&e)))?;
        let input = stream
            .try_clone()
            .map_err(|e| format!("the engine hub {shown}: {}", io_reason(&e)))?;
        EngineChild::new(Link::Hub(stream), Box::new(input), reader, job).ready()
    }

    fn new(
        link: Link,
        input: Box<dyn Write + Send>,
        output: impl Read + Send + 'static,
        job: &EngineJob,
    ) -> EngineChild {
        EngineChild {
            link,
            input,
            events: read_events(output),
            stderr: Arc::default(),
            info: DeviceInfo {
                ordinal: job.device_id.unwrap_or(0),
                name: String::new(),
                sm: 0,
                rated_clock_mhz: 0.0,
            },
            ptx: false,
            simulated_from: None,
            switched: None,
            next_id: 1,
        }
    }

    fn with_stderr(mut self, tail: Arc<Mutex<StderrTail>>) -> EngineChild {
        self.stderr = tail;
        self
    }

    fn ready(mut self) -> Result<EngineChild, NotStarted> {
        self.wait_ready()?;
        Ok(self)
    }

    /// Have the engine serve `descriptor`, another instance of the recording it serves, and
    /// wait until it is ready again: what the two instances share stays on its GPU. An engine
    /// that cannot switch (its instance maps other addresses, …) has ended: start a new one.
    pub fn switch(&mut self, descriptor: &Path) -> Result<(), NotStarted> {
        // Whatever came before the command is no answer to it.
        while let Ok(Some(_)) = self.events.try_recv() {}
        let id = self.next_id;
        self.next_id += 1;
        let line = EngineCommand::Load {
            id,
            descriptor: descriptor.to_path_buf(),
        }
        .to_line()?;
        if self
            .input
            .write_all(line.as_bytes())
            .and_then(|()| self.input.flush())
            .is_err()
        {
            return Err("the engine stopped reading commands".into());
        }
        self.switched = None;
        self.wait_ready()
    }

    fn wait_ready(&mut self) -> Result<(), NotStarted> {
        // One deadline: events that are not `ready` never extend it.
        let timeout = start_timeout();
        let deadline = Instant::now() + timeout;
        let last = self.next_id - 1;
        loop {
            let line = self.events.recv_deadline(deadline);
            if let Ok(Some(l)) = &line {
                if let Some(run) = never_sent(l, last) {
                    return Err(self.unasked(run, last).into());
                }
            }
            match line {
                Ok(Some(Line::Event(t))) => match t.event {
                    Event::Device {
                        name, sm, ordinal, ..
                    } => {
                        self.info.name = name;
                        self.info.sm = sm;
                        self.info.ordinal = ordinal;
                    }
                    Event::Ready {
                        rated_clock_mhz,
                        ptx,
                        simulated_from,
                    } => {
                        self.info.rated_clock_mhz = rated_clock_mhz;
                        self.ptx = ptx;
                        self.simulated_from = simulated_from;
                        return Ok(());
                    }
                    Event::Phase { name, detail } if name == "switched" => {
                        self.switched = Some(detail);
                    }
                    Event::Error { kind, message } => {
                        self.kill();
                        // Only a local engine's: a hub refuses in `input` errors of its own
                        // too (a tuner of another hub version), which are no record's fault.
                        let input = kind == ErrorKind::Input && matches!(self.link, Link::Local(_));
                        return Err(NotStarted {
                            why: self.said(&self.hub_version_said(message)),
                            input,
                        });
                    }
                    _ => {}
                },
                Ok(Some(Line::Bad { .. })) => {}
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.death("the engine ended before it was ready").into())
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(self
                        .said(&format!(
                            "the engine was not ready after {} s (RR_TUI_START_TIMEOUT allows more)",
                            timeout.as_secs()
                        ))
                        .into());
                }
            }
        }
    }

    /// Measure one configuration; `watchdog` bounds the wait for the reply, and `stop` (a
    /// signal) ends the wait and the engine.
    pub fn measure(
        &mut self,
        config: Config,
        variant: Option<VariantImage>,
        policy: TimingPolicy,
        energy: Option<EnergyPolicy>,
        watchdog: Duration,
        stop: &AtomicBool,
    ) -> Reply {
        // Whatever came before the command is no answer to it.
        loop {
            match self.events.try_recv() {
                Ok(Some(line)) => {
                    if let Some(run) = never_sent(&line, self.next_id - 1) {
                        return Reply::Broken(self.unasked(run, self.next_id - 1));
                    }
                }
                Ok(None) | Err(TryRecvError::Disconnected) => {
                    return self.ended("the engine ended")
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let line = match (EngineCommand::Measure {
            id,
            config,
            policy,
            variant,
            energy,
        })
        .to_line()
        {
            Ok(line) => line,
            Err(why) => return Reply::Lost(why),
        };
        if self
            .input
            .write_all(line.as_bytes())
            .and_then(|()| self.input.flush())
            .is_err()
        {
            return self.ended("the engine stopped reading commands");
        }
        // One deadline: events for other runs never extend it.
        let deadline = Instant::now() + watchdog;
        loop {
            if stop.load(Ordering::Relaxed) {
                self.kill();
                return Reply::Interrupted;
            }
            let now = Instant::now();
            if now >= deadline {
                self.kill();
                return Reply::Lost(format!(
                    "no result after {:.0} s (the kernel may never finish); the engine was stopped",
                    watchdog.as_secs_f64()
                ));
            }
            let line = self.events.recv_timeout((deadline - now).min(STOP_POLL));
            // Said at once: its answer would never come, and the watchdog would blame the
            // kernel a minute later.
            if let Some(run) = line.as_ref().ok().and_then(|l| never_sent(l.as_ref()?, id)) {
                return Reply::Broken(self.unasked(run, id));
            }
            match line {
                Ok(Some(Line::Event(t))) if t.run == id => match t.event {
                    Event::Trial(trial) => return self.checked(*trial, &config),
                    Event::Error {
                        kind: ErrorKind::Lost,
                        message,
                    } => {
                        self.kill();
                        return Reply::Unrun(message);
                    }
                    Event::Error { message, .. } => {
                        self.wait();
                        return Reply::Lost(message);
                    }
                    _ => {}
                },
                Ok(Some(Line::Bad {
                    run: Some(run),
                    text,
                })) if run == id => {
                    self.kill();
                    return Reply::Lost(self.said(&format!(
                        "the engine answered with a line that is not an engine event: {text}"
                    )));
                }
                Ok(Some(_)) | Err(RecvTimeoutError::Timeout) => {}
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                    return self.ended("the engine ended")
                }
            }
        }
    }

    /// A trial is the answer only when it is for the configuration sent and its time could
    /// have been measured; times it adds for information are dropped when they could not.
    fn checked(&mut self, mut trial: Trial, sent: &Config) -> Reply {
        if trial.config != *sent {
            self.kill();
            return Reply::Lost(self.said(&format!(
                "the engine answered for another configuration ({}) than the one sent ({})",
                trial.config, sent
            )));
        }
        let measured = matches!(trial.status, Status::Ok | Status::VerifyFailed);
        if measured && !trial.kernel_ns.as_ref().is_some_and(plausible_time) {
            self.kill();
            return Reply::Lost(
                self.said("the engine answered a measured configuration without a plausible time"),
            );
        }
        let plausible = |x: &Option<f64>| x.is_some_and(|v| v.is_finite() && v >= 0.0);
        if !plausible(&trial.engine_ms) {
            trial.engine_ms = None;
        }
        if !plausible(&trial.verify_ms) {
            trial.verify_ms = None;
        }
        if trial.energy.is_some_and(|e| !e.is_plausible()) {
            trial.energy = None;
        }
        Reply::Trial(Box::new(trial))
    }

    /// The engine answered for `run`, which it was never sent (`last` is the last run it was):
    /// ended, and said.
    fn unasked(&mut self, run: u64, last: u64) -> String {
        self.kill();
        let who = match self.link {
            Link::Hub(_) => "the engine hub",
            Link::Local(_) => "the engine",
        };
        format!(
            "{who} answered for run {run}, which it was never sent (the last it was sent is {last}): it does not follow the engine protocol"
        )
    }

    /// The engine's stream ended before its answer: through a hub, the hub or its
    /// connection went away (no fault of the configuration); here, the process died.
    fn ended(&mut self, what: &str) -> Reply {
        match self.link {
            Link::Hub(_) => Reply::Unrun(format!("{what}: the engine hub closed the connection")),
            Link::Local(_) => Reply::Lost(self.death(what)),
        }
    }

    /// A hub of the first version (`{"hub":1,…,"engine":[argv]}`) refuses this tuner's first
    /// line in these words: said as what it means.
    fn hub_version_said(&self, message: String) -> String {
        match self.link {
            Link::Hub(_) if message == OLD_HUB_REFUSAL => format!(
                "the engine hub speaks an older hub protocol than this rr-tui's (hub {HUB_VERSION}): \
                 install the rr_tui Python package of this rr-tui's version where the hub runs"
            ),
            _ => message,
        }
    }

    /// A message about the engine, saying where it ran when through a hub.
    fn said(&self, message: &str) -> String {
        match self.link {
            Link::Hub(_) => format!("{message} (through the engine hub)"),
            Link::Local(_) => message.to_string(),
        }
    }

    /// End the engine now (a child is killed; a hub's connection is closed, and the hub
    /// stops the engine).
    fn kill(&mut self) {
        match &mut self.link {
            Link::Local(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Link::Hub(stream) => {
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }

    /// Wait for an engine that said it ends.
    fn wait(&mut self) {
        if let Link::Local(child) = &mut self.link {
            let _ = child.wait();
        }
    }

    /// Why the engine ended: a child's exit status and last stderr lines.
    fn death(&mut self, what: &str) -> String {
        let child = match &mut self.link {
            Link::Local(child) => child,
            Link::Hub(_) => return format!("{what}: the engine hub closed the connection"),
        };
        let status = match child.wait() {
            Ok(s) if s.code().is_none() => "killed by a signal".to_string(),
            Ok(s) => format!("exit status {}", s.code().unwrap_or(-1)),
            Err(e) => format!("cannot be waited for: {}", io_reason(&e)),
        };
        // The stderr thread may still be reading the last lines.
        std::thread::sleep(Duration::from_millis(20));
        match self
            .stderr
            .lock()
            .ok()
            .and_then(|t| t.last_lines(0, STDERR_LINES))
        {
            Some(tail) => format!("{what} ({status}): {tail}"),
            None => format!("{what} ({status})"),
        }
    }
}

/// The version of the hub's first line: 2 hands the hub the engine's job (1 handed it
/// `rr-tui engine` arguments).
const HUB_VERSION: u32 = 2;
/// How a hub of version 1 refuses a first line of another version.
const OLD_HUB_REFUSAL: &str = "not a tuner of this hub's version";

/// The run `line` is for when the engine was never sent it: beyond `last`, the last command's
/// id, or a trial for run 0 (the engine's start, which no command asks to measure).
fn never_sent(line: &Line, last: u64) -> Option<u64> {
    let (run, trial) = match line {
        Line::Event(t) => (t.run, matches!(t.event, Event::Trial(_))),
        Line::Bad { run: Some(run), .. } => (*run, false),
        Line::Bad { run: None, .. } => return None,
    };
    (run > last || run == 0 && trial).then_some(run)
}

/// One line of an engine's output.
enum Line {
    Event(Tagged),
    /// Not an event of the protocol: the run it names, if any, and its start (made visible).
    Bad {
        run: Option<u64>,
        text: String,
    },
}

/// The engine's events, one a line, as they come; None when its output ends.
fn read_events(output: impl Read + Send + 'static) -> Receiver<Option<Line>> {
    let (tx, events) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        // Bounded lines: an engine (or a hub) cannot grow memory without end.
        let mut r = BufReader::new(output);
        let mut buf = Vec::new();
        while let Ok(Some(_)) = rr_engine::lines::next(&mut r, MAX_EVENT, &mut buf) {
            let text = String::from_utf8_lossy(&buf);
            let line = match Tagged::parse(&text) {
                Ok(t) => Line::Event(t),
                Err(_) => {
                    let run = serde_json::from_str::<serde_json::Value>(&text)
                        .ok()
                        .and_then(|v| v.get("run").and_then(serde_json::Value::as_u64));
                    let mut shown = rr_format::text::visible(text.trim_end()).into_owned();
                    if rr_format::text::cut_at_char(&mut shown, 200) {
                        shown.push('…');
                    }
                    Line::Bad { run, text: shown }
                }
            };
            if tx.send(Some(line)).is_err() {
                return;
            }
        }
        let _ = tx.send(None);
    });
    events
}

/// An event line longer than this is not one of ours (a trial is a few KiB).
const MAX_EVENT: u64 = 1 << 20;
/// How often a wait for a reply looks whether the sweep was stopped.
const STOP_POLL: Duration = Duration::from_millis(200);

impl Drop for EngineChild {
    fn drop(&mut self) {
        let _ = self
            .input
            .write_all(EngineCommand::Quit.to_line().unwrap_or_default().as_bytes());
        let _ = self.input.flush();
        let child = match &mut self.link {
            Link::Local(child) => child,
            // The hub ends the engine when its connection closes.
            Link::Hub(stream) => {
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return;
            }
        };
        // A clean quit releases the GPU promptly; a stuck engine is killed.
        for _ in 0..50 {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
