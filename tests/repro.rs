//! `rr-tui repro`: the reproducers of the bundled records (files, hard links, `--pack`), the
//! refusals, and the generated programs themselves: repro.cpp built with g++ and RUN against
//! the stand-in driver (tests/tools/fake_libcuda.c with FAKE_CUDA_MEMORY: device memory holds
//! bytes), so the test sees which addresses it reserves and maps, which geometry and parameter
//! bytes it launches, and that it says verified / FAILED with the right exit status; repro.py
//! checked by `python3 -m py_compile`. The GPU run is tests/gpu/repro-suite.sh.

mod common;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    c
}

const STENCIL: &str = "3844743599784193033_15987061097491423463.json";
const CUBIN: &str = "record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin";

fn stencil(dir: &str) -> PathBuf {
    fixture(dir).join(STENCIL)
}

fn repro(descriptor: &Path, out: &Path, extra: &[&str]) -> String {
    let o = rr()
        .arg("repro")
        .arg(descriptor)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "repro failed: {err}");
    String::from_utf8(o.stdout).unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// Whether `a` and `b` are the same file (a hard link).
fn same_file(a: &Path, b: &Path) -> bool {
    let (a, b) = (std::fs::metadata(a).unwrap(), std::fs::metadata(b).unwrap());
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[test]
fn a_format_1_record_gets_a_program_a_makefile_a_readme_and_its_snapshots_linked() {
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let out = rec.parent().unwrap().join("repro");
    let json = rec.join(STENCIL);
    let said = repro(&json, &out, &[]);
    assert!(
        said.contains("2 hard-linked, 0 copied, 2 written"),
        "{said}"
    );
    assert_eq!(names(&out), ["Makefile", "README.txt", "data", "repro.cpp"]);
    assert_eq!(
        names(&out.join("data")),
        ["globals.bin", "input.bin", "kernel.cubin", "output.bin"]
    );
    let stem = STENCIL.trim_end_matches(".json");
    // The snapshots are the record's own files (same file system: hard links, no copy).
    assert!(same_file(
        &out.join("data/input.bin"),
        &rec.join(format!("{stem}.record_input"))
    ));
    assert!(same_file(
        &out.join("data/output.bin"),
        &rec.join(format!("{stem}.record_output"))
    ));
    assert_eq!(
        std::fs::read(out.join("data/kernel.cubin")).unwrap(),
        std::fs::read(rec.join("images/kernels-sm90.cubin")).unwrap()
    );
    // globals.bin: the recorded values one after the other (g_scale 4 B, c_bias 32 B).
    assert_eq!(
        std::fs::read(out.join("data/globals.bin")).unwrap().len(),
        36
    );
    let cpp = std::fs::read_to_string(out.join("repro.cpp")).unwrap();
    assert!(cpp.contains("#include <cuda.h>") && !cpp.contains("@@RECORD@@"));
    assert!(cpp.contains("const char KERNEL_NAME[] = \"rr_stencil3d\";"));
    assert!(
        cpp.contains("{0x7f611c000000ull, 0x4000000ull}"),
        "the reservation"
    );
    let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
    for want in [
        concat!("rr-tui ", env!("CARGO_PKG_VERSION"), " (commit "),
        "repro ",
        "--out",
        "kernel rr_stencil3d",
        "cubin, sm_90",
        "g++ -O2 -std=c++17 repro.cpp -I$CUDA_HOME/include -L$CUDA_HOME/lib64/stubs -lcuda -o repro",
        "--image other.cubin",
        "nvcc -cubin",
    ] {
        assert!(readme.contains(want), "README.txt lacks {want:?}:\n{readme}");
    }
    let make = std::fs::read_to_string(out.join("Makefile")).unwrap();
    assert!(make.contains("-lcuda -o repro"), "{make}");
}

#[test]
fn a_format_2_record_links_each_blob_once_and_python_is_valid_python() {
    let (_t, rec) = fixture_copy("rrtui-v2-stencil3d");
    let out = rec.parent().unwrap().join("py");
    let said = repro(&rec.join(STENCIL), &out, &["--python"]);
    assert!(said.contains("4 hard-linked"), "{said}");
    assert_eq!(names(&out), ["README.txt", "data", "repro.py"]);
    // Segments 0 and 2 are unchanged by the kernel: their output blob is their input blob.
    let data = names(&out.join("data"));
    assert_eq!(data.len(), 6, "{data:?}");
    for blob in data.iter().filter(|n| n.len() == 32) {
        assert!(same_file(
            &out.join("data").join(blob),
            &rec.join("blobs").join(blob)
        ));
    }
    let py = std::fs::read_to_string(out.join("repro.py")).unwrap();
    assert!(py.contains("KERNEL_NAME = b\"rr_stencil3d\"") && !py.contains("@@RECORD@@"));
    assert!(std::fs::read_to_string(out.join("README.txt"))
        .unwrap()
        .contains("pip install cuda-python"));
    let compiled = std::process::Command::new("python3")
        .args(["-m", "py_compile"])
        .arg(out.join("repro.py"))
        .status();
    match compiled {
        Ok(s) => assert!(s.success(), "repro.py does not compile"),
        Err(e) => panic!("python3 does not run ({e})"),
    }
}

/// repro.py that cannot run says so in one line with exit status 2 (trouble, as README.txt
/// says), never 1 (a result that differs): without cuda-python (`python3 -S`: no site-packages),
/// and with bindings that find no driver. `--help` and bad arguments need no bindings.
#[test]
fn the_python_reproducer_that_cannot_run_exits_2_in_one_line() {
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let out = rec.parent().unwrap().join("py");
    repro(&rec.join(STENCIL), &out, &["--python"]);
    let script = out.join("repro.py");
    let python = |args: &[&str], path: Option<&Path>| {
        let mut c = std::process::Command::new("python3");
        c.arg("-S").arg(&script).args(args);
        if let Some(p) = path {
            c.env("PYTHONPATH", p);
        }
        c.output()
    };
    let help = python(&["--help"], None).expect("python3 runs");
    assert_eq!(help.status.code(), Some(0), "{help:?}");
    assert!(String::from_utf8_lossy(&help.stdout).contains("--repetitions"));
    let one_line = |o: &std::process::Output, says: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("Traceback"), "{err}");
    };
    one_line(
        &python(&[], None).unwrap(),
        "repro: cuda-python is not installed",
    );
    one_line(
        &python(&["--repetitions", "abc"], None).unwrap(),
        "not a whole number from 0",
    );
    // Bindings whose driver cannot be loaded (as cuda-python's DynamicLibNotFoundError).
    let fake = rec.parent().unwrap().join("fake-bindings");
    std::fs::create_dir_all(fake.join("cuda/bindings")).unwrap();
    std::fs::write(fake.join("cuda/__init__.py"), "").unwrap();
    std::fs::write(fake.join("cuda/bindings/__init__.py"), "").unwrap();
    std::fs::write(
        fake.join("cuda/bindings/driver.py"),
        "class DynamicLibNotFoundError(Exception):\n    pass\n\n\
         def cuEventElapsedTime(*a):\n    pass\n\n\
         def cuInit(flags):\n    raise DynamicLibNotFoundError('libcuda.so.1 not found')\n",
    )
    .unwrap();
    one_line(
        &python(&[], Some(&fake)).unwrap(),
        "repro: no CUDA driver found (DynamicLibNotFoundError: libcuda.so.1 not found)",
    );
}

#[test]
fn pack_writes_one_archive_of_the_data() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("packed");
    let said = repro(
        &fixture("llvm16-saxpy").join("rr_saxpy.json"),
        &out,
        &["--pack", "--image", CUBIN],
    );
    assert!(said.contains("in data.tar"), "{said}");
    assert_eq!(
        names(&out),
        ["Makefile", "README.txt", "data.tar", "repro.cpp"]
    );
    let mut archive = tar::Archive::new(std::fs::File::open(out.join("data.tar")).unwrap());
    let mut entries: Vec<(String, u64)> = archive
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.path().unwrap().display().to_string(), e.size())
        })
        .collect();
    entries.sort();
    let cubin = std::fs::metadata(CUBIN).unwrap().len();
    assert_eq!(
        entries,
        [
            ("data/globals.bin".to_string(), 0),
            ("data/input.bin".to_string(), 8192),
            ("data/kernel.cubin".to_string(), cubin),
            ("data/output.bin".to_string(), 8192),
        ]
    );
    let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
    assert!(readme.contains("tar xf data.tar"), "{readme}");
    assert!(readme.contains("LLVM 16–17"), "the legacy layout is named");
    // What --pack wrote is said: copies in the archive, not links to the record's files.
    assert!(!readme.contains("hard links"), "{readme}");
    assert!(
        readme.contains("written\ninto data.tar by rr-tui repro --pack"),
        "{readme}"
    );
}

#[test]
fn an_existing_folder_a_link_and_a_file_at_out_are_refused_naming_the_path() {
    let t = tempfile::tempdir().unwrap();
    let json = stencil("rrtui-stencil3d");
    let busy = t.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("mine.txt"), "keep").unwrap();
    rr().arg("repro")
        .arg(&json)
        .arg("--out")
        .arg(&busy)
        .assert()
        .failure()
        .stderr(predicate::str::contains(busy.display().to_string()))
        .stderr(predicate::str::contains("--force"));
    assert_eq!(names(&busy), ["mine.txt"], "nothing written");
    // --force writes beside what is there and keeps it.
    repro(&json, &busy, &["--force"]);
    assert!(busy.join("repro.cpp").exists() && busy.join("mine.txt").exists());
    // A link is never written through, even with --force.
    let target = t.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for force in [false, true] {
        let mut c = rr();
        c.arg("repro").arg(&json).arg("--out").arg(&link);
        if force {
            c.arg("--force");
        }
        c.assert()
            .failure()
            .stderr(predicate::str::contains("symbolic link"));
    }
    assert!(
        names(&target).is_empty(),
        "nothing written through the link"
    );
    // A data folder that is a link is refused too (it would be written through).
    let out = t.path().join("trap");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&target, out.join("data")).unwrap();
    rr().arg("repro")
        .arg(&json)
        .arg("--out")
        .arg(&out)
        .arg("--force")
        .assert()
        .failure();
    assert!(names(&target).is_empty(), "nothing written through data/");
    let file = t.path().join("file");
    std::fs::write(&file, "x").unwrap();
    rr().arg("repro")
        .arg(&json)
        .arg("--out")
        .arg(&file)
        .assert()
        .failure()
        .stderr(predicate::str::contains("not a folder"));
}

#[test]
fn records_a_reproducer_cannot_reproduce_are_refused_in_one_line_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    // LLVM 19–22: the argument values are lost.
    let llvm19 = fixture("llvm19-saxpy").join("rr_saxpy.json");
    one_line_refusal(&llvm19, &t.path().join("a"), "argument");
    // Texture objects, a hostile descriptor, no recorded output.
    let (_c, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let text = std::fs::read_to_string(&json).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // A texture over segment 0 whose handle (7) is parameter 2's word (capture.rs does the same).
    v["Objects"] = serde_json::json!([{
        "Offset": 16, "Kind": "texture", "Handle": "7",
        "Resource": {"Type": "linear", "Addr": v["Segments"][0]["Addr"].clone(), "Format": 32,
                     "Channels": 1, "Size": 4096},
        "Texture": {"AddressMode": [1, 1, 1], "FilterMode": 0, "Flags": 0, "MaxAnisotropy": 0,
                    "MipmapFilterMode": 0, "MipmapLevelBias": 0, "MinMipmapLevelClamp": 0,
                    "MaxMipmapLevelClamp": 0, "BorderColor": [0, 0, 0, 0]}
    }]);
    let hex = v["ParamBuffer"].as_str().unwrap().to_string();
    v["ParamBuffer"] = format!("{}0700000000000000{}", &hex[..32], &hex[48..]).into();
    std::fs::write(&json, v.to_string()).unwrap();
    one_line_refusal(&json, &t.path().join("b"), "texture or surface objects");
    std::fs::write(
        &json,
        text.replace("\"Grid\":[2,2,4]", "\"Grid\":[2,\"x\",4]"),
    )
    .unwrap();
    one_line_refusal(&json, &t.path().join("c"), STENCIL);
    std::fs::write(&json, &text).unwrap();
    let stem = STENCIL.trim_end_matches(".json");
    std::fs::remove_file(rec.join(format!("{stem}.record_output"))).unwrap();
    one_line_refusal(&json, &t.path().join("d"), "nothing to verify against");
    for out in ["a", "b", "c", "d"] {
        assert!(!t.path().join(out).exists(), "{out}: nothing written");
    }
}

fn one_line_refusal(json: &Path, out: &Path, says: &str) {
    let o = rr()
        .arg("repro")
        .arg(json)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{} was accepted", json.display());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(says), "{err}");
    // The descriptor, or the instance's file that is wrong.
    let stem = json.file_stem().unwrap().to_string_lossy();
    assert!(err.contains(stem.as_ref()), "names the file: {err}");
}

/// Where a real cuda.h is: `RR_TUI_CUDA_INCLUDE`, `$CUDA_HOME/include`, /usr/local/cuda.
fn real_cuda_include() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(std::env::var_os("RR_TUI_CUDA_INCLUDE").map(PathBuf::from));
    candidates.extend(std::env::var_os("CUDA_HOME").map(|h| PathBuf::from(h).join("include")));
    candidates.push("/usr/local/cuda/include".into());
    candidates.into_iter().find(|d| d.join("cuda.h").is_file())
}

/// Build `out/repro.cpp` with g++ against `include`, linked with the stand-in driver in `lib`.
fn build(out: &Path, include: &Path, lib: &Path) -> Option<PathBuf> {
    let exe = out.join("repro");
    let status = std::process::Command::new("g++")
        .args(["-O1", "-std=c++17", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(out.join("repro.cpp"))
        .arg(format!("-I{}", include.display()))
        .arg(format!("-L{}", lib.display()))
        .arg("-lcuda")
        .status();
    match status {
        Ok(s) => {
            assert!(s.success(), "g++ repro.cpp against {}", include.display());
            Some(exe)
        }
        Err(e) => panic!("g++ does not run ({e}): build.rs found it, so this test is not ignored"),
    }
}

/// Run a built reproducer on the stand-in driver: exit status, stdout, the driver's log.
fn run(exe: &Path, lib: &Path, params: bool) -> (i32, String, String) {
    let log = exe.with_file_name("driver.log");
    let _ = std::fs::remove_file(&log);
    let mut c = std::process::Command::new(exe);
    c.args(["--repetitions", "3"])
        .env("LD_LIBRARY_PATH", lib)
        .env("FAKE_CUDA_MEMORY", "1")
        .env("FAKE_CUDA_LOG", &log);
    if params {
        c.env("FAKE_CUDA_LOG_PARAMS", "1");
    }
    let o = c.output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.is_empty(), "stderr: {err}");
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    (o.status.code().unwrap_or(-1), said, log)
}

/// The generated program, built and run against the stand-in driver: it reserves and maps the
/// recorded ranges, launches with the recorded geometry and parameter bytes, and says FAILED
/// (exit 1) when the memory after the "kernel" (which does nothing) is not the recorded output,
/// verified (exit 0) when it is.
#[test]
#[cfg_attr(rr_no_cxx, ignore = "needs g++")]
fn the_cpp_reproducer_builds_and_runs_on_the_stand_in_driver() {
    let lib = fake_driver();
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let out = rec.parent().unwrap().join("cpp");
    repro(&json, &out, &[]);
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
    let mut headers = vec![mini];
    headers.extend(real_cuda_include());
    for include in headers {
        let Some(exe) = build(&out, &include, lib.path()) else {
            return;
        };
        // A count that is no number is refused (strtoul read "abc" as 0 repetitions).
        for bad in ["abc", "-3", "5x"] {
            let o = std::process::Command::new(&exe)
                .args(["--repetitions", bad])
                .env("LD_LIBRARY_PATH", lib.path())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
            assert!(
                err.contains(&format!("--repetitions {bad}: not a whole number from 0")),
                "{err}"
            );
        }
        let (code, said, log) = run(&exe, lib.path(), true);
        assert_eq!(code, 1, "{said}");
        assert!(
            said.contains("FAILED: ") && said.contains("bytes differ from the recorded output"),
            "{said}"
        );
        // Timed as replay times: the clock probe after every launch (the stand-in's says 1980 MHz).
        assert!(said.contains(
            "kernel time over 3 repetitions: min 10.000 us, median 10.000 us (SM clock median 1980 MHz)"
        ), "{said}");
        assert!(
            log.starts_with("reserve 0x7f611c000000 0x4000000\nmap 0x7f611c800000 0x200000\n"),
            "{log}"
        );
        // The recorded parameter buffer, parameter by parameter (ParamBuffer in the descriptor).
        let launch = "launch grid=2,2,4 block=8,8,4 shared=0 params=0040801c617f0000,\
                      0000801c617f0000,0080801c617f0000,10000000,10000000,10000000";
        assert_eq!(
            log.matches(launch).count(),
            4,
            "one checked, 3 timed:\n{log}"
        );
        assert_eq!(
            log.matches("launch grid=1,1,1 block=1,1,1").count(),
            3,
            "the holds"
        );
    }
    // The same record whose output is its input: the do-nothing kernel verifies.
    let stem = STENCIL.trim_end_matches(".json");
    std::fs::copy(
        rec.join(format!("{stem}.record_input")),
        rec.join(format!("{stem}.record_output")),
    )
    .unwrap();
    let out = rec.parent().unwrap().join("same");
    repro(&json, &out, &[]);
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
    let exe = build(&out, &include, lib.path()).unwrap();
    let (code, said, _) = run(&exe, lib.path(), false);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("verified: 33024 bytes in 3 segments equal the recorded output"),
        "{said}"
    );
}

/// Format 2 and LLVM records run the same way: each segment read from its own blob, the LLVM
/// region reserved at its VAllocAddr.
#[test]
#[cfg_attr(rr_no_cxx, ignore = "needs g++")]
fn blob_and_llvm_reproducers_restore_every_segment() {
    let lib = fake_driver();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
    let t = tempfile::tempdir().unwrap();
    let llvm = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    for (json, reserve) in [
        (
            stencil("rrtui-v2-stencil3d"),
            "reserve 0x7f611c000000 0x4000000",
        ),
        (llvm, "reserve 0x153940000000 0x10000000"),
    ] {
        let out = t.path().join(json.file_name().unwrap());
        repro(&json, &out, &[]);
        let Some(exe) = build(&out, &include, lib.path()) else {
            return;
        };
        let (code, said, log) = run(&exe, lib.path(), false);
        assert_eq!(code, 1, "the stand-in kernel computes nothing: {said}");
        assert!(said.contains("FAILED"), "{said}");
        assert!(log.starts_with(reserve), "{log}");
    }
}

/// On another file system the recorded files are copied (a hard link cannot cross): checked
/// where /dev/shm is one (Linux), skipped elsewhere.
#[test]
fn data_on_another_file_system_is_copied() {
    let shm = Path::new("/dev/shm");
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let other = shm.is_dir()
        && std::fs::metadata(shm).unwrap().dev() != std::fs::metadata(&rec).unwrap().dev();
    let Some(t) = other.then(|| tempfile::tempdir_in(shm).ok()).flatten() else {
        eprintln!("no second file system: copies not checked");
        return;
    };
    let out = t.path().join("repro");
    let said = repro(&rec.join(STENCIL), &out, &[]);
    assert!(said.contains("0 hard-linked, 2 copied"), "{said}");
    let stem = STENCIL.trim_end_matches(".json");
    assert_eq!(
        std::fs::read(out.join("data/output.bin")).unwrap(),
        std::fs::read(rec.join(format!("{stem}.record_output"))).unwrap()
    );
}

/// A kernel name that would end a string literal, a line or a comment in the generated
/// programs stays inside its literal: both still compile, and the name reaches the driver
/// byte for byte.
#[test]
fn a_hostile_kernel_name_cannot_escape_the_generated_source() {
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let hostile = "k\\\"); abort(); /* \\n */ // ??/";
    let text = std::fs::read_to_string(&json).unwrap().replace(
        "\"Name\":\"rr_stencil3d\"",
        &format!("\"Name\":\"{hostile}\""),
    );
    std::fs::write(&json, text).unwrap();
    let name: String = serde_json::from_str(&format!("\"{hostile}\"")).unwrap();
    for python in [false, true] {
        let out = rec.parent().unwrap().join(format!("hostile-{python}"));
        let mut flags = vec![];
        if python {
            flags.push("--python");
        }
        repro(&json, &out, &flags);
        let (tool, args): (&str, Vec<String>) = if python {
            ("python3", vec!["-c".into(), format!(
                "import ast,sys; t=ast.parse(open(sys.argv[1]).read()); \
                 v=[n.value.value for n in t.body if isinstance(n, ast.Assign) and getattr(n.targets[0], 'id', '') == 'KERNEL_NAME']; \
                 sys.exit(0 if v == [sys.argv[2].encode()] else 1)"),
                out.join("repro.py").display().to_string(), name.clone()])
        } else {
            let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
            (
                "g++",
                vec![
                    "-std=c++17".into(),
                    "-fsyntax-only".into(),
                    "-Wall".into(),
                    "-Werror".into(),
                    format!("-I{}", mini.display()),
                    out.join("repro.cpp").display().to_string(),
                ],
            )
        };
        match std::process::Command::new(tool).args(&args).status() {
            Ok(s) => assert!(s.success(), "{tool} on the program with a hostile name"),
            Err(e) => panic!("{tool} does not run: {e}"),
        }
    }
}

/// The Python reproducer on NVIDIA's cuda-python, run against the stand-in driver (cuda-python
/// resolves every call through cuGetProcAddress, which the stand-in answers by name): where a
/// python3 with `cuda.bindings` is found (`RR_TUI_TEST_PYTHON`, else `python3`); ignored
/// where build.rs finds none (CI installs it).
#[test]
#[cfg_attr(
    rr_no_cuda_python,
    ignore = "needs cuda-python (pip install cuda-bindings)"
)]
fn the_python_reproducer_runs_on_the_stand_in_driver_where_cuda_python_is() {
    let python = std::env::var("RR_TUI_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has = std::process::Command::new(&python)
        .args(["-c", "import cuda.bindings.driver"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        has,
        "{python} cannot import cuda.bindings.driver (build.rs found it for python3: set RR_TUI_TEST_PYTHON to one that can)"
    );
    let lib = fake_driver();
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let stem = STENCIL.trim_end_matches(".json");
    for same in [false, true] {
        if same {
            std::fs::copy(
                rec.join(format!("{stem}.record_input")),
                rec.join(format!("{stem}.record_output")),
            )
            .unwrap();
        }
        let out = rec.parent().unwrap().join(format!("py-{same}"));
        repro(&json, &out, &["--python"]);
        let log = out.join("driver.log");
        let o = std::process::Command::new(&python)
            .arg(out.join("repro.py"))
            .args(["--repetitions", "2"])
            .env("LD_LIBRARY_PATH", lib.path())
            .env("FAKE_CUDA_MEMORY", "1")
            .env("FAKE_CUDA_LOG", &log)
            .env("FAKE_CUDA_LOG_PARAMS", "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(
            o.status.code(),
            Some(if same { 0 } else { 1 }),
            "{said}{err}"
        );
        let verdict = if same {
            "verified: 33024 bytes"
        } else {
            "FAILED: "
        };
        assert!(said.contains(verdict), "{said}");
        assert!(said.contains("kernel time over 2 repetitions"), "{said}");
        assert!(said.contains("(SM clock median 1980 MHz)"), "{said}");
        assert!(
            log.starts_with("reserve 0x7f611c000000 0x4000000\nmap 0x7f611c800000 0x200000\n"),
            "{log}"
        );
        assert_eq!(
            log.matches("launch grid=2,2,4 block=8,8,4 shared=0 params=0040801c617f0000,")
                .count(),
            3,
            "{log}"
        );
    }
    // A driver offering another address in the first process: a fresh one gets it.
    let o = std::process::Command::new(&python)
        .arg(rec.parent().unwrap().join("py-true").join("repro.py"))
        .args(["--repetitions", "2"])
        .env("LD_LIBRARY_PATH", lib.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .env("FAKE_CUDA_REFUSE_HINT", "1")
        .env_remove("RR_REPRO_ATTEMPT")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("starting afresh (1 of 3)"), "{err}");
    assert!(!err.contains("(2 of 3)"), "{err}");
}

/// Page-locked host memory (a segment of kind `host`, far from the device memory) is mapped
/// at its recorded address, restored and compared like the rest: a byte changed in its recorded
/// output is the first difference, at its host address.
#[test]
#[cfg_attr(rr_no_cxx, ignore = "needs g++")]
fn host_memory_is_restored_and_compared_at_its_recorded_address() {
    let lib = fake_driver();
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let host = 0x7f70_0000_0000u64;
    v["Segments"][2]["Kind"] = "host".into();
    v["Segments"][2]["Addr"] = host.into();
    v["VAllocSize"] = (host + 256 - v["VAllocAddr"].as_u64().unwrap()).into();
    std::fs::write(&json, v.to_string()).unwrap();
    let stem = STENCIL.trim_end_matches(".json");
    let mut output = std::fs::read(rec.join(format!("{stem}.record_input"))).unwrap();
    output[32768 + 5] ^= 0xff; // byte 5 of the host segment
    std::fs::write(rec.join(format!("{stem}.record_output")), output).unwrap();
    let out = rec.parent().unwrap().join("host");
    repro(&json, &out, &[]);
    let cpp = std::fs::read_to_string(out.join("repro.cpp")).unwrap();
    assert!(
        cpp.contains("{0x7f7000000000ull, 0x1000ull}"),
        "the host page"
    );
    assert!(cpp.contains("{0x7f7000000000ull, 256ull, true, \"input.bin\", 32768ull"));
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
    let Some(exe) = build(&out, &include, lib.path()) else {
        return;
    };
    let (code, said, _) = run(&exe, lib.path(), false);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("FAILED: 1 of 33024 bytes differ from the recorded output (the first at 0x7f7000000005)"),
        "{said}"
    );
}

/// `--tolerance f32:…`: an element within it verifies (and is counted), one beyond it fails,
/// in both programs; a type the programs do not implement is refused.
#[test]
#[cfg_attr(rr_no_cxx, ignore = "needs g++")]
fn a_tolerance_passes_close_floats_and_fails_far_ones() {
    let lib = fake_driver();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
    let python = std::env::var("RR_TUI_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let cuda_python = std::process::Command::new(&python)
        .args(["-c", "import cuda.bindings.driver"])
        .output()
        .is_ok_and(|o| o.status.success());
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let stem = STENCIL.trim_end_matches(".json");
    let input = std::fs::read(rec.join(format!("{stem}.record_input"))).unwrap();
    for (factor, verified) in [(1.0001f32, true), (1.5, false)] {
        // The output is the input with one float of segment 0 scaled.
        let mut output = input.clone();
        let f32_at = |at: usize| f32::from_le_bytes(output[at..at + 4].try_into().unwrap());
        let at = (0..16384)
            .step_by(4)
            .find(|&at| f32_at(at).is_normal())
            .expect("a nonzero float in segment 0");
        let x = f32_at(at);
        output[at..at + 4].copy_from_slice(&(x * factor).to_le_bytes());
        std::fs::write(rec.join(format!("{stem}.record_output")), &output).unwrap();
        let out = rec.parent().unwrap().join(format!("tol-{verified}"));
        repro(&json, &out, &["--tolerance", "f32:rtol=1e-3"]);
        let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
        assert!(readme.contains("Verification: f32 elements"), "{readme}");
        let want = match verified {
            true => "verified: 33024 bytes in 3 segments equal the recorded output (1 elements within the tolerance)".to_string(),
            false => format!("FAILED: 4 of 33024 bytes differ from the recorded output beyond the tolerance (the first at {:#x})", 0x7f611c800000u64 + at as u64),
        };
        if let Some(exe) = build(&out, &include, lib.path()) {
            let (code, said, _) = run(&exe, lib.path(), false);
            assert_eq!(code, if verified { 0 } else { 1 }, "{said}");
            assert!(said.contains(&want), "{said}");
        }
        if cuda_python {
            let py = rec.parent().unwrap().join(format!("tol-py-{verified}"));
            repro(&json, &py, &["--tolerance", "f32:rtol=1e-3", "--python"]);
            let o = std::process::Command::new(&python)
                .arg(py.join("repro.py"))
                .args(["--repetitions", "1"])
                .env("LD_LIBRARY_PATH", lib.path())
                .env("FAKE_CUDA_MEMORY", "1")
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&o.stdout);
            assert!(
                said.contains(&want),
                "{said}{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    rr().arg("repro")
        .arg(&json)
        .arg("--out")
        .arg(rec.parent().unwrap().join("i32"))
        .args(["--tolerance", "i32:atol=1"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("f32 or f64"));
}

/// A driver that offers another address than the recorded one (its own mappings sit there in
/// this process's layout): the reproducer starts afresh, at most 3 times, saying so, and
/// verifies once a fresh process gets the address; past 3 it refuses in one line.
#[test]
#[cfg_attr(rr_no_cxx, ignore = "needs g++")]
fn a_taken_address_starts_the_reproducer_afresh_at_most_three_times() {
    let lib = fake_driver();
    let (_t, rec) = fixture_copy("rrtui-stencil3d");
    // The stand-in driver's kernel does nothing: an output equal to the input verifies.
    let stem = STENCIL.trim_end_matches(".json");
    std::fs::copy(
        rec.join(format!("{stem}.record_input")),
        rec.join(format!("{stem}.record_output")),
    )
    .unwrap();
    let out = rec.parent().unwrap().join("cpp");
    repro(&rec.join(STENCIL), &out, &[]);
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/cuda_min");
    let Some(exe) = build(&out, &mini, lib.path()) else {
        return;
    };
    let run_refusing = |processes: &str| {
        let o = std::process::Command::new(&exe)
            .args(["--repetitions", "2"])
            .env("LD_LIBRARY_PATH", lib.path())
            .env("FAKE_CUDA_MEMORY", "1")
            .env("FAKE_CUDA_REFUSE_HINT", processes)
            .env_remove("RR_REPRO_ATTEMPT")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            err,
        )
    };
    let (code, said, err) = run_refusing("2");
    assert_eq!(code, Some(0), "{said}{err}");
    assert!(said.contains("verified: "), "{said}");
    assert!(
        err.contains("starting afresh (1 of 3)") && err.contains("starting afresh (2 of 3)"),
        "{err}"
    );
    assert!(!err.contains("(3 of 3)"), "{err}");
    let (code, _, err) = run_refusing("9");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("starting afresh (3 of 3)"), "{err}");
    assert!(
        err.contains("could not reserve the recorded address"),
        "{err}"
    );
    assert_eq!(err.matches("starting afresh").count(), 3, "{err}");
}
