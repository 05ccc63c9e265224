//! Replay: re-execute one recorded instance on a GPU at its recorded addresses.
//!
//! Pure parts (the request, launch geometry and limits, reservation planning, statistics,
//! verification, the event protocol) are tested on CPU-only CI. [`Session`] drives the GPU
//! through `rr-cuda`: prepared once, then any number of launches. The explorer and `tune` never
//! run a session in their own process: [`child`] starts `rr-tui replay --json` and reads its
//! events, so a faulting kernel (which poisons its CUDA context for good) or an address conflict
//! with the UI's own mappings cannot take them down.
//!
//! The modules depend on each other in layers, never in a cycle: plain values and helpers that
//! name nothing of the session ([`outcome`], [`stats`], [`timing`], [`request`], [`plan`],
//! [`instance`], the loading threads) come first; [`protocol`] carries those values; the session
//! and what it is made of ([`session`], [`objects`], [`verify`], the loading) use them; what
//! drives a session ([`ab`], [`energy`], [`trial`]) comes next; and the [`runner`] that runs one
//! [`ReplayRequest`] from its checks to its `done`, into an [`EventSink`] ([`sink`]), comes last.

pub mod ab;
pub mod ab_job;
pub mod candidate;
pub mod child;
pub mod energy;
pub mod guards;
pub mod instance;
pub mod job;
pub mod launch;
pub mod leaderboard;
pub mod legacy;
mod load_threads;
mod loading;
pub mod objects;
pub mod outcome;
pub mod pathjson;
pub mod plan;
pub mod protocol;
pub mod request;
pub mod rotation;
pub mod runner;
pub mod session;
pub mod sink;
pub mod stats;
pub mod timing;
pub mod trial;
pub mod variant;
pub mod verify;
mod verify_device;
pub mod watchdog;

pub use instance::ReplayInstance;
pub use protocol::{ErrorKind, Event, Tagged, VerifyOutcome, PROTOCOL_VERSION};
pub use request::{Overrides, ReplayRequest, Supplied, Verify};
pub use rr_cuda::library::find_cuda_library;
pub use rr_cuda::{LaunchConfig, Placeholders};
pub use runner::{run, Outcome};
pub use session::{RunError, Session};
pub use sink::EventSink;

/// Why replay cannot run here, if it cannot (no driver, a driver too old); checks without
/// initialising the driver in this process.
pub fn gpu_status() -> Result<(), String> {
    if rr_cuda::driver::present() {
        Ok(())
    } else {
        Err(rr_cuda::driver::Unavailable::NoDriver.to_string())
    }
}

/// The architecture (`90` for sm_90) of device `ordinal`, initialising the driver in this
/// process (no context is created).
pub fn device_sm(ordinal: i32) -> crate::error::Result<u32> {
    rr_cuda::driver::load()?;
    Ok(rr_cuda::Device::get(ordinal)?.sm)
}

/// Whether this machine has a CUDA driver rr-tui can use (loaded and version-checked, not
/// initialised): commands say "no driver" once, before any other output.
pub fn driver_usable() -> crate::error::Result<()> {
    rr_cuda::driver::usable().map_err(Into::into)
}
