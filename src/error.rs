//! The binary's errors are the engine's: every one names its file or its driver call.
pub use rr_engine::{Error, Result};
