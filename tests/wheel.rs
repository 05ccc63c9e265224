//! `python/build-wheel.sh` reuses the README's release build instead of building again: it runs
//! the README's `cargo build --release` as it is (same packages, same features: nothing left to
//! do after it), and maturin's own cargo sees the same PATH (build.rs reruns when PATH changes,
//! and pyenv's shims change it), offline once every platform's crates are on the machine. Run
//! here with stand-ins for cargo, maturin and python3 that write down how they were called.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn write_tool(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The words of the README's build command (`cargo build --release`, its comment left out).
fn readme_build() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("cargo build"))
        .expect("the README's build command");
    let command = line.split('#').next().unwrap();
    command.split_whitespace().map(str::to_string).collect()
}

struct Run {
    /// Each call, one a line: `tool args… | PATH=…`.
    calls: Vec<String>,
    stderr: String,
}

/// The script, copied into a scratch tree with a recorder library in its release directory,
/// run with the stand-ins first on PATH. `cached`: whether `cargo metadata --offline` succeeds
/// (every platform's crates already here).
fn build_wheel(cached: bool) -> Run {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    let release = tree.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::create_dir_all(tree.join("target/wheels")).unwrap();
    std::fs::create_dir_all(tree.join("python")).unwrap();
    std::fs::write(release.join("librr_recorder.so"), b"recorder").unwrap();
    let script = tree.join("python/build-wheel.sh");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("python/build-wheel.sh"),
        &script,
    )
    .unwrap();
    let log = t.path().join("calls");
    let (tools, scripts) = (t.path().join("bin"), t.path().join("python-scripts"));
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(&scripts).unwrap();
    let note = |tool: &str| format!("echo \"{tool} $* | PATH=$PATH\" >> '{}'", log.display());
    let metadata_status = if cached { 0 } else { 101 };
    write_tool(
        &tools.join("cargo"),
        &format!(
            "{}\ncase \"$*\" in *metadata*--offline*) exit {metadata_status};; esac",
            note("cargo")
        ),
    );
    // pip's maturin, where python3 says its scripts go; the one on PATH is a pyenv-like shim
    // that puts a directory of its own in front of PATH.
    write_tool(&scripts.join("maturin"), &note("maturin"));
    write_tool(
        &tools.join("maturin"),
        &format!(
            "PATH=/shim/versions/bin:$PATH exec '{}' \"$@\"",
            scripts.join("maturin").display()
        ),
    );
    write_tool(
        &tools.join("python3"),
        &format!("echo '{}'", scripts.display()),
    );
    let path = std::env::join_paths(
        std::iter::once(tools.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out = Command::new("bash")
        .arg(&script)
        .env("PATH", &path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let installed: PathBuf = tree.join("python/rr_tui.data/scripts/librr_recorder.so");
    assert_eq!(std::fs::read(&installed).unwrap(), b"recorder");
    let calls = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    Run { calls, stderr }
}

fn words(call: &str) -> (Vec<&str>, &str) {
    let (command, path) = call.split_once(" | PATH=").unwrap();
    (command.split_whitespace().collect(), path)
}

#[test]
fn the_wheel_reuses_the_readmes_release_build() {
    let run = build_wheel(true);
    let builds: Vec<&String> = run
        .calls
        .iter()
        .filter(|c| c.starts_with("cargo build"))
        .collect();
    assert_eq!(builds.len(), 1, "{:?}", run.calls);
    let (build, build_path) = words(builds[0]);
    let mut expected = readme_build();
    expected.push("--locked".into());
    assert_eq!(build, expected, "not the README's build: {:?}", run.calls);
    let maturin = run
        .calls
        .iter()
        .find(|c| c.starts_with("maturin"))
        .expect("maturin runs");
    let (maturin_words, maturin_path) = words(maturin);
    assert_eq!(
        maturin_path, build_path,
        "maturin's cargo would see another PATH than the build (build.rs reruns)"
    );
    for flag in ["build", "--release", "--locked", "--offline"] {
        assert!(maturin_words.contains(&flag), "{maturin}");
    }
    assert!(!run.stderr.contains("fetching"), "{}", run.stderr);
}

#[test]
fn without_every_platforms_crates_maturin_fetches_them_once_and_says_so() {
    let run = build_wheel(false);
    let maturin = run
        .calls
        .iter()
        .find(|c| c.starts_with("maturin"))
        .expect("maturin runs");
    assert!(!maturin.contains("--offline"), "{maturin}");
    assert!(
        run.stderr
            .contains("fetching the crates of other platforms once"),
        "{}",
        run.stderr
    );
}
