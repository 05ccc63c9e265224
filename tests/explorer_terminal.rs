//! The explorer on a terminal it cannot take over: stdout a terminal (a pseudo-terminal's
//! far end), but no controlling terminal and stdin not one, so raw mode has nothing to set.
//! It refuses in one line with the system's plain reason.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A pseudo-terminal: its near end (kept open so the far end stays a terminal) and its far
/// end, neither of them this process's controlling terminal.
fn pseudo_terminal() -> (rustix::fd::OwnedFd, std::fs::File) {
    use rustix::fs::{Mode, OFlags};
    use rustix::pty::OpenptFlags;
    let near = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    rustix::pty::grantpt(&near).unwrap();
    rustix::pty::unlockpt(&near).unwrap();
    let name = rustix::pty::ptsname(&near, Vec::new()).unwrap();
    let far = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY,
        Mode::empty(),
    );
    (near, std::fs::File::from(far.unwrap()))
}

#[test]
fn a_terminal_that_cannot_be_set_up_is_said_plainly() {
    let (_near, far) = pseudo_terminal();
    // `setsid`: a session of its own, so no controlling terminal, and /dev/tty (raw mode's
    // fallback when stdin is no terminal) cannot be opened.
    let mut child = Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_rr-tui"))
        .arg(common::fixture("llvm-two-kernels"))
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent/rr-tui-tests")
        .stdin(Stdio::null())
        .stdout(Stdio::from(far))
        .stderr(Stdio::piped())
        .spawn()
        .expect("setsid (util-linux)");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the explorer started without a terminal it could set up");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("cannot set up the terminal: no such device or address"),
        "{stderr}"
    );
    assert!(!stderr.contains("os error"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}
