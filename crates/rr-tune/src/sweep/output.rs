//! Where a sweep says what it does: its header, each GPU as it is ready, warnings, one result
//! per configuration, the summary, and `--list`'s configurations. The driver decides what to
//! say and when; how it reads (text for a terminal, event lines for the explorer) is the
//! caller's (the `rr-tui` binary's printer).

use crate::shard::Shard;
use crate::trial::DeviceInfo;
use crate::{Space, Trial, TuneReport};

use super::msg::Carried;

/// What a sweep is about to do, for its header.
pub struct Plan<'a> {
    pub planned: u64,
    pub recorded_in_space: bool,
    /// How many configurations a limit skips and the first reason (None: not counted).
    pub skipped: Option<(u64, String)>,
    pub devices: &'a [i32],
    /// The engines run through this hub (`--engine-hub`): `devices` only number them.
    pub hub: Option<&'a std::path::Path>,
    pub seed_chosen: bool,
    pub resumed: usize,
}

/// What a sweep's driver says, in the order it happens.
pub trait SweepOutput {
    /// The sweep starts: `r` holds its settings, `plan` what it will measure.
    fn start(&self, r: &TuneReport, plan: &Plan);
    /// A GPU (or a hub's engine, `unit`) is ready; `carried` says whether the last instance's
    /// engine went on to this one (a recording's instances swept one after the other).
    fn device(&self, d: &DeviceInfo, unit: &str, carried: Option<&Carried>);
    fn warning(&self, message: &str);
    /// A configuration's result, as the `done`th of `planned` in `r`'s sweep.
    fn trial(&self, t: &Trial, r: &TuneReport, done: usize, planned: u64);
    /// The end of a sweep; `notes` (what was exported) come last.
    fn summary(
        &self,
        r: &TuneReport,
        measured: u64,
        elapsed: f64,
        interrupted: bool,
        notes: &[String],
    );
    /// `--list`: the configurations the axes span (with `shard`, that part's), nothing
    /// measured; of a `simulated` sweep, nothing is said to be measured.
    fn list(&self, space: &Space, shard: Option<Shard>, simulated: bool);
}
