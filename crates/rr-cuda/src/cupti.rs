//! The CUPTI callback boundary, for the recorder loaded into other people's programs.
//!
//! [`install`] subscribes one [`Observer`] to the driver API and resource callbacks a recorder
//! needs; the trampoline decodes CUPTI's raw callback data into safe values ([`LaunchCall`],
//! [`Allocation`], …) before the observer sees them. Design rules (cupti notes, measured on the
//! GPU machine with CUPTI 13.0):
//!
//! - every callback runs inside `catch_unwind`: a panic must never cross into the application;
//! - the driver calls an observer makes raise callbacks of their own: a thread-local depth guard
//!   drops nested *driver* callbacks but always delivers *resource* callbacks, because a lazily
//!   loaded module arrives nested inside our own `cuKernelGetFunction`;
//! - enum-typed fields of C structs (callback site, domain, launch attribute ids) are read as
//!   integers: a value unknown to the bindings must not become an invalid Rust enum.

use cudarc::cupti::sys as cs;
use cudarc::driver::sys as ds;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;

use crate::error::{check, Call, CudaError, Result};

/// CUPTI callback domains (`CUpti_CallbackDomain`).
const DOMAIN_DRIVER: u32 = 1;
const DOMAIN_RESOURCE: u32 = 3;
/// `CUPTI_CBID_RESOURCE_MODULE_LOADED`.
const RESOURCE_MODULE_LOADED: u32 = 6;

/// Driver callback ids (`CUpti_driver_api_trace_cbid`, CUDA 13.0; identical in every 12.x/13.x
/// header for these calls).
mod cbid {
    pub const MEM_ALLOC: u32 = 243;
    pub const MEM_ALLOC_PITCH: u32 = 244;
    pub const MEM_FREE: u32 = 245;
    pub const LAUNCH: u32 = 307;
    pub const MEM_ALLOC_MANAGED: u32 = 371;
    pub const LAUNCH_PTSZ: u32 = 442;
    pub const LAUNCH_COOPERATIVE: u32 = 477;
    pub const LAUNCH_COOPERATIVE_PTSZ: u32 = 478;
    pub const STREAM_END_CAPTURE: u32 = 497;
    pub const STREAM_END_CAPTURE_PTSZ: u32 = 498;
    pub const GRAPH_LAUNCH: u32 = 514;
    pub const GRAPH_LAUNCH_PTSZ: u32 = 515;
    pub const STREAM_BEGIN_CAPTURE_V2: u32 = 539;
    pub const STREAM_BEGIN_CAPTURE_V2_PTSZ: u32 = 540;
    pub const MEM_MAP: u32 = 551;
    pub const MEM_UNMAP: u32 = 552;
    pub const MEM_ALLOC_ASYNC: u32 = 598;
    pub const MEM_ALLOC_ASYNC_PTSZ: u32 = 599;
    pub const MEM_FREE_ASYNC: u32 = 600;
    pub const MEM_FREE_ASYNC_PTSZ: u32 = 601;
    pub const MEM_ALLOC_FROM_POOL_ASYNC: u32 = 611;
    pub const MEM_ALLOC_FROM_POOL_ASYNC_PTSZ: u32 = 612;
    pub const LAUNCH_EX: u32 = 652;
    pub const LAUNCH_EX_PTSZ: u32 = 653;
    pub const STREAM_BEGIN_CAPTURE_TO_GRAPH: u32 = 720;
    pub const STREAM_BEGIN_CAPTURE_TO_GRAPH_PTSZ: u32 = 721;
    pub const MODULE_LOAD: u32 = 18;
    pub const MODULE_LOAD_DATA: u32 = 19;
    pub const MODULE_LOAD_DATA_EX: u32 = 20;
    pub const MODULE_LOAD_FAT_BINARY: u32 = 21;

    pub const ALL: &[u32] = &[
        MEM_ALLOC,
        MEM_ALLOC_PITCH,
        MEM_FREE,
        LAUNCH,
        MEM_ALLOC_MANAGED,
        LAUNCH_PTSZ,
        LAUNCH_COOPERATIVE,
        LAUNCH_COOPERATIVE_PTSZ,
        STREAM_END_CAPTURE,
        STREAM_END_CAPTURE_PTSZ,
        GRAPH_LAUNCH,
        GRAPH_LAUNCH_PTSZ,
        STREAM_BEGIN_CAPTURE_V2,
        STREAM_BEGIN_CAPTURE_V2_PTSZ,
        MEM_MAP,
        MEM_UNMAP,
        MEM_ALLOC_ASYNC,
        MEM_ALLOC_ASYNC_PTSZ,
        MEM_FREE_ASYNC,
        MEM_FREE_ASYNC_PTSZ,
        MEM_ALLOC_FROM_POOL_ASYNC,
        MEM_ALLOC_FROM_POOL_ASYNC_PTSZ,
        LAUNCH_EX,
        LAUNCH_EX_PTSZ,
        STREAM_BEGIN_CAPTURE_TO_GRAPH,
        STREAM_BEGIN_CAPTURE_TO_GRAPH_PTSZ,
        MODULE_LOAD,
        MODULE_LOAD_DATA,
        MODULE_LOAD_DATA_EX,
        MODULE_LOAD_FAT_BINARY,
    ];
}

/// `CU_LAUNCH_ATTRIBUTE_*` ids the replay can reproduce.
const ATTR_COOPERATIVE: u32 = 2;
const ATTR_CLUSTER_DIMENSION: u32 = 4;
/// The largest kernel parameter buffer CUDA accepts (32 764 bytes), rounded up.
const MAX_PARAM_BYTES: usize = 32 * 1024;

/// What a recorder is told. Every method runs on the application thread that made the call,
/// possibly concurrently with others; none may block on a lock held across a driver call.
pub trait Observer: Send + Sync {
    /// A kernel launch is about to be issued (the kernel has not run).
    fn launch_enter(&self, call: &mut LaunchCall);
    /// The launch call returned (the kernel may still be running). Called only for launches
    /// whose `launch_enter` set [`LaunchCall::correlation`] (the others cost nothing more).
    fn launch_exit(&self, call: &mut LaunchCall);
    /// Device memory became usable at `[addr, addr + size)`.
    fn allocated(&self, a: Allocation);
    /// The allocation starting at `addr` (or VMM mapping) was released.
    fn freed(&self, context: u64, addr: u64);
    /// The driver loaded a module; `image` is the device image it loaded (valid only now).
    fn module_loaded(&self, module_id: u32, image: &[u8]);
    /// A `cuModuleLoad*` call returned `module`; these module ids were loaded during it.
    fn module_handle(&self, module: u64, loaded: &[u32]);
    /// A CUDA graph was launched: its kernels raise no launch callbacks.
    fn graph_launched(&self);
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub context: u64,
    pub addr: u64,
    pub size: u64,
    pub kind: AllocKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchKind {
    /// `cuLaunchKernel` (and `_ptsz`).
    Plain,
    /// `cuLaunchKernelEx` (and `_ptsz`), with launch attributes.
    Ex,
    /// `cuLaunchCooperativeKernel` (and `_ptsz`).
    Cooperative,
}

/// One kernel launch as the application issued it. Accessors that call the driver
/// (`function`, `params`, `capturing`) are for [`Observer::launch_enter`].
pub struct LaunchCall<'a> {
    pub kind: LaunchKind,
    /// The (mangled) kernel name, as CUPTI reports it (borrowed: nothing is allocated for the
    /// launches a recorder passes over).
    pub symbol: std::borrow::Cow<'a, str>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    /// Thread-block cluster dimensions (a `cuLaunchKernelEx` attribute).
    pub cluster: Option<[u32; 3]>,
    pub cooperative: bool,
    /// Launch attributes the replay cannot reproduce (priority, events, …), by id.
    pub other_attributes: Vec<u32>,
    /// The context current on the launching thread (an opaque id).
    pub context: u64,
    /// The launch call's `CUresult` as a number, on exit (0: success).
    pub result: Option<u32>,
    /// A slot CUPTI keeps from this call's enter to its exit (the recorder's record id).
    pub correlation: &'a mut u64,
    handle: ds::CUfunction,
    stream: ds::CUstream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
}

/// A kernel resolved to a loaded function of the current context.
pub struct KernelFunction {
    raw: ds::CUfunction,
}

impl LaunchCall<'_> {
    /// Whether the launch is being captured into a graph (it will not execute now, and a
    /// synchronisation would break the application's capture).
    pub fn capturing(&self) -> Result<bool> {
        let mut status = 0u32;
        // SAFETY: the stream handle is the application's, valid during its launch call
        // (including the special legacy / per-thread values); the driver writes one enum value,
        // received as a u32.
        let r = unsafe {
            ds::cuStreamIsCapturing(
                self.stream,
                &mut status as *mut u32 as *mut ds::CUstreamCaptureStatus,
            )
        };
        check(r, "cuStreamIsCapturing")?;
        Ok(status != 0)
    }

    /// The launched kernel as a loaded `CUfunction` of the current context. cudart, cuBLAS and
    /// PyTorch launch `CUkernel` handles (on which `cuFunc*` calls fail with
    /// `CUDA_ERROR_INVALID_HANDLE`); resolving one loads its module if it was lazy, and that
    /// module's `module_loaded` arrives nested, during this call. Returns the function and the
    /// ids of modules loaded meanwhile.
    pub fn function(&self) -> Result<(KernelFunction, Vec<u32>)> {
        LOADED_HERE.with(|l| l.borrow_mut().clear());
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: queries a handle the application passed to the driver; writes one pointer.
        let r = unsafe { ds::cuFuncGetName(&mut name, self.handle) };
        let f = if r == ds::CUresult::CUDA_ERROR_INVALID_HANDLE {
            let mut f: ds::CUfunction = std::ptr::null_mut();
            // SAFETY: the handle is a CUkernel (cuFunc* refused it); the driver writes the
            // function of the current context.
            let r = unsafe { ds::cuKernelGetFunction(&mut f, self.handle as ds::CUkernel) };
            check(r, "cuKernelGetFunction")?;
            f
        } else {
            check(r, "cuFuncGetName")?;
            // SAFETY: a CUfunction of the current context; loading is a no-op when loaded.
            check(unsafe { ds::cuFuncLoad(self.handle) }, "cuFuncLoad")?;
            self.handle
        };
        let loaded = LOADED_HERE.with(|l| std::mem::take(&mut *l.borrow_mut()));
        Ok((KernelFunction { raw: f }, loaded))
    }

    /// The parameter buffer in device layout (`layout` from [`KernelFunction::param_layout`]),
    /// copied from `kernelParams` or from the `extra` buffer, whichever the launch used.
    pub fn params(&self, layout: &[(usize, usize)]) -> Result<Vec<u8>> {
        let size = layout.iter().map(|&(o, s)| o + s).max().unwrap_or(0);
        if size > MAX_PARAM_BYTES {
            return Err(CudaError::new(
                "cuFuncGetParamInfo",
                ds::CUresult::CUDA_ERROR_INVALID_VALUE,
            )
            .context(format!("a {size}-byte parameter buffer")));
        }
        let mut buf = vec![0u8; size];
        if !self.kernel_params.is_null() {
            for (i, &(off, len)) in layout.iter().enumerate() {
                // SAFETY: the driver's contract for this launch: `kernelParams` holds one
                // pointer per kernel parameter, each to at least that parameter's size in bytes
                // (the sizes come from the kernel's own parameter info), valid during the call.
                unsafe {
                    let p = *self.kernel_params.add(i) as *const u8;
                    if p.is_null() {
                        continue;
                    }
                    std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr().add(off), len);
                }
            }
            return Ok(buf);
        }
        if !self.extra.is_null() {
            let (mut data, mut data_len): (*const u8, usize) = (std::ptr::null(), 0);
            // The `extra` list is (key, value) pairs ended by CU_LAUNCH_PARAM_END; a bounded walk.
            for pair in 0..16 {
                // SAFETY: `extra` is the application's key/value list for this call, ended by
                // CU_LAUNCH_PARAM_END (0); we stop there or after 16 pairs.
                let (key, value) = unsafe {
                    (
                        *self.extra.add(2 * pair) as usize,
                        *self.extra.add(2 * pair + 1),
                    )
                };
                match key {
                    0 => break,
                    1 => data = value as *const u8,
                    // SAFETY: BUFFER_SIZE's value points to a size_t (driver contract).
                    2 if !value.is_null() => data_len = unsafe { *(value as *const usize) },
                    _ => {}
                }
            }
            if !data.is_null() {
                let n = data_len.min(size);
                // SAFETY: BUFFER_POINTER points to `data_len` bytes of parameters (driver
                // contract for this launch); we copy at most that many.
                unsafe { std::ptr::copy_nonoverlapping(data, buf.as_mut_ptr(), n) };
            }
        }
        Ok(buf)
    }
}

impl KernelFunction {
    /// `(offset, size)` of each parameter, from the loaded image.
    pub fn param_layout(&self) -> Result<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        for i in 0..4096 {
            let (mut off, mut size) = (0usize, 0usize);
            // SAFETY: `raw` is a loaded function; the driver writes two integers.
            let r = unsafe { ds::cuFuncGetParamInfo(self.raw, i, &mut off, &mut size) };
            match check(r, "cuFuncGetParamInfo") {
                Ok(()) => out.push((off, size)),
                Err(e) if e.number() == 1 => return Ok(out),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The module the function belongs to (an opaque handle).
    pub fn module(&self) -> Result<u64> {
        let mut m: ds::CUmodule = std::ptr::null_mut();
        // SAFETY: `raw` is a loaded function; writes one handle.
        let r = unsafe { ds::cuFuncGetModule(&mut m, self.raw) };
        check(r, "cuFuncGetModule")?;
        Ok(m as u64)
    }

    pub fn attribute(&self, attr: ds::CUfunction_attribute) -> Result<i32> {
        // SAFETY: `raw` is a loaded function.
        unsafe { cudarc::driver::result::function::get_function_attribute(self.raw, attr) }
            .call("cuFuncGetAttribute")
    }
}

/// The address and size of global `name` of a module (handle from [`KernelFunction::module`]).
pub fn module_global(module: u64, name: &str) -> Result<(u64, usize)> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| CudaError::new("cuModuleGetGlobal", ds::CUresult::CUDA_ERROR_INVALID_VALUE))?;
    // SAFETY: `module` is a live module handle of the current context; `c` is NUL-terminated.
    unsafe { cudarc::driver::result::module::get_global(module as ds::CUmodule, c) }
        .call("cuModuleGetGlobal")
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

/// Graph captures in progress anywhere in the process: while one is, no launch is recorded
/// (synchronising would invalidate it).
static CAPTURES: AtomicI64 = AtomicI64::new(0);

/// Whether any stream of the process is capturing a graph.
pub fn any_capture_active() -> bool {
    CAPTURES.load(Ordering::Relaxed) > 0
}

thread_local! {
    /// > 0 while an observer method runs on this thread: driver callbacks raised by its own
    /// driver calls are not delivered (resource callbacks are).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Module ids loaded on this thread since the last take.
    static LOADED_HERE: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

static OBSERVER: OnceLock<&'static dyn Observer> = OnceLock::new();

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

/// Subscribe `observer` to the launch, memory, module and capture callbacks (once per
/// process). The caller has checked [`load_library`].
pub fn install(observer: &'static dyn Observer) -> std::result::Result<(), CuptiError> {
    if OBSERVER.set(observer).is_err() {
        return Ok(());
    }
    let mut sub: cs::CUpti_SubscriberHandle = std::ptr::null_mut();
    // The callback receives its enum arguments as integers: same ABI, no invalid enums.
    type RawCallback = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);
    let raw: RawCallback = trampoline;
    // SAFETY: `trampoline` has CUpti_CallbackFunc's C signature with the enum parameters
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
        >(raw)
    });
    // SAFETY: subscribes our callback; `sub` receives the handle.
    cupti_check(unsafe { cs::cuptiSubscribe(&mut sub, cb, std::ptr::null_mut()) }, "cuptiSubscribe")
        .map_err(|e| CuptiError(format!("{} (another CUPTI tool, such as Nsight or a profiler, may be attached: CUPTI allows one)", e.0)))?;
    let driver = cs::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API;
    for &id in cbid::ALL {
        // SAFETY: enables one callback of a domain for our subscriber.
        let r = unsafe { cs::cuptiEnableCallback(1, sub, driver, id) };
        cupti_check(r, "cuptiEnableCallback")?;
    }
    let resource = cs::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RESOURCE;
    // SAFETY: as above, for the module-loaded resource callback.
    let r = unsafe { cs::cuptiEnableCallback(1, sub, resource, RESOURCE_MODULE_LOADED) };
    cupti_check(r, "cuptiEnableCallback")?;
    Ok(())
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
            if DEPTH.with(|d| d.get()) > 0 {
                return;
            }
            DEPTH.with(|d| d.set(1));
            // SAFETY: for the driver domain CUPTI passes a CUpti_CallbackData valid during the
            // callback; its functionParams match the callback id.
            let r = catch_unwind(AssertUnwindSafe(|| unsafe {
                on_driver(observer, id, &*(data as *const cs::CUpti_CallbackData))
            }));
            DEPTH.with(|d| d.set(0));
            drop(r);
        }
        _ => {}
    }));
    drop(contained);
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
        LOADED_HERE.with(|l| l.borrow_mut().push(m.moduleId));
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

fn succeeded(d: &cs::CUpti_CallbackData) -> bool {
    returned(d) == Some(0)
}

unsafe fn on_driver(observer: &dyn Observer, id: u32, d: &cs::CUpti_CallbackData) {
    let p = d.functionParams;
    if p.is_null() {
        return;
    }
    let context = d.context as u64;
    let alloc = |addr: u64, size: u64, kind| {
        observer.allocated(Allocation {
            context,
            addr,
            size,
            kind,
        })
    };
    // SAFETY: (for every cast below) `functionParams` points to the params struct of the call
    // named by the callback id (CUPTI's generated_cuda_meta.h), valid during the callback;
    // output pointers in it are written by the driver before the exit callback.
    unsafe {
        match id {
            cbid::LAUNCH
            | cbid::LAUNCH_PTSZ
            | cbid::LAUNCH_EX
            | cbid::LAUNCH_EX_PTSZ
            | cbid::LAUNCH_COOPERATIVE
            | cbid::LAUNCH_COOPERATIVE_PTSZ => {
                let Some(mut call) = launch_call(id, d) else {
                    return;
                };
                if is_enter(d) {
                    observer.launch_enter(&mut call);
                } else {
                    call.result = returned(d);
                    observer.launch_exit(&mut call);
                }
            }
            cbid::MEM_ALLOC if succeeded(d) => {
                let q = &*(p as *const cs::cuMemAlloc_v2_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::Device);
            }
            cbid::MEM_ALLOC_PITCH if succeeded(d) => {
                let q = &*(p as *const cs::cuMemAllocPitch_v2_params);
                alloc(
                    *q.dptr,
                    (*q.pPitch as u64).saturating_mul(q.Height as u64),
                    AllocKind::Pitched,
                );
            }
            cbid::MEM_ALLOC_MANAGED if succeeded(d) => {
                let q = &*(p as *const cs::cuMemAllocManaged_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::Managed);
            }
            cbid::MEM_ALLOC_ASYNC | cbid::MEM_ALLOC_ASYNC_PTSZ if succeeded(d) => {
                let q = &*(p as *const cs::cuMemAllocAsync_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::StreamOrdered);
            }
            cbid::MEM_ALLOC_FROM_POOL_ASYNC | cbid::MEM_ALLOC_FROM_POOL_ASYNC_PTSZ
                if succeeded(d) =>
            {
                let q = &*(p as *const cs::cuMemAllocFromPoolAsync_params);
                alloc(*q.dptr, q.bytesize as u64, AllocKind::StreamOrdered);
            }
            cbid::MEM_MAP if succeeded(d) => {
                let q = &*(p as *const cs::cuMemMap_params);
                alloc(q.ptr, q.size as u64, AllocKind::Mapped);
            }
            cbid::MEM_FREE if is_enter(d) => {
                observer.freed(context, (*(p as *const cs::cuMemFree_v2_params)).dptr);
            }
            cbid::MEM_FREE_ASYNC | cbid::MEM_FREE_ASYNC_PTSZ if is_enter(d) => {
                observer.freed(context, (*(p as *const cs::cuMemFreeAsync_params)).dptr);
            }
            cbid::MEM_UNMAP if is_enter(d) => {
                observer.freed(context, (*(p as *const cs::cuMemUnmap_params)).ptr);
            }
            cbid::STREAM_BEGIN_CAPTURE_V2
            | cbid::STREAM_BEGIN_CAPTURE_V2_PTSZ
            | cbid::STREAM_BEGIN_CAPTURE_TO_GRAPH
            | cbid::STREAM_BEGIN_CAPTURE_TO_GRAPH_PTSZ => {
                // Counted from the enter on: launches on other threads must not synchronise
                // while a capture starts.
                if is_enter(d) {
                    CAPTURES.fetch_add(1, Ordering::SeqCst);
                } else if !succeeded(d) {
                    CAPTURES.fetch_sub(1, Ordering::SeqCst);
                }
            }
            cbid::STREAM_END_CAPTURE | cbid::STREAM_END_CAPTURE_PTSZ if !is_enter(d) => {
                CAPTURES.fetch_sub(1, Ordering::SeqCst);
            }
            cbid::GRAPH_LAUNCH | cbid::GRAPH_LAUNCH_PTSZ if is_enter(d) => {
                observer.graph_launched()
            }
            cbid::MODULE_LOAD
            | cbid::MODULE_LOAD_DATA
            | cbid::MODULE_LOAD_DATA_EX
            | cbid::MODULE_LOAD_FAT_BINARY => {
                if is_enter(d) {
                    LOADED_HERE.with(|l| l.borrow_mut().clear());
                } else if succeeded(d) {
                    // Every cuModuleLoad* params struct starts with `CUmodule *module`.
                    let module = *(*(p as *const *const ds::CUmodule));
                    let loaded = LOADED_HERE.with(|l| std::mem::take(&mut *l.borrow_mut()));
                    observer.module_handle(module as u64, &loaded);
                }
            }
            _ => {}
        }
    }
}

/// Decode one launch's parameters.
unsafe fn launch_call<'a>(id: u32, d: &'a cs::CUpti_CallbackData) -> Option<LaunchCall<'a>> {
    let symbol = if d.symbolName.is_null() {
        std::borrow::Cow::Borrowed("")
    } else {
        // SAFETY: CUPTI's kernel name, NUL-terminated, valid during the callback (`'a`).
        unsafe { CStr::from_ptr(d.symbolName) }.to_string_lossy()
    };
    if d.correlationData.is_null() {
        return None;
    }
    // SAFETY: CUPTI's per-call slot, valid from enter to exit of this call.
    let correlation = unsafe { &mut *d.correlationData };
    let p = d.functionParams;
    let mut call = LaunchCall {
        kind: LaunchKind::Plain,
        symbol,
        grid: [0; 3],
        block: [0; 3],
        shared_mem: 0,
        cluster: None,
        cooperative: false,
        other_attributes: Vec::new(),
        context: d.context as u64,
        result: None,
        correlation,
        handle: std::ptr::null_mut(),
        stream: std::ptr::null_mut(),
        kernel_params: std::ptr::null_mut(),
        extra: std::ptr::null_mut(),
    };
    // The fields cuLaunchKernel and cuLaunchCooperativeKernel share (two distinct structs with
    // the same field names).
    macro_rules! geometry {
        ($q:expr) => {
            call.handle = $q.f;
            call.grid = [$q.gridDimX, $q.gridDimY, $q.gridDimZ];
            call.block = [$q.blockDimX, $q.blockDimY, $q.blockDimZ];
            call.shared_mem = $q.sharedMemBytes;
            call.stream = $q.hStream;
            call.kernel_params = $q.kernelParams;
        };
    }
    // SAFETY: `p` is the params struct of this launch call (see `on_driver`).
    unsafe {
        match id {
            cbid::LAUNCH | cbid::LAUNCH_PTSZ => {
                let q = &*(p as *const cs::cuLaunchKernel_params);
                geometry!(q);
                call.extra = q.extra;
            }
            cbid::LAUNCH_COOPERATIVE | cbid::LAUNCH_COOPERATIVE_PTSZ => {
                let q = &*(p as *const cs::cuLaunchCooperativeKernel_params);
                call.kind = LaunchKind::Cooperative;
                call.cooperative = true;
                geometry!(q);
            }
            _ => {
                let q = &*(p as *const cs::cuLaunchKernelEx_params);
                if q.config.is_null() {
                    return None;
                }
                let c = &*q.config;
                call.kind = LaunchKind::Ex;
                call.handle = q.f;
                call.grid = [c.gridDimX, c.gridDimY, c.gridDimZ];
                call.block = [c.blockDimX, c.blockDimY, c.blockDimZ];
                call.shared_mem = c.sharedMemBytes;
                call.stream = c.hStream;
                call.kernel_params = q.kernelParams;
                call.extra = q.extra;
                for i in 0..(c.numAttrs as usize).min(64) {
                    let a = c.attrs.add(i);
                    // The id is a C enum: read it as the u32 it is.
                    let attr_id = *(a as *const u32);
                    let value = std::ptr::addr_of!((*a).value) as *const u32;
                    match attr_id {
                        ATTR_CLUSTER_DIMENSION => {
                            call.cluster = Some([*value, *value.add(1), *value.add(2)])
                        }
                        ATTR_COOPERATIVE => call.cooperative = *(value as *const i32) != 0,
                        0 => {}
                        other => call.other_attributes.push(other),
                    }
                }
            }
        }
    }
    Some(call)
}
