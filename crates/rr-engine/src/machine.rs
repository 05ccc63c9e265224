//! What this machine offers GPU work, as `rr-tui doctor` reports it: the driver and its version,
//! the GPUs it shows, libcupti. Each question is asked the way the commands that need the answer
//! ask it (`rr-cuda`'s lookups), so what `doctor` says is what `replay` and `record` will find.

use std::path::Path;

/// One GPU the driver offers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Gpu {
    pub ordinal: i32,
    pub name: String,
    /// Compute capability as major*10+minor (90 for 9.0).
    pub sm: u32,
}

/// Whether libcuda loads at all.
pub fn driver_present() -> bool {
    rr_cuda::driver::present()
}

/// The CUDA version the driver supports (12080 for 12.8), without initialising it; or why
/// there is none.
pub fn driver_version() -> Result<i32, String> {
    rr_cuda::driver::version().map_err(|e| e.to_string())
}

/// The oldest driver version replays accept (as [`driver_version`] counts).
pub const MIN_DRIVER_VERSION: i32 = rr_cuda::driver::MIN_DRIVER_VERSION;

/// Initialise the driver in this process (`cuInit`): the step a hung GPU or driver never
/// returns from.
pub fn init_driver() -> crate::Result<()> {
    Ok(rr_cuda::driver::load()?)
}

/// The GPUs the driver offers, initialising it in this process (no context is created, nothing
/// runs on a GPU).
pub fn gpus() -> crate::Result<Vec<Gpu>> {
    rr_cuda::driver::load()?;
    let count = rr_cuda::Device::count()?;
    (0..count)
        .map(|ordinal| {
            let device = rr_cuda::Device::get(ordinal)?;
            Ok(Gpu {
                ordinal,
                name: device.name,
                sm: device.sm,
            })
        })
        .collect()
}

/// Whether libcupti loads: from `path` when given (as `record` passes it to the recorder), else
/// wherever the loader finds it.
pub fn cupti_loads(path: Option<&Path>) -> bool {
    rr_cuda::cupti::load_library(path)
}

/// The program `name` as the shell finds it: the first executable file of that name in a
/// directory of `PATH` (the tools `doctor` asks: python3, tmux).
pub fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    rr_cuda::library::find_on_path(name)
}

/// Whether `path` is a file with an execute permission (a link to one counts), as a shell's
/// lookup asks.
pub fn is_executable_file(path: &Path) -> bool {
    rr_cuda::library::is_executable_file(path)
}
