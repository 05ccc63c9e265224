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
