//! Loading the driver, and the devices it offers.

use cudarc::driver::{result, sys};

use crate::error::{Call, CudaError, Result};

/// The oldest driver whose API this build calls: 12.8 (`cuEventElapsedTime_v2`, parameter info,
/// launch attributes). cudarc panics on a missing symbol, so older drivers are refused up front.
pub const MIN_DRIVER_VERSION: i32 = 12080;

pub use crate::library::present;

/// Why the driver cannot be used here, if it cannot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error(
        "no CUDA driver found (libcuda.so.1 could not be loaded): replaying and tuning need an NVIDIA GPU and its driver; \
         browsing, inspecting, checking, diffing and writing reproducers (repro) work without one"
    )]
    NoDriver,
    #[error("the CUDA driver supports CUDA {}.{}, but rr-tui needs 12.8 or newer (driver 570+)", .0 / 1000, .0 % 1000 / 10)]
    TooOld(i32),
    #[error("{0}")]
    Init(CudaError),
}

/// The CUDA version the driver supports (12080 for 12.8), without initialising it.
pub fn version() -> std::result::Result<i32, Unavailable> {
    if !present() {
        return Err(Unavailable::NoDriver);
    }
    let mut version = 0;
    crate::error::check(
        // SAFETY: writes one integer; needs no initialisation.
        unsafe { sys::cuDriverGetVersion(&mut version) },
        "cuDriverGetVersion",
    )
    .map_err(Unavailable::Init)?;
    Ok(version)
}

/// Whether the driver can be loaded and is new enough, without initialising it: for commands
/// that start GPU work in other processes and want to say "no driver" once, up front.
pub fn usable() -> std::result::Result<(), Unavailable> {
    let version = version()?;
    if version < MIN_DRIVER_VERSION {
        return Err(Unavailable::TooOld(version));
    }
    Ok(())
}

/// Load and initialise the driver (`cuInit`), checking its version first.
pub fn load() -> std::result::Result<(), Unavailable> {
    usable()?;
    result::init().call("cuInit").map_err(|e| {
        Unavailable::Init(e.context("initialising the driver (is a GPU visible to this process?)"))
    })
}

/// One CUDA device.
#[derive(Debug, Clone)]
pub struct Device {
    pub ordinal: i32,
    pub(crate) handle: sys::CUdevice,
    pub name: String,
    /// Compute capability as major*10+minor (90 for sm_90).
    pub sm: u32,
}

impl Device {
    /// How many devices the driver offers ([`load`] first).
    pub fn count() -> Result<i32> {
        result::device::get_count().call("cuDeviceGetCount")
    }

    pub fn get(ordinal: i32) -> Result<Device> {
        let handle = result::device::get(ordinal)
            .call("cuDeviceGet")
            .map_err(|e| e.context(format!("device {ordinal}")))?;
        let name = result::device::get_name(handle).call("cuDeviceGetName")?;
        let mut d = Device {
            ordinal,
            handle,
            name,
            sm: 0,
        };
        let major =
            d.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor =
            d.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        d.sm = (major * 10 + minor) as u32;
        Ok(d)
    }

    pub fn attribute(&self, attr: sys::CUdevice_attribute) -> Result<i32> {
        // SAFETY: `handle` came from cuDeviceGet.
        unsafe { result::device::get_attribute(self.handle, attr) }.call("cuDeviceGetAttribute")
    }

    /// Where the device sits on the PCI bus: (domain, bus, device), as NVML reports it too.
    pub fn pci_location(&self) -> Result<(u32, u32, u32)> {
        use sys::CUdevice_attribute as A;
        Ok((
            self.attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)? as u32,
            self.attribute(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)? as u32,
            self.attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)? as u32,
        ))
    }

    /// Whether exact-address replay is possible (virtual memory management).
    pub fn supports_vmm(&self) -> Result<bool> {
        Ok(self.attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
        )? != 0)
    }

    pub fn l2_cache_bytes(&self) -> Result<usize> {
        Ok(self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize)
    }

    pub fn multiprocessors(&self) -> Result<u32> {
        Ok(
            self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
                as u32,
        )
    }

    pub fn max_threads_per_block(&self) -> Result<u32> {
        Ok(
            self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?
                as u32,
        )
    }

    /// The most dynamic shared memory a block may opt in to.
    pub fn max_shared_per_block_optin(&self) -> Result<u32> {
        Ok(self.attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )? as u32)
    }

    /// The SM clock the device reports as its default, in kHz.
    pub fn clock_khz(&self) -> Result<u32> {
        Ok(self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as u32)
    }

    /// The device memory's peak bandwidth in bytes per second, from its attributes: memory
    /// clock × bus width × 2 (double data rate). `None` when the driver reports no clock or
    /// width (some drivers leave them 0).
    pub fn peak_memory_bandwidth(&self) -> Result<Option<f64>> {
        use sys::CUdevice_attribute as A;
        let clock_khz = self.attribute(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?;
        let bus_bits = self.attribute(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?;
        Ok(peak_bandwidth(clock_khz, bus_bits))
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> Result<usize> {
        // SAFETY: `handle` came from cuDeviceGet.
        unsafe { result::device::total_mem(self.handle) }.call("cuDeviceTotalMem")
    }
}

/// Peak bytes per second of a memory clocked at `clock_khz` on a `bus_bits`-wide bus, transferring
/// twice per clock; `None` for a clock or width that is not positive.
pub fn peak_bandwidth(clock_khz: i32, bus_bits: i32) -> Option<f64> {
    (clock_khz > 0 && bus_bits > 0).then(|| clock_khz as f64 * 1e3 * (bus_bits as f64 / 8.0) * 2.0)
}

/// End the process at once, without exit handlers: for a watchdog whose replay thread is
/// blocked in the driver on a kernel that never ends (the driver's own exit handlers could wait
/// on it too). The driver tears the context down with the process, which ends the kernel.
pub fn exit_now(code: i32) -> ! {
    use std::io::Write;
    // Best effort: the process ends either way, and what was printed should reach the reader.
    std::io::stdout().flush().ok();
    std::io::stderr().flush().ok();
    // SAFETY: `_exit` ends the process without running any code of ours; nothing is left in an
    // inconsistent state that outlives the process.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod bandwidth_tests {
    use super::peak_bandwidth;

    #[test]
    fn peak_bandwidth_is_clock_times_width_times_two() {
        // An H100 SXM reports 2619 MHz on a 5120-bit bus: 3.35 TB/s.
        let b = peak_bandwidth(2_619_000, 5120).unwrap();
        assert!((b / 1e12 - 3.352).abs() < 0.01, "{b}");
        assert_eq!(peak_bandwidth(0, 5120), None);
        assert_eq!(peak_bandwidth(2_619_000, -1), None);
    }
}
