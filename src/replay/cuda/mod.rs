//! The only code that calls the CUDA driver. Every `unsafe` block says why it is sound.
//!
//! cudarc is built with `dynamic-loading`: libcuda is opened at first use, so the binary starts on
//! machines without CUDA. cudarc panics when the library is missing; [`driver_present`] is
//! checked before any other call so that never happens.

pub mod engine;
pub mod staging;
pub mod vmm;

use cudarc::driver::sys;
use std::ffi::CStr;

use crate::error::{Error, Result};

/// An NVTX range around one repetition (a no-op in builds without the `nvtx` feature).
#[cfg(feature = "nvtx")]
pub fn range(label: &str) -> impl Drop {
    nvtx::LocalRange::new(nvtx::Str::from_str_lossy(label))
}

#[cfg(not(feature = "nvtx"))]
pub fn range(_label: &str) -> impl Sized {}

/// Whether libcuda can be loaded at all.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the candidate library names; calls nothing in them.
    unsafe { sys::is_culib_present() }
}

pub fn no_driver_error() -> Error {
    Error::Cuda(
        "no CUDA driver found (libcuda.so.1 could not be loaded): replay needs an NVIDIA GPU and its driver; \
         browsing, inspecting, checking and diffing work without one"
            .into(),
    )
}

/// `CUDA_ERROR_NAME: description` of a driver result.
pub fn describe(r: sys::CUresult) -> String {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: both calls only write a pointer to a static string owned by the driver.
    unsafe {
        sys::cuGetErrorName(r, &mut name);
        sys::cuGetErrorString(r, &mut text);
    }
    let s = |p: *const std::ffi::c_char| {
        if p.is_null() {
            format!("{r:?}")
        } else {
            // SAFETY: non-null pointers from cuGetError* are NUL-terminated static strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    format!("{}: {}", s(name), s(text))
}

/// Turn a driver result into `Err(Cuda("<what>: <NAME>: <text>"))`.
pub fn check(r: sys::CUresult, what: impl FnOnce() -> String) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda(format!("{}: {}", what(), describe(r))))
    }
}
