//! The executor: the one owner of every child process the explorer starts — the replay child
//! (kept after its replay for the next one), the sweep's, the profile's and the leaderboard's
//! `rr-tui job` — one of each at a time, a new one replacing (and so cancelling) the one
//! before. It carries out the `Cmd`s that start and cancel them, hands their events to the
//! message loop (`ToLoop`), reports what only it knows to the explorer's ledger of GPU work
//! (`app::gpu_work::GpuJobs`, which answers "is the GPU busy" for every screen: whether the
//! last replay's process is kept), and ends them all when the explorer ends, also when it
//! unwinds (`Drop`).

mod ab;

use crossbeam_channel::Sender;
use std::time::Duration;

use super::app::{App, Cmd, Msg};
use crate::error::{Error, Result};
use rr_engine::replay::child::ChildRun;
use rr_engine::replay::{Event, EventSink, ReplayRequest, Tagged};
use rr_format::text::io_reason;

/// How long the last replay's process (and the instance's memory on the GPU) is kept for the
/// next replay.
const REPLAY_KEPT_FOR: Duration = Duration::from_secs(300);
/// The longest the explorer waits for a killed replay process to be gone before a sweep or a
/// profile starts (the driver frees its memory as it exits; typically well under a second).
const FREEING_LIMIT: Duration = Duration::from_secs(10);

#[derive(Default)]
pub struct Executor {
    /// The replay running, or its process kept for the next replay.
    replay: Option<ChildRun>,
    tune: Option<ChildRun>,
    profile: Option<ChildRun>,
    /// The leaderboard's `rr-tui ab` (read on a thread of its own).
    ab: ab::AbGroup,
}

impl Executor {
    /// Carry out `cmd` if it starts or ends a child process; any other is handed back.
    pub fn carry_out(&mut self, app: &mut App, tx: &Sender<Msg>, cmd: Cmd) -> Result<Option<Cmd>> {
        match cmd {
            Cmd::StartReplay { request, .. } => self.start_replay(app, tx, request)?,
            Cmd::CancelReplay => end(&mut self.replay),
            Cmd::StartTune { run, job, .. } => {
                // Its engines need the GPU memory the last replay still holds.
                self.free_the_kept_replay();
                let started =
                    ChildRun::spawn_job(&executable()?, &*job, run, "tune", sink(tx, Msg::Tune));
                self.tune = started_or_said(app, started, run, "tune", Msg::Tune);
            }
            Cmd::CancelTune => end(&mut self.tune),
            Cmd::StartProfile { job, .. } => {
                self.free_the_kept_replay();
                let run = job.run_id;
                let sink = sink(tx, Msg::Profile);
                let started = ChildRun::spawn_job(&executable()?, &*job, run, "profile", sink);
                self.profile = started_or_said(app, started, run, "profile", Msg::Profile);
            }
            Cmd::CancelProfile => end(&mut self.profile),
            Cmd::StartLeaderboard { job, record, run } => {
                self.start_leaderboard(app, tx, job, (record, run))
            }
            Cmd::CancelLeaderboard => self.ab.end(),
            other => return Ok(Some(other)),
        }
        Ok(None)
    }

    /// Whether the last replay's process waits for the next replay (holding its instance's
    /// memory on the GPU).
    pub fn replay_kept(&self) -> bool {
        self.replay.as_ref().is_some_and(|c| c.idle_for().is_some())
    }

    fn start_replay(
        &mut self,
        app: &mut App,
        tx: &Sender<Msg>,
        request: Box<ReplayRequest>,
    ) -> Result<()> {
        // The last replay's process, still waiting, takes it: a neighbouring instance switches
        // in with the memory already on the GPU.
        if self
            .replay
            .as_ref()
            .is_some_and(|c| c.replay_next(&request).is_ok())
        {
            return Ok(());
        }
        end(&mut self.replay);
        let exe = executable()?;
        let run = request.run_id;
        let started = ChildRun::serve_replays(&exe, &request, sink(tx, Msg::Replay));
        self.replay = started_or_said(app, started, run, "replay", Msg::Replay);
        Ok(())
    }

    /// The leaderboard runs on a thread of its own, which waits for its one document; its
    /// answer is about the record open when it started.
    fn start_leaderboard(
        &mut self,
        app: &mut App,
        tx: &Sender<Msg>,
        job: Box<rr_engine::replay::ab_job::AbJob>,
        (record, run): (u64, u64),
    ) {
        let (group, tx) = (self.ab.clone(), tx.clone());
        let spawned = std::thread::Builder::new()
            .name("explorer-ab".into())
            .spawn(move || {
                let board = Msg::Leaderboard {
                    run,
                    result: group.run(&job),
                };
                let _ = tx.send(Msg::ForRecord(record, Box::new(board)));
            });
        if let Err(e) = spawned {
            app.update(Msg::ForRecord(
                record,
                Box::new(Msg::Leaderboard {
                    run,
                    result: Err(format!("cannot start a worker thread: {}", io_reason(&e))),
                }),
            ));
        }
    }

    /// A sweep or a profile needs the GPU memory the kept replay process holds: it ends first.
    fn free_the_kept_replay(&mut self) {
        if let Some(c) = self.replay.take() {
            c.cancel_and_wait(FREEING_LIMIT);
        }
    }

    /// A replay process kept for the next replay gives its GPU memory back after a while.
    pub fn end_idle_replay(&mut self, app: &mut App) {
        if self
            .replay
            .as_ref()
            .and_then(ChildRun::idle_for)
            .is_some_and(|idle| idle > REPLAY_KEPT_FOR)
        {
            end(&mut self.replay);
            app.set_status(
                format!(
                    "the kept replay process ended after {} idle minutes: its GPU memory is free",
                    REPLAY_KEPT_FOR.as_secs() / 60
                ),
                false,
            );
        }
    }

    /// The explorer ends: no child process goes on without it.
    pub fn end(&mut self) {
        end(&mut self.replay);
        end(&mut self.tune);
        end(&mut self.profile);
        self.ab.end();
    }
}

impl Drop for Executor {
    /// However the explorer ends (an error, a panic unwinding), no GPU work it started goes on.
    fn drop(&mut self) {
        self.end();
    }
}

/// Kill the child in `slot`, if there is one.
fn end(slot: &mut Option<ChildRun>) {
    if let Some(c) = slot.take() {
        c.cancel();
    }
}

fn executable() -> Result<std::path::PathBuf> {
    crate::this_binary().map_err(|e| {
        Error::invalid(format!(
            "cannot find the rr-tui executable: {}",
            io_reason(&e)
        ))
    })
}

/// The child that started, or None when it could not: its run then ends at once with the
/// reason.
fn started_or_said(
    app: &mut App,
    started: std::io::Result<ChildRun>,
    run: u64,
    what: &'static str,
    wrap: fn(Tagged) -> Msg,
) -> Option<ChildRun> {
    match started {
        Ok(child) => Some(child),
        Err(e) => {
            for m in failed_start(run, what, &e) {
                app.update(wrap(m));
            }
            None
        }
    }
}

/// The explorer's event sink: each event of a child's run, as the message `wrap` makes of it,
/// to the message loop (which applies it to the run it belongs to, or drops it).
struct ToLoop {
    tx: Sender<Msg>,
    wrap: fn(Tagged) -> Msg,
}

fn sink(tx: &Sender<Msg>, wrap: fn(Tagged) -> Msg) -> ToLoop {
    ToLoop {
        tx: tx.clone(),
        wrap,
    }
}

impl EventSink for ToLoop {
    fn emit(&self, run: u64, event: Event) {
        // The loop has ended: nobody waits for the event.
        let _ = self.tx.send((self.wrap)(Tagged { run, event }));
    }
}

/// What a child that could not even start says: an error, then the end of its run.
fn failed_start(run: u64, what: &str, e: &std::io::Error) -> [Tagged; 2] {
    use rr_engine::replay::ErrorKind;
    [
        Tagged {
            run,
            event: Event::Error {
                kind: ErrorKind::Setup,
                message: format!("cannot start the {what} process: {}", io_reason(e)),
            },
        },
        Tagged {
            run,
            event: Event::Done { ok: false },
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that cannot start is said in plain words, not with Rust's "(os error 2)", and
    /// its run ends.
    #[test]
    fn a_child_that_cannot_start_says_why_plainly() {
        let e = std::io::Error::from_raw_os_error(2);
        let [said, done] = failed_start(7, "replay", &e);
        match said.event {
            Event::Error { message, .. } => assert_eq!(
                message,
                "cannot start the replay process: no such file or directory"
            ),
            other => panic!("not an error: {other:?}"),
        }
        assert!(matches!(done.event, Event::Done { ok: false }));
        assert_eq!((said.run, done.run), (7, 7));
    }
}
