//! A sweep whose engine refuses the instance itself (a record no replay can run: here a
//! parameter layout of 7 entries for a kernel that takes 6), on the stand-in CUDA driver
//! (`tests/tools/fake_libcuda.c`, whose kernels take 6 parameters): the engine's reason is the
//! sweep's error, said once and never retried as a GPU that "did not start"; `tune X.json` exits
//! 2 as `replay` does, and `tune DIR` lists the instance as skipped with that reason and exits 1.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::*;

/// The fixture's second instance, given a seventh parameter (in the buffer it has).
fn seven_parameters(dir: &Path) -> PathBuf {
    let json = dir.join("3844743599784193033_4435446794594945131.json");
    let mut d: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    d["ParamLayout"] =
        serde_json::json!([[0, 8], [8, 8], [16, 8], [24, 4], [28, 4], [32, 2], [34, 2]]);
    d["NumArgs"] = 7.into();
    std::fs::write(&json, serde_json::to_vec(&d).unwrap()).unwrap();
    json
}

fn tune(driver: &Path, cwd: &Path) -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("LD_LIBRARY_PATH", driver)
        .env("FAKE_CUDA_MEMORY", "1")
        .args(["tune", "--samples", "3"]);
    c
}

const WHY: &str = "the kernel in the image takes 6 parameter(s) but the record has 7";

#[test]
fn an_instance_the_engine_refuses_is_the_sweeps_error_not_a_gpu_that_did_not_start() {
    let driver = fake_driver();
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let json = seven_parameters(&dir);
    let work = tempfile::tempdir().unwrap();

    // One instance: the engine's refusal, once, exit 2.
    let out = tune(driver.path(), work.path())
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        !stderr.contains("attempt") && !stderr.contains("no GPU could run"),
        "{stderr}"
    );
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("rr-tui: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains(WHY) && errors[0].contains(".json: "),
        "{stderr}"
    );

    // The recording: the other instance swept, this one skipped with the engine's reason.
    let reports = work.path().join("reports");
    let out = tune(driver.path(), work.path())
        .arg(&dir)
        .arg("--reports")
        .arg(&reports)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        !stderr.contains("attempt") && !stderr.contains("no GPU could run"),
        "{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(reports.join("summary.json")).unwrap()).unwrap();
    let rows = summary.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{summary}");
    assert_eq!(rows[0]["outcome"], "swept", "{summary}");
    assert!(rows[0]["best"].is_string(), "{summary}");
    assert_eq!(rows[1]["outcome"], "skipped", "{summary}");
    assert!(
        rows[1]["reason"].as_str().unwrap().contains(WHY),
        "{summary}"
    );
    // Said where it happened and in the summary.
    assert_eq!(stdout.matches(WHY).count(), 2, "{stdout}");

    // A recording every instance of which sweeps exits 0.
    let (_t, whole) = fixture_copy("rrtui-v2-stencil3d");
    tune(driver.path(), work.path())
        .arg(&whole)
        .arg("--reports")
        .arg(work.path().join("whole"))
        .assert()
        .code(0);
}

/// An instance whose descriptor cannot be read (a directory in its place) names no kernel: it is
/// taken whatever `--kernels` says, and listed as skipped with the reason, never left out.
#[test]
fn an_unreadable_descriptor_is_listed_as_skipped_not_left_out() {
    let driver = fake_driver();
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let json = dir.join("3844743599784193033_4435446794594945131.json");
    std::fs::remove_file(&json).unwrap();
    std::fs::create_dir(&json).unwrap();
    let work = tempfile::tempdir().unwrap();
    let reports = work.path().join("reports");
    let out = tune(driver.path(), work.path())
        .arg(&dir)
        .args(["--kernels", "stencil", "--reports"])
        .arg(&reports)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("== instance 2/2: kernel unknown")
            && stdout.contains(
                "  kernel unknown (3844743599784193033_4435446794594945131.json): skipped: "
            )
            && stdout.contains("not a regular file"),
        "{stdout}"
    );
}
