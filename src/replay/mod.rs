//! The replay engine: re-execute one recorded instance on a GPU at its recorded addresses.
//!
//! Pure parts (launch geometry and limits, reservation planning, statistics, verification, the
//! event protocol) are tested on CPU-only CI; `cuda` is the only module that calls the driver.
//! The explorer never runs the engine in its own process: `child` starts `rr-tui replay --json`
//! and reads its events, so a faulting kernel (which poisons its CUDA context for good) or an
//! address conflict with the UI's own mappings cannot take the explorer down.

pub mod child;
pub mod cuda;
pub mod launch;
pub mod plan;
pub mod protocol;
pub mod stats;
pub mod verify;

pub use protocol::{Event, VerifyOutcome};
