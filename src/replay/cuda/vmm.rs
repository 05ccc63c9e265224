//! Exact-address device memory: host placeholders, reservations at recorded addresses, and
//! physical memory mapped only where recorded bytes lie (see `replay::plan`).

use cudarc::driver::sys;

use super::check;
use crate::error::{Error, Result};
use crate::replay::plan::{Plan, Range};

/// `PROT_NONE` host mappings over the ranges to reserve, taken at process start so that our own
/// allocations cannot land there; released just before the driver initialises.
pub struct Placeholders {
    held: Vec<(Range, bool)>,
}

impl Placeholders {
    pub fn take(ranges: &[Range]) -> Placeholders {
        let held = ranges
            .iter()
            .map(|r| {
                // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping; the new one is
                // inaccessible (PROT_NONE) and reserves no swap (MAP_NORESERVE).
                let p = unsafe {
                    libc::mmap(
                        r.addr as *mut libc::c_void,
                        r.size as usize,
                        libc::PROT_NONE,
                        libc::MAP_PRIVATE
                            | libc::MAP_ANONYMOUS
                            | libc::MAP_NORESERVE
                            | libc::MAP_FIXED_NOREPLACE,
                        -1,
                        0,
                    )
                };
                let ok = p != libc::MAP_FAILED && p as u64 == r.addr;
                if p != libc::MAP_FAILED && !ok {
                    // An old kernel without MAP_FIXED_NOREPLACE placed it elsewhere: give it back.
                    // SAFETY: `p` is the mapping just created, of that size.
                    unsafe { libc::munmap(p, r.size as usize) };
                }
                (*r, ok)
            })
            .collect();
        Placeholders { held }
    }

    /// Ranges whose placeholder could not be taken because this process already maps
    /// something there (a fresh process, with another layout, may succeed).
    pub fn blocked(&self) -> Vec<Range> {
        self.held
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(r, _)| *r)
            .collect()
    }

    /// Give every placeholder back. Done just before `cuInit` (see `engine::run`): measured on
    /// the GPU machine, ranges still covered while the driver initialises are refused by it even
    /// after they are unmapped.
    pub fn release_all(&mut self) {
        for (r, ok) in self.held.iter_mut() {
            if *ok {
                // SAFETY: this is the placeholder we mapped at exactly this range.
                unsafe { libc::munmap(r.addr as *mut libc::c_void, r.size as usize) };
                *ok = false;
            }
        }
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        self.release_all();
    }
}

/// Reserved and mapped device ranges; unmapped and freed on drop.
pub struct DeviceMemory {
    reservations: Vec<Range>,
    maps: Vec<(Range, sys::CUmemGenericAllocationHandle)>,
}

impl DeviceMemory {
    /// Reserve every planned range at its exact address and back the mappings with memory.
    /// Requires a current context.
    pub fn reserve_and_map(plan: &Plan, device: i32) -> Result<DeviceMemory> {
        let mut mem = DeviceMemory {
            reservations: Vec::new(),
            maps: Vec::new(),
        };
        // SAFETY: a zeroed CUmemAllocationProp is the documented starting point; we set the
        // pinned/device fields the driver requires.
        let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        for r in &plan.reservations {
            let mut got: sys::CUdeviceptr = 0;
            // SAFETY: plain reservation call; `got` receives the address.
            let res = unsafe { sys::cuMemAddressReserve(&mut got, r.size as usize, 0, r.addr, 0) };
            if res != sys::CUresult::CUDA_SUCCESS {
                return Err(Error::AddressInUse(format!(
                    "could not reserve recorded virtual address {:#x} ({} bytes): {} (the range is probably in use)",
                    r.addr,
                    r.size,
                    super::describe(res)
                )));
            }
            if got != r.addr {
                // SAFETY: freeing the reservation the driver just gave us.
                unsafe { sys::cuMemAddressFree(got, r.size as usize) };
                return Err(Error::AddressInUse(format!(
                    "could not reserve recorded virtual address {:#x} ({} bytes): the driver offered {got:#x} instead \
                     (something in the replaying process already uses that range)",
                    r.addr, r.size
                )));
            }
            mem.reservations.push(*r);
        }
        for m in &plan.mappings {
            let mut h: sys::CUmemGenericAllocationHandle = 0;
            // SAFETY: `prop` is fully initialised above; `h` receives the handle.
            let res = unsafe { sys::cuMemCreate(&mut h, m.size as usize, &prop, 0) };
            if res != sys::CUresult::CUDA_SUCCESS {
                let (free, total) = mem_info();
                return Err(Error::Cuda(format!(
                    "not enough device memory to back {} bytes at {:#x}: {} ({} of {} bytes free)",
                    m.size,
                    m.addr,
                    super::describe(res),
                    free,
                    total
                )));
            }
            // SAFETY: the mapping lies inside a reservation we hold (plan invariant) and `h` is a
            // fresh allocation of exactly that size.
            let res = unsafe { sys::cuMemMap(m.addr, m.size as usize, 0, h, 0) };
            if res != sys::CUresult::CUDA_SUCCESS {
                // SAFETY: releasing the handle we just created and failed to map.
                unsafe { sys::cuMemRelease(h) };
                return Err(Error::Cuda(format!(
                    "cuMemMap at {:#x}: {}",
                    m.addr,
                    super::describe(res)
                )));
            }
            mem.maps.push((*m, h));
            let acc = sys::CUmemAccessDesc {
                location: prop.location,
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            // SAFETY: the range was just mapped; one access descriptor.
            check(
                unsafe { sys::cuMemSetAccess(m.addr, m.size as usize, &acc, 1) },
                || format!("cuMemSetAccess at {:#x}", m.addr),
            )?;
        }
        Ok(mem)
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // Teardown order from LLVM's plugin: unmap, release, free the address range. Errors are
        // ignored: after a kernel fault the context is gone and the process is about to exit.
        for (m, h) in self.maps.drain(..) {
            // SAFETY: each pair was mapped by us and is unmapped once.
            unsafe {
                sys::cuMemUnmap(m.addr, m.size as usize);
                sys::cuMemRelease(h);
            }
        }
        for r in self.reservations.drain(..) {
            // SAFETY: each reservation was made by us and is freed once.
            unsafe { sys::cuMemAddressFree(r.addr, r.size as usize) };
        }
    }
}

pub fn mem_info() -> (usize, usize) {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: writes two integers; needs a current context, else returns an error we ignore.
    unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
    (free, total)
}
