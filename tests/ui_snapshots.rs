//! Rendering snapshots with ratatui's TestBackend (symbols only; colours are checked on cells).
//! Paths are relative to the package root, where cargo runs integration tests.

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use rr_engine::diff::job::IndexEvent;
use rr_engine::replay::stats::Stats;
use rr_engine::replay::{Event, VerifyOutcome};
use rr_tui::cli::Theme as ThemeName;
use rr_tui::tui::app::{App, Cmd, Msg};
use rr_tui::tui::theme::Theme;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

fn app(gpu: bool) -> App {
    let gpu = if gpu {
        Ok(())
    } else {
        Err(
            "no CUDA driver found (libcuda.so.1 could not be loaded); everything else works"
                .to_string(),
        )
    };
    let mut a = rr_tui::tui::load_app(
        PathBuf::from("record-fixtures/llvm-two-kernels"),
        gpu,
        PathBuf::from("/tmp/rr-tui-session"),
    )
    .unwrap();
    a.update(Msg::Resize(120, 32));
    a
}

fn key(a: &mut App, c: char) -> Vec<Cmd> {
    let m = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Char(c), m)))
}

fn render(a: &App, theme: ThemeName) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(120, 32)).unwrap();
    t.draw(|f| rr_tui::tui::ui::draw(a, &Theme::new(theme), f))
        .unwrap();
    t
}

fn snap(a: &App) -> String {
    render(a, ThemeName::Dark).backend().to_string()
}

fn index(a: &mut App, cmds: Vec<Cmd>) {
    for c in cmds {
        if let Cmd::StartIndex { job, a: x, b: y } = c {
            let out =
                rr_engine::diff::build_index(&x, &y, 8, &AtomicBool::new(false), |_, _, _| {})
                    .unwrap();
            a.update(Msg::Index {
                job,
                event: IndexEvent::Done(Ok(out)),
            });
        }
    }
}

#[test]
fn instances_screen() {
    insta::assert_snapshot!("instances", snap(&app(false)));
}

#[test]
fn instances_filtered_and_sorted() {
    let mut a = app(false);
    key(&mut a, '/');
    for c in "saxpy".chars() {
        key(&mut a, c);
    }
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    key(&mut a, 's');
    key(&mut a, 's');
    insta::assert_snapshot!("instances_filtered", snap(&a));
}

#[test]
fn descriptor_screen_and_diff() {
    let mut a = app(false);
    key(&mut a, '2');
    insta::assert_snapshot!("descriptor", snap(&a));
    key(&mut a, 'm');
    key(&mut a, '1');
    key(&mut a, 'j');
    key(&mut a, '2');
    insta::assert_snapshot!("descriptor_diff", snap(&a));
}

#[test]
fn snapshot_diff_hex_and_typed() {
    let mut a = app(false);
    let cmds = key(&mut a, '3');
    index(&mut a, cmds);
    key(&mut a, 'n');
    insta::assert_snapshot!("snapshots_hex", snap(&a));
    for _ in 0..11 {
        key(&mut a, 't');
    }
    insta::assert_snapshot!("snapshots_f32", snap(&a));
    // Differing bytes carry the diff style on both sides.
    let t = render(&a, ThemeName::Dark);
    let theme = Theme::new(ThemeName::Dark);
    let buf = t.backend().buffer();
    let marked = (0..buf.area.width)
        .filter(|&x| buf[(x, 4)].bg == theme.diff_b.bg.unwrap())
        .count();
    assert!(
        marked > 10,
        "row 4 should show marked cells, found {marked}"
    );
}

#[test]
fn replay_live_and_verified() {
    let mut a = app(true);
    let Some(Cmd::StartReplay { request, .. }) = key(&mut a, 'v').into_iter().next() else {
        panic!()
    };
    let run = request.run_id;
    a.update(ev(
        run,
        Event::Start {
            protocol: rr_engine::replay::PROTOCOL_VERSION,
            descriptor: "x.json".into(),
        },
    ));
    a.update(ev(
        run,
        Event::Launch {
            kernel: "rr_saxpy".into(),
            grid: [8, 1, 1],
            block: [128, 1, 1],
            shared_mem: 0,
            repetitions: 20,
            warmup: 0,
        },
    ));
    a.update(ev(
        run,
        Event::Device {
            name: "NVIDIA H200".into(),
            sm: 90,
            ordinal: 0,
        },
    ));
    for i in 0..12 {
        a.update(ev(
            run,
            Event::Rep {
                index: i + 1,
                kernel_ns: 1000.0 + (i % 5) as f64 * 10.0,
                host_ns: 6000.0 + i as f64,
                restore_ns: 100.0,
            },
        ));
    }
    insta::assert_snapshot!("replay_running", snap(&a));
    a.update(ev(
        run,
        Event::Summary {
            kernel_ns: Stats::default(),
            host_ns: Stats::default(),
            restore_ns: Stats::default(),
        },
    ));
    a.update(ev(
        run,
        Event::Verify(VerifyOutcome {
            passed: false,
            mode: "bytes".into(),
            expected_len: 32768,
            replayed_len: 32768,
            missing_bytes: 0,
            differing_bytes: 4,
            differing_ranges: 1,
            first_ranges: vec![[0x4004, 4]],
            regions: vec![],
        }),
    ));
    a.update(ev(run, Event::Done { ok: false }));
    insta::assert_snapshot!("replay_mismatch", snap(&a));
}

#[test]
fn replay_unavailable_and_help() {
    let mut a = app(false);
    key(&mut a, '4');
    insta::assert_snapshot!("replay_no_gpu", snap(&a));
    key(&mut a, '?');
    insta::assert_snapshot!("help", snap(&a));
}

#[test]
fn monochrome_theme_uses_no_colours() {
    let t = render(&app(false), ThemeName::Mono);
    let buf = t.backend().buffer();
    assert!(buf
        .content
        .iter()
        .all(|c| c.fg == ratatui::style::Color::Reset && c.bg == ratatui::style::Color::Reset));
}

/// A replay event of run `run`, as the runtime delivers it.
fn ev(run: u64, event: rr_engine::replay::Event) -> Msg {
    Msg::Replay(rr_engine::replay::Tagged { run, event })
}
