//! The generated repro.cpp as its user meets it, built with g++ against the minimal cuda.h and
//! run on the stand-in driver (tests/tools/fake_libcuda.c): `--help` prints the usage, a
//! `--pack`ed reproducer run before its data is unpacked says to unpack it, and an image that
//! lacks a recorded global says so by name.

mod common;

use assert_cmd::Command;
use common::*;
use std::path::{Path, PathBuf};

const STENCIL: &str = "3844743599784193033_15987061097491423463.json";

/// `rr-tui repro` of the stencil record into `out`, with `flags`.
fn repro(out: &Path, flags: &[&str]) {
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("repro")
        .arg(fixture("rrtui-stencil3d").join(STENCIL))
        .arg("--out")
        .arg(out)
        .args(flags)
        .assert()
        .success();
}

/// `out/repro.cpp` built against tests/tools/cuda_min, linked with the stand-in driver.
fn build(out: &Path, lib: &Path) -> PathBuf {
    let exe = out.join("repro");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
    let status = std::process::Command::new("g++")
        .args(["-O1", "-std=c++17", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(out.join("repro.cpp"))
        .arg(format!("-I{}", include.display()))
        .arg(format!("-L{}", lib.display()))
        .arg("-lcuda")
        .status()
        .expect("g++ runs: build.rs found it, so this test is not ignored");
    assert!(status.success(), "g++ repro.cpp");
    exe
}

/// Run `exe ARGS` on the stand-in driver with `env`: exit status, stdout, stderr.
fn run(exe: &Path, lib: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let o = std::process::Command::new(exe)
        .args(args)
        .env("LD_LIBRARY_PATH", lib)
        .env("FAKE_CUDA_MEMORY", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
#[cfg_attr(rr_no_cxx, ignore = "needs g++")]
fn help_unpacking_and_a_missing_global_are_said_plainly() {
    let lib = fake_driver();
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("packed");
    repro(&out, &["--pack"]);
    let exe = build(&out, lib.path());
    // --help: the usage on stdout, exit 0, before anything else (the data is not unpacked).
    for flag in ["--help", "-h"] {
        let (code, said, err) = run(&exe, lib.path(), &[flag], &[]);
        assert_eq!(code, 0, "{err}");
        assert!(
            said.starts_with("usage: ./repro [--repetitions N]"),
            "{said}"
        );
        assert!(said.contains("--image FILE"), "{said}");
    }
    // Run before `tar xf data.tar`: said so, one line, exit 2.
    let (code, _, err) = run(&exe, lib.path(), &["--repetitions", "0"], &[]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "data: missing; unpack the recorded data first: cd {} && tar xf data.tar",
            out.display()
        )),
        "{err}"
    );
    let status = std::process::Command::new("tar")
        .arg("xf")
        .arg("data.tar")
        .current_dir(&out)
        .status()
        .unwrap();
    assert!(status.success());
    // Unpacked, it runs (the stand-in's kernel does nothing: the output differs, exit 1).
    let (code, _, err) = run(&exe, lib.path(), &["--repetitions", "0"], &[]);
    assert_eq!(code, 1, "{err}");
    // An image without a recorded global: named, not CUDA_ERROR_NOT_FOUND.
    let (code, _, err) = run(
        &exe,
        lib.path(),
        &["--repetitions", "0"],
        &[("FAKE_CUDA_NO_GLOBAL", "c_bias")],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/data/kernel.cubin lacks global c_bias, which the recorded kernel uses"),
        "{err}"
    );
    assert!(!err.contains("CUDA_ERROR_NOT_FOUND"), "{err}");
}
