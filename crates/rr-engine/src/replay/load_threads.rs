//! How many threads read a recorded input or its blobs: a leaf shared by loading a snapshot
//! onto the device ([`super::loading`]) and checking an instance's blobs
//! ([`super::instance`]), which must not depend on the loading (it names the event protocol).

/// Readers filling staging buffers: one per core up to 16 (24 GiB from the page cache to the
/// first repetition on the H100 machine: 1.90 s with 4, 1.47 s with 8, 1.20 s with 16);
/// `RR_TUI_LOAD_THREADS` (1–64) overrides.
pub fn threads() -> usize {
    let env = std::env::var("RR_TUI_LOAD_THREADS").ok();
    env.and_then(|v| v.trim().parse().ok())
        .filter(|n| (1..=64).contains(n))
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(4)
                .clamp(2, 16)
        })
}
