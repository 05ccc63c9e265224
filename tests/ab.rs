//! `rr-tui replay --candidate` without a GPU: everything an A/B replay refuses is refused before
//! it looks for one, in one line naming the file. The A/B runs themselves are in the GPU suite
//! (tests/gpu/ab-suite.sh).

mod common;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    c
}

fn one_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).into_owned();
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("rr-tui: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "one error line: {text}");
    errors[0].to_string()
}

#[test]
fn candidates_are_checked_before_any_gpu() {
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let json = descriptor_of(&dir, "rr_stencil3d");
    let work = tempfile::tempdir().unwrap();
    let at = |name: &str| work.path().join(name);
    std::fs::write(
        at("k.ptx"),
        ".version 8.0\n.target sm_90\n.address_size 64\n",
    )
    .unwrap();
    std::fs::write(at("k.bin"), [0xffu8; 64]).unwrap();
    std::fs::write(at("nul.cu"), b"__global__ void k() {}\0").unwrap();
    std::fs::write(at("k.cu"), b"__global__ void k() {}").unwrap();
    std::fs::create_dir(at("dir.cu")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", at("zero.cu")).unwrap();
    let cases: [(&str, Vec<&str>, &str); 9] = [
        ("k.cu", vec!["-D", "T=1..4"], "sweeps several"),
        ("k.cu", vec!["-D", "T=1", "-D", "T=2"], "given twice"),
        ("missing.cu", vec![], "missing.cu"),
        ("k.ptx", vec!["-D", "TILE=4"], "apply to CUDA C++ sources"),
        (
            "k.bin",
            vec![],
            "a candidate is a cubin, fatbin or PTX file",
        ),
        ("nul.cu", vec![], "holds no NUL bytes"),
        ("dir.cu", vec![], "dir.cu"),
        ("zero.cu", vec![], "zero.cu"),
        (
            "k.ptx",
            vec!["--max-noise", "1"],
            "does not take --max-noise",
        ),
    ];
    for (file, extra, want) in cases {
        let out = rr()
            .arg("replay")
            .arg(&json)
            .arg("--candidate")
            .arg(at(file))
            .args(&extra)
            .output()
            .unwrap();
        // A candidate that cannot be used is the input's fault: exit 2, as in every command.
        assert_eq!(out.status.code(), Some(2), "{file} {extra:?}");
        let line = one_line(&out.stderr);
        assert!(line.contains(want), "{file} {extra:?}: {line}");
        assert!(
            !line.contains("CUDA driver"),
            "refused before the GPU: {line}"
        );
    }
}

#[test]
fn defines_and_options_are_checked_by_the_parser() {
    let json = descriptor_of(&fixture("rrtui-v2-stencil3d"), "rr_stencil3d");
    for (args, want) in [
        (vec!["--candidate-kernel", "k"], "--candidate"),
        (vec!["--candidate", "k.cu", "-D", "1X=2"], "C identifier"),
        (
            vec!["--candidate", "k.cu", "-D", "X=a\u{1b}b"],
            "control characters",
        ),
        (vec!["--define", "X=1"], "--candidate"),
    ] {
        rr().arg("replay")
            .arg(&json)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(want));
    }
}

/// A well-formed source candidate passes every check; on a machine without a driver the replay
/// then stops at the driver, in one line.
#[test]
#[cfg_attr(
    rr_gpu,
    ignore = "a machine without a GPU's path: the GPU suite runs the A/B for real"
)]
fn a_good_candidate_reaches_the_driver_check() {
    let json = descriptor_of(&fixture("rrtui-v2-stencil3d"), "rr_stencil3d");
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("k.cu");
    std::fs::write(&src, "extern \"C\" __global__ void rr_stencil3d() {}").unwrap();
    let out = rr()
        .arg("replay")
        .arg(&json)
        .arg("--candidate")
        .arg(&src)
        .args(["-D", "TILE=8", "--nvrtc-opt=--use_fast_math", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let error = text
        .lines()
        .find(|l| l.contains("\"event\":\"error\""))
        .unwrap_or_else(|| panic!("no error event: {text}"));
    assert!(error.contains("CUDA driver"), "{error}");
}

/// `rr-tui ab`'s refusals come before any GPU, as `replay --candidate`'s do: exit 2, one line.
#[test]
fn ab_refuses_what_it_cannot_judge_before_any_gpu() {
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let k = work.path().join("k.cu");
    std::fs::write(&k, b"__global__ void k() {}").unwrap();
    let missing = work.path().join("missing.cu");
    let cases: [(Vec<&std::ffi::OsStr>, &str); 3] = [
        (
            vec![".".as_ref(), "--candidate".as_ref(), missing.as_os_str()],
            "missing.cu",
        ),
        (
            vec![
                "^no_such_kernel$".as_ref(),
                "--candidate".as_ref(),
                k.as_os_str(),
            ],
            "no recorded instance of a kernel matching --kernel",
        ),
        (
            vec!["(".as_ref(), "--candidate".as_ref(), k.as_os_str()],
            "not a regular expression",
        ),
    ];
    for (args, want) in cases {
        let out = rr()
            .arg("ab")
            .arg(&dir)
            .arg("--kernel")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = one_line(&out.stderr);
        assert!(line.contains(want), "{args:?}: {line}");
    }
    // No candidate at all is a usage error too.
    rr().args(["ab"])
        .arg(&dir)
        .args(["--kernel", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--candidate <FILE>..."));
}

/// The whole `ab` process around the GPU, on the stand-in driver (whose kernels do nothing and
/// whose fingerprints always agree, so every run "verifies": this checks the plumbing, never
/// the GPU): one worker per candidate runs both instances of the recording, switching between
/// them; the leaderboard is the versioned JSON document, and the exit status says a candidate
/// verified on every instance.
#[test]
fn ab_runs_every_candidate_on_every_instance_through_its_workers() {
    let driver = fake_driver();
    let dir = fixture("rrtui-v2-stencil3d");
    let image = dir.join("images/kernels-sm90.cubin");
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args([
            "--kernel",
            "stencil",
            "--repetitions",
            "6",
            "--events-only",
            "--json",
        ])
        .arg("--candidate")
        .arg(&image)
        .arg(&image)
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let board: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(board["schema"], "rr-tui.ab/1");
    assert_eq!(board["instances"].as_array().unwrap().len(), 2, "{board}");
    assert_eq!(board["passed"], true);
    for c in board["candidates"].as_array().unwrap() {
        assert_eq!(
            (c["verified"].as_u64(), c["total"].as_u64()),
            (Some(2), Some(2))
        );
        for r in c["instances"].as_array().unwrap() {
            assert_eq!(r["status"], "verified", "{r}");
            assert_eq!(r["compare"]["pairs"], 6);
            // The poison was planned from the recorded bytes and armed.
            assert!(r["poisoned_bytes"].as_u64().unwrap() > 0, "{r}");
            assert!(r["changed_bytes"].as_u64().unwrap() > 0, "{r}");
        }
    }
    // Text: the leaderboard's rows and the last line.
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args(["--kernel", ".", "--repetitions", "6", "--events-only"])
        .arg("--candidate")
        .arg(&image)
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Leaderboard: 1 candidate(s) on 2 instance(s)"),
        "{text}"
    );
    assert!(text.contains("2/2"), "{text}");
    assert!(
        text.ends_with("At least one candidate verified on every instance\n"),
        "{text}"
    );
}

/// Without a driver, `ab` says so once (after the checks), exit 1; `--json` as an error object.
#[test]
fn ab_without_a_driver_says_so() {
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let k = work.path().join("k.cu");
    std::fs::write(&k, b"__global__ void k() {}").unwrap();
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args(["--kernel", ".", "--json", "--candidate"])
        .arg(&k)
        .env("LD_LIBRARY_PATH", work.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["event"], "error", "{e}");
}
