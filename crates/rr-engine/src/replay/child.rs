//! Drive a replay in a child process of the `rr-tui` binary and stream its events.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use super::protocol::{ErrorKind, Event, Tagged};
use super::request::ReplayRequest;

/// A running child replay; killing it is cancellation.
#[derive(Clone)]
pub struct ChildReplay {
    child: Arc<Mutex<Option<Child>>>,
    run: u64,
}

impl ChildReplay {
    /// Start `exe replay … --json --run-id N`; every event goes to `sink` from a reader thread,
    /// ending with exactly one `done` for the run (synthesised, after an `error`, when the child
    /// dies early). Events of other runs never appear: each child serves one run.
    pub fn spawn(
        exe: &Path,
        request: &ReplayRequest,
        mut sink: impl FnMut(Tagged) + Send + 'static,
    ) -> std::io::Result<ChildReplay> {
        let run = request.run_id;
        let mut child = Command::new(exe)
            .args(request.to_args())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let mut stderr = child
            .stderr
            .take()
            .ok_or_else(|| std::io::Error::other("no stderr"))?;
        let handle = ChildReplay {
            child: Arc::new(Mutex::new(Some(child))),
            run,
        };
        let waiter = handle.clone();
        std::thread::Builder::new()
            .name(format!("replay-run-{run}"))
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
                            "the replay process was killed (cancelled or crashed)".to_string()
                        }
                        Some(s) => format!(
                            "the replay process exited with status {} without finishing",
                            s.code().unwrap_or(-1)
                        ),
                        None => "the replay process could not be waited for".to_string(),
                    };
                    let tail: Vec<&str> = stderr_text.lines().rev().take(3).collect();
                    let tail: Vec<&str> = tail.into_iter().rev().collect();
                    sink(tag(Event::Error {
                        kind: ErrorKind::Setup,
                        message: if tail.is_empty() {
                            why
                        } else {
                            format!("{why}: {}", tail.join(" | "))
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

    pub fn cancel(&self) {
        if let Ok(mut c) = self.child.lock() {
            if let Some(c) = c.as_mut() {
                let _ = c.kill();
            }
        }
    }
}
