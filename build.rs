//! What this machine offers the integration tests (tmux, Ray, mkfifo, g++, cuda-python, a GPU), as cfg flags: a
//! test that cannot run here is compiled as ignored, with its reason (`cargo test` lists it as
//! ignored), instead of passing without running. With `REQUIRE_ALL=1` (set by `.ci/run` and by
//! the GPU suite's wrapper) nothing is ignored for a missing dependency: its test fails. A GPU
//! present ignores the tests of a machine without one (the GPU suite covers those paths).
//!
//! Installing a tool later (same PATH) is seen after `touch build.rs` or `cargo clean -p rr-tui`.
//!
//! It also says what `rr-tui --version` names: the commit built (read with git from a git
//! checkout of rr-tui itself, with `-dirty` when the sources built differ from it:
//! build/version.rs; `RR_TUI_COMMIT` when set, for builds from a source archive; else
//! "unknown") and what the build holds. Nothing depends on the time or the machine, so builds
//! of the same sources are the same.

use std::process::Command;

#[path = "build/version.rs"]
mod version;

fn runs(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The CUDA driver API version the build is written against: the `cuda-NNNNN` feature of
/// cudarc in the workspace's Cargo.toml (`13.0` for cuda-13000).
fn cuda_api(root: &std::path::Path) -> String {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    manifest
        .lines()
        .filter(|l| l.trim_start().starts_with("cudarc"))
        .find_map(|l| {
            let digits = l.split("\"cuda-").nth(1)?.split('"').next()?;
            let n: u32 = digits.parse().ok()?;
            Some(format!("{}.{}", n / 1000, n % 1000 / 10))
        })
        .unwrap_or_else(|| "unknown".into())
}

/// `RR_TUI_COMMIT`, `RR_TUI_BUILD` and `RR_TUI_CUDA_API` for `--version`.
fn version_info() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo::rerun-if-env-changed=RR_TUI_COMMIT");
    println!("cargo::rerun-if-changed=Cargo.toml");
    println!("cargo::rerun-if-changed=build/version.rs");
    let given = std::env::var("RR_TUI_COMMIT")
        .ok()
        .filter(|c| !c.is_empty());
    let commit = match given {
        Some(c) => c,
        None => match version::built(&root) {
            Some(built) => {
                for file in built.watched {
                    println!("cargo::rerun-if-changed={file}");
                }
                built.commit
            }
            None => "unknown".into(),
        },
    };
    println!("cargo::rustc-env=RR_TUI_COMMIT={commit}");
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo::rustc-env=RR_TUI_BUILD={profile}, {target}");
    println!("cargo::rustc-env=RR_TUI_CUDA_API={}", cuda_api(&root));
}

fn main() {
    version_info();
    for cfg in [
        "rr_no_tmux",
        "rr_no_ray",
        "rr_no_mkfifo",
        "rr_no_cxx",
        "rr_no_cuda_python",
        "rr_no_mount",
        "rr_gpu",
    ] {
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
        // The reproducers' tests build repro.cpp and run repro.py on the stand-in driver.
        if !runs("g++", &["--version"]) {
            println!("cargo::rustc-cfg=rr_no_cxx");
        }
        if !runs("python3", &["-c", "import cuda.bindings.driver"]) {
            println!("cargo::rustc-cfg=rr_no_cuda_python");
        }
    }
    // A privilege, not a tool to install: tests that fill a small file system of their own
    // (a tmpfs in a private mount namespace) are ignored without it, even with REQUIRE_ALL.
    let mount = "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs \"$d\" && umount \"$d\"; \
                 s=$?; rmdir \"$d\"; exit $s";
    if !runs("unshare", &["-m", "sh", "-c", mount]) {
        println!("cargo::rustc-cfg=rr_no_mount");
    }
    if std::path::Path::new("/dev/nvidiactl").exists() {
        println!("cargo::rustc-cfg=rr_gpu");
    }
}
