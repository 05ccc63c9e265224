//! The decoding of the driver calls that allocate or free memory kernels can use (device,
//! pitched, managed, stream-ordered, mapped, and page-locked host memory at its device
//! address), for `cupti::on_call`.

use cudarc::cupti::sys as cs;
use cudarc::driver::sys as ds;
use std::ffi::c_void;

use super::cbid;
use super::driver_call::DriverCall;
use super::observer::{AllocKind, Allocation, Observer};

/// The device address of page-locked host memory at host address `p` (the same address under
/// unified addressing), if the driver knows it.
fn host_device_address(p: *mut c_void) -> Option<u64> {
    let mut d: ds::CUdeviceptr = 0;
    // SAFETY: the driver looks the host address up (any value) and writes one address.
    let r = unsafe { ds::cuMemHostGetDevicePointer_v2(&mut d, p, 0) };
    (r == ds::CUresult::CUDA_SUCCESS).then_some(d)
}

/// Decode an allocation or a release of memory for the observer.
///
/// # Safety
/// As `cupti::on_call`: `c.params` points to the parameter struct of call `c.id`, valid
/// during the call; after a successful call, its output pointers were written.
pub(super) unsafe fn on_memory_call(observer: &dyn Observer, c: &DriverCall) {
    let (id, p, context) = (c.id, c.params, c.context);
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
            _ => {}
        }
    }
}
