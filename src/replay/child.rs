//! Drive a replay in a child process of the same binary and stream its events.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use super::protocol::Event;
use crate::cli::ReplayArgs;

/// Command-line arguments that reproduce `a` (always with `--json`).
pub fn to_args(a: &ReplayArgs) -> Vec<String> {
    let mut v = vec![
        "replay".to_string(),
        a.descriptor.display().to_string(),
        "--json".into(),
    ];
    let mut opt = |flag: &str, val: Option<String>| {
        if let Some(val) = val {
            v.push(flag.into());
            v.push(val);
        }
    };
    opt("--repetitions", Some(a.repetitions.to_string()));
    opt("--warmup", (a.warmup > 0).then(|| a.warmup.to_string()));
    opt("--tolerance", a.tolerance.clone());
    opt(
        "--output-dir",
        a.output_dir.as_ref().map(|p| p.display().to_string()),
    );
    opt("--num-teams", a.num_teams.map(|x| x.to_string()));
    opt("--num-threads", a.num_threads.map(|x| x.to_string()));
    opt("--grid", a.grid.clone());
    opt("--block", a.block.clone());
    opt("--shared-mem", a.shared_mem.map(|x| x.to_string()));
    opt("--device-id", a.device_id.map(|x| x.to_string()));
    for (flag, on) in [
        ("--verify", a.verify),
        ("--save-output", a.save_output),
        ("--ignore-limits", a.ignore_limits),
    ] {
        if on {
            v.push(flag.into());
        }
    }
    v
}

/// A running child replay; killing it is cancellation.
#[derive(Clone)]
pub struct ChildReplay {
    child: Arc<Mutex<Option<Child>>>,
}

impl ChildReplay {
    /// Start `exe replay … --json`; every event goes to `sink` from a reader thread, ending
    /// with exactly one `Done` (synthesised, after an `Error`, when the child dies early).
    pub fn spawn(
        exe: &Path,
        args: &ReplayArgs,
        mut sink: impl FnMut(Event) + Send + 'static,
    ) -> std::io::Result<ChildReplay> {
        let mut child = Command::new(exe)
            .args(to_args(args))
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
        };
        let waiter = handle.clone();
        std::thread::Builder::new()
            .name("replay-child".into())
            .spawn(move || {
                let err_thread = std::thread::spawn(move || {
                    let mut s = String::new();
                    let _ = stderr.read_to_string(&mut s);
                    s
                });
                let mut done = false;
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if line.trim().is_empty() {
                        continue;
                    }
                    match Event::parse(&line) {
                        Ok(e) => {
                            done |= matches!(e, Event::Done { .. });
                            sink(e);
                        }
                        Err(msg) => sink(Event::Phase {
                            name: "output".into(),
                            detail: msg,
                        }),
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
                    let tail: String = stderr_text
                        .lines()
                        .rev()
                        .take(3)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join(" | ");
                    sink(Event::Error {
                        message: if tail.is_empty() {
                            why
                        } else {
                            format!("{why}: {tail}")
                        },
                    });
                    sink(Event::Done { ok: false });
                }
            })?;
        Ok(handle)
    }

    pub fn cancel(&self) {
        if let Ok(mut c) = self.child.lock() {
            if let Some(c) = c.as_mut() {
                let _ = c.kill();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip_through_clap() {
        use clap::Parser;
        let a = ReplayArgs {
            descriptor: "x.json".into(),
            verify: true,
            repetitions: 7,
            grid: Some("2,2,1".into()),
            tolerance: Some("f32:ulp=2".into()),
            ..Default::default()
        };
        let mut argv = vec!["rr-tui".to_string()];
        argv.extend(to_args(&a));
        let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
        match cli.command {
            Some(crate::cli::Command::Replay(b)) => {
                assert!(b.json && b.verify);
                assert_eq!(
                    (b.repetitions, b.grid.as_deref(), b.tolerance.as_deref()),
                    (7, Some("2,2,1"), Some("f32:ulp=2"))
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
