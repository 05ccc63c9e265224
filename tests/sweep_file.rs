//! A sweep without a GPU: the bundled finished sweep (assets/sweeps/), the explorer opening a
//! sweep's `--json-out` file (`rr-tui SWEEP.json`) on its instance's tuning screen, and what
//! that refuses. Paths are relative to the package root, where cargo runs integration tests.

mod common;

use std::path::{Path, PathBuf};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::Terminal;
use rr_tui::cli::Theme as ThemeName;
use rr_tui::settings::theme::Theme;
use rr_tui::tui::app::screens::tune::sweepfile::SweepFile;
use rr_tui::tui::app::{App, Cmd, Field, Msg, Screen};
use rr_tune::Status;

const BUNDLED: &str = "assets/sweeps/rrtui-stencil3d-occurrence0.synthetic.json";
const STENCIL: &str =
    "record-fixtures/rrtui-stencil3d/3844743599784193033_15987061097491423463.json";

fn open(path: &Path) -> Result<App, String> {
    let sweep = SweepFile::read(path).map_err(|e| e.to_string())?;
    let gpu = Err("no CUDA driver found".to_string());
    rr_tui::tui::load_sweep_app(
        sweep,
        gpu,
        std::env::temp_dir(),
        &rr_tui::settings::config::Config::default(),
    )
    .map_err(|e| e.to_string())
}

fn screen(a: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(a.width, a.height)).unwrap();
    t.draw(|f| rr_tui::tui::ui::draw(a, &Theme::new(ThemeName::Dark), f))
        .unwrap();
    t.backend().to_string()
}

fn key(a: &mut App, c: char) {
    a.update_inline(Msg::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )));
}

/// The bundled sweep is read by the explorer's reader (`tune`'s), names an instance of
/// record-fixtures/ (found from any directory: its path is relative to the file), and is a
/// sweep of exactly that instance.
#[test]
fn the_bundled_sweep_is_a_sweep_of_a_fixture_instance() {
    let sweep = SweepFile::read(Path::new(BUNDLED)).unwrap();
    assert_eq!(
        std::fs::canonicalize(&sweep.descriptor).unwrap(),
        std::fs::canonicalize(STENCIL).unwrap()
    );
    assert_eq!(sweep.report.kernel, "rr_stencil3d");
    assert!(sweep.report.simulated_from.is_none(), "simulate-able");
    assert!(
        sweep.report.energy.is_some(),
        "it has a Pareto front to show"
    );
    assert_eq!(sweep.report.space_size, 144);
    // From another working directory, through an absolute path, it is found all the same.
    let abs = std::fs::canonicalize(BUNDLED).unwrap();
    let elsewhere = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .arg(&abs)
        .current_dir(std::env::temp_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(err.contains("needs a terminal"), "read and found: {err}");
}

/// `rr-tui SWEEP.json`: the instance's tuning screen with the sweep's heatmap and best
/// configurations, without a GPU; `p` lists its Pareto front.
#[test]
fn the_explorer_shows_a_sweep_from_its_file() {
    for (w, h) in [(80, 24), (200, 60)] {
        let mut a = open(Path::new(BUNDLED)).unwrap();
        a.update(Msg::Resize(w, h));
        assert_eq!(a.screen, Screen::Tune);
        let cur = a.current().unwrap();
        assert!(a.rows[cur]
            .json_path
            .ends_with(Path::new(STENCIL).file_name().unwrap()));
        let run = &a.tune.runs[&cur];
        assert_eq!(run.report.trials.len(), 144);
        assert_eq!(run.count(Status::Ok) + run.count(Status::VerifyFailed), 144);
        let best = run.report.best.clone().expect("a best configuration");
        assert!(run.report.speedup.is_some_and(|s| s > 1.0));
        assert!(run.front().len() >= 2, "time and energy disagree");
        let shown = screen(&a);
        assert!(shown.contains("grid╲block"), "the heatmap: {shown}");
        assert!(shown.contains(&best.config.block[0].to_string()));
        insta::assert_snapshot!(format!("sweep_opened_{w}x{h}"), shown);
        key(&mut a, 'p');
        let front = screen(&a);
        assert!(a.tune.show_front, "{front}");
        insta::assert_snapshot!(format!("sweep_opened_front_{w}x{h}"), front);
    }
}

/// What the file says of its best and speed-up is not believed: they are worked out again
/// from the rows, of which a second row for a configuration and a time no launch takes are
/// left out and counted.
#[test]
fn an_opened_sweep_trusts_its_rows_not_its_summary() {
    let t = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(BUNDLED).unwrap()).unwrap();
    let trials = v["trials"].as_array_mut().unwrap();
    trials[7]["kernel_ns"]["min"] = 1e-300.into();
    let again = trials[3].clone();
    trials.push(again);
    let claimed = trials[9].clone();
    v["best"] = claimed;
    v["speedup"] = 1e300.into();
    v["descriptor"] = std::fs::canonicalize(STENCIL)
        .unwrap()
        .display()
        .to_string()
        .into();
    let path = t.path().join("forged.json");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let a = open(&path).unwrap();
    let run = &a.tune.runs[&a.current().unwrap()];
    assert_eq!(
        run.report.trials.len(),
        143,
        "the repeated and the forged rows"
    );
    assert!(run.report.speedup.is_some_and(|s| s < 10.0));
    assert_eq!(
        run.warnings,
        ["rows left out: 1 given twice, 1 with an impossible time (<100 ns, …)"]
    );
    assert!(("warning: ".len() + run.warnings[0].chars().count()) <= 80);
    // The progress counts the rows shown: 143 of 143, not of the 144 in the file.
    assert_eq!(run.planned, Some(143));
}

/// Rows no sweep of its axes can hold are refused as `tune merge` refuses them, naming the
/// file and the row; a file whose every time is forged is refused, not opened empty; text
/// from the file is shown with its control characters visible.
#[test]
fn impossible_rows_forged_times_and_control_characters() {
    let t = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(BUNDLED).unwrap()).unwrap();
    v["descriptor"] = std::fs::canonicalize(STENCIL)
        .unwrap()
        .display()
        .to_string()
        .into();
    let write = |name: &str, v: &serde_json::Value| -> PathBuf {
        let p = t.path().join(name);
        std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
        p
    };
    let mut huge = v.clone();
    huge["trials"][5]["grid"] = serde_json::json!([4294967295u32, 4294967295u32, 4294967295u32]);
    let e = refusal(&write("huge.json", &huge));
    assert!(e.contains("huge.json: row 6 ("), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let mut zero = v.clone();
    zero["trials"][9]["block"] = serde_json::json!([4096, 0, 1]);
    let e = refusal(&write("zero.json", &zero));
    assert!(e.contains("zero.json: row 10 ("), "{e}");
    let mut forged = v.clone();
    for (i, t) in forged["trials"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        if !t["kernel_ns"].is_null() {
            t["kernel_ns"]["min"] = [1e-300, 0.0, -1.0][i % 3].into();
        }
    }
    let e = refusal(&write("forged.json", &forged));
    assert!(
        e.contains("forged.json: no row has a plausible time"),
        "{e}"
    );
    let mut named = v.clone();
    named["devices"][0]["name"] = "A\x1b]52;c;SGVsbG8=\x07B\u{9b}31mC".into();
    let a = open(&write("named.json", &named)).unwrap();
    let shown = screen(&a);
    assert!(shown.contains("A\\x1b]52;c;SGVsbG8=\\x07B"), "{shown}");
}

fn refusal(path: &Path) -> String {
    match SweepFile::read(path) {
        Ok(_) => panic!("{} was opened", path.display()),
        Err(e) => e.to_string(),
    }
}

/// Files that are no sweep, or not of the instance they name, are refused in one line that
/// names the file; nothing is read of what is not a regular file, or of one too large.
#[test]
fn what_is_no_sweep_of_its_instance_is_refused_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(BUNDLED).unwrap()).unwrap();
    let write = |name: &str, v: &serde_json::Value| -> PathBuf {
        let p = t.path().join(name);
        std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
        p
    };
    let fifo = t.path().join("fifo.json");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let huge = t.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(600 << 20)
        .unwrap();
    let mut elsewhere = v.clone();
    elsewhere["descriptor"] = "no/such/X.json".into();
    let mut other = v.clone();
    other["descriptor"] = std::fs::canonicalize(common::fixture("rrtui-stencil3d"))
        .unwrap()
        .join("3844743599784193033_4435446794594945131.json")
        .display()
        .to_string()
        .into();
    other["recorded"]["grid"] = serde_json::json!([4, 2, 4]);
    for (path, says) in [
        (PathBuf::from("README.md"), "is not a tuning report"),
        (PathBuf::from(STENCIL), "is not a tuning report"),
        (fifo, "not a regular file"),
        (huge, "is not plausible, so it is not read"),
        (
            write("elsewhere.json", &elsewhere),
            "no/such/X.json, is not a file here",
        ),
        (write("other.json", &other), "not the instance it swept"),
    ] {
        let e = refusal(&path);
        assert!(e.contains(says), "{}: {e}", path.display());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(e.contains(&name) && !e.contains('\n'), "{e}");
    }
}

/// Opening a sweep fills the tuning form with its axes and `simulate FILE` in the GPUs field:
/// `r` starts `tune --simulate FILE` over that space with no GPU, after `tune`'s own checks.
#[test]
fn the_tune_form_simulates_from_the_opened_sweep_without_a_gpu() {
    let mut a = open(Path::new(BUNDLED)).unwrap();
    assert_eq!(a.tune.form.settings.text(Field::Grid), "1..8*2x1..8*2x4");
    assert_eq!(
        a.tune.form.settings.text(Field::Devices),
        format!("simulate {BUNDLED}")
    );
    assert!(a.gpu.is_err(), "no GPU here");
    // A budgeted search, as the strategy comparisons run it.
    a.tune
        .form
        .settings
        .set_text(Field::Strategy, "tpe")
        .unwrap();
    a.tune.form.settings.set_text(Field::Budget, "30").unwrap();
    // The opened sweep is not replaced without asking: `r` again does.
    assert!(press_r(&mut a).is_empty());
    let cmds = press_r(&mut a);
    let Some(Cmd::StartTune { job, .. }) = cmds.into_iter().next() else {
        panic!("no sweep started: {:?}", a.status)
    };
    assert_eq!(job.simulate.as_deref(), Some(std::path::Path::new(BUNDLED)));
    assert_eq!(job.devices, None);
    assert_eq!(job.strategy, rr_tune::StrategyKind::Tpe);
    // Nothing the user did not set that `tune --simulate` would say has no effect.
    assert_eq!(job.timing, rr_tune::job::SweepTiming::default());
    assert!(
        !job.energy && job.verify == rr_engine::replay::Verify::Bytes,
        "{job:?}"
    );
}

fn press_r(a: &mut App) -> Vec<Cmd> {
    a.update_inline(Msg::Key(KeyEvent::new(
        KeyCode::Char('r'),
        KeyModifiers::NONE,
    )))
}

/// The session's config (its tuning axes, as a config file sets them) is applied before the
/// sweep is shown: the form keeps the sweep's axes and `simulate FILE`, not the config's.
#[test]
fn the_config_does_not_replace_the_opened_sweeps_form() {
    let mut config = rr_tui::settings::config::Config::default();
    config.tune.set_text(Field::Block, "64..128*2").unwrap();
    config.tune.set_text(Field::Samples, "7").unwrap();
    let sweep = SweepFile::read(Path::new(BUNDLED)).unwrap();
    let gpu = Err("no CUDA driver found".to_string());
    let a = rr_tui::tui::load_sweep_app(sweep, gpu, std::env::temp_dir(), &config).unwrap();
    assert_eq!(a.tune.form.settings.text(Field::Grid), "1..8*2x1..8*2x4");
    assert_eq!(a.tune.form.settings.text(Field::Block), "4..16*2x4..16*2x4");
    assert_eq!(
        a.tune.form.settings.text(Field::Devices),
        format!("simulate {BUNDLED}")
    );
    // What the sweep does not say stays the config's.
    assert_eq!(a.tune.form.settings.text(Field::Samples), "7");
}

/// `r` on an opened sweep asks before replacing it (the file keeps it); any other key keeps
/// it and forgets the question; `r` twice replaces it.
#[test]
fn an_opened_sweep_is_not_replaced_without_asking() {
    let mut a = open(Path::new(BUNDLED)).unwrap();
    a.update(Msg::Resize(100, 30));
    assert!(press_r(&mut a).is_empty());
    let said = a.status.as_ref().unwrap().text.clone();
    assert!(
        said.contains("r again replaces the sweep opened from"),
        "{said}"
    );
    assert!(said.contains("144 configuration(s)"), "{said}");
    key(&mut a, ']');
    assert!(press_r(&mut a).is_empty(), "the question was forgotten");
    // A click forgets it too (here on the table's title line).
    let title = screen(&a)
        .lines()
        .position(|l| l.contains("best by time"))
        .unwrap() as u16;
    a.update_inline(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 2,
        row: title + 2,
        modifiers: KeyModifiers::NONE,
    }));
    assert!(press_r(&mut a).is_empty(), "the question was forgotten");
    let cur = a.current().unwrap();
    assert!(a.tune.runs[&cur].opened_from.is_some(), "kept");
    let cmds = press_r(&mut a);
    assert!(
        matches!(cmds.first(), Some(Cmd::StartTune { .. })),
        "{:?}",
        a.status
    );
}

/// Where the table has room for a few rows (100×30), it scrolls to keep the picked row on
/// screen: by `]`, and by a click on a heatmap cell whose best is further down.
#[test]
fn the_tune_table_scrolls_to_the_picked_row() {
    let picked_line = |shown: &str| -> Option<String> {
        shown
            .lines()
            .find(|l| {
                l.trim_start_matches(['"', '│', ' '])
                    .strip_prefix('›')
                    .and_then(|r| r.chars().next())
                    .is_some_and(|c| c.is_ascii_digit() || c == '◆' || c == '⬦')
            })
            .map(str::to_string)
    };
    let mut a = open(Path::new(BUNDLED)).unwrap();
    a.update(Msg::Resize(100, 30));
    for _ in 0..13 {
        key(&mut a, ']');
    }
    assert!(a.status.as_ref().unwrap().text.starts_with("row 14 picked"));
    let shown = screen(&a);
    let line = picked_line(&shown).unwrap_or_else(|| panic!("no picked row shown:\n{shown}"));
    assert!(
        line.contains("›14 ") || line.contains("›◆14") || line.contains("›⬦14"),
        "{line}\n{shown}"
    );
    insta::assert_snapshot!("sweep_table_scrolled_100x30", shown);
    // A click on each heatmap cell in turn: the row it picks is the one marked.
    key(&mut a, '[');
    let mut seen_below = false;
    // The heatmap's lines (a click elsewhere may switch screens or start something).
    let lines: Vec<String> = screen(&a).lines().map(str::to_string).collect();
    let header = lines.iter().position(|l| l.contains("grid╲block")).unwrap();
    let legend = lines.iter().position(|l| l.contains("PgUp/PgDn")).unwrap();
    for y in (header + 1) as u16..legend as u16 {
        for x in 0..a.width {
            a.update_inline(Msg::Mouse(MouseEvent {
                kind: MouseEventKind::Down(MouseButton::Left),
                column: x,
                row: y,
                modifiers: KeyModifiers::NONE,
            }));
            let Some(said) = a.status.as_ref().map(|s| s.text.clone()) else {
                continue;
            };
            let Some(n) = said
                .strip_prefix("row ")
                .and_then(|r| r.split_once(" picked ("))
                .and_then(|(n, _)| n.parse::<usize>().ok())
            else {
                continue;
            };
            let shown = screen(&a);
            let line = picked_line(&shown).unwrap_or_else(|| panic!("{said}:\n{shown}"));
            let mark = line.split('›').nth(1).unwrap();
            let digits: String = mark
                .trim_start_matches(['◆', '⬦'])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            assert_eq!(digits, n.to_string(), "{said}:\n{shown}");
            seen_below |= n > 3;
        }
    }
    assert!(seen_below, "no heatmap cell picked a row below the third");
}

/// The form refuses what `tune --simulate` refuses, with `tune`'s own words: a sweep of
/// another kernel is refused by the same check, before anything starts.
#[test]
fn the_tune_form_refuses_the_sweeps_the_command_refuses() {
    let t = tempfile::tempdir().unwrap();
    let saxpy = t.path().join("saxpy.json");
    assert!(std::process::Command::new("python3")
        .arg("tests/tools/synthetic_sweep.py")
        .arg(&saxpy)
        .arg("4")
        .status()
        .unwrap()
        .success());
    let mut a = open(Path::new(BUNDLED)).unwrap();
    // The field's own check: a file, named.
    assert!(a
        .tune
        .form
        .settings
        .set_text(Field::Devices, "simulate")
        .is_err());
    let missing = a
        .tune
        .form
        .settings
        .set_text(Field::Devices, "simulate /no/such/sweep.json")
        .unwrap_err();
    assert!(missing.contains("/no/such/sweep.json"), "{missing}");
    let given = format!("simulate {}", saxpy.display());
    a.tune
        .form
        .settings
        .set_text(Field::Devices, &given)
        .unwrap();
    press_r(&mut a); // asks before replacing the opened sweep
    let cmds = press_r(&mut a);
    assert!(cmds.is_empty(), "a sweep started: {:?}", a.status);
    let said = a.status.as_ref().expect("a reason").text.clone();
    assert!(said.contains("holds a sweep of another kernel"), "{said}");
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(["tune", STENCIL, "--grid", "1..8*2x1..8*2x4", "--simulate"])
        .arg(&saxpy)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&cli.stderr);
    assert_eq!(cli.status.code(), Some(2), "{err}");
    assert!(err.contains("holds a sweep of another kernel"), "{err}");
}

/// Run the workers `cmds` ask for, as the runtime does, and hand their answers to `a` (not
/// the workers those answers start: the checks of the record's instances).
fn run_work(a: &mut App, cmds: Vec<Cmd>) {
    for cmd in cmds {
        if let Cmd::Work(w) = cmd {
            let msg = (w.0)();
            a.update(msg);
        }
    }
}

/// `rr-tui SWEEP.json` in a terminal draws its first frame before a byte of the file is
/// read ("reading SWEEP.json…"); a worker reads it once that frame is drawn, and the sweep
/// then shows as a sweep opened before the first frame; one that cannot be shown ends the
/// explorer with the one line that says why.
#[test]
fn a_sweep_file_is_read_after_the_first_frame() {
    let gpu = || Err("no CUDA driver found".to_string());
    let mut a = App::opening_sweep(PathBuf::from(BUNDLED), gpu(), std::env::temp_dir());
    let first = screen(&a);
    assert!(first.contains(&format!("reading {BUNDLED}…")), "{first}");
    assert!(a.tune.runs.is_empty());
    let cmds = a.update(Msg::FirstFrameDrawn);
    assert!(cmds.iter().any(|c| matches!(c, Cmd::Work(_))));
    run_work(&mut a, cmds);
    assert!(a.tune.opening.is_none() && a.fatal.is_none() && !a.quit);
    assert_eq!(a.screen, Screen::Tune);
    let shown = screen(&a);
    let before = open(Path::new(BUNDLED)).unwrap();
    assert_eq!(shown, screen(&before));

    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("bad.json");
    std::fs::write(&bad, b"{").unwrap();
    let mut a = App::opening_sweep(bad.clone(), gpu(), std::env::temp_dir());
    let cmds = a.update(Msg::FirstFrameDrawn);
    run_work(&mut a, cmds);
    assert!(a.quit);
    let why = a.fatal.clone().unwrap();
    assert!(why.starts_with(&bad.display().to_string()), "{why}");
    assert_eq!(why.lines().count(), 1, "{why}");
}
