//! `rr-tui record [OPTIONS] -- APP ARGS`: run a program with the recorder loaded.
//!
//! The recorder is `librr_recorder.so`, built beside this binary: preloaded (`LD_PRELOAD`), it
//! starts at the program's first `cuInit`; with `--hooks mixed|cupti` CUDA also loads it as its
//! injection library (`CUDA_INJECTION64_PATH`). Everything else is environment variables
//! the library reads (`RR_TUI_RECORD_*`, the same a launcher sets by hand). Progress comes back
//! over a datagram socket, so nothing is written into the program's own output streams but
//! whole lines on stderr.

use rr_format::text::io_reason;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::cli::{Hooks, RecordArgs, SnapshotMode};
use crate::error::{Error, Result};
use crate::output;

mod paths;
mod progress;
use paths::find_program;
pub(crate) use paths::shared_object_problem;
use progress::Progress;

const LIBRARY: &str = "librr_recorder.so";

/// How the recorder library comes to be beside rr-tui (`record` and `doctor` say it alike).
pub(crate) const BUILD_THE_RECORDER: &str = "the recorder library is built beside rr-tui by \
`cargo build --release` at the root of rr-tui's source tree (`cargo run` builds only rr-tui)";

/// The recorder library: given (`--library`), or next to this executable
/// ([`recorder_beside_this_binary`]).
fn recorder_library(given: Option<&Path>) -> Result<PathBuf> {
    let Some(p) = given else {
        let lib = recorder_beside_this_binary()?.map_err(|lib| {
            Error::format(
                &lib,
                format!("missing: {BUILD_THE_RECORDER}, or give --library PATH"),
            )
        })?;
        // The file found is checked as a given one is (doctor's rule): a preload that fails
        // would only be ld.so's warning, and the program would run unrecorded.
        return match shared_object_problem(&lib) {
            Ok(()) => Ok(lib),
            Err(why) => Err(Error::format(
                &lib,
                format!("{why}: {BUILD_THE_RECORDER}, or give --library PATH"),
            )),
        };
    };
    let named = |why: String| {
        Error::invalid(format!(
            "--library {}: {why}",
            rr_format::text::visible_path(p)
        ))
    };
    rr_format::fsio::regular_metadata(p).map_err(|e| named(e.problem()))?;
    shared_object_problem(p)
        .map_err(|why| named(format!("{why}, an ELF shared object to preload")))?;
    std::fs::canonicalize(p).map_err(|e| named(e.to_string()))
}

/// The recorder library `record` preloads when none is given: the newest copy next to this
/// executable, or `Err(where it belongs)` when there is none (`doctor` asks the same).
pub(crate) fn recorder_beside_this_binary() -> Result<std::result::Result<PathBuf, PathBuf>> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::invalid(format!("cannot find rr-tui itself: {}", io_reason(&e))))?;
    let lib = exe.with_file_name(LIBRARY);
    // In a cargo target directory the library may only have been built as a dependency
    // (`cargo test`): cargo leaves it in `deps/` beside the executable, and does not refresh the
    // copy beside it; the newer of the two is the one built from the current sources.
    let in_deps = exe.with_file_name("deps").join(LIBRARY);
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest = [lib.clone(), in_deps]
        .into_iter()
        .filter(|p| p.is_file())
        .max_by_key(|p| modified(p));
    Ok(newest.ok_or(lib))
}

/// libcupti: given (`--cupti`), or from a CUDA installation (`None`: leave it to the loader).
pub(crate) fn cupti_library(given: Option<&Path>) -> Option<PathBuf> {
    given
        .map(Path::to_path_buf)
        .or_else(|| rr_engine::replay::find_cuda_library("cupti"))
}

/// Whether the recorder library can be preloaded: ld.so splits LD_PRELOAD at colons and spaces,
/// so a path holding one cannot (the recorder is then injected and uses CUPTI).
fn preloadable(lib: &Path) -> bool {
    !lib.as_os_str()
        .as_encoded_bytes()
        .iter()
        .any(|b| matches!(b, b':' | b' '))
}

/// Whether CUDA loads the recorder as its injection library. Preloaded with every hook its own,
/// the recorder starts after the program's first cuInit and must not be injected: being injected
/// alone costs a few per cent of every driver call (docs/recording.md).
fn injects(args: &RecordArgs, lib: &Path) -> bool {
    args.hooks != Hooks::Interpose || !preloadable(lib)
}

/// Whether a path names a recorder library (any copy of `librr_recorder.so`).
fn names_recorder(path: &[u8]) -> bool {
    path.rsplit(|&b| b == b'/').next() == Some(LIBRARY.as_bytes())
}

/// The variables the recorder reads, as `record` sets them (`dir`: the recording directory;
/// `progress`: the socket progress comes back on).
fn recorder_env(
    args: &RecordArgs,
    lib: &Path,
    dir: &Path,
    progress: &Path,
) -> Vec<(&'static str, OsString)> {
    let text = |s: &str| Some(OsString::from(s));
    let number = |n: Option<u64>| n.map(|n| OsString::from(n.to_string()));
    let inject = injects(args, lib);
    let vars: [(&'static str, Option<OsString>); 18] = [
        ("CUDA_INJECTION64_PATH", inject.then(|| lib.into())),
        ("RR_TUI_RECORD_DIR", Some(dir.into())),
        (
            "RR_TUI_RECORD_PARENT_PID",
            text(&std::process::id().to_string()),
        ),
        ("RR_TUI_RECORD_PROGRESS", Some(progress.into())),
        (
            "RR_TUI_RECORD_OUTPUT",
            text(if args.no_output { "false" } else { "true" }),
        ),
        (
            "RR_TUI_RECORD_FINGERPRINTS",
            text(if args.no_fingerprints {
                "false"
            } else {
                "true"
            }),
        ),
        ("RR_TUI_RECORD_SKIP", number(Some(args.skip))),
        (
            "RR_TUI_RECORD_SNAPSHOT",
            text(match args.snapshot {
                SnapshotMode::All => "all",
                SnapshotMode::Args => "args",
            }),
        ),
        (
            "RR_TUI_RECORD_HOOKS",
            text(match args.hooks {
                Hooks::Interpose => "interpose",
                Hooks::Mixed => "mixed",
                Hooks::Cupti => "cupti",
            }),
        ),
        (
            "RR_TUI_RECORD_KERNELS",
            args.kernels.clone().map(Into::into),
        ),
        ("RR_TUI_RECORD_OCCURRENCE", number(args.occurrence)),
        ("RR_TUI_RECORD_MAX_PER_KERNEL", number(args.max_per_kernel)),
        ("RR_TUI_RECORD_BUDGET", args.budget.clone().map(Into::into)),
        (
            "RR_TUI_RECORD_STAGING",
            args.staging.clone().map(Into::into),
        ),
        (
            "RR_TUI_RECORD_DEVICE",
            args.device.map(|n| n.to_string().into()),
        ),
        ("RR_TUI_RECORD_RANKS", args.ranks.clone().map(Into::into)),
        (
            "RR_TUI_RECORD_OVERWRITE",
            args.overwrite.then(|| "true".into()),
        ),
        (
            "RR_TUI_CUPTI",
            cupti_library(args.cupti.as_deref()).map(OsString::from),
        ),
    ];
    vars.into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
}

/// The flag that sets each validated variable, for messages.
const FLAGS: &[(&str, &str)] = &[
    ("RR_TUI_RECORD_KERNELS", "--kernels"),
    ("RR_TUI_RECORD_BUDGET", "--budget"),
    ("RR_TUI_RECORD_STAGING", "--staging"),
    ("RR_TUI_RECORD_RANKS", "--ranks"),
    ("RR_TUI_RECORD_DEVICE", "--device"),
    ("RR_TUI_RECORD_OCCURRENCE", "--occurrence"),
    ("RR_TUI_RECORD_MAX_PER_KERNEL", "--max-per-kernel"),
];

/// Run the recorder's own configuration parser on what it will see (our variables over the
/// environment), so a value it would refuse stops `record` before the program starts.
fn validate(vars: &[(&'static str, OsString)]) -> Result<()> {
    let get = |k: &str| -> Option<String> {
        match vars.iter().find(|(name, _)| *name == k) {
            Some((_, v)) => Some(v.to_string_lossy().into_owned()),
            None => std::env::var(k).ok(),
        }
    };
    // libcupti named by the environment must be there (`--cupti` is checked on its own).
    if let Some(p) = get("RR_TUI_CUPTI").filter(|p| !p.is_empty()) {
        rr_format::fsio::regular_metadata(Path::new(&p))?;
    }
    rr_format::record_config::Config::from_env(&get).map_err(|why| {
        // Name the flag the user typed rather than the variable it became.
        let why = FLAGS
            .iter()
            .filter(|(var, _)| vars.iter().any(|(k, _)| k == var))
            .fold(why, |why, (var, flag)| why.replace(var, flag));
        Error::invalid(why)
    })?;
    Ok(())
}

/// Signals `record` passes on to the program rather than dying of them (which would leave the
/// program running and our temporary directory behind).
const FORWARDED: [i32; 5] = [
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGUSR1,
    signal_hook::consts::SIGUSR2,
    signal_hook::consts::SIGALRM,
];

pub fn run(args: &RecordArgs) -> Result<i32> {
    let lib = recorder_library(args.library.as_deref())?;
    if let Some(p) = &args.cupti {
        rr_format::fsio::regular_metadata(p).map_err(|e| {
            Error::invalid(format!(
                "--cupti {}: {}",
                rr_format::text::visible_path(p),
                e.problem()
            ))
        })?;
    }
    find_program(&args.app[0])?;
    if !args.overwrite && rr_format::dir::holds_records(&args.dir, "report.txt") {
        return Err(Error::invalid(format!(
            "{}: already holds a recording: choose another --dir, or --overwrite to add to it",
            rr_format::text::visible_path(&args.dir)
        )));
    }
    validate(&recorder_env(args, &lib, &args.dir, Path::new("progress")))?;
    if std::fs::symlink_metadata(&args.dir).is_ok_and(|m| !m.is_dir()) && !args.dir.is_dir() {
        return Err(Error::invalid(format!(
            "--dir {}: exists and is not a directory",
            rr_format::text::visible_path(&args.dir)
        )));
    }
    // The directory is made by the recorder at the first instance: a program that lists its
    // working directory must not find it there before. Checked now: where it would go can be
    // written.
    let dir = std::path::absolute(&args.dir).map_err(|e| Error::io(&args.dir, e))?;
    writable_ancestor(&dir)?;
    run_program(args, &lib, &dir)
}

/// The nearest existing ancestor of `dir` (itself when it exists) is a directory this user can
/// write into, so that the recorder can make `dir` at its first instance.
fn writable_ancestor(dir: &Path) -> Result<()> {
    let existing = dir
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    let ok = existing.is_dir()
        && rustix::fs::access(
            existing,
            rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
        )
        .is_ok();
    if ok {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "--dir {}: cannot be created ({} is not a directory this user can write into)",
        rr_format::text::visible_path(dir),
        rr_format::text::visible_path(existing)
    )))
}

/// Start the program with the recorder, follow its progress, and say what was recorded.
fn run_program(args: &RecordArgs, lib: &Path, dir: &Path) -> Result<i32> {
    let sock_dir = tempfile::Builder::new()
        .prefix("rr-tui-record-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let sock_path = sock_dir.path().join("progress");
    let sock = UnixDatagram::bind(&sock_path).map_err(|e| Error::io(&sock_path, e))?;
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .map_err(|e| Error::io(&sock_path, e))?;

    let mut cmd = Command::new(&args.app[0]);
    cmd.args(&args.app[1..])
        .envs(recorder_env(args, lib, dir, &sock_path));
    // The user's own preloads stay, without another copy of the recorder (a shell that
    // exported LD_PRELOAD for a launcher, as docs/recording.md shows).
    let mut preload: Vec<OsString> = std::env::var_os("LD_PRELOAD")
        .map(|old| {
            use std::os::unix::ffi::OsStrExt;
            old.as_bytes()
                .split(|b| matches!(b, b':' | b' '))
                .filter(|e| !e.is_empty() && !names_recorder(e))
                .map(|e| std::ffi::OsStr::from_bytes(e).to_owned())
                .collect()
        })
        .unwrap_or_default();
    if args.hooks != Hooks::Cupti {
        if preloadable(lib) {
            // First in the preload list: the library's entry points are the ones the program
            // finds.
            preload.insert(0, lib.as_os_str().to_owned());
        } else {
            eprintln!(
                "rr-tui record: {} cannot be preloaded (ld.so splits LD_PRELOAD at colons and spaces): \
                 recording through CUPTI's callbacks",
                rr_format::text::visible_path(lib)
            );
        }
    }
    if preload.is_empty() {
        cmd.env_remove("LD_PRELOAD");
    } else {
        cmd.env("LD_PRELOAD", preload.join(std::ffi::OsStr::new(":")));
    }
    // An injection of the recorder left over in the environment would cost what not injecting
    // it saves; another tool's stays.
    if !injects(args, lib)
        && std::env::var_os("CUDA_INJECTION64_PATH")
            .is_some_and(|v| names_recorder(v.as_encoded_bytes()))
    {
        cmd.env_remove("CUDA_INJECTION64_PATH");
    }
    // Ctrl-C reaches the program too (same process group): let it decide, and report after.
    let interrupted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, interrupted.clone());
    // SIGTERM and SIGHUP reach only us: pass them on, then wait for the program as usual.
    let pending = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in FORWARDED {
        let _ = signal_hook::flag::register_usize(sig, pending.clone(), sig as usize);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::io(Path::new(&args.app[0]), e))?;
    let progress = Progress::new(std::io::stderr().is_terminal());
    let status = loop {
        progress.poll(&sock);
        let sig = pending.swap(0, std::sync::atomic::Ordering::Relaxed);
        if sig != 0 {
            forward(&child, sig as i32);
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(Error::io(Path::new(&args.app[0]), e)),
        }
    };
    // Last words of the recorder (its exit report) may still be in the socket.
    sock.set_nonblocking(true)
        .map_err(|e| Error::io(&sock_path, e))?;
    progress.poll(&sock);
    progress.summary(dir);
    progress.warnings(dir);
    if args.report {
        print_report(&dir.join("report.txt"));
    }
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Send `sig` to the program (it may have exited meanwhile: nothing to do then).
fn forward(child: &std::process::Child, sig: i32) {
    let pid = rustix::process::Pid::from_child(child);
    if let Some(sig) = rustix::process::Signal::from_named_raw(sig) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

/// `--report`: the report file, read as every reader reads record files (a regular file of a
/// plausible size: a FIFO or a link to a device left in the directory is refused, not waited on).
fn print_report(path: &Path) {
    if std::fs::symlink_metadata(path).is_err() {
        return; // no report: the summary above says why
    }
    match rr_format::fsio::read_limited(path, rr_format::fsio::MAX_REPORT_BYTES, "report") {
        Ok(bytes) => output::lines(String::from_utf8_lossy(&bytes).lines()),
        Err(e) => output::error(&format!("--report: {e}")),
    }
}
