//! `rr-tui tune` without a GPU: everything it checks before measuring (axes, limits, files,
//! flags that conflict, the image kind for register limits), `--list`, and the one line it says
//! when there is no driver. The sweep itself runs in the GPU suite (tests/gpu/tune-suite.sh).

mod common;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;

fn rr() -> Command {
    Command::cargo_bin("rr-tui").unwrap()
}

fn saxpy() -> std::path::PathBuf {
    descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy")
}

#[test]
fn list_shows_the_space_and_what_a_limit_skips() {
    let out = rr()
        .args([
            "tune",
            "--list",
            "--grid",
            "8,cover",
            "--block",
            "512x2,1024..2048*2",
        ])
        .arg(saxpy())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("recorded: grid "), "{text}");
    assert!(
        text.contains(
            "grid 8x1x1 block 2048x1x1 smem 0  skipped: block 2048×1×1 has more than 1024 threads"
        ),
        "{text}"
    );
    // `cover` keeps the recorded threads: 8 blocks of 128 recorded, so 1 block of 1024.
    assert!(
        text.contains("grid 1x1x1 block 1024x1x1 smem 0\n"),
        "{text}"
    );
    assert!(
        text.ends_with("6 configuration(s), 2 skipped by a limit\n"),
        "{text}"
    );
    // A part of a sharded sweep lists its own configurations; the recorded one is part 1's.
    let part = |k: &str| {
        let out = rr()
            .args(["tune", "--list", "--grid", "1..10", "--shard", k])
            .arg(saxpy())
            .env_remove("SLURM_ARRAY_TASK_ID")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    let (one, two) = (part("1/3"), part("2/3"));
    assert!(
        one.starts_with("recorded: ") && !two.starts_with("recorded: "),
        "{two}"
    );
    assert!(
        one.contains("grid 1x1x1 ") && one.contains("grid 4x1x1 ") && !one.contains("grid 2x1x1 "),
        "{one}"
    );
    assert!(
        two.ends_with("3 configuration(s) of part 2/3 (of 10 in all), 0 skipped by a limit\n"),
        "{two}"
    );
}

#[test]
fn usage_mistakes_are_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--block", "128,1,1"], "one 3-D value is written 128x1x1"),
        (&["--block", "0"], "values must be at least 1"),
        (&["--block", "32..16"], "the range ends before it starts"),
        (&["--block", "1..10:0"], "a step of 0 never ends"),
        (&["--block", "32..1024*1"], "a factor of at least 2"),
        (&["--block", "1..4294967295"], "more than 65536 values"),
        (&["--registers", "300"], "300 is above 255"),
        (&["--devices", "0,0"], "GPU 0 is listed twice"),
        (&["--devices", "a"], "expected GPU ordinals like 0,1"),
        (&["--budget", "0"], "from 1 to 1048576"),
        // Each fixed sample is kept until its configuration is summarised: 4294967295 of them
        // ran to the configuration's timeout holding hundreds of MB.
        (
            &["--samples", "4294967295"],
            "expected a number of samples from 1 to 1000000",
        ),
        (&["--samples", "0"], "from 1 to 1000000"),
        (
            &["--samples", "5", "--max-noise", "1"],
            "cannot be used with",
        ),
        (&["--time-limit", "-5"], "expected a positive number"),
        (
            &["--registers", "32"],
            "--registers needs a record holding PTX",
        ),
    ];
    for (args, message) in cases {
        let out = rr().arg("tune").arg(saxpy()).args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed a header");
    }
}

#[test]
fn output_files_are_checked_before_any_work_and_never_replaced() {
    let t = tempfile::tempdir().unwrap();
    let existing = t.path().join("sweep.json");
    std::fs::write(&existing, "{}").unwrap();
    rr().arg("tune")
        .arg(saxpy())
        .arg("--json-out")
        .arg(&existing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "exists; choose another file, or add --resume",
        ));
    assert_eq!(std::fs::read(&existing).unwrap(), b"{}");
    rr().arg("tune")
        .arg(saxpy())
        .arg("--json-out")
        .arg(&existing)
        .arg("--resume")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a tuning report"));
    rr().arg("tune")
        .arg(saxpy())
        .arg("--json-out")
        .arg(t.path().join("missing/t.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("its directory does not exist"));
    // The same file by two spellings.
    let sub = t.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    rr().current_dir(&sub)
        .arg("tune")
        .arg(saxpy())
        .args(["--json-out", "./same.out", "--csv"])
        .arg(sub.join("same.out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("name the same file"));
    #[cfg(unix)]
    {
        // A FIFO as the report to resume: refused without opening it (a read would block).
        let fifo = t.path().join("fifo.json");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        rr().arg("tune")
            .arg(saxpy())
            .arg("--json-out")
            .arg(&fifo)
            .arg("--resume")
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is not a regular file"));
        let link = t.path().join("link.json");
        std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
        rr().arg("tune")
            .arg(saxpy())
            .arg("--json-out")
            .arg(&link)
            .arg("--resume")
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is not a regular file"));
    }
}

#[test]
#[cfg_attr(
    rr_gpu,
    ignore = "a machine without a GPU's path: the GPU suite covers the sweep"
)]
fn without_a_driver_the_sweep_says_so_once_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("t.json");
    let out = rr()
        .arg("tune")
        .arg(saxpy())
        .args(["--block", "64,128", "--devices", "0,1", "--json-out"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no CUDA driver found"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(!json.exists());
}

/// A made-up exhaustive sweep of saxpy over grid 1..32 × block 32..1024:32 (1 024
/// configurations): the kernel time is smooth, with its minimum at grid 24, block 384; one
/// configuration is missing.
fn synthetic_sweep(dir: &std::path::Path) -> std::path::PathBuf {
    use rr_engine::replay::stats::Stats;
    use rr_engine::replay::timing::TimingPolicy;
    use rr_tune::{Config, Status, Trial, TuneReport};
    let d = rr_format::Descriptor::read(&saxpy()).unwrap();
    let config = |g: u32, b: u32| Config {
        grid: [g, 1, 1],
        block: [b, 1, 1],
        shared_mem: 0,
        max_registers: None,
        variant: None,
    };
    let mut report = TuneReport::new(
        saxpy().display().to_string(),
        d.name.clone(),
        config(8, 128),
        TimingPolicy::fixed(1, true),
    );
    for g in 1..=32u32 {
        for b in (32..=1024u32).step_by(32) {
            if (g, b) == (5, 64) {
                continue;
            }
            let cost =
                1000.0 + 10.0 * ((g as f64 - 24.0).powi(2) + (b as f64 / 32.0 - 12.0).powi(2));
            let mut t = Trial::new(config(g, b), Status::Ok);
            t.kernel_ns = Some(Stats::of(&[cost]));
            report.trials.push(t);
        }
    }
    let path = dir.join("sweep.json");
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
    path
}

/// `tune` of saxpy over `axes`, answered from `sweep`.
fn simulated(axes: &[&str], sweep: &std::path::Path) -> Command {
    let mut c = rr();
    c.arg("tune")
        .arg(saxpy())
        .args(axes)
        .arg("--simulate")
        .arg(sweep);
    c
}

fn best_of(json: &std::path::Path) -> (serde_json::Value, usize) {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let n = v["trials"].as_array().unwrap().len();
    (v["best"].clone(), n)
}

#[test]
fn a_simulated_sweep_answers_from_a_finished_one_without_a_gpu() {
    let t = tempfile::tempdir().unwrap();
    let sweep = synthetic_sweep(t.path());
    let axes = ["--grid", "1..32", "--block", "32..1024:32"];
    // Exhaustive: every configuration answered, the missing one skipped, the optimum found.
    let all = t.path().join("all.json");
    simulated(&axes, &sweep)
        .arg("--json-out")
        .arg(&all)
        .assert()
        .success()
        .stdout(predicate::str::contains("not in the simulated sweep"));
    let (best, n) = best_of(&all);
    assert_eq!(n, 1024);
    assert_eq!(best["grid"], serde_json::json!([24, 1, 1]), "{best}");
    assert_eq!(best["block"], serde_json::json!([384, 1, 1]), "{best}");
    // TPE with a tenth of the space comes within 2 % of the optimum (the median of 5 seeds).
    let mut bests = Vec::new();
    for seed in ["1", "2", "3", "4", "5"] {
        let json = t.path().join(format!("tpe{seed}.json"));
        simulated(&axes, &sweep)
            .args(["--strategy", "tpe", "--budget", "102", "--seed", seed])
            .arg("--json-out")
            .arg(&json)
            .assert()
            .success();
        let (best, n) = best_of(&json);
        assert!(n <= 102, "{n}");
        bests.push(best["kernel_ns"]["median"].as_f64().unwrap());
    }
    bests.sort_by(f64::total_cmp);
    assert!(bests[2] <= 1020.0, "best per seed: {bests:?}");
    // A sweep of another kernel is refused.
    let other: serde_json::Value = serde_json::from_slice(&std::fs::read(&sweep).unwrap()).unwrap();
    let mut other = other;
    other["kernel"] = "another_kernel".into();
    let wrong = t.path().join("wrong.json");
    std::fs::write(&wrong, other.to_string()).unwrap();
    simulated(&axes, &wrong)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds a sweep of another kernel (another_kernel)",
        ));
    // What a simulated sweep wrote says so, and is never resumed or simulated from.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&all).unwrap()).unwrap();
    assert!(v["simulated_from"]
        .as_str()
        .unwrap()
        .ends_with("sweep.json"));
    simulated(&axes, &all)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("was simulated from"));
    // Resuming it names the flag by its spelling (--json-out, not the old --json).
    rr().arg("tune")
        .arg(saxpy())
        .args(axes)
        .arg("--json-out")
        .arg(&all)
        .arg("--resume")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "not measured: choose another --json-out file",
        ));
}

/// A sweep `--simulate` cannot answer from is refused naming --simulate, not --json-out, and a file
/// it cannot read is a usage error (exit 2) as for the other flags' files.
#[test]
fn a_sweep_that_cannot_be_simulated_from_is_named_as_the_simulate_flags() {
    let t = tempfile::tempdir().unwrap();
    let sweep = synthetic_sweep(t.path());
    let axes = ["--grid", "1..4"];
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&sweep).unwrap()).unwrap();
        edit(&mut v);
        let path = t.path().join(name);
        std::fs::write(&path, v.to_string()).unwrap();
        path
    };
    let other_instance = edited("other.json", &|v| v["recorded"]["grid"][0] = 7.into());
    let was_simulated = edited("simulated.json", &|v| v["simulated_from"] = "s.json".into());
    for (file, problem) in [
        (&other_instance, "holds a sweep of another instance of"),
        (&was_simulated, "was simulated from s.json, not measured"),
    ] {
        let out = simulated(&axes, file).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(problem)
                && stderr.ends_with(" choose another sweep for --simulate\n")
                && !stderr.contains("--json"),
            "{stderr}"
        );
    }
    simulated(&axes, std::path::Path::new("/nonexistent/sweep.json"))
        .assert()
        .code(2)
        .stderr("rr-tui: error: --simulate /nonexistent/sweep.json: no such file or directory\n");
}

/// A simulated sweep says what it is: "simulated" wherever a measured one says "measured" or
/// "verified", never advice that `--simulate` refuses (`--resume`); `--list` refuses what the
/// sweep refuses (register limits of a record holding no PTX) instead of listing it.
#[test]
fn a_simulated_sweep_says_simulated_and_the_list_refuses_what_the_sweep_refuses() {
    let t = tempfile::tempdir().unwrap();
    let sweep = synthetic_sweep(t.path());
    let axes = ["--grid", "1..4", "--block", "32..128:32"];
    let out = simulated(&axes, &sweep).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("; simulating up to 17 with"), "{text}");
    assert!(
        text.contains("17 configuration(s) simulated in")
            && text.contains("17 simulated as verified, 0 simulated as failing to verify"),
        "{text}"
    );
    for line in text.lines() {
        let claims = line.contains("measur") || line.contains("verif");
        assert!(
            !claims || line.contains("simulat"),
            "says it measured: {line:?}\n{text}"
        );
        assert!(!line.contains("--resume"), "{line:?}");
    }
    // An existing --json-out: choose another file, not --resume (which --simulate refuses).
    let existing = t.path().join("existing.json");
    std::fs::write(&existing, "{}").unwrap();
    let out = simulated(&axes, &sweep)
        .arg("--json-out")
        .arg(&existing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "rr-tui: error: --json-out {}: exists; choose another file\n",
            existing.display()
        )
    );
    // The fixture's image is a cubin: no register limit can be applied, so none is listed.
    let out = rr()
        .args(["tune", "--list", "--registers", "32..64:32"])
        .arg(saxpy())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "listed what the sweep refuses");
    assert!(
        stderr.contains("--registers needs a record holding PTX") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// Nothing of a simulated sweep reads as measured: its rows, its fastest, `tune merge` of its
/// parts, and `--list` with --simulate say "simulated".
#[test]
fn a_simulated_sweeps_rows_merge_and_list_say_simulated() {
    let t = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(synthetic_sweep(t.path())).unwrap()).unwrap();
    // One configuration failed to verify in the sweep simulated from.
    let failing = v["trials"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["grid"][0] == 2 && t["block"][0] == 64)
        .unwrap();
    failing["status"] = "verify_failed".into();
    failing["message"] = "3 bytes differ".into();
    let sweep = t.path().join("failing.json");
    std::fs::write(&sweep, v.to_string()).unwrap();
    let axes = ["--grid", "1..4", "--block", "32..128:32"];
    let out = simulated(&axes, &sweep).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(rows.len(), 17, "{text}");
    for row in &rows {
        assert!(
            row.contains("  simulated ok") || row.contains("  simulated verify failed: "),
            "{row}"
        );
    }
    assert!(
        text.contains("  simulated verify failed: 3 bytes differ"),
        "{text}"
    );
    let fastest = text.split("Fastest").nth(1).unwrap();
    let ranked: Vec<&str> = fastest.lines().skip(1).take(5).collect();
    assert!(
        ranked.iter().all(|l| l.contains("  simulated ok")),
        "{ranked:?}"
    );
    // The parts of a simulated sweep, merged.
    for k in 1..=2 {
        simulated(&axes, &sweep)
            .args(["--shard", &format!("{k}/2"), "--json-out"])
            .arg(t.path().join(format!("part{k}.json")))
            .assert()
            .success();
    }
    rr().args(["tune", "merge"])
        .arg(t.path().join("part1.json"))
        .arg(t.path().join("part2.json"))
        .arg("--json-out")
        .arg(t.path().join("merged.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Merged 2 shard(s): 17 configuration(s), 17 simulated",
        ));
    simulated(&axes, &sweep)
        .arg("--list")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "(simulated first, as the baseline)",
        ))
        .stdout(predicate::str::contains("measured").not());
}

/// The flags docs/tuning.md names in `sentence`'s part of its "Simulated sweeps" section: the
/// backticked `--flag`s between `after` and `before`.
fn documented_flags(after: &str, before: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tuning.md"),
    )
    .unwrap();
    let section = doc.split("## Simulated sweeps").nth(1).unwrap();
    let section = section.split("\n## ").next().unwrap().replace('\n', " ");
    let part = section
        .split(after)
        .nth(1)
        .unwrap_or_else(|| panic!("no {after:?}"));
    let part = part.split(before).next().unwrap();
    part.split('`')
        .filter(|w| w.starts_with("--"))
        .map(str::to_string)
        .collect()
}

/// What docs/tuning.md says of the flags given with --simulate is what tune does: refused, said
/// to have no effect, or applied (--time-limit stops handing out configurations).
#[test]
fn the_simulate_flags_do_what_the_tuning_page_says() {
    let t = tempfile::tempdir().unwrap();
    let sweep = synthetic_sweep(t.path());
    let axes = ["--grid", "1..32", "--block", "32..1024:32"];
    let value = |flag: &str| -> Vec<String> {
        let words: Vec<&str> = match flag {
            "--export" => vec!["--export", "e.json"],
            "--engine-hub" => vec!["--engine-hub", "hub.sock", "--engines", "1"],
            "--devices" => vec!["--devices", "0"],
            "--energy-seconds" => vec!["--energy-seconds", "2"],
            "--tolerance" => vec!["--tolerance", "f32:atol=1e-3"],
            "--time-limit" => vec!["--time-limit", "60"],
            "--budget" => vec!["--budget", "5"],
            "--strategy" => vec!["--strategy", "random"],
            // Not the exhaustive strategy, which a seed does nothing for.
            "--seed" => vec!["--seed", "3", "--strategy", "random"],
            "--shard" => vec!["--shard", "1/2"],
            flag => vec![flag],
        };
        words.into_iter().map(str::to_string).collect()
    };
    let run = |flag: &str| {
        let out = simulated(&axes, &sweep)
            .current_dir(t.path())
            .args(value(flag))
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let refused = documented_flags("simulated from.", "are refused with it");
    assert_eq!(refused, ["--resume", "--export", "--engine-hub"]);
    for flag in &refused {
        let (code, stderr) = run(flag);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(stderr.contains("--simulate"), "{flag}: {stderr}");
    }
    let no_effect = documented_flags("refused with it;", "said to have no effect");
    assert!(no_effect.len() >= 5, "{no_effect:?}");
    for flag in &no_effect {
        let (code, stderr) = run(flag);
        assert_eq!(code, Some(0), "{flag}: {stderr}");
        assert!(
            stderr
                .lines()
                .any(|l| l.contains(flag.as_str()) && l.contains("no effect with --simulate")),
            "{flag}: {stderr}"
        );
    }
    let applied = documented_flags("answers stand);", "apply as to a measured sweep");
    assert!(applied.contains(&"--time-limit".to_string()), "{applied:?}");
    for flag in &applied {
        let (code, stderr) = run(flag);
        assert_eq!(code, Some(0), "{flag}: {stderr}");
        assert!(!stderr.contains("no effect"), "{flag}: {stderr}");
    }
    // A limit already past when the sweep starts: nothing is handed out (exit 1: no best).
    simulated(&axes, &sweep)
        .args(["--time-limit", "0.000000001"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("0 configuration(s) simulated in"));
}

/// A sweep that measured energy: faster blocks cost more power, so the fastest configuration
/// is not the most frugal one and the Pareto front has more than one point.
fn energy_sweep(dir: &std::path::Path) -> std::path::PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(synthetic_sweep(dir)).unwrap()).unwrap();
    v["energy"] = serde_json::json!({"min_seconds": 1.0, "min_windows": 5, "max_seconds": 3.0});
    for t in v["trials"].as_array_mut().unwrap() {
        let ns = t["kernel_ns"]["median"].as_f64().unwrap();
        let block = t["block"][0].as_f64().unwrap();
        // Power falls with the block size: 400 W at 32 threads, 150 W at 1024.
        let watts = 400.0 - 250.0 * (block - 32.0) / 992.0;
        t["energy"] = serde_json::json!({
            "joules": watts * ns / 1e9, "power_w": watts, "noise": 0.01, "windows": 8
        });
    }
    let path = dir.join("energy-sweep.json");
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

#[test]
fn objectives_pick_their_best_and_the_report_marks_the_pareto_front() {
    let t = tempfile::tempdir().unwrap();
    let sweep = energy_sweep(t.path());
    let axes = ["--grid", "1..32", "--block", "32..1024:32"];
    let mut bests = Vec::new();
    for objective in ["time", "energy", "edp"] {
        let (json, csv) = (
            t.path().join(format!("{objective}.json")),
            t.path().join(format!("{objective}.csv")),
        );
        simulated(&axes, &sweep)
            .args(["--objective", objective, "--json-out"])
            .arg(&json)
            .arg("--csv")
            .arg(&csv)
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "Pareto front of time against energy",
            ));
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(v["objective"], objective);
        let trials = v["trials"].as_array().unwrap();
        let front: Vec<usize> = v["pareto"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap() as usize)
            .collect();
        let measured: Vec<(usize, f64, f64)> = trials
            .iter()
            .enumerate()
            .filter(|(_, t)| t["status"] == "ok")
            .map(|(i, t)| {
                let ns = t["kernel_ns"]["median"].as_f64().unwrap();
                (i, ns, t["energy"]["joules"].as_f64().unwrap())
            })
            .collect();
        let fastest = measured.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        let frugal = measured.iter().min_by(|a, b| a.2.total_cmp(&b.2)).unwrap();
        assert!(
            front.contains(&fastest.0) && front.contains(&frugal.0),
            "{front:?}"
        );
        assert!(front.len() >= 2, "{front:?}");
        // Nothing on the front is dominated; everything off it is.
        for &(i, ns, j) in &measured {
            let dominated = measured
                .iter()
                .any(|&(_, n2, j2)| n2 <= ns && j2 <= j && (n2 < ns || j2 < j));
            assert_eq!(front.contains(&i), !dominated, "trial {i}");
            assert_eq!(trials[i]["pareto"].as_bool().unwrap_or(false), !dominated);
        }
        let csv = std::fs::read_to_string(&csv).unwrap();
        let header = csv.lines().next().unwrap();
        assert!(
            header.ends_with("Energy (mJ),Power (W),Energy noise (%),EDP (J*s),Pareto"),
            "{header}"
        );
        let marked = csv.lines().skip(1).filter(|l| l.ends_with(",1")).count();
        assert_eq!(marked, front.len());
        bests.push(v["best"].clone());
    }
    // Time picks the fastest, energy the most frugal (a larger block), EDP between.
    let block = |b: &serde_json::Value| b["block"][0].as_u64().unwrap();
    assert_eq!(block(&bests[0]), 384);
    assert!(block(&bests[1]) > block(&bests[0]), "{bests:?}");
    let joules = |b: &serde_json::Value| b["energy"]["joules"].as_f64().unwrap();
    assert!(joules(&bests[1]) <= joules(&bests[2]) && joules(&bests[2]) <= joules(&bests[0]));
    // What only measuring means says it does nothing here.
    simulated(&axes, &sweep)
        .args(["--energy", "--samples", "3", "--no-verify"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "--energy: no effect with --simulate",
        ))
        .stderr(predicate::str::contains("the timing flags: no effect"))
        .stderr(predicate::str::contains(
            "--tolerance/--no-verify: no effect",
        ));
    // A sweep without energy cannot answer an energy objective.
    simulated(&axes, &synthetic_sweep(t.path()))
        .args(["--objective", "edp"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("measured no energy"));
    rr().args(["tune", "x.json", "--energy-seconds", "0.01"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected seconds from 0.2 to 60"));
}

#[test]
#[cfg_attr(rr_no_mkfifo, ignore = "mkfifo is not installed")]
fn a_sweep_to_simulate_from_that_is_no_regular_file_is_refused_without_blocking() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("sweep.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    simulated(&["--grid", "1..4"], &fifo)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .failure()
        .stderr(predicate::str::contains("sweep.json"))
        .stderr(predicate::str::contains("regular file"));
}

/// `--source` with define axes: `--list` shows each variant's defines and the geometry its
/// expressions give, without a GPU or a compiler; mistakes are one line and exit 2.
#[test]
fn compile_time_axes_list_their_variants_and_refuse_mistakes() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("saxpy.cu");
    std::fs::write(&src, "extern \"C\" __global__ void rr_saxpy() {}").unwrap();
    let out = rr()
        .args(["tune", "--list", "--source"])
        .arg(&src)
        .args(["-D", "TILE=1,2,4", "-D", "T=float,double"])
        .args(["--grid", "GRID_X * 4 / TILE", "--block", "128,256"])
        .arg(saxpy())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // The recorded launch is grid 8, block 128.
    assert!(
        text.contains("TILE=1 T=float grid 32x1x1 block 128x1x1 smem 0\n"),
        "{text}"
    );
    assert!(
        text.contains("TILE=4 T=double grid 8x1x1 block 256x1x1 smem 0\n"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "12 configuration(s), 0 skipped by a limit; 6 variant(s) to compile from the source\n"
        ),
        "{text}"
    );
    let dir = t.path().join("dir.cu");
    std::fs::create_dir(&dir).unwrap();
    let ptx = t.path().join("k.ptx");
    std::fs::write(&ptx, ".version 8.0\n.target sm_90\n.address_size 64\n").unwrap();
    let source = src.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--block", "TILE"], "an expression needs --source"),
        (vec!["-D", "TILE=1"], "--source"),
        (
            vec!["--source", &source, "-D", "TILE"],
            "a define axis is NAME=VALUES",
        ),
        (vec!["--source", &source, "-D", "1X=2"], "C identifier"),
        (
            vec!["--source", &source, "-D", "A=1", "-D", "A=2"],
            "given twice",
        ),
        (
            vec!["--source", &source, "-D", "TILE=1,2", "--block", "TILE - 2"],
            "is -1 for TILE=1",
        ),
        (
            vec!["--source", &source, "--block", "NOPE"],
            "unknown name NOPE",
        ),
        (
            vec!["--source", &source, "--registers", "32"],
            "-maxrregcount",
        ),
        (
            vec![
                "--source", &source, "-D", "A=1..10", "-D", "B=1..10", "-D", "C=1..10", "-D",
                "D=1..10",
            ],
            "4096 variants",
        ),
    ];
    for (args, message) in cases {
        let out = rr().arg("tune").arg(saxpy()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") || stderr.lines().count() == 1,
            "{args:?}: {stderr}"
        );
    }
    for (path, message) in [(dir, "dir.cu"), (ptx, "--source")] {
        let out = rr()
            .args(["tune", "--list", "--source"])
            .arg(&path)
            .arg(saxpy())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
    }
}

/// `--export` is checked before any work: a directory, a foreign file, a header name.
#[test]
fn export_files_are_checked_before_any_work() {
    let t = tempfile::tempdir().unwrap();
    let foreign = t.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"not":"ours"}"#).unwrap();
    let dir = t.path().join("d.json");
    std::fs::create_dir(&dir).unwrap();
    for (path, message) in [
        (foreign, "not an rr-tui export file"),
        (dir, "d.json"),
        (t.path().join("tuned.h"), "name the JSON file"),
    ] {
        let out = rr()
            .args(["tune", "--block", "64,128", "--export"])
            .arg(&path)
            .arg(saxpy())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
        assert!(
            !stderr.contains("driver"),
            "checked before the GPU: {stderr}"
        );
    }
    rr().args(["tune", "--export", "x.json", "--simulate", "s.json"])
        .arg(saxpy())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

/// `--shard K/N` splits a sweep; `tune merge` joins the parts into what one run writes: the
/// same CSV, row for row, and the same best (answered by `--simulate`, no GPU).
#[test]
fn shards_merge_into_the_unsharded_sweep() {
    let t = tempfile::tempdir().unwrap();
    let sweep = synthetic_sweep(t.path());
    let axes = ["--grid", "1..32", "--block", "32..1024:32"];
    let at = |name: &str| t.path().join(name);
    simulated(&axes, &sweep)
        .arg("--csv")
        .arg(at("all.csv"))
        .arg("--json-out")
        .arg(at("all.json"))
        .assert()
        .success();
    for k in 1..=3 {
        simulated(&axes, &sweep)
            .args(["--shard", &format!("{k}/3"), "--json-out"])
            .arg(at(&format!("part{k}.json")))
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("shard {k}/3")));
    }
    let mut merge = rr();
    merge.args(["tune", "merge"]);
    for k in [3, 1, 2] {
        merge.arg(at(&format!("part{k}.json")));
    }
    merge
        .arg("--csv")
        .arg(at("merged.csv"))
        .arg("--json-out")
        .arg(at("merged.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Merged 3 shard(s): 1024 configuration(s)",
        ));
    assert_eq!(
        std::fs::read_to_string(at("merged.csv")).unwrap(),
        std::fs::read_to_string(at("all.csv")).unwrap()
    );
    assert_eq!(best_of(&at("merged.json")), best_of(&at("all.json")));
    // The merged report is a new file, as every export: the one just written is not replaced.
    let mut again = rr();
    again.args(["tune", "merge"]);
    for k in [1, 2, 3] {
        again.arg(at(&format!("part{k}.json")));
    }
    again
        .arg("--csv")
        .arg(at("merged.csv"))
        .assert()
        .code(2)
        .stderr(format!(
            "rr-tui: error: --csv {}: exists; tune merge never replaces an existing file: choose \
             another --csv or remove it\n",
            at("merged.csv").display()
        ));
    // One file by two spellings (`m` and `./m`) is refused before anything is written.
    let mut twice = rr();
    twice.current_dir(t.path()).args(["tune", "merge"]);
    for k in [1, 2, 3] {
        twice.arg(at(&format!("part{k}.json")));
    }
    twice
        .args(["--json-out", "m", "--csv", "./m"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("name the same file"));
    assert!(!at("m").exists());
    // A missing part, a part twice, an unsharded report, and an adaptive strategy are refused.
    for (parts, message) in [
        (vec!["part1.json", "part2.json"], "shard 3/3 is missing"),
        (
            vec!["part1.json", "part1.json", "part2.json"],
            "given twice",
        ),
        (vec!["all.json", "part1.json"], "made without --shard"),
    ] {
        let mut c = rr();
        c.args(["tune", "merge"]);
        for p in parts {
            c.arg(at(p));
        }
        c.arg("--json-out")
            .arg(at("x.json"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    // In a Slurm job array the task's part is the default.
    simulated(&axes, &sweep)
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "3")
        .env("SLURM_ARRAY_TASK_MIN", "0")
        .assert()
        .success()
        .stdout(predicate::str::contains("shard 2/3"));
    // An adaptive strategy in a job array runs whole (only an explicit --shard is refused).
    simulated(&axes, &sweep)
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "3")
        .args(["--strategy", "tpe", "--budget", "5"])
        .assert()
        .success()
        .stdout(predicate::str::contains("shard").not());
    simulated(&axes, &sweep)
        .args(["--shard", "1/2", "--strategy", "tpe"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "splits exhaustive and random sweeps",
        ));
    rr().args(["tune", "merge"])
        .arg(at("part1.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("say where the merged report goes"));
    // The inputs are checked first: a missing part is said before the missing flags.
    rr().args(["tune", "merge"])
        .arg(at("nonexistent.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nonexistent.json"))
        .stderr(predicate::str::contains("say where").not());
    // A hand-edited part: a configuration that is not its own is refused, naming the file.
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(at("part2.json")).unwrap()).unwrap();
    v["trials"][0]["index"] = 0.into();
    std::fs::write(at("edited.json"), v.to_string()).unwrap();
    rr().args(["tune", "merge"])
        .arg(at("part1.json"))
        .arg(at("edited.json"))
        .arg(at("part3.json"))
        .arg("--json-out")
        .arg(at("y.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("edited.json: "))
        .stderr(predicate::str::contains(
            "is not a configuration of part 2/3",
        ));
    std::os::unix::fs::symlink(at("part1.json"), at("again.json")).unwrap();
    rr().args(["tune", "merge"])
        .arg(at("part1.json"))
        .arg(at("part2.json"))
        .arg(at("part3.json"))
        .arg(at("again.json"))
        .arg("--json-out")
        .arg(at("y.json"))
        .assert()
        .code(2);
    // A part with no configuration of its own still writes its report.
    simulated(&["--grid", "1", "--block", "32"], &sweep)
        .args(["--shard", "3/3", "--json-out"])
        .arg(at("empty.json"))
        .assert()
        .success();
    assert!(at("empty.json").is_file());
}

/// The synthetic sweep's three parts (`--shard K/3`, answered by `--simulate`) in `dir`:
/// `part1.json` … `part3.json`, said to be measured (as a GPU's parts: what they hold goes
/// as far as `--export`).
fn three_parts(dir: &std::path::Path) {
    let sweep = synthetic_sweep(dir);
    let axes = ["--grid", "1..32", "--block", "32..1024:32"];
    for k in 1..=3 {
        let part = dir.join(format!("part{k}.json"));
        simulated(&axes, &sweep)
            .args(["--shard", &format!("{k}/3"), "--json-out"])
            .arg(&part)
            .assert()
            .success();
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&part).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("simulated_from");
        std::fs::write(&part, v.to_string()).unwrap();
    }
}

/// `part{k}.json` of `dir` changed by `edit`, written as `name`.
fn edited_part(
    dir: &std::path::Path,
    k: u32,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> std::path::PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(format!("part{k}.json"))).unwrap()).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

/// `tune merge` of `parts` (file names in `dir`) with `args` after them.
fn merge_of(dir: &std::path::Path, parts: &[&str], args: &[&str]) -> assert_cmd::assert::Assert {
    let mut c = rr();
    c.args(["tune", "merge"]);
    for p in parts {
        c.arg(dir.join(p));
    }
    c.current_dir(dir).args(args).assert()
}

/// A row whose configuration is not the one at its index in the sweep is refused, naming the
/// file and the row: nothing is written, and nothing exported.
#[test]
fn a_merged_row_must_be_the_configuration_at_its_index() {
    let t = tempfile::tempdir().unwrap();
    let at = |name: &str| t.path().join(name);
    three_parts(t.path());
    let fast = serde_json::json!({"count": 1, "min": 500.0, "median": 500.0, "mean": 500.0, "stddev": 0.0, "max": 500.0});
    for (name, grid, block) in [
        ("zero.json", [0u32, 1, 1], [4096u32, 1, 1]),
        ("huge.json", [u32::MAX; 3], [1, 1, 1]),
    ] {
        edited_part(t.path(), 2, name, |v| {
            let row = &mut v["trials"][0];
            row["grid"] = serde_json::json!(grid);
            row["block"] = serde_json::json!(block);
            row["kernel_ns"] = fast.clone();
        });
        merge_of(
            t.path(),
            &["part1.json", name, "part3.json"],
            &[
                "--json-out",
                "m.json",
                "--csv",
                "m.csv",
                "--export",
                "tuned.json",
            ],
        )
        .code(2)
        .stderr(predicate::str::contains(format!("{name}: row 1 ")))
        .stderr(predicate::str::contains("is not configuration"));
        for out in ["m.json", "m.csv", "tuned.json", "tuned.h"] {
            assert!(!at(out).exists(), "{name}: {out} was written");
        }
    }
    // An index beyond the sweep, and a row marked recorded that is not the recorded one.
    edited_part(t.path(), 2, "beyond.json", |v| {
        v["trials"][0]["index"] = (1024 * 3 + 1).into();
    });
    merge_of(
        t.path(),
        &["part1.json", "beyond.json", "part3.json"],
        &["--json-out", "m.json"],
    )
    .code(2)
    .stderr(predicate::str::contains("beyond.json: row 1 "))
    .stderr(predicate::str::contains("the sweep has 1024"));
    edited_part(t.path(), 1, "marked.json", |v| {
        let rows = v["trials"].as_array_mut().unwrap();
        let i = rows.iter().position(|r| r["recorded"] != true).unwrap();
        rows[i]["recorded"] = true.into();
        for r in rows.iter_mut().filter(|r| r["recorded"] == true).take(1) {
            r["recorded"] = false.into();
        }
    });
    merge_of(
        t.path(),
        &["marked.json", "part2.json", "part3.json"],
        &["--json-out", "m.json"],
    )
    .code(2)
    .stderr(predicate::str::contains("marked.json: row "));
    assert!(!at("m.json").exists());
}

/// A time below what any launch takes (1e-300 ns) is implausible wherever it comes from: a
/// part to merge is refused, naming the file and row; a sweep to simulate from answers that
/// configuration as not measured rather than as the best at "0 ns".
#[test]
fn times_below_any_launch_are_implausible_in_parts_and_sweeps() {
    let t = tempfile::tempdir().unwrap();
    three_parts(t.path());
    let tiny = serde_json::json!({"count": 1, "min": 1e-300, "median": 1e-300, "mean": 1e-300, "stddev": 0.0, "max": 1e-300});
    let fast = tiny.clone();
    edited_part(t.path(), 2, "tiny.json", move |v| {
        v["trials"][0]["kernel_ns"] = fast;
    });
    merge_of(
        t.path(),
        &["part1.json", "tiny.json", "part3.json"],
        &["--json-out", "m.json"],
    )
    .code(2)
    .stderr(predicate::str::contains("tiny.json: row 1 "))
    .stderr(predicate::str::contains("implausible times"));
    assert!(!t.path().join("m.json").exists());
    // From a sweep: grid 1 block 32 claims 1e-300 ns.
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(synthetic_sweep(t.path())).unwrap()).unwrap();
    v["trials"][0]["kernel_ns"] = tiny;
    let sweep = t.path().join("tiny-sweep.json");
    std::fs::write(&sweep, v.to_string()).unwrap();
    let json = t.path().join("s.json");
    simulated(&["--grid", "1..2", "--block", "32..64:32"], &sweep)
        .arg("--json-out")
        .arg(&json)
        .assert()
        .success();
    let (best, _) = best_of(&json);
    assert_ne!(best["grid"], serde_json::json!([1, 1, 1]), "{best}");
    assert!(
        best["kernel_ns"]["median"].as_f64().unwrap() >= 1000.0,
        "{best}"
    );
}

/// A part that measured nothing (or less than its share) leaves configurations of the space
/// in no part: said with how many, and refused unless --allow-missing, which merges what there
/// is and says what is missing.
#[test]
fn configurations_in_no_part_are_counted_and_refused_without_allow_missing() {
    let t = tempfile::tempdir().unwrap();
    let at = |name: &str| t.path().join(name);
    three_parts(t.path());
    edited_part(t.path(), 3, "empty3.json", |v| {
        v["trials"] = serde_json::json!([]);
    });
    let parts = ["part1.json", "part2.json", "empty3.json"];
    merge_of(t.path(), &parts, &["--json-out", "m.json"])
        .code(2)
        .stderr(predicate::str::contains(
            "of the sweep's 1024 configurations are in no part",
        ))
        .stderr(predicate::str::contains("empty3.json lacks "))
        .stderr(predicate::str::contains("--allow-missing"));
    assert!(!at("m.json").exists());
    merge_of(
        t.path(),
        &parts,
        &["--json-out", "m.json", "--allow-missing"],
    )
    .success()
    .stdout(predicate::str::contains("of the sweep's 1024 in no part"));
    assert!(at("m.json").is_file());
    // A part may not claim more unlisted skips than it has configurations.
    edited_part(t.path(), 3, "skips3.json", |v| {
        v["skipped_unlisted"] = 5000.into();
    });
    merge_of(
        t.path(),
        &["part1.json", "part2.json", "skips3.json"],
        &["--json-out", "m2.json"],
    )
    .code(2)
    .stderr(predicate::str::contains("skips3.json: "));
}

/// Names go into every CSV row: a part whose kernel name is longer than any kernel's is
/// refused when read (a 1 MB part once became a 1.2 GB CSV held in memory).
#[test]
fn a_part_with_a_name_longer_than_any_kernels_is_refused() {
    let t = tempfile::tempdir().unwrap();
    three_parts(t.path());
    let long = "k".repeat(100_000);
    for k in 1..=3 {
        let long = long.clone();
        edited_part(t.path(), k, &format!("long{k}.json"), move |v| {
            v["kernel"] = long.into();
        });
    }
    merge_of(
        t.path(),
        &["long1.json", "long2.json", "long3.json"],
        &["--csv", "m.csv"],
    )
    .code(2)
    .stderr(predicate::str::contains("long1.json"))
    .stderr(predicate::str::contains("longer than"));
    assert!(!t.path().join("m.csv").exists());
}

/// `--export F.json` writes F.h beside it: a header it did not write is refused like a JSON
/// file it did not write, and a symbolic link at either path is said to be one (a dangling
/// one included), before anything is measured or merged.
#[test]
fn export_refuses_a_header_it_did_not_write_and_says_a_link_is_one() {
    let t = tempfile::tempdir().unwrap();
    let at = |name: &str| t.path().join(name);
    three_parts(t.path());
    let parts = ["part1.json", "part2.json", "part3.json"];
    std::fs::write(at("tuned.h"), "#define MINE 1\n").unwrap();
    merge_of(t.path(), &parts, &["--export", "tuned.json"])
        .code(2)
        .stderr(predicate::str::contains("tuned.h"))
        .stderr(predicate::str::contains("not written by rr-tui"));
    assert_eq!(
        std::fs::read_to_string(at("tuned.h")).unwrap(),
        "#define MINE 1\n"
    );
    // The same before a sweep.
    rr().args(["tune", "--block", "64,128", "--export"])
        .arg(at("tuned.json"))
        .arg(saxpy())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not written by rr-tui"));
    // A header of ours (a JSON removed since) is written again.
    std::fs::write(
        at("tuned.h"),
        "// Generated by `rr-tui tune --export`: an older one\n",
    )
    .unwrap();
    merge_of(t.path(), &parts, &["--export", "tuned.json"]).success();
    assert!(std::fs::read_to_string(at("tuned.h"))
        .unwrap()
        .contains("GRID_X"));
    // Dangling links, at the JSON and at the header.
    std::os::unix::fs::symlink(at("nowhere.json"), at("dangling.json")).unwrap();
    std::os::unix::fs::symlink(at("nowhere.h"), at("other.h")).unwrap();
    for export in ["dangling.json", "other.json"] {
        merge_of(t.path(), &parts, &["--export", export])
            .code(2)
            .stderr(predicate::str::contains("is a symbolic link"))
            .stderr(predicate::str::contains("no such file").not());
    }
}

/// `tune DIR`: every instance of a recording (or those `--kernels` selects, or a Slurm part's)
/// with the same axes; `--list` shows each without a GPU, and without one the sweep says so
/// once, before creating anything.
#[test]
fn a_recording_is_swept_instance_by_instance() {
    let dir = fixture("llvm-two-kernels");
    let t = tempfile::tempdir().unwrap();
    let list = |extra: &[&str]| {
        let out = rr()
            .current_dir(t.path())
            .args(["tune", "--list", "--block", "64,128"])
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // The fixture holds two instances of each of two kernels.
    let all = list(&[]);
    assert!(all.contains("== instance 1/4: rr_saxpy"), "{all}");
    assert!(all.contains("== instance 4/4: rr_scale_global"), "{all}");
    assert_eq!(all.matches("2 configuration(s)").count(), 4, "{all}");
    let scale = list(&["--kernels", "scale"]);
    assert!(
        scale.contains("== instance 2/2: rr_scale_global") && !scale.contains("saxpy"),
        "{scale}"
    );
    // Part 2 of 2: the second and fourth instances.
    let part = list(&["--shard", "2/2"]);
    assert_eq!(part.matches("== instance").count(), 2, "{part}");
    assert!(
        part.contains("== instance 1/2: rr_saxpy")
            && part.contains("== instance 2/2: rr_scale_global"),
        "{part}"
    );
    for (args, message) in [
        (vec!["--kernels", "("], "not a regular expression"),
        (
            vec!["--kernels", "nomatch"],
            "no instance matches --kernels",
        ),
    ] {
        rr().current_dir(t.path())
            .args(["tune", "--block", "64"])
            .arg(&dir)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    rr().args(["tune", "--kernels", "x"])
        .arg(saxpy())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give its directory"));
    rr().current_dir(t.path())
        .args(["tune", "--block", "64", "--json-out", "x.json"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--reports"));
    // A job array with more tasks than instances: the surplus parts have nothing to do.
    rr().current_dir(t.path())
        .args(["tune", "--list", "--block", "64", "--shard", "7/8"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "part 7/8 holds none of the 4 instance(s)",
        ));
}

/// Without a driver, sweeping a recording says so once and creates nothing.
#[test]
#[cfg_attr(
    rr_gpu,
    ignore = "a machine without a GPU's path: the GPU suite sweeps recordings"
)]
fn without_a_driver_sweeping_a_recording_says_so_once() {
    let t = tempfile::tempdir().unwrap();
    let dir = fixture("llvm-two-kernels");
    let out = rr()
        .current_dir(t.path())
        .args(["tune", "--block", "64"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(stderr.matches("CUDA driver").count(), 1, "{stderr}");
    assert!(
        std::fs::read_dir(t.path()).unwrap().next().is_none(),
        "nothing created"
    );
}

/// `--json` is the switch for JSON on stdout in every other command, so a report file is
/// `--json-out FILE` (tune and tune merge); the old `--json FILE` still writes the same report,
/// with one note on stderr (issue 36, point 12).
#[test]
fn the_report_file_is_json_out_and_json_file_is_taken_with_a_note() {
    let t = tempfile::tempdir().unwrap();
    let sweep = synthetic_sweep(t.path());
    let axes = ["--grid", "1..4", "--block", "32..128:32"];
    let new = t.path().join("new.json");
    let new_run = simulated(&axes, &sweep)
        .args(["--seed", "1", "--json-out"])
        .arg(&new)
        .output()
        .unwrap();
    assert!(new_run.status.success(), "{new_run:?}");
    assert!(
        !String::from_utf8_lossy(&new_run.stderr).contains("deprecated"),
        "{new_run:?}"
    );
    let old = t.path().join("old.json");
    let old_run = simulated(&axes, &sweep)
        .args(["--seed", "1", "--json"])
        .arg(&old)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&old_run.stderr);
    assert!(old_run.status.success(), "{stderr}");
    assert_eq!(
        stderr
            .matches("rr-tui: note: --json FILE is deprecated; use --json-out FILE\n")
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(best_of(&new), best_of(&old));
    // Both spellings at once name one file too many.
    simulated(&axes, &sweep)
        .args(["--json-out", "a.json", "--json", "b.json"])
        .current_dir(t.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    // --resume continues the file either spelling names.
    rr().arg("tune")
        .arg(saxpy())
        .args(["--grid", "1..4", "--resume"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--json-out"));

    three_parts(t.path());
    let parts = ["part1.json", "part2.json", "part3.json"];
    merge_of(t.path(), &parts, &["--json-out", "m1.json"])
        .success()
        .stderr(predicate::str::contains("deprecated").not());
    merge_of(t.path(), &parts, &["--json", "m2.json"])
        .success()
        .stderr(predicate::str::contains(
            "rr-tui: note: --json FILE is deprecated; use --json-out FILE\n",
        ));
    assert_eq!(
        best_of(&t.path().join("m1.json")),
        best_of(&t.path().join("m2.json"))
    );
    merge_of(t.path(), &parts, &[])
        .code(2)
        .stderr(predicate::str::contains("--json-out FILE, --csv FILE"));
}

/// `--json` without a file, as the other commands' switch is written, says where tune's JSON
/// goes (it was clap's "a value is required for '--json <FILE>'", a flag help does not show).
#[test]
fn json_as_a_switch_says_tune_writes_json_out() {
    // One line after the prefix every error has, naming the command as typed.
    for (words, command) in [
        (&["tune", "x.json", "--list", "--json"][..], "tune"),
        (&["tune", "x.json", "--json", "--list"], "tune"),
        (&["tune", "merge", "a.json", "--json"], "tune merge"),
    ] {
        rr().args(words)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with(format!(
                "rr-tui: error: {command} has no --json switch: it writes its report with \
                 --json-out FILE"
            )));
    }
}

/// `tune -h` lists the flags about a directory of instances under their own heading (not
/// "Recording:"), and `tune merge --help` says what the merge writes and refuses.
#[test]
fn tune_help_heads_the_directory_flags_and_merge_says_what_it_writes() {
    let help = rr().args(["tune", "-h"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let heading = help
        .find("Directory of instances:")
        .unwrap_or_else(|| panic!("{help}"));
    for flag in ["--kernels", "--reports", "--fresh-engines"] {
        let at = help.find(flag).unwrap_or_else(|| panic!("{flag}: {help}"));
        assert!(at > heading, "{flag} is listed before its heading:\n{help}");
    }
    assert!(!help.contains("Recording:"), "{help}");
    let merge = rr().args(["tune", "merge", "--help"]).output().unwrap();
    let merge = String::from_utf8_lossy(&merge.stdout);
    let merge = merge.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!merge.contains("a sweep rewrites it as it goes"), "{merge}");
    assert!(merge.contains("an existing one is refused"), "{merge}");
    assert!(merge.contains("a missing shard is refused"), "{merge}");
}

/// A bare `tune X.json` measures the recorded configuration alone and says so once on stderr,
/// with axes to try; an axis, or the explorer's `--events`, says nothing of the kind. Answered
/// from the bundled synthetic sweep, so no GPU is needed.
#[test]
fn a_sweep_without_an_axis_notes_that_only_the_recorded_configuration_is_measured() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let stencil = fixture("rrtui-stencil3d").join("3844743599784193033_15987061097491423463.json");
    let sweep = root.join("assets/sweeps/rrtui-stencil3d-occurrence0.synthetic.json");
    let stderr_of = |extra: &[&str]| {
        let out = rr()
            .arg("tune")
            .arg(&stencil)
            .arg("--simulate")
            .arg(&sweep)
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{extra:?}: {stderr}");
        stderr
    };
    let note = "rr-tui: note: no axis given: only the recorded configuration is measured; \
                e.g. --block 32..1024*2 --grid cover\n";
    assert_eq!(stderr_of(&[]), note);
    // The recorded block as an axis is still an axis: the user chose it.
    assert_eq!(stderr_of(&["--block", "8x8x4"]), "");
    assert_eq!(stderr_of(&["--events"]), "");
}
