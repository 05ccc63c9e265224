//! The driver entry points a recorder preloaded into the program (`LD_PRELOAD`, as `rr-tui
//! record` starts it) hands out in place of libcuda's, so that it sees kernel launches,
//! allocations, module loads, graphs and texture objects without CUPTI.
//!
//! Why: measured on the H100 (docs/PERFORMANCE.md; tests/gpu/probes), CUPTI's launch callbacks
//! cost 0.25–0.5 µs per launch, and merely being CUDA's injection library, or subscribed to any
//! CUPTI callback, costs 3–5 % of a storm of 3 µs launches; a wrapper costs a function call.
//! Programs reach the driver's functions three ways, and a preloaded library that exports
//! `dlsym`, `cuGetProcAddress*` and the wrapped functions sees all three:
//!
//! - `dlsym` on libcuda's handle (cudart finds `cuGetProcAddress_v2` so; PyTorch, Triton and XLA
//!   their functions);
//! - `cuGetProcAddress` (cudart, and through it PyTorch and cuBLAS, for every driver function):
//!   the real one answers, and where it returned a function wrapped here, the wrapper is handed
//!   out instead (the symbol depends on the version asked for: [`calls`]);
//! - direct calls to libcuda's exported symbols (programs linked with `-lcuda`): the preloaded
//!   library's symbols come first.
//!
//! The exported symbols themselves are defined by the recorder library (the only place they
//! may exist); the functions here are what they call. Every wrapper calls the real function
//! with the same arguments; calls made while an observer method runs (the recorder's own) go
//! straight through.

pub mod calls;
mod image;
mod launches;

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
use std::sync::OnceLock;

pub use cudarc::driver::sys as ds;
pub use launches::{launch, launch_coop, launch_coop_ptsz, launch_ex, launch_ex_ptsz, launch_ptsz};

/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
const PTDS: u64 = 2;
/// `CUDA_ERROR_NOT_INITIALIZED`, for a wrapper whose real function cannot be found.
pub(crate) const NOT_FOUND: u32 = 3;

type Dlsym = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
type Gpa2 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> u32;
type Gpa1 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> u32;
type Init = unsafe extern "C" fn(c_uint) -> u32;

/// What the wrappers report to the observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Watch {
    /// Nothing: they only pass calls on.
    Nothing = 0,
    /// Kernel launches (CUPTI reports the rest).
    Launches = 1,
    /// Launches, memory, modules, graphs and objects: CUPTI is not involved.
    Everything = 2,
}

static WATCH: AtomicU8 = AtomicU8::new(Watch::Nothing as u8);

/// Let the wrappers report to the observer (or stop them).
pub fn watch(what: Watch) {
    WATCH.store(what as u8, Ordering::Release);
}

pub(crate) fn watching(what: Watch) -> bool {
    WATCH.load(Ordering::Relaxed) >= what as u8
}

thread_local! {
    /// Set while this thread starts the recorder.
    static STARTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// What runs once the program's first `cuInit` succeeded (a recorder that was preloaded but not
/// injected starts there).
static ON_INIT: OnceLock<fn()> = OnceLock::new();

/// Run `start` after the program's first successful `cuInit` (once; later calls are ignored).
pub fn on_init(start: fn()) {
    ON_INIT.get_or_init(|| start);
}

/// A set of wrapped functions: the real function and our wrapper of each, by index.
pub(crate) struct Table {
    pub names: &'static [&'static CStr],
    pub real: &'static [AtomicPtr<c_void>],
    pub wrapper: fn(usize) -> *mut c_void,
}

impl Table {
    pub(crate) fn index(&self, name: &[u8]) -> Option<usize> {
        self.names.iter().position(|n| n.to_bytes() == name)
    }

    /// The real function `i`, found after ours in the lookup order when not known yet.
    fn real(&self, i: usize) -> *mut c_void {
        let p = self.real[i].load(Ordering::Acquire);
        if !p.is_null() {
            return p;
        }
        let Some(dl) = real_dlsym() else {
            return std::ptr::null_mut();
        };
        let name = self.names[i].as_ptr();
        // SAFETY: a lookup by name in the objects after ours (libcuda, when it is global).
        let mut p = unsafe { dl(libc::RTLD_NEXT, name) };
        if p.is_null() || is_ours(p) {
            // libcuda opened privately (dlopen without RTLD_GLOBAL, as cudart and Python
            // libraries do): asked by its own handle, it answers with its own function.
            // SAFETY: RTLD_NOLOAD only finds a library already loaded; nothing new runs.
            let cuda = unsafe {
                libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD)
            };
            if !cuda.is_null() {
                // SAFETY: a lookup by name in libcuda and its dependencies.
                p = unsafe { dl(cuda, name) };
                // SAFETY: drops the reference RTLD_NOLOAD took; the library stays loaded.
                unsafe { libc::dlclose(cuda) };
            }
        }
        if !p.is_null() && !is_ours(p) {
            self.real[i].store(p, Ordering::Release);
        }
        self.real[i].load(Ordering::Acquire)
    }

    /// The real function `i` as a function pointer of type `F`.
    ///
    /// # Safety
    /// `F` is the C signature of the function named `names[i]`.
    pub(crate) unsafe fn real_as<F: Copy>(&self, i: usize) -> Option<F> {
        let p = self.real(i);
        // SAFETY: the caller's contract; a function pointer has the size of a data pointer here.
        (!p.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
    }

    /// Remember `found` as function `i` and hand out our wrapper instead.
    fn swap(&self, i: usize, found: *mut c_void) -> *mut c_void {
        if is_ours(found) {
            return found;
        }
        self.real[i].store(found, Ordering::Release);
        (self.wrapper)(i)
    }
}

/// A [`Table`] named `$table` of the exported symbols `$name`, wrapped by `$wrapper`, with the
/// `Slot` enum that indexes it.
macro_rules! wrapper_table {
    ($table:ident, $($name:ident => $wrapper:ident),* $(,)?) => {
        /// Index of each wrapped symbol in its table.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        enum Slot { $($name,)* }

        const NAMES: &[&std::ffi::CStr] =
            &[$($crate::interpose::cstr(concat!(stringify!($name), "\0").as_bytes()),)*];

        static REAL: [std::sync::atomic::AtomicPtr<std::ffi::c_void>; NAMES.len()] =
            [const { std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()) }; NAMES.len()];

        pub(crate) static $table: $crate::interpose::Table = $crate::interpose::Table {
            names: NAMES,
            real: &REAL,
            wrapper: |i| {
                let all: &[*mut std::ffi::c_void] = &[$($wrapper as *mut std::ffi::c_void,)*];
                all[i]
            },
        };
    };
}
pub(crate) use wrapper_table;

const fn cstr(bytes: &'static [u8]) -> &'static CStr {
    match CStr::from_bytes_with_nul(bytes) {
        Ok(c) => c,
        Err(_) => panic!("a symbol name without its NUL"),
    }
}

static ENTRY_REAL: [AtomicPtr<c_void>; 3] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 3];

/// The lookups and `cuInit`: what programs call to find and start the driver.
static ENTRY: Table = Table {
    names: &[
        cstr(b"cuGetProcAddress_v2\0"),
        cstr(b"cuGetProcAddress\0"),
        cstr(b"cuInit\0"),
    ],
    real: &ENTRY_REAL,
    wrapper: |i| match i {
        0 => gpa2 as *mut c_void,
        1 => gpa1 as *mut c_void,
        _ => init as *mut c_void,
    },
};
const GPA2: usize = 0;
const GPA1: usize = 1;
const INIT: usize = 2;

fn tables() -> [&'static Table; 3] {
    [&ENTRY, &launches::LAUNCHES, &calls::CALLS]
}

/// Whether `p` lies in the loaded object this code is part of (a wrapper, or the recorder's
/// export of the same name): never to be taken for the driver's function. A driver that hands
/// out its own exported symbols without binding them locally would hand out ours.
fn is_ours(p: *mut c_void) -> bool {
    let here = object_of(is_ours as *const c_void);
    here.is_some() && object_of(p) == here
}

/// The base address of the loaded object holding address `p`.
fn object_of(p: *const c_void) -> Option<usize> {
    // SAFETY: zeroed is a valid Dl_info; dladdr only writes it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr looks an address up in the loaded objects (any value is allowed).
    let ok = unsafe { libc::dladdr(p, &mut info) } != 0;
    ok.then_some(info.dli_fbase as usize)
}

/// libc's `dlsym`, once found (the recorder's exported `dlsym` jumps to it for `RTLD_NEXT`).
pub static REAL_DLSYM: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// libc's `dlsym` for the exported `dlsym`'s `RTLD_NEXT` path: never null (a function that
/// finds nothing when libc's cannot be found).
pub extern "C" fn next_dlsym() -> *mut c_void {
    extern "C" fn nothing(_: *mut c_void, _: *const c_char) -> *mut c_void {
        std::ptr::null_mut()
    }
    match real_dlsym() {
        Some(f) => f as *mut c_void,
        None => nothing as *mut c_void,
    }
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

/// What the preloaded library's exported `dlsym` does for a driver name (any other lookup goes
/// to libc's `dlsym` directly, with its caller's return address: see the recorder's `hooks`).
/// `caller` is the address the lookup was made from (null when unknown): a lookup in the
/// default scope that libc does not answer from this library's place is asked again from the
/// caller's (a library opened with `RTLD_LOCAL` sees its own dependencies there).
///
/// # Safety
/// `dlsym`'s contract: `name` is null or NUL-terminated.
pub unsafe extern "C" fn dlsym(
    handle: *mut c_void,
    name: *const c_char,
    caller: *const c_void,
) -> *mut c_void {
    let Some(dl) = real_dlsym() else {
        return std::ptr::null_mut();
    };
    if name.is_null() {
        return std::ptr::null_mut(); // glibc's dlsym would crash on it
    }
    // SAFETY: the caller's arguments, passed on.
    let mut p = unsafe { dl(handle, name) };
    if p.is_null() && handle == libc::RTLD_DEFAULT && !caller.is_null() {
        // SAFETY: a lookup from the caller's own object (see `from_object_of`).
        p = unsafe { from_object_of(caller, name) };
    }
    if p.is_null() {
        // A miss leaves libc's own error text (the lookups above may have cleared it: Python's
        // ctypes reads it and crashes on none). Asked again, libc fails again, and says so.
        // SAFETY: the caller's arguments, passed on.
        return unsafe { dl(handle, name) };
    }
    // SAFETY: a NUL-terminated name (the caller's contract).
    let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
    // An exported symbol is wrapped by its own name (its ABI is the symbol's).
    for t in tables() {
        if let Some(i) = t.index(bytes) {
            if is_ours(p) {
                // The lookup found the recorder's own export: the driver's function, if there
                // is a driver; else the answer without the recorder (nothing, and libc's error).
                let real = t.real(i);
                if real.is_null() {
                    // No driver: the objects after ours have no such function. Asked, libc
                    // fails and leaves its error text, as the caller's lookup would without us.
                    // SAFETY: a lookup by name; its answer is not handed out.
                    let _ = unsafe { dl(libc::RTLD_NEXT, name) };
                    return std::ptr::null_mut();
                }
                return t.swap(i, real);
            }
            return t.swap(i, p);
        }
    }
    p
}

/// `name` looked up from the loaded object holding address `at`: that object and its
/// dependencies.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe fn from_object_of(at: *const c_void, name: *const c_char) -> *mut c_void {
    let Some(dl) = real_dlsym() else {
        return std::ptr::null_mut();
    };
    // SAFETY: zeroed is a valid Dl_info; dladdr only writes it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr looks an address up in the loaded objects (any value is allowed).
    if unsafe { libc::dladdr(at, &mut info) } == 0 || info.dli_fname.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: RTLD_NOLOAD only finds an object already loaded; nothing new runs.
    let object = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if object.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a lookup by name in that object's scope.
    let p = unsafe { dl(object, name) };
    // SAFETY: drops the reference RTLD_NOLOAD took; the object stays loaded.
    unsafe { libc::dlclose(object) };
    p
}

/// Replace what `cuGetProcAddress` found for `symbol` with a wrapper where there is one.
///
/// # Safety
/// `symbol` is NUL-terminated and `*pfn` the function the driver returned for it.
unsafe fn swap_proc(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) {
    // SAFETY: the caller's contract.
    let (name, found) = unsafe { (CStr::from_ptr(symbol).to_bytes(), *pfn) };
    if found.is_null() {
        return;
    }
    let ptds = flags & PTDS != 0;
    let (table, i) = match name {
        // The runtime asks for cuGetProcAddress by version: the 5-argument form from 12.0 on.
        b"cuGetProcAddress" if version >= 12000 => (&ENTRY, GPA2),
        b"cuGetProcAddress" => (&ENTRY, GPA1),
        b"cuInit" => (&ENTRY, INIT),
        _ => {
            let found = launches::proc_index(name, ptds)
                .map(|i| (&launches::LAUNCHES, i))
                .or_else(|| calls::proc_index(name, version, ptds).map(|i| (&calls::CALLS, i)));
            let Some(found) = found else {
                return;
            };
            found
        }
    };
    // SAFETY: `pfn` is the caller's out-pointer, just written by the driver.
    unsafe { *pfn = table.swap(i, found) };
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
    let Some(real_fn) = (unsafe { ENTRY.real_as::<Gpa2>(GPA2) }) else {
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
    let Some(real_fn) = (unsafe { ENTRY.real_as::<Gpa1>(GPA1) }) else {
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

/// `cuInit`: the driver starts, then whatever [`on_init`] registered (once).
///
/// # Safety
/// The driver's contract for `cuInit`.
pub unsafe extern "C" fn init(flags: c_uint) -> u32 {
    // SAFETY: cuInit has this signature.
    let Some(real_fn) = (unsafe { ENTRY.real_as::<Init>(INIT) }) else {
        return NOT_FOUND;
    };
    // SAFETY: the real function, called with the caller's argument.
    let res = unsafe { real_fn(flags) };
    if res == 0 && !STARTING.with(|s| s.get()) {
        // Other threads wait until the recorder has started (as they wait in an injected
        // recorder's cuInit), so that nothing they do next goes unseen; the starting thread's
        // own cuInit calls pass (the thread-local flag).
        static STARTED: std::sync::Once = std::sync::Once::new();
        if let Some(&start) = ON_INIT.get() {
            STARTED.call_once(|| {
                STARTING.with(|s| s.set(true));
                // A panic must never cross into the program.
                drop(std::panic::catch_unwind(start));
                STARTING.with(|s| s.set(false));
            });
        }
    }
    res
}

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
    matches!((object_of(found), object_of(ours)), (Some(a), Some(b)) if a == b)
}
