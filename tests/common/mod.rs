//! Shared helpers: copies of the committed fixtures in temporary directories, so tests can
//! corrupt them freely.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("record-fixtures")
        .join(name)
}

pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// A temporary copy of a fixture directory.
pub fn fixture_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join(name);
    copy_dir(&fixture(name), &d);
    (t, d)
}

/// The descriptor of the first instance (sorted by file name) whose kernel is `kernel`.
pub fn descriptor_of(dir: &Path, kernel: &str) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v.into_iter()
        .find(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains(&format!("\"Name\":\"{kernel}\""))
        })
        .expect("kernel in fixture")
}

/// Write `dir/report.txt`: LLVM's report of the directory's instances (1.5 µs, 3 occurrences
/// each), then `trailer` (rr-tui's recorder lines).
pub fn write_report(dir: &Path, trailer: &str) {
    let rows: Vec<rr_format::report::ReportRow> = rr_format::RecordDir::open(dir)
        .unwrap()
        .report_rows()
        .0
        .into_iter()
        .map(|r| rr_format::report::ReportRow {
            time_ns: Some(1500),
            occurrences: Some(3),
            ..r
        })
        .collect();
    let text = rr_format::report::render("/tmp/recorded/here", &rows) + trailer;
    std::fs::write(dir.join("report.txt"), text).unwrap();
}

/// A C file of `tests/tools` built with `cc` into `dir` (`-shared` for a library).
pub fn build_c(source: &str, dir: &Path, output: &str, flags: &[&str]) -> PathBuf {
    let out = dir.join(output);
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tools")
        .join(source);
    let built = std::process::Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&out)
        .arg(&source)
        .args(flags)
        .arg("-ldl")
        .status()
        .expect("a C compiler (cc) builds the test's helper");
    assert!(built.success(), "cc {}", source.display());
    out
}

/// The stand-in driver (`tests/tools/fake_libcuda.c`), built into a temporary directory as
/// `libcuda.so.1` (with `libcuda.so` beside it): put the directory on `LD_LIBRARY_PATH`.
pub fn fake_driver() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    build_c(
        "fake_libcuda.c",
        dir.path(),
        "libcuda.so.1",
        &["-shared", "-fPIC"],
    );
    std::os::unix::fs::symlink("libcuda.so.1", dir.path().join("libcuda.so")).unwrap();
    dir
}
