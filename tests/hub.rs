//! `tune --engine-hub`: the tuner's engines reached through a hub (the Python package's Ray
//! sweep is one), here a hub of the test's own that runs simulated engines (`rr-tui job` with
//! the tuner's engine job, told to answer from a finished sweep), so the whole path runs
//! without a GPU. A sweep through the hub
//! must equal the same sweep answered in-process (`--simulate`), also when the hub loses an
//! engine in the middle of a configuration.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;

fn saxpy() -> PathBuf {
    descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy")
}

/// A synthetic exhaustive sweep of saxpy over grid 1..`grid_max` (tests/tools/synthetic_sweep.py),
/// 20 ms of engine time each: long enough for every engine to start before the sweep ends.
fn sweep(dir: &Path, grid_max: u32) -> PathBuf {
    let out = dir.join("sweep.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/synthetic_sweep.py");
    let ok = Process::new("python3")
        .arg(script)
        .arg(&out)
        .arg(grid_max.to_string())
        .arg("20")
        .status()
        .expect("python3 runs")
        .success();
    assert!(ok, "synthetic_sweep.py failed");
    out
}

/// A hub on `socket`, as the Python package's: every connection's first line is
/// `{"hub":2,"cwd":…,"job":{"protocol":1,"engine":{…}}}`; it runs `rr-tui job` with that job
/// (told to answer from `sweep`) as the first line of its input, and passes the protocol
/// through. The `lose_at`-th command (counted over all connections) is
/// answered with a `lost` error instead, as a hub whose actor died would.
fn serve_hub(socket: &Path, sweep: PathBuf, lose_at: Option<usize>) -> Arc<AtomicUsize> {
    let listener = UnixListener::bind(socket).unwrap();
    let commands = Arc::new(AtomicUsize::new(0));
    let counted = commands.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let (sweep, counted) = (sweep.clone(), counted.clone());
            std::thread::spawn(move || relay(conn, &sweep, &counted, lose_at));
        }
    });
    commands
}

fn relay(conn: UnixStream, sweep: &Path, counted: &AtomicUsize, lose_at: Option<usize>) {
    let mut from_tuner = BufReader::new(conn.try_clone().unwrap());
    let mut to_tuner = conn;
    let mut hello = String::new();
    from_tuner.read_line(&mut hello).unwrap();
    let hello: serde_json::Value = serde_json::from_str(&hello).unwrap();
    assert_eq!(hello["hub"], 2);
    let mut job = hello["job"].clone();
    assert_eq!(job["protocol"], 1);
    assert!(job["engine"]["device_id"].is_u64(), "{job}");
    job["engine"]["simulate"] = sweep.to_str().unwrap().into();
    job["engine"]["pace"] = 1.0.into();
    let mut engine = Process::new(assert_cmd::cargo::cargo_bin("rr-tui"))
        .arg("job")
        .current_dir(hello["cwd"].as_str().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_engine = engine.stdin.take().unwrap();
    writeln!(to_engine, "{job}").unwrap();
    let from_engine = BufReader::new(engine.stdout.take().unwrap());
    let mut out = to_tuner.try_clone().unwrap();
    let pump = std::thread::spawn(move || {
        for line in from_engine.lines() {
            let Ok(line) = line else { return };
            if writeln!(out, "{line}").is_err() {
                return;
            }
        }
    });
    let mut line = String::new();
    while from_tuner.read_line(&mut line).is_ok_and(|n| n > 0) {
        let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
        if Some(n) == lose_at {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            let id = &v["measure"]["id"];
            let _ = writeln!(
                to_tuner,
                r#"{{"run":{id},"event":"error","kind":"lost","message":"test hub: the node went away"}}"#
            );
            let _ = to_tuner.shutdown(std::net::Shutdown::Both);
            let _ = engine.kill();
            break;
        }
        if to_engine.write_all(line.as_bytes()).is_err() {
            break;
        }
        line.clear();
    }
    drop(to_engine);
    let _ = engine.wait();
    let _ = pump.join();
}

/// The rows of a report, in configuration order: grid, block, status, median.
fn rows(json: &Path) -> Vec<(String, String, String, String)> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let mut rows: Vec<_> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["grid"].to_string(),
                t["block"].to_string(),
                t["status"].to_string(),
                t["kernel_ns"]["median"].to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn best(json: &Path) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let b = &v["best"];
    serde_json::json!([b["grid"], b["block"]])
}

const AXES: [&str; 4] = ["--grid", "1..6", "--block", "32..1024:32"];

/// The same sweep answered in-process: what the hub's runs must equal.
fn simulated(dir: &Path, sweep: &Path) -> PathBuf {
    let json = dir.join("simulated.json");
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("tune")
        .arg(saxpy())
        .args(AXES)
        .arg("--simulate")
        .arg(sweep)
        .arg("--json-out")
        .arg(&json)
        .assert()
        .success();
    json
}

fn through_hub(socket: &Path, json: &Path, engines: u32) -> assert_cmd::assert::Assert {
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("tune")
        .arg(saxpy())
        .args(AXES)
        .arg("--engine-hub")
        .arg(socket)
        .args(["--engines", &engines.to_string()])
        .arg("--json-out")
        .arg(json)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
}

#[test]
fn a_sweep_through_an_engine_hub_equals_the_same_sweep_in_process() {
    let t = tempfile::tempdir().unwrap();
    let sweep = sweep(t.path(), 8);
    let want = simulated(t.path(), &sweep);
    let socket = t.path().join("hub.sock");
    let commands = serve_hub(&socket, sweep, None);
    let got = t.path().join("hub.json");
    through_hub(&socket, &got, 3)
        .success()
        .stdout(predicate::str::contains("3 engine(s) through the hub"))
        .stdout(predicate::str::contains("  engine 2: simulated from"));
    assert_eq!(rows(&got), rows(&want));
    // The space, and the recorded configuration (grid 8) outside it.
    assert_eq!(rows(&got).len(), 6 * 32 + 1);
    assert_eq!(best(&got), best(&want));
    // Every configuration went through the hub (quits included).
    assert!(commands.load(Ordering::SeqCst) >= 6 * 32);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&got).unwrap()).unwrap();
    let used: std::collections::BTreeSet<i64> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["device"].as_i64().unwrap())
        .collect();
    assert_eq!(used.into_iter().collect::<Vec<_>>(), [0, 1, 2]);
    // Each engine of the hub is listed under its number, and said as an engine.
    let devices: Vec<i64> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["ordinal"].as_i64().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(devices, [0, 1, 2]);
    // Simulated engines' answers are no measurements, and the report says so.
    assert!(v["simulated_from"]
        .as_str()
        .is_some_and(|s| s.ends_with("sweep.json")));
}

#[test]
fn a_configuration_whose_engine_the_hub_loses_goes_to_another_engine() {
    let t = tempfile::tempdir().unwrap();
    let sweep = sweep(t.path(), 8);
    let want = simulated(t.path(), &sweep);
    let socket = t.path().join("hub.sock");
    serve_hub(&socket, sweep, Some(10));
    let got = t.path().join("hub.json");
    through_hub(&socket, &got, 2)
        .success()
        .stderr(predicate::str::contains(
            "was lost (test hub: the node went away)",
        ));
    // Nothing lost, nothing measured twice: the same rows as the sweep in-process.
    assert_eq!(rows(&got), rows(&want));
    assert_eq!(best(&got), best(&want));
}

#[test]
fn an_engine_hub_that_is_not_there_is_said_and_the_sweep_fails() {
    let t = tempfile::tempdir().unwrap();
    // No socket: refused before anything starts.
    through_hub(&t.path().join("none.sock"), &t.path().join("x.json"), 2)
        .code(2)
        .stderr(predicate::str::contains("is the hub running?"));
    // A whole recording too: said once, before any instance (and no CUDA driver is needed
    // here, the hub's engines run where its GPUs are).
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("tune")
        .arg(fixture("llvm-two-kernels"))
        .arg("--engine-hub")
        .arg(t.path().join("none.sock"))
        .args(["--engines", "1", "--reports"])
        .arg(t.path().join("reports"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is the hub running?"))
        .stderr(predicate::str::contains("CUDA").not());
    let file = t.path().join("file");
    std::fs::write(&file, "").unwrap();
    through_hub(&file, &t.path().join("x.json"), 2)
        .code(2)
        .stderr(predicate::str::contains("not a socket"));
    // A socket nobody listens on any more: every engine tries, then the sweep fails.
    let dead = t.path().join("dead.sock");
    drop(UnixListener::bind(&dead).unwrap());
    through_hub(&dead, &t.path().join("x.json"), 2)
        .failure()
        .stderr(predicate::str::contains("cannot reach the engine hub"))
        .stderr(predicate::str::contains("engine 1 given up"))
        .stderr(predicate::str::contains(
            "no engine of the hub could run the sweep",
        ));
}

#[test]
fn the_engine_hub_needs_a_count_of_engines_and_excludes_devices() {
    let rr = || {
        let mut c = Command::cargo_bin("rr-tui").unwrap();
        c.arg("tune").arg(saxpy());
        c
    };
    rr().args(["--engine-hub", "/tmp/x.sock"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--engines"));
    rr().args([
        "--engine-hub",
        "/tmp/x.sock",
        "--engines",
        "2",
        "--devices",
        "0,1",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("cannot be used with"));
    rr().args(["--engines", "0", "--engine-hub", "/tmp/x.sock"])
        .assert()
        .code(2);
}

#[test]
fn a_simulated_engine_answers_from_the_sweep_and_refuses_another_instance() {
    let t = tempfile::tempdir().unwrap();
    let sweep = sweep(t.path(), 2);
    let command = r#"{"measure":{"id":7,"config":{"grid":[2,1,1],"block":[64,1,1],"shared_mem":0},"policy":{"cold":true,"target":{"max_noise":null,"min_samples":1,"min_gpu_time":0.0,"timeout":60.0},"max_samples":1,"throttle":0.75}}}"#;
    let out = Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("engine")
        .arg(saxpy())
        .args(["--device-id", "4", "--simulate"])
        .arg(&sweep)
        .args(["--pace", "0"])
        .write_stdin(format!("{command}\n\"quit\"\n"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r#""event":"ready""#), "{text}");
    let trial = text
        .lines()
        .find(|l| l.contains(r#""event":"trial""#))
        .expect("a trial");
    let v: serde_json::Value = serde_json::from_str(trial).unwrap();
    assert_eq!(v["run"], 7);
    assert_eq!(v["device"], 4);
    assert_eq!(v["status"], "ok");
    // 1000 + 10 × ((2 − 24)² + (64/32 − 12)²)
    assert_eq!(v["kernel_ns"]["median"], 6840.0);
    // The sweep is of saxpy: another kernel's instance is refused at the start.
    let other = descriptor_of(&fixture("llvm-two-kernels"), "rr_scale_global");
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("engine")
        .arg(other)
        .arg("--simulate")
        .arg(&sweep)
        .write_stdin("\"quit\"\n")
        .assert()
        .stdout(predicate::str::contains(
            "sweep of another kernel (rr_saxpy)",
        ));
}

/// What an engine is sent that is no command of its (not JSON, an unknown command, the setup's
/// id 0) ends it as bad input ends a replay: one `error` event of kind input, exit status 2.
#[test]
fn an_engines_bad_command_is_an_input_error_with_status_2() {
    let t = tempfile::tempdir().unwrap();
    let sweep = sweep(t.path(), 2);
    let id_0 = r#"{"measure":{"id":0,"config":{"grid":[2,1,1],"block":[64,1,1],"shared_mem":0},"policy":{"cold":true,"target":{"max_noise":null,"min_samples":1,"min_gpu_time":0.0,"timeout":60.0},"max_samples":1,"throttle":0.75}}}"#;
    for command in ["not json", "\"dance\"", id_0] {
        let out = Command::cargo_bin("rr-tui")
            .unwrap()
            .arg("engine")
            .arg(saxpy())
            .arg("--simulate")
            .arg(&sweep)
            .args(["--pace", "0"])
            .write_stdin(format!("{command}\n"))
            .timeout(std::time::Duration::from_secs(30))
            .assert()
            .code(2)
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        let error = text
            .lines()
            .find(|l| l.contains(r#""event":"error""#))
            .unwrap_or_else(|| panic!("{command}: no error: {text}"));
        let v: serde_json::Value = serde_json::from_str(error).unwrap();
        assert_eq!(v["kind"], "input", "{command}: {v}");
    }
}

/// A hub of its own that says it is ready, then answers each `measure` with `answer(id,
/// config)`: lines that a hostile hub could send.
fn serve_fake_hub(socket: &Path, answer: fn(u64, &serde_json::Value) -> String) {
    let listener = UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            std::thread::spawn(move || {
                let mut from_tuner = BufReader::new(conn.try_clone().unwrap());
                let mut to_tuner = conn;
                let mut line = String::new();
                from_tuner.read_line(&mut line).unwrap();
                let ready = r#"{"run":0,"event":"ready","rated_clock_mhz":1980.0,"ptx":false}"#;
                if writeln!(to_tuner, "{ready}").is_err() {
                    return;
                }
                line.clear();
                while from_tuner.read_line(&mut line).is_ok_and(|n| n > 0) {
                    let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                    if let Some(m) = v.get("measure") {
                        let id = m["id"].as_u64().unwrap();
                        if to_tuner
                            .write_all(answer(id, &m["config"]).as_bytes())
                            .is_err()
                        {
                            return;
                        }
                    }
                    line.clear();
                }
            });
        }
    });
}

/// A trial line for `config` (fields as the engine writes them) with a median of `ns`.
fn trial_line(id: u64, config: &serde_json::Value, ns: f64) -> String {
    let mut t = config.clone();
    t["status"] = "ok".into();
    t["kernel_ns"] = serde_json::json!({"count": 3, "min": ns, "median": ns, "mean": ns, "stddev": 0.0, "max": ns});
    t["discarded"] = 0.into();
    t["run"] = id.into();
    t["event"] = "trial".into();
    format!("{t}\n")
}

fn hostile_sweep(
    answer: fn(u64, &serde_json::Value) -> String,
) -> (assert_cmd::assert::Assert, PathBuf, tempfile::TempDir) {
    let t = tempfile::tempdir().unwrap();
    let socket = t.path().join("hub.sock");
    serve_fake_hub(&socket, answer);
    let json = t.path().join("out.json");
    let assert = Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("tune")
        .arg(saxpy())
        .args(["--grid", "1..2", "--block", "32..64:32", "--samples", "3"])
        .arg("--engine-hub")
        .arg(&socket)
        .args(["--engines", "1", "--json-out"])
        .arg(&json)
        .timeout(std::time::Duration::from_secs(60))
        .assert();
    (assert, json, t)
}

#[test]
fn a_hub_answering_another_configuration_is_not_believed() {
    let (assert, json, _t) = hostile_sweep(|id, _| {
        let other = serde_json::json!({"grid": [4294967295u32, 65535, 65535], "block": [1, 1, 1], "shared_mem": 0});
        trial_line(id, &other, 1.0)
    });
    assert.failure().stdout(predicate::str::contains(
        "answered for another configuration",
    ));
    // Nothing it said became a result.
    if json.exists() {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert!(v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] != "ok"));
    }
}

#[test]
fn a_hub_answering_implausible_times_or_lines_that_are_no_events_is_not_believed() {
    // A negative time.
    let (assert, _json, _t) = hostile_sweep(|id, config| trial_line(id, config, -5.0));
    assert
        .failure()
        .stdout(predicate::str::contains("without a plausible time"));
    // A line for the run that is not an event: said at once, not after the watchdog.
    let started = std::time::Instant::now();
    let (assert, _json, _t) = hostile_sweep(|id, _| {
        format!("{{\"run\":{id},\"event\":\"trial\",\"status\":\"verified_lol\"}}\n")
    });
    assert
        .failure()
        .stdout(predicate::str::contains("not an engine event"));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // A line over 1 MiB whose tail would be a trial: the tail is never taken for one.
    let (assert, json, _t) = hostile_sweep(|id, config| {
        let mut s = "x".repeat(1 << 20);
        s.push_str(&trial_line(id, config, 1.0));
        s.push_str(&trial_line(id, config, 2000.0));
        s
    });
    assert.success();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["kernel_ns"]["median"] == 2000.0));
}

#[test]
fn a_hub_that_never_says_ready_is_given_up_after_one_wait() {
    let t = tempfile::tempdir().unwrap();
    let socket = t.path().join("hub.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            // Accepted, and never answered.
            held.push(conn);
        }
    });
    let started = std::time::Instant::now();
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("tune")
        .arg(saxpy())
        .args(["--grid", "1..2", "--engines", "1", "--engine-hub"])
        .arg(&socket)
        .env("RR_TUI_START_TIMEOUT", "2")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "the engine was not ready after 2 s (RR_TUI_START_TIMEOUT allows more) (through the engine hub)",
        ));
    // One wait, not three.
    assert_eq!(connections.load(Ordering::SeqCst), 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
#[cfg_attr(rr_no_mkfifo, ignore = "mkfifo is not installed")]
fn a_simulated_engine_refuses_a_sweep_that_is_no_regular_file_without_blocking() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("sweep.json");
    let made = Process::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("engine")
        .arg(saxpy())
        .arg("--simulate")
        .arg(&fifo)
        .write_stdin("\"quit\"\n")
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(2)
        .stdout(predicate::str::contains(r#""event":"error""#))
        .stdout(predicate::str::contains("regular file"));
    // The instance an engine serves (at its start, or by `load`) is read by the same reader:
    // a FIFO is refused before anything waits on it, GPU or not.
    Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("engine")
        .arg(&fifo)
        .write_stdin("\"quit\"\n")
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(2)
        .stdout(predicate::str::contains("not a regular file"));
}

/// An engine started by a thread that then ends lives on (`tune DIR` hands engines from one
/// instance's worker threads to the next's), answers on, and a simulated one refuses to go on
/// to another instance; an engine whose tuner process is gone ends by itself, even with its
/// commands' pipe still open.
#[test]
fn an_engine_outlives_the_thread_that_started_it_but_not_its_parent_process() {
    let t = tempfile::tempdir().unwrap();
    let sweep = sweep(t.path(), 2);
    let rr = assert_cmd::cargo::cargo_bin("rr-tui");
    let (rr2, sweep2) = (rr.clone(), sweep.clone());
    let mut engine = std::thread::spawn(move || {
        Process::new(rr2)
            .arg("engine")
            .arg(saxpy())
            .arg("--simulate")
            .arg(sweep2)
            .args(["--pace", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    })
    .join()
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(
        engine.try_wait().unwrap().is_none(),
        "the engine ended with the thread that started it"
    );
    let mut to_engine = engine.stdin.take().unwrap();
    writeln!(
        to_engine,
        r#"{{"load":{{"id":3,"descriptor":"other.json"}}}}"#
    )
    .unwrap();
    let out = BufReader::new(engine.stdout.take().unwrap());
    let answer = out
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains(r#""run":3"#))
        .expect("an answer to the load");
    assert!(
        answer.contains(r#""event":"error""#) && answer.contains("simulated engine"),
        "{answer}"
    );
    let _ = engine.wait();

    // The parent (a shell) exits while the engine's stdin stays open here.
    let mut shell = Process::new("sh")
        .arg("-c")
        .arg(r#"exec 3<&0; "$0" engine "$1" --simulate "$2" <&3 >/dev/null & echo $!"#)
        .arg(&rr)
        .arg(saxpy())
        .arg(&sweep)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pid = String::new();
    BufReader::new(shell.stdout.take().unwrap())
        .read_line(&mut pid)
        .unwrap();
    let pid: u32 = pid.trim().parse().unwrap();
    let _ = shell.wait();
    let gone = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "))
    });
    let _keep_open = shell.stdin.take();
    assert!(gone, "the engine (pid {pid}) outlived its parent by 5 s");

    // A tuner that died before its engine could look: the engine's parent is not the tuner
    // it was started for, and it ends at once.
    let mut orphan = Process::new(&rr)
        .arg("engine")
        .arg(saxpy())
        .arg("--simulate")
        .arg(&sweep)
        .env("RR_TUI_TUNER_PID", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let ended = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        orphan.try_wait().unwrap().is_some()
    });
    assert!(ended, "an engine whose tuner is gone went on");
}

#[test]
fn a_hub_answering_times_below_any_launch_is_not_believed() {
    let (assert, _json, _t) = hostile_sweep(|id, config| trial_line(id, config, 1e-300));
    assert
        .failure()
        .stdout(predicate::str::contains("without a plausible time"));
}

/// A hub answering for runs it was never sent is said at once (not after the watchdog's
/// minute per configuration, as a kernel that never finishes), and counted against the hub:
/// its configurations were not at fault, and a hub that keeps doing it is given up.
#[test]
fn a_hub_answering_runs_it_was_not_sent_is_said_at_once_and_given_up() {
    let started = std::time::Instant::now();
    let (assert, json, _t) = hostile_sweep(|id, config| trial_line(id + 1000, config, 2000.0));
    assert
        .failure()
        .stderr(predicate::str::contains(
            "answered for run 1001, which it was never sent",
        ))
        .stderr(predicate::str::contains("engine 0 given up"))
        .stderr(predicate::str::contains("may never finish").not());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // No configuration was blamed for it.
    if json.exists() {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert!(v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] != "fault"));
    }
}

/// A hub of the first version (`{"hub":1,…,"engine":[argv]}`) refuses this tuner's first line
/// in its own words, `not a tuner of this hub's version`: the tuner says what that means, in
/// one line, and gives the engine up.
#[test]
fn a_hub_of_the_first_version_is_said_to_be_older() {
    let t = tempfile::tempdir().unwrap();
    let socket = t.path().join("hub.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let mut hello = String::new();
            BufReader::new(conn.try_clone().unwrap())
                .read_line(&mut hello)
                .unwrap();
            let hello: serde_json::Value = serde_json::from_str(&hello).unwrap();
            assert_eq!(hello["hub"], 2);
            // The Python package's hub of version 1, word for word.
            let mut conn = conn;
            let _ = writeln!(
                conn,
                r#"{{"run": 0, "event": "error", "kind": "input", "message": "not a tuner of this hub's version"}}"#
            );
        }
    });
    let out = Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("tune")
        .arg(saxpy())
        .args(["--grid", "1..2", "--engines", "1", "--engine-hub"])
        .arg(&socket)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .failure()
        .get_output()
        .clone();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "the engine hub speaks an older hub protocol than this rr-tui's (hub 2): install the rr_tui Python package of this rr-tui's version where the hub runs"
        ),
        "{said}"
    );
    assert!(said.contains("engine 0 given up"), "{said}");
}

/// The Python package's side of the hub protocol, without Ray (python/tests/hub_protocol.py):
/// a tuner of the first version refused in one line; the engine actor runs the job it is
/// handed with `rr-tui job` (the job its first line of input, then the engine's commands), with
/// device 0 unless simulated, and a job the engine refuses is said as its start's error.
#[test]
fn the_python_hub_refuses_another_version_and_hands_engines_their_jobs() {
    let t = tempfile::tempdir().unwrap();
    let sweep = sweep(t.path(), 2);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/tests/hub_protocol.py");
    let out = Process::new("timeout")
        .args(["120", "python3"])
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("rr-tui"))
        .arg(&sweep)
        .arg(saxpy())
        .env_remove("RR_TUI_JOB")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("hub: 0 failed"), "{stdout}");
}

/// `rr-tui job` with an engine job: its commands follow the job's line on the same input (the
/// job's reader takes nothing more), and a job out of its limits is said as an engine says
/// why it cannot start (an `error` of run 0), naming the flag.
#[test]
fn an_engine_job_reads_its_commands_after_its_line_and_refuses_what_the_flags_would() {
    let t = tempfile::tempdir().unwrap();
    let sweep = sweep(t.path(), 2);
    let job = |pace: f64| {
        serde_json::json!({"protocol": 1, "engine": {
            "descriptor": saxpy(), "device_id": 4, "verify": "bytes", "energy": false,
            "kernel_timeout": 30.0,
            "supplied": {"image": null, "base_address": null, "assume_llvm18": false},
            "simulate": sweep, "pace": pace,
        }})
    };
    let command = r#"{"measure":{"id":7,"config":{"grid":[2,1,1],"block":[64,1,1],"shared_mem":0},"policy":{"cold":true,"target":{"max_noise":null,"min_samples":1,"min_gpu_time":0.0,"timeout":60.0},"max_samples":1,"throttle":0.75}}}"#;
    let out = Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("job")
        .env_remove("RR_TUI_JOB")
        .write_stdin(format!("{}\n{command}\n\"quit\"\n", job(0.0)))
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let trial = text
        .lines()
        .find(|l| l.contains(r#""event":"trial""#))
        .unwrap_or_else(|| panic!("no trial: {text}"));
    let v: serde_json::Value = serde_json::from_str(trial).unwrap();
    assert_eq!(
        (v["run"].as_u64(), v["device"].as_u64()),
        (Some(7), Some(4))
    );
    assert_eq!(v["kernel_ns"]["median"], 6840.0);

    let out = Command::cargo_bin("rr-tui")
        .unwrap()
        .arg("job")
        .env_remove("RR_TUI_JOB")
        .write_stdin(format!("{}\n", job(500.0)))
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        (v["run"].as_u64(), v["event"].as_str()),
        (Some(0), Some("error"))
    );
    assert!(v["message"].as_str().unwrap().contains("--pace 500"), "{v}");
}
