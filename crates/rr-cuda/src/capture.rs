//! Graph captures in progress, and the gate that keeps the recorder's own thread out of their
//! way. While a stream captures in global mode (`CU_STREAM_CAPTURE_MODE_GLOBAL`, what cudart
//! and PyTorch use by default), a "potentially unsafe" call from *any* thread — a
//! synchronisation, a page-locked allocation — fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
//! and ends the program's capture (measured: the recorder's `cuStreamSynchronize` of its own
//! stream did). So the recorder's thread makes such calls only through
//! [`outside_global_capture`], and a capture does not begin while one is under way.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

/// `CU_STREAM_CAPTURE_MODE_GLOBAL`.
const MODE_GLOBAL: u32 = 0;

/// Captures in progress (any mode), and those in global mode.
static CAPTURES: AtomicI64 = AtomicI64::new(0);
static GLOBAL: AtomicI64 = AtomicI64::new(0);
/// The streams capturing, and whether in global mode (to count the end of each right).
static ACTIVE: Mutex<Vec<(u64, bool)>> = Mutex::new(Vec::new());
/// Held by the recorder's thread during a call a global capture forbids, and by a capture's
/// beginning while it counts itself.
static GATE: Mutex<()> = Mutex::new(());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether any stream of the process is capturing a graph.
pub fn any_capture_active() -> bool {
    CAPTURES.load(Ordering::Relaxed) > 0
}

/// A capture on `stream` begins (its call is entered), in `mode`.
pub(crate) fn began(stream: u64, mode: u32) {
    let global = mode == MODE_GLOBAL;
    // Waits for a call of the recorder's thread under way (a copy of its own, milliseconds).
    let _gate = lock(&GATE);
    CAPTURES.fetch_add(1, Ordering::SeqCst);
    if global {
        GLOBAL.fetch_add(1, Ordering::SeqCst);
    }
    lock(&ACTIVE).push((stream, global));
}

/// The capture on `stream` ended (or failed to begin).
pub(crate) fn ended(stream: u64) {
    let mut active = lock(&ACTIVE);
    let Some(i) = active.iter().position(|a| a.0 == stream) else {
        return;
    };
    let (_, global) = active.swap_remove(i);
    CAPTURES.fetch_sub(1, Ordering::SeqCst);
    if global {
        GLOBAL.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Run `f` (an allocation, a module load, a query of another stream: what a capture of any mode
/// may forbid on the capturing thread or everywhere) unless some capture is in progress: `None`
/// then. No capture begins while `f` runs.
pub fn outside_any_capture<T>(f: impl FnOnce() -> T) -> Option<T> {
    let _gate = lock(&GATE);
    if CAPTURES.load(Ordering::SeqCst) > 0 {
        return None;
    }
    Some(f())
}

/// Run `f` (a call a capture in global mode forbids) unless such a capture is in progress:
/// `None` then (try again later). No capture begins while `f` runs.
pub fn outside_global_capture<T>(f: impl FnOnce() -> T) -> Option<T> {
    let _gate = lock(&GATE);
    if GLOBAL.load(Ordering::SeqCst) > 0 {
        return None;
    }
    Some(f())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorders_calls_wait_out_global_captures_only() {
        assert_eq!(outside_global_capture(|| 1), Some(1));
        began(0x10, 2); // relaxed
        assert!(any_capture_active());
        assert_eq!(
            outside_global_capture(|| 2),
            Some(2),
            "relaxed: nothing forbidden"
        );
        began(0x20, MODE_GLOBAL);
        assert_eq!(outside_global_capture(|| 3), None);
        ended(0x20);
        assert_eq!(outside_global_capture(|| 4), Some(4));
        ended(0x10);
        ended(0x30); // not capturing: nothing counted
        assert!(!any_capture_active());
    }
}
