//! `report` on a directory of 10 000 instances (goal: under 1 s). Prints figures; not a test.

#[path = "common.rs"]
mod common;

use std::process::Command;

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    println!("machine: {}", common::machine());
    for with_report in [true, false] {
        let dir = common::synthetic_dir(tmp.path(), 10_000, with_report);
        let what = if with_report {
            "with report file"
        } else {
            "no report (descriptors parsed)"
        };
        let t = common::median_time(5, || {
            let rd = rr_format::RecordDir::open(&dir).unwrap();
            let text = rr_format::report::render(&rd.absolute_path(), &rd.report_rows().0);
            assert_eq!(rd.instances.len(), 10_000);
            std::hint::black_box(text);
        });
        println!(
            "report, 10 000 instances, {what}: in-process median {:.1} ms",
            t.as_secs_f64() * 1e3
        );
        if let Some(bin) = common::release_binary() {
            let t = common::median_time(5, || {
                let out = Command::new(&bin).arg("report").arg(&dir).output().unwrap();
                assert!(out.status.success());
            });
            println!("report, 10 000 instances, {what}: `rr-tui report` process median {:.1} ms (goal < 1000 ms)", t.as_secs_f64() * 1e3);
        }
    }
}
