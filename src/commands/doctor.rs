//! `rr-tui doctor`: what this machine can do, one line per piece (the driver, each GPU, ncu and
//! the performance counters, NVRTC, CUPTI, the recorder library, Ray, tmux, the config file),
//! each missing one with what needs it and its fix. Every piece is looked for the way the
//! command that needs it looks (the same functions), and nothing runs on a GPU. It reports; it
//! never fails (exit 0), and it always ends: the driver is asked on a thread given
//! [`DRIVER_LIMIT`] (a hung GPU hangs `cuInit`), each tool it runs is bounded, drained and ended
//! with its process group ([`child`]), on Ctrl-C or SIGTERM too.
//!
//! `RR_TUI_DOCTOR_LIMIT_S` (seconds) shortens every one of these limits; it is for the tests
//! only, which cannot wait 15 s for a driver that never answers.

use rr_format::text::io_reason;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rr_engine::machine;
use serde::Serialize;

use crate::cli::{ConfigArgs, DoctorArgs};
use crate::commands::child;
use crate::commands::config::source_line;
use crate::commands::record::{
    cupti_library, recorder_beside_this_binary, shared_object_problem, BUILD_THE_RECORDER,
};
use crate::error::Result;
use crate::output;
use crate::settings::config;
use crate::settings::theme::Theme;

/// How one piece stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum State {
    Ok,
    /// Absent: what needs it cannot run.
    Missing,
    /// Present but not usable as it is (a driver too old, counters for administrators only).
    Limited,
    /// Present and refused by what reads it: a config file with a mistake, with which the
    /// explorer and `rr-tui config` do not start; a driver that does not answer.
    Broken,
    /// Nothing to tell from here (no NVIDIA kernel driver to ask).
    Unknown,
}

impl State {
    /// As `--json` spells it.
    fn word(self) -> &'static str {
        match self {
            State::Ok => "ok",
            State::Missing => "missing",
            State::Limited => "limited",
            State::Broken => "broken",
            State::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Serialize)]
struct Finding {
    name: String,
    state: State,
    detail: String,
    /// What to do about it (for every state but `ok`).
    fix: Option<String>,
}

impl Finding {
    fn ok(name: &str, detail: impl Into<String>) -> Finding {
        Finding {
            name: name.into(),
            state: State::Ok,
            detail: detail.into(),
            fix: None,
        }
    }
    fn not_ok(name: &str, state: State, detail: impl Into<String>, fix: &str) -> Finding {
        Finding {
            name: name.into(),
            state,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

#[derive(Serialize)]
struct Report {
    version: &'static str,
    findings: Vec<Finding>,
    gpus: Vec<machine::Gpu>,
}

/// How long the driver has to say its version and its GPUs (it does in well under a second).
const DRIVER_LIMIT: Duration = Duration::from_secs(15);
/// Importing Ray takes seconds on a cold cache; a report should not wait much longer.
const RAY_IMPORT_LIMIT: Duration = Duration::from_secs(10);
/// `tmux -V` answers at once.
const TMUX_LIMIT: Duration = Duration::from_secs(5);

/// `normal`, or less where `RR_TUI_DOCTOR_LIMIT_S` says (the tests).
fn limit(normal: Duration) -> Duration {
    std::env::var("RR_TUI_DOCTOR_LIMIT_S")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&secs| secs > 0)
        .map_or(normal, |secs| normal.min(Duration::from_secs(secs)))
}

/// Stop where a signal asked to (the handlers of [`child::watch_signals`] keep it from ending
/// the process by itself).
fn stop_if_signalled() -> Result<()> {
    match child::signalled() {
        Some(sig) => Err(crate::error::Error::Failed(format!(
            "stopped by signal {sig}"
        ))),
        None => Ok(()),
    }
}

pub fn run(args: &DoctorArgs) -> Result<i32> {
    child::watch_signals();
    let (mut findings, gpus) = driver_and_gpus_bounded(limit(DRIVER_LIMIT))?;
    findings.push(ncu());
    findings.push(counters(
        std::fs::read_to_string(NVIDIA_PARAMS).ok().as_deref(),
        effective_capabilities(),
    ));
    findings.push(nvrtc());
    findings.push(cupti());
    findings.push(recorder());
    stop_if_signalled()?;
    findings.push(ray()?);
    findings.push(tmux()?);
    findings.push(config_file(&args.config));
    if args.json {
        output::json(&Report {
            version: crate::cli::VERSION,
            findings,
            gpus,
        });
    } else {
        output::lines(findings.iter().map(line));
    }
    Ok(0)
}

/// `name  state  detail; fix: …`, aligned for reading down the columns.
fn line(f: &Finding) -> String {
    let state = f.state.word();
    let fix = f
        .fix
        .as_ref()
        .map(|fix| format!("; fix: {fix}"))
        .unwrap_or_default();
    format!("{:<9} {state:<8} {}{fix}", f.name, f.detail)
}

fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}

/// The steps of asking the driver, as [`driver_and_gpus`] reaches them: what did not answer.
const DRIVER_STEPS: [&str; 3] = [
    "libcuda.so.1 (loading it, cuDriverGetVersion)",
    "cuInit",
    "the GPU list (cuDeviceGetCount, cuDeviceGetName)",
];

/// [`driver_and_gpus`] on a thread given `limit`: a driver stuck in `cuInit` (a hung GPU) gets
/// a line saying so, and the other lines follow (the thread stays stuck until the process
/// exits).
fn driver_and_gpus_bounded(limit: Duration) -> Result<(Vec<Finding>, Vec<machine::Gpu>)> {
    let step = Arc::new(AtomicU8::new(0));
    let (tx, rx) = crossbeam_channel::bounded(1);
    let reached = step.clone();
    std::thread::spawn(move || {
        let _ = tx.send(driver_and_gpus(&reached));
    });
    let deadline = Instant::now() + limit;
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(found) => return Ok(found),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                let detail = "asking the driver failed unexpectedly (the probe's thread ended)";
                let fix = "run `nvidia-smi` to see whether the driver answers";
                let finding = Finding::not_ok("driver", State::Unknown, detail, fix);
                return Ok((vec![finding], Vec::new()));
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
        }
        stop_if_signalled()?;
        if Instant::now() >= deadline {
            let what = DRIVER_STEPS[usize::from(step.load(Ordering::Acquire)).min(2)];
            return Ok((vec![driver_not_answering(what, limit)], Vec::new()));
        }
    }
}

fn driver_not_answering(what: &str, limit: Duration) -> Finding {
    Finding::not_ok(
        "driver",
        State::Broken,
        format!(
            "{what} did not answer within {} s (a hung GPU or driver; replay, tune, profile and \
             record would hang the same way)",
            limit.as_secs()
        ),
        "look for Xid errors in `sudo dmesg`, check whether `nvidia-smi` answers, then reset \
         the GPU (`nvidia-smi -r`), reload the NVIDIA driver or reboot",
    )
}

/// The driver line, and a line per GPU when the driver is usable; `step` says how far it got
/// (an index of [`DRIVER_STEPS`]).
fn driver_and_gpus(step: &AtomicU8) -> (Vec<Finding>, Vec<machine::Gpu>) {
    const INSTALL: &str = "install the NVIDIA driver (570 or newer), or add the directory holding \
                           libcuda.so.1 to LD_LIBRARY_PATH";
    let version = match machine::driver_version() {
        Ok(v) => v,
        Err(why) => {
            let why = match machine::driver_present() {
                true => why,
                false => "libcuda.so.1 could not be loaded".into(),
            };
            let detail = format!("{why} (replay, tune, profile and record need a CUDA driver)");
            let finding = Finding::not_ok("driver", State::Missing, detail, INSTALL);
            return (vec![finding], Vec::new());
        }
    };
    if version < machine::MIN_DRIVER_VERSION {
        let detail = format!(
            "supports CUDA {}, older than the 12.8 replay, tune, profile and record need",
            cuda_version(version)
        );
        let fix = "update the NVIDIA driver to 570 or newer";
        return (
            vec![Finding::not_ok("driver", State::Limited, detail, fix)],
            Vec::new(),
        );
    }
    let mut findings = vec![Finding::ok(
        "driver",
        format!("CUDA {}", cuda_version(version)),
    )];
    step.store(1, Ordering::Release);
    let initialised = machine::init_driver();
    step.store(2, Ordering::Release);
    const NO_GPU: &str = "check that nvidia-smi lists a GPU, and that CUDA_VISIBLE_DEVICES (when \
                          set) names one";
    let gpus = match initialised.and_then(|()| machine::gpus()) {
        Ok(gpus) if gpus.is_empty() => {
            findings.push(Finding::not_ok(
                "gpu",
                State::Missing,
                "the driver shows no GPU",
                NO_GPU,
            ));
            gpus
        }
        Ok(gpus) => gpus,
        Err(e) => {
            findings.push(Finding::not_ok(
                "gpu",
                State::Missing,
                e.to_string(),
                NO_GPU,
            ));
            Vec::new()
        }
    };
    findings.extend(gpus.iter().map(|g| {
        let detail = format!("{}, compute capability {}.{}", g.name, g.sm / 10, g.sm % 10);
        Finding::ok(&format!("gpu {}", g.ordinal), detail)
    }));
    (findings, gpus)
}

fn ncu() -> Finding {
    let not_executable = rr_engine::profile::ncu_not_executable;
    match (rr_engine::profile::find_ncu(), not_executable()) {
        (Some(path), _) => Finding::ok("ncu", path.display().to_string()),
        (None, Some(file)) => Finding::not_ok(
            "ncu",
            State::Missing,
            format!(
                "{} is not executable, and no other ncu was found (profile needs one)",
                shown(&file)
            ),
            "make it executable (chmod +x), or install Nsight Compute and put its ncu on PATH, \
             or give profile --ncu PATH",
        ),
        (None, None) => Finding::not_ok(
            "ncu",
            State::Missing,
            "Nsight Compute's ncu is not on PATH, in a CUDA installation or in \
             /opt/nvidia/nsight-compute (profile needs it)",
            "install Nsight Compute (it comes with the CUDA toolkit) and put ncu on PATH, or \
             give profile --ncu PATH",
        ),
    }
}

/// Where the NVIDIA kernel driver shows its module parameters.
const NVIDIA_PARAMS: &str = "/proc/driver/nvidia/params";
/// The capabilities that lift the counters' restriction: CAP_SYS_ADMIN, and CAP_PERFMON from
/// driver R565 on.
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// This process's effective capabilities (`CapEff` of /proc/self/status).
fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

/// Whether this user may read the GPU's performance counters (what ncu needs), from the NVIDIA
/// kernel driver's parameters (`RmProfilingAdminOnly`, set by NVreg_RestrictProfilingToAdminUsers)
/// and this process's capabilities: read, never tried on a GPU.
fn counters(params: Option<&str>, capabilities: Option<u64>) -> Finding {
    const NAME: &str = "counters";
    let Some(params) = params else {
        return Finding::not_ok(
            NAME,
            State::Unknown,
            format!("{NVIDIA_PARAMS} cannot be read (no NVIDIA kernel driver loaded)"),
            "install and load the NVIDIA driver; profile needs the GPU's performance counters",
        );
    };
    let admin_only = params
        .lines()
        .find_map(|l| l.strip_prefix("RmProfilingAdminOnly:"))
        .map(str::trim);
    let privileged =
        capabilities.is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN | 1 << CAP_PERFMON) != 0);
    match admin_only {
        Some("0") => Finding::ok(NAME, "performance counters permitted for every user"),
        Some("1") if privileged => Finding::ok(
            NAME,
            "performance counters restricted to administrators, and this process is one",
        ),
        Some("1") => Finding::not_ok(
            NAME,
            State::Limited,
            "performance counters restricted to administrators (RmProfilingAdminOnly: 1): \
             profile would fail with ERR_NVGPUCTRPERM",
            "run profile with sudo, or let every user read them: a line \
             `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file of \
             /etc/modprobe.d/, then reload the driver (or reboot)",
        ),
        _ => Finding::not_ok(
            NAME,
            State::Unknown,
            format!("{NVIDIA_PARAMS} does not say RmProfilingAdminOnly"),
            "try `rr-tui profile` on an instance: it says when the counters are refused",
        ),
    }
}

fn nvrtc() -> Finding {
    match rr_engine::replay::candidate::nvrtc_version() {
        Ok((major, minor)) => {
            let from = rr_engine::replay::find_cuda_library("nvrtc")
                .map(|p| format!(" ({})", p.display()))
                .unwrap_or_default();
            Finding::ok("nvrtc", format!("NVRTC {major}.{minor}{from}"))
        }
        Err(_) => Finding::not_ok(
            "nvrtc",
            State::Missing,
            "libnvrtc.so does not load (tune --source and A/B candidates in CUDA C++ need it)",
            "install the CUDA toolkit's NVRTC and set CUDA_HOME to the installation, or add its \
             lib64 to LD_LIBRARY_PATH",
        ),
    }
}

fn cupti() -> Finding {
    let path = cupti_library(None);
    match (machine::cupti_loads(path.as_deref()), path) {
        (true, Some(path)) => Finding::ok("cupti", path.display().to_string()),
        (true, None) => Finding::ok("cupti", "libcupti.so (found by the loader)"),
        (false, _) => Finding::not_ok(
            "cupti",
            State::Missing,
            "libcupti.so does not load (record needs it for --hooks mixed|cupti, and to keep \
             the cubin of kernels loaded from a fatbin or PTX)",
            "install the CUDA toolkit's CUPTI and set CUDA_HOME to the installation, or give \
             record --cupti PATH",
        ),
    }
}

fn recorder() -> Finding {
    let fix = format!("{BUILD_THE_RECORDER}; or give record --library PATH");
    const NEEDS: &str = "record preloads it into programs";
    match recorder_beside_this_binary() {
        Ok(Ok(path)) => match shared_object_problem(&path) {
            Ok(()) => Finding::ok("recorder", path.display().to_string()),
            Err(why) => Finding::not_ok(
                "recorder",
                State::Broken,
                format!("{} {why} ({NEEDS})", shown(&path)),
                &fix,
            ),
        },
        Ok(Err(expected)) => Finding::not_ok(
            "recorder",
            State::Missing,
            format!(
                "{} {} ({NEEDS})",
                shown(&expected),
                what_is_there(&expected)
            ),
            &fix,
        ),
        Err(e) => Finding::not_ok("recorder", State::Missing, e.to_string(), &fix),
    }
}

/// What is at `path`, which is not a regular file: nothing, or what else (as `ls -l` would
/// tell), never opened (a FIFO would block).
fn what_is_there(path: &Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    let Ok(link) = std::fs::symlink_metadata(path) else {
        return "is not there".into();
    };
    let target = std::fs::read_link(path).map(|t| shown(&t));
    let kind = match std::fs::metadata(path) {
        Err(_) if link.is_symlink() => {
            return format!("is a dangling link (to {})", target.unwrap_or_default())
        }
        Err(e) => return format!("cannot be examined: {}", io_reason(&e)),
        Ok(m) => m.file_type(),
    };
    let what = match kind {
        k if k.is_dir() => "a directory",
        k if k.is_fifo() => "a FIFO (named pipe)",
        k if k.is_socket() => "a socket",
        k if k.is_char_device() => "a character device",
        k if k.is_block_device() => "a block device",
        _ => "not a regular file",
    };
    match target {
        Ok(target) => format!("is a link to {what} ({target}), not a library"),
        Err(_) => format!("is {what}, not a library"),
    }
}

/// Why a tool gave no answer.
#[derive(Debug, PartialEq)]
enum Unanswered {
    /// Not an executable file in a directory of `PATH`.
    NotOnPath,
    /// Found, still running at the limit: its process group was ended.
    TimedOut(PathBuf),
    /// Found, and it did not start or ended without success (why, in words).
    Failed(PathBuf, String),
}

/// How much of a tool's first line is kept: a version is short; what a tool prints past it is
/// read and dropped, so nothing grows with it.
const ANSWER_CHARS: usize = 200;

/// The first line `program args` prints on stdout when it succeeds within `limit`, run as
/// `profile` runs ncu ([`child::run`]: its own process group, ended past the limit or on a
/// signal, output drained through pipes, a process left holding them not waited for). Err: a
/// signal stopped `doctor`.
fn answer(
    program: &str,
    args: &[&str],
    limit: Duration,
) -> Result<std::result::Result<String, Unanswered>> {
    let Some(path) = machine::find_on_path(program) else {
        return Ok(Err(Unanswered::NotOnPath));
    };
    let mut cmd = Command::new(&path);
    cmd.args(args);
    let first_line = std::cell::RefCell::new(None::<String>);
    let keep_first = |line: &str| {
        let mut first = first_line.borrow_mut();
        if first.is_none() && !line.trim().is_empty() {
            *first = Some(line.trim().chars().take(ANSWER_CHARS).collect());
        }
    };
    let finished = match child::run(cmd, limit, 0, &keep_first, &|_| {}) {
        Ok(finished) => finished,
        // Stopped by a signal: doctor stops too, saying what it ended.
        Err(e) if child::signalled().is_some() => return Err(e),
        Err(e) => return Ok(Err(Unanswered::Failed(path, e.to_string()))),
    };
    Ok(match finished {
        f if f.timed_out => Err(Unanswered::TimedOut(path)),
        f if f.status == Some(0) => Ok(first_line.into_inner().unwrap_or_default()),
        f => {
            let how = f.status.map_or("ended by a signal".to_string(), |code| {
                format!("exit status {code}")
            });
            Err(Unanswered::Failed(path, how))
        }
    })
}

/// `path`, as a line shows it.
fn shown(path: &Path) -> String {
    rr_format::text::visible(&path.display().to_string()).into_owned()
}

fn ray() -> Result<Finding> {
    const NEEDS: &str = "python -m rr_tui.ray, sweeps on a Ray cluster, needs it";
    const INSTALL: &str = "pip install 'rr-tui[ray]' (or pip install ray) for the python3 on PATH";
    let script = "import ray, sys; sys.stdout.write(ray.__version__)";
    let limit = limit(RAY_IMPORT_LIMIT);
    Ok(match answer("python3", &["-c", script], limit)? {
        Ok(version) => Finding::ok("ray", format!("Ray {version} (python3)")),
        Err(Unanswered::NotOnPath) => Finding::not_ok(
            "ray",
            State::Missing,
            format!("python3 is not on PATH, so neither is Ray ({NEEDS})"),
            &format!("{INSTALL}, once python3 is installed"),
        ),
        Err(Unanswered::TimedOut(python)) => Finding::not_ok(
            "ray",
            State::Unknown,
            format!(
                "{} did not answer within {} s importing ray (it was stopped)",
                shown(&python),
                limit.as_secs()
            ),
            "run `python3 -c 'import ray'` to see where it stops (a slow file system, a hung \
             import)",
        ),
        Err(Unanswered::Failed(python, how)) => Finding::not_ok(
            "ray",
            State::Missing,
            format!("{} cannot import ray ({how}; {NEEDS})", shown(&python)),
            INSTALL,
        ),
    })
}

fn tmux() -> Result<Finding> {
    const NEEDS: &str = "only the end-to-end explorer tests need it";
    const INSTALL: &str = "install tmux with the system's package manager (apt-get install tmux)";
    let limit = limit(TMUX_LIMIT);
    Ok(match answer("tmux", &["-V"], limit)? {
        Ok(version) => Finding::ok("tmux", version),
        Err(Unanswered::NotOnPath) => Finding::not_ok(
            "tmux",
            State::Missing,
            format!("tmux is not on PATH ({NEEDS})"),
            INSTALL,
        ),
        Err(Unanswered::TimedOut(tmux)) => Finding::not_ok(
            "tmux",
            State::Unknown,
            format!(
                "{} -V did not answer within {} s (it was stopped)",
                shown(&tmux),
                limit.as_secs()
            ),
            "run `tmux -V` to see why it hangs",
        ),
        Err(Unanswered::Failed(tmux, how)) => Finding::not_ok(
            "tmux",
            State::Missing,
            format!("{} -V failed ({how}; {NEEDS})", shown(&tmux)),
            INSTALL,
        ),
    })
}

/// The config file the explorer would read (with these flags), checked as the explorer checks it.
fn config_file(flags: &ConfigArgs) -> Finding {
    let checked = config::load(flags).and_then(|(config, source)| {
        Theme::load(config.theme, config.theme_file.as_deref())?;
        Ok(source)
    });
    match checked {
        Ok(source) => Finding::ok("config", source_line(&source)),
        Err(e) => Finding::not_ok(
            "config",
            State::Broken,
            format!("{e}; the explorer (and `rr-tui config`) will not start until it is fixed"),
            "correct the file (`rr-tui config --default` prints every key with its default), \
             or start the explorer with --no-config",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_follow_the_drivers_parameter_and_the_processs_capabilities() {
        let restricted = "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n";
        let open = "RmProfilingAdminOnly: 0\nOther: 2\n";
        assert_eq!(counters(Some(open), Some(0)).state, State::Ok);
        let user = counters(Some(restricted), Some(0));
        assert_eq!(user.state, State::Limited);
        assert!(user
            .fix
            .unwrap()
            .contains("NVreg_RestrictProfilingToAdminUsers=0"));
        assert_eq!(
            counters(Some(restricted), Some(1 << CAP_SYS_ADMIN)).state,
            State::Ok
        );
        assert_eq!(
            counters(Some(restricted), Some(1 << CAP_PERFMON)).state,
            State::Ok
        );
        assert_eq!(counters(Some(restricted), None).state, State::Limited);
        assert_eq!(counters(Some("Other: 1\n"), Some(0)).state, State::Unknown);
        assert_eq!(counters(None, Some(!0)).state, State::Unknown);
    }

    #[test]
    fn a_tool_that_hangs_is_given_up_on() {
        let started = Instant::now();
        let hung = answer("sleep", &["30"], Duration::from_millis(200)).unwrap();
        assert!(matches!(hung, Err(Unanswered::TimedOut(_))), "{hung:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            answer("echo", &["hello"], Duration::from_secs(5)).unwrap(),
            Ok("hello".to_string())
        );
        let failed = answer("false", &[], Duration::from_secs(5)).unwrap();
        assert!(matches!(failed, Err(Unanswered::Failed(_, ref how)) if how == "exit status 1"));
        assert_eq!(
            answer("no-such-tool-here", &[], Duration::from_secs(5)).unwrap(),
            Err(Unanswered::NotOnPath)
        );
    }
}
