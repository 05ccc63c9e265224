//! Terminal set-up and restore, the input and signal threads, and the message loop. Everything
//! slow (replays, diff indexing) runs elsewhere and comes back as messages; the loop drains all
//! pending messages before drawing once, so bursts of repetitions cost one frame.

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event as TermEvent, KeyEventKind, MouseEventKind,
};
use ratatui::crossterm::execute;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::app::{App, Cmd, Msg};
use super::executor::Executor;
use crate::error::{Error, Result};
use crate::settings::theme::Theme;
use rr_engine::diff::job::IndexJob;
use rr_engine::diff::search::SearchJob;
use rr_format::text::io_reason;

const TICK: Duration = Duration::from_millis(250);
/// Undo what set-up did, ignoring failures: when the terminal has gone away (hang-up) every
/// write fails with EIO, and `ratatui::restore` would report that with `eprintln!`, which
/// panics when stderr is that same dead terminal (then the panic hook restores again: abort).
fn restore_terminal() {
    use ratatui::crossterm::{cursor::Show, terminal};
    let _ = terminal::disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        terminal::LeaveAlternateScreen,
        Show
    );
}

/// Run the explorer until it quits. `mouse`: capture the mouse (clicks and the wheel reach the
/// explorer, and the terminal's own text selection needs Shift, in most terminals).
pub fn run(mut app: App, theme: Theme, mouse: bool) -> Result<i32> {
    let (tx, rx) = unbounded::<Msg>();
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = Arc::new(std::sync::atomic::AtomicI32::new(0));
    spawn_signal_thread(tx.clone(), signalled.clone())?;
    let mut terminal = set_up_terminal(mouse)?;
    let input = spawn_input_thread(tx.clone(), stop.clone());
    if let Ok(size) = terminal.size() {
        app.update(Msg::Resize(size.width, size.height));
    }
    let mut workers = Workers::default();
    let result = message_loop(&mut app, &theme, &mut terminal, &rx, &tx, &mut workers);
    stop.store(true, Ordering::Relaxed);
    workers.end();
    restore_terminal();
    // ratatui's Terminal shows the cursor when dropped and `eprintln!`s a failure (a panic on
    // a dead terminal): show it here, and if the terminal is gone, never run that drop.
    if terminal.show_cursor().is_err() {
        std::mem::forget(terminal);
    }
    // The input thread is not joined: after a hang-up crossterm's read can spin on end of input
    // without returning to check `stop`; the process ends it when we return.
    drop(input);
    // A sweep file it was started with that cannot be shown: said as before a frame.
    if let Some(why) = app.fatal.take() {
        result?;
        return Err(Error::invalid(why));
    }
    // Ended by a signal: the shell's convention (128 + its number), as if it had killed us.
    result.map(|_| match signalled.load(Ordering::Relaxed) {
        0 => 0,
        sig => 128 + sig,
    })
}

/// Raw mode and the alternate screen (ratatui's), the panic hook that undoes them, and the
/// mouse when asked for.
fn set_up_terminal(mouse: bool) -> Result<ratatui::DefaultTerminal> {
    let terminal = ratatui::try_init()
        .map_err(|e| Error::invalid(format!("cannot set up the terminal: {}", io_reason(&e))))?;
    // ratatui's hook restores raw mode and the screen; mouse capture is ours to undo (at exit,
    // on a signal and on a panic, `restore_terminal` disables it whether or not it was on).
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    if mouse {
        let _ = execute!(std::io::stdout(), EnableMouseCapture);
    }
    Ok(terminal)
}

/// Draw, take every pending message, carry out the commands they gave; until the explorer
/// quits, its input ends or the terminal goes away.
fn message_loop(
    app: &mut App,
    theme: &Theme,
    terminal: &mut ratatui::DefaultTerminal,
    rx: &Receiver<Msg>,
    tx: &Sender<Msg>,
    workers: &mut Workers,
) -> Result<()> {
    let mut first_frame = true;
    loop {
        app.jobs.kept = workers.exec.replay_kept();
        terminal
            .draw(|f| super::ui::draw(app, theme, f))
            .map_err(|e| Error::invalid(format!("drawing failed: {}", io_reason(&e))))?;
        let mut cmds = Vec::new();
        if std::mem::take(&mut first_frame) {
            // Checks of every instance start once the table is on screen, never before.
            cmds.extend(app.update(Msg::FirstFrameDrawn));
        }
        let first = match rx.recv_timeout(TICK) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => Msg::Tick(Instant::now()),
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        cmds.extend(app.update(first));
        while let Ok(m) = rx.try_recv() {
            cmds.extend(app.update(m));
        }
        // The clock, every turn: status messages expire even while events stream in.
        cmds.extend(app.update(Msg::Tick(Instant::now())));
        // A terminal that went away (hang-up, its shell killed) is the end of input, even
        // when no SIGHUP reached us: quit rather than spin re-parented to init.
        if !std::io::stdout().is_terminal() {
            return Ok(());
        }
        for cmd in cmds {
            if workers.carry_out(app, tx, cmd)? == Flow::Quit {
                return Ok(());
            }
        }
        if app.quit {
            return Ok(());
        }
        workers.exec.end_idle_replay(app);
        // A snapshot shrinking under an indexed view makes its "equal" summaries lies: check
        // the open pair on every turn (two fstat calls).
        if app
            .snapshots
            .view
            .as_ref()
            .is_some_and(|s| !s.stale && !s.files_unchanged())
        {
            let _ = tx.send(Msg::SnapshotsChanged);
        }
    }
}

/// Whether the loop goes on after a command.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// What the explorer's commands started: its child processes (the executor's) and its jobs on
/// threads, one of each at a time, a new one replacing (and so cancelling) the one before.
#[derive(Default)]
struct Workers {
    exec: Executor,
    index: Option<IndexJob>,
    /// The snapshot search (`/`).
    search: Option<SearchJob>,
}

impl Workers {
    /// Carry out one command of `update`'s.
    fn carry_out(&mut self, app: &mut App, tx: &Sender<Msg>, cmd: Cmd) -> Result<Flow> {
        // Child processes are the executor's.
        let Some(cmd) = self.exec.carry_out(app, tx, cmd)? else {
            return Ok(Flow::Continue);
        };
        match cmd {
            Cmd::StartIndex { job, a, b } => {
                let sink = tx.clone();
                self.index = Some(IndexJob::spawn(
                    a,
                    b,
                    rr_engine::diff::index::DEFAULT_MERGE_GAP,
                    move |event| {
                        let _ = sink.send(Msg::Index { job, event });
                    },
                ));
            }
            Cmd::StartSearch { job, a, b, query } => {
                let sink = tx.clone();
                self.search = Some(SearchJob::spawn(a, b, query, move |event| {
                    let _ = sink.send(Msg::Search { job, event });
                }));
            }
            Cmd::Work(work) => spawn_work(app, tx, work),
            Cmd::Quit => return Ok(Flow::Quit),
            // Starting and cancelling processes: carried out above.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// The explorer ends: no child process goes on without it, and the index job stops.
    fn end(&mut self) {
        self.exec.end();
        drop(self.index.take());
    }
}

/// Slow work on a thread of its own; its message comes back on `tx`.
fn spawn_work(app: &mut App, tx: &Sender<Msg>, work: crate::tui::app::Work) {
    let sink = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("explorer-work".into())
        .spawn(move || {
            let _ = sink.send((work.0)());
        });
    if let Err(e) = spawned {
        app.set_status(
            format!("cannot start a worker thread: {}", io_reason(&e)),
            true,
        );
    }
}

fn spawn_input_thread(tx: Sender<Msg>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(50)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => {
                    // The terminal is gone (hang-up): end the explorer.
                    let _ = tx.send(Msg::Quit);
                    break;
                }
            }
            let msg = match event::read() {
                // Windows and some terminals also report releases: keep presses only.
                Ok(TermEvent::Key(k)) if k.kind == KeyEventKind::Press => Msg::Key(k),
                // Clicks and the wheel; moves, drags and releases (a stream of them while the
                // pointer moves) mean nothing to the explorer and would only cost frames.
                Ok(TermEvent::Mouse(m)) => match m.kind {
                    MouseEventKind::Down(_)
                    | MouseEventKind::ScrollDown
                    | MouseEventKind::ScrollUp
                    | MouseEventKind::ScrollLeft
                    | MouseEventKind::ScrollRight => Msg::Mouse(m),
                    _ => continue,
                },
                Ok(TermEvent::Resize(w, h)) => Msg::Resize(w, h),
                Ok(_) => continue,
                Err(_) => {
                    let _ = tx.send(Msg::Quit);
                    break;
                }
            };
            if tx.send(msg).is_err() {
                break;
            }
        }
    })
}

/// SIGTERM, SIGHUP and SIGINT become a quit message, so the terminal is restored and the
/// session directory removed on kill; every one of them, not only the first. The first is kept
/// in `signalled` for the exit status.
fn spawn_signal_thread(
    tx: Sender<Msg>,
    signalled: Arc<std::sync::atomic::AtomicI32>,
) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT]).map_err(|e| {
            Error::invalid(format!("cannot install signal handlers: {}", io_reason(&e)))
        })?;
    std::thread::spawn(move || {
        for sig in signals.forever() {
            let _ = signalled.compare_exchange(0, sig, Ordering::Relaxed, Ordering::Relaxed);
            if tx.send(Msg::Quit).is_err() {
                break;
            }
        }
    });
    Ok(())
}
