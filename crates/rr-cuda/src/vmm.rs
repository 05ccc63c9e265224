//! Exact-address device memory: host placeholders, reservations at recorded addresses, and
//! physical memory mapped only where recorded bytes lie (the engine's `replay::plan` decides).
//!
//! Measured on the GPU machine (cuda-notes.md §7): `cuMemAddressReserve` takes its address as a
//! hint, honoured for reservations of at least 64 MiB at a free 32 MiB-aligned address; and
//! ranges covered by host placeholders while the driver initialises are refused by it even after
//! they are unmapped, so placeholders are released right before `cuInit`.

use cudarc::driver::sys;

use crate::error::{check, teardown, Call, CudaError, Result};
use crate::memory::{self, DeviceBuffer};
use crate::stream::Stream;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Range {
    pub addr: u64,
    pub size: u64,
}

impl Range {
    pub fn end(&self) -> u64 {
        self.addr.saturating_add(self.size)
    }
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr && addr.checked_add(len).is_some_and(|e| e <= self.end())
    }
}

/// `PROT_NONE` host mappings over the ranges to reserve, taken at process start so that our own
/// allocations cannot land there; device ranges are released just before the driver
/// initialises, host ranges (recorded page-locked host memory) stay held until
/// [`crate::HostMemory::map`] puts the real memory in their place.
pub struct Placeholders {
    held: Vec<(Range, bool)>,
    host: Vec<(Range, bool)>,
}

impl Placeholders {
    pub fn take(ranges: &[Range]) -> Placeholders {
        Placeholders::take_with_host(ranges, &[])
    }

    /// Placeholders over device ranges and over host ranges.
    pub fn take_with_host(device: &[Range], host: &[Range]) -> Placeholders {
        Placeholders {
            held: hold(device),
            host: hold(host),
        }
    }

    /// Ranges whose placeholder could not be taken because this process already maps
    /// something there (a fresh process, with another layout, may succeed).
    pub fn blocked(&self) -> Vec<Range> {
        self.held
            .iter()
            .chain(&self.host)
            .filter(|(_, ok)| !ok)
            .map(|(r, _)| *r)
            .collect()
    }

    /// Give every device placeholder back (right before `cuInit`).
    pub fn release_all(&mut self) {
        release(&mut self.held);
    }

    /// Hand the placeholder over host range `r` to the caller, who maps over it (`MAP_FIXED`):
    /// whether this process held it.
    pub(crate) fn take_host(&mut self, r: Range) -> bool {
        match self.host.iter_mut().find(|(h, ok)| *h == r && *ok) {
            Some(entry) => {
                entry.1 = false;
                true
            }
            None => false,
        }
    }
}

fn release(held: &mut [(Range, bool)]) {
    for (r, ok) in held.iter_mut() {
        if *ok {
            // SAFETY: this is the placeholder we mapped at exactly this range.
            unsafe { libc::munmap(r.addr as *mut libc::c_void, r.size as usize) };
            *ok = false;
        }
    }
}

fn hold(ranges: &[Range]) -> Vec<(Range, bool)> {
    ranges
        .iter()
        .map(|r| {
            let Ok(len) = usize::try_from(r.size) else {
                return (*r, false);
            };
            // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping; the new one is
            // inaccessible (PROT_NONE) and reserves no swap (MAP_NORESERVE).
            let p = unsafe {
                libc::mmap(
                    r.addr as *mut libc::c_void,
                    len,
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
                unsafe { libc::munmap(p, len) };
            }
            (*r, ok)
        })
        .collect()
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        release(&mut self.held);
        release(&mut self.host);
    }
}

/// Why recorded addresses could not be had.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReserveError {
    /// The range is taken in this process; a fresh process (another layout) may succeed.
    #[error("{0}")]
    AddressInUse(String),
    #[error("{0}")]
    Cuda(CudaError),
}

/// Device ranges reserved at their exact recorded addresses, with physical memory mapped where
/// recorded bytes lie. Every transfer is checked to stay inside the mappings, so no recorded
/// address can make a copy touch memory that is not ours. Unmapped and freed on drop.
pub struct ExactMemory {
    reservations: Vec<Range>,
    /// Sorted by address, disjoint.
    maps: Vec<(Range, sys::CUmemGenericAllocationHandle)>,
}

impl ExactMemory {
    /// Reserve every range at its exact address and back `mappings` (2 MiB-granular, inside the
    /// reservations) with device memory of `device`. Needs a current context.
    pub fn reserve_and_map(
        reservations: &[Range],
        mappings: &[Range],
        device: i32,
    ) -> std::result::Result<ExactMemory, ReserveError> {
        let mut mem = ExactMemory {
            reservations: Vec::new(),
            maps: Vec::new(),
        };
        // SAFETY: a zeroed CUmemAllocationProp is the documented starting point; the pinned /
        // device fields the driver requires are set below.
        let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        for r in reservations {
            let mut got: sys::CUdeviceptr = 0;
            // SAFETY: plain reservation call; `got` receives the address.
            let res = unsafe { sys::cuMemAddressReserve(&mut got, r.size as usize, 0, r.addr, 0) };
            if let Err(e) = check(res, "cuMemAddressReserve") {
                return Err(ReserveError::AddressInUse(format!(
                    "could not reserve recorded virtual address {:#x} ({} bytes): {e} (the range is probably in use)",
                    r.addr, r.size
                )));
            }
            if got != r.addr {
                teardown(check(
                    // SAFETY: freeing the reservation the driver just gave us.
                    unsafe { sys::cuMemAddressFree(got, r.size as usize) },
                    "cuMemAddressFree",
                ));
                return Err(ReserveError::AddressInUse(format!(
                    "could not reserve recorded virtual address {:#x} ({} bytes): the driver offered {got:#x} instead \
                     (something in the replaying process already uses that range)",
                    r.addr, r.size
                )));
            }
            mem.reservations.push(*r);
        }
        let mut sorted = mappings.to_vec();
        sorted.sort_by_key(|m| m.addr);
        for m in &sorted {
            let mut h: sys::CUmemGenericAllocationHandle = 0;
            // SAFETY: `prop` is fully initialised above; `h` receives the handle.
            let res = unsafe { sys::cuMemCreate(&mut h, m.size as usize, &prop, 0) };
            if let Err(e) = check(res, "cuMemCreate") {
                let (free, total) = cudarc::driver::result::mem_get_info().unwrap_or((0, 0));
                return Err(ReserveError::Cuda(e.context(format!(
                    "not enough device memory to back {} bytes at {:#x} ({free} of {total} bytes free)",
                    m.size, m.addr
                ))));
            }
            // SAFETY: the mapping lies inside a reservation we hold (plan invariant, and the
            // driver refuses otherwise) and `h` is a fresh allocation of exactly that size.
            let res = unsafe { sys::cuMemMap(m.addr, m.size as usize, 0, h, 0) };
            if let Err(e) = check(res, "cuMemMap") {
                // SAFETY: releasing the handle we just created and failed to map.
                teardown(check(unsafe { sys::cuMemRelease(h) }, "cuMemRelease"));
                return Err(ReserveError::Cuda(
                    e.context(format!("mapping {:#x}", m.addr)),
                ));
            }
            mem.maps.push((*m, h));
            let acc = sys::CUmemAccessDesc {
                location: prop.location,
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            check(
                // SAFETY: the range was just mapped; one access descriptor.
                unsafe { sys::cuMemSetAccess(m.addr, m.size as usize, &acc, 1) },
                "cuMemSetAccess",
            )
            .map_err(|e| {
                ReserveError::Cuda(e.context(format!("granting access to {:#x}", m.addr)))
            })?;
        }
        Ok(mem)
    }

    /// Whether `[addr, addr + len)` lies inside one mapping.
    pub fn owns(&self, addr: u64, len: u64) -> bool {
        let k = self.maps.partition_point(|(m, _)| m.addr <= addr);
        k.checked_sub(1)
            .is_some_and(|k| self.maps[k].0.contains(addr, len))
    }

    fn ensure_owned(&self, addr: u64, len: usize, call: &'static str) -> Result<()> {
        if self.owns(addr, len as u64) {
            Ok(())
        } else {
            Err(
                CudaError::new(call, sys::CUresult::CUDA_ERROR_INVALID_VALUE).context(format!(
                    "{len} bytes at {addr:#x} are not inside the mapped recorded ranges"
                )),
            )
        }
    }

    /// Copy host bytes to recorded addresses (chunked, asynchronous), then wait.
    pub fn upload(&self, stream: &Stream, copies: &[(u64, &[u8])]) -> Result<()> {
        for &(addr, bytes) in copies {
            self.ensure_owned(addr, bytes.len(), "cuMemcpyHtoDAsync")?;
        }
        memory::upload_unchecked(stream, copies)
    }

    /// Upload `(address, source offset, length)` ranges from `source` through a few pinned
    /// staging buffers filled by `threads` workers ([`crate::upload`]), then wait.
    pub fn upload_streamed<S: crate::upload::UploadSource>(
        &self,
        stream: &Stream,
        ranges: &[(u64, usize, usize)],
        source: &S,
        threads: usize,
        pool: &mut crate::upload::StagingPool,
        progress: &mut dyn FnMut(u64),
    ) -> std::result::Result<(), crate::upload::UploadError<S::Error>> {
        for &(addr, _, len) in ranges {
            self.ensure_owned(addr, len, "cuMemcpyHtoDAsync")?;
        }
        crate::upload::upload_streamed(stream, ranges, source, threads, pool, progress)
    }

    /// Device-to-device copies `(dst, src, len)` between recorded ranges, then wait.
    pub fn copy_within(&self, stream: &Stream, copies: &[(u64, u64, usize)]) -> Result<()> {
        for &(dst, src, len) in copies {
            self.ensure_owned(dst, len, "cuMemcpyDtoDAsync")?;
            self.ensure_owned(src, len, "cuMemcpyDtoDAsync")?;
        }
        memory::copy_device_unchecked(stream, copies)
    }

    /// Copy host bytes to one recorded range with a single synchronous call (benchmark
    /// reference for the chunked [`ExactMemory::upload`]).
    pub fn upload_single(&self, addr: u64, bytes: &[u8]) -> Result<()> {
        self.ensure_owned(addr, bytes.len(), "cuMemcpyHtoD")?;
        memory::upload_sync_unchecked(addr, bytes)
    }

    /// Fill recorded ranges `(addr, len)` with `value`, asynchronously on `stream` (an A/B
    /// candidate's poison: what it must write is overwritten before it runs). Every range is
    /// checked to be ours before anything is queued.
    pub fn fill(&self, stream: &Stream, ranges: &[(u64, usize)], value: u8) -> Result<()> {
        for &(addr, len) in ranges {
            self.ensure_owned(addr, len, "cuMemsetD8Async")?;
        }
        for &(addr, len) in ranges {
            // SAFETY: the range lies inside one of our mappings (checked above).
            unsafe { cudarc::driver::result::memset_d8_async(addr, value, len, stream.raw) }
                .call("cuMemsetD8Async")?;
        }
        Ok(())
    }

    /// Read a recorded range back into host memory.
    pub fn download(&self, addr: u64, dst: &mut [u8]) -> Result<()> {
        self.ensure_owned(addr, dst.len(), "cuMemcpyDtoH")?;
        memory::download_unchecked(addr, dst)
    }

    /// Copy recorded ranges into `buf` (`(addr, offset in buf, len)`), then wait.
    pub fn save_to(
        &self,
        stream: &Stream,
        buf: &DeviceBuffer,
        copies: &[(u64, usize, usize)],
    ) -> Result<()> {
        self.copy_with(stream, buf, copies, Direction::ToBuffer)
    }

    /// Copy from `buf` back over recorded ranges (`(addr, offset in buf, len)`), then wait.
    pub fn restore_from(
        &self,
        stream: &Stream,
        buf: &DeviceBuffer,
        copies: &[(u64, usize, usize)],
    ) -> Result<()> {
        self.copy_with(stream, buf, copies, Direction::FromBuffer)
    }

    /// Device-to-device copies between recorded ranges and `buf`, each range checked to be
    /// ours and inside `buf`.
    fn copy_with(
        &self,
        stream: &Stream,
        buf: &DeviceBuffer,
        copies: &[(u64, usize, usize)],
        direction: Direction,
    ) -> Result<()> {
        let mut pairs = Vec::with_capacity(copies.len());
        for &(addr, off, len) in copies {
            self.ensure_owned(addr, len, "cuMemcpyDtoDAsync")?;
            memory::check_range(off, len, buf.len(), "cuMemcpyDtoDAsync")?;
            let in_buf = buf.ptr() + off as u64;
            pairs.push(match direction {
                Direction::ToBuffer => (in_buf, addr, len),
                Direction::FromBuffer => (addr, in_buf, len),
            });
        }
        memory::copy_device_unchecked(stream, &pairs)
    }

    pub fn mapped_bytes(&self) -> u64 {
        self.maps.iter().map(|(m, _)| m.size).sum()
    }
}

impl Drop for ExactMemory {
    fn drop(&mut self) {
        // Teardown order from LLVM's plugin: unmap, release, free the address range.
        for (m, h) in self.maps.drain(..) {
            teardown(check(
                // SAFETY: each pair was mapped by us and is unmapped and released once.
                unsafe { sys::cuMemUnmap(m.addr, m.size as usize) },
                "cuMemUnmap",
            ));
            // SAFETY: as above.
            teardown(check(unsafe { sys::cuMemRelease(h) }, "cuMemRelease"));
        }
        for r in self.reservations.drain(..) {
            teardown(check(
                // SAFETY: each reservation was made by us and is freed once.
                unsafe { sys::cuMemAddressFree(r.addr, r.size as usize) },
                "cuMemAddressFree",
            ));
        }
    }
}

/// Which way a copy between recorded ranges and a device buffer goes.
#[derive(Clone, Copy)]
enum Direction {
    ToBuffer,
    FromBuffer,
}
