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
            "no recorded instance of a kernel matching --kernels \"^no_such_kernel$\" (recorded: rr_stencil3d)",
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
            .arg("--kernels")
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
        .args(["--kernels", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--candidate <FILE>"));
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
    // Two candidates: the recorded image, and a copy of it (the same file twice is refused).
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("copy.cubin");
    std::fs::copy(&image, &copy).unwrap();
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args([
            "--kernels",
            "stencil",
            "--repetitions",
            "6",
            "--events-only",
            "--json",
        ])
        .arg("--candidate")
        .arg(&image)
        .arg("--candidate")
        .arg(&copy)
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
        .args(["--kernels", ".", "--repetitions", "6", "--events-only"])
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
        .args(["--kernels", ".", "--json", "--candidate"])
        .arg(&k)
        .env("LD_LIBRARY_PATH", work.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["event"], "error", "{e}");
}

/// With a driver but no NVRTC (none on the loader's path, no CUDA installation), a source
/// candidate is refused once, before any instance runs: one line naming it, exit status 2, not
/// a rejection on every instance. A cubin beside it is not judged either.
#[cfg_attr(rr_gpu, ignore = "a machine without NVRTC's path")]
#[test]
fn ab_with_a_source_and_no_nvrtc_refuses_once() {
    let driver = fake_driver();
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let k = work.path().join("k.cu");
    std::fs::write(&k, b"__global__ void rr_stencil3d() {}").unwrap();
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args(["--kernels", ".", "--events-only", "--candidate"])
        .arg(dir.join("images/kernels-sm90.cubin"))
        .arg("--candidate")
        .arg(&k)
        .env("LD_LIBRARY_PATH", driver.path())
        .env("CUDA_HOME", "/nonexistent")
        .env("CUDA_PATH", "/nonexistent")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let line = one_line(&out.stderr);
    assert!(
        line.contains(&format!("--candidate {}: NVRTC", k.display())),
        "{err}"
    );
    assert!(!err.contains("candidate 1/2"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `-D` and `--nvrtc-opt` with a compiled and a source candidate go to the source: the cubin
/// ignores them, a note says so, and the judgement goes on (here to the missing driver, exit
/// 1). With no source among the candidates they are refused, exit status 2.
#[test]
fn ab_defines_go_to_the_source_candidates_only() {
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let k = work.path().join("k.cu");
    std::fs::write(&k, b"__global__ void rr_stencil3d() {}").unwrap();
    let cubin = dir.join("images/kernels-sm90.cubin");
    let out = ab_without_driver(work.path())
        .arg(&dir)
        .args(["--kernels", ".", "--candidate"])
        .arg(&cubin)
        .arg("--candidate")
        .arg(&k)
        .args(["-D", "ILP=4", "--nvrtc-opt=-O3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let note = format!(
        "rr-tui: note: -D and --nvrtc-opt apply to the CUDA C++ source candidates; the compiled {} ignores them",
        cubin.display()
    );
    assert!(err.lines().any(|l| l == note), "{err}");
    let out = ab_without_driver(work.path())
        .arg(&dir)
        .args(["--kernels", ".", "--candidate"])
        .arg(&cubin)
        .args(["-D", "ILP=4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line(&out.stderr).contains("apply to CUDA C++ sources"));
}

/// `rr-tui ab` with no driver to be found: the empty directory `work` on the loader's path.
fn ab_without_driver(work: &std::path::Path) -> Command {
    let mut c = rr();
    c.arg("ab").env("LD_LIBRARY_PATH", work);
    c
}

/// The usage line as `ab --help` writes it, DIR after the flags, runs: DIR is not taken for one
/// more candidate (`--candidate` takes one file, repeated for several). `--kernel`, the old
/// spelling of `--kernels` (record's and tune's), is taken with one note.
#[cfg_attr(rr_gpu, ignore = "a machine without a GPU's path")]
#[test]
fn ab_usage_runs_as_written_and_kernel_is_an_old_spelling() {
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("a.cu"), work.path().join("b.cu"));
    for k in [&a, &b] {
        std::fs::write(k, b"__global__ void k() {}").unwrap();
    }
    let usage = rr().args(["ab", "--help"]).output().unwrap();
    let usage = String::from_utf8_lossy(&usage.stdout);
    assert!(
        usage.contains("--kernels <REGEX> --candidate <FILE> <DIR>"),
        "{usage}"
    );
    let out = ab_without_driver(work.path())
        .args(["--kernels", ".", "--candidate"])
        .arg(&a)
        .arg("--candidate")
        .arg(&b)
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(one_line(&out.stderr).contains("CUDA driver"), "{stderr}");
    let out = ab_without_driver(work.path())
        .arg(&dir)
        .args(["--kernel", "stencil", "--candidate"])
        .arg(&a)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr
            .matches("rr-tui: note: --kernel is deprecated; use --kernels")
            .count(),
        1,
        "{stderr}"
    );
}

/// A record no replay can run (LLVM 19–22's) is refused as `replay` refuses it, before the
/// driver: exit 2 naming the descriptor, and under --json the `input` error object.
#[test]
fn ab_refuses_a_record_no_replay_can_run_before_the_driver() {
    let dir = fixture("llvm19-saxpy");
    let work = tempfile::tempdir().unwrap();
    let k = work.path().join("k.cu");
    std::fs::write(&k, b"__global__ void k() {}").unwrap();
    let out = ab_without_driver(work.path())
        .arg(&dir)
        .args(["--kernels", ".", "--candidate"])
        .arg(&k)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line(&out.stderr);
    assert!(
        line.contains("LLVM 19–22 recorded") && line.contains(".json: "),
        "{line}"
    );
    let out = ab_without_driver(work.path())
        .arg(&dir)
        .args(["--kernels", ".", "--json", "--candidate"])
        .arg(&k)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&e["event"], &e["kind"]),
        (&"error".into(), &"input".into()),
        "{e}"
    );
    // An LLVM 16–17 record has no image: refused, unless --image (which ab takes, as replay
    // and tune do) supplies one; then the run goes as far as the driver.
    let llvm16 = fixture("llvm16-saxpy");
    let out = ab_without_driver(work.path())
        .arg(&llvm16)
        .args(["--kernels", ".", "--candidate"])
        .arg(&k)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line(&out.stderr).contains("pass --image FILE"));
    let image = fixture("rrtui-v2-stencil3d").join("images/kernels-sm90.cubin");
    let out = ab_without_driver(work.path())
        .arg(&llvm16)
        .args(["--kernels", ".", "--candidate"])
        .arg(&k)
        .arg("--image")
        .arg(&image)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(one_line(&out.stderr).contains("CUDA driver"));
}

/// The same candidate file twice (as given, or by another path to it) is refused, naming it;
/// a pattern of 100 KB is quoted cut in its error, never whole.
#[test]
fn ab_refuses_a_candidate_twice_and_quotes_a_long_pattern_short() {
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let k = work.path().join("k.cu");
    std::fs::write(&k, b"__global__ void k() {}").unwrap();
    // Another path to the same file.
    let other = work.path().join("link.cu");
    std::os::unix::fs::symlink(&k, &other).unwrap();
    for (second, want) in [
        (&k, "k.cu: given twice"),
        (&other, "the same file as --candidate"),
    ] {
        let out = ab_without_driver(work.path())
            .arg(&dir)
            .args(["--kernels", ".", "--candidate"])
            .arg(&k)
            .arg("--candidate")
            .arg(second)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let line = one_line(&out.stderr);
        assert!(line.contains(want), "{line}");
    }
    for (pattern, want) in [
        (
            format!("({}", "a".repeat(100_000)),
            "not a regular expression",
        ),
        ("z".repeat(1_000), "no recorded instance"),
    ] {
        let out = ab_without_driver(work.path())
            .arg(&dir)
            .arg(format!("--kernels={pattern}"))
            .arg("--candidate")
            .arg(&k)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let line = one_line(&out.stderr);
        assert!(line.len() < 400, "{} bytes: {line:.200}", line.len());
        assert!(
            line.contains(want) && line.contains(&format!("… ({} bytes)", pattern.len())),
            "{line}"
        );
    }
}

/// A candidate whose path is not UTF-8 reaches its worker as it is, and is shown with the
/// bytes escaped (`\xff`), never as U+FFFD.
#[test]
fn ab_shows_a_path_that_is_not_utf8_escaped_and_runs_it() {
    use std::os::unix::ffi::OsStrExt;
    let driver = fake_driver();
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let odd = work
        .path()
        .join(std::ffi::OsStr::from_bytes(b"odd\xff.cubin"));
    std::fs::copy(dir.join("images/kernels-sm90.cubin"), &odd).unwrap();
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args(["--kernels", ".", "--repetitions", "6", "--events-only"])
        .arg("--candidate")
        .arg(&odd)
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("odd\\xff.cubin on 2 instance(s)"),
        "{stderr}"
    );
    assert!(
        stdout.contains("odd\\xff.cubin") && stdout.contains("2/2"),
        "{stdout}"
    );
    assert!(!stderr.contains('\u{fffd}') && !stdout.contains('\u{fffd}'));
    // A missing one is named the same way.
    let missing = work
        .path()
        .join(std::ffi::OsStr::from_bytes(b"gone\xfe.cu"));
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args(["--kernels", ".", "--candidate"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line(&out.stderr);
    assert!(
        line.contains("gone\\xfe.cu") && !line.contains('\u{fffd}'),
        "{line}"
    );
}

/// Instances rotated inside the timing loop, on the stand-in driver (whose log names each
/// launch's parameters, and the two instances of the stencil record differ in theirs): the
/// worker goes instance, instance (each candidate's first run), then round after round over
/// both (12 pairs: two rounds), never timing one instance all at once; each instance gets as
/// many launches as the other, and its notes say it was rotated.
#[test]
fn ab_rotates_the_instances_inside_the_timing_loop() {
    let driver = fake_driver();
    let dir = fixture("rrtui-v2-stencil3d");
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("launches.log");
    let out = rr()
        .arg("ab")
        .arg(&dir)
        .args([
            "--kernels",
            ".",
            "--repetitions",
            "12",
            "--events-only",
            "--json",
        ])
        .arg("--candidate")
        .arg(dir.join("images/kernels-sm90.cubin"))
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .env("FAKE_CUDA_LOG", &log)
        .env("FAKE_CUDA_LOG_PARAMS", "1")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The stencil's launches (the one-block ones are the timing aids), by their parameters.
    let text = std::fs::read_to_string(&log).unwrap();
    let launches: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(" params=").map(|(_, p)| p))
        .collect();
    let mut blocks: Vec<(&str, usize)> = Vec::new();
    for p in &launches {
        match blocks.last_mut() {
            Some((q, n)) if q == p => *n += 1,
            _ => blocks.push((p, 1)),
        }
    }
    let order: Vec<&str> = blocks.iter().map(|b| b.0).collect();
    assert_eq!(order.len(), 6, "{blocks:?}");
    let (a, b) = (order[0], order[1]);
    assert_ne!(a, b);
    assert_eq!(order, [a, b, a, b, a, b], "{blocks:?}");
    let count = |p: &str| launches.iter().filter(|&&q| q == p).count();
    // Each: the poison check and the first verification, then per round a verification on
    // entering, one to three untimed pairs (drawn), six pairs and a verification after:
    // 2 + 2 × (1 + 2 × (1..=3) + 12 + 1) launches.
    for p in [a, b] {
        assert!((2 + 2 * 16..=2 + 2 * 20).contains(&count(p)), "{blocks:?}");
    }
    let board: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in board["candidates"][0]["instances"].as_array().unwrap() {
        assert_eq!(r["status"], "verified", "{r}");
        assert_eq!(r["compare"]["pairs"], 12, "{r}");
        let notes = r["notes"].to_string();
        assert!(
            notes.contains("timed in 2 round(s) rotating 2 instances"),
            "{notes}"
        );
    }
}

/// A record of `n` instances of the stencil fixture's kernel (its two instances in turn, one
/// memory layout: one worker rotates them all), instance 2's descriptor changed by `change`.
fn stencil_record(n: usize, change: impl Fn(&mut serde_json::Value)) -> tempfile::TempDir {
    let src = fixture("rrtui-v2-stencil3d");
    let t = tempfile::tempdir().unwrap();
    copy_dir(&src.join("blobs"), &t.path().join("blobs"));
    copy_dir(&src.join("images"), &t.path().join("images"));
    let bases = ["15987061097491423463", "4435446794594945131"];
    for i in 0..n {
        let base = src.join(format!("3844743599784193033_{}", bases[i % 2]));
        let text = std::fs::read_to_string(base.with_extension("json")).unwrap();
        let mut d: serde_json::Value = serde_json::from_str(&text).unwrap();
        d["Occurrence"] = i.into();
        if i == 2 {
            change(&mut d);
        }
        let name = t
            .path()
            .join(format!("3844743599784193033_{}", 1_000_000 + i));
        std::fs::write(name.with_extension("json"), d.to_string()).unwrap();
        std::fs::copy(
            base.with_extension("globals"),
            name.with_extension("globals"),
        )
        .unwrap();
    }
    t
}

/// Instance 2's first parameter made one no other instance has (0x7f611c808000, in the
/// recorded mapping): what the stand-in driver's FAKE_FAIL_PARAM0 fails on.
const FAILING_PARAM0: &str = "7f611c808000";

fn with_failing_param0(d: &mut serde_json::Value) {
    let p = d["ParamBuffer"].as_str().unwrap().to_string();
    d["ParamBuffer"] = format!("0080801c617f0000{}", &p[16..]).into();
}

/// `ab --json` on `dir` with the recorded image as the candidate and `envs` for the stand-in
/// driver: the instances' results (status and reason, notes joined) and the wall time.
fn ab_instances(dir: &std::path::Path, envs: &[(&str, &str)]) -> (Vec<serde_json::Value>, f64) {
    let driver = fake_driver();
    let image = fixture("rrtui-v2-stencil3d").join("images/kernels-sm90.cubin");
    let t = std::time::Instant::now();
    let out = rr()
        .arg("ab")
        .arg(dir)
        .args([
            "--kernels",
            ".",
            "--repetitions",
            "12",
            "--events-only",
            "--json",
        ])
        .args(["--kernel-timeout", "1", "--candidate"])
        .arg(&image)
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let seconds = t.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let board: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let c = &board["candidates"][0];
    (c["instances"].as_array().unwrap().clone(), seconds)
}

/// A fault, a crash or a hang of the candidate on one instance of a rotated group, on its first
/// runs or during the rotation: that instance is the only error, the others are judged (those
/// left in a fresh worker, rotated together), and a hang costs one timeout, not one per instance
/// before it.
#[test]
fn ab_blames_only_the_instance_a_fault_a_crash_or_a_hang_ends_on() {
    let rec = stencil_record(5, with_failing_param0);
    // The same run without a failure: a hang may cost one timeout (1 s) more than this, not one
    // per instance (measured against the same machine's load, not a fixed time).
    let (_, baseline) = ab_instances(rec.path(), &[]);
    for how in ["fault", "crash", "hang"] {
        // 0: its first launch there (entering the instance); 20: in its second round.
        for after in ["0", "20"] {
            let envs = [
                ("FAKE_FAIL_PARAM0", FAILING_PARAM0),
                ("FAKE_FAIL_HOW", how),
                ("FAKE_FAIL_AFTER", after),
            ];
            let (results, seconds) = ab_instances(rec.path(), &envs);
            assert_eq!(results.len(), 5);
            for (i, r) in results.iter().enumerate() {
                let notes = r["notes"].to_string();
                if i == 2 {
                    assert_eq!(r["status"], "error", "{how} {after}: {r}");
                    let reason = r["reason"].as_str().unwrap();
                    let want = match how {
                        "fault" => "the kernel failed",
                        _ => "the candidate's process ended on this instance",
                    };
                    assert!(reason.contains(want), "{how} {after}: {reason}");
                } else {
                    assert_eq!(r["status"], "verified", "{how} {after} {i}: {r}");
                    // Failing on entering instance 2 leaves the four others to one fresh
                    // worker, which rotates them together.
                    let want = match after {
                        "0" => "rotating 4 instances",
                        _ => "rotating",
                    };
                    assert!(notes.contains(want), "{how} {after} {i}: {notes}");
                }
            }
            if how == "hang" {
                assert!(
                    seconds < baseline + 2.5,
                    "one timeout of 1 s: {seconds} s against {baseline} s without a failure"
                );
            }
        }
    }
}

/// An instance whose record the image's kernel does not take (7 parameters recorded, 6 in
/// the kernel) is an error of its own: the session stays on the instance before, the candidate
/// loaded, and the other four are rotated together.
#[test]
fn ab_goes_on_past_an_instance_its_switch_refuses() {
    let rec = stencil_record(5, |d| {
        d["ParamLayout"] =
            serde_json::json!([[0, 8], [8, 8], [16, 8], [24, 4], [28, 4], [32, 2], [34, 2]]);
        d["NumArgs"] = 7.into();
    });
    let (results, _) = ab_instances(rec.path(), &[]);
    for (i, r) in results.iter().enumerate() {
        if i == 2 {
            assert_eq!(r["status"], "error", "{r}");
            assert!(r["reason"].to_string().contains("7"), "{r}");
        } else {
            assert_eq!(r["status"], "verified", "{i}: {r}");
            let notes = r["notes"].to_string();
            assert!(notes.contains("rotating 4 instances"), "{i}: {notes}");
        }
    }
}
