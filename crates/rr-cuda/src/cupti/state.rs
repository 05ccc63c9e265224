//! The decoder's state that its parts share: per thread, the modules loaded and the graph
//! swap armed; per process, the generation of kernel handles.

use std::cell::{Cell, RefCell};
use std::sync::atomic::AtomicU64;

thread_local! {
    /// Module ids loaded on this thread since the last take.
    pub(super) static LOADED_HERE: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// When not 0, the next graph launch on this thread runs this executable instead (the swap
    /// of [`super::graph::swap_supported`]'s own check).
    pub(super) static SWAP_TO: Cell<u64> = const { Cell::new(0) };
}

/// Bumped when modules or libraries are unloaded: kernel handles seen before may be reused for
/// other kernels from then on, so whatever a recorder cached by handle is stale.
pub(super) static HANDLE_GENERATION: AtomicU64 = AtomicU64::new(0);
