//! Shared by the benchmarks (not a test): synthetic record directories and measurements.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A record directory with `n` instances of LLVM layout: descriptors, tiny snapshots and
/// globals, one shared-content image per instance, and (optionally) a report file.
pub fn synthetic_dir(root: &Path, n: usize, with_report: bool) -> PathBuf {
    use rr_format::hash;
    let dir = root.join(format!(
        "synthetic-{n}-{}",
        if with_report { "report" } else { "noreport" }
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let image = std::fs::read(fixture_json().with_extension("image")).unwrap();
    let globals = rr_format::globals::Globals::encode(&[("g_scale", &[0, 0, 0x20, 0x40])]);
    let mut rows = Vec::new();
    for i in 0..n {
        let name = format!(
            "__omp_offloading_fd02_{:x}_kernel{}_l{}",
            i * 7919,
            i % 97,
            i
        );
        let (teams, threads) = (1 + (i % 64) as u32, 32 * (1 + (i % 8) as u32));
        let stem = hash::instance_stem(&name, teams, threads, 0);
        let json = format!(
            r#"{{"ArgOffsets":[0,0],"ArgPtrs":[23335631060992,-1],"DeviceId":0,"LoopTripCount":{i},"Name":"{name}","NumArgs":2,"NumTeams":{teams},"NumThreads":{threads},"SharedMemorySize":0,"TeamsLimits":[0,0],"ThreadsLimits":[1,1024],"VAllocAddr":23335631060992,"VAllocSize":8589934592}}"#
        );
        std::fs::write(dir.join(format!("{stem}.json")), json).unwrap();
        std::fs::write(dir.join(format!("{stem}.record_input")), [0u8; 64]).unwrap();
        std::fs::write(dir.join(format!("{stem}.record_output")), [1u8; 64]).unwrap();
        std::fs::write(dir.join(format!("{stem}.globals")), &globals).unwrap();
        if i < 16 {
            std::fs::write(dir.join(format!("{stem}.image")), &image).unwrap();
        }
        rows.push(rr_format::report::ReportRow {
            json_file: format!("{stem}.json"),
            kernel_name: name,
            time_ns: Some(1000 + i as u64),
            occurrences: Some(1),
        });
    }
    if with_report {
        std::fs::write(
            dir.join("report.txt"),
            rr_format::report::render(&dir.display().to_string(), &rows),
        )
        .unwrap();
    }
    dir
}

pub fn fixture_json() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("record-fixtures/llvm-two-kernels/8683979482637550046_13526365365894479501.json")
}

/// Median of `runs` timings of `f`.
pub fn median_time(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut v: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    v[v.len() / 2]
}

/// The release binary, if built (`cargo build --release`).
pub fn release_binary() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/rr-tui");
    p.exists().then_some(p)
}

/// Resident set size of this process, from /proc (kB).
pub fn rss_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        .unwrap_or_default();
    format!(
        "{cpu}, {} cores",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    )
}
