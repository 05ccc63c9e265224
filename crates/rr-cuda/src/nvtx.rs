//! NVTX ranges around repetitions, visible in Nsight tools, through cudarc's pre-generated NVTX
//! bindings (`libnvToolsExt` loaded at run time). Without the library a range is a no-op, and
//! [`available`] says so.

use std::sync::OnceLock;

/// Where CUDA 13 machines keep libnvToolsExt when it is not on the loader path.
const CANDIDATES: &[&str] = &[
    "/usr/local/cuda/lib64/libnvToolsExt.so.1",
    "/usr/local/cuda/targets/x86_64-linux/lib/libnvToolsExt.so.1",
];

/// Whether NVTX ranges will be emitted (checked once; may load the library from a well-known
/// place, after which cudarc finds it by its soname).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: only tries to dlopen the candidate library names; calls nothing in them.
        if unsafe { cudarc::nvtx::sys::is_culib_present() } {
            return true;
        }
        for path in CANDIDATES {
            let Ok(c) = std::ffi::CString::new(*path) else {
                continue;
            };
            // SAFETY: dlopen of a NUL-terminated path; the handle is deliberately kept for the
            // life of the process (its soname then satisfies cudarc's own lookup).
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            if !h.is_null() {
                // SAFETY: as for the first check.
                return unsafe { cudarc::nvtx::sys::is_culib_present() };
            }
        }
        false
    })
}

/// An NVTX range, closed on drop.
pub struct Range(#[allow(dead_code)] Option<cudarc::nvtx::Range>);

/// Open a range named `label` (a no-op without libnvToolsExt).
pub fn range(label: &str) -> Range {
    if available() && !label.contains('\0') {
        Range(Some(cudarc::nvtx::scoped_range(label)))
    } else {
        Range(None)
    }
}
