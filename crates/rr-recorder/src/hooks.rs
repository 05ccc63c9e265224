//! The driver entry points this library exports when it is preloaded into a program
//! (`LD_PRELOAD`, which `rr-tui record` sets): `dlsym`, `cuGetProcAddress*` and the kernel
//! launch functions. Each forwards to `rr_cuda::interpose`, which hands the program wrappers
//! that report launches to the recorder for the cost of a function call instead of CUPTI's
//! launch callbacks (measured: README, "Recording"). Loaded only through
//! `CUDA_INJECTION64_PATH`, the library interposes nothing: CUPTI reports the launches.

#![allow(unsafe_code)] // `no_mangle` exports, each forwarding the caller's arguments unchanged.

use std::ffi::{c_char, c_int, c_uint, c_void};

use rr_cuda::interpose;

type CuFunction = *mut c_void;
type CuStream = *mut c_void;

/// Whether this library is the process's `dlsym` (it was preloaded), so that the program's
/// launches reach [`interpose`]'s wrappers.
pub fn preloaded() -> bool {
    interpose::global_symbol_is_ours(c"dlsym", preloaded as *const c_void)
}

/// # Safety
/// `dlsym`'s contract.
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: the caller's arguments, passed on.
    unsafe { interpose::dlsym(handle, name) }
}

/// # Safety
/// The driver's contract for `cuGetProcAddress_v2`.
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> u32 {
    // SAFETY: the caller's arguments, passed on.
    unsafe { interpose::gpa2(symbol, pfn, version, flags, status) }
}

/// # Safety
/// The driver's contract for `cuGetProcAddress` (CUDA 11's four arguments).
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> u32 {
    // SAFETY: the caller's arguments, passed on.
    unsafe { interpose::gpa1(symbol, pfn, version, flags) }
}

macro_rules! export_launch {
    ($name:ident, $target:path) => {
        /// # Safety
        /// The driver's contract for `cuLaunchKernel`.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            f: CuFunction,
            gx: c_uint,
            gy: c_uint,
            gz: c_uint,
            bx: c_uint,
            by: c_uint,
            bz: c_uint,
            shared: c_uint,
            stream: CuStream,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> u32 {
            // SAFETY: the caller's arguments, passed on.
            unsafe {
                $target(
                    f as _,
                    gx,
                    gy,
                    gz,
                    bx,
                    by,
                    bz,
                    shared,
                    stream as _,
                    params,
                    extra,
                )
            }
        }
    };
}

macro_rules! export_launch_ex {
    ($name:ident, $target:path) => {
        /// # Safety
        /// The driver's contract for `cuLaunchKernelEx`.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            config: *const c_void,
            f: CuFunction,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> u32 {
            // SAFETY: the caller's arguments, passed on.
            unsafe { $target(config as _, f as _, params, extra) }
        }
    };
}

export_launch!(cuLaunchKernel, interpose::launch);
export_launch!(cuLaunchKernel_ptsz, interpose::launch_ptsz);
export_launch_ex!(cuLaunchKernelEx, interpose::launch_ex);
export_launch_ex!(cuLaunchKernelEx_ptsz, interpose::launch_ex_ptsz);

#[cfg(test)]
mod tests {
    use super::*;

    /// `RTLD_DEFAULT` on glibc.
    const DEFAULT: *mut c_void = std::ptr::null_mut();

    #[test]
    fn every_other_name_passes_through_and_missing_ones_stay_missing() {
        // SAFETY: NUL-terminated names; the global scope.
        let (getpid, launch) = unsafe {
            (
                dlsym(DEFAULT, c"getpid".as_ptr()),
                dlsym(DEFAULT, c"cuLaunchKernel".as_ptr()),
            )
        };
        assert!(!getpid.is_null(), "a libc function is found as without us");
        assert!(launch.is_null(), "no libcuda here: nothing to wrap");
        // SAFETY: a null name, refused without a crash.
        assert!(unsafe { dlsym(DEFAULT, std::ptr::null()) }.is_null());
        // libc's functions are not ours, whether this executable's dlsym is the global one or not.
        assert!(!interpose::global_symbol_is_ours(
            c"getpid",
            preloaded as *const c_void
        ));
    }
}
