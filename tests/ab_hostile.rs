//! `rr-tui ab` on hostile records and command lines: a recorded output of the wrong length is
//! refused before any GPU work, naming it (not found out instance by instance, blaming the
//! candidate), and a directory of record directories suggests the user's own command line with
//! one of them, every other flag kept.

mod common;

use assert_cmd::Command;
use common::*;

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    c
}

/// A format 1 record whose recorded output is short or long is refused with exit status 2,
/// in one line naming the file, by `ab` and `replay --candidate` alike, before anything looks
/// for a driver (none is on the path here): the candidate is not judged on it.
#[test]
fn a_recorded_output_of_the_wrong_length_is_refused_naming_it() {
    for len in [10, 33_024 + 16] {
        let (_t, rec) = fixture_copy("rrtui-stencil3d");
        let json = descriptor_of(&rec, "rr_stencil3d");
        let output = json.with_extension("record_output");
        std::fs::OpenOptions::new()
            .write(true)
            .open(&output)
            .unwrap()
            .set_len(len)
            .unwrap();
        let candidate = rec.join("images/kernels-sm90.cubin");
        let ab = rr()
            .arg("ab")
            .arg(&rec)
            .args(["--kernels", "stencil", "--candidate"])
            .arg(&candidate)
            .env("LD_LIBRARY_PATH", "/nonexistent")
            .output()
            .unwrap();
        let replay = rr()
            .arg("replay")
            .arg(&json)
            .arg("--candidate")
            .arg(&candidate)
            .env("LD_LIBRARY_PATH", "/nonexistent")
            .output()
            .unwrap();
        for o in [ab, replay] {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!(
                    "{}: is {len} bytes but the recorded input is 33024",
                    output.display()
                )),
                "{err}"
            );
        }
    }
}

/// `ab` and `tune --list` given a directory of record directories suggest the command as typed
/// with the first record directory in place of it: the kernels, the candidates and their
/// flags kept (a bare `rr-tui ab DIR` is refused for lack of them), quoted for a shell.
#[test]
fn a_directory_of_records_suggests_the_command_with_every_flag_kept() {
    let root = fixture("");
    let first = root.join("llvm-no-report");
    let o = rr()
        .arg("ab")
        .arg(&root)
        .args([
            "--kernels",
            "saxpy",
            "--candidate",
            "my kernel.cu",
            "-D",
            "ILP=4",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let example = format!(
        "pass one of them, e.g. `rr-tui ab {} --kernels saxpy --candidate 'my kernel.cu' -D 'ILP=4'`",
        first.display()
    );
    assert_eq!(err.lines().last(), Some(example.as_str()), "{err}");
    let o = rr()
        .args(["tune", "--list", "--kernels", "saxpy"])
        .arg(&root)
        .args(["--block", "64,128"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let example = format!(
        "pass one of them, e.g. `rr-tui tune --list --kernels saxpy {} --block 64,128`",
        first.display()
    );
    assert_eq!(err.lines().last(), Some(example.as_str()), "{err}");
}
