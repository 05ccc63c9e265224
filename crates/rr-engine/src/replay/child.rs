//! Drive a child process of the `rr-tui` binary that streams protocol events (`replay --json`,
//! `tune --events`, a job run by `rr-tui job`) and hand each event it reads to an [`EventSink`]
//! (the explorer's: a message to its loop).

use std::io::{BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::protocol::{ErrorKind, Event, Tagged};
use super::request::ReplayRequest;
use super::sink::EventSink;
use crate::lines::Line;
use crate::stderr_tail::StderrTail;

/// Stderr lines quoted when a child dies without `done`.
const STDERR_TAIL: usize = 3;

/// A running child (a replay or a sweep); killing it is cancellation.
#[derive(Clone)]
pub struct ChildRun {
    child: Arc<Mutex<Option<Child>>>,
    /// The run being served: events of other runs are dropped.
    state: Arc<Mutex<RunState>>,
    /// A serving replay child's stdin, where further requests go ([`ChildRun::replay_next`]).
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    stderr: Arc<Mutex<StderrTail>>,
}

struct RunState {
    run: u64,
    /// When its `done` came (None: still running).
    done_at: Option<Instant>,
    /// The child's output has ended: it serves nothing more.
    ended: bool,
    /// How many bytes of stderr came before this run: only what follows explains its end.
    stderr_mark: u64,
}

/// An event line longer than this is not one of ours (a sweep's largest events are KiB).
const MAX_EVENT_LINE: u64 = 16 << 20;

impl ChildRun {
    /// Start `exe replay - --json --serve` and hand it `request` as its first job: a replay
    /// child that, once that is done, takes further jobs through [`ChildRun::replay_next`] and
    /// keeps the memory on the GPU from one to the next when it can. Jobs travel as typed JSON
    /// lines ([`super::job`]), never as command-line text. Events of each run go to `sink` as
    /// with [`ChildRun::spawn`]; a death without `done` ends the run being served.
    pub fn serve_replays(
        exe: &Path,
        request: &ReplayRequest,
        sink: impl EventSink + Send + 'static,
    ) -> std::io::Result<ChildRun> {
        let args = ["replay", "-", "--json", "--serve"].map(String::from);
        let run = ChildRun::start(exe, &args, request.run_id, "replay", Input::Serve, sink)?;
        let sent = run
            .stdin
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))
            .and_then(|mut stdin| match stdin.as_mut() {
                Some(pipe) => send_job(pipe, request),
                None => Err(std::io::Error::other("the replay process takes no jobs")),
            });
        if let Err(e) = sent {
            // A child that could not be given its job is of no use: end it.
            run.cancel();
            return Err(e);
        }
        Ok(run)
    }

    /// Hand `request` to a serving child whose last run is done. Refused (nothing sent) when
    /// the child serves nothing more or is still busy: then start another.
    pub fn replay_next(&self, request: &ReplayRequest) -> std::io::Result<()> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        if state.ended || state.done_at.is_none() {
            return Err(std::io::Error::other("the replay process is not waiting"));
        }
        let mut stdin = self
            .stdin
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        let Some(pipe) = stdin.as_mut() else {
            return Err(std::io::Error::other(
                "the replay process takes no requests",
            ));
        };
        // Under the state's lock: the reader cannot end a run between the switch of run ids and
        // the job reaching the child, so a child that died meanwhile fails the write here
        // (the caller starts another) or fails the new run there, never both.
        // Taken before the child can read the job: all it writes about it comes after.
        let mark = self.stderr.lock().map_or(0, |t| t.total());
        send_job(pipe, request)?;
        state.run = request.run_id;
        state.done_at = None;
        state.stderr_mark = mark;
        Ok(())
    }

    /// How long a serving child has waited since its last run was done (None: busy or gone).
    pub fn idle_for(&self) -> Option<Duration> {
        let state = self.state.lock().ok()?;
        (!state.ended).then_some(state.done_at?.elapsed())
    }

    /// Start `exe ARGS…`, a command that prints protocol events tagged with run id `run` (one
    /// JSON object per line). Every event goes to `sink` from a reader thread, ending with
    /// exactly one `done` for the run: when the child dies without one (a crash, a setup error
    /// on stderr, a kill for cancellation), the reader synthesises an `error` quoting the end
    /// of its stderr, then `done {ok: false}`. Events of other runs never appear: each child
    /// serves one run. `what` names the process in those messages ("replay", "tune").
    ///
    /// The child leads a process group of its own, so that cancelling also ends the processes
    /// it started (a sweep's engine processes, one per GPU, which would otherwise finish their
    /// current configuration, or hang with a kernel that never ends, before noticing).
    pub fn spawn(
        exe: &Path,
        args: &[String],
        run: u64,
        what: &'static str,
        sink: impl EventSink + Send + 'static,
    ) -> std::io::Result<ChildRun> {
        ChildRun::start(exe, args, run, what, Input::None, sink)
    }

    /// Start `exe job` and hand it `job` as the line on its standard input (which then closes):
    /// a child that runs one typed job ([`crate::job`]), never a command line rebuilt from it.
    /// Its events go to `sink` as with [`ChildRun::spawn`] (`run`: the run id they carry).
    pub fn spawn_job<J: crate::job::Job>(
        exe: &Path,
        job: &J,
        run: u64,
        what: &'static str,
        sink: impl EventSink + Send + 'static,
    ) -> std::io::Result<ChildRun> {
        let line = crate::job::line(job)?;
        let args = ["job".to_string()];
        ChildRun::start(exe, &args, run, what, Input::Job(line), sink)
    }

    fn start(
        exe: &Path,
        args: &[String],
        run: u64,
        what: &'static str,
        input: Input,
        sink: impl EventSink + Send + 'static,
    ) -> std::io::Result<ChildRun> {
        let mut child = Command::new(exe)
            .args(args)
            // Only a serving process hands a job to its own copy: one in our environment is
            // no job of ours.
            .env_remove(crate::job::JOB_ENV)
            .stdin(match input {
                Input::None => Stdio::null(),
                Input::Serve | Input::Job(_) => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| std::io::Error::other("no stderr"))?;
        let (tail, err_thread) = StderrTail::drain(stderr);
        if let Input::Job(line) = &input {
            // The job is all it reads: written, then the pipe closes. A child that cannot take
            // it ends, and its end is reported as any other.
            if let Some(mut pipe) = child.stdin.take() {
                let _ = pipe.write_all(line).and_then(|()| pipe.flush());
            }
        }
        let handle = ChildRun {
            stderr: tail,
            stdin: Arc::new(Mutex::new(child.stdin.take())),
            child: Arc::new(Mutex::new(Some(child))),
            state: Arc::new(Mutex::new(RunState {
                run,
                done_at: None,
                ended: false,
                stderr_mark: 0,
            })),
        };
        // Not the whole handle: the child's stdin must close when the last handle goes.
        let (child, state, tail) = (
            handle.child.clone(),
            handle.state.clone(),
            handle.stderr.clone(),
        );
        std::thread::Builder::new()
            .name(format!("{what}-run-{run}"))
            .spawn(move || {
                // Kept open until the child has been waited for, as it always was.
                let mut out = BufReader::new(stdout);
                forward_events(&mut out, &state, &sink);
                let _ = err_thread.join();
                report_end(&child, &state, &tail, what, &sink);
            })?;
        Ok(handle)
    }

    pub fn run_id(&self) -> u64 {
        self.state.lock().map_or(0, |s| s.run)
    }

    /// Kill the child and wait, at most `limit`, until it is gone (its GPU memory free for what
    /// starts next); whether it went in time.
    pub fn cancel_and_wait(&self, limit: Duration) -> bool {
        self.cancel();
        let until = Instant::now() + limit;
        loop {
            if self.state.lock().map_or(true, |s| s.ended) {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kill the child and the processes it started.
    pub fn cancel(&self) {
        if let Ok(mut c) = self.child.lock() {
            if let Some(c) = c.as_mut() {
                // Only while the child is not yet reaped is its id sure to name our group
                // (afterwards the number may be reused): then signal the whole group.
                if matches!(c.try_wait(), Ok(None)) {
                    let pid = rustix::process::Pid::from_child(c);
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let _ = c.kill();
            }
        }
    }
}

/// What a child reads on its standard input.
enum Input {
    /// Nothing.
    None,
    /// Jobs, one after the other ([`ChildRun::replay_next`]).
    Serve,
    /// This one job line.
    Job(Vec<u8>),
}

/// Hand the events of the run being served, read from a child's stdout (`out`) until it ends,
/// to `sink` (noting when its `done` comes); lines that are not events are said as `output`
/// phases, and events of other runs are dropped.
fn forward_events(
    out: &mut BufReader<ChildStdout>,
    state: &Mutex<RunState>,
    sink: &impl EventSink,
) {
    let mut buf = Vec::new();
    // Never stops before the end of stdout: a child whose output is not read blocks.
    while let Ok(Some(shape)) = crate::lines::next(out, MAX_EVENT_LINE, &mut buf) {
        let line = String::from_utf8_lossy(&buf);
        if line.trim().is_empty() {
            continue;
        }
        // Decided under the lock, handed over after it: a sink may call back.
        let handed = {
            let Ok(mut state) = state.lock() else { break };
            if state.done_at.is_some() {
                continue; // between runs nothing is expected
            }
            let run = state.run;
            match (shape, Tagged::parse(&line)) {
                (Line::Whole, Ok(t)) if t.run == run => {
                    if matches!(t.event, Event::Done { .. }) {
                        state.done_at = Some(Instant::now());
                    }
                    Some(t)
                }
                (Line::Whole, Ok(_)) => None,
                (Line::Whole, Err(msg)) => Some(output_note(run, msg)),
                (Line::Cut, _) => Some(output_note(
                    run,
                    format!("a line longer than {MAX_EVENT_LINE} bytes, dropped"),
                )),
            }
        };
        if let Some(t) = handed {
            sink.emit(t.run, t.event);
        }
    }
}

/// Once a child's output has ended: mark it ended and, when the run being served got no `done`,
/// end that run with an `error` saying how the child ended (with what its stderr said since the
/// run began), then `done {ok: false}`.
fn report_end(
    child: &Mutex<Option<Child>>,
    state: &Mutex<RunState>,
    tail: &Mutex<StderrTail>,
    what: &str,
    sink: &impl EventSink,
) {
    let status = child
        .lock()
        .ok()
        .and_then(|mut c| c.as_mut().and_then(|c| c.wait().ok()));
    let (run, mark) = {
        let Ok(mut state) = state.lock() else { return };
        state.ended = true;
        if state.done_at.is_some() {
            return;
        }
        (state.run, state.stderr_mark)
    };
    let why = match status {
        Some(s) if s.code().is_none() => {
            format!("the {what} process was killed (cancelled or crashed)")
        }
        Some(s) => format!(
            "the {what} process exited with status {} without finishing",
            s.code().unwrap_or(-1)
        ),
        None => format!("the {what} process could not be waited for"),
    };
    let said = tail
        .lock()
        .ok()
        .and_then(|t| t.last_lines(mark, STDERR_TAIL));
    sink.emit(
        run,
        Event::Error {
            kind: ErrorKind::Setup,
            message: match said {
                Some(tail) => format!("{why}: {tail}"),
                None => why,
            },
        },
    );
    sink.emit(run, Event::Done { ok: false });
}

/// Write `request` to a replay child's stdin as one job line.
fn send_job(pipe: &mut ChildStdin, request: &ReplayRequest) -> std::io::Result<()> {
    pipe.write_all(&crate::job::line(request)?)?;
    pipe.flush()
}

/// A line of a child's stdout that is not an event, said as an `output` phase of `run`.
fn output_note(run: u64, detail: String) -> Tagged {
    Tagged {
        run,
        event: Event::Phase {
            name: "output".into(),
            detail,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Run `sh -c SCRIPT` as a child of run `run`; the events it produced, up to `done`.
    fn events_of(script: &str, run: u64) -> Vec<Event> {
        let (tx, rx) = crossbeam_channel::unbounded::<Tagged>();
        let args = vec!["-c".to_string(), script.to_string()];
        ChildRun::spawn(Path::new("/bin/sh"), &args, run, "tune", tx).unwrap();
        let mut out = Vec::new();
        while let Ok(t) = rx.recv_timeout(Duration::from_secs(20)) {
            assert_eq!(t.run, run);
            let e = t.event;
            let done = matches!(e, Event::Done { .. });
            out.push(e);
            if done {
                break;
            }
        }
        out
    }

    /// A job child is `EXE job`, its job the one line on its input, which then closes: no
    /// command line is made of the job.
    #[test]
    fn a_job_is_the_one_line_on_the_childs_input() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("rr-tui");
        std::fs::write(
            &exe,
            r#"#!/bin/sh
[ "$1" = job ] && [ "$#" = 1 ] || exit 3
read -r line
read -r more && exit 4
case "$line" in
  '{"protocol":1,"replay":{"descriptor":"x y.json",'*'"run_id":3,'*) echo '{"run":3,"event":"done","ok":true}';;
  *) echo '{"run":3,"event":"done","ok":false}';;
esac
"#,
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut job = ReplayRequest::new("x y.json".into());
        job.run_id = 3;
        let (tx, rx) = crossbeam_channel::unbounded::<Tagged>();
        ChildRun::spawn_job(&exe, &job, 3, "tune", tx).unwrap();
        let got = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!(
            got,
            Tagged {
                run: 3,
                event: Event::Done { ok: true }
            }
        );
    }

    #[test]
    fn events_of_the_run_pass_and_other_runs_are_dropped() {
        let script = r#"
            echo '{"run":5,"event":"phase","name":"warning","detail":"w"}'
            echo '{"run":4,"event":"done","ok":true}'
            echo
            echo 'not json'
            echo '{"run":5,"event":"done","ok":true}'
        "#;
        let events = events_of(script, 5);
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(matches!(&events[0], Event::Phase { name, .. } if name == "warning"));
        assert!(matches!(&events[1], Event::Phase { name, .. } if name == "output"));
        assert_eq!(events[2], Event::Done { ok: true });
    }

    /// A setup failure is one line on stderr and a non-zero exit, with no `done`: the reader
    /// reports it with the end of stderr.
    #[test]
    fn a_child_that_dies_without_done_reports_its_stderr_tail() {
        let script = r#"
            echo '{"run":9,"event":"sweep","configs":6,"planned":6,"devices":[0],"strategy":"exhaustive"}'
            echo 'first line' >&2
            echo 'rr-tui: no CUDA driver found (libcuda.so.1 could not be loaded)' >&2
            exit 1
        "#;
        let events = events_of(script, 9);
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(matches!(events[0], Event::Sweep { configs: 6, .. }));
        let Event::Error { kind, message } = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(*kind, ErrorKind::Setup);
        assert_eq!(
            message,
            "the tune process exited with status 1 without finishing: first line | rr-tui: no CUDA driver found (libcuda.so.1 could not be loaded)"
        );
        assert_eq!(events[2], Event::Done { ok: false });
    }

    /// Cancelling kills the child and what it started (its process group): the grandchild
    /// holding stdout open would otherwise keep the reader waiting.
    #[test]
    fn cancel_kills_the_child_and_its_children() {
        let (tx, rx) = crossbeam_channel::unbounded::<Tagged>();
        let args = vec![
            "-c".to_string(),
            "echo '{\"run\":2,\"event\":\"phase\",\"name\":\"x\",\"detail\":\"\"}'; sleep 600 & sleep 600"
                .to_string(),
        ];
        let child = ChildRun::spawn(Path::new("/bin/sh"), &args, 2, "tune", tx).unwrap();
        let next = || {
            rx.recv_timeout(Duration::from_secs(20))
                .ok()
                .map(|t| t.event)
        };
        assert!(matches!(next(), Some(Event::Phase { .. })));
        child.cancel();
        let rest: Vec<Event> = std::iter::from_fn(next).take(2).collect();
        assert!(
            matches!(&rest[0], Event::Error { message, .. } if message.contains("the tune process was killed")),
            "{rest:?}"
        );
        assert_eq!(rest[1], Event::Done { ok: false });
    }

    /// A serving child takes the next request once its run is done, on stdin; stale events of
    /// the last run are dropped; its death without `done` ends the run being served, and after
    /// that it takes nothing.
    #[test]
    fn a_serving_child_takes_runs_one_after_another() {
        let (tx, rx) = crossbeam_channel::unbounded::<Tagged>();
        let script = r#"
            echo '{"run":1,"event":"done","ok":true}'
            read line
            case "$line" in
              '{"protocol":1,"replay":{"descriptor":"x.json",'*'"run_id":2,'*) ;;
              *) echo "unexpected job: $line" >&2; exit 9 ;;
            esac
            echo '{"run":1,"event":"phase","name":"stale","detail":""}'
            echo '{"run":2,"event":"phase","name":"switched","detail":"kept"}'
            while [ ! -e "$0" ]; do sleep 0.01; done
            echo '{"run":2,"event":"done","ok":true}'
            read line
            echo 'gone' >&2
            exit 3
        "#;
        // Run 2 finishes once this file exists.
        let go = std::env::temp_dir().join(format!("rr-tui-serve-test-{}", std::process::id()));
        let _ = std::fs::remove_file(&go);
        let args = vec![
            "-c".to_string(),
            script.to_string(),
            go.display().to_string(),
        ];
        let child =
            ChildRun::start(Path::new("/bin/sh"), &args, 1, "replay", Input::Serve, tx).unwrap();
        let next = || rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!(next().event, Event::Done { ok: true });
        let mut request = ReplayRequest::new("x.json".into());
        request.run_id = 2;
        // The reader marks the run done right after handing it over: wait for that.
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.idle_for().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        child.replay_next(&request).unwrap();
        assert_eq!(child.idle_for(), None, "busy with run 2");
        request.run_id = 3;
        assert!(child.replay_next(&request).is_err(), "refused while busy");
        let t = next();
        assert_eq!(t.run, 2);
        assert!(matches!(t.event, Event::Phase { name, .. } if name == "switched"));
        std::fs::write(&go, b"").unwrap();
        assert_eq!(next().event, Event::Done { ok: true });
        let _ = std::fs::remove_file(&go);
        while child.idle_for().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        child.replay_next(&request).unwrap();
        let t = next();
        assert_eq!(t.run, 3);
        assert!(
            matches!(&t.event, Event::Error { message, .. } if message == "the replay process exited with status 3 without finishing: gone"),
            "{t:?}"
        );
        assert_eq!(next().event, Event::Done { ok: false });
        request.run_id = 4;
        assert!(
            child.replay_next(&request).is_err(),
            "an ended child takes nothing"
        );
        assert_eq!(child.idle_for(), None);
    }
}
