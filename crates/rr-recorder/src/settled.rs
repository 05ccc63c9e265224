//! The launch storm's fast path: per thread, the launch configurations no later launch of which
//! will be selected, counted without a lock or the kernel's name.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use rr_cuda::cupti;

use crate::select::Settled;

/// A launch as the fast path knows it: the kernel handle and the launch configuration.
pub(crate) type FastKey = (u64, [u32; 3], [u32; 3], u32);

thread_local! {
    /// Per thread: the configurations no later launch of which will be selected, by kernel
    /// handle (no lock, no kernel name: a launch storm costs a hash lookup and three atomic
    /// increments per launch), and the generation of kernel handles it was filled in.
    static SETTLED: RefCell<(u64, FxHashMap<FastKey, Settled>)> = RefCell::default();
}

/// Count the launch if its configuration is settled; `false` when the selector must decide.
pub(crate) fn count_settled(key: &FastKey) -> bool {
    SETTLED.with(|s| {
        // Busy only if a signal handler launched while this thread was counting.
        let Ok(mut s) = s.try_borrow_mut() else {
            return false;
        };
        let generation = cupti::handle_generation();
        if s.0 != generation {
            // Modules were unloaded: a handle may now name another kernel.
            s.1.clear();
            s.0 = generation;
        }
        match s.1.get(key) {
            Some(settled) => {
                settled.count();
                true
            }
            None => false,
        }
    })
}

pub(crate) fn remember_settled(key: FastKey, settled: Settled) {
    SETTLED.with(|s| {
        let mut s = s.borrow_mut();
        if s.1.len() < 1 << 16 {
            s.1.insert(key, settled);
        }
    });
}
