//! `rr-tui doctor`: what this machine can do, one line per piece (the driver, each GPU, ncu and
//! the performance counters, NVRTC, CUPTI, the recorder library, Ray, tmux, the config file),
//! each missing one with what needs it and its fix. Every piece is looked for the way the
//! command that needs it looks (the same functions), and nothing runs on a GPU. It reports; it
//! never fails (exit 0).

use std::time::{Duration, Instant};

use rr_engine::machine;
use serde::Serialize;

use crate::cli::{ConfigArgs, DoctorArgs};
use crate::commands::config::source_line;
use crate::commands::record::{cupti_library, recorder_beside_this_binary, BUILD_THE_RECORDER};
use crate::error::Result;
use crate::output;
use crate::tui::config;
use crate::tui::theme::Theme;

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
    /// explorer and `rr-tui config` do not start.
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

pub fn run(args: &DoctorArgs) -> Result<i32> {
    let (mut findings, gpus) = driver_and_gpus();
    findings.push(ncu());
    findings.push(counters(
        std::fs::read_to_string(NVIDIA_PARAMS).ok().as_deref(),
        effective_capabilities(),
    ));
    findings.push(nvrtc());
    findings.push(cupti());
    findings.push(recorder());
    findings.push(ray());
    findings.push(tmux());
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

/// The driver line, and a line per GPU when the driver is usable.
fn driver_and_gpus() -> (Vec<Finding>, Vec<machine::Gpu>) {
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
    const NO_GPU: &str = "check that nvidia-smi lists a GPU, and that CUDA_VISIBLE_DEVICES (when \
                          set) names one";
    let gpus = match machine::gpus() {
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
    match rr_engine::profile::find_ncu() {
        Some(path) => Finding::ok("ncu", path.display().to_string()),
        None => Finding::not_ok(
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
    match recorder_beside_this_binary() {
        Ok(Ok(path)) => Finding::ok("recorder", path.display().to_string()),
        Ok(Err(expected)) => Finding::not_ok(
            "recorder",
            State::Missing,
            format!(
                "{} is not there (record preloads it into programs)",
                expected.display()
            ),
            &fix,
        ),
        Err(e) => Finding::not_ok("recorder", State::Missing, e.to_string(), &fix),
    }
}

/// What `program args` prints on stdout when it succeeds within `limit` (its group is killed
/// past it: a tool that hangs must not hang `doctor`).
fn answer(program: &str, args: &[&str], limit: Duration) -> Option<String> {
    use std::os::unix::process::CommandExt;
    let out = tempfile::tempfile().ok()?;
    let mut reader = out.try_clone().ok()?;
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let started = Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if started.elapsed() > limit {
            if let Some(group) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    use std::io::{Read, Seek};
    let mut text = String::new();
    reader.seek(std::io::SeekFrom::Start(0)).ok()?;
    reader.take(4096).read_to_string(&mut text).ok()?;
    status.success().then(|| text.trim().to_string())
}

/// Importing Ray takes seconds on a cold cache.
const RAY_IMPORT_LIMIT: Duration = Duration::from_secs(30);

fn ray() -> Finding {
    let script = "import ray, sys; sys.stdout.write(ray.__version__)";
    match answer("python3", &["-c", script], RAY_IMPORT_LIMIT) {
        Some(version) => Finding::ok("ray", format!("Ray {version} (python3)")),
        None => Finding::not_ok(
            "ray",
            State::Missing,
            "python3 cannot import ray (python -m rr_tui.ray, sweeps on a Ray cluster, needs it)",
            "pip install 'rr-tui[ray]' (or pip install ray) for the python3 on PATH",
        ),
    }
}

fn tmux() -> Finding {
    match answer("tmux", &["-V"], Duration::from_secs(10)) {
        Some(version) => Finding::ok("tmux", version),
        None => Finding::not_ok(
            "tmux",
            State::Missing,
            "tmux is not on PATH (only the end-to-end explorer tests need it)",
            "install tmux with the system's package manager (apt-get install tmux)",
        ),
    }
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
        assert_eq!(answer("sleep", &["30"], Duration::from_millis(200)), None);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            answer("echo", &["hello"], Duration::from_secs(5)).as_deref(),
            Some("hello")
        );
        assert_eq!(answer("false", &[], Duration::from_secs(5)), None);
        assert_eq!(
            answer("/nonexistent/tool", &[], Duration::from_secs(5)),
            None
        );
    }
}
