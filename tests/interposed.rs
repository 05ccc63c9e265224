//! The preloaded recorder end to end on a stand-in CUDA driver (`tests/tools/fake_libcuda.c`:
//! every call succeeds, nothing is computed) and a driver-API program (`tests/tools/
//! driver_app.c`) that finds the driver through `dlsym` and `cuGetProcAddress`: with every hook
//! interposed (the default), the recorder starts at the program's `cuInit` without CUDA
//! injecting it, sees the allocations, the module and library loads (an image passed by
//! pointer, without its length) and the launches through its own entry points, ties the
//! library's kernel to the library's image, and writes instances whose image is exactly the
//! file the program loaded. With `--hooks mixed` (CUPTI needed, none here) it says
//! once why it does not record and the program runs unchanged.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

const CUBIN: &str = "record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin";

/// A PTX image defining a kernel of the same name as the cubin's: a second library the
/// recorder must not take the first library's kernel from.
const OTHER_PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry rr_stencil3d()\n{\n\tret;\n}\n";

/// The recorder library as `cargo test` built it (`deps/`, which it refreshes).
fn recorder() -> std::path::PathBuf {
    Path::new(env!("CARGO_BIN_EXE_rr-tui")).with_file_name("deps/librr_recorder.so")
}

fn record(driver: &Path, app: &Path, dir: &Path, hooks: &str) -> std::process::Output {
    let cubin = Path::new(env!("CARGO_MANIFEST_DIR")).join(CUBIN);
    let other = driver.join("other.ptx");
    std::fs::write(&other, OTHER_PTX).unwrap();
    Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(["record", "--no-fingerprints", "--hooks", hooks, "--dir"])
        .arg(dir)
        .arg("--")
        .arg(app)
        .arg(&cubin)
        .arg("5")
        .arg(&other)
        .env("LD_LIBRARY_PATH", driver)
        .output()
        .unwrap()
}

#[test]
fn the_preloaded_recorder_sees_everything_through_its_entry_points() {
    let driver = fake_driver();
    let app = build_c("driver_app.c", driver.path(), "driver_app", &[]);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("recs");
    let out = record(driver.path(), &app, &dir, "interpose");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout == "ok\n",
        "{stdout}\n{stderr}"
    );
    let report = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    assert!(
        report.contains("everything was seen through the recorder's own driver entry points"),
        "{report}"
    );
    assert!(stderr.contains("6 seen"), "{stderr}");
    // Two instances (the first launch of each configuration: the module's kernel, the first
    // library's), both from the cubin: the later library's PTX defines a kernel of the same
    // name, and only asking the driver which library the launched kernel came from tells them
    // apart.
    let json: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(json.len(), 2, "{stderr}");
    let images: Vec<_> = std::fs::read_dir(dir.join("images"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(images.len(), 1);
    let cubin = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(CUBIN)).unwrap();
    assert_eq!(
        std::fs::read(&images[0]).unwrap(),
        cubin,
        "the image by its own length"
    );
    for j in &json {
        let out = Command::new(env!("CARGO_BIN_EXE_rr-tui"))
            .arg("inspect")
            .arg(j)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("rr_stencil3d"),
            "{text}"
        );
    }
}

#[test]
fn without_cupti_the_mixed_hooks_say_why_and_the_program_runs_unchanged() {
    let driver = fake_driver();
    let app = build_c("driver_app.c", driver.path(), "driver_app", &[]);
    let t = tempfile::tempdir().unwrap();
    let out = record(driver.path(), &app, &t.path().join("recs"), "mixed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
    let why: Vec<_> = stderr
        .lines()
        .filter(|l| l.contains("not recording"))
        .collect();
    assert_eq!(why.len(), 1, "{stderr}");
    assert!(why[0].contains("libcupti"), "{stderr}");
}

/// The recorder's exported `dlsym` sees every lookup of the process; another preloaded tool's
/// `dlsym(RTLD_NEXT, …)` must still find what comes after *that tool*, and a lookup of a driver
/// function in the global scope (the recorder's own export comes first) must reach the driver.
#[test]
fn other_preloaded_tools_and_global_lookups_still_work() {
    let driver = fake_driver();
    let tool = build_c(
        "next_tool.c",
        driver.path(),
        "libnext_tool.so",
        &["-shared", "-fPIC"],
    );
    let recorder = recorder();
    let preload = format!("{}:{}", recorder.display(), tool.display());
    let out = Command::new("sh")
        .args(["-c", "echo $$"])
        .env("LD_PRELOAD", &preload)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", out);
    let script = "import ctypes; ctypes.CDLL('libcuda.so.1'); print(ctypes.CDLL(None).cuInit(0))";
    let out = Command::new("python3")
        .args(["-c", script])
        .env("LD_PRELOAD", &recorder)
        .env("LD_LIBRARY_PATH", driver.path())
        .env("RR_TUI_RECORD_DIR", driver.path().join("recs"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "0\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A library opened with `RTLD_LOCAL` finds its dependency's symbols in the default scope with
/// the recorder preloaded, as without it.
#[test]
fn default_scope_lookups_keep_their_callers_place() {
    let t = tempfile::tempdir().unwrap();
    let dep = build_c(
        "scope_dep.c",
        t.path(),
        "libscope_dep.so",
        &["-shared", "-fPIC"],
    );
    let plugin = build_c(
        "scope_plugin.c",
        t.path(),
        "libscope_plugin.so",
        &[
            "-shared",
            "-fPIC",
            "-Wl,-rpath,$ORIGIN",
            dep.to_str().unwrap(),
        ],
    );
    let main = build_c("scope_main.c", t.path(), "scope_main", &[]);
    for preload in [None, Some(recorder())] {
        let mut cmd = Command::new(&main);
        cmd.arg(&plugin);
        if let Some(p) = &preload {
            cmd.env("LD_PRELOAD", p);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "preload {preload:?}: {out:?}");
    }
}

/// The recorder starts inside the program's first `cuInit` while another thread holds the
/// loader's lock (in `dlopen`, running a constructor that calls `cuInit` and so waits for that
/// start): starting must not need the lock.
#[test]
fn starting_inside_cuinit_never_waits_for_the_loader() {
    let driver = fake_driver();
    let ctor = build_c(
        "lock_ctor.c",
        driver.path(),
        "liblock_ctor.so",
        &["-shared", "-fPIC"],
    );
    let app = build_c(
        "lock_app.c",
        driver.path(),
        "lock_app",
        &["-rdynamic", "-pthread"],
    );
    let mut child = Command::new(&app)
        .arg(&ctor)
        .env("LD_PRELOAD", recorder())
        .env("LD_LIBRARY_PATH", driver.path())
        .env("RR_TUI_RECORD_DIR", driver.path().join("recs"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the program deadlocked in cuInit");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}

/// Preloaded into a program that records nothing, the library is invisible: a lookup that
/// misses leaves libc's own error text (Python's ctypes crashed, exit 139, when it was empty),
/// and with no driver installed a driver function is not there (it was the recorder's export,
/// so programs probing for CUDA took their GPU path).
#[test]
#[cfg_attr(rr_gpu, ignore = "needs a machine without a CUDA driver")]
fn without_a_driver_the_preloaded_library_is_invisible() {
    let script = "import ctypes\nd = ctypes.CDLL(None)\ntry:\n    getattr(d, 'cuTotally_fake')\nexcept AttributeError as e:\n    print('miss:', e)\nfor n in ('cuInit', 'cuLaunchKernel', 'cuGetProcAddress', 'cuMemAlloc_v2', 'cuModuleLoadData'):\n    print(n, hasattr(d, n))";
    let run = |preload: Option<&Path>| {
        let mut c = Command::new("python3");
        c.args(["-c", script]).env_remove("LD_PRELOAD");
        if let Some(p) = preload {
            c.env("LD_PRELOAD", p);
        }
        c.output().unwrap()
    };
    let plain = run(None);
    let preloaded = run(Some(&recorder()));
    assert!(plain.status.success(), "{plain:?}");
    assert_eq!(preloaded.status.code(), Some(0), "{preloaded:?}");
    let (a, b) = (
        String::from_utf8_lossy(&plain.stdout),
        String::from_utf8_lossy(&preloaded.stdout),
    );
    assert!(a.contains("miss: ") && a.contains("cuInit False"), "{a}");
    assert_eq!(b, a, "preloaded, the lookups answer as without the library");
}
