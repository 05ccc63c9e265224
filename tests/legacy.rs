//! Records of LLVM 16–22 (record-fixtures/llvm16-saxpy, llvm18-two-kernels, llvm19-saxpy,
//! written on the H100 by tests/gpu/legacy_harness.cu): every headless command, the explorer,
//! and the replay refusals that need no GPU.

mod common;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    c
}

fn descriptor(dir: &Path, kernel: &str) -> PathBuf {
    dir.join(format!("{kernel}.json"))
}

fn stdout(c: &mut Command) -> String {
    String::from_utf8(c.output().unwrap().stdout).unwrap()
}

const CUBIN: &str = "record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin";

#[test]
fn report_lists_kernel_named_descriptors() {
    for (dir, rows) in [
        ("llvm16-saxpy", vec!["rr_saxpy.json, rr_saxpy, ?, ?"]),
        (
            "llvm18-two-kernels",
            vec![
                "rr_saxpy.json, rr_saxpy, ?, ?",
                "rr_scale_global.json, rr_scale_global, ?, ?",
            ],
        ),
        ("llvm19-saxpy", vec!["rr_saxpy.json, rr_saxpy, ?, ?"]),
    ] {
        let text = stdout(rr().arg("report").arg(fixture(dir)));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "=== Kernel Record Report ===", "{dir}");
        assert_eq!(
            lines[2],
            format!("Total Instances: {}", rows.len()),
            "{dir}"
        );
        assert_eq!(&lines[4..4 + rows.len()], &rows[..], "{dir}");
    }
}

#[test]
fn inspect_names_layout_and_generation() {
    for (dir, format, evidence) in [
        ("llvm16-saxpy", "LLVM 16–17 layout", "no BumpAllocVAStart"),
        (
            "llvm18-two-kernels",
            "LLVM 18 layout",
            "the launch-environment sentinel",
        ),
        (
            "llvm19-saxpy",
            "LLVM 19–22 layout",
            "consecutive 8-byte host addresses",
        ),
    ] {
        let json = descriptor(&fixture(dir), "rr_saxpy");
        let text = stdout(rr().arg("inspect").arg(&json));
        assert!(
            text.starts_with(&format!("Descriptor   {} ({format})", json.display())),
            "{text}"
        );
        assert!(text.contains(evidence), "{text}");
        let v: serde_json::Value =
            serde_json::from_str(&stdout(rr().args(["inspect", "--json"]).arg(&json))).unwrap();
        assert_eq!(v["format"], format);
        assert!(v["layout"].as_str().unwrap().contains("legacy layout"));
    }
    rr().arg("inspect")
        .arg(descriptor(&fixture("llvm16-saxpy"), "rr_saxpy"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Region start 0x7fe7aa000000, inferred",
        ))
        .stdout(predicate::str::contains("replay needs --image FILE"))
        .stdout(predicate::str::contains(
            "#1   0x00007fe7aa001000  → segment 0 + 0x1000",
        ));
    rr().arg("inspect")
        .arg(descriptor(&fixture("llvm19-saxpy"), "rr_saxpy"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Replay       impossible: LLVM 19–22 recorded the host addresses",
        ))
        .stdout(predicate::str::contains("value was not recorded"))
        // Slot addresses are no arguments: no warning that they point outside the memory.
        .stdout(predicate::str::contains("points outside").not());
}

#[test]
fn check_accepts_all_three_and_says_what_each_lacks() {
    rr().arg("check")
        .arg(fixture("llvm18-two-kernels"))
        .assert()
        .success()
        .stdout("checked 2 instance(s): 0 error(s), 0 warning(s)\n");
    rr().arg("check")
        .arg(fixture("llvm16-saxpy"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "rr_saxpy.image: warning: missing: LLVM 16–17 never saved the device image",
        ));
    rr().args(["check", "--strict"])
        .arg(fixture("llvm16-saxpy"))
        .assert()
        .code(1);
    rr().arg("check")
        .arg(descriptor(&fixture("llvm19-saxpy"), "rr_saxpy"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "rr_saxpy.json: warning: LLVM 19–22 recorded the host addresses of the argument slots",
        ));
}

#[test]
fn check_finds_damage_in_legacy_files() {
    let (_t, dir) = fixture_copy("llvm18-two-kernels");
    let memory = dir.join("rr_saxpy.memory");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&memory)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let globals = dir.join("rr_scale_global.globals");
    let g = std::fs::read(&globals).unwrap();
    std::fs::write(&globals, &g[..g.len() - 3]).unwrap();
    std::fs::remove_file(dir.join("rr_scale_global.original.output")).unwrap();
    let text = stdout(rr().arg("check").arg(&dir));
    assert!(
        text.contains("rr_saxpy.memory: error: is 4096 bytes but DeviceMemorySize is 8192"),
        "{text}"
    );
    assert!(
        text.contains("rr_scale_global.globals: error: truncated: data of global c_bias"),
        "{text}"
    );
    assert!(
        text.contains("rr_scale_global.original.output: warning: missing: verification is impossible (recorded without LIBOMPTARGET_RR_SAVE_OUTPUT)"),
        "{text}"
    );
    rr().arg("check").arg(&dir).assert().code(1);
}

#[test]
fn a_renamed_descriptor_is_still_read_and_named_in_a_warning() {
    let (_t, dir) = fixture_copy("llvm16-saxpy");
    for ext in ["json", "memory", "original.output"] {
        std::fs::rename(
            dir.join(format!("rr_saxpy.{ext}")),
            dir.join(format!("saxpy_copy.{ext}")),
        )
        .unwrap();
    }
    let text = stdout(rr().arg("check").arg(&dir));
    assert!(
        text.contains("saxpy_copy.json: warning: is not named after its kernel (rr_saxpy.json"),
        "{text}"
    );
    assert!(text.contains("checked 1 instance(s): 0 error(s)"), "{text}");
}

#[test]
fn diff_compares_memory_and_original_output_by_argument() {
    // Exit 1 as `cmp`: the kernels write memory, so input and output differ.
    rr().arg("diff")
        .arg(descriptor(&fixture("llvm16-saxpy"), "rr_saxpy"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "argument 0 (0x7fe7aa000000): 2 712 of 4 096 bytes differ",
        ));
    rr().args(["diff", "--tolerance", "f32"])
        .arg(descriptor(
            &fixture("llvm18-two-kernels"),
            "rr_scale_global",
        ))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("argument 0 (0x7fd7f6002000)"));
    rr().arg("diff")
        .arg(descriptor(&fixture("llvm19-saxpy"), "rr_saxpy"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("segment 0 (0x7f0686000000)"));
}

#[test]
fn diff_reads_the_old_tools_replay_output() {
    let (_t, dir) = fixture_copy("llvm18-two-kernels");
    let original = std::fs::read(dir.join("rr_saxpy.original.output")).unwrap();
    std::fs::write(dir.join("rr_saxpy.replay.output"), &original).unwrap();
    let json = descriptor(&dir, "rr_saxpy");
    // Only input → output differs (the kernel wrote memory); the old tool's output is equal.
    rr().arg("diff")
        .arg(&json)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "output → replay output of llvm-omp-kernel-replay (.replay.output)",
        ))
        .stdout(predicate::str::ends_with("different: input → output\n"));
    let mut changed = original.clone();
    changed[100] ^= 1;
    std::fs::write(dir.join("rr_saxpy.replay.output"), &changed).unwrap();
    rr().arg("diff")
        .arg(&json)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "different: input → output, output → replay output of llvm-omp-kernel-replay",
        ));
    // Never a report candidate, even when it contains a report banner.
    std::fs::write(
        dir.join("rr_saxpy.replay.output"),
        "=== Kernel Record Report ===\n",
    )
    .unwrap();
    rr().arg("report").arg(&dir).assert().success();
}

#[test]
fn llvm19_records_are_refused_with_the_reason() {
    let json = descriptor(&fixture("llvm19-saxpy"), "rr_saxpy");
    // A record rr-tui cannot replay is an input error: exit 2, as in tune and profile.
    rr().args(["replay", "--verify"])
        .arg(&json)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "rr-tui: error: {}: LLVM 19–22 recorded the host addresses of the argument slots (LaunchParams.Ptrs) \
             instead of the argument values; the kernel's arguments are unknown, so this record cannot be replayed",
            json.display()
        )));
    let events = stdout(rr().args(["replay", "--json"]).arg(&json));
    assert!(
        events.contains(r#""event":"error","kind":"input""#),
        "{events}"
    );
}

#[test]
fn llvm16_replay_asks_for_what_the_record_lacks() {
    let json = descriptor(&fixture("llvm16-saxpy"), "rr_saxpy");
    // What the record lacks and the user must supply is a usage error: exit 2.
    rr().arg("replay")
        .arg(&json)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "rr_saxpy.image: missing: LLVM 16–17 never saved the device image; pass --image FILE",
        ));
    // With the image, the inferred start is said before anything runs (the driver, if any,
    // comes later).
    rr().arg("replay")
        .arg(&json)
        .args(["--image", CUBIN])
        .assert()
        .stdout(predicate::str::contains(
            "[rr-tui] note: region start 0x7fe7aa000000, inferred: the only 2 MiB-aligned start",
        ))
        .stdout(predicate::str::contains(
            "[rr-tui] note: LLVM 16–17 did not record module globals",
        ));
    rr().arg("replay")
        .arg(&json)
        .args(["--image", CUBIN, "--base-address", "0x7f0000000000"])
        .assert()
        .stdout(predicate::str::contains(
            "region start 0x7f0000000000 (--base-address; doubtful: the region [0x7f0000000000, 0x7f0000002000) \
             holds 0 of the pointer-like arguments where 0x7fe7aa000000 would hold 2)",
        ));
    rr().args(["replay", "--base-address", "0x12"])
        .arg(descriptor(&fixture("llvm18-two-kernels"), "rr_saxpy"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--base-address is for LLVM 16–17 records",
        ));
    rr().args(["replay", "--base-address", "lots"])
        .arg(&json)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected an address"));
}

#[test]
fn an_ambiguous_start_names_the_candidates_and_the_flag() {
    // A 64 MiB region: 32 2 MiB-aligned starts hold both pointer arguments, and two 32 MiB-
    // aligned ones, so the second chance does not help either.
    let (_t, dir) = fixture_copy("llvm16-saxpy");
    let json = descriptor(&dir, "rr_saxpy");
    let text = std::fs::read_to_string(&json)
        .unwrap()
        .replace("\"DeviceMemorySize\":8192", "\"DeviceMemorySize\":67108864");
    std::fs::write(&json, text).unwrap();
    let out = rr().arg("replay").arg(&json).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("the region start of this LLVM 16–17 record is unknown: LLVM 16–17 did not record it, and 32 2 MiB-aligned starts hold the 2 pointer argument(s) equally well"),
        "{err}"
    );
    assert!(err.contains("most likely 0x7fe7aa000000"), "{err}");
    assert!(err.contains("replay needs --base-address ADDR"), "{err}");
    assert!(
        err.contains("; and ") && err.contains("pass --image FILE"),
        "both missing pieces at once: {err}"
    );
    rr().arg("check")
        .arg(&dir)
        .assert()
        .stdout(predicate::str::contains("warning: region start unknown"));
}

#[test]
fn the_explorer_browses_legacy_directories() {
    for (dir, rows) in [
        ("llvm16-saxpy", 1),
        ("llvm18-two-kernels", 2),
        ("llvm19-saxpy", 1),
    ] {
        let mut a = rr_tui::tui::load_app(fixture(dir), Err("no GPU".into()), std::env::temp_dir())
            .unwrap();
        assert_eq!(a.rows.len(), rows, "{dir}");
        assert!(a.rows.iter().all(|r| r.problem.is_none()), "{dir}");
        assert!(a.rows.iter().all(|r| r.input_len.is_some()), "{dir}");
        assert_eq!(a.rows[0].kernel, "rr_saxpy");
        // Background checks: warnings (no image, lost arguments) do not mark rows broken.
        for cmd in a.update(rr_tui::tui::app::Msg::FirstFrameDrawn) {
            if let rr_tui::tui::app::Cmd::Work(work) = cmd {
                a.update_inline((work.0)());
            }
        }
        assert!(a.rows.iter().all(|r| r.problem.is_none()), "{dir}");
        let ins = rr_format::inspect::Inspection::of(&a.rows[0].json_path).unwrap();
        assert!(ins.format.starts_with("LLVM 1"), "{dir}");
    }
}

#[test]
fn addresses_parse_in_hex_or_decimal() {
    use rr_tui::cli::parse_address;
    assert_eq!(parse_address("0x7fe7aa000000"), Ok(0x7fe7_aa00_0000));
    assert_eq!(parse_address("0X7FE7_AA00_0000"), Ok(0x7fe7_aa00_0000));
    assert_eq!(parse_address("140632966299648"), Ok(0x7fe7_aa00_0000));
    assert!(parse_address("0x").is_err());
    assert!(parse_address("-1").is_err());
}

#[test]
fn the_explorer_shows_the_old_tools_replay_output() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use rr_tui::tui::app::{Msg, Pair};
    let (_t, dir) = fixture_copy("llvm18-two-kernels");
    let original = std::fs::read(dir.join("rr_saxpy.original.output")).unwrap();
    std::fs::write(dir.join("rr_saxpy.replay.output"), original).unwrap();
    let mut a = rr_tui::tui::load_app(dir, Err("no GPU".into()), std::env::temp_dir()).unwrap();
    assert!(a.rows[0].old_replay_output.is_some());
    assert!(a.rows[1].old_replay_output.is_none());
    let key = |c| Msg::Key(KeyEvent::new(c, KeyModifiers::NONE));
    a.update_inline(key(KeyCode::Enter));
    a.update_inline(key(KeyCode::Char('p')));
    assert_eq!(
        a.snapshots.view.as_ref().map(|s| s.pair),
        Some(Pair::OutputReplay)
    );
}

#[test]
fn two_copies_of_a_legacy_instance_are_identical() {
    let (_t, dir) = fixture_copy("llvm18-two-kernels");
    let a = descriptor(&fixture("llvm18-two-kernels"), "rr_saxpy");
    let b = descriptor(&dir, "rr_saxpy");
    rr().arg("diff")
        .arg(&a)
        .arg(&b)
        .assert()
        .success()
        .stdout(predicate::str::contains("unreadable").not());
    // LLVM 16 recorded no globals: nothing to compare, not an unreadable file.
    let (_t16, d16) = fixture_copy("llvm16-saxpy");
    rr().arg("diff")
        .arg(descriptor(&fixture("llvm16-saxpy"), "rr_saxpy"))
        .arg(descriptor(&d16, "rr_saxpy"))
        .assert()
        .success()
        .stdout(predicate::str::contains("no such file").not());
}

/// Legacy `.globals` of 64 MiB whose names are the bulk: one name of 64 MiB, or 4 096 names of
/// 16 KiB (past the names' budget). `check`, `inspect` and `diff` refuse each file in one line
/// naming it, within 500 MB of address space (they peaked at 0.8–1.8 GB copying and escaping
/// the names), by the bounds the 2026 layout's reader applies (`rr_format::globals`).
#[test]
fn globals_with_huge_names_are_refused_in_bounded_memory() {
    use rr_format::globals::Globals;
    let (_t, dir) = fixture_copy("llvm18-two-kernels");
    // Control characters: shown escaped, each costs four bytes in every line that shows it.
    let huge = "\u{1}".repeat(64 << 20);
    let many: Vec<String> = (0..4096)
        .map(|i| format!("{i:05}{}", "\u{1}".repeat((16 << 10) - 5)))
        .collect();
    let one = descriptor(&dir, "rr_saxpy");
    let other = descriptor(&dir, "rr_scale_global");
    let entries: Vec<(&str, &[u8])> = many.iter().map(|n| (n.as_str(), &[1u8][..])).collect();
    std::fs::write(
        one.with_extension("globals"),
        Globals::encode_legacy(&[(&huge, &[1, 2, 3, 4])]),
    )
    .unwrap();
    std::fs::write(
        other.with_extension("globals"),
        Globals::encode_legacy(&entries),
    )
    .unwrap();
    let capped = |args: &[&Path]| {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"ulimit -v 500000; exec "$0" "$@""#)
            .arg(env!("CARGO_BIN_EXE_rr-tui"))
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    // Each file is named in lines of bounded length that say why it is not read.
    let refused = |text: &str, json: &Path| {
        let globals = json.with_extension("globals").display().to_string();
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(&globals)).collect();
        !lines.is_empty()
            && lines
                .iter()
                .all(|l| l.len() < 1000 && l.contains("not a module's globals, so it is not read"))
    };
    let (code, out, err) = capped(&[Path::new("check"), &dir]);
    assert_eq!(code, Some(1), "check: {err}");
    assert!(refused(&out, &one) && refused(&out, &other), "check: {out}");
    for json in [&one, &other] {
        let (code, out, err) = capped(&[Path::new("inspect"), json]);
        assert_eq!(code, Some(1), "inspect: {err}");
        assert_eq!(err.lines().count(), 1, "inspect: {err}");
        assert!(refused(&err, json) && refused(&out, json), "inspect: {err}");
    }
    let (code, out, err) = capped(&[Path::new("diff"), &one, &other]);
    assert_eq!(code, Some(1), "diff: {err}");
    assert!(refused(&out, &one) && refused(&out, &other), "diff: {out}");
}
