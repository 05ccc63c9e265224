//! Page-locked host memory at recorded addresses: what a kernel read through a pointer into
//! `cuMemHostAlloc`, `cuMemAllocHost` or `cuMemHostRegister` memory when it was recorded.
//!
//! Under unified addressing such memory is reached by the device at its host address. A replay
//! maps anonymous memory at exactly the recorded address (over its own placeholder, or where
//! nothing is mapped), registers it with the driver (`DEVICEMAP | PORTABLE`) and checks that the
//! device address is the host address (measured on the GPU machine: it is). Reads and writes go
//! through the host mapping, checked to stay inside it.

use cudarc::driver::sys;

use crate::error::{check, teardown, CudaError, Result};
use crate::vmm::{Placeholders, Range, ReserveError};

/// `CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP`.
const REGISTER_FLAGS: u32 = 0x01 | 0x02;

pub struct HostMemory {
    /// Sorted by address, disjoint; each mapped by us and registered.
    ranges: Vec<Range>,
}

impl HostMemory {
    /// Map and register `ranges` (page-aligned, disjoint). Needs a current context.
    pub fn map(
        ranges: &[Range],
        placeholders: &mut Placeholders,
    ) -> std::result::Result<HostMemory, ReserveError> {
        let mut mem = HostMemory { ranges: Vec::new() };
        let mut sorted = ranges.to_vec();
        sorted.sort_by_key(|r| r.addr);
        for r in sorted {
            let Ok(len) = usize::try_from(r.size) else {
                return Err(ReserveError::AddressInUse(format!(
                    "host range {:#x}+{:#x} is too large",
                    r.addr, r.size
                )));
            };
            let ours = placeholders.take_host(r);
            let flags = libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | if ours {
                    // Over our own placeholder, which no one else may have touched.
                    libc::MAP_FIXED
                } else {
                    libc::MAP_FIXED_NOREPLACE
                };
            // SAFETY: either replaces the PROT_NONE placeholder this process mapped at exactly
            // this range (handed over by `take_host`), or maps only where nothing is mapped.
            let p = unsafe {
                libc::mmap(
                    r.addr as *mut libc::c_void,
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    flags,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED || p as u64 != r.addr {
                if p != libc::MAP_FAILED {
                    // SAFETY: the mapping just made elsewhere (an old kernel ignored the flag).
                    unsafe { libc::munmap(p, len) };
                }
                return Err(ReserveError::AddressInUse(format!(
                    "could not map recorded host memory at {:#x} ({} bytes): the range is in use in this process",
                    r.addr, r.size
                )));
            }
            // SAFETY: registers the mapping just made, of exactly this size.
            let res = unsafe { sys::cuMemHostRegister_v2(p, len, REGISTER_FLAGS) };
            if let Err(e) = check(res, "cuMemHostRegister") {
                // SAFETY: unmapping our own mapping, not registered.
                unsafe { libc::munmap(p, len) };
                return Err(ReserveError::Cuda(
                    e.context(format!("registering host memory at {:#x}", r.addr)),
                ));
            }
            mem.ranges.push(r);
            let mut dev: sys::CUdeviceptr = 0;
            // SAFETY: asks for the device address of memory registered just above.
            let res = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, p, 0) };
            check(res, "cuMemHostGetDevicePointer").map_err(ReserveError::Cuda)?;
            if dev != r.addr {
                return Err(ReserveError::Cuda(
                    CudaError::new(
                        "cuMemHostGetDevicePointer",
                        sys::CUresult::CUDA_ERROR_NOT_SUPPORTED,
                    )
                    .context(format!(
                        "registered host memory at {:#x} got device address {dev:#x}: this GPU cannot use host pointers as device pointers, so the recorded address is unreachable",
                        r.addr
                    )),
                ));
            }
        }
        Ok(mem)
    }

    fn range_of(&self, addr: u64, len: usize) -> Result<&Range> {
        let k = self.ranges.partition_point(|r| r.addr <= addr);
        k.checked_sub(1)
            .map(|k| &self.ranges[k])
            .filter(|r| r.contains(addr, len as u64))
            .ok_or_else(|| {
                CudaError::new("memcpy", sys::CUresult::CUDA_ERROR_INVALID_VALUE).context(format!(
                    "{len} bytes at {addr:#x} are not inside the mapped host ranges"
                ))
            })
    }

    /// Write bytes at a recorded host address (no kernel may be running).
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<()> {
        self.range_of(addr, bytes.len())?;
        // SAFETY: the destination lies inside a read-write mapping this object owns; the caller
        // has synchronised, so no kernel writes it concurrently.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len());
        }
        Ok(())
    }

    /// Read bytes at a recorded host address (no kernel may be running).
    pub fn read(&self, addr: u64, dst: &mut [u8]) -> Result<()> {
        self.range_of(addr, dst.len())?;
        // SAFETY: the source lies inside a mapping this object owns.
        unsafe {
            std::ptr::copy_nonoverlapping(addr as *const u8, dst.as_mut_ptr(), dst.len());
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        for r in self.ranges.drain(..) {
            teardown(check(
                // SAFETY: memory we registered, unregistered once.
                unsafe { sys::cuMemHostUnregister(r.addr as *mut libc::c_void) },
                "cuMemHostUnregister",
            ));
            // SAFETY: our own mapping, of exactly this size.
            unsafe { libc::munmap(r.addr as *mut libc::c_void, r.size as usize) };
        }
    }
}
