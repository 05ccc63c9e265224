//! The stand-in driver's own bookkeeping (tests/tools/fake_driver_check.c against
//! tests/tools/fake_libcuda.c): the tests of replay without a GPU judge what rr-tui does only as
//! far as the stand-in behaves as a driver does where rr-tui relies on it.

mod common;

use common::*;

/// A module's globals and functions keep their address and handle for the module's lifetime;
/// freed and unmapped memory gives its place back (100 000 allocations and mappings come and
/// go); a leak ends in one out-of-memory error and one line on stderr, never a crash.
#[test]
fn the_stand_in_driver_keeps_globals_in_place_and_memory_bounded() {
    let driver = fake_driver();
    let check = build_c(
        "fake_driver_check.c",
        driver.path(),
        "check",
        &["-L", driver.path().to_str().unwrap(), "-l:libcuda.so.1"],
    );
    let out = std::process::Command::new(&check)
        .env("LD_LIBRARY_PATH", driver.path())
        .env("FAKE_CUDA_MEMORY", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.ends_with("0 failure(s)\n"), "{stdout}");
    assert_eq!(
        stderr.matches("fake libcuda: out of memory").count(),
        1,
        "{stderr}"
    );
}
