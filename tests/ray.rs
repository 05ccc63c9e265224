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
