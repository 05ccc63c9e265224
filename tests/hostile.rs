//! Hostile record directories, generated at test time from copies of the committed fixtures:
//! FIFOs, sockets and links to /dev/zero where files should be, links out of the directory,
//! escape sequences and newlines in names, overflowing numbers, huge counts, truncated
//! snapshots, exports onto links, a closed standard output, hang-ups and SIGTERM.
//!
//! Every command runs under a hard timeout (a hang fails the test instead of blocking it) and a
//! memory cap (`ulimit -v`), and must never panic nor let a raw ESC or BEL reach the terminal.
//! A scenario runs all its commands and reports every failure at once, each with the command,
//! its exit status and excerpts of its output (control characters escaped).
//!
//! Scenario tables are short specs, one `command:expectation[:file]` per word:
//! - commands: `report`, `report-json`, `inspect`, `inspect-json`, `check`, `check-json`
//!   (on the directory), `check-one` (on the descriptor), `diff` (`diff X.json`), `diff-files`
//!   (`diff X.record_input X.record_output`), `replay`, `replay-verify`;
//! - expectations: `ok` (exit 0), `fail` (non-zero, the file named on stderr, or on stdout for
//!   `check`), `fail-out` (non-zero, the file named on stdout or stderr), `any` (only the
//!   sanity rules), or an exit code;
//! - file: a name that must appear; `.ext` stands for the instance's `<stem>.ext`.

mod common;

use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::symlink;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{sleep, JoinHandle};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rr-tui");
const HARD_TIMEOUT: Duration = Duration::from_secs(20);
/// `sh -c CAPPED BIN args…`: the binary with at most ~4 GB of address space.
const CAPPED: &str = r#"ulimit -v 4000000; exec "$0" "$@""#;
/// Follows a newline in a file name: no line of output may start with it.
const FORGED: &str = "forged-line";
const EVIL_NAME: &str = "rr_saxpy\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\u{9b}31m";
const LLVM: &str = "llvm-two-kernels";
const RRTUI: &str = "rrtui-stencil3d";

// ------------------------------------------------------------------------------------------------
// Running the binary

struct Outcome {
    cmd: String,
    /// `None`: still running at the hard timeout (killed).
    status: Option<ExitStatus>,
    out: Vec<u8>,
    err: Vec<u8>,
    took: Duration,
}

impl Outcome {
    fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.err).into_owned()
    }
    fn describe(&self) -> String {
        let status = match self.status.map(|s| (s.code(), s.signal())) {
            None => "HANG (killed)".to_string(),
            Some((Some(c), _)) => format!("exit {c}"),
            Some((None, sig)) => format!("killed by signal {sig:?}"),
        };
        format!(
            "  $ {}\n  → {status} after {:.1} s\n  stderr: {}\n  stdout: {}",
            self.cmd,
            self.took.as_secs_f64(),
            excerpt(&self.err),
            excerpt(&self.out)
        )
    }
}

/// Output for a failure message: control characters escaped (they must not drive the test's
/// terminal either), long outputs cut in the middle.
fn excerpt(bytes: &[u8]) -> String {
    let chars: Vec<char> = String::from_utf8_lossy(bytes).chars().collect();
    let esc = |cs: &[char]| -> String {
        cs.iter()
            .map(|&c| match c {
                '\n' => "\n          ".to_string(),
                c if c.is_control() => c.escape_default().to_string(),
                c => c.to_string(),
            })
            .collect()
    };
    if chars.len() <= 1200 {
        return esc(&chars);
    }
    let (head, tail) = (esc(&chars[..800]), esc(&chars[chars.len() - 300..]));
    format!("{head}\n          […]{tail}")
}

fn capped(args: &[OsString]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(CAPPED).arg(BIN).args(args);
    c.env("NO_COLOR", "1").stdin(Stdio::null());
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// The command line for messages, with the scenario's temporary directory shortened to `T`.
fn show(args: &[OsString], base: &Path) -> String {
    let base = base.to_string_lossy().into_owned();
    let words = args.iter().map(|a| {
        let a = a.to_string_lossy().replace(&base, "T");
        match a.chars().any(|c| c.is_control() || c == ' ') {
            true => format!("{a:?}"),
            false => a,
        }
    });
    std::iter::once("rr-tui".to_string())
        .chain(words)
        .collect::<Vec<_>>()
        .join(" ")
}

fn drain(mut r: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

/// Poll for the exit for at most [`HARD_TIMEOUT`]; kill the child (ours, by pid) on a hang.
fn wait_or_kill(child: &mut Child) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            return Some(s);
        }
        if start.elapsed() > HARD_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        sleep(Duration::from_millis(20));
    }
}

/// Run with the timeout and the memory cap. `read_one_byte`: read one byte of stdout, then
/// close it (a reader that went away, as `| head -c1`).
fn run_with(args: &[OsString], base: &Path, read_one_byte: bool) -> Outcome {
    let start = Instant::now();
    let mut child = capped(args).spawn().expect("spawn sh");
    let mut stdout = child.stdout.take().unwrap();
    let out = match read_one_byte {
        false => drain(stdout),
        true => std::thread::spawn(move || {
            let mut one = [0u8; 1];
            let n = stdout.read(&mut one).unwrap_or(0);
            one[..n].to_vec()
        }),
    };
    let err = drain(child.stderr.take().unwrap());
    let status = wait_or_kill(&mut child);
    Outcome {
        cmd: show(args, base),
        status,
        out: out.join().unwrap(),
        err: err.join().unwrap(),
        took: start.elapsed(),
    }
}

fn run(args: &[OsString], base: &Path) -> Outcome {
    run_with(args, base, false)
}

/// What every run must satisfy, whatever the input.
fn sanity(o: &Outcome) -> Vec<String> {
    let mut p = Vec::new();
    match o.status.map(|s| (s.code(), s.signal())) {
        None => p.push(format!("hang: still running after {HARD_TIMEOUT:?}")),
        Some((Some(101), _)) => p.push("exit 101 (panic)".into()),
        Some((None, sig)) => p.push(format!("killed by signal {sig:?}")),
        Some(_) => {}
    }
    if o.stderr().contains("panicked") {
        p.push("stderr says `panicked`".into());
    }
    for (name, bytes) in [("stdout", &o.out), ("stderr", &o.err)] {
        for (byte, what) in [(0x1b, "ESC"), (0x07, "BEL")] {
            if bytes.contains(&byte) {
                p.push(format!("raw {what} ({byte:#04x}) in {name}"));
            }
        }
        // In UTF-8: the C1 CSI (U+009B) and the right-to-left override (U+202E), which JSON
        // leaves raw unless told.
        for (seq, what) in [
            (&[0xc2, 0x9b][..], "U+009B"),
            (&[0xe2, 0x80, 0xae][..], "U+202E"),
        ] {
            if bytes.windows(seq.len()).any(|w| w == seq) {
                p.push(format!("raw {what} in {name}"));
            }
        }
    }
    if (o.stdout() + &o.stderr())
        .lines()
        .any(|l| l.starts_with(FORGED))
    {
        p.push("a newline in a file name forged a line of output".into());
    }
    p
}

// ------------------------------------------------------------------------------------------------
// Scenarios

fn argv(cmd: &str, dir: &Path, json: &Path) -> Vec<OsString> {
    let sib = |ext: &str| json.with_extension(ext).into_os_string();
    let (words, on_dir): (&[&str], bool) = match cmd {
        "report" => (&["report"], true),
        "report-json" => (&["report", "--json"], true),
        "check" => (&["check"], true),
        "check-json" => (&["check", "--json"], true),
        "inspect" => (&["inspect"], false),
        "inspect-json" => (&["inspect", "--json"], false),
        "check-one" => (&["check"], false),
        "diff" => (&["diff"], false),
        "diff-files" => return vec!["diff".into(), sib("record_input"), sib("record_output")],
        "replay" => (&["replay"], false),
        "replay-verify" => (&["replay", "--verify"], false),
        other => panic!("unknown command {other:?} in a scenario table"),
    };
    let mut a: Vec<OsString> = words.iter().map(OsString::from).collect();
    a.push(if on_dir { dir.into() } else { json.into() });
    a
}

/// Run every `command:expectation[:file]` of `spec` on `dir` / `json`; the failures, described.
fn expect_all(what: &str, base: &Path, dir: &Path, json: &Path, spec: &str) -> Vec<String> {
    let stem = json.file_stem().unwrap().to_string_lossy().into_owned();
    let mut failures = Vec::new();
    for entry in spec.split_whitespace() {
        let mut parts = entry.splitn(3, ':');
        let (cmd, want) = (parts.next().unwrap(), parts.next().expect("cmd:want"));
        let name = match parts.next() {
            Some(ext) if ext.starts_with('.') => format!("{stem}{ext}"),
            Some(n) => n.to_string(),
            None => String::new(),
        };
        let o = run(&argv(cmd, dir, json), base);
        let mut p = sanity(&o);
        let code = o.code();
        match want {
            "ok" if code != Some(0) => p.push("expected exit 0".into()),
            "fail" | "fail-out" if code == Some(0) => {
                p.push("expected a non-zero exit (the instance is unusable)".into())
            }
            "ok" | "fail" | "fail-out" | "any" => {}
            n if code != Some(n.parse().expect("an exit code")) => {
                p.push(format!("expected exit {n}"))
            }
            _ => {}
        }
        // Under --json an error is JSON on stdout, as every command's is.
        let in_stdout = cmd.starts_with("check") || cmd.ends_with("-json") || want == "fail-out";
        let hay = match in_stdout {
            true => o.stdout() + &o.stderr(),
            false => o.stderr(),
        };
        if !name.is_empty() && o.status.is_some() && !hay.contains(&name) {
            let place = if in_stdout { "the output" } else { "stderr" };
            p.push(format!("{place} does not name {name}"));
        }
        if !p.is_empty() {
            failures.push(format!("[{what}] {}\n{}", p.join("; "), o.describe()));
        }
    }
    failures
}

fn kernel_of(fixture: &str) -> &'static str {
    if fixture == RRTUI {
        "rr_stencil3d"
    } else {
        "rr_saxpy"
    }
}

/// A fresh copy of `fixture`, `damage(dir, descriptor)`, then every command of `spec`. (The
/// descriptor is found before the damage: a FIFO must never be read by the test itself.)
fn hostile(
    what: &str,
    fixture: &str,
    damage: impl FnOnce(&Path, &Path),
    spec: &str,
) -> Vec<String> {
    let (t, dir) = common::fixture_copy(fixture);
    let json = common::descriptor_of(&dir, kernel_of(fixture));
    damage(&dir, &json);
    expect_all(what, t.path(), &dir, &json, spec)
}

/// The failures of one test, all reported at the end.
#[derive(Default)]
struct Suite(Vec<String>);

impl Suite {
    /// A fresh copy of `fixture`, `damage(dir, descriptor)`, then every command of `spec`.
    fn on(&mut self, fixture: &str, what: &str, damage: impl FnOnce(&Path, &Path), spec: &str) {
        self.0.extend(hostile(what, fixture, damage, spec));
    }
    /// Every command of `spec` on an existing directory.
    fn at(&mut self, what: &str, base: &Path, dir: &Path, json: &Path, spec: &str) {
        self.0.extend(expect_all(what, base, dir, json, spec));
    }
    fn exact(&mut self, args: &[OsString], base: &Path, exact: &str) {
        self.0.extend(keeps_exact(args, base, exact));
    }
    fn fail(&mut self, problem: String) {
        self.0.push(problem);
    }
    fn finish(self) {
        let n = self.0.len();
        assert!(n == 0, "{n} failure(s):\n\n{}", self.0.join("\n\n"));
    }
}

/// `--json` output keeps the exact string (JSON-escaped on the wire, not made visible).
fn keeps_exact(args: &[OsString], base: &Path, exact: &str) -> Vec<String> {
    fn has(v: &Value, s: &str) -> bool {
        match v {
            Value::String(x) => x == s,
            Value::Array(a) => a.iter().any(|x| has(x, s)),
            Value::Object(o) => o.values().any(|x| has(x, s)),
            _ => false,
        }
    }
    let o = run(args, base);
    match serde_json::from_slice::<Value>(&o.out) {
        Ok(v) if has(&v, exact) => vec![],
        Ok(_) => vec![format!(
            "[--json] lost the exact string {exact:?}\n{}",
            o.describe()
        )],
        Err(e) => vec![format!("[--json] not JSON: {e}\n{}", o.describe())],
    }
}

// ------------------------------------------------------------------------------------------------
// Damage

fn fifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

fn dev_zero(p: &Path) {
    let _ = std::fs::remove_file(p);
    symlink("/dev/zero", p).unwrap();
}

fn socket(p: &Path) {
    let _ = std::fs::remove_file(p);
    std::os::unix::net::UnixListener::bind(p).unwrap(); // the socket file outlives the listener
}

fn patch_json(p: &Path, patch: Value) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    for (k, x) in patch.as_object().unwrap() {
        v[k] = x.clone();
    }
    std::fs::write(p, v.to_string()).unwrap();
}

fn truncate(p: &Path, by: usize) {
    let b = std::fs::read(p).unwrap();
    std::fs::write(p, &b[..b.len() - by]).unwrap();
}

fn no_report(dir: &Path) {
    std::fs::remove_file(dir.join("report.txt")).unwrap();
}

fn image_of(dir: &Path) -> PathBuf {
    dir.join("images/kernels-sm90.cubin")
}

fn outside(dir: &Path) -> PathBuf {
    dir.parent().unwrap().to_path_buf()
}

// ------------------------------------------------------------------------------------------------
// Special files

#[test]
fn fifos_are_refused_without_blocking() {
    let mut s = Suite::default();
    let ext = |e: &'static str| move |_: &Path, j: &Path| fifo(&j.with_extension(e));
    #[rustfmt::skip]
    let specs = [
        ("json", "report:any inspect:fail:.json inspect-json:fail:.json check:fail:.json check-one:fail:.json diff:fail:.json replay:fail:.json"),
        ("globals", "report:any inspect:fail:.globals inspect-json:fail:.globals check:fail:.globals check-one:fail:.globals diff:any replay:fail"),
        ("image", "report:any inspect:fail:.image inspect-json:fail:.image check:fail:.image check-one:fail:.image diff:any replay:fail"),
        ("record_input", "inspect:any check:fail:.record_input diff:fail:.record_input diff-files:fail:.record_input replay:fail:.record_input"),
        ("record_output", "inspect:any check:fail:.record_output diff:fail:.record_output diff-files:fail:.record_output replay-verify:fail:.record_output"),
        ("replay_output", "diff:fail:.replay_output check:any inspect:any"),
    ];
    for (e, spec) in specs {
        s.on(LLVM, &format!("FIFO .{e}"), ext(e), spec);
    }
    let damage = |d: &Path, j: &Path| {
        no_report(d);
        fifo(j)
    };
    let spec = "report:fail:.json report-json:fail:.json check:fail:.json";
    s.on(LLVM, "FIFO .json, no report file", damage, spec);
    let damage = |d: &Path, _: &Path| fifo(&d.join("report.txt"));
    s.on(
        LLVM,
        "FIFO report file",
        damage,
        "report:any report-json:any check:any",
    );
    let damage = |d: &Path, _: &Path| fifo(&image_of(d));
    let spec = "inspect:fail:kernels-sm90.cubin check:fail:kernels-sm90.cubin replay:fail";
    s.on(RRTUI, "FIFO as the ImageFile", damage, spec);
    s.finish();
}

/// Legacy records (LLVM 16–22) are named by kernel and have their own snapshot and globals
/// files; each is refused the same way, and a stray `.json` that is a FIFO is never opened for
/// a blocking read while the directory is scanned.
#[test]
fn legacy_files_are_refused_without_blocking() {
    const LLVM18: &str = "llvm18-two-kernels";
    let mut s = Suite::default();
    let ext = |e: &'static str| move |_: &Path, j: &Path| fifo(&j.with_extension(e));
    #[rustfmt::skip]
    let specs = [
        ("json", "report:fail:.json inspect:fail:.json check:fail:.json diff:fail:.json replay:fail:.json"),
        ("memory", "report:ok inspect:any check:fail:.memory diff:fail:.memory replay:fail:.memory"),
        ("original.output", "inspect:any check:fail:.original.output diff:fail:.original.output replay-verify:fail:.original.output"),
        ("globals", "inspect:fail:.globals check:fail:.globals replay:fail:.globals"),
        ("image", "inspect:fail:.image check:fail:.image replay:fail"),
        ("replay.output", "diff:fail:.replay.output check:any inspect:any"),
    ];
    for (e, spec) in specs {
        s.on(LLVM18, &format!("FIFO legacy .{e}"), ext(e), spec);
    }
    let damage = |d: &Path, _: &Path| fifo(&d.join("stray.json"));
    s.on(LLVM18, "FIFO stray .json", damage, "report:ok check:ok");
    let damage = |_: &Path, j: &Path| dev_zero(&j.with_extension("globals"));
    s.on(
        LLVM18,
        "/dev/zero as legacy .globals",
        damage,
        "inspect:fail:.globals check:fail:.globals",
    );
    let sparse = |p: PathBuf, len: u64| std::fs::File::create(p).unwrap().set_len(len).unwrap();
    let damage = |_: &Path, j: &Path| sparse(j.with_extension("globals"), 2 << 30);
    s.on(
        LLVM18,
        "sparse 2 GiB legacy .globals",
        damage,
        "inspect:fail:.globals check:fail:.globals",
    );
    let damage = |_: &Path, j: &Path| {
        patch_json(
            j,
            json!({"DeviceMemorySize": u64::MAX, "BumpAllocVAStart": -1}),
        )
    };
    s.on(
        LLVM18,
        "overflowing DeviceMemorySize",
        damage,
        "report:fail:.json inspect:fail:.json check:fail:.json replay:fail:.json",
    );
    let damage = |_: &Path, j: &Path| {
        patch_json(
            j,
            json!({"ArgPtrs": vec![u64::MAX; 4096], "ArgOffsets": vec![i64::MIN; 4096], "NumArgs": 4096}),
        )
    };
    s.on(
        LLVM18,
        "wrapping arguments",
        damage,
        "inspect:ok check:any diff:1", // diff exits 1 as cmp: input and output differ
    );
    s.finish();
}

#[test]
fn devices_sockets_and_oversized_files_are_refused_without_reading() {
    let mut s = Suite::default();
    let damage = |d: &Path, j: &Path| {
        no_report(d);
        dev_zero(j)
    };
    let spec = "report:fail:.json inspect:fail:.json check:fail:.json check-one:fail:.json diff:fail:.json replay:fail:.json";
    s.on(LLVM, "/dev/zero as .json, no report file", damage, spec);
    for e in ["globals", "image"] {
        let spec = format!("inspect:fail:.{e} check:fail:.{e} replay:fail");
        let damage = move |_: &Path, j: &Path| dev_zero(&j.with_extension(e));
        s.on(LLVM, &format!("/dev/zero as .{e}"), damage, &spec);
    }
    let damage = |_: &Path, j: &Path| dev_zero(&j.with_extension("record_input"));
    let spec = "inspect:any check:fail:.record_input diff:fail:.record_input diff-files:fail:.record_input replay:fail:.record_input";
    s.on(LLVM, "/dev/zero as .record_input", damage, spec);
    let damage = |d: &Path, j: &Path| {
        no_report(d);
        socket(j)
    };
    let spec = "report:fail:.json inspect:fail:.json check:fail:.json diff:fail:.json";
    s.on(LLVM, "socket as .json, no report file", damage, spec);
    let damage = |_: &Path, j: &Path| socket(&j.with_extension("globals"));
    let spec = "inspect:fail:.globals check:fail:.globals";
    s.on(LLVM, "socket as .globals", damage, spec);
    let sparse = |p: PathBuf, len: u64| std::fs::File::create(p).unwrap().set_len(len).unwrap();
    let damage = |_: &Path, j: &Path| sparse(j.to_path_buf(), 1 << 30);
    let spec = "inspect:fail:.json check:fail:.json diff:fail:.json";
    s.on(LLVM, "sparse 1 GiB .json", damage, spec);
    let damage = |_: &Path, j: &Path| sparse(j.with_extension("globals"), 2 << 30);
    let spec = "inspect:fail:.globals check:fail:.globals";
    s.on(LLVM, "sparse 2 GiB .globals", damage, spec);
    s.finish();
}

// ------------------------------------------------------------------------------------------------
// Paths from file contents, links

#[test]
fn image_file_paths_stay_inside_the_record_directory() {
    let mut s = Suite::default();
    let damage = |d: &Path, j: &Path| {
        let out = outside(d).join("outside.cubin");
        std::fs::copy(image_of(d), &out).unwrap();
        symlink(&out, d.join("images/evil.cubin")).unwrap();
        patch_json(j, json!({"ImageFile": "images/evil.cubin"}));
    };
    let spec = "report:any inspect:fail:evil.cubin inspect-json:fail:evil.cubin check:fail:evil.cubin replay:fail:evil.cubin diff:any";
    s.on(RRTUI, "ImageFile: a link outside", damage, spec);
    let damage = |d: &Path, _: &Path| {
        std::fs::rename(d.join("images"), outside(d).join("images")).unwrap();
        symlink(outside(d).join("images"), d.join("images")).unwrap();
    };
    let spec = "inspect:fail:kernels-sm90.cubin check:fail:kernels-sm90.cubin replay:fail:kernels-sm90.cubin";
    s.on(
        RRTUI,
        "ImageFile: its directory links outside",
        damage,
        spec,
    );
    for bad in [
        "../outside.cubin",
        "images/../../outside.cubin",
        "/etc/passwd",
    ] {
        let damage = |d: &Path, j: &Path| {
            std::fs::copy(image_of(d), outside(d).join("outside.cubin")).unwrap();
            patch_json(j, json!({ "ImageFile": bad }));
        };
        let spec = "inspect:fail:.json check:fail:.json diff:fail:.json replay:fail:.json";
        s.on(RRTUI, &format!("ImageFile {bad:?}"), damage, spec);
    }
    s.finish();
}

#[test]
fn snapshots_linked_from_another_disk_are_warnings() {
    let mut s = Suite::default();
    let damage = |d: &Path, j: &Path| {
        let other = outside(d).join("other-disk");
        std::fs::create_dir(&other).unwrap();
        for e in ["record_input", "record_output"] {
            let to = other.join(j.with_extension(e).file_name().unwrap());
            std::fs::rename(j.with_extension(e), &to).unwrap();
            symlink(&to, j.with_extension(e)).unwrap();
        }
    };
    // `diff` reads through the links: exit 1, as `cmp`, since saxpy's output differs from its input.
    let spec = "check:ok:.record_input check-one:ok:.record_output inspect:ok diff:1 report:ok";
    s.on(LLVM, "snapshots linked from outside", damage, spec);
    s.finish();
}

#[test]
fn exports_never_write_through_links() {
    let mut s = Suite::default();
    let (t, dir) = common::fixture_copy(LLVM);
    let j = common::descriptor_of(&dir, "rr_saxpy");
    let (victim, target) = (t.path().join("victim"), t.path().join("link-target"));
    std::fs::write(&victim, "keep").unwrap();
    let (planted, dangling) = (t.path().join("planted.csv"), t.path().join("dangling.csv"));
    symlink(&victim, &planted).unwrap();
    symlink(&target, &dangling).unwrap();
    for link in [&planted, &dangling] {
        let mut args = argv("diff-files", &dir, &j);
        args.extend(["--export-csv".into(), link.into()]);
        let o = run(&args, t.path());
        let p = sanity(&o);
        if !p.is_empty() {
            s.fail(format!("{}\n{}", p.join("; "), o.describe()));
        }
    }
    let kept = std::fs::read_to_string(&victim).unwrap();
    if kept != "keep" {
        s.fail(format!(
            "diff --export-csv LINK wrote through the link: its target now holds {kept:?}"
        ));
    }
    if target.exists() {
        s.fail("diff --export-csv DANGLING-LINK created the link's target".into());
    }
    s.finish();
}

// ------------------------------------------------------------------------------------------------
// Strings from files

#[test]
fn escape_sequences_in_kernel_names_are_made_visible() {
    let mut s = Suite::default();
    let evil = |_: &Path, j: &Path| patch_json(j, json!({ "Name": EVIL_NAME }));
    let spec = "check:fail:.json check-json:any inspect:ok report:any replay:fail";
    s.on(LLVM, "ESC in Name, report file present", evil, spec);
    let (t, dir) = common::fixture_copy(LLVM);
    let j = common::descriptor_of(&dir, "rr_saxpy");
    no_report(&dir);
    evil(&dir, &j);
    let spec = "report:ok report-json:ok inspect:ok inspect-json:ok check:any diff:any replay:fail";
    s.at("ESC in Name, no report file", t.path(), &dir, &j, spec);
    s.exact(&argv("inspect-json", &dir, &j), t.path(), EVIL_NAME);
    s.exact(&argv("report-json", &dir, &j), t.path(), EVIL_NAME);
    let damage = |d: &Path, _: &Path| {
        let r = std::fs::read_to_string(d.join("report.txt")).unwrap();
        let r = r.replace(", rr_saxpy, 20813", ", rr_saxpy\u{1b}]0;pwned\u{7}, 20813");
        let r = r.replace("12965991079383468724_4571022325904014944", "1_2\u{1b}[2J\r");
        std::fs::write(d.join("report.txt"), r).unwrap();
    };
    let spec = "report:any report-json:any check:fail:report.txt";
    s.on(LLVM, "ESC in report rows", damage, spec);
    s.finish();
}

#[test]
fn control_characters_in_directory_and_file_names_are_made_visible() {
    let mut s = Suite::default();
    // A directory named with ESC and BEL; a truncated output makes commands print its paths.
    let (t, dir) = common::fixture_copy(LLVM);
    let j = common::descriptor_of(&dir, "rr_saxpy");
    let evil_dir = t.path().join("rec\u{1b}]0;pwned\u{7}\u{1b}[2J");
    std::fs::rename(&dir, &evil_dir).unwrap();
    let j = evil_dir.join(j.file_name().unwrap());
    truncate(&j.with_extension("record_output"), 16);
    let spec = "report:ok report-json:ok inspect:ok check:fail:.record_output check-json:fail:.record_output diff:any diff-files:1 replay:fail";
    s.at("ESC in the directory name", t.path(), &evil_dir, &j, spec);
    let real = std::fs::canonicalize(&evil_dir).unwrap();
    s.exact(
        &argv("report-json", &evil_dir, &j),
        t.path(),
        &real.to_string_lossy(),
    );
    // An instance whose files are named with a newline (and lack a .globals): whatever names
    // them, nothing may start a line with the part after the newline.
    let (t, dir) = common::fixture_copy(LLVM);
    let j = common::descriptor_of(&dir, "rr_saxpy");
    let stem = format!("x\n{FORGED}: error: pwned");
    for e in ["json", "record_input", "record_output", "image"] {
        std::fs::copy(j.with_extension(e), dir.join(format!("{stem}.{e}"))).unwrap();
    }
    let nj = dir.join(format!("{stem}.json"));
    let spec = "check-one:fail check:any report:any inspect:fail diff:any replay:fail";
    s.at("newline in a file name", t.path(), &dir, &nj, spec);
    s.exact(
        &argv("inspect-json", &dir, &nj),
        t.path(),
        &nj.to_string_lossy(),
    );
    let args = ["check".into(), "--json".into(), nj.clone().into()];
    s.exact(
        &args,
        t.path(),
        &nj.with_extension("globals").to_string_lossy(),
    );
    s.finish();
}

// ------------------------------------------------------------------------------------------------
// Numbers and counts

#[test]
fn overflowing_numbers_are_errors_not_panics() {
    let mut s = Suite::default();
    let seg =
        |addr: i64, size: i64, offset: i64| json!([{"Addr": addr, "Size": size, "Offset": offset}]);
    let base = 140055066705920_i64; // the fixture's first segment
    #[rustfmt::skip]
    let cases = [
        (RRTUI, json!({"ParamLayout": [[u64::MAX, 8]], "NumArgs": 1})),
        (RRTUI, json!({"ParamLayout": [[8, u64::MAX]], "NumArgs": 1})),
        (RRTUI, json!({"ParamLayout": [[1u64 << 32, 8]], "NumArgs": 1})),
        (RRTUI, json!({"Segments": seg(base, i64::MAX, 0)})),
        (RRTUI, json!({"Segments": seg(-4096, i64::MAX - 16, 0)})),
        (RRTUI, json!({"Segments": seg(base, 16, i64::MAX)})),
        (RRTUI, json!({"NumArgs": u32::MAX, "Grid": [1u64 << 32, 1, 1]})),
        (LLVM, json!({"VAllocAddr": -1})),
        (LLVM, json!({"VAllocAddr": i64::MAX, "VAllocSize": i64::MAX})),
        (LLVM, json!({"NumArgs": u32::MAX})),
        (LLVM, json!({"NumArgs": 1u64 << 53})),
        (LLVM, json!({"NumTeams": 1u64 << 40})),
    ];
    let unusable = "inspect:fail:.json inspect-json:fail:.json check:fail:.json diff:fail:.json replay:fail:.json";
    for (fixture, patch) in cases {
        let what = format!("{fixture} {patch}");
        s.on(fixture, &what, |_, j| patch_json(j, patch), unusable);
    }
    // A valid region ending at the top of the address space, with a snapshot longer than it.
    let top = json!({"VAllocAddr": -4096, "VAllocSize": 4095, "ArgPtrs": [-4096, -16, 0, 0, -1]});
    let spec = "inspect:any check:fail:.record_input diff:any replay:fail:.record_input";
    s.on(LLVM, "region at the top", |_, j| patch_json(j, top), spec);
    s.finish();
}

#[test]
fn a_globals_count_of_four_billion_in_twenty_bytes() {
    let mut s = Suite::default();
    let damage = |_: &Path, j: &Path| {
        let mut b = 4_000_000_000u32.to_le_bytes().to_vec();
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(b"a\0\xff\xff");
        assert_eq!(b.len(), 20);
        std::fs::write(j.with_extension("globals"), b).unwrap();
    };
    let spec = "inspect:fail:.globals inspect-json:fail:.globals check:fail:.globals report:any";
    s.on(LLVM, "NumGlobals 4e9 in 20 bytes", damage, spec);
    s.finish();
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// 300 000 LLVM arguments, all pointing into the recorded region.
fn many_arguments(j: &Path) {
    let len = std::fs::metadata(j.with_extension("record_input"))
        .unwrap()
        .len() as i64;
    let base = read_json(j)["VAllocAddr"].as_i64().unwrap();
    let ptrs: Vec<i64> = (0..300_000i64).map(|i| base + (i * 8) % len).collect();
    let patch = json!({"ArgOffsets": vec![0; ptrs.len()], "NumArgs": ptrs.len(), "ArgPtrs": ptrs});
    patch_json(j, patch);
}

/// 100 000 rr-tui segments of 16 bytes, 16 bytes apart; snapshots to match.
fn many_segments(j: &Path) {
    let n = 100_000i64;
    let base = read_json(j)["VAllocAddr"].as_i64().unwrap();
    let segs: Vec<Value> = (0..n)
        .map(|i| json!({"Addr": base + 32 * i, "Size": 16, "Offset": 16 * i}))
        .collect();
    patch_json(j, json!({"Segments": segs, "VAllocSize": 32 * n}));
    let input: Vec<u8> = (0..16 * n).map(|i| i as u8).collect();
    let output: Vec<u8> = input.iter().map(|b| b.wrapping_mul(3)).collect();
    std::fs::write(j.with_extension("record_input"), input).unwrap();
    std::fs::write(j.with_extension("record_output"), output).unwrap();
}

#[test]
fn huge_argument_and_segment_counts_finish_in_seconds() {
    const FEW_SECONDS: Duration = Duration::from_secs(10);
    let mut s = Suite::default();
    type Damage = fn(&Path);
    let cases: [(&str, &str, Damage); 2] = [
        ("300 000 arguments", LLVM, many_arguments),
        ("100 000 segments", RRTUI, many_segments),
    ];
    for (what, fixture, damage) in cases {
        let (t, dir) = common::fixture_copy(fixture);
        let j = common::descriptor_of(&dir, kernel_of(fixture));
        damage(&j);
        for cmd in [
            "inspect",
            "inspect-json",
            "check",
            "report",
            "diff",
            "replay",
        ] {
            let o = run(&argv(cmd, &dir, &j), t.path());
            let mut p = sanity(&o);
            if o.took > FEW_SECONDS {
                p.push(format!(
                    "took {:.1} s: not O(n log n)?",
                    o.took.as_secs_f64()
                ));
            }
            if !matches!(cmd, "diff" | "replay") && o.code() != Some(0) {
                p.push("expected exit 0".into());
            }
            if !p.is_empty() {
                s.fail(format!("[{what}] {}\n{}", p.join("; "), o.describe()));
            }
        }
    }
    s.finish();
}

#[test]
fn truncated_snapshots_in_diff() {
    let mut s = Suite::default();
    let damage = |_: &Path, j: &Path| truncate(&j.with_extension("record_output"), 100);
    for fixture in [LLVM, RRTUI] {
        let spec = "diff:fail-out:.record_output check:fail:.record_output diff-files:1";
        s.on(
            fixture,
            &format!("{fixture}: .record_output 100 bytes short"),
            damage,
            spec,
        );
    }
    let damage = |_: &Path, j: &Path| truncate(&j.with_extension("record_input"), 300);
    let spec = "diff:fail-out:.record_input check:fail:.record_input inspect:any replay:fail:.record_input";
    s.on(RRTUI, ".record_input short of its segments", damage, spec);
    s.finish();
}

// ------------------------------------------------------------------------------------------------
// A closed standard output

#[test]
fn a_closed_stdout_ends_commands_quietly() {
    let mut s = Suite::default();
    // Outputs far larger than a pipe buffer, so writes after the reader left must fail.
    let t = tempfile::tempdir().unwrap();
    let many = t.path().join("many");
    std::fs::create_dir(&many).unwrap();
    let text = std::fs::read(common::descriptor_of(&common::fixture(LLVM), "rr_saxpy")).unwrap();
    for i in 1..=3000 {
        std::fs::write(many.join(format!("{i}_{i}.json")), &text).unwrap();
    }
    let (_t2, dir) = common::fixture_copy(LLVM);
    let j = common::descriptor_of(&dir, "rr_saxpy");
    many_arguments(&j);
    let runs = [
        ("report", &many),
        ("check", &many),
        ("inspect", &dir),
        ("inspect-json", &dir),
        ("diff", &dir),
    ];
    for (cmd, on) in runs {
        let o = run_with(&argv(cmd, on, &j), t.path(), true);
        let mut p = Vec::new();
        match o.status.map(|s| (s.code(), s.signal())) {
            None => p.push("hang".to_string()),
            Some((Some(101), _)) => p.push("exit 101 (panic)".into()),
            Some((None, sig)) if sig != Some(13) => p.push(format!("killed by signal {sig:?}")),
            // Output nobody read is no success (a verdict among it least of all).
            Some((Some(0), _)) => p.push("exit 0 although its reader left".into()),
            Some(_) => {} // death by SIGPIPE is quiet too
        }
        let stderr = o.stderr();
        if stderr.contains("panicked") {
            p.push("stderr says `panicked`".into());
        }
        if stderr.contains("Broken pipe") || stderr.contains("os error 32") {
            p.push("not quiet: stderr complains about the broken pipe".into());
        }
        if !p.is_empty() {
            s.fail(format!(
                "[closed stdout] {}\n{}",
                p.join("; "),
                o.describe()
            ));
        }
    }
    s.finish();
}

/// `diff A B | true`: the reader leaves before the verdict is written; the exit status must not
/// turn "different" into "equal" (cmp exits 141 here).
#[test]
fn a_closed_pipe_never_reads_as_equal() {
    let (_t, dir) = common::fixture_copy(LLVM);
    let j = common::descriptor_of(&dir, "rr_saxpy");
    for args in [
        vec!["diff".into(), j.clone().into_os_string()],
        argv("diff-files", &dir, &j),
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let status = (o.status.code(), o.status.signal());
        assert!(
            matches!(status, (Some(141), _) | (None, Some(13))),
            "{}: {status:?} with a closed pipe; stderr: {}",
            show(&args, dir.as_path()),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

// ------------------------------------------------------------------------------------------------
// The explorer in a terminal (tmux)

struct Tmux(String);

fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', r"'\''"))
}

impl Tmux {
    /// The explorer on `dir` in a detached tmux session; `None` (skip) without tmux outside CI.
    fn start(tag: &str, dir: &Path, width: u16) -> Option<Tmux> {
        Self::start_with(tag, dir, width, "", true)
    }
    /// As [`Tmux::start`], after the shell words `prelude`; without `exec` the shell stays the
    /// pane's process and the explorer its child (as under a `bash -c` wrapper).
    fn start_with(tag: &str, dir: &Path, width: u16, prelude: &str, exec: bool) -> Option<Tmux> {
        if !Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            panic!("tmux is not installed (apt-get install tmux)");
        }
        let name = format!("rr-tui-hostile-{tag}-{}", std::process::id());
        let cmd = format!(
            "{prelude}export NO_COLOR=1; ulimit -v 4000000; {}{} {}; echo ended with $?; sleep 30",
            if exec { "exec " } else { "" },
            sh_quote(Path::new(BIN)),
            sh_quote(dir)
        );
        let w = width.to_string();
        let args = ["new-session", "-d", "-s", &name, "-x", &w, "-y", "36", &cmd];
        // Tests start sessions at once: one may find the tmux server still starting (seen under
        // load in CI), so a failed start is tried again before it fails the test.
        let mut said = String::new();
        for attempt in 0..5 {
            let out = Command::new("tmux").args(args).output().unwrap();
            if out.status.success() {
                return Some(Tmux(name));
            }
            said = String::from_utf8_lossy(&out.stderr).into_owned();
            std::thread::sleep(Duration::from_millis(200 << attempt));
        }
        panic!("tmux new-session failed 5 times: {said}")
    }
    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").args(args).output().expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn keys(&self, keys: &str) {
        self.tmux(&["send-keys", "-t", &self.0, keys]);
    }
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.tmux(&["capture-pane", "-p", "-t", &self.0]);
            if s.contains(text) {
                return s;
            }
            let waited = start.elapsed();
            assert!(
                waited < Duration::from_secs(15),
                "explorer: no {text:?} after {waited:?}; screen:\n{s}"
            );
            sleep(Duration::from_millis(50));
        }
    }
    fn pid(&self) -> u32 {
        let s = self.tmux(&["list-panes", "-t", &self.0, "-F", "#{pane_pid}"]);
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("pane pid: {s:?}"))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .status();
    }
}

/// Whether `pid` is gone (or a zombie) within 5 s; if not, it is killed (it is ours).
fn gone_within_5s(pid: u32) -> bool {
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with(['Z', 'X'])
            })
            .unwrap_or(false)
    };
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if !alive() {
            return true;
        }
        sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    false
}

#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explorer_shows_a_directory_whose_descriptor_is_a_fifo() {
    let (_t, dir) = common::fixture_copy(LLVM);
    fifo(&common::descriptor_of(&dir, "rr_saxpy")); // the first row of the report
    let Some(s) = Tmux::start("fifo", &dir, 130) else {
        return;
    };
    s.wait_for("instance(s)");
    s.wait_for("bad file");
    let pid = s.pid();
    s.keys("q");
    assert!(gone_within_5s(pid), "the explorer did not quit on q");
}

#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explorer_shows_escape_sequences_visibly() {
    let (t, dir) = common::fixture_copy(LLVM);
    no_report(&dir);
    patch_json(
        &common::descriptor_of(&dir, "rr_saxpy"),
        json!({ "Name": EVIL_NAME }),
    );
    let evil_dir = t.path().join("rec\u{1b}]2;dir-pwned\u{7}");
    std::fs::rename(&dir, &evil_dir).unwrap();
    let Some(s) = Tmux::start("esc", &evil_dir, 250) else {
        return;
    };
    let screen = s.wait_for("instance(s)");
    let title = s.tmux(&["display-message", "-p", "-t", &s.0, "#{pane_title}"]);
    assert!(
        !title.contains("pwned"),
        "a name retitled the terminal: {title:?}\nscreen:\n{screen}"
    );
    s.wait_for("\\x1b]0;pwned");
}

#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explorer_with_300_000_arguments_does_not_freeze() {
    let (_t, dir) = common::fixture_copy(LLVM);
    many_arguments(&common::descriptor_of(&dir, "rr_saxpy")); // the first row of the report
    let Some(s) = Tmux::start("args", &dir, 130) else {
        return;
    };
    s.wait_for("instance(s)");
    s.keys("2");
    s.wait_for("300000");
    s.keys("1");
    s.keys("Enter");
    s.wait_for("recorded input → recorded output");
    s.wait_for("differing range");
    s.keys("n");
    s.wait_for("+0x"); // margin labels: `arg7+0x0`
    let pid = s.pid();
    s.keys("q");
    assert!(gone_within_5s(pid), "the explorer did not quit on q");
}

#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explorer_ends_on_hangup() {
    let Some(s) = Tmux::start("hup", &common::fixture(LLVM), 130) else {
        return;
    };
    s.wait_for("instance(s)");
    let pid = s.pid();
    s.tmux(&["kill-session", "-t", &s.0]); // SIGHUP to the pane's processes
    assert!(
        gone_within_5s(pid),
        "rr-tui (pid {pid}) still running 5 s after a hang-up"
    );
}

/// The explorer's session directories under `tmp` (`rr-tui-session-*`), with their modes.
fn session_dirs(tmp: &Path) -> Vec<(PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("rr-tui-session-")
        })
        .map(|e| (e.path(), e.metadata().unwrap().permissions().mode() & 0o777))
        .collect()
}

/// The terminal goes away under the explorer (its shell killed with SIGKILL, the pane closed):
/// the explorer must end rather than spin re-parented to init, and remove its session directory
/// (created 0700: replays write there).
#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explorer_ends_when_its_terminal_goes_away_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let prelude = format!("export TMPDIR={}; ", sh_quote(tmp.path()));
    let Some(s) = Tmux::start_with("gone", &common::fixture(LLVM), 130, &prelude, false) else {
        return;
    };
    s.wait_for("instance(s)");
    let sessions = session_dirs(tmp.path());
    assert!(
        sessions.len() == 1 && sessions[0].1 == 0o700,
        "session directories: {sessions:?}"
    );
    let shell = s.pid();
    let children =
        std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap_or_default();
    let explorer: u32 = children
        .trim()
        .parse()
        .expect("the explorer is the shell's child");
    let _ = Command::new("kill")
        .args(["-KILL", &shell.to_string()])
        .status();
    assert!(
        gone_within_5s(explorer),
        "rr-tui (pid {explorer}) still running 5 s after its terminal went away"
    );
    assert_eq!(
        session_dirs(tmp.path()),
        vec![],
        "session directory left behind"
    );
}

/// `tmux kill-server` hangs up every pane: the session directory goes with the explorer.
#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explorer_removes_its_session_directory_on_hangup() {
    let tmp = tempfile::tempdir().unwrap();
    let prelude = format!("export TMPDIR={}; ", sh_quote(tmp.path()));
    let Some(s) = Tmux::start_with("hupdir", &common::fixture(LLVM), 130, &prelude, true) else {
        return;
    };
    s.wait_for("instance(s)");
    let pid = s.pid();
    s.tmux(&["kill-session", "-t", &s.0]);
    assert!(gone_within_5s(pid), "rr-tui still running after a hang-up");
    assert_eq!(
        session_dirs(tmp.path()),
        vec![],
        "session directory left behind"
    );
}

/// SIGTERM ends the explorer, which exits as killed by it would (128 + 15), terminal restored.
#[test]
#[cfg_attr(rr_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]
fn explorer_honours_sigterm() {
    let Some(s) = Tmux::start_with("term", &common::fixture(LLVM), 130, "", false) else {
        return;
    };
    s.wait_for("instance(s)");
    let shell = s.pid();
    let out = Command::new("pgrep")
        .args(["-P", &shell.to_string()])
        .output()
        .expect("pgrep runs");
    let pid: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the explorer is the shell's child");
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    assert!(
        gone_within_5s(pid),
        "rr-tui (pid {pid}) still running 5 s after SIGTERM"
    );
    s.wait_for("ended with 143");
}

/// `diff A.json B.json` on a global named with the longest name a symbol may have (16 KiB):
/// aligned output must not pad the column to its length (past u16::MAX, a panic in `format!`).
/// One byte longer, and the `.globals` is refused, named on the line that says so.
#[test]
fn a_global_with_a_huge_name_is_diffed() {
    let (_t, dir) = common::fixture_copy(LLVM);
    let x = dir.join("8683979482637550046_13526365365894479501.json");
    let y = dir.join("8683979482637550046_6547468769535274944.json");
    let write = |name: &str| {
        for (json, byte) in [(&x, 1u8), (&y, 2u8)] {
            let bytes = rr_format::globals::Globals::encode(&[(name, &[byte][..])]);
            std::fs::write(json.with_extension("globals"), bytes).unwrap();
        }
    };
    let diff = || {
        run(
            &["diff".into(), x.clone().into(), y.clone().into()],
            dir.as_path(),
        )
    };
    write(&"g".repeat(rr_format::limits::MAX_SYMBOL_NAME_BYTES));
    let o = diff();
    let mut p = sanity(&o);
    if o.status.and_then(|s| s.code()) != Some(1) {
        p.push("not exit 1 (different)".into());
    }
    if !o.stdout().contains("globals: 1 of 1 differ") {
        p.push("no globals line".into());
    }
    assert!(p.is_empty(), "{}\n{}", p.join("; "), o.describe());
    write(&"g".repeat(rr_format::limits::MAX_SYMBOL_NAME_BYTES + 1));
    let o = diff();
    let globals = x.with_extension("globals").display().to_string();
    let said = o
        .stdout()
        .lines()
        .any(|l| l.contains(&format!("unreadable: {globals}: the name of global #0")));
    assert!(sanity(&o).is_empty() && said, "{}", o.describe());
}

/// A large JSON file that is no descriptor (a data file kept beside the records) is looked at,
/// not parsed into memory: `report` and `check` stay within 500 MB of address space (a whole
/// parse took about eleven times the file's size).
#[test]
fn a_large_json_that_is_no_descriptor_costs_little() {
    let (_t, dir) = common::fixture_copy(LLVM);
    let mut text = String::from("{");
    for i in 0..2_000_000 {
        text.push_str(&format!("\"k{i}\":[{i},{i}],"));
    }
    text.push_str("\"Other\":1}");
    std::fs::write(dir.join("data.json"), text).unwrap();
    for cmd in ["report", "check"] {
        let status = Command::new("sh")
            .arg("-c")
            .arg(r#"ulimit -v 500000; exec "$0" "$@" >/dev/null 2>&1"#)
            .arg(BIN)
            .arg(cmd)
            .arg(&dir)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{cmd}: {status:?}");
    }
}

// ------------------------------------------------------------------------------------------------
// Round 3: directories built to cost time (quadratic merges, stray files, stray blobs) and
// values past what a JSON reader or a replay can hold.

/// `args` must end within the hard timeout, pass the sanity rules and satisfy `check`.
fn must(
    args: &[OsString],
    base: &Path,
    check: impl Fn(&Outcome) -> bool,
    want: &str,
) -> Vec<String> {
    let o = run(args, base);
    let mut p = sanity(&o);
    if o.status.is_some() && !check(&o) {
        p.push(format!("expected {want}"));
    }
    p.into_iter()
        .map(|why| format!("{why}\n{}", o.describe()))
        .collect()
}

fn os(words: &[&str], path: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = words.iter().map(OsString::from).collect();
    v.push(path.as_os_str().to_owned());
    v
}

#[test]
fn recordings_built_to_cost_time_finish_quickly() {
    let t = tempfile::tempdir().unwrap();
    let base = t.path();
    let mut problems = Vec::new();
    // 300 per-process recordings of 999 distinct reasons each (the most a report trailer holds): merged in one pass, and listed up
    // to a bound; counts that would overflow a u64 saturate, and come as strings in JSON.
    let many = base.join("many");
    common::copy_dir(&common::fixture(RRTUI), &many);
    for i in 0..300 {
        let d = many.join(format!("pid-{i}"));
        std::fs::create_dir(&d).unwrap();
        let mut r = String::from("=== Kernel Record Report ===\nDirectory: /x\nTotal Instances: 0\nJSON Filename, Kernel Name, Time (ns), Occurrences:\n=== End Kernel Record Report ===\n");
        r.push_str("rr-tui: launches: 18446744073709551615 seen, 0 selected, 0 recorded\n");
        r.push_str("rr-tui: not recorded: 18446744073709551615 not selected\n");
        for j in 0..998 {
            r.push_str(&format!("rr-tui: not recorded: 1 r-{i}-{j}\n"));
        }
        std::fs::write(d.join("report.txt"), r).unwrap();
    }
    problems.extend(must(
        &os(&["report"], &many),
        base,
        |o| o.stdout().contains("other reasons"),
        "the reasons bounded",
    ));
    problems.extend(must(
        &os(&["report", "--json"], &many),
        base,
        |o| {
            let v: Value = serde_json::from_str(&o.stdout()).unwrap_or_default();
            let max = "18446744073709551615";
            v["recorder"]["seen"] == max && v["recorder"]["not_recorded"][0][0] == max
        },
        "saturated counts as exact strings",
    ));
    // Hundreds of stray sparse files: the report search reads a bounded number of bytes.
    let stray = base.join("stray");
    common::copy_dir(&common::fixture("rrtui-v2-stencil3d"), &stray);
    for i in 0..300 {
        let f = std::fs::File::create(stray.join(format!("log{i}.txt"))).unwrap();
        f.set_len(64 << 20).unwrap();
    }
    for cmd in ["report", "check"] {
        problems.extend(must(
            &os(&[cmd], &stray),
            base,
            |o| o.status.is_some(),
            "an end",
        ));
    }
    // blobs/: a 200 GiB sparse blob no instance uses is named, not hashed; a link is refused
    // without being followed.
    let blobs = base.join("blobs");
    common::copy_dir(&common::fixture("rrtui-v2-stencil3d"), &blobs);
    let stray_blob = blobs.join("blobs").join("0".repeat(32));
    std::fs::File::create(&stray_blob)
        .unwrap()
        .set_len(200 << 30)
        .unwrap();
    std::fs::write(base.join("elsewhere"), b"not a blob").unwrap();
    symlink(
        base.join("elsewhere"),
        blobs.join("blobs").join("1".repeat(32)),
    )
    .unwrap();
    problems.extend(must(
        &os(&["check"], &blobs),
        base,
        |o| {
            let out = o.stdout();
            out.contains("a blob no instance uses (not read)")
                && out.contains("is a link")
                && !out.contains("other bytes")
        },
        "the stray blob named, the link an error, neither read",
    ));
    // A descriptor that cannot be read is the error; its blobs are not called unused.
    let unread = base.join("unread");
    common::copy_dir(&common::fixture("rrtui-v2-stencil3d"), &unread);
    for e in std::fs::read_dir(&unread).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            std::fs::write(&p, b"{").unwrap();
        }
    }
    problems.extend(must(
        &os(&["check"], &unread),
        base,
        |o| o.code() == Some(1) && !o.stdout().contains("no instance uses"),
        "the descriptors' errors alone",
    ));
    // A used blob grown to 200 GiB of holes: its size is the error; it is not hashed.
    let grown = base.join("grown");
    common::copy_dir(&common::fixture("rrtui-v2-stencil3d"), &grown);
    let used = std::fs::read_dir(grown.join("blobs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    std::fs::File::options()
        .write(true)
        .open(&used)
        .unwrap()
        .set_len(200 << 30)
        .unwrap();
    problems.extend(must(
        &os(&["check"], &grown),
        base,
        |o| o.code() == Some(1) && !o.stdout().contains("other bytes"),
        "the size named, the blob not hashed",
    ));
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// What `replay` refuses before touching a GPU, `check` reports as an error.
#[test]
fn check_refuses_what_replay_refuses() {
    let t = tempfile::tempdir().unwrap();
    let (base, mut problems) = (t.path(), Vec::new());
    for (name, patch) in [
        ("high", json!({"VAllocAddr": 18446742974197919744u64})),
        ("wide", json!({"NumThreads": 4096})),
    ] {
        let dir = base.join(name);
        common::copy_dir(&common::fixture(LLVM), &dir);
        let j = common::descriptor_of(&dir, "rr_saxpy");
        patch_json(&j, patch);
        problems.extend(must(
            &os(&["check", "--strict"], &dir),
            base,
            |o| o.code() == Some(1) && !o.stdout().contains(": 0 error(s)"),
            "an error",
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ------------------------------------------------------------------------------------------------
// Blobs of holes: hashed without reading them, and refused by replay before they are read.

/// The blob id of 2^40 − 32 KiB zero bytes, as rr-tui computed it by reading every byte of a
/// sparse file (13 min 27 s, before holes were hashed without reading).
const TIB_OF_ZEROS: &str = "30d3b5da9f4736d51b4c4382b441dc0b";
/// The blob id of 100 GiB of zeros (xxhash-rust over the bytes agrees).
const HUNDRED_GIB_OF_ZEROS: &str = "b395743fc27e480fe2472d9e3315ef5b";

/// A copy of the format-2 fixture holding one instance whose last segment (the kernel's third
/// argument) is `size` bytes at `addr`, stored in a sparse blob `id` of `blob_len` bytes.
fn blob_of_holes(base: &Path, size: u64, addr: u64, id: &str, blob_len: u64) -> PathBuf {
    let dir = base.join(format!("holes-{size}-{blob_len}"));
    common::copy_dir(&common::fixture("rrtui-v2-stencil3d"), &dir);
    let mut jsons: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    jsons.sort();
    for other in &jsons[1..] {
        std::fs::remove_file(other).unwrap();
        std::fs::remove_file(other.with_extension("globals")).unwrap();
    }
    let mut v = read_json(&jsons[0]);
    let segs = v["Segments"].as_array_mut().unwrap();
    let last = segs.last_mut().unwrap();
    last["Size"] = json!(size);
    last["Addr"] = json!(addr);
    last["Input"] = json!(id);
    last["Output"] = json!(id);
    let start = v["VAllocAddr"].as_u64().unwrap().min(addr);
    let end = (v["VAllocAddr"].as_u64().unwrap() + 32768).max(addr + size);
    v["VAllocAddr"] = json!(start);
    v["VAllocSize"] = json!(end - start);
    std::fs::write(&jsons[0], serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::File::create(dir.join("blobs").join(id))
        .unwrap()
        .set_len(blob_len)
        .unwrap();
    jsons[0].clone()
}

/// `rr-tui ARGS` (no memory cap: a replay maps placeholders over the recorded ranges), killed
/// after `limit`.
fn run_for(args: &[OsString], env: &[(&str, &Path)], limit: Duration) -> Outcome {
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, err) = (
        drain(child.stdout.take().unwrap()),
        drain(child.stderr.take().unwrap()),
    );
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        sleep(Duration::from_millis(20));
    };
    Outcome {
        cmd: format!("{args:?}"),
        status,
        out: out.join().unwrap(),
        err: err.join().unwrap(),
        took: start.elapsed(),
    }
}

/// A blob of a terabyte of holes (2^40 − 32 KiB, the most a snapshot may hold with the
/// instance's other segments) is hashed in seconds: the same id as reading every byte gave
/// (which took 13 minutes), so `check` passes. It ran past 60 s before.
#[test]
fn a_terabyte_of_holes_is_checked_in_seconds_with_the_same_id() {
    let t = tempfile::tempdir().unwrap();
    let size = (1u64 << 40) - 32768;
    let json = blob_of_holes(t.path(), size, 0x7f611c808000, TIB_OF_ZEROS, size);
    let o = run_for(&os(&["check"], &json), &[], Duration::from_secs(60));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(
        o.stdout()
            .ends_with("checked 1 instance(s): 0 error(s), 0 warning(s)\n"),
        "{}",
        o.describe()
    );
}

/// Holes between small pieces of data are skipped too: one byte every 512 KiB of a 16 GiB blob
/// (129 MB on disk) does not make `check` read 16 GiB of zeros (53 s before, under a second now).
#[test]
fn holes_between_sparse_bytes_are_not_read() {
    use std::os::unix::fs::FileExt;
    let t = tempfile::tempdir().unwrap();
    let size = 16u64 << 30;
    let json = blob_of_holes(t.path(), size, 0x7f611c808000, HUNDRED_GIB_OF_ZEROS, size);
    let blob = json
        .parent()
        .unwrap()
        .join("blobs")
        .join(HUNDRED_GIB_OF_ZEROS);
    let file = std::fs::OpenOptions::new().write(true).open(&blob).unwrap();
    for at in (0..size).step_by(512 << 10) {
        file.write_all_at(&[1], at).unwrap();
    }
    let o = run_for(&os(&["check"], &json), &[], Duration::from_secs(20));
    assert_eq!(o.code(), Some(1), "{}", o.describe());
    assert!(
        o.stdout().contains("holds other bytes than its name says"),
        "{}",
        o.describe()
    );
}

/// A blob whose length is not what its segment declares is that error, said at once: neither
/// a terabyte blob under a 4 KiB segment nor a 4 KiB blob under a terabyte segment is read.
#[test]
fn a_blob_of_another_length_than_declared_is_not_read() {
    let t = tempfile::tempdir().unwrap();
    let tib = (1u64 << 40) - 32768;
    for (declared, actual) in [(4096, tib), (tib, 4096)] {
        let json = blob_of_holes(t.path(), declared, 0x7f611c808000, TIB_OF_ZEROS, actual);
        for words in [
            &["check"][..],
            &["check", "--json"],
            &["inspect"],
            &["replay"],
        ] {
            let o = run_for(&os(words, &json), &[], Duration::from_secs(5));
            let said =
                format!("is {actual} bytes but segment 2 (0x7f611c808000) is {declared} bytes");
            let text = o.stdout() + &o.stderr();
            let names_blob = text.contains(&format!("blobs/{TIB_OF_ZEROS}"));
            let ok = match words[0] {
                "inspect" => o.code() == Some(0),
                // A finding of check; a record replay cannot use: the input's fault.
                "check" => o.code() == Some(1) && names_blob && text.contains(&said),
                _ => o.code() == Some(2) && names_blob && text.contains(&said),
            };
            assert!(ok && sanity(&o).is_empty(), "{said}\n{}", o.describe());
        }
    }
}

/// `replay` refuses device memory larger than the GPU's (the stand-in driver's: 80 GiB) right
/// after asking the device, before reserving, mapping or reading any of it.
#[test]
fn replay_refuses_more_memory_than_the_gpu_has_before_reading_it() {
    let driver = common::fake_driver();
    let t = tempfile::tempdir().unwrap();
    let json = blob_of_holes(
        t.path(),
        100 << 30,
        0x1000_0000_0000,
        HUNDRED_GIB_OF_ZEROS,
        100 << 30,
    );
    let env = [("LD_LIBRARY_PATH", driver.path())];
    let o = run_for(&os(&["replay"], &json), &env, Duration::from_secs(60));
    let want = format!(
        "rr-tui: error: {}: its recorded device memory needs 100.00 GiB (107376279552 bytes) mapped, \
         more than the 80 GiB of Fake GPU: no replay on this GPU can hold it (refused before reading the snapshot)\n",
        json.display()
    );
    // A record this GPU cannot hold is the input's fault (exit 2), as in every command.
    assert_eq!(o.code(), Some(2), "{}", o.describe());
    assert!(o.stderr().ends_with(&want), "{}", o.describe());
}

/// A command line clap refuses is said with every control character of the words visible: no
/// escape sequence, carriage return or C1 control reaches the terminal, and a newline inside a
/// value does not split the error (its lines are clap's: the error, a blank line, the tip).
#[test]
fn usage_errors_show_the_words_control_characters() {
    let cases: [&[&str]; 4] = [
        &[
            "tune",
            "X.json",
            "--samples",
            "\x1b[2J\x1b[41mINJ\x1b]0;TITLE\x07",
        ],
        &["tune", "X.json", "--samples", "A\rB\x08C\u{9b}31mD\x7f"],
        &["tune", "X.json", "-D", "A\nB=1"],
        &["tune", "X.json", "--samples=1\n2"],
    ];
    for args in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            !err.chars()
                .any(|c| c != '\n' && (c.is_control() || ('\u{80}'..'\u{a0}').contains(&c))),
            "{args:?}: {err:?}"
        );
        assert!(err.starts_with("error: invalid value '"), "{err:?}");
        assert_eq!(err.lines().count(), 3, "{args:?}: {err:?}");
        assert!(
            err.contains(r"\x") || err.contains(r"\n"),
            "{args:?}: {err:?}"
        );
    }
}
