//! Headless commands on the committed fixtures and on corrupted copies of them: exact output
//! formats, one-line errors naming the file, exit codes, and never a panic (exit 101).

mod common;
// build.rs's own rule for the commit `--version` names (this test reads the commit only).
#[allow(dead_code)]
#[path = "../build/version.rs"]
mod version;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;
use std::path::Path;

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    // No config file of the person running the tests (one that does not exist, absolute).
    c.env("XDG_CONFIG_HOME", "/nonexistent/rr-tui-tests");
    c
}

#[test]
fn report_prints_llvm_format_from_the_report_file() {
    let out = rr()
        .args(["report"])
        .arg(fixture("llvm-two-kernels"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "=== Kernel Record Report ===");
    // LLVM's lines exactly as the report file has them (the fixture was made elsewhere).
    assert_eq!(lines[1], "Directory: /tmp/fx/llvm-two-kernels");
    assert_eq!(lines[2], "Total Instances: 4");
    assert_eq!(
        lines[3],
        "JSON Filename, Kernel Name, Time (ns), Occurrences:"
    );
    assert_eq!(
        lines[4],
        "8683979482637550046_13526365365894479501.json, rr_saxpy, 20813, 2"
    );
    assert_eq!(lines[8], "=== End Kernel Record Report ===");
    let file = std::fs::read_to_string(fixture("llvm-two-kernels").join("report.txt")).unwrap();
    assert!(
        file.contains(&lines[..9].join("\n")),
        "LLVM's lines differ from the file's"
    );
}

/// A record directory moved since it was recorded (the fixture was recorded in /tmp/fx) needs
/// nothing done: `report` prints the report as it is, nothing on stderr, and after LLVM's end
/// banner one `rr-tui:` line saying that `Directory:` is where it was recorded and where its
/// files are read from (a path that does not exist must not read as a mistake); `--json` says
/// both. Where it was recorded, no such line.
#[test]
fn report_of_a_moved_directory_says_where_it_was_recorded() {
    let dir = fixture("llvm-two-kernels");
    let file = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    let here = std::fs::canonicalize(&dir).unwrap();
    let note = format!(
        "rr-tui: Directory: is where this was recorded; its files are read from {}\n",
        here.display()
    );
    rr().arg("report")
        .arg(&dir)
        .assert()
        .success()
        .stdout(format!("{file}{note}"))
        .stderr("");
    let out = rr().arg("report").arg(&dir).arg("--json").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["directory"], here.display().to_string());
    assert_eq!(v["recorded_directory"], "/tmp/fx/llvm-two-kernels");
    // Read where it was recorded: the report alone.
    let (_t, copy) = fixture_copy("llvm-two-kernels");
    let copy = std::fs::canonicalize(&copy).unwrap();
    let at_home = file.replace("/tmp/fx/llvm-two-kernels", &copy.display().to_string());
    std::fs::write(copy.join("report.txt"), &at_home).unwrap();
    rr().arg("report")
        .arg(&copy)
        .assert()
        .success()
        .stdout(at_home)
        .stderr("");
}

#[test]
fn report_without_a_report_file_is_built_from_descriptors() {
    rr().args(["report"])
        .arg(fixture("llvm-no-report"))
        .assert()
        .success()
        .stdout(predicate::str::contains(", rr_atomic_sum, ?, ?"));
    let json = rr()
        .args(["report", "--json"])
        .arg(fixture("llvm-two-kernels"))
        .output()
        .unwrap()
        .stdout;
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["total_instances"], 4);
    let here = std::fs::canonicalize(fixture("llvm-two-kernels")).unwrap();
    assert_eq!(
        v["directory"],
        here.display().to_string(),
        "text and JSON agree"
    );
    assert_eq!(v["recorded_directory"], "/tmp/fx/llvm-two-kernels");
    assert_eq!(v["instances"][0]["occurrences"], 2);
}

#[test]
fn inspect_decodes_arguments_globals_and_image() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    rr().arg("inspect")
        .arg(&d)
        .assert()
        .success()
        .stdout(predicate::str::contains("Kernel       rr_saxpy"))
        .stdout(predicate::str::contains("dyn_ptr sentinel"))
        .stdout(predicate::str::contains("→ segment 0 + 0x4000"))
        .stdout(predicate::str::contains("g_scale  4 B"))
        .stdout(predicate::str::contains("CUDA ELF cubin, sm_90"));
    let rr3 = descriptor_of(&fixture("rrtui-stencil3d"), "rr_stencil3d");
    rr().args(["inspect", "--json"])
        .arg(&rr3)
        .assert()
        .success()
        .stdout(predicate::function(|out: &str| {
            let v: serde_json::Value = serde_json::from_str(out).unwrap();
            v["grid"] == serde_json::json!([2, 2, 4]) && v["kernel"] == "rr_stencil3d"
        }));
}

#[test]
fn check_passes_on_every_committed_fixture() {
    for name in ["llvm-two-kernels", "llvm-no-report", "rrtui-stencil3d"] {
        rr().args(["check", "--strict"])
            .arg(fixture(name))
            .assert()
            .success()
            .stdout(predicate::str::contains("0 error(s), 0 warning(s)"));
    }
}

/// Corrupt one file of a copy of the fixture and expect `check` to name it.
fn corrupt(what: &str, edit: impl FnOnce(&Path), expect_file_ext: &str, expect: &str) {
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let json = descriptor_of(&dir, "rr_saxpy");
    edit(&json);
    let out = rr().arg("check").arg(&dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{what}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains(expect))
        .unwrap_or_else(|| panic!("{what}: no line with {expect:?} in\n{stdout}"));
    assert!(line.contains(expect_file_ext), "{what}: {line}");
}

fn rewrite_json(json: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(json, v.to_string()).unwrap();
}

#[test]
fn check_names_the_file_and_the_problem_for_each_corruption() {
    corrupt(
        "truncated snapshot",
        |j| {
            let p = j.with_extension("record_input");
            let b = std::fs::read(&p).unwrap();
            std::fs::write(&p, &b[..b.len() - 3]).unwrap();
        },
        ".record_output",
        "but .record_input is",
    );
    corrupt(
        "truncated globals",
        |j| {
            let p = j.with_extension("globals");
            let b = std::fs::read(&p).unwrap();
            std::fs::write(&p, &b[..b.len() - 5]).unwrap();
        },
        ".globals",
        "truncated",
    );
    corrupt(
        "JSON garbage",
        |j| std::fs::write(j, "{\"Name\": [").unwrap(),
        ".json",
        "invalid JSON",
    );
    corrupt(
        "missing key",
        |j| {
            rewrite_json(j, |v| {
                v.as_object_mut().unwrap().remove("NumThreads");
            })
        },
        ".json",
        "failed to read JSON integer NumThreads",
    );
    corrupt(
        "mistyped key",
        |j| rewrite_json(j, |v| v["Name"] = 5.into()),
        ".json",
        "failed to read JSON string Name",
    );
    corrupt(
        "NumArgs mismatch",
        |j| rewrite_json(j, |v| v["NumArgs"] = 9.into()),
        ".json",
        "NumArgs is 9 but ArgPtrs lists 5",
    );
    corrupt(
        "impossible size",
        |j| rewrite_json(j, |v| v["VAllocSize"] = (1u64 << 62).into()),
        ".json",
        "larger than any GPU",
    );
    corrupt(
        "output length",
        |j| {
            let p = j.with_extension("record_output");
            let mut b = std::fs::read(&p).unwrap();
            b.extend_from_slice(&[0; 16]);
            std::fs::write(&p, b).unwrap();
        },
        ".record_output",
        "but .record_input is",
    );
    corrupt(
        "not a device image",
        |j| {
            std::fs::write(
                j.with_extension("image"),
                b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0rest",
            )
            .unwrap()
        },
        ".image",
        "not a device image",
    );
    corrupt(
        "report row names a missing file",
        |j| {
            std::fs::remove_file(j).unwrap();
        },
        "report.txt",
        "which is not in the directory",
    );
}

#[test]
fn damaged_legacy_records_name_the_missing_key() {
    // Read as the LLVM 18–22 layout it claims to be (tests/legacy.rs covers intact ones).
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("kern.json"),
        r#"{"Name":"kern","NumArgs":1,"BumpAllocVAStart":1,"ArgPtrs":[1],"ArgOffsets":[0]}"#,
    )
    .unwrap();
    std::fs::write(t.path().join("kern.memory"), [0u8; 16]).unwrap();
    rr().arg("check")
        .arg(t.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "kern.json: error: failed to read JSON integer NumTeamsClause",
        ));
    // A descriptor that cannot be read is the input's fault: exit 2, as in every command.
    rr().arg("inspect")
        .arg(t.path().join("kern.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "kern.json: failed to read JSON integer NumTeamsClause",
        ));
}

#[test]
fn missing_paths_are_one_line_errors() {
    rr().args(["report", "/nonexistent/dir"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "rr-tui: error: /nonexistent/dir: ",
        ));
    rr().args(["inspect", "/nonexistent/x.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/x.json"));
}

#[test]
fn diff_files_like_cmp() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let (i, o) = (
        d.with_extension("record_input"),
        d.with_extension("record_output"),
    );
    rr().arg("diff")
        .arg(&i)
        .arg(&i)
        .assert()
        .code(0)
        .stdout(predicate::str::ends_with("identical\n"));
    rr().arg("diff")
        .arg(&i)
        .arg(&o)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("in 1 range(s)"))
        .stdout(predicate::str::contains("0x0000004004"));
    rr().arg("diff")
        .arg(&i)
        .arg(&o)
        .args(["--tolerance", "f32:atol=2"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "0 of 8 192 f32 elements beyond tolerance, 4 091 within tolerance",
        ))
        .stdout(predicate::str::ends_with("equal within tolerance\n"));
    rr().arg("diff")
        .arg(&i)
        .arg(&o)
        .args(["--tolerance", "f32:rtol=1e-9"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "4 091 of 8 192 f32 elements beyond tolerance",
        ));
    rr().arg("diff")
        .arg(&i)
        .arg("/nonexistent")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent"));
    rr().arg("diff")
        .arg(&i)
        .arg(&o)
        .args(["--tolerance", "f33"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown element type \"f33\""));
}

/// The byte count is the number of bytes that differ, as `cmp -l` counts them.
fn differing_bytes(a: &Path, b: &Path) -> usize {
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    a.iter().zip(&b).filter(|(x, y)| x != y).count()
}

#[test]
fn diff_counts_differing_bytes_exactly() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    std::fs::write(&a, [0u8; 4096]).unwrap();
    let mut two = [0u8; 4096];
    two[100] = 1;
    two[108] = 1; // 8 apart: one merged range, two differing bytes
    std::fs::write(&b, two).unwrap();
    rr().arg("diff")
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "2 of 4 096 bytes differ (2 B) in 1 range(s)",
        ));
    let out = rr()
        .args(["diff", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            v["differing_bytes"].as_u64(),
            v["differing_ranges"].as_u64()
        ),
        (Some(2), Some(1))
    );
    assert_eq!(v["ranges"][0], serde_json::json!([100, 9]));
    // A fixture's input → output: the count `cmp -l` gives, not the length of the merged range.
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let (i, o) = (
        d.with_extension("record_input"),
        d.with_extension("record_output"),
    );
    let exact = differing_bytes(&i, &o);
    assert_eq!(exact, 14125);
    rr().arg("diff")
        .arg(&i)
        .arg(&o)
        .assert()
        .stdout(predicate::str::contains("14 125 of 32 768 bytes differ"));
}

#[test]
fn diff_reports_lengths_and_empty_files() {
    let t = tempfile::tempdir().unwrap();
    let (a, b, e) = (t.path().join("a"), t.path().join("b"), t.path().join("e"));
    std::fs::write(&a, [1u8, 2, 3, 4]).unwrap();
    std::fs::write(&b, [1u8, 2, 9]).unwrap();
    std::fs::write(&e, []).unwrap();
    rr().arg("diff")
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "lengths differ: a is 4 bytes, b is 3 bytes: 1 byte missing from b",
        ))
        .stdout(predicate::str::contains("1 of 3 common bytes differ"));
    // Missing bytes are never equal: a prefix of a file is not the file.
    std::fs::write(&b, [1u8, 2, 3]).unwrap();
    rr().arg("diff").arg(&a).arg(&b).assert().code(1);
    rr().args(["diff", "--tolerance", "u16"])
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "1 trailing byte(s) not a whole u16 element, 0 differ; 1 byte missing from b",
        ));
    rr().arg("diff")
        .arg(&e)
        .arg(&e)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("both files are empty"));
    let csv = t.path().join("ranges.csv");
    std::fs::write(&b, [1u8, 2, 9]).unwrap();
    rr().arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--export-csv")
        .arg(&csv)
        .assert()
        .code(1);
    assert_eq!(
        std::fs::read_to_string(csv).unwrap(),
        "offset,length\n2,1\n"
    );
}

/// `diff --export-csv F` writes a new file: an existing one, or a link (even dangling), is
/// refused before comparing, in one line naming it, and left as it was (exit 2: trouble).
#[test]
fn diff_export_csv_never_replaces_a_file() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    std::fs::write(&a, [1u8, 2, 3]).unwrap();
    std::fs::write(&b, [1u8, 2, 9]).unwrap();
    let (mine, victim) = (t.path().join("mine.csv"), t.path().join("victim"));
    std::fs::write(&mine, "my notes\n").unwrap();
    std::fs::write(&victim, "keep\n").unwrap();
    let (link, dangling) = (t.path().join("link.csv"), t.path().join("dangling.csv"));
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    std::os::unix::fs::symlink(t.path().join("nowhere"), &dangling).unwrap();
    for (csv, said) in [
        (&mine, "exists"),
        (&link, "is a symbolic link"),
        (&dangling, "is a symbolic link"),
    ] {
        let out = rr()
            .arg("diff")
            .arg(&a)
            .arg(&b)
            .arg("--export-csv")
            .arg(csv)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "rr-tui: error: {}: {said}; an export never replaces a file: choose another name\n",
                csv.display()
            )
        );
        assert!(out.stdout.is_empty(), "refused before comparing");
    }
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes\n");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert!(!t.path().join("nowhere").exists());
}

#[test]
fn diff_export_csv_names_the_file_given_and_fails_in_json_under_json() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    std::fs::write(&a, [1u8, 2, 3]).unwrap();
    std::fs::write(&b, [1u8, 2, 9]).unwrap();
    let csv = t.path().join("nodir/x.csv");
    rr().arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--export-csv")
        .arg(&csv)
        .assert()
        .code(2)
        .stderr(format!(
            "rr-tui: error: {}: no such file or directory\n",
            csv.display()
        ));
    // Under --json the refusal is JSON on standard output, as replay's and profile's errors are.
    let x = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let out = rr()
        .arg("diff")
        .arg(&x)
        .args(["--json", "--export-csv"])
        .arg(t.path().join("x.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let error: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["event"], "error");
    assert_eq!(error["kind"], "input");
    assert_eq!(
        error["message"],
        "--export-csv applies to two snapshot files"
    );
    let long_help = help(&["diff"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        long_help.contains("--export-csv <FILE> Write the differing ranges of two snapshot files"),
        "{long_help}"
    );
}

fn f32_file(path: &Path, values: &[f32], big_endian: bool) {
    let bytes: Vec<u8> = values
        .iter()
        .flat_map(|v| match big_endian {
            true => v.to_be_bytes(),
            false => v.to_le_bytes(),
        })
        .collect();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn diff_typed_within_tolerance_nan_and_infinity() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let xs: Vec<f32> = (0..1024).map(|i| i as f32 * 0.25 + 1.0).collect();
    let next: Vec<f32> = xs.iter().map(|x| f32::from_bits(x.to_bits() + 1)).collect();
    f32_file(&a, &xs, false);
    f32_file(&b, &next, false);
    rr().args(["diff", "--tolerance", "f32:ulp=1"])
        .arg(&a)
        .arg(&b)
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "1 024 of 4 096 bytes differ; 0 of 1 024 f32 elements beyond tolerance, 1 024 within tolerance",
        ))
        .stdout(predicate::str::ends_with("equal within tolerance\n"));
    // NaN and infinity are counted; the largest distance is over finite elements.
    f32_file(&a, &[1.0, f32::NAN, 3.0, 0.1], false);
    f32_file(&b, &[1.0, 2.0, f32::INFINITY, 0.2], false);
    let out = rr()
        .args(["diff", "--tolerance", "f32"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(text.contains("max |a-b| 0.10000000149011612, 8 388 608 ULP (finite elements); 1 NaN vs number; 1 infinity vs other"), "{text}");
    assert!(
        text.contains("[1] offset 0x4: NaN vs 2") && text.contains("[3] offset 0xc: 0.1 vs 0.2"),
        "{text}"
    );
    assert!(
        !text.contains("18446744073709551615") && !text.contains("max |a-b| inf"),
        "{text}"
    );
    let json = rr()
        .args(["diff", "--tolerance", "f32", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let first = &v["typed"]["elements"]["first"];
    assert_eq!(
        (&first[0]["a"], &first[0]["b"]),
        (&"NaN".into(), &2.0.into())
    );
    assert_eq!(
        first[2]["a"],
        serde_json::json!(0.1),
        "shortest f32 digits, not 0.10000000149011612"
    );
    // Big-endian elements decode as such.
    f32_file(&a, &[1.5, 2.0], true);
    f32_file(&b, &[1.5, -2.0], true);
    rr().args(["diff", "--tolerance", "f32:endian=big"])
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("[1] offset 0x4: 2 vs -2"));
}

#[test]
fn tolerance_flags_need_a_type_that_has_them() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let (i, o) = (
        d.with_extension("record_input"),
        d.with_extension("record_output"),
    );
    for (flags, says) in [
        (&["--ulp", "1"][..], "--ulp needs --type"),
        (
            &["--type", "i32", "--ulp", "1"][..],
            "--ulp needs a float --type",
        ),
        (&["--atol", "1"][..], "--atol needs --type"),
        (
            &["--type", "f32", "--rtol=-1"][..],
            "--rtol must be a finite non-negative number",
        ),
    ] {
        rr().arg("diff")
            .arg(&i)
            .arg(&o)
            .args(flags)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
        rr().arg("diff").arg(&d).args(flags).assert().code(2);
    }
}

#[test]
fn diff_of_a_descriptor_labels_arguments() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    rr().arg("diff")
        .arg(&d)
        .args(["--tolerance", "f32"])
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("input → output: different\n"))
        .stdout(predicate::str::contains(
            "argument 1 (0x153940000000): all 4 096 f32 elements equal",
        ))
        .stdout(predicate::str::contains(
            "argument 0 (0x153940004000): 14 125 of 16 384 bytes differ; 4 091 of 4 096 f32 elements beyond tolerance, 0 within tolerance, first at index 1",
        ))
        .stdout(predicate::str::ends_with("different: input → output\n"));
}

/// With a tolerance the pairs may be equal only within it: the last line says so as each
/// pair's line does, never a bare `equal` that reads as byte for byte.
#[test]
fn diff_of_a_descriptor_within_tolerance_says_so_in_its_summary() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    rr().arg("diff")
        .arg(&d)
        .args(["--tolerance", "f32:atol=2"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "input → output: equal within tolerance\n",
        ))
        .stdout(predicate::str::ends_with("\nequal within tolerance\n"));
    // Two instances whose descriptors are equal and whose snapshots are equal within it.
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let a = descriptor_of(&dir, "rr_saxpy");
    let b = dir.join("copy.json");
    std::fs::copy(&a, &b).unwrap();
    std::fs::copy(a.with_extension("globals"), b.with_extension("globals")).unwrap();
    std::fs::copy(a.with_extension("image"), b.with_extension("image")).unwrap();
    std::fs::copy(
        a.with_extension("record_input"),
        b.with_extension("record_input"),
    )
    .unwrap();
    std::fs::copy(
        a.with_extension("record_output"),
        b.with_extension("record_output"),
    )
    .unwrap();
    let mut output = std::fs::read(b.with_extension("record_output")).unwrap();
    output[0x4100] ^= 1; // the lowest mantissa bit of one f32: one ULP
    std::fs::write(b.with_extension("record_output"), &output).unwrap();
    rr().arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--tolerance", "f32:ulp=1"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("output: equal within tolerance\n"))
        .stdout(predicate::str::ends_with("\nequal within tolerance\n"));
    rr().arg("diff")
        .arg(&a)
        .arg(&a)
        .args(["--tolerance", "f32:ulp=1"])
        .assert()
        .code(0)
        .stdout(predicate::str::ends_with("\nequal\n"));
}

#[test]
fn a_truncated_output_is_missing_bytes_not_equal_ones() {
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let d = descriptor_of(&dir, "rr_saxpy");
    let out = d.with_extension("record_output");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&out)
        .unwrap()
        .set_len(1000)
        .unwrap();
    let name = out.file_name().unwrap().to_string_lossy().to_string();
    rr().arg("diff")
        .arg(&d)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "31 768 bytes missing from {name}"
        )))
        .stdout(predicate::str::contains(format!(
            "argument 0 (0x153940004000): all 16 384 bytes missing from {name}"
        )))
        .stdout(predicate::str::contains(format!(
            "argument 1 (0x153940000000): all 1 000 bytes equal; 15 384 bytes missing from {name}"
        )));
    let json = rr().args(["diff", "--json"]).arg(&d).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["equal"], false);
    assert_eq!(v["pairs"][0]["missing_bytes"], 31768);
    assert_eq!(v["pairs"][0]["regions"][1]["missing_b"], 16384);
    // Recorded without output: said so, with the recording option.
    std::fs::remove_file(&out).unwrap();
    rr().arg("diff")
        .arg(&d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("{name}: missing")))
        .stderr(predicate::str::contains("LIBOMPTARGET_RECORD_OUTPUT=false"));
}

#[test]
fn diff_of_a_descriptor_checks_a_saved_replay_too() {
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let d = descriptor_of(&dir, "rr_saxpy");
    let mut replayed = std::fs::read(d.with_extension("record_output")).unwrap();
    replayed[0x4100] ^= 1;
    std::fs::write(d.with_extension("replay_output"), &replayed).unwrap();
    rr().arg("diff")
        .arg(&d)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "output → replay output: different",
        ))
        .stdout(predicate::str::contains(
            "argument 0 (0x153940004000): 1 of 16 384 bytes differ, first at offset 0x4100",
        ))
        .stdout(predicate::str::ends_with(
            "different: input → output, output → replay output\n",
        ));
}

#[test]
fn diff_of_two_instances_compares_fields_and_snapshots() {
    let dir = fixture("llvm-two-kernels");
    let x = dir.join("8683979482637550046_13526365365894479501.json");
    let y = dir.join("8683979482637550046_6547468769535274944.json");
    rr().arg("diff")
        .arg(&x)
        .arg(&y)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "descriptor: 2 of 27 fields differ",
        ))
        .stdout(predicate::str::contains("  grid   8×1×1 → 16×1×1"))
        .stdout(predicate::str::contains("  block  128×1×1 → 64×1×1"))
        .stdout(predicate::str::contains("input: different"))
        .stdout(predicate::str::contains("output: different"))
        .stdout(predicate::str::ends_with(
            "different: descriptor, input, output\n",
        ));
    let out = rr()
        .args(["diff", "--json"])
        .arg(&x)
        .arg(&y)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["descriptor"]["changes"][0]["field"], "grid");
    assert_eq!(
        v["descriptor"]["changes"][0]["a"],
        serde_json::json!([8, 1, 1])
    );
    assert_eq!(v["pairs"].as_array().unwrap().len(), 2);
    assert_eq!(v["pairs"][1]["what"], "output");
    rr().arg("diff")
        .arg(&x)
        .arg(&x)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("descriptor: all 27 fields equal"))
        // Two globals in the file: two compared, not three "fields".
        .stdout(predicate::str::contains("globals: all 2 equal"))
        .stdout(predicate::str::ends_with("\nequal\n"));
    rr().arg("diff")
        .arg(&x)
        .arg(x.with_extension("record_input"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "two descriptors (A.json B.json) or two snapshot files",
        ));
}

/// Between the globals and the snapshots, the decoded descriptors line by line (`inspect`'s
/// text without its paths), in unified form; hunks of numbered lines in --json; one line when
/// they read the same. The verdict and the exit status stay the fields' and the snapshots'.
#[test]
fn diff_of_two_instances_shows_the_decoded_descriptors_line_by_line() {
    let dir = fixture("llvm-two-kernels");
    let x = dir.join("8683979482637550046_13526365365894479501.json");
    let y = dir.join("8683979482637550046_6547468769535274944.json");
    let out = rr().arg("diff").arg(&x).arg(&y).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let expected = format!(
        "globals: all 2 equal
descriptor text: 1 line removed, 1 added
--- A {}
+++ B {}
@@ -1,6 +1,6 @@
 Format       LLVM offload
 Kernel       rr_saxpy
-Geometry     grid 8×1×1, block 128×1×1, dynamic shared memory 0 B
+Geometry     grid 16×1×1, block 64×1×1, dynamic shared memory 0 B
 Limits       teams unrestricted, threads [1, 1024]
 Trip count   4096    Device 0
 Region       0x153940000000 + 256 MiB reserved
input: different
",
        x.display(),
        y.display()
    );
    assert!(text.contains(&expected), "{text}");
    // Not a terminal: no colour.
    assert!(!text.contains('\x1b'));
    let out = rr()
        .args(["diff", "--json"])
        .arg(&x)
        .arg(&y)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["descriptor_text"];
    assert_eq!(
        (t["old_lines"].as_u64(), t["new_lines"].as_u64()),
        (Some(23), Some(23))
    );
    let hunk = &t["hunks"][0];
    assert_eq!(
        (
            &hunk["old_start"],
            &hunk["old_len"],
            &hunk["new_start"],
            &hunk["new_len"]
        ),
        (&1.into(), &6.into(), &1.into(), &6.into())
    );
    assert_eq!(
        hunk["lines"][2],
        serde_json::json!({"tag": "delete", "old_line": 3, "new_line": null,
            "text": "Geometry     grid 8×1×1, block 128×1×1, dynamic shared memory 0 B"})
    );
    assert_eq!(
        hunk["lines"][3],
        serde_json::json!({"tag": "insert", "old_line": null, "new_line": 3,
            "text": "Geometry     grid 16×1×1, block 64×1×1, dynamic shared memory 0 B"})
    );
    assert_eq!(hunk["lines"][0]["tag"], "equal");
    assert_eq!(v["equal"], false);
    // The same instance: one line, and no hunks.
    let out = rr().arg("diff").arg(&x).arg(&x).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("globals: all 2 equal\ndescriptor text: the same\ninput: equal"));
    let out = rr()
        .args(["diff", "--json"])
        .arg(&x)
        .arg(&x)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["descriptor_text"]["hunks"], serde_json::json!([]));
    // A kernel name that would drive the terminal reaches it visible.
    let (_t, copy) = fixture_copy("llvm-two-kernels");
    let y = copy.join("8683979482637550046_6547468769535274944.json");
    rewrite_json(&y, |v| v["Name"] = "rr_saxpy\u{1b}]0;owned\u{7}".into());
    let out = rr()
        .arg("diff")
        .arg(copy.join("8683979482637550046_13526365365894479501.json"))
        .arg(&y)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("\n-Kernel       rr_saxpy\n-Geometry")
            && text.contains("\n+Kernel       rr_saxpy\\x1b]0;owned\\x07\n+Geometry"),
        "{text}"
    );
    assert!(!text.contains('\x1b'));
}

#[test]
fn replay_checks_limits_before_touching_a_gpu() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    // A limit the flags break is a usage error (2), said under the binary's error prefix.
    rr().args(["replay", "--num-threads", "2000"]).arg(&d).assert().code(2).stderr(predicate::str::contains("rr-tui: error: number of threads (2000) is out of the allowed limits (min,max: 1,1024)"));
    // The flag's range is the explorer's prompt's (one parser), a usage error like any other.
    for bad in ["0", "-1", "10000001"] {
        rr().args(["replay", "--repetitions", bad])
            .arg(&d)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "is not a number of repetitions (1 to 10000000)",
            ))
            .stderr(predicate::str::contains("'-- -1'").not());
    }
    // Malformed flag values are usage errors, caught before anything else (exit 2).
    rr().args(["replay", "--tolerance", "f32:bogus=1"])
        .arg(&d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown tolerance"));
    rr().args(["replay", "--grid", "x"])
        .arg(&d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "expected X, XxY or XxYxZ with positive integers (e.g. 128x1x1)",
        ));
    // In the JSON stream, a refused replay still ends with `done`, tagged with its run.
    let out = rr()
        .args(["replay", "--json", "--run-id", "7", "--num-threads", "2000"])
        .arg(&d)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains(r#""event":"start""#) && lines[0].contains(r#""protocol":2"#),
        "{text}"
    );
    assert!(text.contains(r#""kind":"input""#), "{text}");
    assert_eq!(
        lines.last().copied().unwrap_or_default(),
        r#"{"run":7,"event":"done","ok":false}"#
    );
}

#[test]
fn replay_without_a_driver_says_so() {
    if rr_engine::replay::gpu_status().is_ok() {
        eprintln!("a CUDA driver is present here: the GPU suite covers replay");
        return;
    }
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    rr().args(["replay", "--verify"])
        .arg(&d)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no CUDA driver found"))
        // What still works, `repro` among it: its reproducer is written without a GPU.
        .stderr(predicate::str::contains(
            "browsing, inspecting, checking, diffing and writing reproducers (repro) work \
             without one\n",
        ));
}

/// The tuning screen's child exactly as the explorer starts it (`rr-tui job`, the form's
/// sweep job on its input): its events carry the explorer's run id, and a setup failure (no
/// driver here: said once, before any event) ends in an error quoting the child's stderr, then
/// `done`.
#[test]
fn the_tuning_screens_child_without_a_driver_ends_with_its_stderr() {
    use rr_engine::replay::child::ChildRun;
    use rr_engine::replay::Event;
    use std::time::Duration;
    if rr_engine::replay::gpu_status().is_ok() {
        eprintln!("a CUDA driver is present here: the GPU suite covers sweeps");
        return;
    }
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let job = rr_tui::tui::app::TuneForm::default()
        .settings
        .job(d, 41)
        .unwrap();
    let (tx, rx) = crossbeam_channel::unbounded::<rr_engine::replay::Tagged>();
    let exe = Path::new(env!("CARGO_BIN_EXE_rr-tui"));
    ChildRun::spawn_job(exe, &job, 41, "tune", tx).unwrap();
    let events: Vec<Event> = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(60)).ok())
        .inspect(|t| assert_eq!(t.run, 41))
        .map(|t| t.event)
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        matches!(&events[0], Event::Error { message, .. }
            if message.starts_with("the tune process exited with status 1 without finishing: rr-tui: error: no CUDA driver found")),
        "{events:?}"
    );
    assert_eq!(events[1], Event::Done { ok: false });
}

/// The same sweep set on the explorer's tuning form and on `rr-tui tune`'s command line is the
/// same job, field for field: what the explorer hands its tune process is what the command
/// would run.
#[test]
fn the_tuning_form_and_the_command_line_make_the_same_job() {
    use clap::Parser;
    use rr_tui::tui::app::{Field, TuneForm};
    let t = tempfile::tempdir().unwrap();
    let (src, sweep) = (t.path().join("k.cu"), t.path().join("sweep.json"));
    std::fs::write(&src, "__global__ void k() {}").unwrap();
    std::fs::write(&sweep, "{}").unwrap();
    let cli = |words: &[&str]| {
        let argv = ["rr-tui", "tune", "x.json"].iter().chain(words).copied();
        match rr_tui::cli::Cli::try_parse_from(argv).unwrap().command {
            Some(rr_tui::cli::Command::Tune(a)) => a.job().unwrap(),
            other => panic!("not tune: {other:?}"),
        }
    };
    let form = |fields: &[(Field, &str)], cold: bool, energy: Option<rr_tune::Objective>| {
        let mut f = TuneForm::default();
        for &(field, text) in fields {
            f.settings.set_text(field, text).unwrap();
        }
        f.settings.cold = cold;
        if let Some(o) = energy {
            (f.settings.objective, f.settings.energy) = (o, true);
        }
        f.settings.job("x.json".into(), 9).unwrap()
    };
    let (src_text, sweep_text) = (src.display().to_string(), sweep.display().to_string());
    let simulate = format!("simulate {sweep_text}");
    let cases: Vec<(FormCase, Vec<&str>)> = vec![
        // The form's defaults.
        (
            (vec![], true, None),
            vec!["--grid", "cover", "--block", "32..1024*2", "--cold"],
        ),
        (
            (
                vec![
                    (Field::Grid, "1..8"),
                    (Field::Block, "64,128"),
                    (Field::SharedMem, "0,1024"),
                    (Field::Registers, "32..64:32"),
                    (Field::Strategy, "tpe"),
                    (Field::Budget, "1_000"),
                    (Field::Samples, "5"),
                    (Field::Verify, "f32:rtol=1e-5"),
                    (Field::Limits, "ignored"),
                    (Field::Devices, "1,0"),
                    (Field::TimeLimit, "90"),
                    (Field::Seed, "7"),
                ],
                false,
                Some(rr_tune::Objective::Edp),
            ),
            vec![
                "--grid",
                "1..8",
                "--block",
                "64,128",
                "--shared-mem",
                "0,1024",
                "--registers",
                "32..64:32",
                "--strategy",
                "tpe",
                "--budget",
                "1000",
                "--samples",
                "5",
                "--tolerance",
                "f32:rtol=1e-5",
                "--ignore-limits",
                "--devices",
                "1,0",
                "--time-limit",
                "90",
                "--seed",
                "7",
                "--hot",
                "--objective",
                "edp",
                "--energy",
            ],
        ),
        (
            (
                vec![
                    (Field::Source, src_text.as_str()),
                    (Field::Defines, "TILE=1,2; T=float,double"),
                    (Field::Grid, "GRID_X*4/TILE"),
                    (Field::Verify, "off"),
                ],
                true,
                None,
            ),
            vec![
                "--grid",
                "GRID_X*4/TILE",
                "--block",
                "32..1024*2",
                "--source",
                &src_text,
                "-D",
                "TILE=1,2",
                "-D",
                "T=float,double",
                "--no-verify",
                "--cold",
            ],
        ),
        // Simulated: cold, tune's default, is left unsaid.
        (
            (vec![(Field::Devices, simulate.as_str())], true, None),
            vec![
                "--grid",
                "cover",
                "--block",
                "32..1024*2",
                "--simulate",
                &sweep_text,
            ],
        ),
    ];
    for ((fields, cold, energy), words) in &cases {
        let mut words = words.clone();
        words.extend(["--events", "--run-id", "9"]);
        let from_form = form(fields, *cold, *energy);
        assert_eq!(from_form, cli(&words), "{words:?}");
        // And through the child-process protocol unchanged.
        let line = rr_engine::job::encode(&from_form).unwrap();
        let decoded = rr_engine::job::decode::<rr_tune::job::TuneJob>(&line);
        assert_eq!(decoded, Ok(from_form));
    }
}

/// A tuning form's fields, its cold choice and an objective measuring energy.
type FormCase<'a> = (
    Vec<(rr_tui::tui::app::Field, &'a str)>,
    bool,
    Option<rr_tune::Objective>,
);

#[test]
fn explorer_refuses_a_pipe_with_advice() {
    rr().arg(fixture("llvm-two-kernels"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs a terminal"));
}

fn help(args: &[&str]) -> String {
    let out = rr().args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands the top-level help lists (its `Commands:` section), `help` aside.
fn subcommands() -> Vec<String> {
    let top = help(&[]);
    let listed = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    // A summary too long for its line goes on, indented deeper, on the next: not a command.
    let names: Vec<String> = listed
        .lines()
        .filter(|l| l.len() - l.trim_start().len() == 2)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 5, "{names:?}");
    names
}

/// Every `rr-tui …` line of every `--help` runs from the source tree, with the variables the
/// top-level help sets (`D=…`, `X=$D/…`): never a usage error, never a panic.
#[test]
fn every_help_example_runs_on_the_bundled_records() {
    let top = help(&[]);
    let mut vars: Vec<(String, String)> = Vec::new();
    let expand = |word: &str, vars: &[(String, String)]| {
        vars.iter()
            .fold(word.to_string(), |w, (k, v)| w.replace(&format!("${k}"), v))
    };
    for line in top.lines().map(str::trim) {
        if let Some((k, v)) = line.split_once('=') {
            if k.len() == 1 && k.chars().all(|c| c.is_ascii_uppercase()) {
                let v = expand(v, &vars);
                vars.push((k.to_string(), v));
            }
        }
    }
    assert_eq!(
        vars.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["D", "X", "Y"]
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Examples run in an empty directory (the ones that write files write there), on the
    // bundled records by absolute path.
    let cwd = tempfile::tempdir().unwrap();
    for (_, v) in vars.iter_mut() {
        if root.join(v.as_str()).exists() || root.join(format!("{v}.json")).exists() {
            *v = root.join(v.as_str()).display().to_string();
        }
    }
    let commands = subcommands();
    let mut pages = vec![top.clone()];
    pages.extend(commands.iter().map(|c| help(&[c])));
    let examples: Vec<String> = pages
        .iter()
        .flat_map(|p| p.lines())
        .filter(|l| l.starts_with("  rr-tui ")) // indented: an example, not prose
        .map(|l| l.split(" #").next().unwrap().trim().to_string())
        .collect();
    assert!(examples.len() >= 20, "{examples:?}");
    // A file an example names that is missing is one an earlier example writes (with a GPU),
    // never one no example makes: that example could not run as it is.
    let written_before = |i: usize, missing: &str| {
        examples[..i]
            .iter()
            .any(|e| e.split_whitespace().any(|w| w == missing))
    };
    for (i, example) in examples.iter().enumerate() {
        // A bundled record named by its path in the source tree, as the variables are.
        let words: Vec<String> = example
            .split_whitespace()
            .skip(1)
            .map(|w| expand(w, &vars))
            .map(|w| match w.starts_with("record-fixtures/") {
                true => root.join(&w).display().to_string(),
                false => w,
            })
            .collect();
        assert!(
            !words.iter().any(|w| w.contains('$')),
            "{example}: unknown variable"
        );
        let parsed = <rr_tui::cli::Cli as clap::Parser>::try_parse_from(
            std::iter::once("rr-tui".to_string()).chain(words.clone()),
        );
        assert!(parsed.is_ok(), "{example}: {}", parsed.unwrap_err());
        if words[0] == "record" {
            continue; // it runs the user's program on a GPU: parsed, not run
        }
        let out = rr()
            .current_dir(cwd.path())
            .args(&words)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Killed by the time limit or a signal there is no exit status: a failure too.
        assert!(
            out.status.code().is_some_and(|c| c != 101) && !stderr.contains("panicked"),
            "{example}: {:?}: {stderr}",
            out.status
        );
        if words.len() == 1 && !commands.contains(&words[0]) {
            // The explorer, from a test: no terminal, said so (exit 2 is its refusal, not usage);
            // the directory it names must be a record directory all the same.
            assert!(stderr.contains("needs a terminal"), "{example}: {stderr}");
            assert!(
                root.join(&words[0]).join("report.txt").is_file(),
                "{example}: no record here"
            );
        } else if let Some(missing) = missing_file(&stderr) {
            // A file an earlier example writes with a GPU (`--simulate all.json`): refused as
            // any missing file a flag names, whatever the status; the example's flags parsed.
            assert_eq!(stderr.lines().count(), 1, "{example}: {stderr}");
            assert!(written_before(i, missing), "{example}: {stderr}");
        } else if let Some(m) =
            json_error_message(&out.stdout).filter(|m| m.ends_with("no such file or directory"))
        {
            // The same under --json: the refusal is the `error` object on stdout.
            assert!(stderr.is_empty(), "{example}: {stderr}");
            let missing = missing_file(&m);
            assert!(
                missing.is_some_and(|f| written_before(i, f)),
                "{example}: {m}"
            );
        } else {
            assert_ne!(out.status.code(), Some(2), "{example}: {stderr}");
        }
    }
}

/// The file a one-line refusal says does not exist (`rr-tui: error: --simulate all.json: no
/// such file or directory`), as it was named (the examples' file names have no spaces).
fn missing_file(said: &str) -> Option<&str> {
    let line = said
        .trim_end()
        .strip_suffix(": no such file or directory")?;
    line.split_whitespace().last()
}

/// The message of the `error` object a command's --json prints, if that is what `stdout` is.
fn json_error_message(stdout: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    (v["event"] == "error").then(|| v["message"].as_str().unwrap_or_default().to_string())
}

/// Every option and argument line in every `--help` has a description (on its line, or on
/// the next, deeper-indented line of the long format).
#[test]
fn every_flag_has_a_description() {
    let mut pages = vec![("rr-tui".to_string(), help(&[]))];
    pages.extend(subcommands().into_iter().map(|c| (c.clone(), help(&[&c]))));
    for (page, text) in pages {
        let lines: Vec<&str> = text.lines().collect();
        let mut section = "";
        for (i, line) in lines.iter().enumerate() {
            if !line.starts_with(' ') && line.ends_with(':') {
                section = line;
                continue;
            }
            let item = line.trim_start();
            let indent = line.len() - item.len();
            let is_item = (1..=6).contains(&indent) && item.starts_with(['-', '<', '[']);
            if !matches!(section, "Options:" | "Arguments:") || !is_item {
                continue;
            }
            let same_line = item
                .split_once("  ")
                .is_some_and(|(_, d)| !d.trim().is_empty());
            let next_line = lines.get(i + 1).is_some_and(|n| {
                let t = n.trim_start();
                n.len() - t.len() > indent && !t.is_empty() && !t.starts_with('-')
            });
            assert!(
                same_line || next_line,
                "{page} --help: `{item}` has no description"
            );
        }
    }
}

/// The command line of every page of help, from the parser itself: the top level, each
/// subcommand and theirs (`tune merge`), hidden ones aside.
fn help_pages() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut deeper = path.clone();
            deeper.push(sub.get_name().to_string());
            walk(sub, deeper, out);
        }
        out.push(path);
    }
    let mut pages = Vec::new();
    walk(
        &<rr_tui::cli::Cli as clap::CommandFactory>::command(),
        vec![],
        &mut pages,
    );
    assert!(pages.len() >= 10, "{pages:?}");
    pages
}

/// `rr-tui PAGE FLAG` (-h or --help) at a fixed width.
fn help_text(page: &[String], flag: &str) -> String {
    let out = rr()
        .env("COLUMNS", "100")
        .args(page)
        .arg(flag)
        .output()
        .unwrap();
    assert!(out.status.success(), "{page:?} {flag}");
    String::from_utf8(out.stdout).unwrap()
}

/// The options and arguments a help page lists (the first word of each item line).
fn listed_flags(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let item = line.trim_start();
            let indent = line.len() - item.len();
            let is_item = (1..=6).contains(&indent) && item.starts_with(['-', '<', '[']);
            // `-D, --define <NAME>`: the long name.
            let mut words = item.split_whitespace();
            let first = words.next().unwrap_or_default();
            let name = match first.strip_suffix(',') {
                Some(_) => words.next().unwrap_or_default(),
                None => first,
            };
            is_item.then(|| name.to_string())
        })
        .collect()
}

/// `-h` is the summary clap offers: one line per flag (the explanations and examples are in
/// `--help`), every flag `--help` lists, and much shorter than `--help` where that is long.
#[test]
fn short_help_is_one_line_per_flag() {
    for page in help_pages() {
        let (short, long) = (help_text(&page, "-h"), help_text(&page, "--help"));
        assert_eq!(listed_flags(&short), listed_flags(&long), "{page:?}");
        // In a list (after a `Options:`-like heading, up to a blank line), a line indented
        // deeper than the items continues the item above it.
        let mut in_list = false;
        for line in short.lines() {
            let item = line.trim_start();
            let indent = line.len() - item.len();
            in_list = match (indent, item) {
                (_, "") => false,
                (0, heading) => heading.ends_with(':'),
                _ => in_list,
            };
            let continued = in_list && indent > 6;
            assert!(
                !continued,
                "{page:?} -h: a flag's summary runs on: {line:?}\n{short}"
            );
        }
        let (s, l) = (short.lines().count(), long.lines().count());
        assert!(s < l, "{page:?}: -h has {s} lines, --help {l}");
        if l > 60 {
            assert!(s * 2 <= l, "{page:?}: -h has {s} lines, --help {l}");
        }
    }
}

/// The long options `--NAME` a text names, each with the word before it (`replay` in
/// "as `replay --strict`"); `--a=--b` names `--a` only (`--b` is its value).
fn named_flags(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices("--") {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let starts_word =
            before.is_none_or(|b| !(b.is_ascii_alphanumeric() || b"-=_".contains(&b)));
        let name: String = text[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let name = name.trim_end_matches('-');
        if !starts_word || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        // The word before, on this line or (wrapped) the line above; none for an item that
        // starts its line, nor across a blank line.
        let mut lines = text[..at].rsplit('\n');
        let this_line = lines.next().unwrap_or_default();
        let previous = match this_line.split_whitespace().next_back() {
            Some(word) => word,
            None if this_line.len() > 6 => lines
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .next_back()
                .unwrap_or_default(),
            None => "",
        }
        .trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-');
        found.push((previous.to_string(), format!("--{name}")));
    }
    found
}

/// Every `--flag` a command's `--help` names is one its parser accepts (clap's own
/// introspection: the arguments and their aliases), unless the text names it as another
/// command's (`replay --strict`, `tune --export`: then that command must accept it) or as
/// ncu's. Examples are left to `every_help_example_runs_on_the_bundled_records`.
#[test]
fn every_flag_a_help_names_is_accepted() {
    let mut root = <rr_tui::cli::Cli as clap::CommandFactory>::command();
    root.build();
    let command = |path: &[String]| {
        path.iter().fold(root.clone(), |c, name| {
            c.find_subcommand(name).expect("a subcommand").clone()
        })
    };
    let accepts = |cmd: &clap::Command, flag: &str| {
        cmd.get_arguments().any(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .any(|long| flag == format!("--{long}"))
        })
    };
    let mut wrong = Vec::new();
    for page in help_pages() {
        let text = help_text(&page, "--help");
        // The prose: examples are run (and so parsed) by their own test.
        let prose = text.split("\nExamples").next().unwrap();
        let cmd = command(&page);
        for (previous, flag) in named_flags(prose) {
            let other: Option<Vec<String>> = match previous.as_str() {
                "ncu" => continue,
                p if root.find_subcommand(p).is_some() => Some(vec![p.to_string()]),
                "merge" => Some(vec!["tune".into(), "merge".into()]),
                _ => None,
            };
            let (whose, ok) = match other {
                Some(path) => (path.join(" "), accepts(&command(&path), &flag)),
                None => (page.join(" "), accepts(&cmd, &flag)),
            };
            if !ok {
                wrong.push(format!(
                    "`rr-tui {} --help` names {flag}, which `{whose}` refuses",
                    page.join(" ")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The rule sees what it must: a flag named as another command's, and a value that looks
    // like a flag.
    let named = named_flags(
        "as `replay --strict`, e.g. --nvrtc-opt=--use_fast_math (--x-).\n  --item\n  `ncu\n          --list-sections`",
    );
    let want = [
        ("replay", "--strict"),
        ("e.g", "--nvrtc-opt"),
        ("", "--x"),
        ("", "--item"),
        ("ncu", "--list-sections"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(p, f)| (p.to_string(), f.to_string()))
        .collect();
    assert_eq!(named, want);
}

#[test]
fn a_report_inside_a_captured_log_is_found() {
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let report = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    std::fs::remove_file(dir.join("report.txt")).unwrap();
    std::fs::write(
        dir.join("app.log"),
        format!("starting\nstep 1 ok\n{report}exit 0\n"),
    )
    .unwrap();
    rr().arg("report")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "8683979482637550046_13526365365894479501.json, rr_saxpy, 20813, 2",
        ));
    rr().args(["check", "--strict"])
        .arg(&dir)
        .assert()
        .success();
}

#[test]
fn renamed_files_are_a_hash_warning() {
    let (_t, dir) = fixture_copy("llvm-no-report");
    let json = descriptor_of(&dir, "rr_atomic_sum");
    for ext in ["json", "record_input", "record_output", "globals", "image"] {
        std::fs::rename(json.with_extension(ext), dir.join(format!("1_2.{ext}"))).unwrap();
    }
    let out = rr().arg("check").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a warning alone passes");
    assert!(String::from_utf8_lossy(&out.stdout).contains("1_2.json: warning: file name does not match the descriptor's hashes (expected 8328152611161255287_2041629724675517209.json)"));
    rr().args(["check", "--strict"]).arg(&dir).assert().code(1);
}

#[test]
fn rr_tui_records_show_by_value_parameters() {
    let d = descriptor_of(&fixture("rrtui-stencil3d"), "rr_stencil3d");
    rr().arg("inspect")
        .arg(&d)
        .assert()
        .success()
        .stdout(predicate::str::contains("= 16 (0x10), 4 bytes by value"))
        .stdout(predicate::str::contains("grid 2×2×4, block 8×8×4"));
}

/// Format 2 (content-addressed blobs) reads exactly like format 1: the committed v2 fixture is
/// the v1 fixture rewritten by tests/tools/convert_v2.py.
#[test]
fn format_2_reads_like_format_1() {
    let v1 = descriptor_of(&fixture("rrtui-stencil3d"), "rr_stencil3d");
    let v2 = fixture("rrtui-v2-stencil3d").join(v1.file_name().unwrap());
    for args in [
        &["diff"][..],
        &["diff", "--tolerance", "f32"],
        &["inspect", "--json"],
    ] {
        let out = |d: &std::path::Path| {
            let o = rr().args(args).arg(d).output().unwrap();
            // Only the names differ: v2 has no snapshot files, so diff names the descriptor.
            String::from_utf8_lossy(&o.stdout)
                .replace("rrtui-v2-stencil3d", "rrtui-stencil3d")
                .replace(".json (recorded input)", ".record_input")
                .replace(".json (recorded output)", ".record_output")
                .lines()
                .filter(|l| !l.contains("\"format_version\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        if args[0] == "diff" {
            assert_eq!(out(&v1), out(&v2), "{args:?}");
        } else {
            assert!(out(&v2).contains("\"content\""), "v2 shows its blobs");
        }
    }
    rr().args(["check", "--strict"])
        .arg(fixture("rrtui-v2-stencil3d"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "checked 2 instance(s): 0 error(s), 0 warning(s)",
        ));
    // A blob that went missing is named.
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let blob = std::fs::read_dir(dir.join("blobs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::remove_file(&blob).unwrap();
    let out = rr().arg("check").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains(&blob.file_name().unwrap().to_string_lossy().to_string()));
}

/// `record` runs the program with its output and exit status untouched, refuses a directory
/// that holds another recording, and says so when nothing used CUDA (no GPU here).
#[test]
fn record_passes_the_program_through() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("recs");
    let out = rr()
        .args(["record", "--dir"])
        .arg(&dir)
        .args(["--", "sh", "-c", "echo hello; echo oops >&2; exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("oops\n") && err.contains("nothing recorded"),
        "{err}"
    );
    rr().args(["record", "--dir"])
        .arg(fixture("llvm-two-kernels"))
        .args(["--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already holds a recording"));
    rr().args(["record", "--budget", "lots", "--dir"])
        .arg(&dir)
        .args(["--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--budget"));
    rr().args(["record", "--library", "/nonexistent.so", "--", "true"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("/nonexistent.so"));
}

/// Values the recorder would refuse stop `record` before the program starts (it used to run
/// unrecorded and exit 0), and a run leaves no empty directory behind.
#[test]
fn record_refuses_bad_values_before_running_the_program() {
    let t = tempfile::tempdir().unwrap();
    let (dir, ran) = (t.path().join("recs"), t.path().join("ran"));
    let exe = env!("CARGO_BIN_EXE_rr-tui");
    for (flag, value, said) in [
        (
            "--kernels",
            "(",
            "--kernels=\"(\": not a regular expression: unclosed group\n",
        ),
        ("--ranks", "3-1", "from low to high"),
        ("--ranks", "x", "--ranks"),
        (
            "--cupti",
            "/nonexistent/libcupti.so",
            "--cupti /nonexistent/libcupti.so: no such file",
        ),
        ("--library", exe, "not a shared library"),
        ("--occurrence", "0", "is not a whole number from 1"),
        ("--max-per-kernel", "-1", "is not a whole number from 1"),
        (
            "--dir",
            "/dev/null",
            "--dir /dev/null: exists and is not a directory",
        ),
        (
            "--dir",
            "/dev/null/sub",
            "--dir /dev/null/sub: cannot be created",
        ),
    ] {
        let mut cmd = rr();
        cmd.arg("record");
        if flag != "--dir" {
            cmd.arg("--dir").arg(&dir);
        }
        let out = cmd
            .args([flag, value, "--", "touch"])
            .arg(&ran)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(said),
            "{flag} {value}: {err}"
        );
        assert!(!ran.exists(), "{flag} {value}: the program ran");
        assert!(!dir.exists(), "{flag} {value}: left {}", dir.display());
    }
    // The same rules for the variables a launcher sets by hand.
    for (var, value, said) in [
        (
            "RR_TUI_RECORD_MAX_PER_KERNEL",
            "0",
            "RR_TUI_RECORD_MAX_PER_KERNEL=\"0\": expected a count from 1",
        ),
        (
            "RR_TUI_RECORD_OCCURRENCE",
            "0",
            "RR_TUI_RECORD_OCCURRENCE=\"0\": expected a launch number from 1",
        ),
        (
            "RR_TUI_RECORD_DEVICE",
            "-1",
            "RR_TUI_RECORD_DEVICE=\"-1\": expected a device ordinal (0 or more)",
        ),
        (
            "RR_TUI_RECORD_RANKS",
            ",",
            "RR_TUI_RECORD_RANKS=\",\": expected ranks like 0,2-5",
        ),
        // (A missing file is an I/O error: exit 1; the refusals above are usage errors.)
        (
            "RR_TUI_CUPTI",
            "/nonexistent/libcupti.so",
            "rr-tui: error: /nonexistent/libcupti.so: no such file or directory",
        ),
        (
            "RR_TUI_RECORD_STAGING",
            "1K",
            "RR_TUI_RECORD_STAGING=\"1K\": expected bytes, at least 1M",
        ),
    ] {
        rr().args(["record", "--dir"])
            .arg(&dir)
            .args(["--", "touch"])
            .arg(&ran)
            .env(var, value)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(said));
        assert!(!ran.exists(), "{var}={value}: the program ran");
    }
    // A program that is not there is named before anything starts.
    rr().args(["record", "--dir"])
        .arg(&dir)
        .args(["--", "rr-tui-no-such-program"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "rr-tui-no-such-program: no such program in PATH",
        ));
    assert!(!dir.exists());
    let script = t.path().join("not-executable.sh");
    std::fs::write(&script, "touch ran\n").unwrap();
    rr().args(["record", "--dir"])
        .arg(&dir)
        .arg("--")
        .arg(&script)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not executable"));
    // A program that starts no CUDA: the reason is stated, and no empty directory is left.
    let out = rr()
        .args(["record", "--dir"])
        .arg(&dir)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing recorded: ") && !err.contains("message is above"),
        "{err}"
    );
    assert!(!dir.exists(), "an empty {} was left", dir.display());
}

/// Without the recorder library beside it, `record` says how to build it.
#[test]
fn record_without_its_library_says_how_to_build_it() {
    let t = tempfile::tempdir().unwrap();
    let alone = t.path().join("rr-tui");
    std::fs::copy(env!("CARGO_BIN_EXE_rr-tui"), &alone).unwrap();
    // A copy just written may be busy for a moment (ETXTBSY: another test thread's fork held
    // the write descriptor while it existed): try again.
    let out = (0..20)
        .find_map(|_| {
            match std::process::Command::new(&alone)
                .args(["record", "--", "true"])
                .current_dir(t.path())
                .output()
            {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    None
                }
                other => Some(other.unwrap()),
            }
        })
        .expect("the copied binary stayed busy");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("librr_recorder.so")
            && err.contains("cargo build --release"),
        "{err}"
    );
}

/// `--report` reads the report as every reader does: a FIFO left in the directory is refused at
/// once (it used to block after the program had exited).
#[test]
fn record_report_refuses_a_fifo() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("recs");
    std::fs::create_dir(&dir).unwrap();
    let fifo = dir.join("report.txt");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    rr().args(["record", "--overwrite", "--report", "--dir"])
        .arg(&dir)
        .args(["--", "true"])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .stderr(predicate::str::contains("report.txt").and(predicate::str::contains("FIFO")))
        // Said as every error is.
        .stderr(predicate::str::contains("rr-tui: error: --report: "));
}

/// SIGTERM to `record` reaches the program, which decides how to end; `record` then exits with
/// its status and leaves no temporary directory behind.
#[test]
fn record_passes_sigterm_on_and_cleans_up() {
    use std::io::{BufRead, BufReader};
    let t = tempfile::tempdir().unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .args(["record", "--dir"])
        .arg(t.path().join("recs"))
        .args([
            "--",
            "sh",
            "-c",
            "trap 'kill $!; echo got-term; exit 7' TERM; sleep 30 & echo ready; wait",
        ])
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("record did not end after SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!((line.as_str(), status.code()), ("got-term\n", Some(7)));
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Usage mistakes get messages about what was typed: a misspelt command (not clap's `[DIR]`),
/// a negative tolerance (not clap's "use '-- -1'"), zero repetitions (with the valid range).
#[test]
fn usage_mistakes_are_named_as_typed() {
    let d = fixture("llvm-two-kernels");
    rr().arg("reprot")
        .arg(&d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `report`?"))
        .stderr(predicate::str::contains("[DIR]").not());
    rr().args(["repl", "x.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `replay`?"));
    // Help to a full disk is a failure, not success.
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .arg("--help")
        .stdout(full)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "--help > /dev/full: {status:?}");
    rr().args(["frobnicate", "a", "b"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`frobnicate` is neither a command nor a record directory",
        ));
    let x = descriptor_of(&d, "rr_saxpy");
    rr().arg("diff")
        .arg(x.with_extension("record_input"))
        .arg(x.with_extension("record_output"))
        .args(["--type", "f32", "--atol", "-1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--atol"))
        .stderr(predicate::str::contains("'-- -1'").not());
}

/// `--json` numbers a double cannot hold (a by-value double's bits, hashes) come as decimal
/// strings: jq and JavaScript would round them.
#[test]
fn json_keeps_64_bit_values_exact() {
    let d = fixture("llvm-two-kernels");
    let x = d.join("8683979482637550046_13526365365894479501.json");
    let out = rr().args(["inspect", "--json"]).arg(&x).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    fn big_numbers(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Number(n) if n.as_u64().is_some_and(|n| n > 1 << 53) => {
                out.push(at.to_string())
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    big_numbers(x, &format!("{at}[{i}]"), out);
                }
            }
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    big_numbers(x, &format!("{at}.{k}"), out);
                }
            }
            _ => {}
        }
    }
    let mut big = Vec::new();
    big_numbers(&v, "", &mut big);
    assert_eq!(big, Vec::<String>::new());
    assert_eq!(v["arguments"][4]["value"], "18446744073709551615");
    assert_eq!(v["descriptor"]["arg_ptrs"][2], "4609434218613702656");
    assert!(v["globals"][0]["xxh3"].is_string());
}

/// `report` prints a report file's own lines as they are: spacing and blank lines kept (only
/// line ends are normalised).
#[test]
fn report_keeps_the_files_lines() {
    let (_t, dir) = fixture_copy("llvm-two-kernels");
    let path = dir.join("report.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let odd = text
        .replace(
            "Directory: /tmp/fx/llvm-two-kernels",
            "Directory: /tmp/fx/llvm-two-kernels   ",
        )
        .replace("Total Instances: 4", "Total Instances:  4\n")
        .replace('\n', "\r\n");
    std::fs::write(&path, &odd).unwrap();
    let out = rr().arg("report").arg(&dir).output().unwrap();
    let shown = String::from_utf8(out.stdout).unwrap();
    let begin = odd.find("=== Kernel Record Report ===").unwrap();
    let end = odd.find("=== End Kernel Record Report ===").unwrap();
    let want: Vec<&str> = odd[begin..end].lines().collect();
    let got: Vec<&str> = shown.lines().take(want.len()).collect();
    assert_eq!(got, want);
}

/// A directory holding only the recordings `record` writes per process and rank (`pid-N/`,
/// `rank-N/`) is their union: report, check and the explorer find every instance.
#[test]
fn a_parent_directory_opens_the_recordings_below_it() {
    let t = tempfile::tempdir().unwrap();
    copy_dir(&fixture("llvm-two-kernels"), &t.path().join("pid-1234"));
    copy_dir(&fixture("rrtui-v2-stencil3d"), &t.path().join("rank-0"));
    std::fs::create_dir(t.path().join("pid-notes")).unwrap(); // not a recording's name
                                                              // A link named like a recording leads out of the directory: not followed.
    std::os::unix::fs::symlink(fixture("llvm-two-kernels"), t.path().join("pid-99")).unwrap();
    let out = rr().arg("report").arg(t.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("Total Instances: 6")
            && text.contains(
                "pid-1234/8683979482637550046_13526365365894479501.json, rr_saxpy, 20813, 2"
            )
            && text.contains("rank-0/"),
        "{text}"
    );
    rr().arg("check")
        .arg(t.path())
        .assert()
        .stdout(predicate::str::contains("checked 6 instance(s)"));
    let a = rr_tui::tui::load_app(
        t.path().to_path_buf(),
        Err("no GPU".into()),
        t.path().into(),
    )
    .unwrap();
    assert_eq!(a.rows.len(), 6);
}

/// `inspect DIR` points to the command that lists a directory's instances.
#[test]
fn inspect_of_a_directory_points_to_report() {
    rr().arg("inspect")
        .arg(fixture("llvm-two-kernels"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "inspect takes one instance's descriptor",
        ))
        .stderr(predicate::str::contains("rr-tui report"));
}

/// `record` makes its directory at the first instance, not before the program runs: a program
/// listing its working directory does not see it, and a run that records nothing leaves none.
#[test]
fn record_makes_no_directory_before_the_first_instance() {
    let cwd = tempfile::tempdir().unwrap();
    let out = rr()
        .current_dir(cwd.path())
        .args(["record", "--", "ls", "-a"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(!listed.contains("rr-records"), "{listed}");
    assert!(!cwd.path().join("rr-records").exists());
    // Where it cannot be made (under a regular file), said before the program runs.
    std::fs::write(cwd.path().join("file"), b"x").unwrap();
    rr().current_dir(cwd.path())
        .args(["record", "--dir", "file/recs", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be created"));
}

/// An instance whose snapshots may have raced is a warning: `check` exits 0, `--strict` exits 1
/// and says that the warnings fail it; `inspect` and `diff` show the race.
#[test]
fn a_raced_instance_is_a_warning_that_strict_fails() {
    let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
    let desc = descriptor_of(&dir, "rr_stencil3d");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&desc).unwrap()).unwrap();
    v["MayHaveRaced"] = "stream 0x10 had work in flight when the snapshot was taken".into();
    std::fs::write(&desc, v.to_string()).unwrap();
    rr().args(["check"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "warning: its snapshots may have raced with another stream (a replay may not verify): stream 0x10",
        ));
    rr().args(["check", "--strict"])
        .arg(&dir)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "0 error(s), 1 warning(s) (--strict: the warnings fail the check)",
        ));
    rr().args(["inspect"])
        .arg(&desc)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Races        its snapshots may have raced: stream 0x10",
        ));
}

// ------------------------------------------------------------------------------------------------
// The explorer's config file and theme files (read before it asks for a terminal, so a broken
// file is said here too)

/// `rr-tui ARGS` with `XDG_CONFIG_HOME=xdg`: its exit status and stderr.
fn with_config_home(xdg: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = rr()
        .env("XDG_CONFIG_HOME", xdg)
        .args(args)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A one-line refusal with exit status 2 that says `want`.
fn refused(result: (Option<i32>, String), want: &str) {
    let (code, stderr) = result;
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(want), "{want:?} not in {stderr}");
}

#[test]
fn a_config_file_with_an_unknown_key_or_a_bad_value_stops_the_explorer() {
    let t = tempfile::tempdir().unwrap();
    let dir = fixture("llvm-two-kernels");
    let dir = dir.to_str().unwrap();
    std::fs::create_dir(t.path().join("rr-tui")).unwrap();
    let file = t.path().join("rr-tui/config.toml");
    let file_name = file.display().to_string();
    for (text, want) in [
        ("[tune]\ngird = \"cover\"\n", "`tune.gird`: unknown key"),
        (
            "[replay]\nrepetitions = 0\n",
            "`replay.repetitions`: \"0\" is not a number of repetitions (1 to 10000000)",
        ),
        ("[tune\n", "line 1: "),
    ] {
        std::fs::write(&file, text).unwrap();
        refused(with_config_home(t.path(), &[dir]), &file_name);
        refused(with_config_home(t.path(), &[dir]), want);
        refused(with_config_home(t.path(), &["config"]), want);
        // Named by --config instead (the default place holds nothing then).
        let elsewhere = tempfile::tempdir().unwrap();
        refused(
            with_config_home(elsewhere.path(), &["--config", &file_name, dir]),
            want,
        );
    }
    // A theme file the config names, taken from the config's directory: missing, it is named;
    // with a bad colour, it and the key are named.
    std::fs::write(&file, "theme = \"light\"\ntheme_file = \"mine.toml\"\n").unwrap();
    refused(
        with_config_home(t.path(), &[dir]),
        "rr-tui/mine.toml: no such file",
    );
    std::fs::write(&file, "theme_file = \"mine.toml\"\n").unwrap();
    std::fs::write(
        t.path().join("rr-tui/mine.toml"),
        "diff_a = { bg = \"crimson\" }\n",
    )
    .unwrap();
    refused(
        with_config_home(t.path(), &[dir]),
        "rr-tui/mine.toml: `diff_a.bg`: \"crimson\" is not a colour",
    );
    // --no-config reads none of it; --theme-file names a file directly.
    let ok = with_config_home(t.path(), &["--no-config", dir]);
    assert!(ok.1.contains("needs a terminal"), "{}", ok.1);
    let theme = t.path().join("rr-tui/mine.toml").display().to_string();
    refused(
        with_config_home(t.path(), &["--no-config", "--theme-file", &theme, dir]),
        "`diff_a.bg`",
    );
}

#[test]
fn config_and_theme_files_too_large_or_not_regular_are_refused_unread() {
    let t = tempfile::tempdir().unwrap();
    let dir = fixture("llvm-two-kernels");
    let dir = dir.to_str().unwrap();
    let big = t.path().join("big.toml");
    // Comments only: valid TOML, refused for its size alone.
    std::fs::write(&big, "#".repeat(64 * 1024 + 1)).unwrap();
    let big = big.to_str().unwrap();
    refused(
        with_config_home(t.path(), &["--config", big, dir]),
        "is 65537 bytes; a config file larger than 65536 bytes",
    );
    refused(
        with_config_home(t.path(), &["--no-config", "--theme-file", big, dir]),
        "a theme file larger than 65536 bytes",
    );
    refused(
        with_config_home(t.path(), &["--config", "/dev/zero", dir]),
        "is a character device, not a regular file",
    );
    refused(
        with_config_home(t.path(), &["--config", t.path().to_str().unwrap(), dir]),
        "is a directory, not a regular file",
    );
}

#[test]
#[cfg_attr(rr_no_mkfifo, ignore = "mkfifo is not installed")]
fn a_config_file_that_is_a_fifo_or_a_link_to_one_never_blocks() {
    let t = tempfile::tempdir().unwrap();
    let dir = fixture("llvm-two-kernels");
    let dir = dir.to_str().unwrap();
    std::fs::create_dir(t.path().join("rr-tui")).unwrap();
    let fifo = t.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    // At the default place, as a link to the FIFO: refused, not opened for a blocking read.
    std::os::unix::fs::symlink(&fifo, t.path().join("rr-tui/config.toml")).unwrap();
    refused(
        with_config_home(t.path(), &[dir]),
        "is a FIFO (named pipe), not a regular file: refused",
    );
    refused(with_config_home(t.path(), &["config"]), "is a FIFO");
    let fifo = fifo.to_str().unwrap();
    refused(
        with_config_home(t.path(), &["--config", fifo, dir]),
        "is a FIFO",
    );
    refused(
        with_config_home(t.path(), &["--no-config", "--theme-file", fifo, dir]),
        "is a FIFO",
    );
}

#[test]
fn config_says_where_it_looks_and_what_is_in_effect() {
    let t = tempfile::tempdir().unwrap();
    let stdout = |xdg: &Path, home: &Path, args: &[&str]| {
        let out = rr()
            .env("XDG_CONFIG_HOME", xdg)
            .env("HOME", home)
            .arg("config")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Nothing there: the built-in defaults, the place looked at said.
    let none = stdout(t.path(), t.path(), &[]);
    let place = t.path().join("rr-tui/config.toml").display().to_string();
    assert!(
        none.contains(&format!(
            "# config file: {place} (not found: the built-in defaults)"
        )),
        "{none}"
    );
    assert!(
        none.contains("\nrepetitions = 20\n") && none.contains("\ngrid = \"cover\"\n"),
        "{none}"
    );
    // A file's values over the defaults; what is not set stays the default.
    std::fs::create_dir(t.path().join("rr-tui")).unwrap();
    std::fs::write(
        t.path().join("rr-tui/config.toml"),
        "[replay]\nrepetitions = 7\n",
    )
    .unwrap();
    let set = stdout(t.path(), t.path(), &[]);
    assert!(set.contains(&format!("# config file: {place}\n")), "{set}");
    assert!(
        set.contains("\nrepetitions = 7\n") && set.contains("\ntheme = \"dark\"\n"),
        "{set}"
    );
    assert!(stdout(t.path(), t.path(), &["--no-config"]).contains("\nrepetitions = 20\n"));
    // A relative XDG_CONFIG_HOME is ignored (the XDG rule): ~/.config is used instead.
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join(".config/rr-tui")).unwrap();
    std::fs::write(
        home.join(".config/rr-tui/config.toml"),
        "theme = \"mono\"\n",
    )
    .unwrap();
    let relative = stdout(Path::new("relative/dir"), &home, &[]);
    assert!(relative.contains("\ntheme = \"mono\"\n"), "{relative}");
    // --default is the documented default, byte for byte.
    let default = stdout(t.path(), t.path(), &["--default"]);
    let asset =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/config.toml"))
            .unwrap();
    assert_eq!(default, asset);
}

/// The commit `--version` must name: HEAD of the git checkout these sources are, `-dirty` when
/// the sources built differ from it, else "unknown" (build.rs's own rule, build/version.rs).
fn commit_built() -> String {
    match std::env::var("RR_TUI_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
    {
        Some(given) => given,
        None => version::built(Path::new(env!("CARGO_MANIFEST_DIR")))
            .map_or_else(|| "unknown".into(), |b| b.commit),
    }
}

#[test]
fn version_names_the_commit_and_what_the_build_holds() {
    let commit = commit_built();
    let long = rr()
        .arg("--version")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let long = String::from_utf8(long).unwrap();
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(
        lines[0],
        concat!("rr-tui ", env!("CARGO_PKG_VERSION")),
        "{long}"
    );
    let modified = match commit.ends_with(version::DIRTY) {
        true => " (built with uncommitted changes to its sources)",
        false => "",
    };
    assert_eq!(lines[1], format!("commit: {commit}{modified}"), "{long}");
    assert!(
        lines[2].starts_with("build: debug, ") || lines[2].starts_with("build: release, "),
        "{long}"
    );
    assert!(
        lines[3].starts_with(
            "features: built against the CUDA 13.0 driver API, runs with a driver of CUDA 12.8 \
             or newer (NVIDIA 570+); libcuda, libnvrtc"
        ),
        "{long}"
    );
    rr().arg("-V").assert().success().stdout(format!(
        "rr-tui {} (commit {commit})\n",
        env!("CARGO_PKG_VERSION")
    ));
}

#[test]
fn completions_are_written_for_bash_zsh_and_fish_from_the_parsers_definitions() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef rr-tui"),
        ("fish", "complete -c rr-tui"),
    ] {
        let out = rr()
            .args(["completions", shell])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let script = String::from_utf8(out).unwrap();
        assert!(script.contains(marker), "{shell}: {script}");
        // Every command and a flag of one: the script follows the definitions.
        for word in ["replay", "tune", "doctor", "man", "tolerance"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
        // Nothing hidden: the engine process (its description), the replay process's flags.
        for hidden in ["of `tune` (internal)", "--run-id", "--serve"] {
            assert!(!script.contains(hidden), "{shell} completes {hidden}");
        }
    }
    let bash = rr().args(["completions", "bash"]).output().unwrap().stdout;
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("rr-tui.bash"), bash).unwrap();
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(t.path().join("rr-tui.bash"))
        .status()
        .unwrap();
    assert!(syntax.success(), "bash -n refuses the script");
    rr().args(["completions", "tcsh"]).assert().code(2);
}

/// What bash offers for `words` (the last one being completed, `""` after a space): the
/// script sourced into a bash without startup files, its function called as bash's Tab would.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    const CALL: &str = r#"source "$1"; shift
function=$(complete -p rr-tui | sed -E 's/.*-F ([^ ]+).*/\1/')
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
"$function" rr-tui "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}""#;
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", CALL, "bash"])
        .arg(script)
        .args(words)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_past_the_first_word() {
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("rr-tui.bash");
    std::fs::write(
        &script,
        rr().args(["completions", "bash"]).output().unwrap().stdout,
    )
    .unwrap();
    assert_eq!(bash_completes(&script, &["rr-tui", "tu"]), ["tune"]);
    assert_eq!(
        bash_completes(&script, &["rr-tui", "tune", "--bu"]),
        ["--budget"]
    );
    assert_eq!(
        bash_completes(&script, &["rr-tui", "tune", "merge", "--allow"]),
        ["--allow-missing"]
    );
    // The flags with a fixed set of values offer it.
    assert_eq!(
        bash_completes(&script, &["rr-tui", "tune", "--strategy", ""]),
        ["exhaustive", "random", "annealing", "tpe"]
    );
    assert_eq!(
        bash_completes(&script, &["rr-tui", "tune", "--objective", "e"]),
        ["energy", "edp"]
    );
    // Old spellings (diff's --type, replay's --device-id) are taken but not offered.
    assert_eq!(
        bash_completes(&script, &["rr-tui", "diff", "--t"]),
        ["--tolerance"]
    );
    assert_eq!(
        bash_completes(&script, &["rr-tui", "replay", "--dev"]),
        ["--device"]
    );
}

#[test]
fn fixed_value_lists_accept_what_they_accepted() {
    // --tolerance's type is case-blind, as --type's was.
    let input =
        descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy").with_extension("record_input");
    rr().args(["diff", "--tolerance", "F32"])
        .arg(&input)
        .arg(&input)
        .assert()
        .success();
    rr().args(["tune", "x.json", "--strategy", "greedy"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "expected exhaustive, random, annealing or tpe",
        ));
}

#[test]
fn man_prints_one_page_or_writes_a_page_per_command() {
    let page = |words: &[&str]| {
        let out = rr()
            .arg("man")
            .args(words)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    assert!(page(&[]).contains(".TH rr-tui 1 "), "{}", page(&[]));
    let merge = page(&["tune", "merge"]);
    assert!(merge.contains(".TH rr-tui-tune-merge 1 "), "{merge}");
    assert!(
        merge.contains(&format!("commit {}", commit_built())),
        "{merge}"
    );
    let refused = rr()
        .args(["man", "nope"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let refused = String::from_utf8(refused).unwrap();
    assert_eq!(refused.lines().count(), 1, "{refused}");
    assert!(
        refused.contains("no manual page for `rr-tui nope`"),
        "{refused}"
    );

    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("man/man1");
    // A file where the directory should be is said to be one (not "File exists").
    let file = t.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    rr().args(["man", "--dir"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "notes.txt: exists and is not a directory",
        ));
    rr().args(["man", "--dir"]).arg(&dir).assert().success();
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    // A page per visible command, and per visible command of a command (`tune merge`).
    let root = <rr_tui::cli::Cli as clap::CommandFactory>::command();
    let mut expected: Vec<String> = Vec::new();
    for command in root.get_subcommands().filter(|c| !c.is_hide_set()) {
        expected.push(format!("rr-tui-{}.1", command.get_name()));
        for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
            expected.push(format!(
                "rr-tui-{}-{}.1",
                command.get_name(),
                sub.get_name()
            ));
        }
    }
    assert!(expected.len() >= 13, "{expected:?}");
    expected.push("rr-tui.1".to_string());
    expected.sort();
    assert_eq!(written, expected);
    // Written again over the pages of an earlier run, and each one reads cleanly in groff.
    rr().args(["man", "--dir"]).arg(&dir).assert().success();
    for name in &written {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(".SH NAME") && text.contains(".SH SYNOPSIS"),
            "{name}"
        );
        // Every page states the exit-status policy, from the one text of it.
        assert!(
            text.contains(&format!(".SH \"EXIT STATUS\"\n{}\n", rr_tui::EXIT_STATUS)),
            "{name}"
        );
        let Ok(groff) = std::process::Command::new("groff")
            .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
            .arg(&path)
            .output()
        else {
            continue; // no groff here: the pages' structure was checked above
        };
        assert!(
            groff.stderr.is_empty(),
            "{name}: {}",
            String::from_utf8_lossy(&groff.stderr)
        );
    }
}

/// Every manual page calls its examples EXAMPLES, and a page (or `--help`) names the top-level
/// help's variables (D, X, Y) only when its examples use them.
#[test]
fn examples_are_headed_as_such_and_name_the_variables_only_where_used() {
    let variables = "D, X, Y as in";
    for page in help_pages() {
        let help = help_text(&page, "--help");
        let Some((_, examples)) = help.split_once("Examples") else {
            continue;
        };
        let uses = ["$D", "$X", "$Y"].iter().any(|v| examples.contains(v));
        let top_level = page.is_empty();
        assert_eq!(
            examples.contains(variables),
            uses && !top_level,
            "{page:?}: {examples}"
        );
        let out = rr().arg("man").args(&page).output().unwrap();
        let roff = String::from_utf8(out.stdout).unwrap();
        assert!(
            roff.contains("\n.SH EXAMPLES\n") && !roff.contains(".SH EXTRA"),
            "{page:?}: {roff}"
        );
        assert!(!roff.contains(".SH EXAMPLES\nExamples:\n"), "{page:?}");
        assert_eq!(roff.contains(variables), uses && !top_level, "{page:?}");
    }
}

/// `rr-tui doctor`'s lines (exit 0 whatever it finds), `name state detail[; fix: …]`.
fn doctor(env: &[(&str, &Path)]) -> Vec<(String, String, String)> {
    let mut cmd = rr();
    cmd.arg("doctor").env_remove("LD_LIBRARY_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A doctor that hangs fails here rather than hanging the tests.
    let out = cmd
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| {
            // The name may hold a space (`gpu 0`): it is the first nine columns.
            let (name, rest) = l.split_at(9);
            let (state, detail) = rest.trim_start().split_once(' ').unwrap();
            (
                name.trim().to_string(),
                state.to_string(),
                detail.trim().to_string(),
            )
        })
        .collect()
}

fn finding<'a>(lines: &'a [(String, String, String)], name: &str) -> (&'a str, &'a str) {
    let (_, state, detail) = lines
        .iter()
        .find(|(n, _, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} line in {lines:?}"));
    (state, detail)
}

#[test]
fn doctor_names_the_drivers_gpus_and_finds_what_record_and_profile_would() {
    let driver = fake_driver();
    // An ncu on PATH (never run: doctor only finds it, as profile does).
    let tools = tempfile::tempdir().unwrap();
    let ncu = tools.path().join("ncu");
    std::fs::write(&ncu, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&ncu, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(tools.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let config = tempfile::tempdir().unwrap();
    let lines = doctor(&[
        ("LD_LIBRARY_PATH", driver.path()),
        ("PATH", Path::new(&path)),
        ("XDG_CONFIG_HOME", config.path()),
    ]);
    assert_eq!(finding(&lines, "driver"), ("ok", "CUDA 13.0"));
    assert_eq!(
        finding(&lines, "gpu 0"),
        ("ok", "Fake GPU, compute capability 9.0")
    );
    assert_eq!(finding(&lines, "ncu"), ("ok", ncu.to_str().unwrap()));
    // The library `record` would preload: the one the tests built beside rr-tui.
    let (state, recorder) = finding(&lines, "recorder");
    assert_eq!(state, "ok");
    assert!(
        recorder.ends_with("/librr_recorder.so") && Path::new(recorder).is_file(),
        "{recorder}"
    );
    let (state, config_line) = finding(&lines, "config");
    assert_eq!(state, "ok");
    assert!(
        config_line.contains("not found: the built-in defaults"),
        "{config_line}"
    );
    let names: Vec<&str> = lines.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "driver", "gpu 0", "ncu", "counters", "nvrtc", "cupti", "recorder", "ray", "tmux",
            "config"
        ]
    );
    // Whatever else this machine lacks, each such line says its fix.
    for (name, state, detail) in &lines {
        assert!(
            state == "ok" || detail.contains("; fix: "),
            "{name}: {detail}"
        );
    }

    let mut cmd = rr();
    let out = cmd
        .args(["doctor", "--json"])
        .env("LD_LIBRARY_PATH", driver.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["gpus"][0]["name"], "Fake GPU");
    assert_eq!(json["gpus"][0]["sm"], 90);
    assert_eq!(json["findings"][0]["name"], "driver");
    assert_eq!(json["findings"][0]["state"], "ok");
    for f in json["findings"].as_array().unwrap() {
        assert_eq!(f["fix"].is_null(), f["state"] == "ok", "{f}");
    }
    rr().args(["doctor", "--gpus"]).assert().code(2);
}

#[cfg_attr(rr_gpu, ignore = "needs a machine without a CUDA driver")]
#[test]
fn doctor_says_how_to_get_each_missing_piece() {
    // Nothing on PATH: no ncu, no python3 for Ray, no tmux; a config file with a mistake.
    let empty = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir(config.path().join("rr-tui")).unwrap();
    std::fs::write(
        config.path().join("rr-tui/config.toml"),
        "repetitions = \"many\"\n",
    )
    .unwrap();
    let lines = doctor(&[("PATH", empty.path()), ("XDG_CONFIG_HOME", config.path())]);
    let (state, driver) = finding(&lines, "driver");
    assert_eq!(state, "missing");
    assert!(
        driver.contains("libcuda.so.1 could not be loaded"),
        "{driver}"
    );
    assert!(
        driver.contains("; fix: install the NVIDIA driver"),
        "{driver}"
    );
    assert!(
        !lines.iter().any(|(n, _, _)| n.starts_with("gpu")),
        "{lines:?}"
    );
    for (name, fix) in [
        ("ncu", "; fix: install Nsight Compute"),
        ("ray", "; fix: pip install 'rr-tui[ray]'"),
        ("tmux", "; fix: install tmux"),
    ] {
        let (state, detail) = finding(&lines, name);
        assert_eq!(state, "missing", "{name}: {detail}");
        assert!(detail.contains(fix), "{name}: {detail}");
    }
    let (state, config_line) = finding(&lines, "config");
    assert_eq!(state, "broken");
    assert!(
        config_line.contains("config.toml") && config_line.contains("repetitions"),
        "{config_line}"
    );
    assert!(config_line.contains("; fix: "), "{config_line}");
}

/// doctor's config line for these flags (before or after `doctor`), and its exit status 0.
fn doctor_config_line(args: &[&str]) -> (String, String) {
    let out = rr()
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("config "))
        .unwrap_or_else(|| panic!("no config line in {text}"));
    let (state, detail) = line[9..].trim_start().split_once(' ').unwrap();
    (state.to_string(), detail.trim().to_string())
}

#[test]
fn doctor_says_a_config_file_the_explorer_refuses_is_broken() {
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir(config.path().join("rr-tui")).unwrap();
    let file = config.path().join("rr-tui/config.toml");
    std::fs::write(&file, "bogus = 1\n").unwrap();
    // The explorer's own check refuses it (exit 2), as `rr-tui config` does.
    rr().arg("config")
        .env("XDG_CONFIG_HOME", config.path())
        .assert()
        .code(2);
    let lines = doctor(&[("XDG_CONFIG_HOME", config.path())]);
    let (state, detail) = finding(&lines, "config");
    assert_eq!(state, "broken");
    assert!(
        detail.contains("`bogus`") && detail.contains("will not start until it is fixed"),
        "{detail}"
    );
    // The file named by --config, written before or after the command, as `rr-tui config` takes it.
    let file = file.to_str().unwrap();
    for args in [["doctor", "--config", file], ["--config", file, "doctor"]] {
        let (state, detail) = doctor_config_line(&args);
        assert_eq!(state, "broken", "{args:?}");
        assert!(detail.starts_with(file), "{detail}");
    }
    let (state, detail) = doctor_config_line(&["--no-config", "doctor"]);
    assert_eq!(
        (state.as_str(), detail.as_str()),
        ("ok", "none (--no-config): the built-in defaults")
    );
    rr().args(["--config", file, "config"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`bogus`: unknown key"));
}

#[test]
fn doctor_says_a_driver_stuck_in_cuinit_did_not_answer_and_goes_on() {
    let driver = tempfile::tempdir().unwrap();
    build_c(
        "fake_libcuda.c",
        driver.path(),
        "libcuda.so.1",
        &["-shared", "-fPIC", "-DFAKE_INIT_SLEEP"],
    );
    let started = std::time::Instant::now();
    let lines = doctor(&[
        ("LD_LIBRARY_PATH", driver.path()),
        ("RR_TUI_DOCTOR_LIMIT_S", Path::new("1")),
    ]);
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    let (state, detail) = finding(&lines, "driver");
    assert_eq!(state, "broken");
    assert!(
        detail.starts_with("cuInit did not answer within 1 s (a hung GPU or driver")
            && detail.contains("; fix: look for Xid errors"),
        "{detail}"
    );
    let names: Vec<&str> = lines.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["driver", "ncu", "counters", "nvrtc", "cupti", "recorder", "ray", "tmux", "config"]
    );
}

/// A directory holding executable shell scripts `name` → `body`, and `PATH` with it first.
fn fake_tools(tools: &[(&str, &str)]) -> (tempfile::TempDir, std::ffi::OsString) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in tools {
        let file = dir.path().join(name);
        std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let path = std::env::join_paths(
        std::iter::once(dir.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    (dir, path)
}

/// Whether process `pid` still runs (a zombie does not).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// The pid a fake tool wrote to `file`, waited for.
fn pid_written(file: &Path) -> String {
    for _ in 0..200 {
        if let Ok(pid) = std::fs::read_to_string(file) {
            if !pid.trim().is_empty() {
                return pid.trim().to_string();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("{} was never written", file.display());
}

#[test]
fn doctor_reads_a_tools_answer_through_a_pipe_and_drops_the_rest() {
    // A python3 that prints megabytes after its answer; doctor runs under a limit on the size
    // of the files it (and what it starts) may write: an answer kept in a file stops the tool
    // (SIGXFSZ), one read through a pipe does not, and nothing of the rest is kept.
    let (_tools, path) = fake_tools(&[(
        "python3",
        "set -e\nprintf '2.40.0\\n'\nhead -c 8000000 /dev/zero",
    )]);
    let out = std::process::Command::new("sh")
        .args(["-c", "ulimit -f 256 && exec \"$0\" doctor"])
        .arg(assert_cmd::cargo::cargo_bin("rr-tui"))
        .env("PATH", &path)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let ray = text.lines().find(|l| l.starts_with("ray ")).unwrap();
    assert_eq!(ray, "ray       ok       Ray 2.40.0 (python3)");
}

#[test]
fn doctor_says_a_tool_that_does_not_answer_did_not_answer() {
    let (_tools, path) = fake_tools(&[("python3", "exec sleep 1000"), ("tmux", "exec sleep 1000")]);
    let lines = doctor(&[
        ("PATH", Path::new(&path)),
        ("RR_TUI_DOCTOR_LIMIT_S", Path::new("1")),
    ]);
    for (name, how) in [
        ("ray", "did not answer within 1 s importing ray"),
        ("tmux", "-V did not answer within 1 s"),
    ] {
        let (state, detail) = finding(&lines, name);
        assert_eq!(state, "unknown", "{name}: {detail}");
        assert!(
            detail.contains(how) && !detail.contains("not on PATH"),
            "{name}: {detail}"
        );
    }
}

#[test]
fn doctor_ends_the_tool_it_waits_for_when_stopped_by_a_signal() {
    let pid_file = tempfile::tempdir().unwrap();
    let pid_file = pid_file.path().join("python3.pid");
    let (_tools, path) = fake_tools(&[(
        "python3",
        &format!("echo $$ > '{}'\nexec sleep 1000", pid_file.display()),
    )]);
    let mut doctor = std::process::Command::new(assert_cmd::cargo::cargo_bin("rr-tui"))
        .arg("doctor")
        .env("PATH", &path)
        .env_remove("LD_LIBRARY_PATH")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let python = pid_written(&pid_file);
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &doctor.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = std::time::Instant::now();
    while doctor.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "doctor did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let left = running(&python);
    if left {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &python])
            .status();
    }
    assert!(
        !left,
        "the python3 doctor ran (pid {python}) was left running"
    );
    let said = std::io::read_to_string(doctor.stderr.take().unwrap()).unwrap();
    assert!(
        said.contains("stopped by signal 15: python3 and what it started were ended"),
        "{said}"
    );
}

#[test]
fn doctor_does_not_wait_for_what_a_tool_leaves_holding_its_output() {
    let pid_file = tempfile::tempdir().unwrap();
    let pid_file = pid_file.path().join("sleep.pid");
    // A tmux that answers and leaves a process of another session holding its output.
    let (_tools, path) = fake_tools(&[(
        "tmux",
        &format!(
            "setsid sleep 1000 &\necho $! > '{}'\necho 'tmux 3.4'",
            pid_file.display()
        ),
    )]);
    let started = std::time::Instant::now();
    let lines = doctor(&[("PATH", Path::new(&path))]);
    let elapsed = started.elapsed();
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid_written(&pid_file)])
        .status();
    assert_eq!(finding(&lines, "tmux"), ("ok", "tmux 3.4"));
    assert!(elapsed < std::time::Duration::from_secs(5), "{elapsed:?}");
}

#[cfg_attr(rr_gpu, ignore = "needs a machine without Nsight Compute")]
#[test]
fn doctor_and_profile_pass_over_an_ncu_that_cannot_run() {
    let tools = tempfile::tempdir().unwrap();
    let ncu = tools.path().join("ncu");
    std::fs::write(&ncu, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&ncu, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let lines = doctor(&[("PATH", tools.path())]);
    let (state, detail) = finding(&lines, "ncu");
    assert_eq!(state, "missing");
    assert!(
        detail.starts_with(&format!("{} is not executable", ncu.display()))
            && detail.contains("; fix: make it executable (chmod +x)"),
        "{detail}"
    );
    // profile looks the same way, and names it too (on a driver: without one, that is said
    // first).
    let (_tmp, dir) = fixture_copy("llvm-two-kernels");
    let desc = descriptor_of(&dir, "rr_saxpy");
    let driver = fake_driver();
    rr().args(["profile"])
        .arg(&desc)
        .env("PATH", tools.path())
        .env("LD_LIBRARY_PATH", driver.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "({} is not executable)",
            ncu.display()
        )));
    rr().args(["profile"])
        .arg(&desc)
        .arg("--ncu")
        .arg(&ncu)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not executable"));
}

#[test]
fn doctor_says_what_is_where_the_recorder_belongs_when_it_is_not_a_library() {
    // rr-tui looks for the recorder beside itself: a copy of it (a hard link where the file
    // system allows) in a directory of the test's own.
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("rr-tui");
    let built = assert_cmd::cargo::cargo_bin("rr-tui");
    if std::fs::hard_link(&built, &exe).is_err() {
        std::fs::copy(&built, &exe).unwrap();
    }
    let lib = dir.path().join("librr_recorder.so");
    let recorder_line = || {
        let empty = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(&exe)
            .arg("doctor")
            .env("PATH", empty.path())
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let line = text.lines().find(|l| l.starts_with("recorder ")).unwrap();
        line[9..].trim_start().to_string()
    };
    let shown = lib.display();
    let clear = || {
        let _ = std::fs::remove_dir(&lib);
        let _ = std::fs::remove_file(&lib);
    };
    assert!(recorder_line().starts_with(&format!("missing  {shown} is not there")));
    std::fs::create_dir(&lib).unwrap();
    assert!(recorder_line().starts_with(&format!("missing  {shown} is a directory, not a library")));
    clear();
    let made = std::process::Command::new("mkfifo")
        .arg(&lib)
        .status()
        .unwrap();
    assert!(made.success());
    assert!(recorder_line().starts_with(&format!(
        "missing  {shown} is a FIFO (named pipe), not a library"
    )));
    clear();
    std::os::unix::fs::symlink("gone.so", &lib).unwrap();
    assert!(
        recorder_line().starts_with(&format!("missing  {shown} is a dangling link (to gone.so)"))
    );
    clear();
    std::os::unix::fs::symlink("/dev/zero", &lib).unwrap();
    assert!(recorder_line().starts_with(&format!(
        "missing  {shown} is a link to a character device (/dev/zero), not a library"
    )));
    clear();
    // 100 GiB of nothing (sparse): only its first bytes are read.
    let huge = std::fs::File::create(&lib).unwrap();
    huge.set_len(100 << 30).unwrap();
    let started = std::time::Instant::now();
    let line = recorder_line();
    assert!(
        line.starts_with(&format!(
            "broken   {shown} is not a shared library (no ELF header)"
        )),
        "{line}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    clear();
    std::fs::write(&lib, b"\x7fE").unwrap();
    assert!(recorder_line().contains("is not a shared library (shorter than an ELF header)"));
    clear();
    // `cargo test` on a fresh clone leaves the library only in `deps/`; a build leaves it beside.
    let beside = built.with_file_name("librr_recorder.so");
    let in_deps = built.with_file_name("deps").join("librr_recorder.so");
    std::fs::copy(if beside.is_file() { beside } else { in_deps }, &lib).unwrap();
    assert_eq!(recorder_line(), format!("ok       {shown}"));
}

#[test]
fn doctor_and_config_name_a_dangling_link_at_the_config_path() {
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir(config.path().join("rr-tui")).unwrap();
    let file = config.path().join("rr-tui/config.toml");
    std::os::unix::fs::symlink("nowhere.toml", &file).unwrap();
    let said = format!(
        "{} (a dangling link to nowhere.toml: the built-in defaults)",
        file.display()
    );
    // As the explorer takes it: no file, the defaults.
    rr().arg("config")
        .env("XDG_CONFIG_HOME", config.path())
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("# config file: {said}\n")));
    let lines = doctor(&[("XDG_CONFIG_HOME", config.path())]);
    assert_eq!(finding(&lines, "config"), ("ok", said.as_str()));
}

#[test]
fn doctor_names_a_driver_too_old_and_how_to_update_it() {
    let driver = tempfile::tempdir().unwrap();
    build_c(
        "fake_libcuda.c",
        driver.path(),
        "libcuda.so.1",
        &["-shared", "-fPIC", "-DFAKE_DRIVER_VERSION=12040"],
    );
    let lines = doctor(&[("LD_LIBRARY_PATH", driver.path())]);
    let (state, detail) = finding(&lines, "driver");
    assert_eq!(state, "limited");
    assert!(
        detail.starts_with("supports CUDA 12.4, older than the 12.8")
            && detail.contains("; fix: update the NVIDIA driver to 570 or newer"),
        "{detail}"
    );
    assert!(
        !lines.iter().any(|(n, _, _)| n.starts_with("gpu")),
        "{lines:?}"
    );
}

/// One spelling for each concept in every command (issue 36, point 12): `--device N`, a launch
/// triple `XxYxZ`, `--tolerance SPEC`. The old spellings are still taken, each with one note on
/// stderr, and never a word of it in `--json` output on stdout.
#[test]
fn old_spellings_are_taken_with_one_note_on_stderr() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    // A replay refused for its block (2000 threads) ends before any GPU is needed.
    let replay = |flags: &[&str]| {
        rr().args(["replay", "--json", "--run-id", "7", "--num-threads", "2000"])
            .args(flags)
            .arg(&d)
            .output()
            .unwrap()
    };
    let new = replay(&["--device", "0", "--grid", "2x1x1"]);
    let old = replay(&["--device-id", "0", "--grid", "2,1,1"]);
    assert_eq!(new.stdout, old.stdout);
    assert!(!String::from_utf8_lossy(&new.stderr).contains("deprecated"));
    let stderr = String::from_utf8_lossy(&old.stderr);
    for note in [
        "rr-tui: note: --device-id is deprecated; use --device\n",
        "rr-tui: note: --grid X,Y,Z is deprecated; use --grid XxYxZ\n",
    ] {
        assert_eq!(stderr.matches(note).count(), 1, "{note}: {stderr}");
    }
    for line in String::from_utf8_lossy(&old.stdout).lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("{line:?} on stdout is not JSON: {e}"));
    }
    rr().args(["replay", "--device", "0", "--device-id", "0"])
        .arg(&d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    rr().args(["replay", "--device", "-1"])
        .arg(&d)
        .assert()
        .code(2);

    // diff: --tolerance as replay and tune take it; the old --type/--rtol say the same.
    let (i, o) = (
        d.with_extension("record_input"),
        d.with_extension("record_output"),
    );
    let diff = |flags: &[&str]| {
        rr().arg("diff")
            .arg(&i)
            .arg(&o)
            .args(flags)
            .output()
            .unwrap()
    };
    let new = diff(&["--tolerance", "f32:rtol=1e-9,ulp=2", "--json"]);
    let old = diff(&["--type", "f32", "--rtol", "1e-9", "--ulp", "2", "--json"]);
    assert_eq!(new.status.code(), Some(1));
    assert_eq!((new.status, &new.stdout), (old.status, &old.stdout));
    serde_json::from_slice::<serde_json::Value>(&old.stdout).expect("stdout stays JSON");
    let stderr = String::from_utf8_lossy(&old.stderr);
    for note in [
        "rr-tui: note: --type is deprecated; use --tolerance TYPE\n",
        "rr-tui: note: --rtol is deprecated; use --tolerance TYPE:rtol=X\n",
        "rr-tui: note: --ulp is deprecated; use --tolerance TYPE:ulp=N\n",
    ] {
        assert_eq!(stderr.matches(note).count(), 1, "{note}: {stderr}");
    }
    rr().arg("diff")
        .arg(&i)
        .arg(&o)
        .args(["--tolerance", "f32", "--type", "f32"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

/// Help shows each concept's one spelling, never an old one.
#[test]
fn help_shows_one_spelling_for_each_concept() {
    let help = |words: &[&str]| {
        let out = rr().args(words).arg("--help").output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    for command in ["replay", "profile"] {
        let text = help(&[command]);
        assert!(text.contains("--device <N>"), "{command}: {text}");
        assert!(text.contains("--block <XxYxZ>"), "{command}: {text}");
        assert!(!text.contains("--device-id"), "{command}: {text}");
        assert!(!text.contains("X,Y,Z"), "{command}: {text}");
    }
    let diff = help(&["diff"]);
    assert!(diff.contains("--tolerance <SPEC>"), "{diff}");
    for old in ["--type", "--rtol", "--atol", "--ulp", "--endian"] {
        assert!(!diff.contains(old), "{old}: {diff}");
    }
    for words in [&["tune"][..], &["tune", "merge"]] {
        let text = help(words);
        assert!(text.contains("--json-out <FILE>"), "{words:?}: {text}");
        assert!(!text.contains("--json <FILE>"), "{words:?}: {text}");
        assert!(!text.contains("--json sweep"), "{words:?}: {text}");
    }
}

/// A word `record` does not know, before the program, is said to be no option of record (it
/// was taken as the program's name: "--device-id: no such program in PATH").
#[test]
fn record_says_an_unknown_option_is_not_a_program() {
    for words in [
        &["record", "--device-id", "0", "--", "true"][..],
        &["record", "--devic", "0", "true"],
    ] {
        rr().args(words)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "{}: not an option of rr-tui record",
                words[1]
            )));
    }
}

// ------------------------------------------------------------------------------------------------
// One error prefix and one exit status policy (issue 36, point 13)

/// What `profile` says it lacks on this machine: the driver before ncu, so on a machine
/// without a GPU the driver (the stand-in is not on the library path there).
const NO_DRIVER_OR_NCU: &str = if cfg!(rr_gpu) {
    "Nsight Compute (ncu) was not found"
} else {
    "no CUDA driver found"
};

/// Every command says an error as `rr-tui: error: …` on stderr with nothing on stdout, and
/// exits 2 for what the flags or the input named get wrong (a missing file, a file that is not
/// what it should be, a directory for a descriptor, a record rr-tui cannot replay: LLVM 19–22)
/// and 1 for a run that failed; clap's own usage errors keep clap's `error: ` and exit 2 too.
#[test]
fn every_command_says_an_error_one_way_with_one_exit_status() {
    let llvm19 = descriptor_of(&fixture("llvm19-saxpy"), "rr_saxpy");
    let x = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let (llvm19, x) = (llvm19.to_str().unwrap(), x.to_str().unwrap());
    let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let dir = fixture("llvm-two-kernels");
    let dir = dir.to_str().unwrap();
    let fixtures = fixture("");
    let fixtures = fixtures.to_str().unwrap();
    let empty_dir = tempfile::tempdir().unwrap();
    let empty = empty_dir.path().to_str().unwrap();
    let llvm19_dir = fixture("llvm19-saxpy");
    let llvm19_dir = llvm19_dir.to_str().unwrap();
    let x_input = x.replace(".json", ".record_input");
    let empty_path = tempfile::tempdir().unwrap();
    let not_descriptor = empty_path.path().join("not_descriptor.json");
    std::fs::write(&not_descriptor, r#"{"a":1}"#).unwrap();
    let not_descriptor = not_descriptor.to_str().unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["report", "/nonexistent/dir"], 2, "/nonexistent/dir: "),
        (&["report", readme], 2, "README.md: not a directory"),
        (&["check", "/nonexistent/dir"], 2, "/nonexistent/dir: "),
        (&["check", readme], 2, "README.md: not a directory"),
        (
            &["inspect", dir],
            2,
            "a record directory; inspect takes one",
        ),
        (&["inspect", readme], 2, "README.md: invalid JSON"),
        (
            &["inspect", "/nonexistent/x.json"],
            2,
            "/nonexistent/x.json: ",
        ),
        (
            &["diff", "/nonexistent/a", "/nonexistent/b"],
            2,
            "/nonexistent/a: ",
        ),
        (
            &["replay", "/nonexistent/x.json"],
            2,
            "/nonexistent/x.json: ",
        ),
        (&["replay", "--verify", llvm19], 2, "LLVM 19–22 recorded"),
        (
            &["replay", "--num-threads", "2000", x],
            2,
            "number of threads (2000)",
        ),
        (
            &["profile", "/nonexistent/x.json"],
            2,
            "/nonexistent/x.json: ",
        ),
        (&["profile", llvm19], 2, "LLVM 19–22 recorded"),
        (
            &["tune", "--list", "/nonexistent/x.json"],
            2,
            "/nonexistent/x.json: ",
        ),
        (&["tune", llvm19], 2, "LLVM 19–22 recorded"),
        (
            &["record", "--library", "/nonexistent.so", "--", "true"],
            2,
            "--library /nonexistent.so: ",
        ),
        (
            &["config", "--config", "/nonexistent/c.toml"],
            2,
            "/nonexistent/c.toml",
        ),
        // A run that cannot be done here: no driver (said first), or no ncu on an empty PATH.
        (&["profile", x], 1, NO_DRIVER_OR_NCU),
        // The record's own refusal before the driver, naming the descriptor, in every command.
        (&["replay", llvm19], 2, "rr_saxpy.json: LLVM 19–22 recorded"),
        (&["tune", llvm19], 2, "rr_saxpy.json: LLVM 19–22 recorded"),
        (
            &["tune", llvm19_dir],
            2,
            "rr_saxpy.json: LLVM 19–22 recorded",
        ),
        (
            &["tune", "--list", llvm19_dir],
            2,
            "rr_saxpy.json: LLVM 19–22 recorded",
        ),
        // A missing --image is an input error, checked before the driver (--list too).
        (
            &["replay", x, "--image", "/nonexistent.cubin"],
            2,
            "--image /nonexistent.cubin: ",
        ),
        (
            &["tune", x, "--image", "/nonexistent.cubin"],
            2,
            "--image /nonexistent.cubin: ",
        ),
        (
            &["tune", "--list", x, "--image", "/nonexistent.cubin"],
            2,
            "--image /nonexistent.cubin: ",
        ),
        // --list refuses the outputs the sweep would refuse.
        (
            &["tune", "--list", x, "--csv", "/nonexistent/a.csv"],
            2,
            "--csv /nonexistent/a.csv: its directory does not exist",
        ),
        (
            &["tune", "--list", x, "--json-out", "/nonexistent/a.json"],
            2,
            "--json-out /nonexistent/a.json: its directory does not exist",
        ),
        // A file named directly that is no descriptor: an input error in check too.
        (&["check", not_descriptor], 2, "not_descriptor.json: "),
        (
            &["check", &x_input],
            2,
            ".record_input: not a directory, nor a descriptor (.json)",
        ),
        // diff given one path that is no descriptor says what the path is.
        (
            &["diff", "/nonexistent/a"],
            2,
            "/nonexistent/a: no such file or directory",
        ),
        (
            &["diff", dir],
            2,
            "llvm-two-kernels: a record directory; diff takes one instance's descriptor (X.json): `rr-tui report ",
        ),
        (&["diff", readme], 2, "README.md: not a descriptor (.json)"),
        (&["diff", &x_input], 2, "not a descriptor (.json)"),
        // tune merge: the inputs before the flags.
        (
            &["tune", "merge", "/nonexistent/part.json"],
            2,
            "/nonexistent/part.json",
        ),
        // --json as a switch in tune names the command as typed, after the one prefix.
        (
            &["tune", "merge", "a.json", "--json"],
            2,
            "tune merge has no --json switch",
        ),
        // A directory where one descriptor is expected: one wording, and a command that works.
        (
            &["inspect", fixtures],
            2,
            "record directories below it list theirs, e.g. `rr-tui report ",
        ),
        (
            &["replay", dir],
            2,
            "a record directory; replay takes one instance's descriptor (X.json): `rr-tui report ",
        ),
        (
            &["profile", fixtures],
            2,
            "not a record directory, and profile takes one instance's descriptor",
        ),
        (
            &["inspect", empty],
            2,
            "a directory that holds no record; inspect takes",
        ),
        // The explorer given a descriptor opens its record (in a terminal; here there is none).
        (&[x], 2, "the explorer needs a terminal"),
    ];
    for (args, code, said) in cases {
        let out = rr()
            .args(*args)
            .env("PATH", empty_path.path())
            .env_remove("CUDA_HOME")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: {:?}", out.stdout);
        assert!(
            stderr.starts_with("rr-tui: error: ") && stderr.contains(said),
            "{args:?}: {stderr}"
        );
        assert!(
            !stderr.contains("[rr-tui] Error") && !stderr.contains("rr-tui tune:"),
            "{args:?}: {stderr}"
        );
    }
    // clap's usage errors: its own format, exit 2.
    for args in [&["replay", "--bogus"][..], &["tune"], &["check"]] {
        let out = rr().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
    }
    // A negative number reaches the flag's check, which says what is allowed (not clap's
    // "unexpected argument '-1'").
    for args in [
        &["replay", x, "--device", "-1"][..],
        &["diff", x, "--max", "-1"],
        &["record", "--device", "-1", "--", "true"],
    ] {
        let out = rr().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr.contains("-1: must be ≥ 0"), "{args:?}: {stderr}");
    }
}

/// Under `--json` an error is one `error` object on stdout (event, kind, message), nothing on
/// stderr, in every command that takes `--json`; kind `input` goes with exit status 2.
#[test]
fn json_errors_are_json_in_every_command() {
    let x = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    let x = x.to_str().unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    let not_descriptor = empty_path.path().join("not_descriptor.json");
    std::fs::write(&not_descriptor, r#"{"a":1}"#).unwrap();
    let not_descriptor = not_descriptor.to_str().unwrap();
    let cases: &[(&[&str], i32, &str, &str)] = &[
        (
            &["report", "/nonexistent/dir"],
            2,
            "input",
            "/nonexistent/dir: ",
        ),
        (
            &["check", "/nonexistent/dir"],
            2,
            "input",
            "/nonexistent/dir: ",
        ),
        (
            &["inspect", "/nonexistent/x.json"],
            2,
            "input",
            "/nonexistent/x.json: ",
        ),
        (
            &["diff", "/nonexistent/a", "/nonexistent/b"],
            2,
            "input",
            "/nonexistent/a: ",
        ),
        (
            &["profile", "/nonexistent/x.json"],
            2,
            "input",
            "/nonexistent/x.json: ",
        ),
        (&["profile", x], 1, "setup", NO_DRIVER_OR_NCU),
        (
            &["check", not_descriptor],
            2,
            "input",
            "not_descriptor.json: ",
        ),
        // A command line clap refuses is said in JSON too, kind `usage`.
        (
            &["replay", x, "--repetitions", "abc"],
            2,
            "usage",
            "--repetitions",
        ),
        (&["replay", x, "--tolerance", "f33"], 2, "usage", "f33"),
        (&["replay", x, "--bogus"], 2, "usage", "--bogus"),
        (&["diff", x, "--tolerance", "f33"], 2, "usage", "f33"),
        (&["inspect"], 2, "usage", "<DESCRIPTOR>"),
        (&["profile", x, "--set", "nope"], 2, "usage", "nope"),
    ];
    for (args, code, kind, said) in cases {
        let out = rr()
            .args(*args)
            .arg("--json")
            .env("PATH", empty_path.path())
            .env_remove("CUDA_HOME")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {stdout}");
        assert!(out.stderr.is_empty(), "{args:?}: {:?}", out.stderr);
        let error: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {stdout}"));
        assert_eq!(error["event"], "error", "{args:?}");
        assert_eq!(error["kind"], *kind, "{args:?}");
        assert!(
            error["message"].as_str().unwrap().contains(said),
            "{args:?}: {error}"
        );
    }
}

/// `check --strict` failed by warnings alone says why, in text and in JSON.
#[test]
fn check_strict_says_that_the_warnings_failed_it() {
    let (_t, dir) = fixture_copy("llvm-no-report");
    let json = descriptor_of(&dir, "rr_atomic_sum");
    for ext in ["json", "record_input", "record_output", "globals", "image"] {
        std::fs::rename(json.with_extension(ext), dir.join(format!("1_2.{ext}"))).unwrap();
    }
    let out = rr()
        .args(["check", "--strict", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["errors"].as_u64(), v["passed"].as_bool()),
        (Some(0), Some(false))
    );
    assert_eq!(v["reason"], "--strict: the warnings fail the check");
    let out = rr().args(["check", "--json"]).arg(&dir).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["passed"].as_bool(), v.get("reason")), (Some(true), None));
}

/// An old spelling given with its new one is a conflict: clap's error alone, no note about a
/// flag the command then refuses; a command line that parses still gets its note.
#[test]
fn a_conflict_of_old_and_new_spellings_gets_no_deprecation_note() {
    let d = descriptor_of(&fixture("llvm-two-kernels"), "rr_saxpy");
    for flags in [
        &["--device", "0", "--device-id", "0"][..],
        &["--tolerance", "f32", "--type", "f32"],
    ] {
        let command = if flags[0] == "--device" {
            "replay"
        } else {
            "diff"
        };
        let out = rr().arg(command).arg(&d).args(flags).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.starts_with("error: "), "{flags:?}: {stderr}");
        assert!(!stderr.contains("deprecated"), "{flags:?}: {stderr}");
    }
    rr().args(["replay", "--device-id", "0", "--num-threads", "2000"])
        .arg(&d)
        .assert()
        .stderr(predicate::str::starts_with(
            "rr-tui: note: --device-id is deprecated; use --device\n",
        ));
}

/// The example an error gives for a path with a space (or a shell character) is quoted, so
/// that it runs as pasted.
#[test]
fn an_example_command_in_an_error_is_shell_quoted() {
    let t = tempfile::tempdir().unwrap();
    let runs = t.path().join("runs");
    copy_dir(&fixture("llvm-two-kernels"), &runs.join("my run"));
    let out = rr().arg("report").arg(&runs).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let example = stderr
        .lines()
        .find_map(|l| l.strip_prefix("pass one of them, e.g. `"))
        .and_then(|l| l.strip_suffix('`'))
        .unwrap_or_else(|| panic!("{stderr}"));
    let words = shell_words::split(example).unwrap();
    assert_eq!(
        words,
        ["rr-tui", "report", runs.join("my run").to_str().unwrap()]
    );
    let out = rr()
        .arg("inspect")
        .arg(runs.join("my run"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "`rr-tui report '{}'`",
            runs.join("my run").display()
        )),
        "{stderr}"
    );
}

/// `report --help` and `check --help` (and so their manual pages) say that a directory of
/// record directories is refused with exit status 2; the top-level help states the policy.
#[test]
fn helps_say_the_exit_status_of_a_directory_of_records() {
    let flat = |words: &[&str]| help(words).split_whitespace().collect::<Vec<_>>().join(" ");
    for command in ["report", "check"] {
        let text = flat(&[command]);
        assert!(
            text.contains("record directories below it (a directory of runs)")
                && (text.contains("refused with exit status 2")
                    || text.contains("; 2 when PATH is no record")),
            "{command}: {text}"
        );
        let man = rr().args(["man", command]).output().unwrap();
        let roff = String::from_utf8_lossy(&man.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(roff.contains("a directory of runs"), "{command}: {roff}");
    }
    let top = flat(&[]);
    assert!(
        top.contains("Exit status, the same in every command: 0 when all is well; 1 for a finding or a failed run")
            && top.contains("2 for a usage or input error")
            && top.contains("`rr-tui: error: …`"),
        "{top}"
    );
}

/// The recorder library found beside rr-tui must be an ELF shared object, as doctor requires
/// (one rule): a file of another kind there is refused before the program runs.
#[test]
fn record_refuses_a_recorder_beside_it_that_is_not_a_library() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("rr-tui");
    let built = assert_cmd::cargo::cargo_bin("rr-tui");
    if std::fs::hard_link(&built, &exe).is_err() {
        std::fs::copy(&built, &exe).unwrap();
    }
    let ran = dir.path().join("ran");
    for (content, why) in [
        (
            &b"not a library\n"[..],
            "is not a shared library (no ELF header)",
        ),
        (
            b"\x7fELF",
            "is not a shared library (shorter than an ELF header)",
        ),
    ] {
        std::fs::write(dir.path().join("librr_recorder.so"), content).unwrap();
        let out = std::process::Command::new(&exe)
            .args(["record", "--dir"])
            .arg(dir.path().join("recs"))
            .args(["--", "touch"])
            .arg(&ran)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.starts_with("rr-tui: error: ")
                && stderr.contains("librr_recorder.so: ")
                && stderr.contains(why),
            "{stderr}"
        );
        assert!(!ran.exists(), "the program ran");
    }
    // An executable is no library either (doctor says the same of it).
    std::fs::copy("/bin/true", dir.path().join("librr_recorder.so")).unwrap();
    let out = std::process::Command::new(&exe)
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("recorder ")).unwrap();
    assert!(
        line.contains("librr_recorder.so is not a shared library ("),
        "{line}"
    );
}

/// Each flag's description in each `--help` page that lists it (long name → page → text, its
/// lines joined).
fn flag_descriptions() -> std::collections::BTreeMap<String, Vec<(String, String)>> {
    let mut found: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    for page in help_pages() {
        let text = help_text(&page, "--help");
        let mut current: Option<(String, Vec<String>)> = None;
        let mut done = |c: Option<(String, Vec<String>)>| {
            if let Some((flag, words)) = c {
                found
                    .entry(flag)
                    .or_default()
                    .push((page.join(" "), words.join(" ")));
            }
        };
        for line in text.lines() {
            let item = line.trim_start();
            let indent = line.len() - item.len();
            if (1..=6).contains(&indent) && item.starts_with('-') {
                done(current.take());
                let name = listed_flags(line).pop().unwrap_or_default();
                let name = name.split('=').next().unwrap_or_default().to_string();
                let on_line = item.split_once("  ").map(|(_, d)| d).unwrap_or_default();
                let words = on_line.split_whitespace().map(str::to_string).collect();
                current = Some((name, words));
            } else if indent == 0 && !item.is_empty() {
                done(current.take());
            } else if let Some((_, words)) = current.as_mut() {
                words.extend(item.split_whitespace().map(str::to_string));
            }
        }
        done(current);
    }
    found
}

/// A flag that several commands take reads the same in each one's help (its text is written
/// once, `cli::flags`), unless it means another thing there, each such flag named here with why.
/// `profile --help` lists none of replay's flags that profile refuses.
#[test]
fn a_flag_reads_the_same_in_every_command_that_takes_it() {
    let meant_otherwise = [
        (
            "--block",
            "tune takes an axis of values, replay and profile one",
        ),
        (
            "--grid",
            "tune takes an axis of values, replay and profile one",
        ),
        (
            "--shared-mem",
            "tune takes an axis of values, replay and profile one",
        ),
        (
            "--define",
            "tune's are axes of variants, replay's one candidate's macros",
        ),
        (
            "--nvrtc-opt",
            "tune's are for every variant, replay's for one candidate",
        ),
        (
            "--device",
            "record's keeps the launches of a device, replay's runs on one",
        ),
        (
            "--budget",
            "record's is bytes written, tune's configurations measured",
        ),
        (
            "--dir",
            "record's is where records go, man's where pages go",
        ),
        (
            "--energy",
            "replay measures one kernel's, tune each configuration's",
        ),
        ("--kernels", "tune's applies to a directory only"),
        (
            "--tolerance",
            "one core (`cli::flags`), then what each command does with it; repro's takes f32/f64",
        ),
        (
            "--json-out",
            "tune's report is rewritten as the sweep goes, tune merge's is a new file",
        ),
        (
            "--output-dir",
            "replay writes its output there, profile its report",
        ),
        (
            "--json",
            "replay's is an event stream, the others' one document",
        ),
        (
            "--strict",
            "check's fails on warnings, replay's and tune's refuse arguments",
        ),
        (
            "--timeout",
            "profile's bounds ncu, replay's and tune's the adaptive sampling",
        ),
        (
            "--repetitions",
            "repro's are the default of the program it writes",
        ),
        ("--help", "clap's"),
    ];
    let mut differing = Vec::new();
    for (flag, pages) in flag_descriptions() {
        let mut texts: Vec<&str> = pages.iter().map(|(_, t)| t.as_str()).collect();
        texts.dedup();
        let distinct: std::collections::BTreeSet<&str> = texts.into_iter().collect();
        let allowed = meant_otherwise.iter().any(|(f, _)| *f == flag);
        if distinct.len() > 1 && !allowed {
            differing.push(format!("{flag}: {pages:#?}"));
        }
    }
    assert!(differing.is_empty(), "{}", differing.join("\n"));
    // The flags written once are where they should be, the same in each.
    let all = flag_descriptions();
    for (flag, commands) in [
        ("--tolerance", &["diff", "replay", "tune"][..]),
        ("--strict", &["replay", "tune"]),
        ("--kernel-timeout", &["replay", "tune"]),
        ("--ignore-limits", &["replay", "tune"]),
        ("--csv", &["tune", "tune merge"]),
        ("--json-out", &["tune", "tune merge"]),
        ("--export", &["tune", "tune merge"]),
    ] {
        let pages = &all[flag];
        // A text tailored per command keeps its shared core: up to its last shared sentence.
        let core = |text: &str| -> String {
            let cut = match flag {
                "--tolerance" => text.find("by default.").map(|i| i + "by default.".len()),
                "--json-out" => text
                    .find("JSON to FILE.")
                    .map(|i| i + "JSON to FILE.".len()),
                _ => None,
            };
            text[..cut.unwrap_or(text.len())].to_string()
        };
        for command in commands {
            let (_, text) = pages.iter().find(|(p, _)| p == command).unwrap();
            let (_, first) = pages.iter().find(|(p, _)| p == commands[0]).unwrap();
            assert_eq!(core(text), core(first), "{flag} in {command}");
        }
    }
    // Each command's --tolerance says what it does with one, and only its own.
    for (command, says, not) in [
        (
            "diff",
            "Every pair of snapshots diff compares",
            "A replay given",
        ),
        (
            "replay",
            "A replay given a tolerance verifies",
            "diff compares",
        ),
        (
            "tune",
            "Every configuration is verified so",
            "A replay given",
        ),
    ] {
        let (_, text) = all["--tolerance"]
            .iter()
            .find(|(p, _)| p == command)
            .unwrap();
        assert!(
            text.contains(says) && !text.contains(not),
            "{command}: {text}"
        );
    }
    let profile = listed_flags(&help_text(&["profile".to_string()], "--help"));
    for refused in [
        "--repetitions",
        "--tolerance",
        "--save-output",
        "--verify",
        "--energy",
    ] {
        assert!(
            !profile.iter().any(|f| f == refused),
            "profile --help lists {refused}"
        );
    }
}
