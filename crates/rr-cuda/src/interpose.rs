//! Kernel launches through interposed driver entry points, for a recorder preloaded into the
//! program (`LD_PRELOAD`, as `rr-tui record` starts it).
//!
//! Measured on the H100 (tests/gpu/probes, 200 000 launches of a 3 µs kernel): CUPTI's launch
//! callbacks alone, with an empty callback, cost 0.25–0.5 µs per launch; handing the program
//! our own launch functions costs next to nothing. Programs reach the driver's functions three
//! ways, and a preloaded library that exports `dlsym`, `cuGetProcAddress*` and the launch
//! functions sees all three:
//!
//! - `dlsym` on libcuda's handle (cudart finds `cuGetProcAddress_v2` so; Triton and XLA their
//!   launch functions);
//! - `cuGetProcAddress` (cudart, and through it PyTorch and cuBLAS, for every driver function):
//!   the real one answers, and for the launch functions our wrapper is returned instead;
//! - direct calls to libcuda's exported symbols (programs linked with `-lcuda`): the preloaded
//!   library's symbols come first.
//!
//! The exported symbols themselves are defined by the recorder library (the only place they
//! may exist); the functions here are what they call. Every wrapper calls the real function
//! with the same arguments; launches made while an observer method runs (the recorder's own)
//! go straight through.

use cudarc::driver::sys as ds;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

use crate::cupti::{self, LaunchCall, LaunchKind};

/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
const PTDS: u64 = 2;
/// `CUDA_ERROR_NOT_INITIALIZED`, for a wrapper whose real function cannot be found.
const NOT_FOUND: u32 = 3;

type Dlsym = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
type Gpa2 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> u32;
type Gpa1 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> u32;
type Launch = unsafe extern "C" fn(
    ds::CUfunction,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    ds::CUstream,
    *mut *mut c_void,
    *mut *mut c_void,
) -> u32;
type LaunchEx = unsafe extern "C" fn(
    *const ds::CUlaunchConfig,
    ds::CUfunction,
    *mut *mut c_void,
    *mut *mut c_void,
) -> u32;

/// The real functions, found on first use.
static REAL_DLSYM: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static REAL: [AtomicPtr<c_void>; 6] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 6];
/// Indices into `REAL`.
const GPA2: usize = 0;
const GPA1: usize = 1;
const LAUNCH: usize = 2;
const LAUNCH_PTSZ: usize = 3;
const LAUNCH_EX: usize = 4;
const LAUNCH_EX_PTSZ: usize = 5;
/// The real symbol names, by the same index.
const NAMES: [&CStr; 6] = [
    c"cuGetProcAddress_v2",
    c"cuGetProcAddress",
    c"cuLaunchKernel",
    c"cuLaunchKernel_ptsz",
    c"cuLaunchKernelEx",
    c"cuLaunchKernelEx_ptsz",
];

/// How often the program's lookups were answered with a wrapper (0: nothing went through here).
static SWAPPED: AtomicU64 = AtomicU64::new(0);
/// Whether the wrappers report launches (the recorder chose them over CUPTI's callbacks); off,
/// they only pass calls on.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Let the wrappers report launches to the observer (or stop them).
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Release);
}

/// libc's `dlsym` (our exported `dlsym` must not call itself).
fn real_dlsym() -> Option<Dlsym> {
    let mut p = REAL_DLSYM.load(Ordering::Acquire);
    if p.is_null() {
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5"] {
            // SAFETY: dlvsym with RTLD_NEXT looks `dlsym` up in the objects after ours, by
            // version; it calls no code of ours.
            p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) };
            if !p.is_null() {
                break;
            }
        }
        REAL_DLSYM.store(p, Ordering::Release);
    }
    // SAFETY: `p` is libc's dlsym, whose signature this is.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, Dlsym>(p) })
}

/// The real function `which`, found after ours in the lookup order when not known yet.
fn real(which: usize) -> *mut c_void {
    let p = REAL[which].load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    let Some(dl) = real_dlsym() else {
        return std::ptr::null_mut();
    };
    // SAFETY: a lookup by name in the objects after ours (libcuda).
    let p = unsafe { dl(libc::RTLD_NEXT, NAMES[which].as_ptr()) };
    if !p.is_null() && !is_ours(p) {
        REAL[which].store(p, Ordering::Release);
    }
    REAL[which].load(Ordering::Acquire)
}

/// The real function `which` as a function pointer of type `F` (its C signature).
///
/// # Safety
/// `F` is the signature of the function at `NAMES[which]`.
unsafe fn real_as<F: Copy>(which: usize) -> Option<F> {
    let p = real(which);
    // SAFETY: the caller's contract; a function pointer has the size of a data pointer here.
    (!p.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

/// Our wrappers, by the index of the function they wrap.
fn wrapper(which: usize) -> *mut c_void {
    match which {
        GPA2 => gpa2 as *mut c_void,
        GPA1 => gpa1 as *mut c_void,
        LAUNCH => launch as *mut c_void,
        LAUNCH_PTSZ => launch_ptsz as *mut c_void,
        LAUNCH_EX => launch_ex as *mut c_void,
        _ => launch_ex_ptsz as *mut c_void,
    }
}

fn is_ours(p: *mut c_void) -> bool {
    (0..REAL.len()).any(|w| wrapper(w) == p)
}

/// Remember `real` as function `which` and hand out our wrapper instead.
fn swap(which: usize, real: *mut c_void) -> *mut c_void {
    if is_ours(real) {
        return real;
    }
    REAL[which].store(real, Ordering::Release);
    SWAPPED.fetch_add(1, Ordering::Relaxed);
    wrapper(which)
}

/// Whether any lookup of the program was answered with a wrapper.
pub fn used() -> bool {
    SWAPPED.load(Ordering::Relaxed) > 0
}

/// What the preloaded library's exported `dlsym` does.
///
/// # Safety
/// `dlsym`'s contract: `name` is null or NUL-terminated.
pub unsafe fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    let Some(dl) = real_dlsym() else {
        return std::ptr::null_mut();
    };
    if name.is_null() {
        return std::ptr::null_mut(); // glibc's dlsym would crash on it
    }
    // SAFETY: the caller's arguments, passed on.
    let p = unsafe { dl(handle, name) };
    if p.is_null() {
        return p;
    }
    // SAFETY: a NUL-terminated name (the caller's contract).
    let which = match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"cuGetProcAddress_v2" => GPA2,
        b"cuGetProcAddress" => GPA1,
        b"cuLaunchKernel" => LAUNCH,
        b"cuLaunchKernel_ptsz" => LAUNCH_PTSZ,
        b"cuLaunchKernelEx" => LAUNCH_EX,
        b"cuLaunchKernelEx_ptsz" => LAUNCH_EX_PTSZ,
        _ => return p,
    };
    swap(which, p)
}

/// Replace what `cuGetProcAddress` found for `symbol` with a wrapper where there is one.
///
/// # Safety
/// `symbol` is NUL-terminated and `*pfn` the function the driver returned for it.
unsafe fn swap_proc(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) {
    // SAFETY: the caller's contract.
    let (name, found) = unsafe { (CStr::from_ptr(symbol).to_bytes(), *pfn) };
    let ptds = flags & PTDS != 0;
    let which = match name {
        // The runtime asks for cuGetProcAddress by version: the 5-argument form from 12.0 on.
        b"cuGetProcAddress" if version >= 12000 => GPA2,
        b"cuGetProcAddress" => GPA1,
        b"cuLaunchKernel" if ptds => LAUNCH_PTSZ,
        b"cuLaunchKernel" => LAUNCH,
        b"cuLaunchKernelEx" if ptds => LAUNCH_EX_PTSZ,
        b"cuLaunchKernelEx" => LAUNCH_EX,
        _ => return,
    };
    // SAFETY: `pfn` is the caller's out-pointer, just written by the driver.
    unsafe { *pfn = swap(which, found) };
}

/// `cuGetProcAddress_v2` (and the 12.0+ `cuGetProcAddress` handed out by it).
///
/// # Safety
/// The driver's contract for `cuGetProcAddress_v2`.
pub unsafe extern "C" fn gpa2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> u32 {
    // SAFETY: cuGetProcAddress_v2 has this signature.
    let Some(real_fn) = (unsafe { real_as::<Gpa2>(GPA2) }) else {
        return NOT_FOUND;
    };
    // SAFETY: the real function, called with the caller's arguments.
    let res = unsafe { real_fn(symbol, pfn, version, flags, status) };
    if res == 0 && !symbol.is_null() && !pfn.is_null() {
        // SAFETY: the driver succeeded: `*pfn` is its answer for `symbol`.
        unsafe { swap_proc(symbol, pfn, version, flags) };
    }
    res
}

/// The 4-argument `cuGetProcAddress` of CUDA 11.
///
/// # Safety
/// The driver's contract for `cuGetProcAddress`.
pub unsafe extern "C" fn gpa1(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> u32 {
    // SAFETY: CUDA 11's cuGetProcAddress has this signature.
    let Some(real_fn) = (unsafe { real_as::<Gpa1>(GPA1) }) else {
        return NOT_FOUND;
    };
    // SAFETY: the real function, called with the caller's arguments.
    let res = unsafe { real_fn(symbol, pfn, version, flags) };
    if res == 0 && !symbol.is_null() && !pfn.is_null() {
        // SAFETY: as in `gpa2`.
        unsafe { swap_proc(symbol, pfn, version, flags) };
    }
    res
}

/// One launch through the observer: enter, the real launch, exit when the enter asked for it.
fn observed(mut call: LaunchCall, real: impl FnOnce() -> u32) -> u32 {
    if !ENABLED.load(Ordering::Relaxed) {
        return real();
    }
    let Some(obs) = cupti::observer() else {
        return real();
    };
    // Most launches of a storm end here: one thread-local lookup and the counts.
    if obs.launch_settled(&call) {
        return real();
    }
    if cupti::observe(|| obs.launch_enter(&mut call)).is_none() {
        return real(); // our own launch, from inside an observer method
    }
    let result = real();
    if *call.correlation != 0 {
        call.result = Some(result);
        cupti::observe(|| obs.launch_exit(&mut call));
    }
    result
}

macro_rules! launch_wrapper {
    ($name:ident, $which:expr) => {
        /// A `cuLaunchKernel` that the observer sees.
        ///
        /// # Safety
        /// The driver's contract for `cuLaunchKernel`.
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            f: ds::CUfunction,
            gx: c_uint,
            gy: c_uint,
            gz: c_uint,
            bx: c_uint,
            by: c_uint,
            bz: c_uint,
            shared: c_uint,
            stream: ds::CUstream,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> u32 {
            // SAFETY: cuLaunchKernel (and _ptsz) have this signature.
            let Some(real_fn) = (unsafe { real_as::<Launch>($which) }) else {
                return NOT_FOUND;
            };
            let mut correlation = 0u64;
            let call = LaunchCall::new(
                LaunchKind::Plain,
                f,
                [gx, gy, gz],
                [bx, by, bz],
                shared,
                stream,
                params,
                extra,
                &mut correlation,
            );
            // SAFETY: the caller's arguments, passed on unchanged.
            observed(call, || unsafe {
                real_fn(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra)
            })
        }
    };
}

macro_rules! launch_ex_wrapper {
    ($name:ident, $which:expr) => {
        /// A `cuLaunchKernelEx` that the observer sees.
        ///
        /// # Safety
        /// The driver's contract for `cuLaunchKernelEx`.
        pub unsafe extern "C" fn $name(
            config: *const ds::CUlaunchConfig,
            f: ds::CUfunction,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> u32 {
            // SAFETY: cuLaunchKernelEx (and _ptsz) have this signature.
            let Some(real_fn) = (unsafe { real_as::<LaunchEx>($which) }) else {
                return NOT_FOUND;
            };
            // SAFETY: the caller's arguments, passed on unchanged.
            let pass = || unsafe { real_fn(config, f, params, extra) };
            if config.is_null() {
                return pass();
            }
            let mut correlation = 0u64;
            let call = {
                // SAFETY: the caller's launch configuration and its attributes, valid for the
                // call.
                unsafe { LaunchCall::from_config(&*config, f, params, extra, &mut correlation) }
            };
            observed(call, pass)
        }
    };
}

launch_wrapper!(launch, LAUNCH);
launch_wrapper!(launch_ptsz, LAUNCH_PTSZ);
launch_ex_wrapper!(launch_ex, LAUNCH_EX);
launch_ex_wrapper!(launch_ex_ptsz, LAUNCH_EX_PTSZ);

/// Whether the process's global lookup of `name` finds it in the same loaded object as `ours`
/// (a function of the caller's): the caller's library was preloaded, and its export of `name`
/// is the one everybody calls.
pub fn global_symbol_is_ours(name: &CStr, ours: *const c_void) -> bool {
    let Some(dl) = real_dlsym() else {
        return false;
    };
    // SAFETY: a lookup by name in the global scope.
    let found = unsafe { dl(libc::RTLD_DEFAULT, name.as_ptr()) };
    if found.is_null() {
        return false;
    }
    let object = |p: *const c_void| {
        // SAFETY: zeroed is a valid Dl_info; dladdr only writes it.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr looks an address up in the loaded objects (any value is allowed).
        let ok = unsafe { libc::dladdr(p, &mut info) } != 0;
        ok.then_some(info.dli_fbase)
    };
    matches!((object(found), object(ours)), (Some(a), Some(b)) if a == b)
}
