//! Driver errors, typed: which call failed, its `CUresult`, and what it was doing. Errors say
//! which kind they are ([`CudaError::is_sticky`], [`CudaError::is_launch_config`]), because a
//! replay session must know whether its context survived.

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::CUresult;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a sticky error has been seen: the process's context is poisoned, and the failures of
/// clean-up calls that follow are consequences, not news.
static POISONED: AtomicBool = AtomicBool::new(false);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaError {
    /// The driver function, e.g. `cuModuleLoadData`.
    pub call: &'static str,
    pub code: CUresult,
    /// What rr-tui was doing, e.g. `loading x.image`; may be empty.
    pub context: String,
}

/// `CUDA_ERROR_NAME: description`, from the driver when it can say.
pub fn describe(code: CUresult) -> String {
    if !crate::library::present() {
        return format!("{code:?}");
    }
    let e = DriverError(code);
    match (e.error_name(), e.error_string()) {
        (Ok(n), Ok(s)) => format!("{}: {}", n.to_string_lossy(), s.to_string_lossy()),
        _ => format!("{code:?}"),
    }
}

impl std::fmt::Display for CudaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.context.is_empty() {
            write!(f, "{}: {}", self.call, describe(self.code))
        } else {
            write!(
                f,
                "{} ({}): {}",
                self.context,
                self.call,
                describe(self.code)
            )
        }
    }
}

impl std::error::Error for CudaError {}

impl CudaError {
    pub fn new(call: &'static str, code: CUresult) -> CudaError {
        let e = CudaError {
            call,
            code,
            context: String::new(),
        };
        if e.is_sticky() {
            POISONED.store(true, Ordering::Relaxed);
        }
        e
    }

    /// Say what was being done.
    pub fn context(mut self, what: impl Into<String>) -> CudaError {
        self.context = what.into();
        self
    }

    /// The numeric `CUresult` (stable across binding versions, unlike the enum's variants).
    pub fn number(&self) -> u32 {
        self.code as u32
    }

    /// The context is poisoned: every later call in this process fails the same way, so the
    /// process must end and a fresh one continue (CUDA driver API, "sticky" errors).
    pub fn is_sticky(&self) -> bool {
        matches!(
            self.number(),
            214 // ECC_UNCORRECTABLE
            | 700 // ILLEGAL_ADDRESS
            | 702 // LAUNCH_TIMEOUT
            | 709 // CONTEXT_IS_DESTROYED
            | 710 // ASSERT
            | 714 // HARDWARE_STACK_ERROR
            | 715 // ILLEGAL_INSTRUCTION
            | 716 // MISALIGNED_ADDRESS
            | 717 // INVALID_ADDRESS_SPACE
            | 718 // INVALID_PC
            | 719 // LAUNCH_FAILED
            | 911 // EXTERNAL_DEVICE
            | 999 // UNKNOWN: assume the worst
        )
    }

    /// A launch refused for its configuration (too many threads, too much shared memory, too
    /// many registers for the block, a cluster or cooperative grid too large): returned by the
    /// launch call itself, before anything ran, so the context is still usable.
    pub fn is_launch_config(&self) -> bool {
        matches!(
            self.number(),
            1 // INVALID_VALUE (grid or block dimensions, shared memory)
            | 701 // LAUNCH_OUT_OF_RESOURCES (registers × threads)
            | 703 // LAUNCH_INCOMPATIBLE_TEXTURING
            | 720 // COOPERATIVE_LAUNCH_TOO_LARGE
            | 801 // NOT_SUPPORTED
            | 912 // INVALID_CLUSTER_SIZE
        )
    }

    pub fn is_out_of_memory(&self) -> bool {
        self.number() == 2
    }
}

pub type Result<T, E = CudaError> = std::result::Result<T, E>;

/// `.call("cuX")` on a cudarc `result` turns its `DriverError` into a [`CudaError`].
pub(crate) trait Call<T> {
    fn call(self, name: &'static str) -> Result<T>;
}

impl<T> Call<T> for std::result::Result<T, DriverError> {
    fn call(self, name: &'static str) -> Result<T> {
        self.map_err(|e| CudaError::new(name, e.0))
    }
}

/// A raw `sys` result as a [`Result`].
pub(crate) fn check(code: CUresult, name: &'static str) -> Result<()> {
    code.result().call(name)
}

/// Clean-up (in `Drop`) cannot return errors; they are reported on stderr, except after a
/// sticky fault, when every call fails the same way and the process is about to end anyway.
pub(crate) fn teardown(r: Result<()>) {
    if let Err(e) = r {
        if !POISONED.load(Ordering::Relaxed) && !e.is_sticky() {
            eprintln!("rr-tui: warning: clean-up failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let fault = CudaError {
            call: "cuStreamSynchronize",
            code: CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            context: String::new(),
        };
        assert!(fault.is_sticky() && !fault.is_launch_config());
        let config = CudaError {
            call: "cuLaunchKernel",
            code: CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            context: String::new(),
        };
        assert!(config.is_launch_config() && !config.is_sticky());
        assert_eq!(config.number(), 701);
    }
}
