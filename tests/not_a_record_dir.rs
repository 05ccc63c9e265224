//! `report`, `check` and `tune --list` on a directory that holds no record: one exit status
//! (2, a usage error), the record directories below it listed (name, instances, layout), and,
//! when there are none, every layout rr-tui reads named.

mod common;

use assert_cmd::Command;
use common::*;

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    c.env("XDG_CONFIG_HOME", "/nonexistent/rr-tui-tests");
    c
}

/// The bundled fixtures: a directory of seven record directories, none of its own.
fn fixtures() -> std::path::PathBuf {
    fixture("llvm-two-kernels").parent().unwrap().to_path_buf()
}

/// (exit status, stdout, stderr) of `rr-tui ARGS DIR`.
fn run(args: &[&str], dir: &std::path::Path) -> (i32, String, String) {
    let out = rr().args(args).arg(dir).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const COMMANDS: [&[&str]; 3] = [
    &["report"],
    &["check"],
    &["tune", "--list", "--grid", "1,2"],
];

#[test]
fn a_directory_of_record_directories_lists_them_with_one_exit_status() {
    for args in COMMANDS {
        let (code, stdout, stderr) = run(args, &fixtures());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}: no empty report on stdout");
        assert!(
            stderr.contains("not a record directory; the record directories below it:"),
            "{args:?}: {stderr}"
        );
        for (name, count, layout) in [
            ("llvm-two-kernels", 4, "LLVM 2026"),
            ("llvm16-saxpy", 1, "LLVM 16–17 layout"),
            ("rrtui-v2-stencil3d", 2, "rr-tui (format 2)"),
        ] {
            let line = stderr
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("{args:?}: {name} not listed: {stderr}"));
            assert!(
                line.contains(&format!("{count} instance(s)")) && line.ends_with(layout),
                "{line}"
            );
        }
        let example = format!(
            "pass one of them, e.g. `rr-tui {}",
            args[..args.len().min(2)].join(" ")
        );
        assert!(stderr.contains(&example), "{args:?}: {stderr}");
        assert!(!stderr.contains("Total Instances"), "{stderr}");
    }
}

#[test]
fn json_says_the_same_on_stdout() {
    for command in ["report", "check"] {
        let (code, stdout, _) = run(&[command, "--json"], &fixtures());
        assert_eq!(code, 2, "{command}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["error"], "not a record directory");
        let found = v["record_directories"]["found"].as_array().unwrap();
        assert_eq!(found.len(), 7, "{stdout}");
        assert_eq!(found[0]["name"], "llvm-no-report");
        assert_eq!(found[0]["instances"], 2);
        assert_eq!(v["record_directories"]["incomplete"], false);
    }
}

#[test]
fn an_empty_directory_names_every_accepted_layout() {
    let empty = tempfile::tempdir().unwrap();
    for args in COMMANDS {
        let (code, stdout, stderr) = run(args, empty.path());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "");
        assert!(
            stderr.contains("not a record directory, and none is below it"),
            "{stderr}"
        );
        for layout in [
            "LLVM 2026",
            "<KernelHash>_<LaunchConfigHash>.json",
            "LLVM 16–22",
            "<Name>.json",
            "rr-records",
            "pid-N",
            "rank-N",
        ] {
            assert!(
                stderr.contains(layout),
                "{args:?}: {layout} not named: {stderr}"
            );
        }
    }
}

#[test]
fn a_record_directory_with_a_report_of_no_instance_is_still_reported() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("report.txt"),
        "=== Kernel Record Report ===\nDirectory: /x\nTotal Instances: 0\nJSON Filename, Kernel Name, Time (ns), Occurrences:\n=== End Kernel Record Report ===\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["report"], d.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Total Instances: 0"), "{stdout}");
}

#[test]
fn names_below_are_made_visible() {
    let d = tempfile::tempdir().unwrap();
    let run_dir = d.path().join("run\x1b]0;pwned\x07");
    std::fs::create_dir(&run_dir).unwrap();
    copy_dir(&fixture("llvm-two-kernels"), &run_dir);
    let (code, _, stderr) = run(&["report"], d.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("run\\x1b]0;pwned\\x07"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "{stderr}");
}

/// `repro` and `diff` given a record directory answer as inspect, replay and profile do (what it
/// is, and `rr-tui report DIR` to list its instances), not the file reader's "is a directory";
/// exit 2, and repro creates no --out.
#[test]
fn repro_and_diff_given_a_record_directory_point_at_report() {
    let dir = fixture("llvm-two-kernels");
    let x = descriptor_of(&dir, "rr_saxpy");
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let os = |p: &std::path::Path| p.as_os_str().to_owned();
    // The directory first and second: diff looks at either side (two directories: the first).
    let cases = [
        ("repro", vec![os(&dir), "--out".into(), os(&out)]),
        ("diff", vec![os(&dir), os(&fixture("llvm16-saxpy"))]),
        ("diff", vec![os(&x), os(&dir)]),
    ];
    for (command, args) in cases {
        let o = rr().arg(command).args(&args).output().unwrap();
        let stderr = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{command}: {stderr}");
        let expected = format!(
            "rr-tui: error: {}: a record directory; {command} takes one instance's descriptor \
             (X.json): `rr-tui report {}` lists them\n",
            dir.display(),
            dir.display()
        );
        assert_eq!(stderr, expected, "{command} {args:?}");
    }
    assert!(!out.exists(), "repro wrote nothing");
}
