//! SIGBUS guard for memory-mapped snapshots (see the `snapshot` module comment).
//!
//! A fixed table of registered mappings, read by the signal handler without locks. On a SIGBUS
//! inside a registered mapping the handler maps an anonymous zero page over the faulting page
//! (`mmap` is async-signal-safe in practice: it is a plain system call) and flags the slot.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

const SLOTS: usize = 256;

struct Entry {
    start: AtomicUsize,
    len: AtomicUsize,
    truncated: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Entry = Entry {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    truncated: AtomicBool::new(false),
};
static TABLE: [Entry; SLOTS] = [EMPTY; SLOTS];
static INSTALL: Once = Once::new();

/// A registered mapping; unregisters on drop.
pub struct Slot(usize);

impl Slot {
    pub fn truncated(&self) -> bool {
        TABLE[self.0].truncated.load(Ordering::Acquire)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let e = &TABLE[self.0];
        e.len.store(0, Ordering::Release);
        e.truncated.store(false, Ordering::Release);
        e.start.store(0, Ordering::Release);
    }
}

/// Register a mapping. `None` when the table is full (the mapping then has no guard).
pub fn register(start: usize, len: usize) -> Option<Slot> {
    for (i, e) in TABLE.iter().enumerate() {
        if e.start
            .compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            e.truncated.store(false, Ordering::Release);
            e.len.store(len, Ordering::Release);
            return Some(Slot(i));
        }
    }
    None
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    for e in TABLE.iter() {
        let start = e.start.load(Ordering::Acquire);
        let len = e.len.load(Ordering::Acquire);
        if start != 0 && addr >= start && addr < start + len {
            let page = addr & !4095usize;
            // SAFETY: `page` lies inside a read-only mapping we created and still own; replacing
            // one page of it with anonymous zeros cannot touch memory anything else uses.
            let p = unsafe {
                libc::mmap(
                    page as *mut libc::c_void,
                    4096,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                e.truncated.store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not ours: restore the default action and return; the fault repeats and kills as usual.
    // SAFETY: resetting a signal disposition is async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}

/// Install the SIGBUS handler once per process.
pub fn install() {
    INSTALL.call_once(|| {
        // SAFETY: a zeroed sigaction with a valid handler and SA_SIGINFO is well-formed.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    });
}
