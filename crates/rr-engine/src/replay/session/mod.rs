//! The replay session: prepared once (device, context, memory at the recorded addresses, module,
//! kernel, globals, a pristine copy of the input), then any number of launches with different
//! geometry, shared memory and repetitions, restoring memory before each, and reading results
//! back. `replay`, the explorer (through a child process) and `tune` all go through it.
//!
//! Errors say which kind they are ([`RunError`]): a launch refused for its configuration leaves
//! the session usable (go on with the next configuration); a sticky fault poisons the context
//! (this process must end and a fresh one continue).
//!
//! The session's parts, one concern per file: opening it (`open`), putting the recorded input
//! back (`restore`), launching and timing (`measure`), variants, candidates and register limits
//! (`variants`), verification on the device (`verification`), reading memory back (`readback`),
//! switching to another instance (`switch`) and the benchmark aids (`calibrate`); the kernel a
//! session binds (`kernel`) and the recorded input it loads (`input`).

use rr_cuda::{Context, CudaError, PinnedBuffer, Stream};

use super::protocol::ErrorKind;
use super::watchdog::Watchdog;
use crate::error::{Error, Result};
use parts::{Guards, InstanceMemory, Kernels, Pristine, RecordedInput, Timer};
use verification::DeviceVerification;

mod calibrate;
mod input;
mod kernel;
mod measure;
mod open;
mod parts;
mod readback;
mod restore;
mod switch;
mod variants;
mod verification;

pub use switch::{SwitchFailed, Switched, SWITCH_REFUSED};

/// Dynamic shared memory a kernel may use without opting in (CUDA's 48 KiB default).
const DEFAULT_DYNAMIC_SHARED: u32 = 48 * 1024;

/// Compiled variants a session keeps loaded at most.
const MAX_PARKED: usize = 64;

/// Device memory left free when deciding whether a pristine device-side copy fits.
const PRISTINE_MARGIN: usize = 512 << 20;

/// Why a launch did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Refused for its configuration before anything ran; the session is still usable.
    #[error("the launch configuration was refused: {0}")]
    InvalidLaunch(CudaError),
    /// A sticky fault: the context is poisoned; this process must end.
    #[error(
        "the kernel failed: {0}; a faulting kernel leaves the CUDA context unusable, so this replay stops here"
    )]
    Fault(CudaError),
    #[error(transparent)]
    Other(#[from] Error),
}

impl RunError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            RunError::InvalidLaunch(_) => ErrorKind::Launch,
            RunError::Fault(_) => ErrorKind::Fault,
            RunError::Other(e) => error_kind(e),
        }
    }
}

/// The protocol kind of an engine error.
pub fn error_kind(e: &Error) -> ErrorKind {
    match e {
        Error::Record(_) => ErrorKind::Input,
        Error::AddressInUse(_) => ErrorKind::Address,
        Error::Cuda(c) if c.is_sticky() => ErrorKind::Fault,
        Error::Cuda(_) | Error::Unavailable(_) | Error::Failed(_) => ErrorKind::Setup,
    }
}

/// A driver error during a run: sticky ones poison the context.
fn classify(e: CudaError) -> RunError {
    if e.is_sticky() {
        RunError::Fault(e)
    } else {
        RunError::Other(Error::Cuda(e))
    }
}

/// A driver error while preparing a configuration: sticky ones poison the context, the rest
/// refuse only this configuration.
fn refused(e: CudaError) -> RunError {
    if e.is_sticky() {
        RunError::Fault(e)
    } else {
        RunError::InvalidLaunch(e)
    }
}

// One measured launch: what timing's statistics are made of (defined there, below the session).
pub use super::timing::Sample;

/// The device, as the `device` event reports it.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub name: String,
    pub sm: u32,
    pub ordinal: i32,
}

/// A replay session on one device (see the module's documentation): the parts it composes,
/// each a type of its own ([`parts`]), around the stream and the context they share.
///
/// Drop order: Rust drops a struct's fields in the order they are declared, so the order of the
/// fields below (and of each part's fields) is the order in which the session's CUDA objects
/// are released, and it matters: the watchdog stops first; then the timing events and probes,
/// the recorded input's copies, the kernels (each holds its module, unloaded with its last
/// kernel), the read-back buffer; then the instance's parameters, texture and surface objects
/// (before the memory they read), host memory and the memory at the recorded addresses; the
/// stream and the device verifier; and the context last, since releasing any of the others
/// needs it. A new field that holds a CUDA object goes above `context`.
pub struct Session {
    pub device: DeviceInfo,
    // Field order is drop order: device objects first, the context last (see above).
    watchdog: Option<Watchdog>,
    timer: Timer,
    input: RecordedInput,
    kernels: Kernels,
    guards: Guards,
    /// Where sweeps read the replayed memory back (allocated at the first read-back).
    read_buffer: Option<PinnedBuffer>,
    instance: InstanceMemory,
    stream: Stream,
    /// Verification on the device: its fingerprints (device memory and a module, released
    /// here, after the stream and before the context), and the chunks found to differ.
    verification: DeviceVerification,
    context: Context,
}

impl Session {
    /// The device's peak memory bandwidth in bytes/s (None when it reports none) and its L2
    /// cache size: what [`super::guards::plausibility`] judges a candidate's time against.
    pub fn bandwidth_bound(&self) -> (Option<f64>, u64) {
        (self.guards.peak_bandwidth, self.guards.l2_bytes)
    }

    /// The device's rated SM clock in MHz (what throttling is judged against).
    pub fn reference_clock_mhz(&self) -> f64 {
        self.timer.reference_clock_mhz
    }

    /// Time with CUDA events alone: no blocking kernel ahead of each launch and no clock probe
    /// after it, so a profiler that serialises kernels (Nsight Compute) sees only the replayed
    /// kernel and nothing spins waiting for the host. Launch latency and clocks go unmeasured.
    pub fn without_probes(&mut self) {
        self.timer.probes = None;
    }

    /// The CUDA device the session runs on.
    pub fn cuda_device(&self) -> Result<rr_cuda::driver::Device> {
        Ok(rr_cuda::driver::Device::get(self.device.ordinal)?)
    }

    pub fn input_len(&self) -> u64 {
        self.input.input_len
    }

    /// Device memory `(free, total)`.
    pub fn mem_info(&self) -> rr_cuda::Result<(usize, usize)> {
        self.context.mem_info()
    }
}
