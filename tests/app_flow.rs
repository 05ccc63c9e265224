//! The explorer as a state machine: messages in, state and commands out. No terminal.

mod common;

use common::*;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rr_engine::diff::job::IndexEvent;
use rr_engine::replay::Event;
use rr_tui::tui::app::{App, Cmd, GpuWork, Msg, Pair, Phase, Screen, SortKey};
use rr_tune::{Config, Status, Trial, TuneReport};
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
    assert_eq!(a.instances.sort, SortKey::Kernel);
    key(&mut a, KeyCode::Char('s'));
    assert_eq!(a.instances.sort, SortKey::Time);
    let times: Vec<_> = a.view.iter().map(|&i| a.rows[i].time_ns.unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    key(&mut a, KeyCode::Char('S'));
    assert!(a.instances.descending);
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "scale");
    assert_eq!(a.view.len(), 2);
    key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none());
    assert_eq!(a.instances.filter, "scale");
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

/// The first byte of every run of differing bytes between the open snapshots, from their bytes.
fn run_starts(a: &App) -> Vec<u64> {
    let s = a.snapshots.view.as_ref().unwrap();
    let (x, y) = (s.a.bytes(), s.b.bytes());
    let differs = |i: usize| x.get(i) != y.get(i);
    (0..x.len().min(y.len()))
        .filter(|&i| differs(i) && (i == 0 || !differs(i - 1)))
        .map(|i| i as u64)
        .collect()
}

#[test]
fn snapshot_diff_jumps_between_differences_and_goes_to_arguments() {
    let mut a = app("llvm-two-kernels", false);
    let cmds = key(&mut a, KeyCode::Enter);
    assert_eq!(a.screen, Screen::Snapshots);
    finish_index(&mut a, cmds);
    let s = a.snapshots.view.as_ref().unwrap();
    assert!(s.done);
    assert_eq!(s.index.ranges.len(), 1);
    key(&mut a, KeyCode::Char('n'));
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0x4000);
    // `n` visits every run of differing bytes, merged ranges or not: as many as `cmp -l` shows.
    let runs = run_starts(&a);
    let mut visited = vec![a.snapshots.view.as_ref().unwrap().cursor.unwrap()];
    while key(&mut a, KeyCode::Char('n')).is_empty()
        && a.status.as_ref().unwrap().text != "no more differences"
    {
        visited.push(a.snapshots.view.as_ref().unwrap().cursor.unwrap());
        assert!(visited.len() <= runs.len(), "more stops than differences");
    }
    assert_eq!(visited, runs);
    key(&mut a, KeyCode::Char('N'));
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "arg1");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "0x153940004010");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0x4010);
    key(&mut a, KeyCode::Char('t'));
    assert!(a.snapshots.view.as_ref().unwrap().dtype.is_some());
    // No replay output yet: the other pair explains why.
    key(&mut a, KeyCode::Char('p'));
    assert!(
        a.status.as_ref().unwrap().text.contains("no replay output"),
        "{:?}",
        a.status
    );
    assert_eq!(a.snapshots.view.as_ref().unwrap().pair, Pair::InputOutput);
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

/// Nothing on the replay screen is a list: the movement keys leave the instance (and the grid
/// override set for it) alone and say where instances are chosen; on the instances screen they
/// select.
#[test]
fn movement_keys_on_the_replay_screen_never_change_the_instance() {
    let mut a = app("llvm-two-kernels", true);
    assert!(
        a.view.len() > 1,
        "the fixture has instances to move between"
    );
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('D'));
    ctrl(&mut a, 'u');
    typed(&mut a, "2x1x1");
    key(&mut a, KeyCode::Enter);
    let chosen = a.current();
    for k in [
        KeyCode::Char('G'),
        KeyCode::Char('g'),
        KeyCode::Char('j'),
        KeyCode::Char('k'),
        KeyCode::Down,
        KeyCode::Up,
        KeyCode::End,
        KeyCode::PageDown,
    ] {
        key(&mut a, k);
        assert_eq!(a.current(), chosen, "{k:?} changed the instance");
        assert!(
            status(&a).contains("chosen on the instances screen (1)"),
            "{k:?}: {}",
            status(&a)
        );
    }
    assert_eq!(a.settings.grid, Some([2, 1, 1]));
    key(&mut a, KeyCode::Char('1'));
    key(&mut a, KeyCode::Char('j'));
    assert_ne!(a.current(), chosen, "j selects on the instances screen");
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
                candidate: false,
            },
        ));
    }
    a.update(ev(run, Event::Done { ok: true }));
    let run = &a.replay.runs[&instance];
    assert_eq!(run.kernel_stats().median, 1002.0);
    assert_eq!(run.phase, Phase::Done);
    assert!(a.jobs.of(GpuWork::Replay).is_none());
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
    assert_eq!(a.replay.runs[&0].phase, Phase::Cancelled);
    // Late events of the killed child do not resurrect it.
    a.update(ev(
        run,
        Event::Error {
            kind: rr_engine::replay::ErrorKind::Setup,
            message: "killed".into(),
        },
    ));
    assert_eq!(a.replay.runs[&0].phase, Phase::Cancelled);
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
        a.replay.runs[&0].phase,
        Phase::Running,
        "the new run is untouched"
    );
    assert_eq!(a.jobs.of(GpuWork::Replay), Some(0));
    a.update(ev(
        second,
        Event::Rep {
            index: 1,
            kernel_ns: 1.0,
            host_ns: 2.0,
            restore_ns: 0.0,
            clock_mhz: None,
            throttled: false,
            candidate: false,
        },
    ));
    a.update(ev(second, Event::Done { ok: true }));
    assert_eq!(a.replay.runs[&0].phase, Phase::Done);
    assert_eq!(a.replay.runs[&0].kernel_ns, vec![1.0]);
}

#[test]
fn descriptor_mark_enables_a_side_by_side_diff() {
    let mut a = app("llvm-two-kernels", false);
    key(&mut a, KeyCode::Char('m'));
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('2'));
    assert_eq!(a.mark, Some(0));
    assert!(a.descriptor.inspections.contains_key(&0) && a.descriptor.inspections.contains_key(&1));
    // The same fields and counts as `rr-tui diff A.json B.json` (it used to count 28 where
    // the command counted 25).
    let side = |i: usize| a.descriptor.inspections[&i].as_ref().unwrap().as_ref();
    let compared = rr_tui::tui::app::screens::descriptor::content::compare(side(0), side(1));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .arg("diff")
        .arg(&a.rows[0].json_path)
        .arg(&a.rows[1].json_path)
        .output()
        .unwrap();
    let cli = String::from_utf8_lossy(&out.stdout);
    let summary = compared.summary();
    for part in summary.split(" · ") {
        assert!(cli.lines().any(|l| l == part), "{part:?} not in\n{cli}");
    }
}

/// `d` on the descriptor screen shows the marked and selected instances line by line: the
/// same hunks, line for line, as `rr-tui diff A.json B.json` prints; `d` again goes back to the
/// fields. Without a second instance it says what it needs.
#[test]
fn descriptor_line_diff_is_the_one_diff_prints() {
    let mut a = app("llvm-two-kernels", false);
    a.update(Msg::Resize(120, 40));
    key(&mut a, KeyCode::Char('2'));
    key(&mut a, KeyCode::Char('d'));
    assert!(!a.descriptor.text_diff);
    assert!(a
        .status
        .as_ref()
        .is_some_and(|s| s.error && s.text.contains("mark one with m")));
    key(&mut a, KeyCode::Char('1'));
    key(&mut a, KeyCode::Char('m'));
    // The rr_scale_global instance: arguments, segments and globals differ too.
    for _ in 0..3 {
        key(&mut a, KeyCode::Char('j'));
    }
    key(&mut a, KeyCode::Char('2'));
    key(&mut a, KeyCode::Char('d'));
    assert!(a.descriptor.text_diff);
    let (m, cur) = (a.mark.unwrap(), a.current().unwrap());
    let side = |i: usize| a.descriptor.inspections[&i].as_ref().unwrap().as_ref();
    let compared = rr_tui::tui::app::screens::descriptor::content::compare(side(m), side(cur));
    assert_eq!(a.descriptor.lines(&a), compared.line_view_len());
    let explorer: Vec<String> = compared
        .lines
        .rows()
        .map(|r| match r {
            rr_engine::diff::lines::Row::Hunk(h) => h.header(),
            rr_engine::diff::lines::Row::Line(l) => format!("{}{}", l.tag.sign(), l.text),
        })
        .collect();
    assert!(explorer.len() > 10, "{explorer:?}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .arg("diff")
        .arg(&a.rows[m].json_path)
        .arg(&a.rows[cur].json_path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let cli = String::from_utf8_lossy(&out.stdout);
    let cli: Vec<&str> = cli
        .lines()
        .skip_while(|l| !l.starts_with("+++ B "))
        .skip(1)
        .take_while(|l| !l.starts_with("note: ") && !l.starts_with("input: "))
        .collect();
    assert_eq!(explorer, cli);
    assert!(cli
        .iter()
        .any(|l| l.starts_with("+Kernel       rr_scale_global")));
    // G reaches the last line; d goes back to the fields, from the top.
    key(&mut a, KeyCode::Char('G'));
    assert_eq!(
        a.descriptor.scroll,
        a.descriptor.lines(&a).saturating_sub(a.content_lines())
    );
    key(&mut a, KeyCode::Char('d'));
    assert!(!a.descriptor.text_diff);
    assert_eq!(a.descriptor.scroll, 0);
    assert_eq!(a.descriptor.lines(&a), 1 + compared.len());
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
    key(&mut a, KeyCode::Char('D'));
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
    // The old X,Y,Z is taken, shown as written now, with the advice `replay --grid` gives.
    assert!(
        status(&a).contains("grid override 1x1x2 (X,Y,Z is deprecated: write XxYxZ)"),
        "{}",
        status(&a)
    );
    // Ctrl-U clears what is before the cursor; an empty grid means "as recorded".
    key(&mut a, KeyCode::Char('D'));
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
        ('D', "0x1x1"),
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
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0x4000);
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
            candidate: false,
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
    let lines = a.descriptor.lines(&a);
    assert!(
        lines > a.content_lines(),
        "the fixture's descriptor is taller than 24 lines"
    );
    assert_eq!(a.descriptor.scroll + a.content_lines(), lines);
    key(&mut a, KeyCode::Char('j'));
    assert_eq!(
        a.descriptor.scroll + a.content_lines(),
        lines,
        "no scrolling past it"
    );
    key(&mut a, KeyCode::Char('k'));
    assert_eq!(a.descriptor.scroll + a.content_lines(), lines - 1);

    let cmds = key(&mut a, KeyCode::Char('3'));
    finish_index(&mut a, cmds);
    key(&mut a, KeyCode::Char('z'));
    key(&mut a, KeyCode::End);
    let s = a.snapshots.view.as_ref().unwrap();
    let rows = a.snapshots.rows(&a);
    let shown = s.lines(rows);
    assert_eq!(shown.len(), rows, "a full view");
    assert_eq!(
        shown.last(),
        Some(&rr_tui::tui::app::screens::snapshots::view::Line::Row(
            s.len() - s.row
        ))
    );

    key(&mut a, KeyCode::Char('?'));
    key(&mut a, KeyCode::End);
    let total =
        rr_tui::tui::keymap::help_rows(a.scope(), rr_tui::tui::keymap::help_popup_width(a.width))
            .len();
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
    assert_eq!(a.snapshots.view.as_ref().unwrap().row, 16);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "0x4018");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0x4010);
    a.update(Msg::Resize(80, 24));
    assert_eq!(a.snapshots.view.as_ref().unwrap().row, 8);
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0x4010);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "0x4018");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0x4018);
    key(&mut a, KeyCode::Char('N'));
    let before = *run_starts(&a).iter().rev().find(|&&r| r < 0x4018).unwrap();
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, before / 8 * 8);
    a.update(Msg::Resize(50, 24));
    assert_eq!(a.snapshots.view.as_ref().unwrap().row, 4);
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

/// An event of a sweep, as the runtime delivers it.
fn tune_ev(run: u64, event: Event) -> Msg {
    Msg::Tune(rr_engine::replay::Tagged { run, event })
}

fn sweep_trial(grid: u32, block: u32, status: Status, median: f64, recorded: bool) -> Msg {
    let mut t = Trial::new(
        Config {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            shared_mem: 0,
            max_registers: None,
            variant: None,
        },
        status,
    );
    if status == Status::Ok {
        t.kernel_ns = Some(rr_engine::replay::stats::Stats::of(&[
            median * 0.99,
            median,
            median * 1.01,
        ]));
    }
    t.recorded = recorded;
    tune_ev(0, Event::Trial(Box::new(t)))
}

/// The same message for run `run`.
fn of_run(run: u64, m: Msg) -> Msg {
    match m {
        Msg::Tune(t) => tune_ev(run, t.event),
        other => other,
    }
}

/// `u` opens the tuning screen of the selected instance; `r` starts the sweep the form
/// describes. Returns its run id and job.
fn start_sweep(a: &mut App) -> (u64, Box<rr_tune::job::TuneJob>) {
    match key(a, KeyCode::Char('r')).into_iter().next() {
        Some(Cmd::StartTune { run, job, .. }) => (run, job),
        _ => panic!("no sweep started: {:?}", a.status),
    }
}

/// Defines without a source: `rr-tui tune -D` refuses them, and the tuning form, which counted
/// 72 configurations and started the sweep, refuses them in the same words (one rule,
/// `tune::job::source_flags_problem`): its info line says why and `r` starts nothing.
#[test]
fn the_tune_form_refuses_defines_without_a_source_as_the_command_does() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('u'));
    let json = a.rows[a.current().unwrap()].json_path.clone();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .arg("tune")
        .arg(&json)
        .args([
            "-D",
            "TILE=1,2,4",
            "-D",
            "T=float,double",
            "--block",
            "32..1024*2",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let said = stderr
        .trim_end()
        .strip_prefix("rr-tui: error: ")
        .unwrap()
        .to_string();
    a.tune.form.settings.defines = "TILE=1,2,4; T=float,double".into();
    assert_eq!(a.tune.form.settings.space_size(), Err(said.clone()));
    assert!(
        key(&mut a, KeyCode::Char('r')).is_empty(),
        "a sweep started"
    );
    assert_eq!(a.jobs.of(GpuWork::Sweep), None);
    let status = a.status.as_ref().unwrap();
    assert!(
        status.error && status.text == format!("defines: {said}"),
        "{status:?}"
    );
    assert_eq!(a.tune.form.field(), rr_tui::tui::app::Field::Defines);
}

#[test]
fn a_sweep_streams_into_the_heatmap_and_the_table_and_is_kept_per_instance() {
    use std::time::{Duration, Instant};
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('u'));
    assert_eq!(a.screen, Screen::Tune);
    let me = a.current().unwrap();
    let (run, job) = start_sweep(&mut a);
    assert_eq!(a.jobs.of(GpuWork::Sweep), Some(me));
    assert_eq!(job.descriptor, a.rows[me].json_path);
    assert_eq!(
        (job.run_id, job.timing.cold, job.events),
        (run, Some(true), true)
    );
    assert!(
        key(&mut a, KeyCode::Char('r')).is_empty(),
        "one sweep at a time"
    );
    assert!(
        key(&mut a, KeyCode::Char('v')).is_empty(),
        "no replay during a sweep"
    );
    assert!(
        status(&a).starts_with("a sweep of rr_saxpy is running"),
        "{}",
        status(&a)
    );

    let t0 = Instant::now();
    a.update(Msg::Tick(t0));
    a.update(tune_ev(
        run,
        Event::Sweep {
            configs: 6,
            planned: 6,
            devices: vec![0],
            strategy: "exhaustive".into(),
            seed: Some(42),
            recorded: None,
            defines: Default::default(),
        },
    ));
    a.update(tune_ev(
        run,
        Event::Device {
            name: "NVIDIA H200".into(),
            sm: 90,
            ordinal: 0,
            rated_clock_mhz: Some(1980.0),
        },
    ));
    for m in [
        sweep_trial(8, 128, Status::Ok, 2000.0, true),
        sweep_trial(32, 32, Status::Ok, 3000.0, false),
        sweep_trial(16, 64, Status::VerifyFailed, 0.0, false),
        sweep_trial(4, 256, Status::Ok, 1000.0, false),
        sweep_trial(2, 512, Status::Fault, 0.0, false),
        sweep_trial(1, 1024, Status::Skipped, 0.0, false),
    ] {
        a.update(of_run(run, m));
    }
    a.update(Msg::Tick(t0 + Duration::from_secs(5)));
    {
        let r = &a.tune.runs[&me];
        assert_eq!(r.planned, Some(6));
        assert_eq!(r.report.seed, 42);
        assert_eq!(r.report.devices[0].rated_clock_mhz, 1980.0);
        assert_eq!(r.heat.rows.len(), 6, "cover: one grid per block");
        assert_eq!(r.heat.cols[0].label, "32", "sorted");
        let at = |g: u32, b: u32| {
            r.heat.place(&Config {
                grid: [g, 1, 1],
                block: [b, 1, 1],
                shared_mem: 0,
                max_registers: None,
                variant: None,
            })
        };
        let (row, col) = at(2, 512);
        assert_eq!(
            r.heat.cell(&row, &col).unwrap().failure,
            Some(Status::Fault)
        );
        let (row, col) = at(8, 128);
        assert!(r.heat.cell(&row, &col).unwrap().recorded);
        let ranked = r.report.ranking(10);
        assert_eq!(ranked.len(), 3);
        assert_eq!(ranked[0].config.block, [256, 1, 1]);
        assert_eq!(r.report.speedup, Some(2.0));
        assert_eq!(r.measured(), 5, "skipped configurations are not launched");
        assert_eq!(r.rate(), Some(1.0));
    }
    a.update(tune_ev(run, Event::Done { ok: true }));
    assert_eq!(a.jobs.of(GpuWork::Sweep), None);
    assert_eq!(a.tune.runs[&me].phase, Phase::Done);
    assert!(
        status(&a).contains("best grid 4x1x1 block 256x1x1") && status(&a).contains("2.00×"),
        "{}",
        status(&a)
    );
    // The clock stopped with the sweep.
    a.update(Msg::Tick(t0 + Duration::from_secs(50)));
    assert_eq!(
        a.tune.runs[&me].clock.elapsed(),
        Some(Duration::from_secs(5))
    );

    // Another instance has no sweep; coming back shows this one's again.
    key(&mut a, KeyCode::Char('1'));
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('u'));
    assert!(!a.tune.runs.contains_key(&a.current().unwrap()));
    key(&mut a, KeyCode::Char('x'));
    assert!(
        status(&a).starts_with("nothing to export"),
        "{}",
        status(&a)
    );
    key(&mut a, KeyCode::Char('1'));
    key(&mut a, KeyCode::Char('k'));
    key(&mut a, KeyCode::Char('5'));
    assert_eq!(a.current(), Some(me));
    assert_eq!(a.tune.runs[&me].report.trials.len(), 6);

    // Exports: CSV (Mneme's columns) and the JSON report; a second export never replaces the
    // first, nor a file that is in the way.
    let dir = tempfile::tempdir().unwrap();
    a.export_dir = dir.path().to_path_buf();
    let stem = a.rows[me].json_file.trim_end_matches(".json").to_string();
    key(&mut a, KeyCode::Char('x'));
    let csv = dir.path().join(format!("{stem}.tune.csv"));
    let json = dir.path().join(format!("{stem}.tune.json"));
    assert!(
        status(&a).contains(&csv.display().to_string()),
        "{}",
        status(&a)
    );
    assert!(
        status(&a).contains(&json.display().to_string()),
        "{}",
        status(&a)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 7);
    assert!(
        text.starts_with("Kernel-Name,GridDim-X,BlockDim-X,"),
        "{text}"
    );
    let report: TuneReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report.trials.len(), 6);
    assert_eq!(report.best.unwrap().config.block, [256, 1, 1]);
    assert_eq!(report.speedup, Some(2.0));
    assert_eq!((report.elapsed_s, report.configs_per_s), (5.0, 1.0));
    assert_eq!(report.axes.block.as_deref(), Some("32..1024*2"));
    std::fs::write(dir.path().join(format!("{stem}.tune-2.json")), "mine").unwrap();
    key(&mut a, KeyCode::Char('x'));
    assert!(status(&a).contains(".tune-3.csv"), "{}", status(&a));
    assert_eq!(
        std::fs::read_to_string(dir.path().join(format!("{stem}.tune-2.json"))).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        text,
        "the first export is intact"
    );
}

/// Cancelling kills the child; its last words (the reader's error and done) and any trial it
/// still printed belong to the cancelled run and never touch the next one.
#[test]
fn a_cancelled_sweeps_late_events_never_touch_the_next_sweep() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('5'));
    let (first, _) = start_sweep(&mut a);
    a.update(of_run(first, sweep_trial(8, 128, Status::Ok, 2000.0, true)));
    let cmds = key(&mut a, KeyCode::Char('c'));
    assert!(cmds.iter().any(|c| matches!(c, Cmd::CancelTune)));
    assert_eq!(a.tune.runs[&0].phase, Phase::Cancelled);
    assert!(
        status(&a).contains("1 configuration(s) kept"),
        "{}",
        status(&a)
    );
    a.update(of_run(first, sweep_trial(16, 64, Status::Ok, 1.0, false)));
    assert_eq!(
        a.tune.runs[&0].report.trials.len(),
        1,
        "nothing after the cancel"
    );

    let (second, _) = start_sweep(&mut a);
    assert_ne!(first, second);
    a.update(tune_ev(
        first,
        Event::Error {
            kind: rr_engine::replay::ErrorKind::Setup,
            message: "the tune process was killed (cancelled or crashed)".into(),
        },
    ));
    a.update(tune_ev(first, Event::Done { ok: false }));
    a.update(of_run(first, sweep_trial(4, 256, Status::Ok, 1.0, false)));
    let r = &a.tune.runs[&0];
    assert_eq!(r.phase, Phase::Running, "the new sweep is untouched");
    assert!(r.report.trials.is_empty() && r.heat.rows.is_empty());
    assert_eq!(a.jobs.of(GpuWork::Sweep), Some(0));
    a.update(of_run(
        second,
        sweep_trial(8, 128, Status::Ok, 2000.0, true),
    ));
    a.update(tune_ev(second, Event::Done { ok: true }));
    assert_eq!(a.tune.runs[&0].phase, Phase::Done);
    assert_eq!(a.tune.runs[&0].report.trials.len(), 1);
    // Quitting cancels whatever runs.
    let cmds = key(&mut a, KeyCode::Char('q'));
    assert!(cmds.iter().any(|c| matches!(c, Cmd::CancelTune)));
}

/// A sweep whose child died without `done` (its setup error on stderr) fails with the reason.
#[test]
fn a_failed_sweep_shows_the_childs_error() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('5'));
    let (run, _) = start_sweep(&mut a);
    a.update(tune_ev(
        run,
        Event::Phase {
            name: "warning".into(),
            detail: "GPU 0 given up: no CUDA driver found".into(),
        },
    ));
    a.update(tune_ev(
        run,
        Event::Error {
            kind: rr_engine::replay::ErrorKind::Setup,
            message: "the tune process exited with status 1 without finishing: rr-tui: no GPU could run the sweep".into(),
        },
    ));
    a.update(tune_ev(run, Event::Done { ok: false }));
    let r = &a.tune.runs[&0];
    assert!(matches!(&r.phase, Phase::Failed(m) if m.contains("no GPU could run the sweep")));
    assert_eq!(r.warnings, ["GPU 0 given up: no CUDA driver found"]);
    assert!(a.status.as_ref().unwrap().error);
    assert!(
        status(&a).contains("sweep of rr_saxpy failed"),
        "{}",
        status(&a)
    );
    assert_eq!(a.jobs.of(GpuWork::Sweep), None);
}

/// Every axis is checked by the engine's parser as it is typed; a value that does not parse
/// keeps the field open with the parser's own message, and nothing starts.
#[test]
fn the_form_rejects_bad_axes_with_the_engines_message() {
    use rr_tune::space;
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('u'));
    for (down, bad, why) in [
        (0, "4..2", space::parse_grid("4..2").unwrap_err()),
        (
            1,
            "32..1024*1",
            space::parse_dims("32..1024*1").unwrap_err(),
        ),
        (1, "1x2x3x4", space::parse_dims("1x2x3x4").unwrap_err()),
        (2, "16x2", space::parse_scalars("16x2", true).unwrap_err()),
        (3, "512", space::parse_registers("512").unwrap_err()),
    ] {
        key(&mut a, KeyCode::Char('g'));
        for _ in 0..down {
            key(&mut a, KeyCode::Char('j'));
        }
        key(&mut a, KeyCode::Enter);
        ctrl(&mut a, 'u');
        typed(&mut a, bad);
        let e = a.tune.form.editing.as_ref().expect("editing");
        assert_eq!(e.check, Err(why.clone()), "{bad}");
        key(&mut a, KeyCode::Enter);
        assert!(a.tune.form.editing.is_some(), "{bad}: refused, still open");
        key(&mut a, KeyCode::Esc);
    }
    assert_eq!(
        a.tune.form,
        rr_tui::tui::app::TuneForm {
            cursor: 3,
            ..Default::default()
        },
        "nothing changed"
    );
    // `r` while typing is text, not a start.
    key(&mut a, KeyCode::Char('g'));
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Enter);
    assert!(key(&mut a, KeyCode::Char('r')).is_empty());
    assert_eq!(a.tune.form.editing.as_ref().unwrap().editor.text(), "r");
    key(&mut a, KeyCode::Esc);
    // A space too large for `tune` is refused before anything starts.
    key(&mut a, KeyCode::Char('g'));
    key(&mut a, KeyCode::Enter);
    ctrl(&mut a, 'u');
    typed(&mut a, "1..65535");
    key(&mut a, KeyCode::Enter);
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Enter);
    ctrl(&mut a, 'u');
    typed(&mut a, "1..1024");
    key(&mut a, KeyCode::Enter);
    assert!(key(&mut a, KeyCode::Char('r')).is_empty());
    assert!(
        status(&a).contains("more than 16777216 configurations"),
        "{}",
        status(&a)
    );
}

#[test]
fn tuning_without_a_gpu_explains_and_starts_nothing() {
    let mut a = app("llvm-two-kernels", false);
    key(&mut a, KeyCode::Char('5'));
    assert!(key(&mut a, KeyCode::Char('r')).is_empty());
    assert!(
        status(&a).contains("cannot tune here: no CUDA driver"),
        "{}",
        status(&a)
    );
    key(&mut a, KeyCode::Char('c'));
    assert_eq!(status(&a), "nothing to cancel: no sweep is running");
    key(&mut a, KeyCode::Char('x'));
    assert!(
        status(&a).starts_with("nothing to export"),
        "{}",
        status(&a)
    );
}

/// The form refuses what `rr-tui tune` refuses, by the command's own rules: a budget past the
/// most a sweep measures (the CLI's parser and message), and registers on a record whose image
/// is a cubin (the command's pre-GPU check, run on a worker before anything starts).
#[test]
fn the_form_refuses_what_the_command_refuses() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('u'));
    let field = |a: &mut App, label: &str| {
        key(a, KeyCode::Char('g'));
        let at = rr_tui::tui::app::Field::ALL
            .iter()
            .position(|f| f.label() == label)
            .unwrap_or_else(|| panic!("no field {label}"));
        for _ in 0..at {
            key(a, KeyCode::Char('j'));
        }
        key(a, KeyCode::Enter);
        ctrl(a, 'u');
    };
    field(&mut a, "budget");
    typed(&mut a, "2000000");
    let e = a.tune.form.editing.as_ref().expect("editing");
    let form = e.check.clone().expect_err("the form refuses it");
    use clap::Parser;
    let cli = rr_tui::cli::Cli::try_parse_from(["rr-tui", "tune", "x.json", "--budget", "2000000"])
        .expect_err("the command refuses it")
        .to_string();
    assert!(cli.contains(&form), "form: {form}\ncommand: {cli}");
    key(&mut a, KeyCode::Esc);
    field(&mut a, "registers");
    typed(&mut a, "32,64");
    key(&mut a, KeyCode::Enter);
    assert!(key(&mut a, KeyCode::Char('r')).is_empty(), "nothing starts");
    assert!(
        status(&a).contains("cannot tune rr_saxpy: --registers needs a record holding PTX"),
        "{}",
        status(&a)
    );
    assert_eq!(a.jobs.of(GpuWork::Sweep), None);
}

/// An instance recorded without its output still shows its input: both sides, nothing
/// squeezed away, and the reason said.
#[test]
fn an_instance_without_output_shows_its_input() {
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let json = descriptor_of(&dir, "rr_saxpy");
    std::fs::remove_file(json.with_extension("record_output")).unwrap();
    let mut a = rr_tui::tui::load_app(dir, Ok(()), std::env::temp_dir()).unwrap();
    let i = a
        .rows
        .iter()
        .position(|r| r.json_path == json)
        .expect("the instance is listed");
    while a.current() != Some(i) {
        key(&mut a, KeyCode::Char('j'));
    }
    let cmds = key(&mut a, KeyCode::Char('3'));
    finish_index(&mut a, cmds);
    let s = a.snapshots.view.as_ref().expect("the input is shown");
    assert!(std::sync::Arc::ptr_eq(&s.a, &s.b) && !s.squeeze);
    assert!(
        status(&a).contains("no output was recorded"),
        "{}",
        status(&a)
    );
}

/// What an LLVM 16–17 record lacks (image, start address) is given on the replay screen, checked
/// by the command's rules, and goes with replays and sweeps.
#[test]
fn legacy_records_get_their_image_and_start_in_the_explorer() {
    let mut a = app("llvm16-saxpy", true);
    // The kernel's cubin (the two-kernel fixture's image holds rr_saxpy).
    let image = std::fs::read_dir(fixture("llvm-two-kernels"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "image"))
        .unwrap();
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('I'));
    typed(&mut a, "/nonexistent/k.cubin");
    key(&mut a, KeyCode::Enter);
    assert!(
        a.prompt.as_ref().and_then(|p| p.error.clone()).is_some(),
        "refused"
    );
    ctrl(&mut a, 'u');
    typed(&mut a, &image.display().to_string());
    key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none(), "{:?}", a.prompt);
    key(&mut a, KeyCode::Char('A'));
    typed(&mut a, "0x7f0000000000");
    key(&mut a, KeyCode::Enter);
    assert!(status(&a).contains("0x7f0000000000"), "{}", status(&a));
    let request = key(&mut a, KeyCode::Char('r'))
        .into_iter()
        .find_map(|c| match c {
            Cmd::StartReplay { request, .. } => Some(request),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no replay started: {}", status(&a)));
    assert_eq!(request.supplied.image.as_deref(), Some(image.as_path()));
    assert_eq!(request.supplied.base_address, Some(0x7f00_0000_0000));
}

/// A block override the command refuses (past the hardware's thread limit) is refused as it is
/// given, with the command's message, and no replay starts with it.
#[test]
fn a_replay_the_command_refuses_does_not_start() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('B'));
    typed(&mut a, "2048");
    key(&mut a, KeyCode::Enter);
    let refused = a.prompt.as_ref().and_then(|p| p.error.clone());
    assert!(
        refused
            .as_deref()
            .is_some_and(|e| e.contains("block 2048×1×1 has more than 1024 threads")),
        "{refused:?}"
    );
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.settings.block, None, "the refused value was kept");
    assert_eq!(a.jobs.of(GpuWork::Replay), None);
}

/// A large directory draws before its descriptors are read: rows past the first ones start from
/// the directory listing and are filled in by workers after the first frame.
#[test]
fn a_large_directory_draws_first_and_fills_its_rows_in() {
    let t = tempfile::tempdir().unwrap();
    let src = descriptor_of(&fixture("rrtui-v2-stencil3d"), "rr_stencil3d");
    copy_dir(&fixture("rrtui-v2-stencil3d"), t.path());
    let text = std::fs::read(&src).unwrap();
    let globals = std::fs::read(src.with_extension("globals")).unwrap();
    let n = rr_tui::tui::app::instances::EAGER_ROWS + 50;
    for i in 0..n {
        let stem = format!("3844743599784193033_{}", 1_000_000_000_000u64 + i as u64);
        std::fs::write(t.path().join(format!("{stem}.json")), &text).unwrap();
        std::fs::write(t.path().join(format!("{stem}.globals")), &globals).unwrap();
    }
    let mut a =
        rr_tui::tui::load_app(t.path().to_path_buf(), Ok(()), std::env::temp_dir()).unwrap();
    assert_eq!(a.rows.len(), n + 2);
    assert!(
        a.rows.iter().any(|r| r.grid.is_none()),
        "placeholders first"
    );
    assert!(!a.pending_rows.is_empty());
    a.update_inline(Msg::FirstFrameDrawn);
    assert!(a.pending_rows.is_empty() && a.rows_loading.is_none());
    assert!(
        a.rows.iter().all(|r| r.grid == Some([2, 2, 4])),
        "every row read"
    );
    assert!(status(&a).starts_with("all "), "{}", status(&a));
}

/// An instance no replay can run (LLVM 19–22 lost its arguments) is marked in the table, and a
/// replay or sweep of it is refused with the reason, before anything starts.
#[test]
fn an_unreplayable_instance_says_why_and_starts_nothing() {
    let mut a = app("llvm19-saxpy", true);
    let i = a.current().expect("an instance");
    assert!(a.rows[i].unreplayable.is_some());
    key(&mut a, KeyCode::Char('4'));
    let cmds = key(&mut a, KeyCode::Char('r'));
    assert!(!cmds.iter().any(|c| matches!(c, Cmd::StartReplay { .. })));
    assert!(
        status(&a).contains("cannot be replayed: LLVM 19–22 recorded the host addresses"),
        "{}",
        status(&a)
    );
}

/// Enter with nothing to open stays on the table and says why.
#[test]
fn enter_on_an_empty_filter_says_why() {
    let mut a = app("llvm-two-kernels", false);
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "no-such-kernel");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.view.len(), 0);
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.screen, Screen::Instances);
    assert!(
        status(&a).contains("the filter matches none"),
        "{}",
        status(&a)
    );
}

/// `C` names an A/B candidate; `r` then replays both: the request carries the candidate, the
/// screen shows both kernels' times, the candidate's failed verification and the verdict.
#[test]
fn an_ab_replay_shows_both_kernels_and_the_verdict() {
    use rr_engine::replay::ab;
    let mut a = app("llvm-two-kernels", true);
    let dir = tempfile::tempdir().unwrap();
    let cand = dir.path().join("faster.cu");
    std::fs::write(&cand, "extern \"C\" __global__ void k() {}").unwrap();
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('C'));
    typed(&mut a, &dir.path().join("missing.cu").display().to_string());
    key(&mut a, KeyCode::Enter);
    assert!(
        a.prompt.is_some(),
        "a missing file is refused in the prompt"
    );
    ctrl(&mut a, 'u');
    // Only the candidate's own flags may follow the file.
    typed(&mut a, &format!("{} --repetitions 5", cand.display()));
    key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_some(), "other flags are refused in the prompt");
    ctrl(&mut a, 'u');
    typed(
        &mut a,
        &format!(
            "'{}' -D TILE=32 --nvrtc-opt=--use_fast_math",
            cand.display()
        ),
    );
    key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none(), "{}", status(&a));
    assert!(status(&a).contains("A/B against"), "{}", status(&a));
    let Some(Cmd::StartReplay { instance, request }) =
        key(&mut a, KeyCode::Char('r')).into_iter().next()
    else {
        panic!("no replay started: {}", status(&a))
    };
    let spec = request.candidate.as_ref().unwrap();
    assert_eq!(spec.path, cand);
    assert_eq!(spec.defines[0].option(), "-DTILE=32");
    assert_eq!(spec.options, ["--use_fast_math"]);
    assert!(request.repetitions >= ab::MIN_PAIRS as u32);
    // The job the replay process is handed carries the candidate as it was set.
    let sent: rr_engine::replay::ReplayRequest =
        rr_engine::job::decode(&rr_engine::job::encode(&*request).unwrap()).unwrap();
    assert_eq!(sent.candidate.as_ref(), Some(spec));
    let run = request.run_id;
    a.update(ev(
        run,
        Event::Candidate {
            path: cand.display().to_string(),
            kernel: "k".into(),
            kind: "compiled from faster.cu with NVRTC for sm_90".into(),
            compile_seconds: Some(0.25),
        },
    ));
    a.update(ev(
        run,
        Event::Verify(rr_engine::replay::VerifyOutcome {
            passed: false,
            mode: "bytes".into(),
            expected_len: 64,
            replayed_len: 64,
            missing_bytes: 0,
            differing_bytes: 4,
            differing_ranges: 1,
            first_ranges: vec![[8, 4]],
            regions: vec![],
            on_device: false,
            candidate: true,
        }),
    ));
    let (mut x, mut y) = (vec![], vec![]);
    for i in 0..10u32 {
        for (candidate, ns) in [(false, 1000.0), (true, 800.0)] {
            let ns = ns + f64::from(i % 3);
            if candidate {
                y.push(ns)
            } else {
                x.push(ns)
            }
            a.update(ev(
                run,
                Event::Rep {
                    index: i + 1,
                    kernel_ns: ns,
                    host_ns: 5000.0,
                    restore_ns: 10.0,
                    clock_mhz: None,
                    throttled: false,
                    candidate,
                },
            ));
        }
    }
    a.update(ev(run, Event::Compare(ab::judge(&x, &y).unwrap())));
    a.update(ev(run, Event::Done { ok: false }));
    let r = &a.replay.runs[&instance];
    assert_eq!(r.kernel_ns.len(), 10);
    assert_eq!(r.candidate.as_ref().unwrap().kernel_ns.len(), 10);
    assert_eq!(
        r.badge().0,
        "mismatch",
        "the candidate's verification decides"
    );
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 40)).unwrap();
    let theme = rr_tui::settings::theme::Theme::new(rr_tui::cli::Theme::Dark);
    t.draw(|f| rr_tui::tui::ui::draw(&a, &theme, f)).unwrap();
    let screen = t.backend().to_string();
    for want in [
        "recorded kernel (CUDA events)",
        "candidate (CUDA events)",
        "candidate (events)",
        "the candidate's result differs (bytes)",
        "candidate 0.800×",
        "faster",
        "A/B ",
    ] {
        assert!(screen.contains(want), "{want:?} not on screen:\n{screen}");
    }
}

/// `a` shows the heatmap on the next two axes that vary: a compile-time sweep's define axes
/// (told by the `sweep` event) become rows and columns, the recorded image a row of its own.
#[test]
fn the_heatmap_picks_its_axes_among_those_that_vary() {
    use rr_tui::tui::app::screens::tune::heatmap::HeatAxis;
    use rr_tune::defines::{DefineAxis, Defines};
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('u'));
    let me = a.current().unwrap();
    let (run, _) = start_sweep(&mut a);
    let defines = Defines::new(vec![
        DefineAxis::parse("TILE=1,2").unwrap(),
        DefineAxis::parse("T=float,double").unwrap(),
    ])
    .unwrap();
    a.update(tune_ev(
        run,
        Event::Sweep {
            configs: 4,
            planned: 5,
            devices: vec![0],
            strategy: "exhaustive".into(),
            seed: None,
            recorded: None,
            defines: defines.clone(),
        },
    ));
    a.update(of_run(run, sweep_trial(8, 128, Status::Ok, 900.0, true)));
    for v in 0..4u32 {
        let Msg::Tune(mut t) = of_run(
            run,
            sweep_trial(8, 128, Status::Ok, 500.0 + v as f64, false),
        ) else {
            unreachable!()
        };
        if let Event::Trial(trial) = &mut t.event {
            trial.config.variant = Some(v);
        }
        a.update(Msg::Tune(t));
    }
    let axes = |a: &App| a.tune.runs[&me].heat.axes;
    assert_eq!(axes(&a), (HeatAxis::Grid, HeatAxis::Block));
    key(&mut a, KeyCode::Char('a'));
    // Grid and block do not vary here: the defines do.
    assert_eq!(axes(&a), (HeatAxis::Define(0), HeatAxis::Define(1)));
    assert!(status(&a).contains("heatmap: TILE × T"), "{}", status(&a));
    let heat = &a.tune.runs[&me].heat;
    let labels: Vec<&str> = heat.rows.iter().map(|k| k.label.as_str()).collect();
    assert_eq!(labels, ["recorded", "1", "2"]);
    key(&mut a, KeyCode::Char('a'));
    assert_eq!(axes(&a), (HeatAxis::Define(1), HeatAxis::Define(0)));
    key(&mut a, KeyCode::Char('a'));
    assert_eq!(
        axes(&a),
        (HeatAxis::Grid, HeatAxis::Block),
        "round and back"
    );
}

/// A replay of an instance with more than a GiB of memory writes no `.replay_output` (it is
/// verified on the GPU, and the kept replay process takes the next instance in a fraction of a
/// second instead of writing tens of GiB); the output → replay pair then says how to get it.
#[test]
fn a_large_instances_replay_keeps_no_output_and_says_so() {
    // In a directory whose name has a space: the command it gives must run as pasted.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("my records");
    copy_dir(&fixture("llvm-two-kernels"), &dir);
    let stem = dir.join("12965991079383468724_4571022325904014944");
    let size = 3u64 << 29; // 1.5 GiB, sparse
    for side in ["record_input", "record_output"] {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(stem.with_extension(side))
            .unwrap();
        f.set_len(size).unwrap();
    }
    let json = stem.with_extension("json");
    let text = std::fs::read_to_string(&json)
        .unwrap()
        .replace("\"VAllocSize\":268435456", "\"VAllocSize\":2147483648");
    std::fs::write(&json, text).unwrap();
    let mut a = rr_tui::tui::load_app(dir, Ok(()), std::env::temp_dir()).unwrap();
    let i = (0..a.rows.len())
        .find(|&i| a.rows[i].json_path == json)
        .unwrap();
    while a.current() != Some(i) {
        key(&mut a, KeyCode::Down);
    }
    let cmds = key(&mut a, KeyCode::Char('v'));
    let Some(Cmd::StartReplay { request, .. }) = cmds.into_iter().next() else {
        panic!("no replay started: {}", status(&a))
    };
    assert!(
        !request.save_output,
        "1.5 GiB: verified on the GPU, not saved"
    );
    a.update(ev(request.run_id, Event::Done { ok: true }));
    key(&mut a, KeyCode::Char('3'));
    key(&mut a, KeyCode::Char('p'));
    let said = status(&a);
    assert!(
        said.contains("keeps no replay output over 1 GiB") && said.contains("--save-output"),
        "{said}"
    );
    let command = said.split('`').nth(1).unwrap();
    let words = shell_words::split(command).unwrap();
    assert_eq!(words[2], json.display().to_string(), "{said}");
}

/// A kept replay process says what it did with the last replay's memory on a line of its own
/// that later events do not overwrite; `c` with no replay running ends a kept process.
#[test]
fn the_kept_replay_process_is_shown_and_c_ends_it() {
    let mut a = app("llvm-two-kernels", true);
    let cmds = key(&mut a, KeyCode::Char('v'));
    let Some(Cmd::StartReplay { instance, request }) = cmds.into_iter().next() else {
        panic!("no replay started")
    };
    let run = request.run_id;
    let switched = "2.00 GiB of 2.00 GiB kept on the GPU, 2.00 MiB read and uploaded, in 0.087 s";
    a.update(ev(
        run,
        Event::Phase {
            name: "switched".into(),
            detail: switched.into(),
        },
    ));
    a.update(ev(
        run,
        Event::Summary {
            kernel_ns: Default::default(),
            host_ns: Default::default(),
            restore_ns: Default::default(),
            clock_mhz: None,
            discarded: 0,
            reference_clock_mhz: None,
        },
    ));
    a.update(ev(run, Event::Done { ok: true }));
    assert_eq!(
        a.replay.runs[&instance].memory.as_deref(),
        Some(format!("memory kept from the last replay: {switched}").as_str())
    );
    assert_eq!(a.replay.runs[&instance].detail, "repetitions done");

    // Nothing kept: nothing to cancel. Kept (the runtime says so): `c` ends it.
    assert!(key(&mut a, KeyCode::Char('c')).is_empty());
    assert!(status(&a).contains("nothing to cancel"), "{}", status(&a));
    a.jobs.kept = true;
    let cmds = key(&mut a, KeyCode::Char('c'));
    assert!(matches!(cmds.as_slice(), [Cmd::CancelReplay]));
    assert!(
        status(&a).contains("its GPU memory is free"),
        "{}",
        status(&a)
    );
}

/// A message is about the screen it was said on: changing screens clears it, unless what
/// changed the screen says something itself.
#[test]
fn a_message_does_not_follow_to_another_screen() {
    let mut a = app("llvm-two-kernels", false);
    key(&mut a, KeyCode::Char('v'));
    assert!(status(&a).contains("cannot replay here"));
    key(&mut a, KeyCode::Char('2'));
    assert!(a.status.is_none(), "{:?}", a.status);
    key(&mut a, KeyCode::Char('v'));
    key(&mut a, KeyCode::Tab);
    assert!(a.status.is_none(), "{:?}", a.status);
}

/// On the replay screen `G` goes to the bottom as everywhere; `D` edits the grid override.
#[test]
fn on_the_replay_screen_g_is_bottom_and_d_the_grid() {
    let mut a = app("llvm-two-kernels", true);
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Char('G'));
    assert!(a.prompt.is_none(), "{:?}", a.prompt);
    key(&mut a, KeyCode::Char('D'));
    assert_eq!(
        a.prompt.as_ref().map(|p| p.kind),
        Some(rr_tui::tui::app::PromptKind::Grid)
    );
}

/// `t` steps forward through the types, `T` back (f32 is two presses from hex, not eleven),
/// and `i` picks one by name; a name that is no type keeps the prompt open with the list.
#[test]
fn snapshot_types_go_both_ways_and_by_name() {
    use rr_engine::diff::DType;
    let mut a = app("llvm-two-kernels", false);
    let cmds = key(&mut a, KeyCode::Enter);
    finish_index(&mut a, cmds);
    let dtype = |a: &App| a.snapshots.view.as_ref().unwrap().dtype;
    key(&mut a, KeyCode::Char('t'));
    assert_eq!(dtype(&a), Some(DType::U8));
    key(&mut a, KeyCode::Char('T'));
    assert_eq!(dtype(&a), None, "back to hex");
    key(&mut a, KeyCode::Char('T'));
    assert_eq!(dtype(&a), Some(DType::F64));
    key(&mut a, KeyCode::Char('T'));
    assert_eq!(dtype(&a), Some(DType::F32));
    key(&mut a, KeyCode::Char('i'));
    typed(&mut a, "bf16");
    key(&mut a, KeyCode::Enter);
    assert_eq!(dtype(&a), Some(DType::BF16));
    assert!(status(&a).contains("typed view: bf16"), "{}", status(&a));
    key(&mut a, KeyCode::Char('i'));
    typed(&mut a, "float");
    key(&mut a, KeyCode::Enter);
    let why = a
        .prompt
        .as_ref()
        .and_then(|p| p.error.clone())
        .expect("refused");
    assert!(why.contains("f32"), "{why}");
    assert_eq!(dtype(&a), Some(DType::BF16));
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('i'));
    typed(&mut a, "HEX");
    key(&mut a, KeyCode::Enter);
    assert_eq!(dtype(&a), None);
}

/// `n`/`N` say which differing range (as the title counts them) they reached, of how many.
#[test]
fn next_and_previous_difference_say_which_of_how_many() {
    let mut a = app("llvm-two-kernels", false);
    let cmds = key(&mut a, KeyCode::Enter);
    finish_index(&mut a, cmds);
    let n = a.snapshots.view.as_ref().unwrap().index.ranges.len();
    assert!(n >= 1);
    key(&mut a, KeyCode::Char('n'));
    assert!(
        status(&a).contains(&format!("differing range 1 of {n}")),
        "{}",
        status(&a)
    );
    key(&mut a, KeyCode::Char('G'));
    key(&mut a, KeyCode::Char('N'));
    assert!(
        status(&a).contains(&format!("differing range {n} of {n}")),
        "{}",
        status(&a)
    );
}

/// Run a search the way the runtime does (on this thread) and feed its answer back.
fn finish_search(app: &mut App, cmds: Vec<Cmd>) {
    for c in cmds {
        if let Cmd::StartSearch { job, a, b, query } = c {
            let result =
                rr_engine::diff::search::find(&a, &b, &query, &AtomicBool::new(false), |_, _| {});
            app.update(Msg::Search {
                job,
                event: rr_engine::diff::search::SearchEvent::Done(result),
            });
        }
    }
}

/// `/` finds bytes (hex view) or a value of the view's type on either side, on a worker; `>`
/// and `<` go to the next and previous match; what is no value keeps the prompt open.
#[test]
fn search_finds_bytes_and_typed_values_forward_and_back() {
    let mut a = app("llvm-two-kernels", false);
    let cmds = key(&mut a, KeyCode::Enter);
    finish_index(&mut a, cmds);
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "d9 ce ff bf");
    let cmds = key(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none());
    assert!(matches!(cmds.first(), Some(Cmd::StartSearch { .. })));
    finish_search(&mut a, cmds);
    let s = a.snapshots.view.as_ref().unwrap();
    assert_eq!(s.cursor, Some(0x4004));
    assert_eq!(s.top, 0x4004 / s.row * s.row);
    assert!(status(&a).contains("right side only"), "{}", status(&a));
    let cmds = key(&mut a, KeyCode::Char('<'));
    finish_search(&mut a, cmds);
    assert!(
        status(&a).contains("no d9 ce ff bf before"),
        "{}",
        status(&a)
    );

    // In the f32 view a value: its bytes, at element offsets, on whichever side holds them.
    key(&mut a, KeyCode::Char('i'));
    typed(&mut a, "f32");
    key(&mut a, KeyCode::Enter);
    key(&mut a, KeyCode::Char('g'));
    key(&mut a, KeyCode::Char('/'));
    ctrl(&mut a, 'u');
    typed(&mut a, "-2");
    let cmds = key(&mut a, KeyCode::Enter);
    finish_search(&mut a, cmds);
    let s = a.snapshots.view.as_ref().unwrap();
    let at = s.cursor.expect("found");
    assert_eq!(at % 4, 0);
    let holds = |side: &rr_engine::snapshot::Snapshot| side.window(at, 4) == (-2f32).to_le_bytes();
    assert!(holds(&s.a) || holds(&s.b));
    let first = at;
    let cmds = key(&mut a, KeyCode::Char('>'));
    finish_search(&mut a, cmds);
    let next = a.snapshots.view.as_ref().unwrap().cursor.unwrap();
    assert!(next > first, "{next:#x} after {first:#x}");
    let cmds = key(&mut a, KeyCode::Char('<'));
    finish_search(&mut a, cmds);
    assert_eq!(a.snapshots.view.as_ref().unwrap().cursor, Some(first));

    key(&mut a, KeyCode::Char('/'));
    ctrl(&mut a, 'u');
    typed(&mut a, "minus two");
    let cmds = key(&mut a, KeyCode::Enter);
    assert!(cmds.is_empty());
    assert!(a.prompt.as_ref().and_then(|p| p.error.as_ref()).is_some());
}

/// The bundled `record-fixtures/`: a directory of record directories, none of its own.
fn fixtures_app() -> App {
    let dir = fixture("llvm-two-kernels").parent().unwrap().to_path_buf();
    let mut a = rr_tui::tui::load_app(
        dir,
        Err("no CUDA driver found".into()),
        std::env::temp_dir(),
    )
    .unwrap();
    // The search for record directories runs on a worker once the first frame is drawn.
    a.update_inline(Msg::FirstFrameDrawn);
    a
}

#[test]
fn a_directory_of_records_opens_a_picker_and_esc_comes_back_to_it() {
    let mut a = fixtures_app();
    assert!(a.picking);
    let found = &a.picker.as_ref().unwrap().below.found;
    assert_eq!(found.len(), 7);
    assert_eq!(
        (found[1].name.as_str(), found[1].instances),
        ("llvm-two-kernels", 4)
    );
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    assert!(!a.picking);
    assert!(a.dir.ends_with("llvm-two-kernels"), "{:?}", a.dir);
    assert_eq!(a.rows.len(), 4);
    assert_eq!(
        a.checked,
        Some(4),
        "the opened record is checked as a first frame's"
    );
    // Esc keeps its meaning elsewhere: from another screen it goes to the instance list.
    key(&mut a, KeyCode::Char('2'));
    key(&mut a, KeyCode::Esc);
    assert_eq!((a.screen, a.picking), (Screen::Instances, false));
    let cmds = key(&mut a, KeyCode::Esc);
    assert!(
        a.picking,
        "Esc on the instance list goes back to the picker"
    );
    assert!(cmds.iter().any(|c| matches!(c, Cmd::CancelReplay)));
    // Its top line names the directory given again, not the record just left.
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 24)).unwrap();
    let theme = rr_tui::settings::theme::Theme::new(rr_tui::cli::Theme::Dark);
    t.draw(|f| rr_tui::tui::ui::draw(&a, &theme, f)).unwrap();
    let top: String = t.backend().to_string().lines().next().unwrap().to_string();
    assert!(
        top.contains("record-fixtures") && !top.contains("llvm-two-kernels"),
        "{top}"
    );
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    assert!(a.dir.ends_with("llvm16-saxpy"), "{:?}", a.dir);
    assert_eq!(a.rows.len(), 1);
    assert!(!key(&mut a, KeyCode::Char('q')).is_empty() && a.quit);
}

/// The picker counts its record directories as the instance list counts its instances (not
/// the position of the selection); a record opened from it is named below the picker's
/// directory in the top line (not `r…/rrtui-stencil3d` at 80 columns), and its instance list's
/// hint bar says that Esc goes back to the picker.
#[test]
fn a_record_opened_from_the_picker_is_named_below_it_and_esc_is_hinted() {
    let draw = |a: &App| -> Vec<String> {
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
        let theme = rr_tui::settings::theme::Theme::new(rr_tui::cli::Theme::Dark);
        t.draw(|f| rr_tui::tui::ui::draw(a, &theme, f)).unwrap();
        t.backend()
            .to_string()
            .lines()
            .map(|l| l.trim_matches('"').to_string())
            .collect()
    };
    let mut a = fixtures_app();
    a.update(Msg::Resize(80, 24));
    let at = a
        .picker
        .as_ref()
        .unwrap()
        .below
        .found
        .iter()
        .position(|r| r.name == "rrtui-stencil3d")
        .unwrap();
    for _ in 0..at {
        key(&mut a, KeyCode::Down);
    }
    let picker = draw(&a).join("\n");
    assert!(picker.contains("7 record directories"), "{picker}");
    assert!(!picker.contains("of 7 record"), "{picker}");
    key(&mut a, KeyCode::Enter);
    assert!(a.dir.ends_with("rrtui-stencil3d"), "{:?}", a.dir);
    let shown = draw(&a);
    assert!(
        shown[0].trim_end().ends_with(" rrtui-stencil3d"),
        "{}",
        shown[0]
    );
    assert!(!shown[0].contains('…'), "{}", shown[0]);
    let hints = shown[shown.len() - 2..].join("\n");
    assert!(hints.contains("Esc records"), "{hints}");
    // Elsewhere Esc means what it always has: no such hint.
    key(&mut a, KeyCode::Char('2'));
    let hints = draw(&a)[22..].join("\n");
    assert!(!hints.contains("Esc records"), "{hints}");
    // A record given directly: no picker to go back to.
    let b = app("llvm-two-kernels", false);
    let hints = draw(&b)[22..].join("\n");
    assert!(!hints.contains("Esc records"), "{hints}");
}

#[test]
fn a_record_given_directly_keeps_esc_as_it_was() {
    let mut a = app("llvm-two-kernels", false);
    assert!(!a.picking && a.picker.is_none());
    key(&mut a, KeyCode::Esc);
    assert_eq!((a.screen, a.picking), (Screen::Instances, false));
}

#[test]
fn answers_about_the_record_left_are_dropped() {
    let mut a = fixtures_app();
    key(&mut a, KeyCode::Enter); // llvm-no-report
                                 // The descriptor screen asks a worker to inspect the selected instance; it answers late.
    let late: Vec<Cmd> = a.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('2'),
        KeyModifiers::NONE,
    )));
    let late = late
        .into_iter()
        .find_map(|c| match c {
            Cmd::Work(w) => Some(w),
            _ => None,
        })
        .expect("an inspection on a worker");
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter); // llvm-two-kernels
    a.descriptor.inspections.clear();
    a.update_inline((late.0)());
    assert!(
        a.descriptor.inspections.is_empty(),
        "an inspection of the record left was applied"
    );
}

#[test]
fn an_empty_directory_opens_no_picker_and_says_so() {
    let empty = tempfile::tempdir().unwrap();
    let mut a = rr_tui::tui::load_app(
        empty.path().to_path_buf(),
        Err("no CUDA driver found".into()),
        std::env::temp_dir(),
    )
    .unwrap();
    a.update_inline(Msg::FirstFrameDrawn);
    assert!(!a.picking && a.picker.is_none() && a.rows.is_empty());
    let said = &a.status.as_ref().unwrap().text;
    assert!(said.starts_with("no instances in this directory"), "{said}");
}

/// `pid-N/` and `rank-N/` below a directory are one recording (as `report` shows it), not
/// record directories to pick from.
#[test]
fn process_directories_open_as_one_record_not_a_picker() {
    let t = tempfile::tempdir().unwrap();
    copy_dir(&fixture("llvm-two-kernels"), &t.path().join("pid-1234"));
    copy_dir(&fixture("llvm-no-report"), &t.path().join("rank-0"));
    let a = rr_tui::tui::load_app(
        t.path().to_path_buf(),
        Err("no GPU".into()),
        std::env::temp_dir(),
    )
    .unwrap();
    assert!(!a.picking && a.picker.is_none());
    assert_eq!(a.rows.len(), 6);
}

/// A record-directory search cut short that found nothing proves nothing: the explorer says so,
/// with the words `rr-tui report DIR` uses.
#[test]
fn a_search_cut_short_that_found_nothing_says_so() {
    let d = tempfile::tempdir().unwrap();
    let mut a = rr_tui::tui::app::App::with_picker(
        d.path().to_path_buf(),
        Err("no GPU".into()),
        d.path().to_path_buf(),
    );
    a.update(Msg::RecordDirsFound(rr_format::search::RecordDirsBelow {
        found: vec![],
        incomplete: true,
    }));
    let text = &a.status.as_ref().unwrap().text;
    assert!(
        text.contains(&rr_format::search::did_not_see_everything()),
        "{text}"
    );
    assert!(text.contains("20000 entries"), "{text}");
}

/// Replays, sweeps and profiles share the GPU: while one runs, every other start is refused
/// with the same words, naming what runs and how to end it (one rule for every screen).
#[test]
fn gpu_work_waits_for_the_work_that_holds_the_gpu_with_one_message() {
    let mut a = app("rrtui-stencil3d", true);
    let name = a.rows[0].demangled.clone();
    a.jobs.begin(GpuWork::Sweep, 0);
    let sweep = format!("a sweep of {name} is running: let it finish or cancel it (5, then c)");
    key(&mut a, KeyCode::Char('r'));
    assert_eq!(status(&a), sweep, "a replay waits for the sweep");
    key(&mut a, KeyCode::Char('P'));
    assert_eq!(status(&a), sweep, "a profile waits for the sweep");
    a.jobs.end(GpuWork::Sweep);
    a.jobs.begin(GpuWork::Replay, 0);
    key(&mut a, KeyCode::Char('r'));
    assert_eq!(
        status(&a),
        "a replay is already running: let it finish or cancel it (4, then c)"
    );
    key(&mut a, KeyCode::Char('P'));
    assert_eq!(
        status(&a),
        "a replay is running: let it finish or cancel it (4, then c)"
    );
}

/// A leaderboard being made holds the GPU: other work waits for it with the same words, and `c`
/// on the Replay screen ends it (`rr-tui ab` and its workers) instead of saying nothing runs.
#[test]
fn a_leaderboard_being_made_is_waited_for_and_c_ends_it() {
    use rr_tui::tui::app::leaderboard::{LeaderboardState, LeaderboardView};
    let mut a = app("rrtui-stencil3d", true);
    let run = a.jobs.begin(GpuWork::Leaderboard, 0);
    a.replay.leaderboard = Some(LeaderboardView {
        kernel: "rr_stencil3d".into(),
        candidates: vec!["a.cu".into(), "b.cu".into()],
        state: LeaderboardState::Running,
        detail: None,
        run,
    });
    key(&mut a, KeyCode::Char('r'));
    assert_eq!(
        status(&a),
        "the candidates' leaderboard is running: let it finish or cancel it (4, then c)"
    );
    key(&mut a, KeyCode::Char('4'));
    let cmds = key(&mut a, KeyCode::Char('c'));
    assert!(matches!(cmds.as_slice(), [Cmd::CancelLeaderboard]));
    assert_eq!(
        a.replay.leaderboard.as_ref().map(|l| &l.state),
        Some(&LeaderboardState::Failed("cancelled".into()))
    );
    assert_eq!(a.jobs.running(), None, "nothing holds the GPU after it");
    assert!(
        status(&a).starts_with("leaderboard cancelled"),
        "{}",
        status(&a)
    );
}

/// `rr-tui X.json` opens X's record directory with X selected, however its path is spelled.
#[test]
fn a_descriptor_given_to_the_explorer_is_the_selected_instance() {
    let dir = fixture("llvm-two-kernels");
    let mut a = rr_tui::tui::load_app(dir.clone(), Ok(()), std::env::temp_dir()).unwrap();
    let last = a.rows.len() - 1;
    let json = a.rows[last].json_path.clone();
    let spelled = dir.join(".").join(json.file_name().unwrap());
    assert!(a.select_descriptor(&spelled));
    assert_eq!(a.current(), Some(last));
    assert!(!a.select_descriptor(&dir.join("nothing.json")));
    assert_eq!(a.current(), Some(last), "an unlisted file changes nothing");
}

/// Press `key` without running the work it asks for (the runtime's worker has not answered
/// yet); returns that work's commands.
fn key_deferred(app: &mut App, c: KeyCode) -> Vec<Cmd> {
    app.update(Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)))
}

/// Run the workers' closures of `cmds` once, feeding their messages back as the runtime does;
/// the commands the messages return.
fn run_workers(app: &mut App, cmds: Vec<Cmd>) -> Vec<Cmd> {
    let mut out = Vec::new();
    for c in cmds {
        match c {
            Cmd::Work(w) => out.extend(app.update((w.0)())),
            other => out.push(other),
        }
    }
    out
}

/// The README's tour sends `G 3 n` in one burst: `n` arrives before the worker has mapped the
/// snapshots. It waits for them (and for the index to find a difference), then jumps; it is
/// never refused with "no snapshots open … press Enter".
#[test]
fn a_key_pressed_while_the_snapshots_load_applies_when_they_open() {
    let mut a = app("llvm-two-kernels", false);
    key(&mut a, KeyCode::Char('G'));
    let work = key_deferred(&mut a, KeyCode::Char('3'));
    assert!(work.iter().any(|c| matches!(c, Cmd::Work(_))));
    assert!(key_deferred(&mut a, KeyCode::Char('n')).is_empty());
    let said = status(&a);
    assert!(said.contains("snapshots still loading"), "{said}");
    assert!(!said.contains("press Enter"), "{said}");
    let cmds = run_workers(&mut a, work);
    assert!(a.snapshots.view.is_some());
    assert_eq!(
        a.snapshots.view.as_ref().unwrap().cursor,
        None,
        "waits for the index"
    );
    finish_index(&mut a, cmds);
    let view = a.snapshots.view.as_ref().unwrap();
    assert!(
        view.cursor.is_some(),
        "n jumped once the index had a difference"
    );
    assert!(a.snapshots.pending.is_none());
    let said = status(&a);
    assert!(said.contains("differing range 1 of"), "{said}");
}

/// A prompt opened while the snapshots load takes what is typed after it (not the screen: `4`
/// would switch screens); its text applies when they open.
#[test]
fn a_prompt_typed_while_the_snapshots_load_applies_when_they_open() {
    let mut a = app("llvm-two-kernels", false);
    let work = key_deferred(&mut a, KeyCode::Char('3'));
    key_deferred(&mut a, KeyCode::Char(':'));
    assert!(a.prompt.is_some(), "the prompt opens at once");
    for ch in "arg0".chars() {
        key_deferred(&mut a, KeyCode::Char(ch));
    }
    key_deferred(&mut a, KeyCode::Char('t'));
    key_deferred(&mut a, KeyCode::Backspace);
    key_deferred(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_none());
    assert_eq!(a.screen, Screen::Snapshots);
    assert!(
        status(&a).contains("snapshots still loading"),
        "{}",
        status(&a)
    );
    run_workers(&mut a, work);
    assert_eq!(a.snapshots.view.as_ref().unwrap().top, 0x4000);
    assert_eq!(status(&a), "at offset 0x4000");
}

/// `p` without a replay output says `v` makes one only where a replay can run; without a
/// driver it says why `v` cannot, as the replay screen does.
#[test]
fn the_replay_pair_says_why_v_cannot_make_one() {
    for (gpu, want, not) in [
        (true, "press v to replay and verify", "cannot make one"),
        (
            false,
            "v cannot make one: replay is unavailable here: no CUDA driver found",
            "press v",
        ),
    ] {
        let mut a = app("llvm-two-kernels", gpu);
        let cmds = key(&mut a, KeyCode::Char('3'));
        finish_index(&mut a, cmds);
        key(&mut a, KeyCode::Char('p'));
        let said = status(&a);
        assert!(said.contains(want), "gpu {gpu}: {said}");
        assert!(!said.contains(not), "gpu {gpu}: {said}");
    }
}
