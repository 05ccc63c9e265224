//! The CUPTI callback boundary, for the recorder loaded into other people's programs.
//!
//! [`install`] subscribes one [`Observer`] to the driver API and resource callbacks a recorder
//! needs; the trampoline decodes CUPTI's raw callback data into safe values ([`LaunchCall`],
//! [`Allocation`], [`GraphTemplate`], [`CapturedObject`], …) before the observer sees them.
//! Design rules (cupti notes, measured on the GPU machine with CUPTI 13.0):
//!
//! - every callback runs inside `catch_unwind`: a panic must never cross into the application;
//! - the driver calls an observer makes raise callbacks of their own: a thread-local depth guard
//!   drops nested *driver* callbacks but always delivers *resource* callbacks, because a lazily
//!   loaded module arrives nested inside our own `cuKernelGetFunction`;
//! - enum-typed fields of C structs (callback site, domain, launch attribute ids, node types)
//!   are read as integers: a value unknown to the bindings must not become an invalid Rust enum.

pub(crate) mod cbid;
mod driver_call;
mod extract;
pub mod graph;
mod graph_calls;
mod launch;
mod memory_calls;
mod module_calls;
mod object_calls;
mod observer;
mod state;
mod stream_calls;
mod subscription;

use cudarc::cupti::sys as cs;
use cudarc::driver::sys as ds;
use std::cell::Cell;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use crate::error::{check, Call, CudaError, Result};
pub use crate::objects::{CapturedObject, CapturedResource};
pub(crate) use driver_call::DriverCall;
pub use extract::loaded_cubin;
pub use graph::{GraphTemplate, HostCall, KernelNode, Memcpy3d, Memset, Node, NodeOp};
pub use launch::{KernelFunction, LaunchCall, LaunchKind};
pub use observer::{AllocKind, Allocation, GraphChange, Observer};
use state::{HANDLE_GENERATION, LOADED_HERE, SWAP_TO};
use subscription::{
    cupti_check, enable_module_loaded, subscribe, DOMAIN_DRIVER, DOMAIN_RESOURCE,
    RESOURCE_MODULE_LOADED, SUBSCRIBED,
};
pub use subscription::{load_library, CuptiError};

/// The address and size of global `name` of a module (handle from [`KernelFunction::module`]).
pub fn module_global(module: u64, name: &str) -> Result<(u64, usize)> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| CudaError::new("cuModuleGetGlobal", ds::CUresult::CUDA_ERROR_INVALID_VALUE))?;
    // SAFETY: `module` is a live module handle of the current context; `c` is NUL-terminated.
    unsafe { cudarc::driver::result::module::get_global(module as ds::CUmodule, c) }
        .call("cuModuleGetGlobal")
}

/// The module (in the current context) that kernel `name` of `library` runs from: an error
/// when the library has no such kernel. Only that kernel's module is loaded if it was lazy
/// (which a launch of it has done already).
pub fn library_kernel_module(library: u64, name: &str) -> Result<u64> {
    let c = std::ffi::CString::new(name).map_err(|_| {
        CudaError::new("cuLibraryGetKernel", ds::CUresult::CUDA_ERROR_INVALID_VALUE)
    })?;
    let mut kernel: ds::CUkernel = std::ptr::null_mut();
    // SAFETY: `library` is a handle a cuLibraryLoad* call returned, still loaded (the observer
    // forgets unloaded ones); `c` is NUL-terminated; writes one handle.
    let r = unsafe { ds::cuLibraryGetKernel(&mut kernel, library as ds::CUlibrary, c.as_ptr()) };
    check(r, "cuLibraryGetKernel")?;
    let mut f: ds::CUfunction = std::ptr::null_mut();
    // SAFETY: the kernel just found; writes the function of the current context.
    let r = unsafe { ds::cuKernelGetFunction(&mut f, kernel) };
    check(r, "cuKernelGetFunction")?;
    KernelFunction { raw: f }.module()
}

/// Wait for all work of the current context.
pub fn synchronize() -> Result<()> {
    cudarc::driver::result::ctx::synchronize().call("cuCtxSynchronize")
}

/// Copy device memory of the application's (any address the driver accepts) into host memory,
/// synchronously. An invalid address is a driver error, never a host memory access.
pub fn read_device(addr: u64, dst: &mut [u8]) -> Result<()> {
    // SAFETY: `dst` is exactly the bytes copied; the driver validates the device range.
    unsafe { cudarc::driver::result::memcpy_dtoh_sync(dst, addr) }
        .call("cuMemcpyDtoH")
        .map_err(|e| e.context(format!("reading {} bytes at {addr:#x}", dst.len())))
}

/// The current context (an opaque id, as allocation callbacks report it).
pub fn current_context() -> Result<u64> {
    let mut c: ds::CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle.
    check(unsafe { ds::cuCtxGetCurrent(&mut c) }, "cuCtxGetCurrent")?;
    Ok(c as u64)
}

/// The device ordinal of the current context.
pub fn current_device() -> Result<i32> {
    let mut d: ds::CUdevice = 0;
    // SAFETY: writes one integer; needs a current context.
    check(unsafe { ds::cuCtxGetDevice(&mut d) }, "cuCtxGetDevice")?;
    Ok(d)
}

/// Run `f` when the process exits normally (`exit`, or returning from `main`): an injected
/// library has no other end-of-program hook.
pub fn at_exit(f: extern "C" fn()) -> bool {
    // SAFETY: registers a plain C function with no arguments; it lives as long as the process
    // (the injection library is never unloaded).
    unsafe { libc::atexit(f) == 0 }
}

pub use crate::capture::{any_capture_active, outside_any_capture, outside_global_capture};

thread_local! {
    /// > 0 while an observer method runs on this thread: driver callbacks raised by its own
    /// driver calls are not delivered (resource callbacks are).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The current generation of kernel handles (see [`HANDLE_GENERATION`]).
pub fn handle_generation() -> u64 {
    HANDLE_GENERATION.load(Ordering::Relaxed)
}

/// Whether `stream` (an opaque handle) is capturing a graph.
pub fn stream_is_capturing(stream: u64) -> Result<bool> {
    launch::stream_capturing(stream as ds::CUstream)
}

/// Mark the current thread as the recorder's own for good: its driver calls are never
/// observed (it is not the program's).
pub fn own_thread() {
    DEPTH.with(|d| d.set(1));
}

/// Whether the current thread is inside an observer method (our own driver calls).
pub fn inside_observer() -> bool {
    DEPTH.with(|d| d.get()) > 0
}

static OBSERVER: OnceLock<&'static dyn Observer> = OnceLock::new();

/// What CUPTI reports to the observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscribe {
    /// Nothing: the observer sees everything through interposed entry points
    /// ([`crate::interpose`]), and CUPTI is not initialised.
    Nothing,
    /// Memory, modules, graphs and objects (launches come through interposed entry points).
    AllButLaunches,
    /// Everything.
    Everything,
}

/// Install `observer` (once per process) and subscribe it to CUPTI's callbacks as `what` says.
/// Unless `what` is [`Subscribe::Nothing`], the caller has checked [`load_library`].
pub fn install(
    observer: &'static dyn Observer,
    what: Subscribe,
) -> std::result::Result<(), CuptiError> {
    if OBSERVER.set(observer).is_err() || what == Subscribe::Nothing {
        return Ok(());
    }
    let launches = what == Subscribe::Everything;
    let sub = subscribe(trampoline)?;
    SUBSCRIBED.store(true, Ordering::Release);
    let driver = cs::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API;
    let ids = cbid::ALL
        .iter()
        .chain(if launches { cbid::LAUNCHES } else { &[] });
    for &id in ids {
        // SAFETY: enables one callback of a domain for our subscriber.
        let r = unsafe { cs::cuptiEnableCallback(1, sub, driver, id) };
        cupti_check(r, "cuptiEnableCallback")?;
    }
    enable_module_loaded(sub)
}

unsafe extern "C" fn trampoline(_user: *mut c_void, domain: u32, id: u32, data: *const c_void) {
    let Some(observer) = OBSERVER.get().copied() else {
        return;
    };
    if data.is_null() {
        return;
    }
    // A panicking observer is contained here: nothing crosses into the application.
    let contained = catch_unwind(AssertUnwindSafe(|| match domain {
        // SAFETY: for the resource domain CUPTI passes a CUpti_ResourceData.
        DOMAIN_RESOURCE => unsafe {
            on_resource(observer, id, &*(data as *const cs::CUpti_ResourceData))
        },
        DOMAIN_DRIVER => {
            // SAFETY: for the driver domain CUPTI passes a CUpti_CallbackData valid during the
            // callback; its functionParams match the callback id.
            let d = unsafe { &*(data as *const cs::CUpti_CallbackData) };
            if is_enter(d) && swap_armed(id, d.functionParams as *mut c_void) {
                return;
            }
            // SAFETY: as above.
            let _ = observe(|| unsafe { on_driver(observer, id, d) });
        }
        _ => {}
    }));
    drop(contained);
}

/// Run `f` (observer methods) with nested driver callbacks off, a panic contained; `None`
/// when already inside (our own driver calls) or when `f` panicked.
pub(crate) fn observe<T>(f: impl FnOnce() -> T) -> Option<T> {
    if DEPTH.with(|x| x.get()) > 0 {
        return None;
    }
    DEPTH.with(|x| x.set(1));
    let r = catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|x| x.set(0));
    r.ok()
}

/// The observer, once installed.
pub(crate) fn observer() -> Option<&'static dyn Observer> {
    OBSERVER.get().copied()
}

/// The swap check of [`graph::swap_supported`] (our own launch, nested in an observer method):
/// give the launch about to be issued with `params` (those of driver call `id`) the armed
/// executable. Returns whether it did.
pub(crate) fn swap_armed(id: u32, params: *mut c_void) -> bool {
    let to = SWAP_TO.with(|s| s.get());
    if to == 0 || !matches!(id, cbid::GRAPH_LAUNCH | cbid::GRAPH_LAUNCH_PTSZ) || params.is_null() {
        return false;
    }
    // SAFETY: the params struct of a cuGraphLaunch call about to be issued; its executable is
    // replaced before the driver reads it (measured: tests/gpu/probes/graph_probe.cu).
    unsafe { (*(params as *mut cs::cuGraphLaunch_params)).hGraph = to as ds::CUgraphExec };
    true
}

/// A module was loaded on this thread (what a `cuModuleLoad*` or `cuLibraryLoad*` call binds
/// at its exit).
pub(crate) fn note_loaded(module_id: u32) {
    LOADED_HERE.with(|l| l.borrow_mut().push(module_id));
}

unsafe fn on_resource(observer: &dyn Observer, id: u32, r: &cs::CUpti_ResourceData) {
    if id != RESOURCE_MODULE_LOADED || r.resourceDescriptor.is_null() {
        return;
    }
    // SAFETY: for MODULE_LOADED the descriptor is a CUpti_ModuleResourceData whose image is
    // `cubinSize` bytes valid during the callback.
    unsafe {
        let m = &*(r.resourceDescriptor as *const cs::CUpti_ModuleResourceData);
        if m.pCubin.is_null() {
            return;
        }
        let image = std::slice::from_raw_parts(m.pCubin as *const u8, m.cubinSize);
        note_loaded(m.moduleId);
        observer.module_loaded(m.moduleId, image);
    }
}

/// The callback site: CUPTI_API_ENTER (0) or CUPTI_API_EXIT (1), read as an integer.
fn is_enter(d: &cs::CUpti_CallbackData) -> bool {
    // SAFETY: the field is a C enum, i.e. a u32, at the start of the struct.
    unsafe { *(std::ptr::addr_of!(d.callbackSite) as *const u32) == 0 }
}

/// The driver call's `CUresult` as a number, on exit (read as the u32 it is, so a code unknown
/// to the bindings is no invalid enum).
fn returned(d: &cs::CUpti_CallbackData) -> Option<u32> {
    if is_enter(d) || d.functionReturnValue.is_null() {
        return None;
    }
    // SAFETY: on exit, functionReturnValue points to the call's CUresult (a u32).
    Some(unsafe { *(d.functionReturnValue as *const u32) })
}

/// A CUPTI driver callback: launches are decoded from CUPTI's own data (its kernel name and
/// correlation slot), everything else by [`on_call`].
///
/// # Safety
/// `d` is CUPTI's callback data for driver callback `id`.
unsafe fn on_driver(observer: &dyn Observer, id: u32, d: &cs::CUpti_CallbackData) {
    if d.functionParams.is_null() {
        return;
    }
    if !matches!(
        id,
        cbid::LAUNCH
            | cbid::LAUNCH_PTSZ
            | cbid::LAUNCH_EX
            | cbid::LAUNCH_EX_PTSZ
            | cbid::LAUNCH_COOPERATIVE
            | cbid::LAUNCH_COOPERATIVE_PTSZ
    ) {
        let call = DriverCall {
            id,
            params: d.functionParams as *mut c_void,
            context: d.context as u64,
            result: (!is_enter(d)).then(|| returned(d).unwrap_or(u32::MAX)),
        };
        // SAFETY: CUPTI's params struct for `id`, valid during the callback.
        return unsafe { on_call(observer, &call) };
    }
    // SAFETY: correlation data, when present, is CUPTI's slot for this call.
    unsafe {
        // Most exits belong to launches nobody recorded: nothing to decode.
        if !is_enter(d) && (d.correlationData.is_null() || *d.correlationData == 0) {
            return;
        }
    }
    // SAFETY: the caller's contract.
    let Some(mut call) = (unsafe { launch::from_cupti(id, d) }) else {
        return;
    };
    if is_enter(d) {
        observer.launch_enter(&mut call);
    } else if *call.correlation != 0 {
        call.result = returned(d);
        observer.launch_exit(&mut call);
    }
}

/// Decode one driver call (other than a launch) for the observer: each call family has its
/// own decoder, and no call id is in two families, so at most one of them acts on the call.
///
/// # Safety
/// `c.params` points to the parameter struct of call `c.id` (CUPTI's generated_cuda_meta.h
/// layout), valid during the call; after a successful call, its output pointers were written.
pub(crate) unsafe fn on_call(observer: &dyn Observer, c: &DriverCall) {
    if c.params.is_null() {
        return;
    }
    // SAFETY: the caller's contract, passed on to each family's decoder.
    unsafe {
        memory_calls::on_memory_call(observer, c);
        stream_calls::on_stream_call(observer, c);
        graph_calls::on_graph_lifecycle_call(observer, c);
        graph_calls::on_graph_change_call(observer, c);
        object_calls::on_object_call(observer, c);
        module_calls::on_module_call(observer, c);
    }
}
