//! `rr-tui ab` rotating many instances of one kernel, on the stand-in driver doing the GPU's
//! work (FAKE_CUDA_COMPUTE in tests/tools/fake_libcuda.c: its rr_stencil3d copies its input to
//! its output, its fingerprints sum the bytes and its asynchronous copies and memsets act), so
//! that a verification compares real bytes. Every instance has an input of its own: a result
//! carried from one instance to the next is wrong there. The real kernels and cheats are in the
//! GPU suite (tests/gpu/samples/ab_cheats.cu).

mod common;

use assert_cmd::Command;
use common::*;
use std::path::Path;

/// More instances than the stand-in driver's fixed tables once held (each switch asked for the
/// module's globals again, each answer a range of its own): it ran out after about ten.
const INSTANCES: usize = 16;

/// Bytes of the stencil's input and output (16 × 16 × 16 floats).
const SEGMENT: usize = 16384;

/// The fixture's instance every generated one is made from.
const BASE: &str = "3844743599784193033_15987061097491423463";

/// Instance `i`'s input: bytes no other instance has at any offset.
fn input_of(i: usize) -> Vec<u8> {
    (0..SEGMENT)
        .map(|j| (j % 251) as u8 ^ (i as u8).wrapping_mul(17).wrapping_add(1))
        .collect()
}

/// A record of `n` instances of the stencil fixture's kernel, one memory layout (one worker
/// rotates them all), each with its own input and, as its recorded output, what the stand-in's
/// stencil makes of it (out = in). The output's recorded input stays the fixture's, which
/// differs: the poison has bytes to cover.
fn distinct_record(n: usize) -> tempfile::TempDir {
    let src = fixture("rrtui-v2-stencil3d");
    let t = tempfile::tempdir().unwrap();
    copy_dir(&src.join("blobs"), &t.path().join("blobs"));
    copy_dir(&src.join("images"), &t.path().join("images"));
    let text = std::fs::read_to_string(src.join(BASE).with_extension("json")).unwrap();
    let base: serde_json::Value = serde_json::from_str(&text).unwrap();
    // rr_stencil3d(out, in, coef, nx, ny, nz): the segments its first two parameters point to.
    let params = base["ParamBuffer"].as_str().unwrap();
    let pointer = |k: usize| {
        let hex = &params[16 * k..16 * k + 16];
        let bytes: Vec<u8> = (0..8)
            .map(|b| u8::from_str_radix(&hex[2 * b..2 * b + 2], 16).unwrap())
            .collect();
        u64::from_le_bytes(bytes.try_into().unwrap())
    };
    let segment = |addr: u64| {
        base["Segments"]
            .as_array()
            .unwrap()
            .iter()
            .position(|s| s["Addr"].as_u64() == Some(addr))
            .expect("a recorded segment at the stencil's pointer")
    };
    let (out, input) = (segment(pointer(0)), segment(pointer(1)));
    for i in 0..n {
        let bytes = input_of(i);
        let id = rr_format::store::blob_id(&bytes);
        std::fs::write(t.path().join("blobs").join(&id), &bytes).unwrap();
        let mut d = base.clone();
        d["Occurrence"] = i.into();
        d["Segments"][input]["Input"] = id.clone().into();
        d["Segments"][input]["Output"] = id.clone().into();
        d["Segments"][out]["Output"] = id.into();
        let name = t
            .path()
            .join(format!("3844743599784193033_{}", 1_000_000 + i));
        std::fs::write(name.with_extension("json"), d.to_string()).unwrap();
        std::fs::copy(
            src.join(BASE).with_extension("globals"),
            name.with_extension("globals"),
        )
        .unwrap();
    }
    t
}

/// A PTX candidate of rr_stencil3d's parameters (the stand-in driver answers them from its
/// own table), with `marker` in a comment: FAKE_CUDA_STASH makes the stand-in's kernel cheat.
fn ptx_candidate(dir: &Path, name: &str, marker: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let text = format!(
        "// {marker}\n.version 8.0\n.target sm_90\n.address_size 64\n\n\
         .visible .entry rr_stencil3d(.param .u64 out, .param .u64 in, .param .u64 coef, \
         .param .u32 nx, .param .u32 ny, .param .u32 nz)\n{{\n\tret;\n}}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `rr-tui ab --json` on `dir` with `candidates`, the stand-in driver computing: the exit
/// status, the leaderboard and stderr.
fn ab(dir: &Path, candidates: &[&Path]) -> (Option<i32>, serde_json::Value, String) {
    let driver = fake_driver();
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1")
        .arg("ab")
        .arg(dir)
        .args([
            "--kernels",
            ".",
            "--repetitions",
            "12",
            "--events-only",
            "--json",
        ])
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .env("FAKE_CUDA_COMPUTE", "1");
    for candidate in candidates {
        c.arg("--candidate").arg(candidate);
    }
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let board = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (out.status.code(), board, stderr)
}

/// An honest candidate (the recorded image, and a PTX of its own), rotated over 16 instances
/// with the candidate kept loaded: verified on every one, in one worker rotating all 16, and
/// the poison was armed (the candidate overwrote it each time).
#[test]
fn ab_verifies_an_honest_candidate_on_every_one_of_many_rotated_instances() {
    let rec = distinct_record(INSTANCES);
    let work = tempfile::tempdir().unwrap();
    let image = fixture("rrtui-v2-stencil3d").join("images/kernels-sm90.cubin");
    let ptx = ptx_candidate(work.path(), "honest.ptx", "an honest stencil");
    let (code, board, stderr) = ab(rec.path(), &[&image, &ptx]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(board["passed"], true, "{board}");
    assert_eq!(board["instances"].as_array().unwrap().len(), INSTANCES);
    let candidates = board["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2, "{board}");
    for c in candidates {
        assert_eq!(
            (c["verified"].as_u64(), c["total"].as_u64()),
            (Some(INSTANCES as u64), Some(INSTANCES as u64)),
            "{c}"
        );
        assert_ne!(c["verdict"], "rejected", "{c}");
        for r in c["instances"].as_array().unwrap() {
            assert_eq!(r["status"], "verified", "{r}");
            assert!(r["poisoned_bytes"].as_u64().unwrap() > 0, "{r}");
            let notes = r["notes"].to_string();
            assert!(
                notes.contains(&format!("rotating {INSTANCES} instances")),
                "{notes}"
            );
        }
    }
}

/// A candidate that computes its first result and hands that back on every later launch, kept
/// where no reset reaches (the STASH cheat): right on the first instance, where it computed,
/// and wrong on every instance after it, whose input differs. The recorded image beside it
/// verifies everywhere, so the cheat is the candidate's, not the record's.
#[test]
fn ab_catches_a_candidate_that_hands_back_its_first_result_on_the_instances_after() {
    let rec = distinct_record(INSTANCES);
    let work = tempfile::tempdir().unwrap();
    let stash = ptx_candidate(work.path(), "stash.ptx", "FAKE_CUDA_STASH");
    let (code, board, stderr) = ab(rec.path(), &[&stash]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(board["passed"], false, "{board}");
    let c = &board["candidates"][0];
    assert_eq!(c["verdict"], "rejected", "{c}");
    assert_eq!(c["verified"], 1, "{c}");
    let results = c["instances"].as_array().unwrap();
    assert_eq!(results.len(), INSTANCES);
    for (i, r) in results.iter().enumerate() {
        if i == 0 {
            assert_eq!(r["status"], "verified", "{r}");
        } else {
            assert_eq!(r["status"], "wrong", "{i}: {r}");
            assert!(r["reason"].as_str().unwrap().contains("differ"), "{i}: {r}");
        }
    }
    let image = fixture("rrtui-v2-stencil3d").join("images/kernels-sm90.cubin");
    let (code, board, stderr) = ab(rec.path(), &[&stash, &image]);
    assert_eq!(code, Some(0), "{stderr}");
    let ranked = board["candidates"].as_array().unwrap();
    assert_eq!(ranked[0]["verified"], INSTANCES as u64, "{board}");
    assert_eq!(ranked[1]["verified"], 1, "{board}");
}

/// A candidate that does the work on its first launch only and nothing after (SKIP_TIMED): that
/// first run, on the first instance, verifies; the poison left in place is then found on every
/// instance: the first when it is verified again, the others on their first run.
#[test]
fn ab_catches_a_candidate_that_skips_the_work_after_its_first_launch() {
    let rec = distinct_record(INSTANCES);
    let work = tempfile::tempdir().unwrap();
    let skip = ptx_candidate(work.path(), "skip.ptx", "FAKE_CUDA_SKIP");
    let (code, board, stderr) = ab(rec.path(), &[&skip]);
    assert_eq!(code, Some(1), "{stderr}");
    let c = &board["candidates"][0];
    assert_eq!(
        (c["verdict"].as_str(), c["verified"].as_u64()),
        (Some("rejected"), Some(0)),
        "{c}"
    );
    for (i, r) in c["instances"].as_array().unwrap().iter().enumerate() {
        assert_eq!(r["status"], "wrong", "{i}: {r}");
        let reason = r["reason"].as_str().unwrap();
        assert_eq!(
            reason.contains("its first run here"),
            i > 0,
            "{i}: {reason}"
        );
    }
}
