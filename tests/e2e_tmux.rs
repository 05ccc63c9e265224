//! End-to-end: the real binary in a real terminal emulator (tmux), driven by keys, read from
//! the screen. Waits for text, never for fixed times. CI installs tmux (.ci/run); elsewhere the
//! test is skipped with a message when tmux is missing.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

/// A session on a tmux server of its own (`tmux -L NAME`): the tests run in parallel, and a
/// server whose last session ends exits, so a session started meanwhile on a shared server
/// failed ("server exited unexpectedly").
struct Session(String);

/// `tmux` talking to the server of the session named `name`.
fn tmux_on(name: &str) -> Command {
    let mut c = Command::new("tmux");
    c.args(["-L", name]);
    c
}

impl Session {
    /// `cmd` in a detached 130×36 tmux session named `name` (killed on drop).
    fn start(name: String, cmd: &str) -> Session {
        let status = tmux_on(&name)
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "130",
                "-y",
                "36",
                cmd,
            ])
            .status()
            .unwrap();
        assert!(status.success());
        Session(name)
    }
    fn tmux(&self, args: &[&str]) -> String {
        let out = tmux_on(&self.0).args(args).output().expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &self.0])
    }
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.0];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            if start.elapsed() > Duration::from_secs(15) {
                panic!("timed out waiting for {text:?}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    /// The screen once it stops changing (tmux may be captured in the middle of a redraw).
    fn settled(&self) -> String {
        let start = Instant::now();
        let mut last = self.screen();
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let now = self.screen();
            if now == last || start.elapsed() > Duration::from_secs(15) {
                return now;
            }
            last = now;
        }
    }
    fn alive(&self) -> bool {
        tmux_on(&self.0)
            .args(["has-session", "-t", &self.0])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = tmux_on(&self.0)
            .args(["kill-session", "-t", &self.0])
            .status();
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Hex cells on each side of every two-sided row of a screen (`(left, right)` per row).
fn hex_rows(screen: &str) -> Vec<(usize, usize)> {
    let count = |s: &str| {
        s.split_whitespace()
            .filter(|w| w.len() == 2 && w.chars().all(|c| c.is_ascii_hexdigit()))
            .count()
    };
    screen
        .lines()
        .filter_map(|l| l.split_once(" │ "))
        .map(|(a, b)| (count(a), count(b)))
        .filter(|&(a, b)| a + b > 0)
        .collect()
}

#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explore_sort_filter_help_diff_resize_and_quit() {
    assert!(
        tmux_available(),
        "tmux is not installed (apt-get install tmux)"
    );
    let name = format!("rr-tui-e2e-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_rr-tui");
    let dir = common::fixture("llvm-two-kernels");
    // --no-config: the defaults the test expects, whatever the config of whoever runs it.
    let cmd = format!("NO_COLOR=1 {bin} --no-config {}", dir.display());
    let s = Session::start(name, &cmd);
    s.wait_for("4 of 4 instance(s)");
    s.wait_for("rr_scale_global");

    s.keys(&["s"]);
    s.wait_for("sorted by kernel");
    s.keys(&["/", "s", "c", "a", "l", "e", "Enter"]);
    let screen = s.wait_for("filter \"scale\"");
    assert!(
        !screen.contains("rr_saxpy"),
        "filter hides other kernels:\n{screen}"
    );
    s.keys(&["Escape"]);
    s.wait_for("4 of 4 instance(s)");

    s.keys(&["?"]);
    s.wait_for("Everywhere");
    s.keys(&["Escape"]);
    s.wait_for("Enter open");

    s.keys(&["g", "Enter"]);
    s.wait_for("recorded input → recorded output");
    s.wait_for("1 differing range(s)");
    s.keys(&["n"]);
    let wide = s.wait_for("arg0+0x0");
    assert_eq!(hex_rows(&wide).first().map(|r| r.0), Some(16), "{wide}");

    // Down to the smallest supported terminal: rows narrow to 8 bytes, the same on both sides.
    s.tmux(&["resize-window", "-t", &s.0, "-x", "80", "-y", "24"]);
    s.wait_for("00004008");
    let narrow = s.settled();
    let rows = hex_rows(&narrow);
    assert!(rows.len() > 10, "{narrow}");
    for (left, right) in rows {
        assert_eq!((left, right), (8, 8), "{narrow}");
    }
    assert!(narrow.lines().all(|l| l.chars().count() <= 80));

    s.keys(&["N"]);
    s.keys(&["g"]);
    s.wait_for("equal (");

    s.keys(&["4"]);
    s.wait_for("repetitions 20");
    s.keys(&["q"]);
    let start = Instant::now();
    while s.alive() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!s.alive(), "rr-tui did not quit on q");
}

/// The config file reaches the real explorer: its replay repetitions and tuning axes are what
/// the replay screen and the tuning form start with.
#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn the_config_file_sets_the_sessions_defaults() {
    assert!(
        tmux_available(),
        "tmux is not installed (apt-get install tmux)"
    );
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("config.toml");
    std::fs::write(
        &file,
        "[replay]\nrepetitions = 7\n[tune]\ngrid = \"1..64\"\n",
    )
    .unwrap();
    let name = format!("rr-tui-e2e-config-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_rr-tui");
    let dir = common::fixture("llvm-two-kernels");
    let cmd = format!(
        "NO_COLOR=1 {bin} --config {} {}",
        file.display(),
        dir.display()
    );
    let s = Session::start(name, &cmd);
    s.wait_for("4 of 4 instance(s)");
    s.keys(&["4"]);
    s.wait_for("repetitions 7");
    s.keys(&["5"]);
    s.wait_for("1..64");
    s.keys(&["q"]);
}

/// The mouse in a real terminal: the explorer asks tmux for mouse reports (SGR), a click on the
/// Tune tab (tmux passes the terminal's report on) switches to it; `mouse = false` in the
/// config file asks for none.
#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn a_click_on_a_tab_switches_and_the_config_can_leave_the_mouse_alone() {
    assert!(
        tmux_available(),
        "tmux is not installed (apt-get install tmux)"
    );
    let bin = env!("CARGO_BIN_EXE_rr-tui");
    let dir = common::fixture("llvm-two-kernels");
    let flags = |s: &Session| s.tmux(&["display", "-p", "-t", &s.0, "#{mouse_sgr_flag}"]);
    let name = format!("rr-tui-e2e-mouse-{}", std::process::id());
    let s = Session::start(
        name,
        &format!("NO_COLOR=1 {bin} --no-config {}", dir.display()),
    );
    let screen = s.wait_for("4 of 4 instance(s)");
    assert_eq!(flags(&s).trim(), "1", "no mouse reports asked for");
    let top = screen.lines().next().unwrap();
    let x = top[..top.find("5 Tune").unwrap()].chars().count() + 1;
    // A press and a release of the left button at (x, 1), 1-based, as the terminal reports it.
    for end in ['M', 'm'] {
        s.keys(&["-l", &format!("\x1b[<0;{x};1{end}")]);
    }
    s.wait_for("Tune · ");
    s.keys(&["q"]);

    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("config.toml");
    std::fs::write(&file, "mouse = false\n").unwrap();
    let name = format!("rr-tui-e2e-no-mouse-{}", std::process::id());
    let s = Session::start(
        name,
        &format!(
            "NO_COLOR=1 {bin} --config {} {}",
            file.display(),
            dir.display()
        ),
    );
    s.wait_for("4 of 4 instance(s)");
    assert_eq!(
        flags(&s).trim(),
        "0",
        "mouse reports asked for with mouse = false"
    );
    s.keys(&["q"]);
}

/// README step 4 in the real binary: `rr-tui SWEEP.json` (from the repository root, with and
/// without a config file whose tuning axes differ) opens the sweep with the tuning form set to
/// simulate a search of the sweep's space: its axes, not the config's; `r` asks before
/// replacing the opened sweep, `r` again runs the simulated search with no GPU, and nothing
/// the user did not set is said to have no effect.
#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn an_opened_sweep_is_ready_to_simulate_in_the_real_binary() {
    assert!(
        tmux_available(),
        "tmux is not installed (apt-get install tmux)"
    );
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("config.toml");
    std::fs::write(&file, "[tune]\nblock = \"64..128*2\"\ngrid = \"1..64\"\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_rr-tui");
    let root = env!("CARGO_MANIFEST_DIR");
    let sweep = "assets/sweeps/rrtui-stencil3d-occurrence0.synthetic.json";
    for (n, settings) in [
        "--no-config".to_string(),
        format!("--config {}", file.display()),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("rr-tui-e2e-sweep-{}-{n}", std::process::id());
        let cmd = format!("cd {root} && NO_COLOR=1 {bin} {settings} {sweep}");
        let s = Session::start(name, &cmd);
        s.wait_for("Tune · rr_stencil3d");
        // At 80×24 the form is the line of the field under the cursor (the heatmap needs the
        // room); at 200×60 it is whole: the sweep's axes and where the answers come from.
        for (w, h, drawn) in [
            ("80", "24", "· field 1 of 16"),
            ("200", "60", "4..16*2x4..16*2x4"),
        ] {
            s.tmux(&["resize-window", "-t", &s.0, "-x", w, "-y", h]);
            s.wait_for(drawn);
            let shown = s.settled();
            assert!(shown.contains("1..8*2x1..8*2x4"), "{shown}");
            assert!(shown.contains("144 configuration(s)"), "{shown}");
            assert!(!shown.contains("64..128*2"), "the config's axes: {shown}");
            assert!(!shown.contains("1..64"), "the config's axes: {shown}");
        }
        let whole = s.settled();
        assert!(whole.contains(&format!("simulate {sweep}")), "{whole}");
        s.keys(&["r"]);
        s.wait_for("r again replaces the sweep opened from");
        s.keys(&["r"]);
        let done = s.wait_for("sweep of rr_stencil3d done: best");
        assert!(!done.contains("cannot tune"), "{done}");
        assert!(!done.contains("no effect"), "{done}");
        assert!(done.contains("144/144"), "{done}");
        s.keys(&["q"]);
    }
}

/// `rr-tui SWEEP.json` of a large sweep draws its first frame before the file is read
/// ("reading SWEEP.json…"), then shows it; a sweep that cannot be shown (every time forged)
/// ends the explorer with its one line on the terminal, exit status 2.
#[test]
fn a_large_sweep_is_read_after_the_first_frame_and_a_refused_one_is_said() {
    assert!(
        tmux_available(),
        "tmux is not installed (apt-get install tmux)"
    );
    let bin = env!("CARGO_BIN_EXE_rr-tui");
    let root = env!("CARGO_MANIFEST_DIR");
    let bundled =
        std::path::Path::new(root).join("assets/sweeps/rrtui-stencil3d-occurrence0.synthetic.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&bundled).unwrap()).unwrap();
    v["descriptor"] = std::path::Path::new(root)
        .join("record-fixtures/rrtui-stencil3d/3844743599784193033_15987061097491423463.json")
        .display()
        .to_string()
        .into();
    let t = tempfile::tempdir().unwrap();
    // Many rows (each a copy of one: all but one left out as given twice).
    let mut large = v.clone();
    let row = large["trials"][3].clone();
    large["trials"] = serde_json::Value::Array(vec![row; 40_000]);
    let path = t.path().join("large.json");
    std::fs::write(&path, serde_json::to_vec(&large).unwrap()).unwrap();
    let name = format!("rr-tui-e2e-large-sweep-{}", std::process::id());
    let s = Session::start(
        name,
        &format!("NO_COLOR=1 {bin} --no-config {}", path.display()),
    );
    s.wait_for("reading ");
    s.wait_for("Tune · rr_stencil3d");
    s.keys(&["q"]);

    let mut forged = v.clone();
    for t in forged["trials"].as_array_mut().unwrap() {
        if !t["kernel_ns"].is_null() {
            t["kernel_ns"]["min"] = 1e-300.into();
        }
    }
    let path = t.path().join("forged.json");
    std::fs::write(&path, serde_json::to_vec(&forged).unwrap()).unwrap();
    let name = format!("rr-tui-e2e-forged-sweep-{}", std::process::id());
    let s = Session::start(
        name,
        &format!(
            "NO_COLOR=1 {bin} --no-config {}; echo EXIT=$?; sleep 60",
            path.display()
        ),
    );
    let shown = s.wait_for("EXIT=");
    assert!(shown.contains("EXIT=2"), "{shown}");
    assert!(
        shown.contains("forged.json: no row has a plausible time"),
        "{shown}"
    );
}

/// The README's tour types `G 3 n` in one burst: `n` reaches the explorer before the worker
/// has mapped the snapshots. It waits for them and jumps to the first difference, rather than
/// saying "no snapshots open … press Enter" with the snapshots on screen.
#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn keys_typed_in_one_burst_before_the_snapshots_load() {
    assert!(
        tmux_available(),
        "tmux is not installed (apt-get install tmux)"
    );
    let name = format!("rr-tui-e2e-burst-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_rr-tui");
    let dir = common::fixture("llvm-two-kernels");
    let cmd = format!("NO_COLOR=1 {bin} --no-config {}", dir.display());
    let s = Session::start(name, &cmd);
    s.wait_for("rr_scale_global");
    s.keys(&["G", "3", "n"]);
    let screen = s.wait_for("differing range 1 of");
    assert!(!screen.contains("press Enter"), "{screen}");
    s.keys(&["q"]);
}
