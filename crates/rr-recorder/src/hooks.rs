//! The driver entry points this library exports when it is preloaded into a program
//! (`LD_PRELOAD`, which `rr-tui record` sets): `dlsym`, `cuGetProcAddress*`, `cuInit`, the
//! kernel launch functions and every call the recorder follows (`rr_cuda::driver_calls!`).
//! Each forwards to `rr_cuda::interpose`, which hands the program wrappers that report to the
//! recorder for the cost of a function call instead of CUPTI's callbacks (measured:
//! docs/PERFORMANCE.md). Loaded only through `CUDA_INJECTION64_PATH`, the library interposes nothing:
//! CUPTI reports everything.

#![allow(unsafe_code)] // `no_mangle` exports, each forwarding the caller's arguments unchanged.

use std::ffi::{c_char, c_int, c_uint, c_void};

use rr_cuda::interpose;

/// Registered when the library is loaded (a constructor does nothing else: every process that
/// inherits `LD_PRELOAD` runs it, CUDA program or not): a preloaded recorder that CUDA did not
/// inject starts after the program's first `cuInit`.
#[used]
#[link_section = ".init_array"]
static REGISTER: extern "C" fn() = register;

extern "C" fn register() {
    // Asked here, in the loader's own thread and lock, and kept: the recorder starts inside the
    // program's first cuInit, where another thread may hold the loader's lock (in dlopen,
    // running a constructor that calls cuInit and waits for that start), so starting must not
    // call into the loader.
    PRELOADED.store(
        interpose::global_symbol_is_ours(c"dlsym", register as *const c_void),
        std::sync::atomic::Ordering::Release,
    );
    interpose::next_dlsym();
    interpose::on_init(crate::start_after_init);
}

static PRELOADED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this library is the process's `dlsym` (it was preloaded), so that the program's
/// calls reach [`interpose`]'s wrappers (found when the library was loaded).
pub fn preloaded() -> bool {
    PRELOADED.load(std::sync::atomic::Ordering::Acquire)
}

/// `dlsym`, for everybody in the process. glibc resolves `RTLD_NEXT` and `RTLD_DEFAULT` relative
/// to the *caller*, found by its return address: a lookup this library does not care about must
/// reach libc's `dlsym` with the caller's return address, or another preloaded tool wrapping a
/// function through `dlsym(RTLD_NEXT, …)` finds itself again and recurses, and a library opened
/// with `RTLD_LOCAL` no longer finds its own dependencies' symbols. So every lookup but that of a
/// `cu…` name (the driver's) through a handle other than `RTLD_NEXT` jumps to libc's `dlsym` (a
/// tail jump: the caller's return address stays on the stack); driver names go to
/// `interpose::dlsym` with the caller's address, which it searches from when it must.
///
/// # Safety
/// `dlsym`'s contract.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    core::arch::naked_asm!(
        "cmp rdi, -1", // RTLD_NEXT
        "je 3f",
        "test rsi, rsi", // a null name: ours to refuse (glibc's would crash)
        "jz 4f",
        "cmp byte ptr [rsi], 0x63", // 'c'
        "jne 3f",
        "cmp byte ptr [rsi + 1], 0x75", // 'u'
        "jne 3f",
        "4:",
        "mov rdx, qword ptr [rsp]", // the caller's return address, the third argument
        "jmp {wrapped}",
        // libc's dlsym, once known.
        "3:",
        "mov rax, qword ptr [rip + {real}]",
        "test rax, rax",
        "jz 2f",
        "jmp rax",
        // Not known yet: find it, keeping the arguments (and the stack aligned for the call).
        "2:",
        "push rdi",
        "push rsi",
        "sub rsp, 8",
        "call {resolve}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "jmp rax",
        wrapped = sym interpose::dlsym,
        real = sym interpose::REAL_DLSYM,
        resolve = sym interpose::next_dlsym,
    );
}

/// `dlsym` elsewhere: other tools' `RTLD_NEXT` lookups then find this library's object first.
///
/// # Safety
/// `dlsym`'s contract.
#[cfg(not(target_arch = "x86_64"))]
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: the caller's arguments, passed on; the caller is not known.
    unsafe { interpose::dlsym(handle, name, std::ptr::null()) }
}

/// One exported driver symbol, forwarding its arguments to `rr_cuda::interpose`'s wrapper.
macro_rules! export {
    ($name:ident, $($target:ident)::+, ($($arg:ident : $ty:ty),*)) => {
        /// # Safety
        /// The driver's contract for the function of this name.
        #[no_mangle]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> u32 {
            // SAFETY: the caller's arguments, passed on.
            unsafe { interpose::$($target)::+($($arg),*) }
        }
    };
}

// The lookups (`cuGetProcAddress` is CUDA 11's four-argument form) and the driver's start.
export!(cuGetProcAddress_v2, gpa2, (symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64, status: *mut c_int));
export!(cuGetProcAddress, gpa1, (symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64));
export!(cuInit, init, (flags: c_uint));

/// The launch functions (`rr_cuda::launch_calls!`).
macro_rules! export_launches {
    ($($name:ident = $wrapper:ident, $kind:ident ($($arg:ident : $ty:ty),* $(,)?);)*) => {
        $(export!($name, $wrapper, ($($arg: $ty),*));)*
    };
}

/// Every other wrapped driver function, under its own symbol (`rr_cuda::driver_calls!`).
macro_rules! export_calls {
    ($($name:ident = $id:ident, $params:ident ($($arg:ident : $ty:ty),* $(,)?);)*) => {
        $(export!($name, calls::$name, ($($arg: $ty),*));)*
    };
}

rr_cuda::launch_calls!(export_launches);
rr_cuda::driver_calls!(export_calls);

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
