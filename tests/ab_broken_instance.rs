//! `rr-tui ab` over a recording with one broken instance: the whole judgement is refused before
//! any GPU (exit 2, one line naming the file), as `replay --candidate` refuses that instance. A
//! verdict that left the instance out would read "verified on every instance"; one that found it
//! out on the GPU would have run every other instance first.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::*;

/// `ab DIR --kernels . --candidate <the recorded image>` with no driver to be found (an empty
/// directory on the loader's path): what is refused is refused before the driver is looked for.
fn ab(dir: &Path, nodriver: &Path) -> std::process::Output {
    let image = fixture("rrtui-v2-stencil3d").join("images/kernels-sm90.cubin");
    Command::cargo_bin("rr-tui")
        .unwrap()
        .env("NO_COLOR", "1")
        .env("LD_LIBRARY_PATH", nodriver)
        .arg("ab")
        .arg(dir)
        .args(["--kernels", ".", "--candidate"])
        .arg(image)
        .output()
        .unwrap()
}

/// The fixture's second instance (occurrence 1; the first is occurrence 0).
fn second(dir: &Path) -> PathBuf {
    dir.join("3844743599784193033_4435446794594945131.json")
}

/// The second instance's descriptor, edited by `edit`.
fn edit_second(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let json = second(dir);
    let mut d: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    edit(&mut d);
    std::fs::write(&json, serde_json::to_vec(&d).unwrap()).unwrap();
    json
}

/// The one `rr-tui: error:` line of a refusal, exit status 2.
fn refusal(out: &std::process::Output, case: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{case}: {stderr}");
    assert!(lines[0].starts_with("rr-tui: error: "), "{case}: {stderr}");
    assert!(!lines[0].contains("CUDA driver"), "{case}: {stderr}");
    lines[0].to_string()
}

/// A descriptor the recording lists (no report names its kernel) that cannot be read: a
/// directory, a FIFO (never opened for a blocking read), a parameter layout past its buffer.
#[test]
fn an_unreadable_descriptor_refuses_the_judgement() {
    let nodriver = tempfile::tempdir().unwrap();
    let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    // A directory in the descriptor's place.
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let json = second(&dir);
    std::fs::remove_file(&json).unwrap();
    std::fs::create_dir(&json).unwrap();
    let line = refusal(&ab(&dir, nodriver.path()), "directory");
    assert!(
        line.contains(&name(&json)) && line.contains("not a regular file"),
        "{line}"
    );
    // A parameter layout past the parameter buffer.
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let json = edit_second(&dir, |d| {
        let params = d["ParamBuffer"].as_str().unwrap();
        d["ParamBuffer"] = params[..params.len() - 16].into();
    });
    let line = refusal(&ab(&dir, nodriver.path()), "short parameters");
    assert!(
        line.contains(&name(&json)) && line.contains("ParamBuffer"),
        "{line}"
    );
}

#[cfg_attr(rr_no_mkfifo, ignore = "mkfifo is not installed")]
#[test]
fn a_descriptor_that_is_a_fifo_refuses_the_judgement_without_blocking() {
    let nodriver = tempfile::tempdir().unwrap();
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let json = second(&dir);
    std::fs::remove_file(&json).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(&json)
        .status()
        .unwrap()
        .success());
    let line = refusal(&ab(&dir, nodriver.path()), "FIFO");
    assert!(line.contains("FIFO"), "{line}");
}

/// A case's name, how it makes the blob (given its path), and what its refusal says.
type Case = (&'static str, fn(&Path), &'static str);

/// The recorded output of one instance, which every candidate is verified against, missing,
/// cut short or a link to `/dev/zero`: refused up front naming the blob, as `replay
/// --candidate` refuses it (not an error instance found after the others ran).
#[test]
fn a_bad_recorded_output_refuses_the_judgement() {
    let nodriver = tempfile::tempdir().unwrap();
    let blob = "ffffffffffffffffffffffffffffffff";
    let cases: [Case; 3] = [
        ("missing", |_| {}, "missing: the output blob of segment 1"),
        (
            "truncated",
            |p| std::fs::write(p, [0u8; 100]).unwrap(),
            "is 100 bytes but segment 1",
        ),
        (
            "/dev/zero",
            |p| std::os::unix::fs::symlink("/dev/zero", p).unwrap(),
            "a link to /dev/zero",
        ),
    ];
    for (case, make, want) in cases {
        let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
        let json = edit_second(&dir, |d| d["Segments"][1]["Output"] = blob.into());
        make(&dir.join("blobs").join(blob));
        let out = ab(&dir, nodriver.path());
        let line = refusal(&out, case);
        assert!(line.contains(blob) && line.contains(want), "{case}: {line}");
        // `replay --candidate` refuses the instance with the same line.
        let image = dir.join("images/kernels-sm90.cubin");
        let replay = Command::cargo_bin("rr-tui")
            .unwrap()
            .env("NO_COLOR", "1")
            .env("LD_LIBRARY_PATH", nodriver.path())
            .arg("replay")
            .arg(&json)
            .arg("--candidate")
            .arg(image)
            .output()
            .unwrap();
        assert_eq!(refusal(&replay, case), line);
    }
}
