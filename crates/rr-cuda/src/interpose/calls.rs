//! Every driver call a recorder follows besides launches (memory, modules and libraries,
//! stream capture, graphs, texture and surface objects), through interposed entry points.
//!
//! One table, [`driver_calls!`], names each wrapped symbol with its CUPTI callback id, the
//! CUPTI parameter struct with the same fields, and its C arguments. The wrappers here pack the
//! arguments into that struct and hand it to the same decoder CUPTI's callbacks feed
//! ([`crate::cupti::on_call`]), before and after the real call: one decoding for both ways of
//! seeing the program. The recorder library exports the same table's symbols.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicU32, Ordering};

use super::{ds, watching, Watch, NOT_FOUND};
use crate::cupti::{self, cbid, DriverCall};

/// The wrapped calls: `symbol = CUPTI callback id, parameter struct (C arguments);`, calling
/// `$m!` with the whole list, one entry per symbol. A call with a per-thread default stream form
/// is written once, `symbol = id / symbol_ptsz = id_ptsz, …`: both take the same arguments. The
/// parameter structs are CUPTI's (`cudarc::cupti::sys`) or, for calls with an enum argument,
/// [`params`]' own (an enum value unknown to the bindings must not become an invalid Rust enum).
#[macro_export]
macro_rules! driver_calls {
    ($m:ident) => {
        $crate::driver_calls! { @flat $m []
            cuMemAlloc_v2 = MEM_ALLOC, cuMemAlloc_v2_params
                (dptr: *mut $crate::interpose::ds::CUdeviceptr, bytesize: usize);
            cuMemAllocPitch_v2 = MEM_ALLOC_PITCH, cuMemAllocPitch_v2_params
                (dptr: *mut $crate::interpose::ds::CUdeviceptr, pPitch: *mut usize,
                 WidthInBytes: usize, Height: usize, ElementSizeBytes: ::core::ffi::c_uint);
            cuMemAllocManaged = MEM_ALLOC_MANAGED, cuMemAllocManaged_params
                (dptr: *mut $crate::interpose::ds::CUdeviceptr, bytesize: usize,
                 flags: ::core::ffi::c_uint);
            cuMemAllocAsync = MEM_ALLOC_ASYNC
                / cuMemAllocAsync_ptsz = MEM_ALLOC_ASYNC_PTSZ, cuMemAllocAsync_params
                (dptr: *mut $crate::interpose::ds::CUdeviceptr, bytesize: usize,
                 hStream: $crate::interpose::ds::CUstream);
            cuMemAllocFromPoolAsync = MEM_ALLOC_FROM_POOL_ASYNC
                / cuMemAllocFromPoolAsync_ptsz = MEM_ALLOC_FROM_POOL_ASYNC_PTSZ,
                  cuMemAllocFromPoolAsync_params
                (dptr: *mut $crate::interpose::ds::CUdeviceptr, bytesize: usize,
                 pool: $crate::interpose::ds::CUmemoryPool,
                 hStream: $crate::interpose::ds::CUstream);
            cuMemMap = MEM_MAP, cuMemMap_params
                (ptr: $crate::interpose::ds::CUdeviceptr, size: usize, offset: usize,
                 handle: $crate::interpose::ds::CUmemGenericAllocationHandle,
                 flags: ::core::ffi::c_ulonglong);
            cuMemHostAlloc = MEM_HOST_ALLOC, cuMemHostAlloc_params
                (pp: *mut *mut ::core::ffi::c_void, bytesize: usize, Flags: ::core::ffi::c_uint);
            cuMemAllocHost_v2 = MEM_ALLOC_HOST_V2, cuMemAllocHost_v2_params
                (pp: *mut *mut ::core::ffi::c_void, bytesize: usize);
            cuMemHostRegister = MEM_HOST_REGISTER, cuMemHostRegister_params
                (p: *mut ::core::ffi::c_void, bytesize: usize, Flags: ::core::ffi::c_uint);
            cuMemHostRegister_v2 = MEM_HOST_REGISTER_V2, cuMemHostRegister_v2_params
                (p: *mut ::core::ffi::c_void, bytesize: usize, Flags: ::core::ffi::c_uint);
            cuMemFreeHost = MEM_FREE_HOST, cuMemFreeHost_params
                (p: *mut ::core::ffi::c_void);
            cuMemHostUnregister = MEM_HOST_UNREGISTER, cuMemHostUnregister_params
                (p: *mut ::core::ffi::c_void);
            cuMemFree_v2 = MEM_FREE, cuMemFree_v2_params
                (dptr: $crate::interpose::ds::CUdeviceptr);
            cuMemFreeAsync = MEM_FREE_ASYNC
                / cuMemFreeAsync_ptsz = MEM_FREE_ASYNC_PTSZ, cuMemFreeAsync_params
                (dptr: $crate::interpose::ds::CUdeviceptr,
                 hStream: $crate::interpose::ds::CUstream);
            cuMemUnmap = MEM_UNMAP, cuMemUnmap_params
                (ptr: $crate::interpose::ds::CUdeviceptr, size: usize);
            cuStreamDestroy_v2 = STREAM_DESTROY_V2, cuStreamDestroy_v2_params
                (hStream: $crate::interpose::ds::CUstream);
            cuCtxDestroy_v2 = CTX_DESTROY_V2, cuCtxDestroy_v2_params
                (ctx: $crate::interpose::ds::CUcontext);
            cuDevicePrimaryCtxRelease_v2 = DEVICE_PRIMARY_CTX_RELEASE_V2,
                cuDevicePrimaryCtxRelease_v2_params (dev: $crate::interpose::ds::CUdevice);
            cuDevicePrimaryCtxReset_v2 = DEVICE_PRIMARY_CTX_RESET_V2,
                cuDevicePrimaryCtxReset_v2_params (dev: $crate::interpose::ds::CUdevice);
            cuStreamBeginCapture_v2 = STREAM_BEGIN_CAPTURE_V2
                / cuStreamBeginCapture_v2_ptsz = STREAM_BEGIN_CAPTURE_V2_PTSZ, BeginCapture
                (hStream: $crate::interpose::ds::CUstream, mode: ::core::ffi::c_uint);
            cuStreamBeginCaptureToGraph = STREAM_BEGIN_CAPTURE_TO_GRAPH
                / cuStreamBeginCaptureToGraph_ptsz = STREAM_BEGIN_CAPTURE_TO_GRAPH_PTSZ,
                  BeginCaptureToGraph
                (hStream: $crate::interpose::ds::CUstream, hGraph: $crate::interpose::ds::CUgraph,
                 dependencies: *const $crate::interpose::ds::CUgraphNode,
                 dependencyData: *const ::core::ffi::c_void, numDependencies: usize,
                 mode: ::core::ffi::c_uint);
            cuStreamEndCapture = STREAM_END_CAPTURE
                / cuStreamEndCapture_ptsz = STREAM_END_CAPTURE_PTSZ, cuStreamEndCapture_params
                (hStream: $crate::interpose::ds::CUstream,
                 phGraph: *mut $crate::interpose::ds::CUgraph);
            cuGraphInstantiate = GRAPH_INSTANTIATE, cuGraphInstantiate_params
                (phGraphExec: *mut $crate::interpose::ds::CUgraphExec,
                 hGraph: $crate::interpose::ds::CUgraph,
                 phErrorNode: *mut $crate::interpose::ds::CUgraphNode,
                 logBuffer: *mut ::core::ffi::c_char, bufferSize: usize);
            cuGraphInstantiate_v2 = GRAPH_INSTANTIATE_V2, cuGraphInstantiate_v2_params
                (phGraphExec: *mut $crate::interpose::ds::CUgraphExec,
                 hGraph: $crate::interpose::ds::CUgraph,
                 phErrorNode: *mut $crate::interpose::ds::CUgraphNode,
                 logBuffer: *mut ::core::ffi::c_char, bufferSize: usize);
            cuGraphInstantiateWithFlags = GRAPH_INSTANTIATE_WITH_FLAGS,
                cuGraphInstantiateWithFlags_params
                (phGraphExec: *mut $crate::interpose::ds::CUgraphExec,
                 hGraph: $crate::interpose::ds::CUgraph, flags: ::core::ffi::c_ulonglong);
            cuGraphInstantiateWithParams = GRAPH_INSTANTIATE_WITH_PARAMS
                / cuGraphInstantiateWithParams_ptsz = GRAPH_INSTANTIATE_WITH_PARAMS_PTSZ,
                  cuGraphInstantiateWithParams_params
                (phGraphExec: *mut $crate::interpose::ds::CUgraphExec,
                 hGraph: $crate::interpose::ds::CUgraph,
                 instantiateParams: *mut $crate::interpose::ds::CUDA_GRAPH_INSTANTIATE_PARAMS);
            cuGraphExecDestroy = GRAPH_EXEC_DESTROY, cuGraphExecDestroy_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec);
            cuGraphLaunch = GRAPH_LAUNCH
                / cuGraphLaunch_ptsz = GRAPH_LAUNCH_PTSZ, cuGraphLaunch_params
                (hGraph: $crate::interpose::ds::CUgraphExec,
                 hStream: $crate::interpose::ds::CUstream);
            cuGraphExecKernelNodeSetParams = GRAPH_EXEC_KERNEL_NODE_SET_PARAMS,
                cuGraphExecKernelNodeSetParams_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 nodeParams: *const $crate::interpose::ds::CUDA_KERNEL_NODE_PARAMS_v1);
            cuGraphExecKernelNodeSetParams_v2 = GRAPH_EXEC_KERNEL_NODE_SET_PARAMS_V2,
                cuGraphExecKernelNodeSetParams_v2_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 nodeParams: *const $crate::interpose::ds::CUDA_KERNEL_NODE_PARAMS_v2);
            cuGraphExecNodeSetParams = GRAPH_EXEC_NODE_SET_PARAMS, cuGraphExecNodeSetParams_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 nodeParams: *mut $crate::interpose::ds::CUgraphNodeParams);
            cuGraphExecUpdate = GRAPH_EXEC_UPDATE, cuGraphExecUpdate_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hGraph: $crate::interpose::ds::CUgraph,
                 hErrorNode_out: *mut $crate::interpose::ds::CUgraphNode,
                 updateResult_out: *mut $crate::interpose::ds::CUgraphExecUpdateResult);
            cuGraphExecUpdate_v2 = GRAPH_EXEC_UPDATE_V2, cuGraphExecUpdate_v2_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hGraph: $crate::interpose::ds::CUgraph,
                 resultInfo: *mut $crate::interpose::ds::CUgraphExecUpdateResultInfo);
            cuGraphExecMemsetNodeSetParams = GRAPH_EXEC_MEMSET_NODE_SET_PARAMS,
                cuGraphExecMemsetNodeSetParams_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 memsetParams: *const $crate::interpose::ds::CUDA_MEMSET_NODE_PARAMS,
                 ctx: $crate::interpose::ds::CUcontext);
            cuGraphExecMemcpyNodeSetParams = GRAPH_EXEC_MEMCPY_NODE_SET_PARAMS,
                cuGraphExecMemcpyNodeSetParams_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 copyParams: *const $crate::interpose::ds::CUDA_MEMCPY3D,
                 ctx: $crate::interpose::ds::CUcontext);
            cuGraphExecHostNodeSetParams = GRAPH_EXEC_HOST_NODE_SET_PARAMS,
                cuGraphExecHostNodeSetParams_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 nodeParams: *const $crate::interpose::ds::CUDA_HOST_NODE_PARAMS);
            cuGraphExecChildGraphNodeSetParams = GRAPH_EXEC_CHILD_GRAPH_NODE_SET_PARAMS,
                cuGraphExecChildGraphNodeSetParams_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 childGraph: $crate::interpose::ds::CUgraph);
            cuGraphExecEventRecordNodeSetEvent = GRAPH_EXEC_EVENT_RECORD_NODE_SET_EVENT,
                cuGraphExecEventRecordNodeSetEvent_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 event: $crate::interpose::ds::CUevent);
            cuGraphExecEventWaitNodeSetEvent = GRAPH_EXEC_EVENT_WAIT_NODE_SET_EVENT,
                cuGraphExecEventWaitNodeSetEvent_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode,
                 event: $crate::interpose::ds::CUevent);
            cuGraphNodeSetEnabled = GRAPH_NODE_SET_ENABLED, cuGraphNodeSetEnabled_params
                (hGraphExec: $crate::interpose::ds::CUgraphExec,
                 hNode: $crate::interpose::ds::CUgraphNode, isEnabled: ::core::ffi::c_uint);
            cuTexObjectCreate = TEX_OBJECT_CREATE, cuTexObjectCreate_params
                (pTexObject: *mut $crate::interpose::ds::CUtexObject,
                 pResDesc: *const $crate::interpose::ds::CUDA_RESOURCE_DESC,
                 pTexDesc: *const $crate::interpose::ds::CUDA_TEXTURE_DESC,
                 pResViewDesc: *const $crate::interpose::ds::CUDA_RESOURCE_VIEW_DESC);
            cuTexObjectDestroy = TEX_OBJECT_DESTROY, cuTexObjectDestroy_params
                (texObject: $crate::interpose::ds::CUtexObject);
            cuSurfObjectCreate = SURF_OBJECT_CREATE, cuSurfObjectCreate_params
                (pSurfObject: *mut $crate::interpose::ds::CUsurfObject,
                 pResDesc: *const $crate::interpose::ds::CUDA_RESOURCE_DESC);
            cuSurfObjectDestroy = SURF_OBJECT_DESTROY, cuSurfObjectDestroy_params
                (surfObject: $crate::interpose::ds::CUsurfObject);
            cuModuleLoad = MODULE_LOAD, cuModuleLoad_params
                (module: *mut $crate::interpose::ds::CUmodule, fname: *const ::core::ffi::c_char);
            cuModuleLoadData = MODULE_LOAD_DATA, cuModuleLoadData_params
                (module: *mut $crate::interpose::ds::CUmodule, image: *const ::core::ffi::c_void);
            cuModuleLoadDataEx = MODULE_LOAD_DATA_EX, cuModuleLoadDataEx_params
                (module: *mut $crate::interpose::ds::CUmodule, image: *const ::core::ffi::c_void,
                 numOptions: ::core::ffi::c_uint,
                 options: *mut $crate::interpose::ds::CUjit_option,
                 optionValues: *mut *mut ::core::ffi::c_void);
            cuModuleLoadFatBinary = MODULE_LOAD_FAT_BINARY, cuModuleLoadFatBinary_params
                (module: *mut $crate::interpose::ds::CUmodule,
                 fatCubin: *const ::core::ffi::c_void);
            cuModuleUnload = MODULE_UNLOAD, cuModuleUnload_params
                (hmod: $crate::interpose::ds::CUmodule);
            cuLibraryLoadData = LIBRARY_LOAD_DATA, cuLibraryLoadData_params
                (library: *mut $crate::interpose::ds::CUlibrary, code: *const ::core::ffi::c_void,
                 jitOptions: *mut $crate::interpose::ds::CUjit_option,
                 jitOptionsValues: *mut *mut ::core::ffi::c_void,
                 numJitOptions: ::core::ffi::c_uint,
                 libraryOptions: *mut $crate::interpose::ds::CUlibraryOption,
                 libraryOptionValues: *mut *mut ::core::ffi::c_void,
                 numLibraryOptions: ::core::ffi::c_uint);
            cuLibraryLoadFromFile = LIBRARY_LOAD_FROM_FILE, cuLibraryLoadFromFile_params
                (library: *mut $crate::interpose::ds::CUlibrary,
                 fileName: *const ::core::ffi::c_char,
                 jitOptions: *mut $crate::interpose::ds::CUjit_option,
                 jitOptionsValues: *mut *mut ::core::ffi::c_void,
                 numJitOptions: ::core::ffi::c_uint,
                 libraryOptions: *mut $crate::interpose::ds::CUlibraryOption,
                 libraryOptionValues: *mut *mut ::core::ffi::c_void,
                 numLibraryOptions: ::core::ffi::c_uint);
            cuLibraryUnload = LIBRARY_UNLOAD, cuLibraryUnload_params
                (library: $crate::interpose::ds::CUlibrary);
        }
    };
    // One entry per symbol (the `_ptsz` form of a pair gets the same parameters).
    (@flat $m:ident [$($done:tt)*]
     $a:ident = $ida:ident / $b:ident = $idb:ident, $p:ident $args:tt; $($rest:tt)*) => {
        $crate::driver_calls! { @flat $m [$($done)* $a = $ida, $p $args; $b = $idb, $p $args;]
                                $($rest)* }
    };
    (@flat $m:ident [$($done:tt)*] $a:ident = $ida:ident, $p:ident $args:tt; $($rest:tt)*) => {
        $crate::driver_calls! { @flat $m [$($done)* $a = $ida, $p $args;] $($rest)* }
    };
    (@flat $m:ident [$($done:tt)*]) => {
        $m! { $($done)* }
    };
}

/// Parameter structs for calls whose CUPTI struct holds an enum (the mode is passed on as the
/// integer the program gave; the decoder reads only the leading fields).
#[allow(non_snake_case, non_camel_case_types)]
mod params {
    pub use cudarc::cupti::sys::*;
    use std::ffi::{c_uint, c_void};

    use super::ds;

    #[repr(C)]
    pub struct BeginCapture {
        pub hStream: ds::CUstream,
        pub mode: c_uint,
    }

    #[repr(C)]
    pub struct BeginCaptureToGraph {
        pub hStream: ds::CUstream,
        pub hGraph: ds::CUgraph,
        pub dependencies: *const ds::CUgraphNode,
        pub dependencyData: *const c_void,
        pub numDependencies: usize,
        pub mode: c_uint,
    }
}

macro_rules! define_wrappers {
    ($($name:ident = $id:ident, $params:ident ($($arg:ident : $ty:ty),* $(,)?);)*) => {
        super::wrapper_table!(CALLS, $($name => $name),*);

        $(
            /// The wrapped driver function of this name: the real call, seen by the observer
            /// before and after.
            ///
            /// # Safety
            /// The driver's contract for the function of this name.
            #[allow(non_snake_case, clippy::too_many_arguments)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> u32 {
                type Real = unsafe extern "C" fn($($ty),*) -> u32;
                // SAFETY: the slot holds the driver's function of this name, whose C signature
                // this is.
                let Some(real) = (unsafe { CALLS.real_as::<Real>(Slot::$name as usize) }) else {
                    return NOT_FOUND;
                };
                let mut p = params::$params { $($arg),* };
                let call = |q: *mut c_void| {
                    // SAFETY: `q` is `p`, possibly changed by the observer before the call (a
                    // graph launch's executable); its fields are the caller's arguments.
                    unsafe {
                        let q = &*(q as *const params::$params);
                        real($(q.$arg),*)
                    }
                };
                observed(cbid::$id, &mut p as *mut params::$params as *mut c_void, call)
            }
        )*
    };
}

driver_calls!(define_wrappers);

/// Names whose symbol depends on the version `cuGetProcAddress` is asked for: (name, from
/// version, symbol), newest first per name (cudaTypedefs.h's `PFN_…_v<version>` types).
const VERSIONED: &[(&[u8], i32, &[u8])] = &[
    (b"cuMemAlloc", 3020, b"cuMemAlloc_v2"),
    (b"cuStreamDestroy", 4000, b"cuStreamDestroy_v2"),
    (b"cuCtxDestroy", 4000, b"cuCtxDestroy_v2"),
    (
        b"cuDevicePrimaryCtxRelease",
        11000,
        b"cuDevicePrimaryCtxRelease_v2",
    ),
    (
        b"cuDevicePrimaryCtxReset",
        11000,
        b"cuDevicePrimaryCtxReset_v2",
    ),
    (b"cuMemAllocPitch", 3020, b"cuMemAllocPitch_v2"),
    (b"cuMemFree", 3020, b"cuMemFree_v2"),
    (b"cuMemAllocHost", 3020, b"cuMemAllocHost_v2"),
    (b"cuMemHostRegister", 6050, b"cuMemHostRegister_v2"),
    (b"cuMemHostRegister", 4000, b"cuMemHostRegister"),
    (b"cuStreamBeginCapture", 10010, b"cuStreamBeginCapture_v2"),
    (b"cuGraphInstantiate", 12000, b"cuGraphInstantiateWithFlags"),
    (b"cuGraphInstantiate", 11000, b"cuGraphInstantiate_v2"),
    (b"cuGraphInstantiate", 10000, b"cuGraphInstantiate"),
    (
        b"cuGraphExecKernelNodeSetParams",
        12000,
        b"cuGraphExecKernelNodeSetParams_v2",
    ),
    (
        b"cuGraphExecKernelNodeSetParams",
        10010,
        b"cuGraphExecKernelNodeSetParams",
    ),
    (b"cuGraphExecUpdate", 12000, b"cuGraphExecUpdate_v2"),
    (b"cuGraphExecUpdate", 10020, b"cuGraphExecUpdate"),
];

/// The wrapped symbol `cuGetProcAddress(name, version, flags)` returns, if it is one of ours.
pub(super) fn proc_index(name: &[u8], version: i32, ptds: bool) -> Option<usize> {
    let mut versions = VERSIONED.iter().filter(|v| v.0 == name).peekable();
    let symbol = match versions.peek() {
        // An older ABI than any wrapped here: left alone.
        Some(_) => versions.find(|v| version >= v.1)?.2,
        None => name,
    };
    if ptds {
        let mut ptsz = symbol.to_vec();
        ptsz.extend_from_slice(b"_ptsz");
        if let Some(i) = CALLS.index(&ptsz) {
            return Some(i);
        }
    }
    CALLS.index(symbol)
}

/// Module ids given to images loaded through the wrappers (CUPTI's ids are not used then).
static NEXT_MODULE_ID: AtomicU32 = AtomicU32::new(1);

/// One call through the observer: the decoder before it, the real call, the decoder after it.
fn observed(id: u32, params: *mut c_void, real: impl FnOnce(*mut c_void) -> u32) -> u32 {
    if !watching(Watch::Everything) {
        return real(params);
    }
    let Some(obs) = cupti::observer() else {
        return real(params);
    };
    if cupti::inside_observer() {
        // The recorder's own call. Its check that a graph launch can be swapped is the one
        // change it makes to its own calls.
        cupti::swap_armed(id, params);
        return real(params);
    }
    // Inside `observe`: a panic of the driver bindings must not cross into the program.
    let context = cupti::observe(|| cupti::current_context().unwrap_or(0)).unwrap_or(0);
    let mut call = DriverCall {
        id,
        params,
        context,
        result: None,
    };
    // SAFETY: `params` is the parameter struct of call `id`, valid for this call.
    cupti::observe(|| unsafe { cupti::on_call(obs, &call) });
    let result = real(params);
    call.result = Some(result);
    cupti::observe(|| {
        if result == 0 {
            // SAFETY: as above; the call succeeded, so its output pointers were written.
            unsafe { loaded_image(obs, id, params) };
        }
        // SAFETY: as above.
        unsafe { cupti::on_call(obs, &call) }
    });
    result
}

/// A module or library load succeeded: hand its image to the observer (CUPTI's resource
/// callback does this when CUPTI is subscribed), as the one module loaded during the call.
///
/// # Safety
/// `params` is the parameter struct of call `id`, which succeeded.
unsafe fn loaded_image(obs: &dyn cupti::Observer, id: u32, params: *mut c_void) {
    let from_file = match id {
        cbid::MODULE_LOAD | cbid::LIBRARY_LOAD_FROM_FILE => true,
        cbid::MODULE_LOAD_DATA
        | cbid::MODULE_LOAD_DATA_EX
        | cbid::MODULE_LOAD_FAT_BINARY
        | cbid::LIBRARY_LOAD_DATA => false,
        _ => return,
    };
    // SAFETY: every load's params start with its output handle pointer, then the image (or
    // file name) pointer.
    let source = unsafe { *(params as *const *const c_void).add(1) };
    let bytes = if from_file {
        // SAFETY: a NUL-terminated path (the driver just opened it).
        file_image(unsafe { CStr::from_ptr(source as *const c_char) })
    } else {
        // SAFETY: the image the driver just loaded from this pointer.
        unsafe { super::image::at(source) }
    };
    let Some(bytes) = bytes else {
        return;
    };
    let module_id = NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed);
    cupti::note_loaded(module_id);
    obs.module_loaded(module_id, &bytes);
}

/// The image file a module or library was loaded from (size-checked as every image file).
fn file_image(path: &CStr) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
    rr_format::image::read(path).ok().map(|(bytes, _)| bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_by_version_find_the_symbol_of_that_abi() {
        let name = |i: Option<usize>| i.map(|i| CALLS.names[i].to_str().unwrap());
        // (name asked for, version, per-thread default stream, symbol handed out)
        for (asked, version, ptds, symbol) in [
            (&b"cuMemAlloc"[..], 12080, false, Some("cuMemAlloc_v2")),
            (b"cuMemAlloc", 2000, false, None), // 32-bit sizes: not wrapped
            (
                b"cuGraphInstantiate",
                12000,
                false,
                Some("cuGraphInstantiateWithFlags"),
            ),
            (
                b"cuGraphInstantiate",
                11040,
                false,
                Some("cuGraphInstantiate_v2"),
            ),
            (
                b"cuGraphExecUpdate",
                11000,
                false,
                Some("cuGraphExecUpdate"),
            ),
            (
                b"cuStreamBeginCapture",
                12000,
                true,
                Some("cuStreamBeginCapture_v2_ptsz"),
            ),
            (b"cuMemFreeAsync", 12000, true, Some("cuMemFreeAsync_ptsz")),
            // Per-thread lookups of functions without a stream keep their one symbol.
            (b"cuMemFree", 12000, true, Some("cuMemFree_v2")),
            (
                b"cuLibraryLoadData",
                12000,
                false,
                Some("cuLibraryLoadData"),
            ),
            (b"cuCtxCreate", 12000, false, None),
        ] {
            assert_eq!(
                name(proc_index(asked, version, ptds)),
                symbol,
                "{} at {version}",
                String::from_utf8_lossy(asked)
            );
        }
    }

    #[test]
    fn every_wrapped_name_is_unique_and_a_driver_symbol() {
        for (i, n) in NAMES.iter().enumerate() {
            assert!(n.to_bytes().starts_with(b"cu"));
            assert_eq!(CALLS.index(n.to_bytes()), Some(i), "{n:?} twice");
        }
    }
}
