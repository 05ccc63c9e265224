//! `rr-tui profile` without a GPU: a stand-in `ncu` (a shell script) writes the report file and
//! answers `--import` with a raw page Nsight Compute 2025 printed on an H100, so everything but
//! the profiling itself runs: finding ncu, the arguments it gets, reading the page, the
//! summary, and the errors when ncu is missing, refused or writes nothing (exit 1: the tool
//! failed; 2 is for what the input or the flags get wrong).

mod common;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;
use rr_engine::job;
use rr_engine::replay::candidate::{CandidateSpec, Define};
use rr_engine::replay::ReplayRequest;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const RAW_PAGE: &str = "crates/rr-engine/tests/data/ncu-raw-fma-chain-h100.csv";

/// rr-tui on the stand-in CUDA driver: `profile` says "no driver" before it looks for ncu, so
/// a run that is to reach the stand-in ncu needs a driver to be found.
fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1")
        .env("LD_LIBRARY_PATH", stand_in_driver());
    c
}

/// The stand-in driver, built once for this test binary under Cargo's temporary directory.
fn stand_in_driver() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("profile-driver-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        build_c(
            "fake_libcuda.c",
            &dir,
            "libcuda.so.1",
            &["-shared", "-fPIC"],
        );
        dir
    })
}

/// A stand-in ncu in `dir`: `body` runs for the profiling call (its arguments in "$@"), the
/// raw page is printed for `--import`; every call's arguments are appended to `dir/args`, and the
/// job the profiling call's target is handed (`RR_TUI_JOB`, which ncu passes on) to `dir/job`.
fn fake_ncu(dir: &Path, body: &str) -> PathBuf {
    let page = std::fs::canonicalize(RAW_PAGE).unwrap();
    fake_ncu_importing(dir, &format!("cat '{}'", page.display()), body)
}

/// A stand-in ncu whose `--import` runs `import` (and the profiling call `body`).
fn fake_ncu_importing(dir: &Path, import: &str, body: &str) -> PathBuf {
    let path = dir.join("ncu");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{args}'\ncase \" $* \" in *' --import '*) {import}; exit 0;; esac\nprintf '%s\\n' \"$RR_TUI_JOB\" >> '{job}'\n{body}\n",
            args = dir.join("args").display(),
            job = dir.join("job").display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Writes `<-o value>.ncu-rep`, as ncu does.
const WRITES_REPORT: &str =
    "while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then : > \"$2.ncu-rep\"; fi; shift; done";

/// The replay job ncu's target was handed (the first profiling call's).
fn handed_job(tools: &Path) -> ReplayRequest {
    let text = std::fs::read_to_string(tools.join("job")).unwrap();
    let line = text.lines().next().expect("a job for ncu's target");
    job::decode(line.as_bytes()).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// `rr-tui profile DESC --ncu NCU`, more arguments to follow.
fn profile(desc: &Path, ncu: &Path) -> Command {
    let mut c = rr();
    c.args(["profile"]).arg(desc).arg("--ncu").arg(ncu);
    c
}

#[test]
fn a_profile_is_read_from_ncus_raw_page() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(tools.path(), WRITES_REPORT);
    let out = rr()
        .args(["profile"])
        .arg(&desc)
        .arg("--ncu")
        .arg(&ncu)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("duration          581.28 µs"), "{text}");
    assert!(text.contains("compute (SM) 94.2 %"), "{text}");
    assert!(
        text.contains("occupancy         achieved 89.5 % of a theoretical 100.0 %"),
        "{text}"
    );
    assert!(text.contains("ncu-ui opens it"), "{text}");
    // ncu was asked for one repetition's range, the recorded kernel by its mangled name, at the
    // clocks as they are; its target is `rr-tui job`, handed the replay job in its environment:
    // one repetition of the instance as recorded, timed with events alone.
    let args = std::fs::read_to_string(tools.path().join("args")).unwrap();
    for want in [
        "--nvtx-include regex:rr-tui.rep.1/",
        "--kernel-name-base mangled --kernel-name regex:^rr_saxpy$",
        "--clock-control none",
        "--launch-count 1",
        "--set basic",
    ] {
        assert!(args.contains(want), "{want} not in {args}");
    }
    let profiling = args.lines().next().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("rr-tui");
    assert!(
        profiling.ends_with(&format!(" {} job", exe.display())),
        "{profiling}"
    );
    let mut want = ReplayRequest::new(desc.clone());
    want.events_only = true;
    assert_eq!(handed_job(tools.path()), want);
    // JSON carries the summary and where the report is.
    let out = rr()
        .args(["profile", "--json"])
        .arg(&desc)
        .arg("--ncu")
        .arg(&ncu)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["profile"]["theoretical_occupancy_pct"], 100.0);
    assert!(v["report"].as_str().unwrap().ends_with(".ncu-rep"));
}

#[test]
fn ncu_missing_refused_or_silent_is_one_line() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    rr().args(["profile"])
        .arg(&desc)
        .args(["--ncu", "/nonexistent/ncu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--ncu /nonexistent/ncu: no such file",
        ));
    let tools = tempfile::tempdir().unwrap();
    let refused = fake_ncu(
        tools.path(),
        "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters'; exit 1",
    );
    profile(&desc, &refused)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "performance counters (ERR_NVGPUCTRPERM)",
        ));
    // A report an earlier run left is not taken for this run's.
    std::fs::write(desc.with_extension("ncu-rep"), b"stale").unwrap();
    let silent = fake_ncu(tools.path(), "exit 0");
    profile(&desc, &silent)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("ncu wrote no report"));
}

/// Without a CUDA driver and without ncu, the driver is named: the more basic of the two, and
/// ncu is no use without it. A --ncu that names nothing is the input's fault and said first.
#[cfg_attr(rr_gpu, ignore = "needs a machine without a CUDA driver")]
#[test]
fn no_driver_is_said_before_no_ncu() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let empty = tempfile::tempdir().unwrap();
    rr().args(["profile"])
        .arg(&desc)
        .env("PATH", empty.path())
        .env("LD_LIBRARY_PATH", empty.path())
        .env_remove("CUDA_HOME")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no CUDA driver found"))
        .stderr(predicate::str::contains("Nsight Compute").not());
    rr().args(["profile"])
        .arg(&desc)
        .args(["--ncu", "/nonexistent/ncu"])
        .env("LD_LIBRARY_PATH", empty.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--ncu /nonexistent/ncu: no such file",
        ));
    // With the driver, the missing ncu is what is said.
    rr().args(["profile"])
        .arg(&desc)
        .env("PATH", empty.path())
        .env_remove("CUDA_HOME")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "Nsight Compute (ncu) was not found",
        ));
}

#[test]
fn what_replay_refuses_profile_refuses_before_ncu() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(tools.path(), WRITES_REPORT);
    rr().args(["profile"])
        .arg(&desc)
        .args(["--block", "100000"])
        .arg("--ncu")
        .arg(&ncu)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ThreadsLimits").or(predicate::str::contains("limit")));
    assert!(!tools.path().join("args").exists(), "ncu ran");
    // A report path that is a link is not written through.
    let report = desc.with_extension("ncu-rep");
    let target = tools.path().join("elsewhere");
    std::os::unix::fs::symlink(&target, &report).unwrap();
    profile(&desc, &ncu)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a regular file"));
    assert!(!target.exists());
}

#[test]
fn energy_is_not_for_ab_replays() {
    rr().args(["replay", "x.json", "--energy", "--candidate", "k.cu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

/// `profile DESC --ncu NCU --output-dir OUT --events --run-id RUN`: its exit status must be
/// `code`; its standard output.
fn profile_events(desc: &Path, ncu: &Path, out_dir: &Path, run: u64, code: i32) -> String {
    let out = profile(desc, ncu)
        .arg("--output-dir")
        .arg(out_dir)
        .args(["--events", "--run-id", &run.to_string()])
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The explorer's child: ncu's passes as `progress` events, then the profile (or the error),
/// then `done`, every line a tagged event and nothing else on stdout.
#[test]
fn profile_events_stream_progress_then_the_profile_or_the_error() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let body = format!("echo '==PROF== Profiling \"rr_saxpy\" - 0: 0%....50%....100% - 18 passes'\n{WRITES_REPORT}");
    let ncu = fake_ncu(tools.path(), &body);
    let events = |ncu: &Path, code: i32| -> Vec<serde_json::Value> {
        profile_events(&desc, ncu, out_dir.path(), 9, code)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect(l))
            .inspect(|v| assert_eq!(v["run"], 9))
            .collect()
    };
    let ok = events(&ncu, 0);
    let kinds: Vec<&str> = ok.iter().map(|v| v["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["phase", "profile", "done"], "{ok:?}");
    assert!(ok[0]["detail"].as_str().unwrap().contains("18 passes"));
    assert!(ok[1]["profile"]["duration_ns"].as_f64().unwrap() > 0.0);
    assert!(ok[1]["report"].as_str().unwrap().ends_with(".ncu-rep"));
    assert_eq!(ok[2]["ok"], true);
    // ncu writes nothing: the error, then the end of the run.
    let silent = fake_ncu(tools.path(), "exit 0");
    let failed = events(&silent, 1);
    let kinds: Vec<&str> = failed
        .iter()
        .map(|v| v["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["error", "done"], "{failed:?}");
    assert!(failed[0]["message"].as_str().unwrap().contains("no report"));
}

/// A hung ncu is stopped at `--timeout`, the replay under it with it (its process group).
#[test]
fn a_hung_ncu_is_stopped_at_the_time_limit() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(tools.path(), "sleep 60 & wait");
    let started = std::time::Instant::now();
    profile(&desc, &ncu)
        .args(["--timeout", "1"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did not finish within 1 s"));
    assert!(started.elapsed().as_secs() < 20);
    profile(&desc, tools.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a file"));
}

/// ncu's output is read in bounded lines, leniently decoded: a flood without newlines or bytes
/// that are not UTF-8 neither stop the progress nor grow the events.
#[test]
fn floods_and_broken_text_from_ncu_stay_bounded() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let body = format!(
        "head -c 1000000 /dev/zero | tr '\\0' x; echo; printf '\\377\\376 not utf-8\\n'; echo '==PROF== Profiling \"k\": 100% - 3 passes'\n{WRITES_REPORT}"
    );
    let ncu = fake_ncu(tools.path(), &body);
    let text = profile_events(&desc, &ncu, out_dir.path(), 2, 0);
    assert!(text.lines().all(|l| l.len() < 70_000), "a line too long");
    assert!(text.contains("3 passes"), "{text}");
}

/// `--candidate`: ncu profiles the A/B candidate's first repetition (its NVTX range, no kernel
/// name: the candidate's may differ), and the report goes beside the recorded kernel's.
#[test]
fn a_candidate_is_profiled_in_its_own_range_and_report() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(tools.path(), WRITES_REPORT);
    let source = std::fs::canonicalize("tests/gpu/samples/ab_kernel.cu").unwrap();
    let out = profile(&desc, &ncu)
        .arg("--output-dir")
        .arg(out_dir.path())
        .arg("--candidate")
        .arg(&source)
        .args(["-D", "SLOW=0", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(
        v["report"]
            .as_str()
            .unwrap()
            .ends_with(".candidate.ncu-rep"),
        "{v}"
    );
    assert!(
        v["candidate"].as_str().unwrap().ends_with("ab_kernel.cu"),
        "{v}"
    );
    let args = std::fs::read_to_string(tools.path().join("args")).unwrap();
    let profiling = args.lines().next().unwrap();
    assert!(
        profiling.contains("regex:rr-tui.rep.1.candidate/"),
        "{profiling}"
    );
    assert!(!profiling.contains("--kernel-name "), "{profiling}");
    // The replay under ncu is the A/B replay of that candidate, one pair.
    let handed = handed_job(tools.path());
    assert_eq!(
        handed.candidate,
        Some(CandidateSpec {
            path: source.clone(),
            defines: vec![Define::parse("SLOW=0").unwrap()],
            ..Default::default()
        })
    );
    assert_eq!(
        (handed.repetitions, handed.events_only, handed.output_dir),
        (1, true, Some(out_dir.path().to_path_buf()))
    );
}

/// Whether process `pid` is alive: it exists and is not a zombie (ended, not yet reaped by
/// whichever process adopted it), waiting up to 2 s for it to end.
fn alive(pid: i32) -> bool {
    let running = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, r)| r.trim_start().chars().next())
            })
            .is_some_and(|state| state != 'Z')
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while running() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    running()
}

#[test]
fn every_ncu_step_is_bounded_and_drained() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let page = std::fs::canonicalize(RAW_PAGE).unwrap();
    // An import that hangs: the time limit covers it (it used to hang `profile` for ever).
    let tools = tempfile::tempdir().unwrap();
    let ncu = fake_ncu_importing(tools.path(), "exec sleep 600", WRITES_REPORT);
    let t = std::time::Instant::now();
    profile(&desc, &ncu)
        .args(["--timeout", "3"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("ncu --import").and(predicate::str::contains(
                "did not finish within the time limit (--timeout): it was stopped",
            )),
        );
    assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
    // An import flooding stderr (5 MB) before its page: read as it comes, no deadlock.
    let flood = format!(
        "head -c 5000000 /dev/zero | tr '\\0' x >&2; cat '{}'",
        page.display()
    );
    let tools = tempfile::tempdir().unwrap();
    let ncu = fake_ncu_importing(tools.path(), &flood, WRITES_REPORT);
    profile(&desc, &ncu)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success()
        .stdout(predicate::str::contains("ncu-ui opens it"));
    // A process ncu leaves behind holding its output: not waited for.
    let tools = tempfile::tempdir().unwrap();
    let pid = tools.path().join("pid");
    let leaves = format!("{WRITES_REPORT}; sleep 600 & echo $! > '{}'", pid.display());
    let ncu = fake_ncu(tools.path(), &leaves);
    let t = std::time::Instant::now();
    profile(&desc, &ncu)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    assert!(
        t.elapsed().as_secs() < 20,
        "waited for the leftover: {:?}",
        t.elapsed()
    );
    let left: i32 = std::fs::read_to_string(&pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !alive(left),
        "the leftover holding ncu's output was ended with its group"
    );
}

#[test]
fn a_silent_ncu_is_explained() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(tools.path(), &format!("sleep 3; {WRITES_REPORT}"));
    profile(&desc, &ncu)
        .env("RR_TUI_NCU_SILENCE_S", "1")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success()
        .stderr(
            predicate::str::contains("ncu has printed nothing for")
                .and(predicate::str::contains(
                    "the replay under it has not started",
                ))
                .and(predicate::str::contains("sleep (pid ")),
        );
}

#[test]
fn sigterm_ends_ncu_and_what_it_started() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let pid = tools.path().join("pid");
    let ncu = fake_ncu(
        tools.path(),
        &format!("sleep 600 & echo $! > '{}'; wait", pid.display()),
    );
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rr-tui"))
        .args(["profile"])
        .arg(&desc)
        .arg("--ncu")
        .arg(&ncu)
        .env("LD_LIBRARY_PATH", stand_in_driver())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !pid.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let sleeper: i32 = std::fs::read_to_string(&pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(sleeper));
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let t = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed().as_secs() < 30,
            "profile did not end after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("stopped by signal 15"), "{err}");
    assert!(
        !alive(sleeper),
        "ncu's child (the replay, here a sleep) was ended too"
    );
}

/// ncu's target as a real ncu runs it: `rr-tui job` with the environment ncu was given. Here
/// the stand-in ncu runs the program after its own arguments on the stand-in CUDA driver and
/// writes the report once that program succeeded: the handed-over replay job reaches the replay,
/// which runs its one repetition, timed with events alone, and says so in events on ncu's output.
#[test]
fn ncus_target_runs_the_replay_job_it_was_handed() {
    let driver = fake_driver();
    let dir = fixture("rrtui-v2-stencil3d");
    let desc = descriptor_of(&dir, "rr_stencil3d");
    let tools = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let replayed = tools.path().join("replay.out");
    let body = format!(
        "report=''; while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then report=\"$2\"; shift 2; break; fi; shift; done\n\
         \"$@\" > '{out}'; status=$?; cat '{out}'\n\
         [ $status = 0 ] && : > \"$report.ncu-rep\"",
        out = replayed.display()
    );
    let ncu = fake_ncu(tools.path(), &body);
    let out = profile(&desc, &ncu)
        .arg("--output-dir")
        .arg(out_dir.path())
        .args(["--json"])
        .env("LD_LIBRARY_PATH", driver.path())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let events: Vec<serde_json::Value> = std::fs::read_to_string(&replayed)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"start"), "{kinds:?}");
    assert_eq!(events.last().unwrap()["ok"], true, "{events:?}");
    let launch = events.iter().find(|e| e["event"] == "launch").unwrap();
    assert_eq!(launch["repetitions"], 1, "{launch}");
    assert_eq!(
        kinds.iter().filter(|k| **k == "rep").count(),
        1,
        "{kinds:?}"
    );
    assert!(events.iter().all(|e| e["run"] == 1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["report"].as_str().unwrap().ends_with(".ncu-rep"), "{v}");
}
