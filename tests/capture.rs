//! What the recorder adds for modern stacks, as the headless commands and the explorer show it
//! (no GPU needed): the recorder's account after LLVM's report table, texture and surface
//! objects, host memory, graph launches, arguments pointing outside the recorded memory, and
//! instances that cannot be replayed. The recording itself runs in the GPU suite
//! (tests/gpu/capture-suite.sh).

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

const TRAILER: &str = "rr-tui: launches: 1234 seen, 20 selected, 18 recorded\n\
rr-tui: not recorded: 1214 not selected (a launch configuration already recorded)\n\
rr-tui: not recorded: 2 inside CUDA graphs holding a conditional node\n\
rr-tui: launches were seen through the recorder's own driver entry points (preloaded)\n";

/// A copy of the format-2 fixture with the recorder's report (and its trailer).
fn recording() -> (tempfile::TempDir, PathBuf) {
    let (t, dir) = fixture_copy("rrtui-v2-stencil3d");
    write_report(&dir, TRAILER);
    (t, dir)
}

fn first_json(dir: &Path) -> PathBuf {
    descriptor_of(dir, "rr_stencil3d")
}

fn rewrite(json: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(json, v.to_string()).unwrap();
}

#[test]
fn report_prints_the_recorders_account_after_llvms_table() {
    let (_t, dir) = recording();
    let out = rr().arg("report").arg(&dir).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let end = text
        .find("=== End Kernel Record Report ===\n")
        .expect("LLVM's table, unchanged");
    let after = &text[end + "=== End Kernel Record Report ===\n".len()..];
    assert!(after.starts_with(TRAILER), "{after}");
    let json = rr().args(["report", "--json"]).arg(&dir).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["recorder"]["seen"], 1234);
    assert_eq!(
        v["recorder"]["not_recorded"][1][1],
        "inside CUDA graphs holding a conditional node"
    );
    assert_eq!(
        v["notes"][0],
        "launches were seen through the recorder's own driver entry points (preloaded)"
    );
}

/// Write `value` into the descriptor's ParamBuffer (hex) at byte `offset`.
fn set_word(v: &mut serde_json::Value, offset: usize, value: u64) {
    let hex = v["ParamBuffer"].as_str().unwrap().to_string();
    let word: String = value
        .to_le_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let at = 2 * offset;
    v["ParamBuffer"] = format!("{}{word}{}", &hex[..at], &hex[at + 16..]).into();
}

/// The first instance as a texture-taking kernel from a graph, with host memory and an argument
/// the recorder found pointing outside the recorded memory.
fn decorated() -> (tempfile::TempDir, PathBuf) {
    let (t, dir) = recording();
    let json = first_json(&dir);
    rewrite(&json, |v| {
        v["FromGraph"] = true.into();
        v["Segments"][2]["Kind"] = "host".into();
        let seg0 = v["Segments"][0]["Addr"].clone();
        v["Objects"] = serde_json::json!([{
            "Offset": 16, "Kind": "texture", "Handle": "7",
            "Resource": {"Type": "linear", "Addr": seg0, "Format": 32, "Channels": 1, "Size": 4096},
            "Texture": {"AddressMode": [1, 1, 1], "FilterMode": 0, "Flags": 0, "MaxAnisotropy": 0,
                        "MipmapFilterMode": 0, "MipmapLevelBias": 0, "MinMipmapLevelClamp": 0,
                        "MaxMipmapLevelClamp": 0, "BorderColor": [0, 0, 0, 0]}
        }]);
        v["OutsidePointers"] = serde_json::json!([
            {"Offset": 8, "Value": "140079000000000", "What": "device memory"}
        ]);
        // The parameter words they name hold those values (a reader checks).
        set_word(v, 8, 140_079_000_000_000);
        set_word(v, 16, 7);
    });
    (t, json)
}

#[test]
fn inspect_shows_objects_host_memory_graphs_and_outside_pointers() {
    let (_t, json) = decorated();
    let out = rr().arg("inspect").arg(&json).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    for want in [
        "a kernel node of a CUDA graph",
        "texture object 7",
        "Objects      1",
        "over linear memory at 0x7f611c800000, 4096 bytes of f32; point filtering, address clamp/clamp/clamp",
        "host memory",
        "Warning      argument 1 = 0x7f66af091600 (device memory when recorded) points outside the recorded memory",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn check_warns_and_strict_makes_it_an_error() {
    let (_t, json) = decorated();
    let dir = json.parent().unwrap();
    rr().arg("check")
        .arg(dir)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "warning: argument 1 = 0x7f66af091600 (device memory when recorded) points outside the recorded memory",
        ));
    rr().args(["check", "--strict"]).arg(dir).assert().code(1);
}

#[test]
fn replay_refuses_unreplayable_instances_and_strict_refuses_outside_pointers_before_any_gpu() {
    let (_t, json) = decorated();
    // Refused for what the record holds: exit 2, as in every command.
    rr().args(["replay", "--strict"])
        .arg(&json)
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "warning: argument 1 = 0x7f66af091600 (device memory when recorded) points outside",
        ))
        .stderr(predicate::str::contains("--strict refuses to run it"));
    // A sweep applies the same rule, before looking for a GPU.
    rr().args(["tune", "--strict", "--block", "32,64"])
        .arg(&json)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "points outside the recorded memory",
        ))
        .stderr(predicate::str::contains("--strict refuses to sweep"));
    rewrite(&json, |v| {
        v["Unreplayable"] =
            "the texture object at parameter byte 16 reads a mipmapped array\u{1b}[31m".into()
    });
    rr().arg("replay")
        .arg(&json)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "this instance cannot be replayed: the texture object at parameter byte 16 reads a mipmapped array\\x1b[31m",
        ));
    rr().arg("check")
        .arg(json.parent().unwrap())
        .assert()
        .stdout(predicate::str::contains("cannot be replayed"));
}

#[test]
fn hostile_objects_and_segment_kinds_are_one_line_errors() {
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit); 4] = [
        ("Objects[0].Offset", |v| {
            v["Objects"] = serde_json::json!([{"Offset": 36, "Kind": "surface", "Handle": "1",
                "Resource": {"Type": "array", "Segment": 0}}]);
        }),
        ("not a CUDA array", |v| {
            v["Objects"] = serde_json::json!([{"Offset": 16, "Kind": "surface", "Handle": "1",
                "Resource": {"Type": "array", "Segment": 1}}]);
        }),
        ("Segments[1].Kind", |v| {
            v["Segments"][1]["Kind"] = "gpu".into()
        }),
        ("CUDA array", |v| {
            v["Segments"][2]["Kind"] = "array".into();
            v["Segments"][2]["Array"] = serde_json::json!({"Width": 1048576, "Height": 1048576,
                "Depth": 1048576, "Format": 32, "Channels": 4, "Flags": 0});
        }),
    ];
    for (want, edit) in cases {
        let (_t, dir) = fixture_copy("rrtui-v2-stencil3d");
        let json = first_json(&dir);
        rewrite(&json, edit);
        let out = rr().arg("inspect").arg(&json).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{want}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{want}: {err}"
        );
    }
}

/// `record` preloads the recorder unless told to use CUPTI alone, and makes CUDA inject it only
/// where CUPTI is used (being injected costs every driver call); a program that never uses CUDA
/// runs unchanged either way (no GPU here), and bad values are refused by clap.
#[test]
fn record_preloads_the_recorder_without_disturbing_the_program() {
    let t = tempfile::tempdir().unwrap();
    // (hooks, preloaded, injected)
    for (hooks, preloaded, injected) in [
        ("interpose", true, false),
        ("mixed", true, true),
        ("cupti", false, true),
    ] {
        let dir = t.path().join(hooks);
        let out = rr()
            .args(["record", "--hooks", hooks, "--dir"])
            .arg(&dir)
            .args([
                "--",
                "sh",
                "-c",
                "echo \"preload=$LD_PRELOAD\"; echo \"inject=$CUDA_INJECTION64_PATH\"; python3 -c 'import ctypes'",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{hooks}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = |key: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap_or_default()
                .contains("librr_recorder.so")
        };
        assert_eq!(line("preload="), preloaded, "{hooks}: {stdout}");
        assert_eq!(line("inject="), injected, "{hooks}: {stdout}");
    }
    // The flag's earlier name still works.
    rr().args(["record", "--launch-hooks", "cupti", "--dir"])
        .arg(t.path().join("alias"))
        .args(["--", "true"])
        .assert()
        .success();
    rr().args(["record", "--hooks", "ptrace", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("interpose"));
}

/// Format 2 has no `.record_input` files: diff names the descriptor and the side, a damaged blob
/// names its segment by index and is one error even when input and output share it, and an
/// instance recorded without output says so on its descriptor.
#[test]
fn format_2_problems_name_what_exists() {
    let (_t, dir) = recording();
    let json = first_json(&dir);
    let stem = json.file_stem().unwrap().to_string_lossy().into_owned();
    let out = rr().arg("diff").arg(&json).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "{stem}.json (recorded input) → {stem}.json (recorded output)"
        )) && !text.contains(".record_input"),
        "{text}"
    );
    // Segment 2's input and output are one blob; cut it short.
    let blob = dir.join("blobs/24c796eefc3a5e9755d776138aa865b7");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&blob)
        .unwrap()
        .set_len(100)
        .unwrap();
    let out = rr().arg("check").arg(&json).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let want = "is 100 bytes but segment 2 (0x7f611c808000) is 256 bytes";
    assert_eq!(text.matches(want).count(), 1, "{text}");
    // Without output.
    let (_t2, dir) = recording();
    let json = first_json(&dir);
    rewrite(&json, |v| {
        for s in v["Segments"].as_array_mut().unwrap() {
            s.as_object_mut().unwrap().remove("Output");
        }
    });
    let out = rr().arg("check").arg(&json).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("recorded without its output (rr-tui record --no-output)")
            && !text.contains("record_output"),
        "{text}"
    );
}

/// A blob overwritten with other bytes of the same size: `check` names it (it used to pass
/// `--strict`), and `replay` refuses to restore it, before looking for a GPU.
#[test]
fn tampered_blobs_are_found() {
    let (_t, dir) = recording();
    let json = first_json(&dir);
    let blob = dir.join("blobs/a21d459c03bf6c99b7ce04b81707a4d0");
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();
    rr().args(["check", "--strict"])
        .arg(&dir)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "a21d459c03bf6c99b7ce04b81707a4d0: error: holds other bytes than its name says",
        ));
    rr().arg("replay")
        .arg(&json)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds other bytes than its name says",
        ));
}

/// `diff A.json B.json` compares what the recorder adds: objects, outside words, graph launches,
/// segment kinds, and why an instance cannot be replayed.
#[test]
fn diff_of_two_instances_compares_the_recorders_keys() {
    let (_t, json) = decorated();
    let (_t2, dir) = recording();
    let plain = first_json(&dir);
    let out = rr().arg("diff").arg(&plain).arg(&json).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "from a CUDA graph",
        "objects ",
        "object 0",
        "outside pointers",
        "segment 2 ",
        "host 0x",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert_eq!(out.status.code(), Some(1), "{text}");
}
