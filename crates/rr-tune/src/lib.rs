//! Launch-configuration and compile-time tuning: the search space, the search strategies, the
//! objective, shards and their merge, the report and its exports, the commands an engine process
//! answers (one per GPU, measuring every configuration through one replay session), and the
//! sweep driver that runs those engines and collects their trials (`sweep`).
//!
//! Above the replay core (`rr-engine`), never below it: the values a sweep's events carry
//! (a configuration, the define axes, a trial) are the protocol's (`rr_engine::replay::variant`), and
//! this crate re-exports them where tuning names them.

#![forbid(unsafe_code)]

pub use rr_engine::replay::variant::{axis, trial as measurement};

pub mod defines;
pub mod engine;
pub mod engine_job;
pub mod export;
pub mod job;
pub mod limits;
pub mod objective;
pub mod part;
mod report_csv;
pub mod shard;
pub mod space;
pub mod strategy;
pub mod sweep;
mod tpe;
pub mod trial;

pub use measurement::{Status, Trial};
pub use objective::Objective;
pub use space::{Config, Space};
pub use strategy::{Search, StrategyKind};
pub use trial::{ReadBack, TuneReport};
