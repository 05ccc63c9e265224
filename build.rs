//! What this machine offers the integration tests (tmux, Ray, mkfifo, a GPU), as cfg flags: a
//! test that cannot run here is compiled as ignored, with its reason (`cargo test` lists it as
//! ignored), instead of passing without running. With `REQUIRE_ALL=1` (set by `.ci/run` and by
//! the GPU suite's wrapper) nothing is ignored for a missing dependency: its test fails. A GPU
//! present ignores the tests of a machine without one (the GPU suite covers those paths).
//!
//! Installing a tool later (same PATH) is seen after `touch build.rs` or `cargo clean -p rr-tui`.

use std::process::Command;

fn runs(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn main() {
    for cfg in ["rr_no_tmux", "rr_no_ray", "rr_no_mkfifo", "rr_gpu"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=REQUIRE_ALL");
    println!("cargo::rerun-if-env-changed=PATH");
    let require_all = std::env::var("REQUIRE_ALL").is_ok_and(|v| v == "1");
    if !require_all {
        if !runs("tmux", &["-V"]) {
            println!("cargo::rustc-cfg=rr_no_tmux");
        }
        if !runs("python3", &["-c", "import ray"]) {
            println!("cargo::rustc-cfg=rr_no_ray");
        }
        if !runs("sh", &["-c", "command -v mkfifo"]) {
            println!("cargo::rustc-cfg=rr_no_mkfifo");
        }
    }
    if std::path::Path::new("/dev/nvidiactl").exists() {
        println!("cargo::rustc-cfg=rr_gpu");
    }
}
