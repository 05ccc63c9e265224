//! `rr-tui ab` on hostile records: a recorded output of the wrong length is refused before any
//! GPU work, naming it (not found out instance by instance, blaming the candidate).

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
