//! The Python package's Ray sweep (`rr_tui.ray`) on a local multi-node Ray cluster, with
//! simulated engines (python/tests/ray_cluster.py): equal to the same sweep in-process, also
//! when a node is removed mid-sweep. Needs Ray (`pip install ray`), which `.ci/run` installs:
//! without it the test is ignored (build.rs), or fails under REQUIRE_ALL=1.

use std::process::Command;

#[test]
#[cfg_attr(rr_no_ray, ignore = "Ray is not installed (pip install ray)")]
fn a_sweep_runs_on_a_local_multi_node_ray_cluster_and_survives_a_lost_node() {
    let has_ray = Command::new("python3")
        .args(["-c", "import ray"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(has_ray, "Ray is not installed (pip install ray)");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/tests/ray_cluster.py");
    let out = Command::new("timeout")
        .args(["600", "python3", script])
        .arg(assert_cmd::cargo::cargo_bin("rr-tui"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let results: Vec<&str> = stdout.lines().filter(|l| l.starts_with("ray:")).collect();
    assert!(
        out.status.success(),
        "{}\n{}",
        results.join("\n"),
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        results.iter().any(|l| l.contains("4 passed, 0 failed")),
        "{stdout}"
    );
}

/// `python -m rr_tui.ray --num-gpus N --simulate SWEEP.json`: a local cluster declaring N GPUs
/// (Ray's logical ones), so a simulated sweep runs on a machine without any, one engine per
/// declared GPU (without it: "has no free GPU"). `--num-gpus` with `--address` is refused: a
/// running cluster has its own GPUs.
#[test]
#[cfg_attr(rr_no_ray, ignore = "Ray is not installed (pip install ray)")]
fn a_simulated_sweep_declares_the_gpus_of_its_local_cluster() {
    let root = env!("CARGO_MANIFEST_DIR");
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("sweep.json");
    let ray = |args: &[&str]| {
        Command::new("timeout")
            .args(["300", "python3", "-m", "rr_tui.ray"])
            .args(args)
            .env("PYTHONPATH", format!("{root}/python"))
            .env("RR_TUI", assert_cmd::cargo::cargo_bin("rr-tui"))
            .env_remove("RAY_ADDRESS")
            .current_dir(t.path())
            .output()
            .expect("python3 runs")
    };
    let sweep = format!("{root}/assets/sweeps/rrtui-stencil3d-occurrence0.synthetic.json");
    let descriptor = format!(
        "{root}/record-fixtures/rrtui-stencil3d/3844743599784193033_15987061097491423463.json"
    );
    let run = ray(&[
        "--num-gpus",
        "2",
        "--simulate",
        &sweep,
        &descriptor,
        "--block",
        "4..16*2x4..16*2x4",
        "--grid",
        "1..8*2x1..8*2x4",
        "--json-out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(!err.contains("no free GPU"), "{err}");
    // Nothing is measured: the header says so, as `tune --simulate`'s does.
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(said.contains("simulating up to 144"), "{said}");
    assert!(!said.contains("timing: "), "{said}");
    assert!(said.contains("simulated from "), "{said}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(report["trials"].as_array().unwrap().len(), 144);
    assert_eq!(
        report["devices"].as_array().unwrap().len(),
        2,
        "one engine per GPU"
    );
    assert_eq!(
        report["simulated_from"],
        serde_json::Value::from(sweep.clone())
    );
    let refused = ray(&["--num-gpus", "2", "--address", "auto", &descriptor]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("a running cluster has its own"));
}
