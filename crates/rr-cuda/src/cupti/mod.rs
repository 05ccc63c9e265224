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

mod capture;
pub(crate) mod cbid;
mod extract;
pub mod graph;
mod launch;

use cudarc::cupti::sys as cs;
use cudarc::driver::sys as ds;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::error::{check, Call, CudaError, Result};
pub use crate::objects::{CapturedObject, CapturedResource};
pub use extract::loaded_cubin;
pub use graph::{GraphTemplate, HostCall, KernelNode, Memcpy3d, Memset, Node, NodeOp};
pub use launch::{KernelFunction, LaunchCall, LaunchKind};

/// CUPTI callback domains (`CUpti_CallbackDomain`).
const DOMAIN_DRIVER: u32 = 1;
const DOMAIN_RESOURCE: u32 = 3;
/// `CUPTI_CBID_RESOURCE_MODULE_LOADED`.
const RESOURCE_MODULE_LOADED: u32 = 6;

/// What a recorder is told. Every method runs on the application thread that made the call,
/// possibly concurrently with others; none may block on a lock held across a driver call.
pub trait Observer: Send + Sync {
    /// The launch storm's path, before anything else: count `call` and return `true` when the
    /// observer already knows that no launch of its kernel and configuration can be selected.
    /// Runs outside [`observe`] (no depth bookkeeping, no unwinding guard), so it must not
    /// panic, lock, allocate or call the driver; `false` sends the launch down the full path.
    fn launch_settled(&self, _call: &LaunchCall) -> bool {
        false
    }
    /// A kernel launch is about to be issued (the kernel has not run).
    fn launch_enter(&self, call: &mut LaunchCall);
    /// The launch call returned (the kernel may still be running). Called only for launches
    /// whose `launch_enter` set [`LaunchCall::correlation`] (the others cost nothing more).
    fn launch_exit(&self, call: &mut LaunchCall);
    /// Memory became usable by kernels at `[addr, addr + size)`.
    fn allocated(&self, a: Allocation);
    /// The allocation starting at `addr` (or VMM mapping) was released.
    fn freed(&self, context: u64, addr: u64);
    /// The driver loaded a module; `image` is the device image it loaded (valid only now).
    fn module_loaded(&self, module_id: u32, image: &[u8]);
    /// A `cuModuleLoad*` call returned `module`; these module ids were loaded during it.
    fn module_handle(&self, module: u64, loaded: &[u32]);
    /// A `cuLibraryLoad*` call returned `library`; these module ids were loaded during it (seen
    /// through interposed entry points only: the library's modules are asked for by handle
    /// when one of its kernels is recorded).
    fn library_loaded(&self, library: u64, loaded: &[u32]);
    /// `cuLibraryUnload` is about to unload `library`.
    fn library_unloaded(&self, library: u64);
    /// An executable graph was instantiated: what it runs, or why that could not be read.
    fn graph_instantiated(&self, exec: u64, graph: Result<GraphTemplate>);
    /// Something an executable graph runs changed after instantiation.
    fn graph_changed(&self, exec: u64, change: GraphChange);
    fn graph_destroyed(&self, exec: u64);
    /// A graph launch is about to be issued on `stream`. Returns `true` when the observer ran
    /// the graph's nodes itself (in stream order, on `stream`): the launch then runs the empty
    /// graph instead, so every node runs once. Only return `true` after
    /// [`graph::swap_supported`] said so.
    fn graph_launch(&self, exec: u64, stream: u64, context: u64) -> bool;
    /// A texture or surface object was created.
    fn object_created(&self, handle: u64, object: CapturedObject);
    fn object_destroyed(&self, handle: u64);
    /// The program is about to destroy stream `stream` (its handle may be reused after).
    fn stream_destroyed(&self, _stream: u64) {}
    /// A context is about to be destroyed (`context`), or the primary context of `device` may
    /// be (reset, or released for the last time): what is pending there must be done now.
    fn context_ending(&self, _context: Option<u64>, _device: Option<i32>) {}
    /// The context is gone (named as in `context_ending`): its handle may come back for a new
    /// one.
    fn context_gone(&self, _context: Option<u64>, _device: Option<i32>) {}
}

/// A change to an executable graph after instantiation; nodes are named by their handle in the
/// graph it was instantiated (or last updated) from.
#[derive(Debug)]
pub enum GraphChange {
    /// `cuGraphExecKernelNodeSetParams`, `cuGraphExecNodeSetParams` on a kernel node.
    Kernel {
        node: u64,
        kernel: Result<KernelNode>,
    },
    Memset {
        node: u64,
        memset: Memset,
    },
    Memcpy {
        node: u64,
        copy: Memcpy3d,
    },
    Host {
        node: u64,
        host: HostCall,
    },
    Event {
        node: u64,
        event: u64,
    },
    /// `cuGraphNodeSetEnabled`.
    Enabled {
        node: u64,
        enabled: bool,
    },
    /// `cuGraphExecUpdate`: the executable now runs this graph.
    Updated(Result<GraphTemplate>),
    /// A change rr-tui does not follow (which call).
    Untracked(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    Device,
    Pitched,
    Managed,
    /// Stream-ordered (`cuMemAllocAsync`, pools).
    StreamOrdered,
    /// A virtual-memory mapping (`cuMemMap`).
    Mapped,
    /// Page-locked host memory mapped into the device address space (`cuMemHostAlloc`,
    /// `cuMemAllocHost`, `cuMemHostRegister`), at its device address.
    Host,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub context: u64,
    pub addr: u64,
    pub size: u64,
    pub kind: AllocKind,
}

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

/// Whether device `dev`'s primary context is active (retained by someone).
fn primary_active(dev: i32) -> bool {
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: writes two integers for a device ordinal the program used.
    let r = unsafe { ds::cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active) };
    r != ds::CUresult::CUDA_SUCCESS || active != 0
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

/// Why CUPTI could not be set up.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct CuptiError(pub String);

fn cupti_check(r: cs::CUptiResult, what: &str) -> std::result::Result<(), CuptiError> {
    if r == cs::CUptiResult::CUPTI_SUCCESS {
        return Ok(());
    }
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: writes a pointer to a static string.
    unsafe { cs::cuptiGetResultString(r, &mut s) };
    let text = if s.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: a NUL-terminated static string from CUPTI.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    };
    Err(CuptiError(format!("{what}: {text}")))
}

/// Load libcupti (an explicit `path` first, then the loader's search), returning whether found.
pub fn load_library(path: Option<&std::path::Path>) -> bool {
    if let Some(p) = path {
        if let Ok(c) = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()) {
            // SAFETY: dlopen of a NUL-terminated path; the handle is kept for the process's
            // life, so cudarc's later lookup by soname finds this library.
            unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        }
    }
    // SAFETY: only tries to dlopen the candidate names; calls nothing in them.
    unsafe { cs::is_culib_present() }
}

pub use capture::{any_capture_active, outside_any_capture, outside_global_capture};

thread_local! {
    /// > 0 while an observer method runs on this thread: driver callbacks raised by its own
    /// driver calls are not delivered (resource callbacks are).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Module ids loaded on this thread since the last take.
    static LOADED_HERE: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// When not 0, the next graph launch on this thread runs this executable instead (the swap
    /// of [`graph::swap_supported`]'s own check).
    static SWAP_TO: Cell<u64> = const { Cell::new(0) };
}

/// Bumped when modules or libraries are unloaded: kernel handles seen before may be reused for
/// other kernels from then on, so whatever a recorder cached by handle is stale.
static HANDLE_GENERATION: AtomicU64 = AtomicU64::new(0);

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

/// Whether the observer is subscribed to CUPTI (which allows one subscriber per process).
static SUBSCRIBED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A CUPTI callback, its enum arguments received as integers (same ABI, no invalid enums).
type RawCallback = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);

/// Subscribe `callback` to CUPTI (nothing enabled yet).
fn subscribe(callback: RawCallback) -> std::result::Result<cs::CUpti_SubscriberHandle, CuptiError> {
    let mut sub: cs::CUpti_SubscriberHandle = std::ptr::null_mut();
    // SAFETY: a RawCallback has CUpti_CallbackFunc's C signature with the enum parameters
    // declared as u32, which is their C representation.
    let cb: cs::CUpti_CallbackFunc = Some(unsafe {
        std::mem::transmute::<
            RawCallback,
            unsafe extern "C" fn(
                *mut c_void,
                cs::CUpti_CallbackDomain,
                cs::CUpti_CallbackId,
                *const c_void,
            ),
        >(callback)
    });
    // SAFETY: subscribes our callback; `sub` receives the handle.
    cupti_check(unsafe { cs::cuptiSubscribe(&mut sub, cb, std::ptr::null_mut()) }, "cuptiSubscribe")
        .map_err(|e| CuptiError(format!("{} (another CUPTI tool, such as Nsight or a profiler, may be attached: CUPTI allows one)", e.0)))?;
    Ok(sub)
}

/// Turn on the module-loaded resource callback for subscriber `sub`.
fn enable_module_loaded(sub: cs::CUpti_SubscriberHandle) -> std::result::Result<(), CuptiError> {
    let resource = cs::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RESOURCE;
    // SAFETY: enables one resource callback for our subscriber.
    let r = unsafe { cs::cuptiEnableCallback(1, sub, resource, RESOURCE_MODULE_LOADED) };
    cupti_check(r, "cuptiEnableCallback")
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

/// The device address of page-locked host memory at host address `p` (the same address under
/// unified addressing), if the driver knows it.
fn host_device_address(p: *mut c_void) -> Option<u64> {
    let mut d: ds::CUdeviceptr = 0;
    // SAFETY: the driver looks the host address up (any value) and writes one address.
    let r = unsafe { ds::cuMemHostGetDevicePointer_v2(&mut d, p, 0) };
    (r == ds::CUresult::CUDA_SUCCESS).then_some(d)
}

/// One driver call as the decoder sees it: from CUPTI's callback data, or from an interposed
/// entry point that packed its arguments into the same parameter struct.
pub(crate) struct DriverCall {
    /// The CUPTI callback id of the call.
    pub id: u32,
    /// The call's parameter struct (CUPTI's layout for `id`).
    pub params: *mut c_void,
    /// The context current on the calling thread (an opaque id; 0 if none).
    pub context: u64,
    /// `None` before the call; its `CUresult` as a number after it.
    pub result: Option<u32>,
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

/// Decode one driver call (other than a launch) for the observer.
///
/// # Safety
/// `c.params` points to the parameter struct of call `c.id` (CUPTI's generated_cuda_meta.h
/// layout), valid during the call; after a successful call, its output pointers were written.
pub(crate) unsafe fn on_call(observer: &dyn Observer, c: &DriverCall) {
    let (id, p, context) = (c.id, c.params, c.context);
    if p.is_null() {
        return;
    }
    let alloc = |addr: u64, size: u64, kind| {
        observer.allocated(Allocation {
            context,
            addr,
            size,
            kind,
        })
    };
    let entering = c.result.is_none();
    let exit_ok = c.result == Some(0);
    // SAFETY: (for every cast below) the caller's contract.
    unsafe {
        match id {
            cbid::MEM_ALLOC if exit_ok => {
                let q = &*(p as *const cs::cuMemAlloc_v2_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::Device);
            }
            cbid::MEM_ALLOC_PITCH if exit_ok => {
                let q = &*(p as *const cs::cuMemAllocPitch_v2_params);
                alloc(
                    *q.dptr,
                    (*q.pPitch as u64).saturating_mul(q.Height as u64),
                    AllocKind::Pitched,
                );
            }
            cbid::MEM_ALLOC_MANAGED if exit_ok => {
                let q = &*(p as *const cs::cuMemAllocManaged_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::Managed);
            }
            cbid::MEM_ALLOC_ASYNC | cbid::MEM_ALLOC_ASYNC_PTSZ if exit_ok => {
                let q = &*(p as *const cs::cuMemAllocAsync_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::StreamOrdered);
            }
            cbid::MEM_ALLOC_FROM_POOL_ASYNC | cbid::MEM_ALLOC_FROM_POOL_ASYNC_PTSZ if exit_ok => {
                let q = &*(p as *const cs::cuMemAllocFromPoolAsync_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::StreamOrdered);
            }
            cbid::MEM_MAP if exit_ok => {
                let q = &*(p as *const cs::cuMemMap_params);
                alloc(q.ptr, q.size as u64, AllocKind::Mapped);
            }
            cbid::MEM_HOST_ALLOC if exit_ok => {
                let q = &*(p as *const cs::cuMemHostAlloc_params);
                if let Some(dev) = host_device_address(*q.pp) {
                    alloc(dev, q.bytesize as u64, AllocKind::Host);
                }
            }
            cbid::MEM_ALLOC_HOST_V2 if exit_ok => {
                let q = &*(p as *const cs::cuMemAllocHost_v2_params);
                if let Some(dev) = host_device_address(*q.pp) {
                    alloc(dev, q.bytesize as u64, AllocKind::Host);
                }
            }
            cbid::MEM_HOST_REGISTER | cbid::MEM_HOST_REGISTER_V2 if exit_ok => {
                // The two parameter structs have the same fields (p, bytesize, Flags).
                let q = &*(p as *const cs::cuMemHostRegister_v2_params);
                if let Some(dev) = host_device_address(q.p) {
                    alloc(dev, q.bytesize as u64, AllocKind::Host);
                }
            }
            cbid::MEM_FREE_HOST | cbid::MEM_HOST_UNREGISTER if entering => {
                // Both take the host pointer first.
                let host = *(p as *const *mut c_void);
                if let Some(dev) = host_device_address(host) {
                    observer.freed(context, dev);
                }
            }
            cbid::MEM_FREE if entering => {
                observer.freed(context, (*(p as *const cs::cuMemFree_v2_params)).dptr);
            }
            cbid::MEM_FREE_ASYNC | cbid::MEM_FREE_ASYNC_PTSZ if entering => {
                observer.freed(context, (*(p as *const cs::cuMemFreeAsync_params)).dptr);
            }
            cbid::MEM_UNMAP if entering => {
                observer.freed(context, (*(p as *const cs::cuMemUnmap_params)).ptr);
            }
            cbid::STREAM_BEGIN_CAPTURE_V2
            | cbid::STREAM_BEGIN_CAPTURE_V2_PTSZ
            | cbid::STREAM_BEGIN_CAPTURE_TO_GRAPH
            | cbid::STREAM_BEGIN_CAPTURE_TO_GRAPH_PTSZ => {
                // Both structs start with the stream; the mode is the second field of one, the
                // sixth of the other (a CUstreamCaptureMode, read as the integer it is).
                let stream = *(p as *const u64);
                let mode = match id {
                    cbid::STREAM_BEGIN_CAPTURE_V2 | cbid::STREAM_BEGIN_CAPTURE_V2_PTSZ => {
                        *(p as *const u32).add(2)
                    }
                    _ => *(p as *const u32).add(10),
                };
                // Counted from the enter on: launches on other threads must not synchronise
                // while a capture starts.
                if entering {
                    capture::began(stream, mode);
                } else if !exit_ok {
                    capture::ended(stream);
                }
            }
            cbid::STREAM_DESTROY_V2 if entering => {
                observer.stream_destroyed(*(p as *const u64));
            }
            cbid::CTX_DESTROY_V2 => {
                let ctx = *(p as *const u64);
                if entering {
                    observer.context_ending(Some(ctx), None);
                } else if exit_ok {
                    observer.context_gone(Some(ctx), None);
                }
            }
            cbid::DEVICE_PRIMARY_CTX_RESET_V2 | cbid::DEVICE_PRIMARY_CTX_RELEASE_V2 => {
                let dev = *(p as *const i32);
                if entering {
                    observer.context_ending(None, Some(dev));
                } else if exit_ok
                    && (id == cbid::DEVICE_PRIMARY_CTX_RESET_V2 || !primary_active(dev))
                {
                    observer.context_gone(None, Some(dev));
                }
            }
            cbid::STREAM_END_CAPTURE | cbid::STREAM_END_CAPTURE_PTSZ if !entering => {
                capture::ended(*(p as *const u64));
            }
            cbid::GRAPH_INSTANTIATE
            | cbid::GRAPH_INSTANTIATE_V2
            | cbid::GRAPH_INSTANTIATE_WITH_FLAGS
            | cbid::GRAPH_INSTANTIATE_WITH_PARAMS
            | cbid::GRAPH_INSTANTIATE_WITH_PARAMS_PTSZ
                if exit_ok =>
            {
                // Every instantiate params struct starts with `CUgraphExec *phGraphExec;
                // CUgraph hGraph;`; the flags differ in place.
                let exec = **(p as *const *const ds::CUgraphExec) as u64;
                let graph = *(p as *const ds::CUgraph).add(1);
                let flags = match id {
                    cbid::GRAPH_INSTANTIATE_WITH_FLAGS => {
                        (*(p as *const cs::cuGraphInstantiateWithFlags_params)).flags
                    }
                    cbid::GRAPH_INSTANTIATE_WITH_PARAMS
                    | cbid::GRAPH_INSTANTIATE_WITH_PARAMS_PTSZ => {
                        let q = &*(p as *const cs::cuGraphInstantiateWithParams_params);
                        if q.instantiateParams.is_null() {
                            0
                        } else {
                            (*q.instantiateParams).flags
                        }
                    }
                    _ => 0,
                };
                let template = graph::walk(graph as u64).map(|mut t| {
                    t.device_launch = flags & graph::FLAG_DEVICE_LAUNCH != 0;
                    t
                });
                observer.graph_instantiated(exec, template);
            }
            cbid::GRAPH_EXEC_DESTROY if entering => {
                observer.graph_destroyed(
                    (*(p as *const cs::cuGraphExecDestroy_params)).hGraphExec as u64,
                );
            }
            cbid::GRAPH_LAUNCH | cbid::GRAPH_LAUNCH_PTSZ if entering => {
                let q = p as *mut cs::cuGraphLaunch_params;
                let per_thread = id == cbid::GRAPH_LAUNCH_PTSZ;
                let exec = (*q).hGraph as u64;
                let stream = launch::effective_stream((*q).hStream as u64, per_thread);
                if observer.graph_launch(exec, stream, context) {
                    // The observer checked the swap works and ran the nodes: the application's
                    // launch runs the empty graph (cached by the check, so this cannot fail).
                    if let Ok(empty) = graph::empty_exec() {
                        (*q).hGraph = empty as ds::CUgraphExec;
                    }
                }
            }
            cbid::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS
            | cbid::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS_V2
                if exit_ok =>
            {
                let q = &*(p as *const cs::cuGraphExecKernelNodeSetParams_v2_params);
                if q.nodeParams.is_null() {
                    return;
                }
                // The v1 struct is a prefix of v2 (without `kern` and `ctx`).
                let mut k: ds::CUDA_KERNEL_NODE_PARAMS_v2 = std::mem::zeroed();
                let n = if id == cbid::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS {
                    std::mem::size_of::<ds::CUDA_KERNEL_NODE_PARAMS_v1>()
                } else {
                    std::mem::size_of::<ds::CUDA_KERNEL_NODE_PARAMS_v2>()
                };
                std::ptr::copy_nonoverlapping(
                    q.nodeParams as *const u8,
                    &mut k as *mut ds::CUDA_KERNEL_NODE_PARAMS_v2 as *mut u8,
                    n,
                );
                observer.graph_changed(
                    q.hGraphExec as u64,
                    GraphChange::Kernel {
                        node: q.hNode as u64,
                        kernel: graph::kernel_from_params(&k),
                    },
                );
            }
            cbid::GRAPH_EXEC_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecNodeSetParams_params);
                if q.nodeParams.is_null() {
                    return;
                }
                // CUgraphNodeParams: `type` (an enum, read as u32), 3 reserved ints, then the
                // union, whose kernel member has CUDA_KERNEL_NODE_PARAMS_v2's layout.
                let kind = *(q.nodeParams as *const u32);
                let change = if kind == 0 {
                    let k = &*((q.nodeParams as *const u8).add(16)
                        as *const ds::CUDA_KERNEL_NODE_PARAMS_v2);
                    GraphChange::Kernel {
                        node: q.hNode as u64,
                        kernel: graph::kernel_from_params(k),
                    }
                } else {
                    GraphChange::Untracked("cuGraphExecNodeSetParams on a node other than a kernel")
                };
                observer.graph_changed(q.hGraphExec as u64, change);
            }
            cbid::GRAPH_EXEC_UPDATE | cbid::GRAPH_EXEC_UPDATE_V2 if exit_ok => {
                // Both params structs start with `CUgraphExec hGraphExec; CUgraph hGraph;`.
                let exec = *(p as *const ds::CUgraphExec) as u64;
                let graph = *(p as *const ds::CUgraph).add(1) as u64;
                observer.graph_changed(exec, GraphChange::Updated(graph::walk(graph)));
            }
            cbid::GRAPH_EXEC_MEMSET_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecMemsetNodeSetParams_params);
                if !q.memsetParams.is_null() {
                    let memset = graph::memset_of(&*q.memsetParams);
                    let node = q.hNode as u64;
                    observer
                        .graph_changed(q.hGraphExec as u64, GraphChange::Memset { node, memset });
                }
            }
            cbid::GRAPH_EXEC_MEMCPY_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecMemcpyNodeSetParams_params);
                if !q.copyParams.is_null() {
                    let copy = graph::memcpy_of(q.copyParams);
                    let node = q.hNode as u64;
                    observer.graph_changed(q.hGraphExec as u64, GraphChange::Memcpy { node, copy });
                }
            }
            cbid::GRAPH_EXEC_HOST_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecHostNodeSetParams_params);
                if !q.nodeParams.is_null() {
                    let host = graph::host_of(&*q.nodeParams);
                    let node = q.hNode as u64;
                    observer.graph_changed(q.hGraphExec as u64, GraphChange::Host { node, host });
                }
            }
            cbid::GRAPH_EXEC_EVENT_RECORD_NODE_SET_EVENT
            | cbid::GRAPH_EXEC_EVENT_WAIT_NODE_SET_EVENT
                if exit_ok =>
            {
                // Both: `hGraphExec, hNode, event`.
                let q = &*(p as *const cs::cuGraphExecEventRecordNodeSetEvent_params);
                let (node, event) = (q.hNode as u64, q.event as u64);
                observer.graph_changed(q.hGraphExec as u64, GraphChange::Event { node, event });
            }
            cbid::GRAPH_NODE_SET_ENABLED if exit_ok => {
                let q = &*(p as *const cs::cuGraphNodeSetEnabled_params);
                let (node, enabled) = (q.hNode as u64, q.isEnabled != 0);
                observer.graph_changed(q.hGraphExec as u64, GraphChange::Enabled { node, enabled });
            }
            cbid::GRAPH_EXEC_CHILD_GRAPH_NODE_SET_PARAMS if exit_ok => {
                let exec = *(p as *const ds::CUgraphExec) as u64;
                observer.graph_changed(
                    exec,
                    GraphChange::Untracked("cuGraphExecChildGraphNodeSetParams"),
                );
            }
            cbid::TEX_OBJECT_CREATE if exit_ok => {
                let q = &*(p as *const cs::cuTexObjectCreate_params);
                if q.pTexObject.is_null() || q.pResDesc.is_null() || q.pTexDesc.is_null() {
                    return;
                }
                observer.object_created(
                    *q.pTexObject,
                    CapturedObject {
                        kind: rr_format::objects::ObjectKind::Texture,
                        resource: crate::objects::capture_resource(q.pResDesc),
                        texture: Some(crate::objects::capture_texture(q.pTexDesc)),
                        view: crate::objects::capture_view(q.pResViewDesc),
                    },
                );
            }
            cbid::SURF_OBJECT_CREATE if exit_ok => {
                let q = &*(p as *const cs::cuSurfObjectCreate_params);
                if q.pSurfObject.is_null() || q.pResDesc.is_null() {
                    return;
                }
                observer.object_created(
                    *q.pSurfObject,
                    CapturedObject {
                        kind: rr_format::objects::ObjectKind::Surface,
                        resource: crate::objects::capture_resource(q.pResDesc),
                        texture: None,
                        view: None,
                    },
                );
            }
            cbid::TEX_OBJECT_DESTROY | cbid::SURF_OBJECT_DESTROY if entering => {
                // Both take the 64-bit handle.
                observer.object_destroyed(*(p as *const u64));
            }
            cbid::MODULE_UNLOAD if entering => {
                HANDLE_GENERATION.fetch_add(1, Ordering::Relaxed);
            }
            cbid::LIBRARY_UNLOAD if entering => {
                HANDLE_GENERATION.fetch_add(1, Ordering::Relaxed);
                observer.library_unloaded(*(p as *const u64));
            }
            cbid::MODULE_LOAD
            | cbid::MODULE_LOAD_DATA
            | cbid::MODULE_LOAD_DATA_EX
            | cbid::MODULE_LOAD_FAT_BINARY
            | cbid::LIBRARY_LOAD_DATA
            | cbid::LIBRARY_LOAD_FROM_FILE => {
                if entering {
                    LOADED_HERE.with(|l| l.borrow_mut().clear());
                } else if exit_ok {
                    // Every cuModuleLoad* and cuLibraryLoad* params struct starts with the
                    // pointer the handle is written to.
                    let handle = *(*(p as *const *const u64));
                    let loaded = LOADED_HERE.with(|l| std::mem::take(&mut *l.borrow_mut()));
                    if matches!(id, cbid::LIBRARY_LOAD_DATA | cbid::LIBRARY_LOAD_FROM_FILE) {
                        observer.library_loaded(handle, &loaded);
                    } else {
                        observer.module_handle(handle, &loaded);
                    }
                }
            }
            _ => {}
        }
    }
}
