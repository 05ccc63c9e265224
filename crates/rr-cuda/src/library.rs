//! Whether libcuda can be loaded at all: below both the driver's entry points and their errors
//! (an error describes itself through the driver only when there is one).

use cudarc::driver::sys;
use std::sync::OnceLock;

/// Whether libcuda can be loaded at all (checked once).
pub fn present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the candidate library names; calls nothing in them.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}
