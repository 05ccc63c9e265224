//! The explorer's leaderboard of several A/B candidates (`C` on the Replay screen): the flow as
//! a state machine fed a synthetic `rr-tui ab` result, and the screen it draws. No GPU.

use insta::assert_snapshot;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use rr_engine::replay::ab::judge;
use rr_engine::replay::leaderboard::{CandidateRow, InstanceResult, Leaderboard, Status};
use rr_tui::cli::Theme as ThemeName;
use rr_tui::settings::theme::Theme;
use rr_tui::tui::app::leaderboard::LeaderboardState;
use rr_tui::tui::app::{App, Cmd, GpuWork, Msg};
use std::path::PathBuf;

fn app((w, h): (u16, u16)) -> App {
    let mut a = rr_tui::tui::load_app(
        PathBuf::from("record-fixtures/llvm-two-kernels"),
        Ok(()),
        std::env::temp_dir(),
    )
    .unwrap();
    a.update(Msg::Resize(w, h));
    a
}

fn press(a: &mut App, code: KeyCode) -> Vec<Cmd> {
    let m = match code {
        KeyCode::Char(c) if c.is_ascii_uppercase() => KeyModifiers::SHIFT,
        _ => KeyModifiers::NONE,
    };
    a.update_inline(Msg::Key(KeyEvent::new(code, m)))
}

fn typed(a: &mut App, s: &str) {
    for c in s.chars() {
        press(a, KeyCode::Char(c));
    }
}

/// One instance's result: verified at `speedup`, or `status` with a reason.
fn result(instance: &str, status: Status, speedup: f64) -> InstanceResult {
    let a: Vec<f64> = (0..20).map(|i| 1000.0 + i as f64).collect();
    let b: Vec<f64> = a.iter().map(|x| x / speedup).collect();
    let r = InstanceResult {
        status: status.clone(),
        reason: (status != Status::Verified).then(|| "4096 bytes differ from 0x4000".into()),
        ..InstanceResult::error(instance, "")
    };
    match status {
        Status::Verified => r.with_compare(judge(&a, &b).unwrap()),
        _ => r,
    }
}

/// What `rr-tui ab --json` would say about two candidates on the fixture's two instances.
fn board() -> Leaderboard {
    let names = [
        "8683979482637550046_13526365365894479501.json",
        "8683979482637550046_6547468769535274944.json",
    ];
    Leaderboard::new(
        "record-fixtures/llvm-two-kernels",
        "^rr_saxpy$",
        names.iter().map(|s| s.to_string()).collect(),
        vec![
            CandidateRow::of(
                "/tmp/cheat.cu",
                vec![
                    result(names[0], Status::Verified, 5.0),
                    result(names[1], Status::Wrong, 1.0),
                ],
            ),
            CandidateRow::of(
                "/tmp/faster.cu",
                vec![
                    result(names[0], Status::Verified, 1.8),
                    result(names[1], Status::Verified, 1.6),
                ],
            ),
        ],
    )
}

/// The Replay screen after `C` named two candidates and the leaderboard came back.
fn with_board(size: (u16, u16), enters: usize) -> App {
    let dir = tempfile::tempdir().unwrap();
    for f in ["faster.cu", "cheat.cu"] {
        std::fs::write(dir.path().join(f), "__global__ void k() {}").unwrap();
    }
    let mut a = app(size);
    press(&mut a, KeyCode::Char('4'));
    press(&mut a, KeyCode::Char('C'));
    let text = format!(
        "{} {} -D TILE=8",
        dir.path().join("faster.cu").display(),
        dir.path().join("cheat.cu").display()
    );
    typed(&mut a, &text);
    let cmds = a.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    let run = match cmds.as_slice() {
        [Cmd::StartLeaderboard { job, run, .. }] if job.candidates.len() == 2 => *run,
        _ => panic!(
            "the executor starts the leaderboard's process: {:?}",
            a.status
        ),
    };
    let view = a.replay.leaderboard.as_ref().expect("a leaderboard");
    assert_eq!(view.state, LeaderboardState::Running);
    assert_eq!(view.candidates.len(), 2);
    assert_eq!(a.jobs.of(GpuWork::Leaderboard), Some(a.current().unwrap()));
    // The late answer of an earlier run (cancelled since) is not this one's.
    a.update(Msg::Leaderboard {
        run: run - 1,
        result: Err("cancelled".into()),
    });
    let view = a.replay.leaderboard.as_ref().unwrap();
    assert_eq!(
        view.state,
        LeaderboardState::Running,
        "a stale answer is dropped"
    );
    assert_eq!(a.jobs.of(GpuWork::Leaderboard), Some(a.current().unwrap()));
    a.update(Msg::Leaderboard {
        run,
        result: Ok(Box::new(board())),
    });
    assert_eq!(
        a.jobs.running(),
        None,
        "the leaderboard no longer holds the GPU"
    );
    for _ in 0..enters {
        press(&mut a, KeyCode::Enter);
    }
    a.status = None;
    a
}

#[test]
fn several_candidates_make_a_leaderboard_and_enter_shows_each_ones_instances() {
    let mut a = with_board((120, 40), 0);
    let view = a.replay.leaderboard.as_ref().unwrap();
    let LeaderboardState::Done(b) = &view.state else {
        panic!("{:?}", view.state)
    };
    // Ranked: the one verified everywhere first.
    assert_eq!(b.candidates[0].candidate, "/tmp/faster.cu");
    assert!(b.passed);
    // Enter: the first candidate's instances, the second's, then the table again.
    for want in [Some(0), Some(1), None] {
        press(&mut a, KeyCode::Enter);
        assert_eq!(a.replay.leaderboard.as_ref().unwrap().detail, want);
    }
    // A failure to run says why.
    let run = a.replay.leaderboard.as_ref().unwrap().run;
    a.update(Msg::Leaderboard {
        run,
        result: Err("no CUDA driver found".into()),
    });
    assert!(matches!(
        &a.replay.leaderboard.as_ref().unwrap().state,
        LeaderboardState::Failed(e) if e.contains("no CUDA driver")
    ));
    // One file is the one-candidate A/B of r and v, as before: no leaderboard job.
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.cu");
    std::fs::write(&one, "__global__ void k() {}").unwrap();
    press(&mut a, KeyCode::Char('C'));
    for _ in 0..200 {
        press(&mut a, KeyCode::Backspace);
    }
    typed(&mut a, &one.display().to_string());
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    assert_eq!(
        a.settings.candidate.as_ref().map(|c| c.path.clone()),
        Some(one)
    );
}

fn render(a: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(a.width, a.height)).unwrap();
    t.draw(|f| rr_tui::tui::ui::draw(a, &Theme::new(ThemeName::Dark), f))
        .unwrap();
    t.backend().to_string()
}

#[test]
fn the_leaderboard_section_on_the_replay_screen() {
    for (size, enters, name) in [
        ((80, 24), 0, "table_80x24"),
        ((200, 60), 0, "table_200x60"),
        ((200, 60), 2, "second_candidate_200x60"),
    ] {
        let a = with_board(size, enters);
        assert_snapshot!(format!("leaderboard_{name}"), render(&a));
    }
}
