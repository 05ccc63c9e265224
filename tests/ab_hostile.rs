//! `rr-tui ab` on hostile records and command lines: a recorded output of the wrong length is
//! refused before any GPU work, naming it (not found out instance by instance, blaming the
//! candidate), and a directory of record directories suggests the user's own command line with
//! one of them, every other flag kept. What a worker says stays within what its parent reads
//! (a kernel name of MB in an error), and a worker that dies silently is said to (its signal).

mod common;

use assert_cmd::Command;
use common::*;

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    c
}

/// A format 1 record whose recorded output is short or long is refused with exit status 2,
/// in one line naming the file, by `ab` and `replay --candidate` alike, before anything looks
/// for a driver (none is on the path here): the candidate is not judged on it.
#[test]
fn a_recorded_output_of_the_wrong_length_is_refused_naming_it() {
    for len in [10, 33_024 + 16] {
        let (_t, rec) = fixture_copy("rrtui-stencil3d");
        let json = descriptor_of(&rec, "rr_stencil3d");
        let output = json.with_extension("record_output");
        std::fs::OpenOptions::new()
            .write(true)
            .open(&output)
            .unwrap()
            .set_len(len)
            .unwrap();
        let candidate = rec.join("images/kernels-sm90.cubin");
        let ab = rr()
            .arg("ab")
            .arg(&rec)
            .args(["--kernels", "stencil", "--candidate"])
            .arg(&candidate)
            .env("LD_LIBRARY_PATH", "/nonexistent")
            .output()
            .unwrap();
        let replay = rr()
            .arg("replay")
            .arg(&json)
            .arg("--candidate")
            .arg(&candidate)
            .env("LD_LIBRARY_PATH", "/nonexistent")
            .output()
            .unwrap();
        for o in [ab, replay] {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!(
                    "{}: is {len} bytes but the recorded input is 33024",
                    output.display()
                )),
                "{err}"
            );
        }
    }
}

/// `ab` and `tune --list` given a directory of record directories suggest the command as typed
/// with the first record directory in place of it: the kernels, the candidates and their
/// flags kept (a bare `rr-tui ab DIR` is refused for lack of them), quoted for a shell.
#[test]
fn a_directory_of_records_suggests_the_command_with_every_flag_kept() {
    let root = fixture("");
    let first = root.join("llvm-no-report");
    let o = rr()
        .arg("ab")
        .arg(&root)
        .args([
            "--kernels",
            "saxpy",
            "--candidate",
            "my kernel.cu",
            "-D",
            "ILP=4",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let example = format!(
        "pass one of them, e.g. `rr-tui ab {} --kernels saxpy --candidate 'my kernel.cu' -D 'ILP=4'`",
        first.display()
    );
    assert_eq!(err.lines().last(), Some(example.as_str()), "{err}");
    let o = rr()
        .args(["tune", "--list", "--kernels", "saxpy"])
        .arg(&root)
        .args(["--block", "64,128"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let example = format!(
        "pass one of them, e.g. `rr-tui tune --list --kernels saxpy {} --block 64,128`",
        first.display()
    );
    assert_eq!(err.lines().last(), Some(example.as_str()), "{err}");
}

/// `ab --json` on `dir` (kernels matching stencil, the record's own image as the candidate)
/// with the stand-in driver and `env`: the per-instance results of the one candidate.
fn ab_on_fake(dir: &std::path::Path, env: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let driver = fake_driver();
    let o = rr()
        .arg("ab")
        .arg(dir)
        .args([
            "--kernels",
            "stencil",
            "--repetitions",
            "6",
            "--json",
            "--candidate",
        ])
        .arg(dir.join("images/kernels-sm90.cubin"))
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .envs(env.iter().copied())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["candidates"][0]["instances"].as_array().unwrap().clone()
}

/// A compiled candidate without the kernel it runs under is refused before any GPU work (no
/// driver is on the path here), once, in one line naming the file, exit status 2: a cubin by
/// its symbols, a PTX text by its `.entry` lines. A record's kernel name of 3 MB is cut in
/// that line. (A worker's own reasons are cut too: `worker::bounded`.)
#[test]
fn a_compiled_candidate_without_the_kernel_is_refused_before_the_gpu() {
    let (t, rec) = fixture_copy("rrtui-v2-stencil3d");
    let cubin = rec.join("images/kernels-sm90.cubin");
    let ptx = t.path().join("other.ptx");
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry rr_other(\n)\n{\nret;\n}\n",
    )
    .unwrap();
    let good_ptx = t.path().join("good.ptx");
    std::fs::write(
        &good_ptx,
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry rr_stencil3d(\n)\n{\nret;\n}\n",
    )
    .unwrap();
    let ab = |candidate: &std::path::Path, extra: &[&str]| {
        let o = rr()
            .arg("ab")
            .arg(&rec)
            .args(["--kernels", "stencil", "--candidate"])
            .arg(candidate)
            .args(extra)
            .env("LD_LIBRARY_PATH", "/nonexistent")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = ab(&ptx, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: the candidate has no kernel rr_stencil3d (it has: rr_other); name another with --candidate-kernel",
            ptx.display()
        )),
        "{err}"
    );
    // The one it has, named: past the check, to the missing driver (exit 1).
    let (code, err) = ab(&ptx, &["--candidate-kernel", "rr_other"]);
    assert_eq!(code, Some(1), "{err}");
    let (code, err) = ab(&good_ptx, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("has no kernel"), "{err}");
    let (code, err) = ab(&cubin, &["--candidate-kernel", "rr_nope"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}: the candidate has no kernel rr_nope",
            cubin.display()
        )),
        "{err}"
    );
    // `replay --candidate` refuses it as early.
    let o = rr()
        .arg("replay")
        .arg(descriptor_of(&rec, "rr_stencil3d"))
        .arg("--candidate")
        .arg(&ptx)
        .env("LD_LIBRARY_PATH", "/nonexistent")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the candidate has no kernel rr_stencil3d"),
        "{err}"
    );
    // A record naming a kernel of 3 MB: the line stays short.
    for entry in std::fs::read_dir(&rec).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let mut d: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            d["Name"] = format!("rr_stencil3d{}", "A".repeat(3 << 20)).into();
            std::fs::write(&path, d.to_string()).unwrap();
        }
    }
    let (code, err) = ab(&cubin, &[]);
    assert_eq!(code, Some(2), "{err:.300}");
    assert_eq!(err.lines().count(), 1, "{err:.300}");
    assert!(err.contains("has no kernel rr_stencil3dAAAA"), "{err:.300}");
    assert!(
        err.contains(&format!("… ({} bytes)", 12 + (3 << 20))),
        "{err:.300}"
    );
    assert!(err.len() < 4096, "{}", err.len());
}

/// A worker that aborts (the stand-in driver aborts on the launch given by FAKE_FAIL_*) says
/// nothing on stderr: the instance's error says the signal that ended it.
#[test]
fn a_worker_that_dies_silently_is_said_to_by_its_signal() {
    let (_t, rec) = fixture_copy("rrtui-v2-stencil3d");
    // The first parameter of the first instance's launch (its first segment's address).
    let results = ab_on_fake(
        &rec,
        &[
            ("FAKE_FAIL_PARAM0", "7f611c804000"),
            ("FAKE_FAIL_HOW", "crash"),
        ],
    );
    let crashed: Vec<&str> = results
        .iter()
        .filter_map(|r| r["reason"].as_str())
        .collect();
    assert_eq!(crashed.len(), 1, "{results:?}");
    assert!(
        crashed[0].ends_with("ended on this instance: no message; killed by signal 6 (SIGABRT)"),
        "{}",
        crashed[0]
    );
}

/// A recorded launch no GPU can run (a block of 2^31 × 2^31 × 2^31 threads) is refused naming
/// the descriptor, by `ab` before any GPU work (not blamed on the candidate), and by `replay`
/// and `repro` alike; an override that makes the launch impossible is the user's, said without
/// a file.
#[test]
fn an_impossible_recorded_launch_is_refused_naming_the_descriptor() {
    let (t, rec) = fixture_copy("rrtui-v2-stencil3d");
    let json = descriptor_of(&rec, "rr_stencil3d");
    let mut d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    d["Block"] = serde_json::json!([1u64 << 31, 1u64 << 31, 1u64 << 31]);
    std::fs::write(&json, d.to_string()).unwrap();
    let candidate = rec.join("images/kernels-sm90.cubin");
    let mut ab = rr();
    ab.arg("ab")
        .arg(&rec)
        .args(["--kernels", "stencil", "--candidate"]);
    ab.arg(&candidate);
    let mut replay = rr();
    replay.arg("replay").arg(&json);
    let mut repro = rr();
    repro
        .arg("repro")
        .arg(&json)
        .arg("--out")
        .arg(t.path().join("out"));
    for mut c in [ab, replay, repro] {
        let o = c.env("LD_LIBRARY_PATH", "/nonexistent").output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "rr-tui: error: {}: the recorded launch cannot run on any CUDA GPU: block \
                 2147483648×2147483648×2147483648 has more than 1024 threads",
                json.display()
            )
        );
    }
}

/// One candidate file under two names, through a hard link as through a symbolic one, is
/// refused as given twice (it would be judged twice, under two names).
#[test]
fn a_candidate_given_again_through_a_hard_link_is_refused() {
    let (t, rec) = fixture_copy("rrtui-v2-stencil3d");
    let image = rec.join("images/kernels-sm90.cubin");
    let hard = t.path().join("hard.cubin");
    std::fs::hard_link(&image, &hard).unwrap();
    let o = rr()
        .arg("ab")
        .arg(&rec)
        .args(["--kernels", "stencil", "--candidate"])
        .arg(&image)
        .arg("--candidate")
        .arg(&hard)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "--candidate {}: the same file as --candidate {}",
            hard.display(),
            image.display()
        )),
        "{err}"
    );
}

/// `ab` given one instance's descriptor instead of its record directory points to what judges
/// one instance (`replay X.json --candidate FILE`), in one line, exit status 2, before anything
/// looks for a driver; another file is refused as not a directory, with the same pointer.
#[test]
fn a_descriptor_for_a_directory_points_to_replay() {
    let rec = fixture("llvm-two-kernels");
    let json = descriptor_of(&rec, "rr_saxpy");
    let other = json.with_extension("image");
    for (given, want) in [
        (
            &json,
            format!("`rr-tui replay {} --candidate FILE`", json.display()),
        ),
        (
            &other,
            "`rr-tui replay X.json --candidate FILE`".to_string(),
        ),
    ] {
        let o = rr()
            .arg("ab")
            .arg(given)
            .args(["--kernels", "saxpy", "--candidate", "x.cu"])
            .env("LD_LIBRARY_PATH", "/nonexistent")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("{}: ", given.display())), "{err}");
        assert!(err.contains(&want), "{err}");
        assert!(!err.contains("inspect"), "{err}");
    }
}
