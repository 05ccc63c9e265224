//! Running a tool so that the command that runs it always ends, and ends what it started:
//! ncu for `profile` (the profiling run, `--import`), python3 and tmux for `doctor`. Each runs in
//! a process group of its own, bounded by a time limit, both output streams drained as they
//! come (a full pipe would stop the tool; what is kept is bounded, the rest read and dropped), a
//! process the tool leaves holding its output not waited for, and Ctrl-C, SIGTERM or SIGHUP
//! passed on to the whole group (ncu and the replay under it), which is waited for before the
//! command ends. When ncu prints nothing for a while, `profile` says what its processes are
//! doing (another Nsight Compute holding the profiling lock, a replay not started yet, …).

use rr_format::text::io_reason;
use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver};
use rr_format::text::visible;

use crate::error::{Error, Result};

/// ncu silent this long: say what its processes do (again every time as long). The tests
/// shorten it (`RR_TUI_NCU_SILENCE_S`).
fn silence() -> Duration {
    let secs = std::env::var("RR_TUI_NCU_SILENCE_S")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(20);
    Duration::from_secs(secs)
}
/// After the tool itself ended, how long its output may still take to close.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// After SIGTERM, how long the group has to end before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(5);
/// A line the tool prints is read up to this many bytes; stderr is kept up to this many.
const MAX_LINE: u64 = 64 << 10;
const MAX_STDERR: u64 = 1 << 20;

/// What a bounded step gave.
#[derive(Default)]
pub struct Finished {
    /// Its stdout, up to the caller's bound (`keep`), when asked to keep it.
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub status: Option<i32>,
    /// Stopped at the time limit.
    pub timed_out: bool,
}

/// The signal the command was asked to stop by (0: none), set by the handlers [`watch_signals`]
/// registers.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// Stop on Ctrl-C, SIGTERM and SIGHUP by ending the tool's group first (registered once). From
/// then on these signals no longer end the process by themselves: a command that waits on
/// anything else asks [`signalled`] as it waits.
pub fn watch_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            let flag = Arc::new(AtomicBool::new(false));
            if signal_hook::flag::register(sig, flag.clone()).is_ok() {
                std::thread::spawn(move || loop {
                    if flag.swap(false, Ordering::AcqRel) {
                        SIGNALLED.store(sig, Ordering::Release);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                });
            }
        }
    });
}

/// The signal received since [`watch_signals`], if any.
pub fn signalled() -> Option<i32> {
    Some(SIGNALLED.load(Ordering::Acquire)).filter(|&sig| sig != 0)
}

/// Run `cmd` (an ncu step, a tool `doctor` asks) bounded by `limit`. Each stdout line goes to
/// `on_line`; with `keep` > 0 stdout is also kept, up to `keep + 1` bytes (the caller refuses
/// more). `quiet` hears what the tool's processes do when it has printed nothing for a while.
pub fn run(
    mut cmd: Command,
    limit: Duration,
    keep: usize,
    on_line: &dyn Fn(&str),
    quiet: &dyn Fn(&str),
) -> Result<Finished> {
    use std::os::unix::process::CommandExt;
    let program = Path::new(cmd.get_program())
        .file_name()
        .map(|name| visible(&name.to_string_lossy()).into_owned())
        .unwrap_or_default();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| Error::Failed(format!("cannot start {program}: {}", io_reason(&e))))?;
    let group = child.id() as i32;
    let lines = read_stdout(&mut child, keep);
    let stderr = read_stderr(&mut child);
    let started = Instant::now();
    let mut heard = Instant::now();
    let mut said = Instant::now();
    let mut out = Finished::default();
    let mut exited: Option<Instant> = None;
    let mut abandoned = false;
    let silence = silence();
    loop {
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(Chunk::Line(l)) => {
                heard = Instant::now();
                on_line(&l);
            }
            Ok(Chunk::Kept(bytes)) => out.stdout = bytes,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) if exited.is_some() => break,
            Err(_) => {}
        }
        if exited.is_none() {
            if let Ok(Some(status)) = child.try_wait() {
                out.status = status.code();
                exited = Some(Instant::now());
            }
        }
        if exited.is_some_and(|t| t.elapsed() > DRAIN_GRACE) {
            // The tool ended but something it started still holds its output: not waited for
            // (nor its stderr, which that holds as well).
            end_group(group, &mut child);
            abandoned = true;
            break;
        }
        if let Some(sig) = signalled() {
            end_group(group, &mut child);
            let what = match program.as_str() {
                "ncu" => "ncu and the replay under it were ended".to_string(),
                _ => format!("{program} and what it started were ended"),
            };
            return Err(Error::Failed(format!("stopped by signal {sig}: {what}")));
        }
        if exited.is_none() && started.elapsed() > limit {
            end_group(group, &mut child);
            out.timed_out = true;
            break;
        }
        if exited.is_none() && heard.elapsed() >= silence && said.elapsed() >= silence {
            said = Instant::now();
            quiet(&format!(
                "{program} has printed nothing for {:.0} s: {}",
                heard.elapsed().as_secs_f64(),
                doing(group)
            ));
        }
    }
    // Whatever arrived before the stream closed (or was abandoned).
    for c in lines.try_iter() {
        match c {
            Chunk::Line(l) => on_line(&l),
            Chunk::Kept(bytes) => out.stdout = bytes,
        }
    }
    let stderr_grace = if abandoned {
        Duration::ZERO
    } else {
        DRAIN_GRACE
    };
    out.stderr = stderr.recv_timeout(stderr_grace).unwrap_or_default();
    Ok(out)
}

enum Chunk {
    Line(String),
    /// The whole stdout kept (sent once, at its end).
    Kept(Vec<u8>),
}

/// A thread reading stdout: each line (bounded, decoded leniently) and, with `keep`, the bytes.
/// The channel is bounded: a tool that prints without end waits for the lines to be taken,
/// and nothing here grows with what it prints.
fn read_stdout(child: &mut Child, keep: usize) -> Receiver<Chunk> {
    let (tx, rx) = bounded(256);
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut out = BufReader::new(out);
            let mut buf = Vec::new();
            while let Ok(Some(_)) = crate::lines::next(&mut out, MAX_LINE, &mut buf) {
                if keep > 0 && kept.len() <= keep {
                    kept.extend_from_slice(&buf);
                    kept.push(b'\n');
                }
                let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                if tx.send(Chunk::Line(line)).is_err() {
                    break;
                }
            }
            if keep > 0 {
                let _ = tx.send(Chunk::Kept(kept));
            }
        });
    }
    rx
}

/// A thread reading stderr: kept up to [`MAX_STDERR`], the rest read and dropped.
fn read_stderr(child: &mut Child) -> Receiver<String> {
    let (tx, rx) = unbounded();
    if let Some(mut err) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.by_ref().take(MAX_STDERR).read_to_string(&mut text);
            let _ = std::io::copy(&mut err, &mut std::io::sink());
            let _ = tx.send(text);
        });
    }
    rx
}

/// End the tool's process group: SIGTERM, then SIGKILL to what is left after a grace period; the
/// direct child is reaped.
fn end_group(group: i32, child: &mut Child) {
    let Some(pid) = rustix::process::Pid::from_raw(group) else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
    let deadline = Instant::now() + TERM_GRACE;
    while Instant::now() < deadline && !members(group).is_empty() {
        let _ = child.try_wait();
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    let _ = child.wait();
}

/// The processes of group `group`: (pid, name, state, what it waits in).
fn members(group: i32) -> Vec<(i32, String, char, String)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let (name, state, pgrp) = stat(pid)?;
            (pgrp == group && state != 'Z').then(|| {
                let wchan =
                    std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
                (pid, name, state, wchan)
            })
        })
        .collect()
}

/// `(name, state, process group)` of `pid`, from /proc/PID/stat.
fn stat(pid: i32) -> Option<(String, char, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (name) state ppid pgrp …": the name may hold spaces and parentheses.
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let name = s.get(open + 1..close)?.to_string();
    let mut rest = s.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let _ppid = rest.next()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some((name, state, pgrp))
}

/// One line on what ncu's group does, and on other Nsight Compute processes (ncu profiles one
/// process at a time: another holds its lock until it ends).
fn doing(group: i32) -> String {
    let mine = members(group);
    let state = |c: char| match c {
        'R' => "running",
        'S' => "sleeping",
        'D' => "waiting on the disk or the driver",
        'T' | 't' => "stopped",
        _ => "in another state",
    };
    let mut parts: Vec<String> = mine
        .iter()
        .take(6)
        .map(|(pid, name, st, wchan)| {
            let wait = if wchan.is_empty() || wchan == "0" {
                String::new()
            } else {
                format!(" in {}", visible(wchan))
            };
            format!("{} (pid {pid}) {}{wait}", visible(name), state(*st))
        })
        .collect();
    if !mine.iter().any(|m| m.1.starts_with("rr-tui")) {
        parts.push("the replay under it has not started".into());
    }
    let others: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let (name, state, pgrp) = stat(pid)?;
            (pgrp != group && state != 'Z' && name.starts_with("ncu")).then_some(pid)
        })
        .take(4)
        .map(|pid| pid.to_string())
        .collect();
    if !others.is_empty() {
        parts.push(format!(
            "another Nsight Compute is running (pid {}): ncu waits for it to end",
            others.join(", ")
        ));
    }
    parts.join("; ")
}
