//! Byte comparison of two 1 GiB snapshots against `cmp` on identical 1 GiB files, two sparse
//! 4 GiB snapshots against `cmp` on the same kind of pair, resident memory of `rr-tui diff`, and
//! typed f32 comparison with tolerance on one core and on all. Prints figures and ratios measured
//! in the same run; not a test. Needs ~4.2 GiB in $TMPDIR (the sparse files hold 64 MiB each)
//! and `cargo build --release`; everything is deleted at the end.

#[path = "common.rs"]
mod common;

use rr_engine::diff::range::compare_range;
use rr_engine::diff::sweep::Sweep;
use rr_engine::diff::{Comparison, DType, Tolerance};
use rr_engine::snapshot::Snapshot;
use std::io::Write;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

const GIB: usize = 1 << 30;

fn write_file(path: &std::path::Path, f: impl Fn(usize, &mut [u8])) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut buf = vec![0u8; 64 << 20];
    for chunk in 0..GIB / buf.len() {
        f(chunk * buf.len(), &mut buf);
        out.write_all(&buf).unwrap();
    }
}

/// A sparse 4 GiB file: `data` (offset, bytes) written into holes.
fn write_sparse(path: &std::path::Path, data: &[(u64, Vec<u8>)]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::create(path).unwrap();
    f.set_len(4 * GIB as u64).unwrap();
    for (at, bytes) in data {
        f.write_all_at(bytes, *at).unwrap();
    }
}

fn warm(path: &std::path::Path) {
    let _ = Command::new("cat")
        .arg(path)
        .stdout(std::process::Stdio::null())
        .status();
}

/// Run a command and return (exit code, peak resident set size in kB) of that child alone.
/// `VmHWM` is read from /proc while it runs: getrusage's maximum would also count the pages it
/// shared with this (large) process between fork and exec.
fn run_measured(cmd: &mut Command) -> (i32, u64) {
    let mut child = cmd.stdout(std::process::Stdio::null()).spawn().unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status_file) {
            if let Some(v) = s
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            {
                peak = peak.max(v);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            return (st.code().unwrap_or(-1), peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    println!("machine: {}", common::machine());
    let floats = |off: usize, buf: &mut [u8]| {
        for (i, c) in buf.chunks_exact_mut(4).enumerate() {
            c.copy_from_slice(&(((off / 4 + i) % 4093) as f32 * 0.25).to_le_bytes());
        }
    };
    write_file(&d.join("a"), floats);
    write_file(&d.join("a2"), floats);
    // A handful of differing ranges.
    write_file(&d.join("b"), |off, buf| {
        floats(off, buf);
        for hit in [3usize << 20, 200 << 20, 511 << 20, 777 << 20, 1000 << 20] {
            if hit >= off && hit < off + buf.len() {
                buf[hit - off..hit - off + 64].fill(0xff);
            }
        }
    });
    // Every element perturbed by one ULP (the worst case for typed comparison).
    write_file(&d.join("c"), |off, buf| {
        floats(off, buf);
        for c in buf.chunks_exact_mut(4) {
            let v = u32::from_le_bytes(c.try_into().unwrap()) ^ 1;
            c.copy_from_slice(&v.to_le_bytes());
        }
    });
    for f in ["a", "a2", "b", "c"] {
        warm(&d.join(f));
    }

    let cmp = common::median_time(3, || {
        let s = Command::new("cmp")
            .arg(d.join("a"))
            .arg(d.join("a2"))
            .status()
            .unwrap();
        assert!(s.success());
    });
    let (sa, sb) = (
        Snapshot::open(&d.join("a")).unwrap(),
        Snapshot::open(&d.join("b")).unwrap(),
    );
    let ours = common::median_time(3, || {
        let out = rr_engine::diff::build_index(&sa, &sb, 8, &AtomicBool::new(false), |_, _, _| {})
            .unwrap();
        assert_eq!(out.index.ranges.len(), 5);
    });
    let gbps = |t: std::time::Duration| GIB as f64 / t.as_secs_f64() / 1e9;
    println!(
        "cmp, identical 1 GiB files: {:.3} s ({:.2} GB/s)",
        cmp.as_secs_f64(),
        gbps(cmp)
    );
    println!(
        "rr-tui index, 1 GiB with 5 differing ranges: {:.3} s ({:.2} GB/s)",
        ours.as_secs_f64(),
        gbps(ours)
    );
    println!(
        "throughput ratio rr-tui / cmp: {:.2} (goal >= 0.8)",
        cmp.as_secs_f64() / ours.as_secs_f64()
    );

    if let Some(bin) = common::release_binary() {
        let t = Instant::now();
        let (code, rss) = run_measured(
            Command::new(&bin)
                .arg("diff")
                .arg(d.join("a"))
                .arg(d.join("b")),
        );
        let wall = t.elapsed();
        assert_eq!(code, 1);
        println!(
            "`rr-tui diff a b` (1 GiB): {:.3} s, peak resident memory {:.1} MiB (goal < 64 MiB)",
            wall.as_secs_f64(),
            rss as f64 / 1024.0
        );
    }

    let sc = Snapshot::open(&d.join("c")).unwrap();
    let tol = Comparison {
        dtype: DType::F32,
        big_endian: false,
        tolerance: Tolerance {
            atol: 0.0,
            rtol: 1e-6,
            ulp: 0,
        },
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (what, other) in [
        ("5 differing ranges", &sb),
        ("every element 1 ULP off", &sc),
    ] {
        let mut times = Vec::new();
        for workers in [1, cores] {
            let sweep = Sweep {
                cmp: &tol,
                keep: 4,
                workers,
            };
            let t = common::median_time(3, || {
                let r = compare_range(&sa, other, 0, GIB as u64, &sweep, &mut |_| {}).unwrap();
                std::hint::black_box(r);
            });
            times.push(t.as_secs_f64());
        }
        println!(
            "typed f32 comparison (rtol 1e-6), 1 GiB, {what}: {:.3} s on one core, {:.3} s on {cores} cores ({:.2}x)",
            times[0],
            times[1],
            times[0] / times[1]
        );
    }
    for f in ["a", "a2", "b", "c"] {
        let _ = std::fs::remove_file(d.join(f));
    }
    sparse_pair(d);
}

/// Two sparse 4 GiB snapshots (64 MiB of data each, in 16 places, some of it a hole on the
/// other side) against `cmp` on an identical sparse pair, which reads every hole as zeros.
fn sparse_pair(d: &std::path::Path) {
    let extent = |k: u64, fill: u8| (k << 28, vec![fill; 4 << 20]);
    let a: Vec<_> = (0..16).map(|k| extent(k, 1 + k as u8)).collect();
    let mut b = a.clone();
    b[3].1[1000] ^= 0xff; // one differing byte
    b[9].1[..4096].fill(0); // a differing page
    b.remove(12); // data in a, a hole in b
    write_sparse(&d.join("sa"), &a);
    write_sparse(&d.join("sa2"), &a);
    write_sparse(&d.join("sb"), &b);
    for f in ["sa", "sa2", "sb"] {
        warm(&d.join(f));
    }
    let cmp = common::median_time(3, || {
        let s = Command::new("cmp")
            .arg(d.join("sa"))
            .arg(d.join("sa2"))
            .status()
            .unwrap();
        assert!(s.success());
    });
    let (sa, sa2, sb) = (
        Snapshot::open(&d.join("sa")).unwrap(),
        Snapshot::open(&d.join("sa2")).unwrap(),
        Snapshot::open(&d.join("sb")).unwrap(),
    );
    let index = |x: &Snapshot, y: &Snapshot| {
        rr_engine::diff::build_index(x, y, 8, &AtomicBool::new(false), |_, _, _| {}).unwrap()
    };
    let same = common::median_time(3, || assert!(index(&sa, &sa2).identical()));
    let different = common::median_time(3, || {
        let out = index(&sa, &sb);
        assert_eq!(out.index.differing_bytes(), 1 + 4096 + (4 << 20));
    });
    println!(
        "sparse 4 GiB pair (64 MiB of data each): cmp (identical pair) {:.3} s; rr-tui index: identical pair {:.3} s ({:.0}x cmp's speed), pair with differences {:.3} s",
        cmp.as_secs_f64(),
        same.as_secs_f64(),
        cmp.as_secs_f64() / same.as_secs_f64(),
        different.as_secs_f64()
    );
    if let Some(bin) = common::release_binary() {
        let t = common::median_time(3, || {
            let s = Command::new(&bin)
                .arg("diff")
                .arg(d.join("sa"))
                .arg(d.join("sb"))
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap();
            assert_eq!(s.code(), Some(1));
        });
        println!(
            "`rr-tui diff sa sb` (sparse 4 GiB pair, the process): {:.3} s",
            t.as_secs_f64()
        );
    }
    for f in ["sa", "sa2", "sb"] {
        let _ = std::fs::remove_file(d.join(f));
    }
}
