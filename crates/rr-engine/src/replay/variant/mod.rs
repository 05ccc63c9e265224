//! The values a sweep's events carry (`sweep` and `trial` lines of the child-process protocol,
//! [`crate::replay::protocol`]): one launch configuration, the compile-time define axes, and what
//! one configuration measured. Plain data with their own parsing and limits; the tuning that
//! makes them (search spaces, strategies, the sweep driver) is the `rr-tune` crate's, above this
//! one.

pub mod axis;
pub mod config;
pub mod defines;
pub mod trial;

pub use config::Config;
pub use defines::{DefineAxis, Defines};
pub use trial::{Status, Trial, TrialEnergy};

/// At most this many values on one axis of a sweep (a define's values included): a typo such as
/// `1..1000000000:1` is refused instead of exhausting memory.
pub const MAX_AXIS_VALUES: usize = 1 << 16;
