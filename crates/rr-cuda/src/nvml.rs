//! NVML, read only: the total-energy counter, power draw, clocks and power limit of the device a
//! replay runs on, for energy per kernel execution. rr-tui never sets clocks or limits: the GPU
//! machines are shared, and a measurement must describe the device as its owner set it.
//!
//! libnvidia-ml is loaded at run time (nvml-wrapper's libloading), like libcuda: nothing is
//! needed to build, and a machine without it gets one clear error when energy is asked for.

use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device as NvmlDevice, Nvml};

use crate::driver::Device;

/// The names libnvidia-ml goes by: the driver's own soname first (always installed with the
/// driver), then the development link.
const LIBRARY_NAMES: [&str; 2] = ["libnvidia-ml.so.1", "libnvidia-ml.so"];

/// One device's meters.
pub struct Meter {
    nvml: Nvml,
    index: u32,
}

/// What a meter reads at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clocks {
    pub sm_mhz: u32,
    pub memory_mhz: u32,
}

fn nvml_error(what: &str, e: NvmlError) -> String {
    match e {
        NvmlError::NotSupported => format!("{what}: not supported by this GPU or driver (NVML)"),
        NvmlError::NoPermission => format!("{what}: NVML denies permission"),
        e => format!("{what}: {e} (NVML)"),
    }
}

impl Meter {
    /// The NVML device behind CUDA device `device`, matched by PCI location (CUDA and NVML
    /// number devices differently, e.g. under CUDA_VISIBLE_DEVICES).
    pub fn open(device: &Device) -> Result<Meter, String> {
        let (domain, bus, dev) = device.pci_location().map_err(|e| e.to_string())?;
        let mut last = None;
        let nvml = LIBRARY_NAMES
            .iter()
            .find_map(|name| {
                Nvml::builder()
                    .lib_path(std::ffi::OsStr::new(name))
                    .init()
                    .map_err(|e| last = Some(e))
                    .ok()
            })
            .ok_or_else(|| match last {
                Some(NvmlError::LibloadingError(_)) | None => {
                    "libnvidia-ml (NVML) could not be loaded: it comes with the NVIDIA driver"
                        .into()
                }
                Some(e) => nvml_error("initialising NVML", e),
            })?;
        let count = nvml
            .device_count()
            .map_err(|e| nvml_error("counting devices", e))?;
        for index in 0..count {
            let Ok(d) = nvml.device_by_index(index) else {
                continue;
            };
            let Ok(pci) = d.pci_info() else { continue };
            if (pci.domain, pci.bus, pci.device) == (domain, bus, dev) {
                return Ok(Meter { nvml, index });
            }
        }
        Err(format!(
            "NVML shows no device at PCI {domain:04x}:{bus:02x}:{dev:02x} (CUDA device {})",
            device.ordinal
        ))
    }

    fn device(&self) -> Result<NvmlDevice<'_>, String> {
        self.nvml
            .device_by_index(self.index)
            .map_err(|e| nvml_error("opening the device", e))
    }

    /// The device's energy counter in millijoules since the driver loaded (Volta and newer).
    pub fn energy_mj(&self) -> Result<u64, String> {
        self.device()?
            .total_energy_consumption()
            .map_err(|e| nvml_error("reading the energy counter", e))
    }

    /// Power draw now, in watts.
    pub fn power_w(&self) -> Result<f64, String> {
        Ok(self
            .device()?
            .power_usage()
            .map_err(|e| nvml_error("reading the power draw", e))? as f64
            / 1e3)
    }

    /// The power limit the driver enforces, in watts.
    pub fn power_limit_w(&self) -> Result<f64, String> {
        Ok(self
            .device()?
            .enforced_power_limit()
            .map_err(|e| nvml_error("reading the power limit", e))? as f64
            / 1e3)
    }

    /// SM and memory clocks now.
    pub fn clocks(&self) -> Result<Clocks, String> {
        let d = self.device()?;
        let read = |c| d.clock_info(c).map_err(|e| nvml_error("reading clocks", e));
        Ok(Clocks {
            sm_mhz: read(Clock::SM)?,
            memory_mhz: read(Clock::Memory)?,
        })
    }
}
