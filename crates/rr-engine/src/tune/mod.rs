//! Launch-configuration sweeps: the search space, the search strategies, the per-configuration
//! results and the report, and the commands the tuner sends to an engine process (one per GPU;
//! the process measures every configuration through one replay session). The driver that runs
//! engine processes lives in the `rr-tui` binary (`tune`); everything here is pure.

pub mod axis;
pub mod bounded;
pub mod defines;
pub mod engine;
pub mod engine_job;
pub mod export;
pub mod job;
pub mod limits;
pub mod measurement;
pub mod objective;
pub mod part;
mod report_csv;
pub mod shard;
pub mod space;
pub mod strategy;
mod tpe;
pub mod trial;

pub use measurement::{Status, Trial};
pub use objective::Objective;
pub use space::{Config, Space};
pub use strategy::{Search, StrategyKind};
pub use trial::{ReadBack, TuneReport};
