//! The CUDA driver boundary of rr-tui: every driver call and every `unsafe` block that touches
//! the driver lives in this crate, each block with a SAFETY note; callers get RAII handles and
//! typed errors ([`CudaError`] keeps the call and the `CUresult`).
//!
//! cudarc is built with `dynamic-loading`: libcuda is opened at first use, so programs start on
//! machines without CUDA. cudarc *panics* when the library or a symbol is missing, so
//! [`driver::load`] checks the library and the driver version before any other call. cudarc's
//! `result` layer is used wherever it covers a call; `sys` only where it does not (VMM, launch
//! with attributes, parameter info).
//!
//! The handles are not `Send`: a CUDA context is current on the thread that made it, and a
//! replay session lives on one thread.

#![deny(clippy::let_underscore_must_use)]

pub(crate) mod capture;
pub mod context;
pub mod cupti;
pub mod driver;
pub mod error;
pub mod fingerprint;
pub mod host;
pub mod interpose;
pub mod launch;
pub mod library;
pub mod memory;
pub mod module;
pub mod nvml;
pub mod nvrtc;
pub mod nvtx;
pub mod objects;
pub mod ordered;
pub mod stream;
pub mod timing;
pub mod upload;
pub mod vmm;

pub use context::Context;
pub use cudarc::driver::sys::CUresult;
pub use driver::Device;
pub use error::{CudaError, Result};
pub use host::HostMemory;
pub use launch::{LaunchConfig, Params};
pub use memory::{DeviceBuffer, PinnedBuffer};
pub use module::{Function, Module};
pub use stream::{Event, Stream};
pub use vmm::{ExactMemory, Placeholders, Range, ReserveError};
