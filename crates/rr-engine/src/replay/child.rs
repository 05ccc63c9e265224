//! Drive a child process of the `rr-tui` binary that streams protocol events (`replay --json`,
//! `tune --events`) and hand them to a sink.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use super::protocol::{ErrorKind, Event, Tagged};
use super::request::ReplayRequest;

/// Stderr lines quoted when a child dies without `done`.
const STDERR_TAIL: usize = 3;

/// A running child (a replay or a sweep); killing it is cancellation.
#[derive(Clone)]
pub struct ChildRun {
    child: Arc<Mutex<Option<Child>>>,
    run: u64,
}

impl ChildRun {
    /// Start `exe replay … --json --run-id N` (see [`ChildRun::spawn`]).
    pub fn replay(
        exe: &Path,
        request: &ReplayRequest,
        sink: impl FnMut(Tagged) + Send + 'static,
    ) -> std::io::Result<ChildRun> {
        ChildRun::spawn(exe, &request.to_args(), request.run_id, "replay", sink)
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
        mut sink: impl FnMut(Tagged) + Send + 'static,
    ) -> std::io::Result<ChildRun> {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let mut stderr = child
            .stderr
            .take()
            .ok_or_else(|| std::io::Error::other("no stderr"))?;
        let handle = ChildRun {
            child: Arc::new(Mutex::new(Some(child))),
            run,
        };
        let waiter = handle.clone();
        std::thread::Builder::new()
            .name(format!("{what}-run-{run}"))
            .spawn(move || {
                let err_thread = std::thread::spawn(move || {
                    // Bounded: a child that floods stderr cannot grow our memory.
                    let mut s = String::new();
                    let _ = (&mut stderr).take(1 << 20).read_to_string(&mut s);
                    let _ = std::io::copy(&mut stderr, &mut std::io::sink());
                    s
                });
                let mut done = false;
                let tag = |event| Tagged { run, event };
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if line.trim().is_empty() {
                        continue;
                    }
                    match Tagged::parse(&line) {
                        Ok(t) if t.run == run => {
                            done |= matches!(t.event, Event::Done { .. });
                            sink(t);
                        }
                        Ok(_) => {}
                        Err(msg) => sink(tag(Event::Phase {
                            name: "output".into(),
                            detail: msg,
                        })),
                    }
                }
                let stderr_text = err_thread.join().unwrap_or_default();
                let status = waiter
                    .child
                    .lock()
                    .ok()
                    .and_then(|mut c| c.as_mut().and_then(|c| c.wait().ok()));
                if !done {
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
                    sink(tag(Event::Error {
                        kind: ErrorKind::Setup,
                        message: match stderr_tail(&stderr_text) {
                            Some(tail) => format!("{why}: {tail}"),
                            None => why,
                        },
                    }));
                    sink(tag(Event::Done { ok: false }));
                }
            })?;
        Ok(handle)
    }

    pub fn run_id(&self) -> u64 {
        self.run
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

/// The last lines of a child's stderr, joined, or None when it wrote nothing.
fn stderr_tail(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &lines[lines.len().saturating_sub(STDERR_TAIL)..];
    (!tail.is_empty()).then(|| tail.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Run `sh -c SCRIPT` as a child of run `run`; the events it produced, up to `done`.
    fn events_of(script: &str, run: u64) -> Vec<Event> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let args = vec!["-c".to_string(), script.to_string()];
        ChildRun::spawn(Path::new("/bin/sh"), &args, run, "tune", move |t| {
            assert_eq!(t.run, run);
            let _ = tx.send(t.event);
        })
        .unwrap();
        let mut out = Vec::new();
        while let Ok(e) = rx.recv_timeout(Duration::from_secs(20)) {
            let done = matches!(e, Event::Done { .. });
            out.push(e);
            if done {
                break;
            }
        }
        out
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
        let (tx, rx) = crossbeam_channel::unbounded();
        let args = vec![
            "-c".to_string(),
            "echo '{\"run\":2,\"event\":\"phase\",\"name\":\"x\",\"detail\":\"\"}'; sleep 600 & sleep 600"
                .to_string(),
        ];
        let child = ChildRun::spawn(Path::new("/bin/sh"), &args, 2, "tune", move |t| {
            let _ = tx.send(t.event);
        })
        .unwrap();
        assert!(matches!(
            rx.recv_timeout(Duration::from_secs(20)),
            Ok(Event::Phase { .. })
        ));
        child.cancel();
        let rest: Vec<Event> = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(20)).ok())
            .take(2)
            .collect();
        assert!(
            matches!(&rest[0], Event::Error { message, .. } if message.contains("the tune process was killed")),
            "{rest:?}"
        );
        assert_eq!(rest[1], Event::Done { ok: false });
    }
}
