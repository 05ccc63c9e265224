//! The explorer as a state machine: messages in, state and commands out. No terminal.

mod common;

use common::*;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rr_engine::diff::job::IndexEvent;
use rr_engine::replay::Event;
use rr_tui::tui::app::{App, Cmd, Msg, Pair, Phase, Screen, SortKey};
use std::sync::atomic::AtomicBool;

pub fn key(app: &mut App, c: KeyCode) -> Vec<Cmd> {
    let m = if matches!(c, KeyCode::Char(ch) if ch.is_ascii_uppercase()) {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    app.update_inline(Msg::Key(KeyEvent::new(c, m)))
}

fn typed(app: &mut App, s: &str) {
    for ch in s.chars() {
        key(app, KeyCode::Char(ch));
    }
}

fn app(name: &str, gpu: bool) -> App {
    let gpu = if gpu {
        Ok(())
    } else {
        Err("no CUDA driver found".to_string())
    };
    rr_tui::tui::load_app(fixture(name), gpu, std::env::temp_dir()).unwrap()
}

/// Run the diff index the way the runtime does and feed its events back.
fn finish_index(app: &mut App, cmds: Vec<Cmd>) {
    for c in cmds {
        if let Cmd::StartIndex { job, a, b } = c {
            let out =
                rr_engine::diff::build_index(&a, &b, 8, &AtomicBool::new(false), |_, _, _| {})
                    .unwrap();
            app.update(Msg::Index {
                job,
                event: IndexEvent::Progress {
                    scanned: out.compared / 2,
                    total: out.compared,
                    new_ranges: vec![],
                    differing_bytes: 0,
                },
            });
            app.update(Msg::Index {
                job,
                event: IndexEvent::Done(Ok(out)),
            });
        }
    }
}

#[test]
fn sort_filter_and_navigation() {
    let mut a = app("llvm-two-kernels", false);
    assert_eq!(a.view.len(), 4);
    key(&mut a, KeyCode::Char('s'));
    assert_eq!(a.sort, SortKey::Kernel);
    key(&mut a, KeyCode::Char('s'));
    assert_eq!(a.sort, SortKey::Time);
    let times: Vec<_> = a.view.iter().map(|&i| a.rows[i].time_ns.unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    key(&mut a, KeyCode::Char('S'));
    assert!(a.descending);
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "scale");
    assert_eq!(a.view.len(), 2);
    key(&mut a, KeyCode::Enter);
    assert!(a.input.is_none());
    assert_eq!(a.filter, "scale");
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.view.len(), 4);
    let kept = a.current().unwrap();
    assert!(
        a.rows[kept].kernel == "rr_scale_global",
        "clearing the filter keeps the selection"
    );
    key(&mut a, KeyCode::Char('g'));
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('j'));
    assert_eq!(a.selected, 2);
    key(&mut a, KeyCode::Char('G'));
    assert_eq!(a.selected, 3);
    key(&mut a, KeyCode::Char('?'));
    assert!(a.help);
    key(&mut a, KeyCode::Char('j'));
    assert_eq!(a.selected, 3, "keys do not leak through the help popup");
    key(&mut a, KeyCode::Esc);
    assert!(!a.help);
    let cmds = key(&mut a, KeyCode::Char('q'));
    assert!(a.quit && cmds.iter().any(|c| matches!(c, Cmd::Quit)));
}

#[test]
fn snapshot_diff_jumps_between_differences_and_goes_to_arguments() {
    let mut a = app("llvm-two-kernels", false);
    let cmds = key(&mut a, KeyCode::Enter);
    assert_eq!(a.screen, Screen::Snapshots);
    finish_index(&mut a, cmds);
    let s = a.snap.as_ref().unwrap();
    assert!(s.done);
    assert_eq!(s.index.ranges.len(), 1);
    key(&mut a, KeyCode::Char('n'));
    assert_eq!(a.snap.as_ref().unwrap().top, 0x4000);
    key(&mut a, KeyCode::Char('n'));
    assert_eq!(a.status.as_ref().unwrap().text, "no more differences");
    key(&mut a, KeyCode::Char('N'));
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "arg1");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snap.as_ref().unwrap().top, 0);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "0x153940004010");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snap.as_ref().unwrap().top, 0x4010);
    key(&mut a, KeyCode::Char('t'));
    assert!(a.snap.as_ref().unwrap().dtype.is_some());
    // No replay output yet: the other pair explains why.
    key(&mut a, KeyCode::Char('p'));
    assert!(
        a.status.as_ref().unwrap().text.contains("no replay output"),
        "{:?}",
        a.status
    );
    assert_eq!(a.snap.as_ref().unwrap().pair, Pair::InputOutput);
}

#[test]
fn replay_without_a_gpu_explains_and_starts_nothing() {
    let mut a = app("llvm-two-kernels", false);
    let cmds = key(&mut a, KeyCode::Char('v'));
    assert!(cmds.is_empty());
    assert!(a
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("cannot replay here: no CUDA driver"));
}

#[test]
fn replay_events_stream_into_the_instance_and_export() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('n'));
    for _ in 0..2 {
        key(&mut a, KeyCode::Backspace);
    }
    typed(&mut a, "5");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.settings.repetitions, 5);
    let cmds = key(&mut a, KeyCode::Char('v'));
    let Some(Cmd::StartReplay { instance, request }) = cmds.into_iter().next() else {
        panic!("no replay started")
    };
    let run = request.run_id;
    assert!(
        request.verify == rr_engine::replay::Verify::Bytes
            && request.save_output
            && request.repetitions == 5
    );
    assert!(
        key(&mut a, KeyCode::Char('r')).is_empty(),
        "one replay at a time"
    );
    for i in 0..5 {
        a.update(ev(
            run,
            Event::Rep {
                index: i + 1,
                kernel_ns: 1000.0 + i as f64,
                host_ns: 5000.0,
                restore_ns: 10.0,
            },
        ));
    }
    a.update(ev(run, Event::Done { ok: true }));
    let run = &a.replays[&instance];
    assert_eq!(run.kernel_stats().median, 1002.0);
    assert_eq!(run.phase, Phase::Done);
    assert!(a.running.is_none());
    let dir = tempfile::tempdir().unwrap();
    a.export_dir = dir.path().to_path_buf();
    key(&mut a, KeyCode::Char('x'));
    let csv = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .unwrap();
    let text = std::fs::read_to_string(csv).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert!(text.starts_with("repetition,kernel_ns,host_ns,restore_ns\n1,1000,5000,10"));
}

#[test]
fn cancel_marks_the_run_and_kills_the_child() {
    let mut a = app("llvm-two-kernels", true);
    let run = match key(&mut a, KeyCode::Char('r')).into_iter().next() {
        Some(Cmd::StartReplay { request, .. }) => request.run_id,
        _ => panic!("no replay started"),
    };
    let cmds = key(&mut a, KeyCode::Char('c'));
    assert!(cmds.iter().any(|c| matches!(c, Cmd::CancelReplay)));
    assert_eq!(a.replays[&0].phase, Phase::Cancelled);
    // Late events of the killed child do not resurrect it.
    a.update(ev(
        run,
        Event::Error {
            kind: rr_engine::replay::ErrorKind::Setup,
            message: "killed".into(),
        },
    ));
    assert_eq!(a.replays[&0].phase, Phase::Cancelled);
}

/// Cancelling a replay and immediately starting another on the same instance: the killed
/// child's last words (error, done) belong to the old run and must not fail the new one.
#[test]
fn a_cancelled_runs_late_events_never_touch_the_next_run() {
    let mut a = app("llvm-two-kernels", true);
    let first = match key(&mut a, KeyCode::Char('r')).into_iter().next() {
        Some(Cmd::StartReplay { request, .. }) => request.run_id,
        _ => panic!("no replay started"),
    };
    key(&mut a, KeyCode::Char('c'));
    let second = match key(&mut a, KeyCode::Char('r')).into_iter().next() {
        Some(Cmd::StartReplay { request, .. }) => request.run_id,
        _ => panic!("no second replay started"),
    };
    assert_ne!(first, second);
    a.update(ev(
        first,
        Event::Error {
            kind: rr_engine::replay::ErrorKind::Setup,
            message: "the replay process was killed (cancelled or crashed)".into(),
        },
    ));
    a.update(ev(first, Event::Done { ok: false }));
    assert_eq!(
        a.replays[&0].phase,
        Phase::Running,
        "the new run is untouched"
    );
    assert_eq!(a.running, Some(0));
    a.update(ev(
        second,
        Event::Rep {
            index: 1,
            kernel_ns: 1.0,
            host_ns: 2.0,
            restore_ns: 0.0,
        },
    ));
    a.update(ev(second, Event::Done { ok: true }));
    assert_eq!(a.replays[&0].phase, Phase::Done);
    assert_eq!(a.replays[&0].kernel_ns, vec![1.0]);
}

#[test]
fn descriptor_mark_enables_a_side_by_side_diff() {
    let mut a = app("llvm-two-kernels", false);
    key(&mut a, KeyCode::Char('m'));
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('2'));
    assert_eq!(a.mark, Some(0));
    assert!(a.inspections.contains_key(&0) && a.inspections.contains_key(&1));
}

/// A replay event of run `run`, as the runtime delivers it.
fn ev(run: u64, event: rr_engine::replay::Event) -> Msg {
    Msg::Replay(rr_engine::replay::Tagged { run, event })
}

/// Keys can outrun the worker that maps snapshots: `3` then `p` at once must still move on to
/// the next pair, not reopen the one being opened.
#[test]
fn cycling_pairs_while_the_first_pair_opens() {
    let mut a = app("llvm-two-kernels", false);
    let pending = a.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('3'),
        KeyModifiers::NONE,
    )));
    assert!(pending.iter().any(|c| matches!(c, Cmd::Work(_))));
    a.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('p'),
        KeyModifiers::NONE,
    )));
    let status = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(status.contains("no replay output"), "{status}");
}
