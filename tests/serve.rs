//! The explorer's kept replay process (`replay - --json --serve`, fed replay jobs as JSON lines)
//! end to end, on a stand-in CUDA driver (`tests/tools/fake_libcuda.c`: every call succeeds,
//! nothing is computed): the next instance switches in with the memory it shares, one that
//! cannot switch gets a fresh copy of the process (handed its job), jobs queued behind that copy
//! are still served, a refused job is answered under its run id, and the end of input ends the
//! process.

mod common;

use common::*;
use rr_engine::job;
use rr_engine::replay::ReplayRequest;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A blob of the fixture's second instance that the first does not share.
const UNSHARED_BLOB: &str = "d4be75aac440b64aba550cf6f6c6147f";

fn descriptors() -> (PathBuf, PathBuf) {
    let dir = fixture("rrtui-v2-stencil3d");
    let mut json: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    json.sort();
    (json[0].clone(), json[1].clone())
}

/// A job for run `run` of `desc`, timed with events alone, changed by `edit`.
fn job_with(desc: &Path, run: u64, edit: impl FnOnce(&mut ReplayRequest)) -> String {
    let mut r = ReplayRequest::new(desc.to_path_buf());
    r.run_id = run;
    r.events_only = true;
    edit(&mut r);
    String::from_utf8(job::encode(&r).unwrap()).unwrap()
}

fn request(desc: &Path, run: u64) -> String {
    job_with(desc, run, |_| ())
}

/// The same with a kernel timeout of 10 s (other than the first job's: no switch in).
fn request_timeout(desc: &Path, run: u64) -> String {
    job_with(desc, run, |r| r.kernel_timeout = 10.0)
}

#[test]
fn a_kept_replay_process_switches_starts_afresh_and_answers_every_request() {
    let driver = fake_driver();
    let (d, e) = descriptors();
    // A copy whose blob of the second instance holds other bytes than its name says.
    let (_copy, copied) = fixture_copy("rrtui-v2-stencil3d");
    let bad_e = copied.join(e.file_name().unwrap());
    let blob = copied.join("blobs").join(UNSHARED_BLOB);
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(["replay", "-", "--json", "--serve"])
        .env("LD_LIBRARY_PATH", driver.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // All requests at once: those behind the fresh copy (run 3) must survive its exec.
    let lines = [
        request(&d, 1),
        request(&e, 2),
        request_timeout(&d, 3),
        job_with(Path::new("x.json"), 4, |r| r.repetitions = 0),
        request_timeout(&d, 5),
        request_timeout(Path::new("/nonexistent/x.json"), 6),
        request_timeout(&e, 7),
        // Refused before the GPU although it could not have switched (another timeout): the
        // session stays, and the next one switches in.
        request(&bad_e, 8),
        request_timeout(&d, 9),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of = |run: u64| -> Vec<&Value> { events.iter().filter(|e| e["run"] == run).collect() };
    let phase = |run: u64, name: &str| -> Option<String> {
        of(run)
            .into_iter()
            .find(|e| e["event"] == "phase" && e["name"] == name)
            .map(|e| e["detail"].as_str().unwrap_or_default().to_string())
    };
    let done = |run: u64| -> Option<bool> {
        let run_events = of(run);
        let last = run_events.last()?;
        (last["event"] == "done").then(|| last["ok"].as_bool().unwrap_or(false))
    };
    for run in 1..=9 {
        assert_eq!(
            of(run).first().map(|e| e["event"].clone()),
            Some("start".into()),
            "run {run} starts: {events:?} {stderr}"
        );
    }
    assert_eq!(done(1), Some(true), "{stderr}");
    // The other instance keeps what the two share and uploads the rest.
    let switched = phase(2, "switched").expect("run 2 switched in");
    assert!(
        switched.starts_with("16.25 KiB of 32.25 KiB kept on the GPU, 16.00 KiB read and uploaded"),
        "{switched}"
    );
    assert_eq!(done(2), Some(true));
    // Another kernel timeout: a fresh copy of the process, which says why.
    assert_eq!(
        phase(3, "fresh").as_deref(),
        Some("a new replay process: another kernel timeout is asked for")
    );
    assert_eq!(done(3), Some(true));
    // A job outside the command line's limits, answered under the run it names.
    assert!(of(4).iter().any(|e| e["event"] == "error"
        && e["message"]
            .as_str()
            .unwrap()
            .contains("--repetitions 0: from 1 to")));
    assert_eq!(done(4), Some(false));
    // The fresh copy goes on: the same instance again keeps everything.
    assert!(phase(5, "switched")
        .unwrap()
        .starts_with("32.25 KiB of 32.25 KiB kept on the GPU, 0 B read and uploaded"));
    assert_eq!(done(5), Some(true));
    // A missing descriptor is refused by the checks; the session stays for the next one.
    assert_eq!(done(6), Some(false));
    assert!(phase(7, "switched").is_some(), "{events:?}");
    assert_eq!(done(7), Some(true));
    assert!(of(8)
        .iter()
        .any(|e| e["event"] == "error" && e["message"].as_str().unwrap().contains("other bytes")));
    assert_eq!(phase(8, "fresh"), None, "refused, not started afresh");
    assert_eq!(done(8), Some(false));
    assert!(
        phase(9, "switched").is_some(),
        "the session stayed: {events:?}"
    );
    assert_eq!(done(9), Some(true));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// What `rr-tui ARGS` prints on stdout and stderr, and its status, given `stdin`.
fn fed(args: &[&str], stdin: &[u8]) -> (String, String, Option<i32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(args)
        .env_remove(job::JOB_ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A process that ends before reading everything closes the pipe: not an error here.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// A line whose run cannot be read ends the kept replay process (and `rr-tui job`) with one
/// `error` line of the event protocol on stdout, never a pretty-printed document spread over
/// lines, which a reader reading lines would take for several broken events.
#[test]
fn a_line_that_is_no_job_ends_the_process_with_one_json_line() {
    let long = {
        let mut l = vec![b'x'; job::MAX_JOB_LINE + 10];
        l.push(b'\n');
        l
    };
    let serve = ["replay", "-", "--json", "--serve"];
    for (args, input, said) in [
        (&serve[..], &b"garbage\n"[..], "not JSON"),
        (&serve[..], &b"[\"replay\", \"x.json\"]\n"[..], "no job"),
        (&serve[..], &long[..], "longer than"),
        (&["job"][..], &b"garbage\n"[..], "not JSON"),
        (&["job"][..], &b""[..], "no job"),
    ] {
        let (stdout, stderr, status) = fed(args, input);
        assert_eq!(status, Some(2), "{args:?}: {stdout} {stderr}");
        assert_eq!(stdout.lines().count(), 1, "{args:?}: {stdout:?}");
        let v: Value = serde_json::from_str(stdout.trim_end()).unwrap();
        assert_eq!(v["event"], "error", "{stdout}");
        assert_eq!(v["kind"], "input", "{stdout}");
        assert!(v["message"].as_str().unwrap().contains(said), "{stdout}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// `--warmup` has an upper limit, the job's (`MAX_WARMUP`): the command line's parser refuses
/// more, and so does the kept process for a job, under the job's run, naming the flag; the
/// process goes on with the next job.
#[test]
fn warm_ups_beyond_the_limit_are_refused_on_the_command_line_and_in_jobs() {
    use rr_engine::replay::request::MAX_WARMUP;
    let (d, _) = descriptors();
    let too_many = (MAX_WARMUP + 1).to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(["replay", d.to_str().unwrap(), "--warmup", &too_many])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--warmup") && stderr.contains("(0 to 100000)"),
        "{stderr}"
    );
    // The same limit in a job, answered under its run; the next job (refused too: no run 8
    // descriptor) is still read.
    let lines = format!(
        "{}\n{}\n",
        job_with(&d, 7, |r| r.warmup = MAX_WARMUP + 1),
        request(Path::new("/nonexistent/x.json"), 8)
    );
    let (stdout, stderr, status) = fed(&["replay", "-", "--json", "--serve"], lines.as_bytes());
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let error_of = |run: u64| {
        events
            .iter()
            .find(|e| e["run"] == run && e["event"] == "error")
            .map(|e| e["message"].as_str().unwrap().to_string())
    };
    assert_eq!(
        error_of(7).as_deref(),
        Some("--warmup 100001: at most 100000"),
        "{stdout} {stderr}"
    );
    assert!(error_of(8).is_some(), "{stdout} {stderr}");
    assert_eq!(status, Some(2), "the last job's status: {stderr}");
}
