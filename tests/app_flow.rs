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
    assert!(a.prompt.is_none());
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
                clock_mhz: None,
                throttled: false,
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
            clock_mhz: None,
            throttled: false,
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

fn ctrl(app: &mut App, c: char) -> Vec<Cmd> {
    app.update_inline(Msg::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )))
}

fn status(app: &App) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

/// Readline keys edit every prompt at the cursor.
#[test]
fn prompts_edit_like_readline() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('G'));
    typed(&mut a, "8,1,1");
    ctrl(&mut a, 'w');
    assert_eq!(a.prompt.as_ref().unwrap().text(), "8,1,");
    ctrl(&mut a, 'a');
    typed(&mut a, "1");
    key(&mut a, KeyCode::End);
    typed(&mut a, "2");
    assert_eq!(a.prompt.as_ref().unwrap().text(), "18,1,2");
    key(&mut a, KeyCode::Home);
    key(&mut a, KeyCode::Right);
    key(&mut a, KeyCode::Delete);
    assert_eq!(a.prompt.as_ref().unwrap().text(), "1,1,2");
    assert_eq!(a.prompt.as_ref().unwrap().editor.cursor(), 1);
    key(&mut a, KeyCode::Left);
    key(&mut a, KeyCode::Backspace);
    ctrl(&mut a, 'e');
    key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none());
    assert_eq!(a.settings.grid, Some([1, 1, 2]));
    assert!(status(&a).contains("grid override 1,1,2"), "{}", status(&a));
    // Ctrl-U clears what is before the cursor; an empty grid means "as recorded".
    key(&mut a, KeyCode::Char('G'));
    ctrl(&mut a, 'u');
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.settings.grid, None);
    // The filter prompt applies as it is edited.
    key(&mut a, KeyCode::Char('1'));
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "saxpy");
    assert_eq!(a.view.len(), 2);
    ctrl(&mut a, 'w');
    assert_eq!(a.view.len(), 4);
}

/// A value that does not parse keeps its prompt open with the reason, and changes nothing.
#[test]
fn every_prompt_is_validated_before_use() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('4'));
    for (k, bad) in [
        ('B', "abc"),
        ('G', "0,1,1"),
        ('n', "0"),
        ('n', "ten"),
        ('T', "f32:rtol=-1"),
        ('T', "u8:ulp=2"),
    ] {
        key(&mut a, KeyCode::Char(k));
        ctrl(&mut a, 'u');
        typed(&mut a, bad);
        key(&mut a, KeyCode::Enter);
        let p = a
            .prompt
            .as_ref()
            .unwrap_or_else(|| panic!("{k} {bad}: closed"));
        assert!(p.error.is_some(), "{k} {bad}: no error shown");
        assert_eq!(p.text(), bad, "the text stays for fixing");
        // Typing clears the error; Esc leaves the setting as it was.
        typed(&mut a, "x");
        assert!(a.prompt.as_ref().unwrap().error.is_none());
        key(&mut a, KeyCode::Esc);
        assert!(a.prompt.is_none());
    }
    assert_eq!(
        (a.settings.repetitions, a.settings.grid, a.settings.block),
        (20, None, None)
    );
    assert!(a.settings.tolerance.is_none());
    key(&mut a, KeyCode::Char('T'));
    typed(&mut a, "f32:rtol=1e-5");
    key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none());
    assert_eq!(a.settings.tolerance.unwrap().tolerance.rtol, 1e-5);

    let cmds = key(&mut a, KeyCode::Char('3'));
    finish_index(&mut a, cmds);
    for bad in ["", "zzz", "arg9", "0x99999999999"] {
        key(&mut a, KeyCode::Char(':'));
        typed(&mut a, bad);
        key(&mut a, KeyCode::Enter);
        assert!(
            a.prompt.as_ref().and_then(|p| p.error.as_ref()).is_some(),
            "goto {bad:?} refused"
        );
        key(&mut a, KeyCode::Esc);
    }
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "arg0");
    key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none());
    assert_eq!(a.snap.as_ref().unwrap().top, 0x4000);
}

/// Messages expire by the clock the runtime passes in, and never hide the instance count
/// (which is drawn apart from them).
#[test]
fn status_messages_expire() {
    use std::time::{Duration, Instant};
    let mut a = app("llvm-two-kernels", false);
    key(&mut a, KeyCode::Char('s'));
    assert_eq!(status(&a), "sorted by kernel");
    let t0 = Instant::now();
    a.update(Msg::Tick(t0));
    a.update(Msg::Tick(t0 + Duration::from_secs(3)));
    assert!(a.status.is_some());
    a.update(Msg::Tick(t0 + Duration::from_secs(6)));
    assert!(a.status.is_none(), "expired");
    // A new message replaces the old one and starts its own time.
    key(&mut a, KeyCode::Char('s'));
    key(&mut a, KeyCode::Char('S'));
    assert_eq!(status(&a), "sorted by time, descending");
    a.update(Msg::Tick(t0 + Duration::from_secs(7)));
    a.update(Msg::Tick(t0 + Duration::from_secs(11)));
    assert!(a.status.is_some());
    // Errors stay longer.
    key(&mut a, KeyCode::Char('v'));
    a.update(Msg::Tick(t0 + Duration::from_secs(20)));
    a.update(Msg::Tick(t0 + Duration::from_secs(26)));
    assert!(a.status.as_ref().unwrap().error);
    a.update(Msg::Tick(t0 + Duration::from_secs(30)));
    assert!(a.status.is_none());
}

/// Keys that change a mode, and keys that cannot do anything, all say so.
#[test]
fn every_key_answers() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('c'));
    assert_eq!(status(&a), "nothing to cancel: no replay is running");
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('x'));
    assert!(
        status(&a).starts_with("nothing to export"),
        "{}",
        status(&a)
    );
    key(&mut a, KeyCode::Char('f'));
    assert!(
        status(&a).starts_with("nothing to freeze"),
        "{}",
        status(&a)
    );
    let run = match key(&mut a, KeyCode::Char('r')).into_iter().next() {
        Some(Cmd::StartReplay { request, .. }) => request.run_id,
        _ => panic!("no replay started"),
    };
    key(&mut a, KeyCode::Char('x'));
    assert!(
        status(&a).starts_with("nothing to export yet"),
        "{}",
        status(&a)
    );
    a.update(ev(
        run,
        Event::Rep {
            index: 1,
            kernel_ns: 1.0,
            host_ns: 2.0,
            restore_ns: 0.0,
            clock_mhz: None,
            throttled: false,
        },
    ));
    key(&mut a, KeyCode::Char('f'));
    assert!(
        status(&a).contains("frozen at 1 repetition"),
        "{}",
        status(&a)
    );
    key(&mut a, KeyCode::Char('f'));
    assert_eq!(status(&a), "chart live");
    key(&mut a, KeyCode::Char('c'));
    assert_eq!(status(&a), "replay cancelled");

    key(&mut a, KeyCode::Char('3'));
    for k in ['e', 't', 'z', 'n', ':'] {
        let mut b = app("llvm-two-kernels", false);
        b.screen = rr_tui::tui::app::Screen::Snapshots;
        key(&mut b, KeyCode::Char(k));
        assert!(
            status(&b).starts_with("no snapshots open"),
            "{k}: {}",
            status(&b)
        );
    }
    let cmds = key(&mut a, KeyCode::Char('g'));
    finish_index(&mut a, cmds);
    key(&mut a, KeyCode::Char('e'));
    assert!(status(&a).contains("big endian"), "{}", status(&a));
    for _ in 0..11 {
        key(&mut a, KeyCode::Char('t'));
    }
    assert_eq!(status(&a), "typed view: f32, big endian (e toggles)");
    key(&mut a, KeyCode::Char('e'));
    assert_eq!(status(&a), "f32 values read little endian");
    key(&mut a, KeyCode::Char('z'));
    assert_eq!(status(&a), "every row shown");
    key(&mut a, KeyCode::Char('1'));
    key(&mut a, KeyCode::Char('R'));
    assert_eq!(status(&a), "raw (mangled) kernel names");
}

/// `G` / End shows the last line at the bottom of the view, on every screen.
#[test]
fn bottom_puts_the_last_line_at_the_bottom() {
    let mut a = app("llvm-two-kernels", false);
    a.update(Msg::Resize(80, 24));
    key(&mut a, KeyCode::End);
    assert_eq!(a.selected, 3);

    key(&mut a, KeyCode::Char('2'));
    key(&mut a, KeyCode::Char('G'));
    let lines = a.descriptor_lines();
    assert!(
        lines > a.content_lines(),
        "the fixture's descriptor is taller than 24 lines"
    );
    assert_eq!(a.descriptor_scroll + a.content_lines(), lines);
    key(&mut a, KeyCode::Char('j'));
    assert_eq!(
        a.descriptor_scroll + a.content_lines(),
        lines,
        "no scrolling past it"
    );
    key(&mut a, KeyCode::Char('k'));
    assert_eq!(a.descriptor_scroll + a.content_lines(), lines - 1);

    let cmds = key(&mut a, KeyCode::Char('3'));
    finish_index(&mut a, cmds);
    key(&mut a, KeyCode::Char('z'));
    key(&mut a, KeyCode::End);
    let s = a.snap.as_ref().unwrap();
    let rows = a.snapshot_rows();
    let shown = s.lines(rows);
    assert_eq!(shown.len(), rows, "a full view");
    assert_eq!(
        shown.last(),
        Some(&rr_tui::tui::app::snapview::Line::Row(s.len() - s.row))
    );

    key(&mut a, KeyCode::Char('?'));
    key(&mut a, KeyCode::End);
    let total = rr_tui::tui::keymap::help_lines().len();
    assert_eq!(a.help_scroll + a.help_rows(), total);
    key(&mut a, KeyCode::Char('g'));
    assert_eq!(a.help_scroll, 0);
}

/// The snapshot rows follow the terminal width; positions stay on the same bytes.
#[test]
fn resizing_changes_the_row_width_and_keeps_the_place() {
    let mut a = app("llvm-two-kernels", false);
    a.update(Msg::Resize(200, 60));
    let cmds = key(&mut a, KeyCode::Enter);
    finish_index(&mut a, cmds);
    assert_eq!(a.snap.as_ref().unwrap().row, 16);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "0x4018");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snap.as_ref().unwrap().top, 0x4010);
    a.update(Msg::Resize(80, 24));
    assert_eq!(a.snap.as_ref().unwrap().row, 8);
    assert_eq!(a.snap.as_ref().unwrap().top, 0x4010);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "0x4018");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snap.as_ref().unwrap().top, 0x4018);
    key(&mut a, KeyCode::Char('N'));
    assert_eq!(a.snap.as_ref().unwrap().top, 0x4000);
    a.update(Msg::Resize(50, 24));
    assert_eq!(a.snap.as_ref().unwrap().row, 4);
}

/// After the first frame, workers check every instance; broken ones get a badge and their
/// first problem is shown when selected.
#[test]
fn broken_instances_are_badged_after_the_first_frame() {
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let json = descriptor_of(&dir, "rr_scale_global");
    let output = json.with_extension("record_output");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&output)
        .unwrap();
    f.set_len(1000).unwrap();
    let mut a = rr_tui::tui::load_app(dir, Err("no GPU".into()), std::env::temp_dir()).unwrap();
    assert!(
        a.rows.iter().all(|r| r.problem.is_none()),
        "nothing is checked before"
    );
    let pending = a.update(Msg::FirstFrameDrawn);
    assert_eq!(pending.len(), 1, "one worker at a time");
    assert!(
        a.update(Msg::FirstFrameDrawn).is_empty(),
        "checks start once"
    );
    for cmd in pending {
        let Cmd::Work(work) = cmd else {
            panic!("checks run on workers")
        };
        // What the runtime does with a worker's message: feed it back (the next batch too).
        a.update_inline((work.0)());
    }
    let broken: Vec<_> = a.rows.iter().filter_map(|r| r.problem.as_deref()).collect();
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(
        broken[0].contains(".record_output: is 1000 bytes"),
        "{}",
        broken[0]
    );
    assert_eq!(a.checked, Some(4));
}
