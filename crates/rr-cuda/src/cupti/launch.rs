//! One kernel launch as the application issued it: decoded from CUPTI's parameter structs or
//! from the arguments of an interposed entry point, with the accessors a recorder needs (the
//! kernel as a loaded function, its parameter bytes in device layout, whether it is captured).

use cudarc::cupti::sys as cs;
use cudarc::driver::sys as ds;
use std::borrow::Cow;
use std::ffi::{c_char, c_void, CStr};

use super::cbid;
use super::state::LOADED_HERE;
use crate::error::{check, Call, CudaError, Result};

/// `CU_LAUNCH_ATTRIBUTE_*` ids the replay can reproduce.
const ATTR_COOPERATIVE: u32 = 2;
const ATTR_CLUSTER_DIMENSION: u32 = 4;
/// The largest kernel parameter buffer CUDA accepts (32 764 bytes), rounded up.
pub(crate) const MAX_PARAM_BYTES: usize = 32 * 1024;

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
/// (`function`, `params`, `capturing`, `symbol` without CUPTI's name) are for
/// [`super::Observer::launch_enter`].
pub struct LaunchCall<'a> {
    pub kind: LaunchKind,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    /// Thread-block cluster dimensions (a `cuLaunchKernelEx` attribute).
    pub cluster: Option<[u32; 3]>,
    pub cooperative: bool,
    /// The context current on the launching thread (an opaque id).
    pub context: u64,
    /// The launch call's `CUresult` as a number, on exit (0: success).
    pub result: Option<u32>,
    /// A slot kept from this call's enter to its exit (the recorder's record id).
    pub correlation: &'a mut u64,
    /// Called through a `_ptsz` entry point: stream 0 is the calling thread's default stream.
    pub per_thread: bool,
    /// CUPTI's kernel name (NUL-terminated, valid during the call), or null.
    symbol_name: *const c_char,
    handle: ds::CUfunction,
    stream: ds::CUstream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
}

/// A kernel resolved to a loaded function of the current context.
pub struct KernelFunction {
    pub(crate) raw: ds::CUfunction,
}

// SAFETY: a driver handle; the driver API may be called with it from any thread (the recorder
// keeps it from a launch's enter to its exit, which may run on another thread).
unsafe impl Send for KernelFunction {}

impl<'a> LaunchCall<'a> {
    /// A launch with the arguments of `cuLaunchKernel` (interposed entry points).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        kind: LaunchKind,
        handle: ds::CUfunction,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem: u32,
        stream: ds::CUstream,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
        correlation: &'a mut u64,
    ) -> LaunchCall<'a> {
        LaunchCall {
            kind,
            grid,
            block,
            shared_mem,
            cluster: None,
            cooperative: kind == LaunchKind::Cooperative,
            context: 0,
            result: None,
            correlation,
            per_thread: false,
            symbol_name: std::ptr::null(),
            handle,
            stream,
            kernel_params,
            extra,
        }
    }

    /// A `cuLaunchKernelEx` launch: geometry and attributes from its configuration.
    ///
    /// # Safety
    /// `c.attrs` holds `c.numAttrs` launch attributes valid for the call.
    pub(crate) unsafe fn from_config(
        c: &ds::CUlaunchConfig,
        handle: ds::CUfunction,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
        correlation: &'a mut u64,
    ) -> LaunchCall<'a> {
        let mut call = LaunchCall::new(
            LaunchKind::Ex,
            handle,
            [c.gridDimX, c.gridDimY, c.gridDimZ],
            [c.blockDimX, c.blockDimY, c.blockDimZ],
            c.sharedMemBytes,
            c.hStream,
            kernel_params,
            extra,
            correlation,
        );
        // SAFETY: the caller's contract.
        (call.cluster, call.cooperative) = unsafe {
            read_attributes(c.attrs as *const ds::CUlaunchAttribute, c.numAttrs as usize)
        };
        call
    }

    /// The launched handle (a `CUfunction` or a `CUkernel`) as an opaque key: stable while the
    /// kernel's module is loaded, so a recorder may cache what it learnt about it.
    pub fn handle(&self) -> u64 {
        self.handle as u64
    }

    /// The (mangled) kernel name: CUPTI's when it gave one (borrowed, nothing allocated),
    /// otherwise asked of the driver.
    pub fn symbol(&self) -> Cow<'a, str> {
        if !self.symbol_name.is_null() {
            // SAFETY: CUPTI's kernel name, NUL-terminated, valid during the callback (`'a`).
            return unsafe { CStr::from_ptr::<'a>(self.symbol_name) }.to_string_lossy();
        }
        Cow::Owned(function_name(self.handle).unwrap_or_default())
    }

    /// Whether the launch is being captured into a graph (it will not execute now, and a
    /// synchronisation would break the application's capture).
    pub fn capturing(&self) -> Result<bool> {
        stream_capturing(self.stream)
    }

    /// The launching stream (an opaque handle), as the application passed it.
    pub fn stream(&self) -> u64 {
        self.stream as u64
    }

    /// The stream the kernel runs on, named so that work enqueued by another call lands on
    /// the same one: the per-thread default stream by its own handle when the launch used it.
    pub fn ordered_stream(&self) -> u64 {
        effective_stream(self.stream as u64, self.per_thread)
    }

    /// The launched kernel as a loaded `CUfunction` of the current context. cudart, cuBLAS and
    /// PyTorch launch `CUkernel` handles (on which `cuFunc*` calls fail with
    /// `CUDA_ERROR_INVALID_HANDLE`); resolving one loads its module if it was lazy, and that
    /// module's `module_loaded` arrives nested, during this call. Returns the function and the
    /// ids of modules loaded meanwhile.
    pub fn function(&self) -> Result<(KernelFunction, Vec<u32>)> {
        resolve_function(self.handle)
    }

    /// The parameter buffer in device layout (`layout` from [`KernelFunction::param_layout`]),
    /// copied from `kernelParams` or from the `extra` buffer, whichever the launch used.
    pub fn params(&self, layout: &[(usize, usize)]) -> Result<Vec<u8>> {
        // SAFETY: the launch's own `kernelParams`/`extra`, valid during the call (driver
        // contract), described by the kernel's parameter layout.
        unsafe { copy_params(self.kernel_params, self.extra, layout) }
    }
}

/// Stream 0 of a `_ptsz` call is the calling thread's default stream: named by its own handle
/// (`CU_STREAM_PER_THREAD`) so that work enqueued through another entry point lands on it.
pub fn effective_stream(stream: u64, per_thread: bool) -> u64 {
    if per_thread && stream == 0 {
        crate::stream::STREAM_PER_THREAD
    } else {
        stream
    }
}

/// Whether `stream` is capturing a graph.
pub(crate) fn stream_capturing(stream: ds::CUstream) -> Result<bool> {
    let mut status = 0u32;
    // SAFETY: the stream handle is the application's, valid during its call (including the
    // special legacy / per-thread values); the driver writes one enum value, received as a u32.
    let r = unsafe {
        ds::cuStreamIsCapturing(
            stream,
            &mut status as *mut u32 as *mut ds::CUstreamCaptureStatus,
        )
    };
    check(r, "cuStreamIsCapturing")?;
    Ok(status != 0)
}

/// The mangled name of a `CUfunction` or `CUkernel` handle.
pub(crate) fn function_name(handle: ds::CUfunction) -> Result<String> {
    let mut name: *const c_char = std::ptr::null();
    // SAFETY: queries a handle the application passed to the driver; writes one pointer.
    let mut r = unsafe { ds::cuFuncGetName(&mut name, handle) };
    if r == ds::CUresult::CUDA_ERROR_INVALID_HANDLE {
        // SAFETY: as above, for a CUkernel.
        r = unsafe { ds::cuKernelGetName(&mut name, handle as ds::CUkernel) };
    }
    check(r, "cuFuncGetName")?;
    if name.is_null() {
        return Ok(String::new());
    }
    // SAFETY: a NUL-terminated name owned by the driver, valid while the module is loaded.
    Ok(unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned())
}

/// A `CUfunction` or `CUkernel` handle as a loaded function of the current context, and the
/// module ids loaded while resolving it (see [`LaunchCall::function`]).
pub(crate) fn resolve_function(handle: ds::CUfunction) -> Result<(KernelFunction, Vec<u32>)> {
    LOADED_HERE.with(|l| l.borrow_mut().clear());
    let mut name: *const c_char = std::ptr::null();
    // SAFETY: queries a handle the application passed to the driver; writes one pointer.
    let r = unsafe { ds::cuFuncGetName(&mut name, handle) };
    let f = if r == ds::CUresult::CUDA_ERROR_INVALID_HANDLE {
        let mut f: ds::CUfunction = std::ptr::null_mut();
        // SAFETY: the handle is a CUkernel (cuFunc* refused it); the driver writes the
        // function of the current context.
        let r = unsafe { ds::cuKernelGetFunction(&mut f, handle as ds::CUkernel) };
        check(r, "cuKernelGetFunction")?;
        f
    } else {
        check(r, "cuFuncGetName")?;
        // SAFETY: a CUfunction of the current context; loading is a no-op when loaded.
        check(unsafe { ds::cuFuncLoad(handle) }, "cuFuncLoad")?;
        handle
    };
    let loaded = LOADED_HERE.with(|l| std::mem::take(&mut *l.borrow_mut()));
    Ok((KernelFunction { raw: f }, loaded))
}

/// Copy a launch's parameters into one buffer in device layout, from `kernelParams` (one
/// pointer per parameter) or from the `extra` list's buffer.
///
/// # Safety
/// `kernel_params` and `extra` are a launch's (or a graph kernel node's) own, valid for the
/// call: `kernel_params`, when not null, holds one pointer per entry of `layout`, each to at
/// least that parameter's size; `extra`, when not null, is a key/value list ended by
/// `CU_LAUNCH_PARAM_END`.
pub(crate) unsafe fn copy_params(
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    layout: &[(usize, usize)],
) -> Result<Vec<u8>> {
    let size = layout.iter().map(|&(o, s)| o + s).max().unwrap_or(0);
    if size > MAX_PARAM_BYTES {
        return Err(
            CudaError::new("cuFuncGetParamInfo", ds::CUresult::CUDA_ERROR_INVALID_VALUE)
                .context(format!("a {size}-byte parameter buffer")),
        );
    }
    let mut buf = vec![0u8; size];
    if !kernel_params.is_null() {
        for (i, &(off, len)) in layout.iter().enumerate() {
            // SAFETY: the caller's contract: one pointer per parameter, each to `len` bytes.
            unsafe {
                let p = *kernel_params.add(i) as *const u8;
                if p.is_null() {
                    continue;
                }
                std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr().add(off), len);
            }
        }
        return Ok(buf);
    }
    if !extra.is_null() {
        let (mut data, mut data_len): (*const u8, usize) = (std::ptr::null(), 0);
        // The `extra` list is (key, value) pairs ended by CU_LAUNCH_PARAM_END; a bounded walk.
        for pair in 0..16 {
            // SAFETY: the caller's contract: a list ended by CU_LAUNCH_PARAM_END (0); we stop
            // there or after 16 pairs.
            let (key, value) = unsafe { (*extra.add(2 * pair) as usize, *extra.add(2 * pair + 1)) };
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

/// Launch attributes as the replay knows them: cluster dimensions and cooperative launch.
///
/// # Safety
/// `attrs` points to `n` launch attributes valid for the call (a `CUlaunchConfig`'s or a graph
/// kernel node's).
pub(crate) unsafe fn read_attributes(
    attrs: *const ds::CUlaunchAttribute,
    n: usize,
) -> (Option<[u32; 3]>, bool) {
    let (mut cluster, mut cooperative) = (None, false);
    if attrs.is_null() {
        return (cluster, cooperative);
    }
    for i in 0..n.min(64) {
        // SAFETY: the caller's contract; the id is a C enum read as the u32 it is, the value a
        // union read through the member the id names.
        unsafe {
            let a = attrs.add(i);
            let value = std::ptr::addr_of!((*a).value) as *const u32;
            match *(a as *const u32) {
                ATTR_CLUSTER_DIMENSION => cluster = Some([*value, *value.add(1), *value.add(2)]),
                ATTR_COOPERATIVE => cooperative = *(value as *const i32) != 0,
                _ => {}
            }
        }
    }
    (cluster, cooperative)
}

/// Decode one launch's parameters from CUPTI's callback data.
///
/// # Safety
/// `d` is CUPTI's callback data for the launch callback `id`, valid during the callback.
pub(super) unsafe fn from_cupti<'a>(
    id: u32,
    d: &'a cs::CUpti_CallbackData,
) -> Option<LaunchCall<'a>> {
    if d.correlationData.is_null() {
        return None;
    }
    // SAFETY: CUPTI's per-call slot, valid from enter to exit of this call.
    let correlation = unsafe { &mut *d.correlationData };
    let p = d.functionParams;
    // SAFETY: `p` is the params struct of this launch call (CUPTI's generated_cuda_meta.h).
    let mut call = unsafe {
        match id {
            cbid::LAUNCH | cbid::LAUNCH_PTSZ => {
                let q = &*(p as *const cs::cuLaunchKernel_params);
                let mut c = LaunchCall::new(
                    LaunchKind::Plain,
                    q.f,
                    [q.gridDimX, q.gridDimY, q.gridDimZ],
                    [q.blockDimX, q.blockDimY, q.blockDimZ],
                    q.sharedMemBytes,
                    q.hStream,
                    q.kernelParams,
                    q.extra,
                    correlation,
                );
                c.symbol_name = d.symbolName;
                c
            }
            cbid::LAUNCH_COOPERATIVE | cbid::LAUNCH_COOPERATIVE_PTSZ => {
                let q = &*(p as *const cs::cuLaunchCooperativeKernel_params);
                LaunchCall::new(
                    LaunchKind::Cooperative,
                    q.f,
                    [q.gridDimX, q.gridDimY, q.gridDimZ],
                    [q.blockDimX, q.blockDimY, q.blockDimZ],
                    q.sharedMemBytes,
                    q.hStream,
                    q.kernelParams,
                    std::ptr::null_mut(),
                    correlation,
                )
            }
            _ => {
                let q = &*(p as *const cs::cuLaunchKernelEx_params);
                if q.config.is_null() {
                    return None;
                }
                LaunchCall::from_config(&*q.config, q.f, q.kernelParams, q.extra, correlation)
            }
        }
    };
    call.context = d.context as u64;
    call.per_thread = matches!(
        id,
        cbid::LAUNCH_PTSZ | cbid::LAUNCH_EX_PTSZ | cbid::LAUNCH_COOPERATIVE_PTSZ
    );
    if call.symbol_name.is_null() {
        call.symbol_name = d.symbolName;
    }
    Some(call)
}
