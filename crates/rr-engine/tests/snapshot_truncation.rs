//! A snapshot truncated by another writer while rr-tui has it mapped: the read that would
//! raise SIGBUS is turned into a reported error (see `snapshot::guard`), never a crash.

use rr_engine::snapshot::Snapshot;
use std::sync::atomic::AtomicBool;

#[test]
fn truncation_while_mapped_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let len = 64usize << 20;
    std::fs::write(&a, vec![7u8; len]).unwrap();
    std::fs::write(&b, vec![7u8; len]).unwrap();
    let sa = Snapshot::open(&a).unwrap();
    let sb = Snapshot::open(&b).unwrap();
    // Another process truncates b under our mapping.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&b)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let err = rr_engine::diff::build_index(&sa, &sb, 8, &AtomicBool::new(false), |_, _, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("truncated while rr-tui had it mapped"),
        "{err}"
    );
    assert!(err.contains(&b.display().to_string()), "{err}");
    // The intact file stays usable.
    assert!(sa.check_intact().is_ok());
    assert_eq!(sa.window(len as u64 - 1, 1), &[7]);
}
