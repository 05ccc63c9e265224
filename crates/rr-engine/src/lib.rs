//! rr-tui's engine: memory-mapped snapshots ([`snapshot`]), their comparison ([`diff`]), and
//! replay ([`replay`]): planning exact-address memory, the replay [`replay::Session`], and the
//! event protocol spoken by replay child processes. No terminal here; CUDA only through
//! `rr-cuda`. The only `unsafe` is the snapshot mappings and their SIGBUS guard.

pub mod bounded;
pub mod diff;
pub mod error;
pub mod job;
pub mod lines;
pub mod machine;
pub mod ncu;
pub mod profile;
pub mod replay;
pub mod snapshot;
pub mod stderr_tail;

pub use error::{Error, Result};
