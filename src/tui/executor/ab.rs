//! The leaderboard's process: `rr-tui job` on an A/B job (its leaderboard in JSON), in a process
//! group of its own (its workers hold the GPU, and end with it), read to its end on a thread.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

use rr_engine::replay::ab_job::AbJob;
use rr_engine::replay::leaderboard::Leaderboard;
use rr_format::text::io_reason;

use crate::tui::app::leaderboard::board_of;

/// The leaderboard document is at most this long (`ab`'s own output; more is not ours).
const MAX_BOARD_BYTES: u64 = 64 << 20;

/// The running `rr-tui ab`'s process group. One leaderboard runs at a time (the GPU is
/// shared), so one slot suffices; `c` and leaving the explorer end it through here, so that no
/// GPU work outlives what asked for it.
#[derive(Default, Clone)]
pub(super) struct AbGroup(Arc<Group>);

#[derive(Default)]
struct Group {
    /// Its process group (0: none runs).
    pid: AtomicI32,
    /// Set when [`AbGroup::end`] ended it: its empty output is a cancellation, not an error.
    ended: AtomicBool,
}

impl AbGroup {
    /// Run `job` in `rr-tui job`, handed over on its input, and read the leaderboard, or say
    /// why there is none.
    pub(super) fn run(&self, job: &AbJob) -> Result<Box<Leaderboard>, String> {
        let exe = crate::this_binary().map_err(|e| format!("rr-tui itself: {}", io_reason(&e)))?;
        self.run_in(rr_engine::job::command(&exe), job)
    }

    /// Run `job` in `cmd` (`rr-tui job`, or a test's stand-in that cannot start).
    fn run_in(&self, cmd: Command, job: &AbJob) -> Result<Box<Leaderboard>, String> {
        let line =
            rr_engine::job::line(job).map_err(|e| format!("rr-tui ab: {}", io_reason(&e)))?;
        let out = self
            .run_grouped(cmd, &line)
            .map_err(|e| format!("rr-tui ab: {}", io_reason(&e)))?;
        if self.0.ended.swap(false, Ordering::SeqCst) {
            return Err("cancelled".into());
        }
        board_of(&out)
    }

    /// Run `cmd` in a process group of its own, registered here, with `input` (its job's line)
    /// on its standard input, and return its stdout (at most [`MAX_BOARD_BYTES`]).
    fn run_grouped(&self, mut cmd: Command, input: &[u8]) -> std::io::Result<Vec<u8>> {
        use std::io::{Read, Write};
        use std::os::unix::process::CommandExt;
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        self.0.pid.store(child.id() as i32, Ordering::SeqCst);
        // The job is all it reads: written, then the pipe closes (a child that ends before
        // taking it says so in what it printed).
        if let Some(mut pipe) = child.stdin.take() {
            let _ = pipe.write_all(input);
        }
        let mut out = Vec::new();
        let read = child
            .stdout
            .take()
            .map(|s| s.take(MAX_BOARD_BYTES).read_to_end(&mut out));
        let _ = child.wait();
        self.0.pid.store(0, Ordering::SeqCst);
        read.transpose()?;
        Ok(out)
    }

    /// End the running `rr-tui ab` and everything it started, if one runs.
    pub(super) fn end(&self) {
        let group = self.0.pid.swap(0, Ordering::SeqCst);
        if let Some(pid) = rustix::process::Pid::from_raw(group) {
            self.0.ended.store(true, Ordering::SeqCst);
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The running `ab` and what it started (here a shell and its `sleep`) end together, at
    /// once, and what it said is taken as cancelled; nothing is left registered.
    #[test]
    fn ending_the_running_ab_ends_its_process_group() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & wait; echo late"]);
        let started = std::time::Instant::now();
        let group = AbGroup::default();
        let running = group.clone();
        let run = std::thread::spawn(move || running.run_grouped(cmd, b""));
        while group.0.pid.load(Ordering::SeqCst) == 0 {
            assert!(started.elapsed().as_secs() < 10, "never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        group.end();
        let out = run.join().unwrap().unwrap();
        assert!(
            started.elapsed().as_secs() < 10,
            "the group outlived its end"
        );
        assert!(out.is_empty(), "{out:?}");
        assert!(group.0.ended.swap(false, Ordering::SeqCst));
        assert_eq!(group.0.pid.load(Ordering::SeqCst), 0);
    }

    /// A job process that cannot start is said in plain words on the leaderboard's line, not
    /// with Rust's "(os error 2)".
    #[test]
    fn a_job_that_cannot_start_says_why_plainly() {
        let job = AbJob::new("rec".into(), ".".into(), vec![]);
        let cmd = Command::new("/nonexistent/rr-tui");
        let said = AbGroup::default()
            .run_in(cmd, &job)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(said, "rr-tui ab: no such file or directory");
    }
}
