//! `rr-tui job`, the hidden command one rr-tui process starts another with (the child-process
//! protocol, `rr_engine::job`): the job is read from `RR_TUI_JOB` or else the first line of
//! standard input, its kind picks what runs it. Replays and A/B jobs run here on the stand-in
//! CUDA driver (`tests/tools/fake_libcuda.c`: every call succeeds, nothing is computed), a profile
//! job on a stand-in ncu; what is no job of ours is refused in one line, exit 2.

mod common;

use common::*;
use rr_engine::job::{self, Job, JOB_ENV};
use rr_engine::profile::{ProfileJob, ProfileOutput};
use rr_engine::replay::ab_job::AbJob;
use rr_engine::replay::candidate::CandidateSpec;
use rr_engine::replay::ReplayRequest;
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `rr-tui job` with `env` set, `stdin` written to its standard input (then closed).
fn rr_job(env: &[(&str, &std::ffi::OsStr)], stdin: &[u8]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rr-tui"));
    c.arg("job")
        .env("NO_COLOR", "1")
        .env_remove(JOB_ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // A process that refuses before reading may have closed its end.
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn line_of<J: Job>(job: &J) -> Vec<u8> {
    job::encode(job).unwrap()
}

fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A replay job of the fixture's first instance for run `run`, timed with events alone.
fn replay_job(run: u64) -> ReplayRequest {
    let desc = descriptor_of(&fixture("rrtui-v2-stencil3d"), "rr_stencil3d");
    let mut r = ReplayRequest::new(desc);
    r.run_id = run;
    r.repetitions = 3;
    r.events_only = true;
    r
}

/// The events of a replay that ran its three repetitions under run `run` and ended well.
fn assert_replayed(out: &Output, run: u64) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let ev = events(out);
    assert!(ev.iter().all(|e| e["run"] == run), "{ev:?}");
    assert_eq!(ev.first().map(|e| &e["event"]), Some(&"start".into()));
    let reps = ev.iter().filter(|e| e["event"] == "rep").count();
    assert_eq!(reps, 3, "{ev:?}");
    let last = ev.last().unwrap();
    assert_eq!(
        (&last["event"], &last["ok"]),
        (&"done".into(), &true.into())
    );
}

#[test]
fn a_replay_job_runs_from_standard_input_and_from_the_environment() {
    let driver = fake_driver();
    let lib = [("LD_LIBRARY_PATH", driver.path().as_os_str())];
    // From standard input: the first non-blank line.
    let mut input = b"\n".to_vec();
    input.extend(line_of(&replay_job(4)));
    input.extend(b"\nnot read\n");
    assert_replayed(&rr_job(&lib, &input), 4);
    // From the environment: standard input is not read.
    let handed = std::ffi::OsString::from(String::from_utf8(line_of(&replay_job(5))).unwrap());
    let out = rr_job(
        &[lib[0], (JOB_ENV, handed.as_os_str())],
        &line_of(&replay_job(6)),
    );
    assert_replayed(&out, 5);
}

/// A kind this rr-tui does not run, a line that is no job, a job outside the command line's
/// limits, no job at all: one line saying so, exit 2, nothing run.
#[test]
fn what_is_no_job_of_ours_is_refused_in_one_line() {
    let mut bad_limit = replay_job(7);
    bad_limit.repetitions = 0;
    let cases: [(Vec<u8>, &str); 5] = [
        (
            br#"{"protocol":1,"surprise":{"run_id":1}}"#.to_vec(),
            "a job of kind `surprise`: this rr-tui runs ",
        ),
        (b"replay x.json --json".to_vec(), "not JSON"),
        (line_of(&bad_limit), "--repetitions 0"),
        (
            br#"{"protocol":2,"replay":{"run_id":1}}"#.to_vec(),
            "protocol 2",
        ),
        (Vec::new(), "no job"),
    ];
    for (line, want) in cases {
        let out = rr_job(&[], &line);
        assert_eq!(out.status.code(), Some(2), "{want}");
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{want}: {text}");
        let v: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["event"], "error", "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(message.contains(want), "{want}: {message}");
        assert!(message.starts_with("rr-tui job: "), "{message}");
    }
    // The same in the environment.
    let kind = std::ffi::OsString::from(r#"{"protocol":1,"surprise":{}}"#);
    let out = rr_job(&[(JOB_ENV, kind.as_os_str())], b"");
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("kind `surprise`"), "{said}");
    // The message names the kinds this rr-tui runs.
    assert!(said.contains("replay") && said.contains("profile") && said.contains("ab"));
}

/// The hidden commands misused: `job` with a word after it says so in one JSON line of kind
/// `usage` (its reader reads lines), `engine` without its descriptor in one line on stderr;
/// exit 2 both, without clap's usage and tips.
#[test]
fn a_hidden_commands_misuse_is_one_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(["job", "extra\x1b[2J"])
        .env_remove(JOB_ENV)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(
        (v["event"].as_str(), v["kind"].as_str()),
        (Some("error"), Some("usage"))
    );
    let message = v["message"].as_str().unwrap();
    assert!(message.contains("extra\\x1b[2J"), "{message}");
    let out = Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(["engine", "--device-id", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("error: ") && text.contains("DESCRIPTOR"),
        "{text}"
    );
}

/// A huge number in a job is not echoed back whole: a check that writes it out (301 digits for
/// 1e300) quotes at most 40 of them.
#[test]
fn a_huge_number_in_a_job_is_quoted_short() {
    let digits = "9".repeat(300);
    let mut job = replay_job(3);
    job.kernel_timeout = 4321.0;
    let line = String::from_utf8(line_of(&job)).unwrap();
    assert!(line.contains("\"kernel_timeout\":4321.0"), "{line}");
    let line = line.replace(
        "\"kernel_timeout\":4321.0",
        &format!("\"kernel_timeout\":{digits}"),
    );
    let out = rr_job(&[], line.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.trim_end()).unwrap();
    let message = v["message"].as_str().unwrap();
    assert!(message.len() < 200 && message.contains("…"), "{message}");
}

/// Hostile input: a flood of blank lines, a job of exactly the limit, a block whose threads
/// overflow, an endless engine command: each ends promptly, in one line, never a panic.
#[test]
fn hostile_lines_and_geometry_end_in_one_line() {
    let started = std::time::Instant::now();
    // 200 KB of blank lines count toward the 64 KiB limit.
    let out = rr_job(&[], &vec![b'\n'; 200 << 10]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("longer than"));
    // A line of exactly 64 KiB (padded with spaces inside the JSON) is a line, not refused as
    // too long: it is read and refused for what it is.
    let mut exact = br#"{"protocol":1,"surprise":{}"#.to_vec();
    exact.resize(job::MAX_JOB_LINE - 1, b' ');
    exact.extend(b"}\n");
    let out = rr_job(&[], &exact);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("kind `surprise`"), "{said}");
    // 2^32-1 threads in each dimension multiply past u64: refused, exit 2, no panic.
    let mut huge = replay_job(5);
    huge.overrides.block = Some([u32::MAX; 3]);
    huge.overrides.ignore_limits = true;
    let driver = fake_driver();
    let out = rr_job(
        &[("LD_LIBRARY_PATH", driver.path().as_os_str())],
        &line_of(&huge),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("1024 threads"));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// The explorer's leaderboard: an A/B job asking for JSON gets `ab`'s leaderboard document (its
/// workers started as `rr-tui job` too), every candidate on every instance.
#[test]
fn an_ab_job_gives_the_leaderboard_document() {
    let driver = fake_driver();
    let dir = fixture("rrtui-v2-stencil3d");
    let image = dir.join("images/kernels-sm90.cubin");
    let mut job = AbJob::new(
        dir.clone(),
        "stencil".into(),
        vec![CandidateSpec {
            path: image,
            ..Default::default()
        }],
    );
    job.pairs = 6;
    job.events_only = true;
    job.json = true;
    let out = rr_job(
        &[
            ("LD_LIBRARY_PATH", driver.path().as_os_str()),
            ("FAKE_CUDA_MEMORY", "1".as_ref()),
        ],
        &line_of(&job),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let board: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(board["schema"], "rr-tui.ab/1");
    assert_eq!(board["instances"].as_array().unwrap().len(), 2, "{board}");
    let c = &board["candidates"][0];
    assert_eq!(
        (c["verified"].as_u64(), c["total"].as_u64()),
        (Some(2), Some(2)),
        "{board}"
    );
    for r in c["instances"].as_array().unwrap() {
        assert_eq!(r["compare"]["pairs"], 6, "{r}");
    }
    // A candidate that is no file: `ab`'s refusal, as the JSON error the explorer reads.
    job.candidates[0].path = dir.join("missing.cubin");
    let out = rr_job(&[], &line_of(&job));
    assert_eq!(out.status.code(), Some(2));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        e["message"].as_str().unwrap().contains("missing.cubin"),
        "{e}"
    );
}

/// The explorer's profile: a profile job asking for events gets ncu's progress, the profile and
/// `done`, tagged with its run, from a stand-in ncu that writes its report.
#[test]
fn a_profile_job_streams_its_events() {
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let tools = tempfile::tempdir().unwrap();
    let ncu = tools.path().join("ncu");
    let page =
        std::fs::canonicalize("crates/rr-engine/tests/data/ncu-raw-fma-chain-h100.csv").unwrap();
    std::fs::write(
        &ncu,
        format!(
            "#!/bin/sh\ncase \" $* \" in *' --import '*) cat '{}'; exit 0;; esac\n\
             echo '==PROF== Profiling \"rr_saxpy\" - 0: 0%....100% - 9 passes'\n\
             while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then : > \"$2.ncu-rep\"; fi; shift; done\n",
            page.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let job = ProfileJob {
        ncu: Some(ncu),
        output_dir: Some(out_dir.path().to_path_buf()),
        output: ProfileOutput::Events,
        run_id: 12,
        ..ProfileJob::new(desc)
    };
    // A driver to be found: profile says "no driver" before it runs ncu.
    let driver = fake_driver();
    let out = rr_job(
        &[("LD_LIBRARY_PATH", driver.path().as_os_str())],
        &line_of(&job),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let ev = events(&out);
    let kinds: Vec<&str> = ev.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["phase", "profile", "done"], "{ev:?}");
    assert!(ev.iter().all(|e| e["run"] == 12));
    assert!(ev[1]["report"]
        .as_str()
        .unwrap()
        .starts_with(&out_dir.path().display().to_string()));
    // An ncu that is not there: the error as an event of the run, then its end; exit 2 (the
    // job names it).
    let job = ProfileJob {
        ncu: Some(Path::new("/nonexistent/ncu").to_path_buf()),
        ..job
    };
    let out = rr_job(&[], &line_of(&job));
    assert_eq!(out.status.code(), Some(2));
    let kinds: Vec<String> = events(&out)
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["error", "done"]);
}

/// What a tune job's refusal says, and how the job is broken.
type Breaker = (&'static str, fn(&mut rr_tune::job::TuneJob));

/// A tune job outside the command line's limits (what `tune`'s parser refuses: a budget of 0,
/// 4294967295 samples, energy measured -1 s) is refused before anything runs, exit 2: asking
/// for events, as a replay job is refused, an `error` event of its run then `done` on stdout
/// (the explorer reads its sweep's stream, not stderr); else `tune`'s line on stderr.
#[test]
fn a_refused_tune_job_asking_for_events_says_so_in_its_stream() {
    use rr_tune::job::TuneJob;
    let desc = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let breakers: [Breaker; 3] = [
        ("--budget 0", |j| j.budget = Some(0)),
        ("--samples 4294967295", |j| j.samples = Some(u32::MAX)),
        ("--energy-seconds -1", |j| j.energy_seconds = -1.0),
    ];
    for (want, break_it) in breakers {
        let mut job = TuneJob::new(desc.clone());
        job.run_id = 9;
        job.events = true;
        break_it(&mut job);
        let out = rr_job(&[], &line_of(&job));
        assert_eq!(out.status.code(), Some(2), "{want}");
        assert!(out.stderr.is_empty(), "{want}: {:?}", out.stderr);
        let said = events(&out);
        assert_eq!(said.len(), 2, "{want}: {said:?}");
        assert_eq!(
            (&said[0]["event"], &said[0]["kind"], &said[0]["run"]),
            (&"error".into(), &"input".into(), &9.into()),
            "{want}"
        );
        let message = said[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("rr-tui job: ") && message.contains(want),
            "{message}"
        );
        assert_eq!(
            said[1],
            serde_json::json!({"run": 9, "event": "done", "ok": false})
        );
        // Without events: `tune`'s own line on stderr, nothing on stdout.
        job.events = false;
        let out = rr_job(&[], &line_of(&job));
        assert_eq!(out.status.code(), Some(2), "{want}");
        assert!(out.stdout.is_empty(), "{want}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("rr-tui: error: rr-tui job: ") && stderr.contains(want),
            "{stderr}"
        );
    }
    // A job whose run cannot be read is refused in the untagged line a replay job's is.
    let mut job = TuneJob::new(desc);
    job.events = true;
    let line = String::from_utf8(line_of(&job)).unwrap();
    let line = line.replace(&format!("\"run_id\":{}", job.run_id), "\"run_id\":\"nine\"");
    let out = rr_job(&[], line.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let said = events(&out);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(
        (&said[0]["event"], &said[0]["run"]),
        (&"error".into(), &Value::Null)
    );
}
