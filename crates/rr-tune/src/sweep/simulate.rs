//! `tune --simulate SWEEP.json`: every configuration is answered from a finished sweep's
//! report instead of a GPU, as Kernel Tuner's simulation runner does: strategies are compared
//! in seconds, and the whole tuner (scheduler, strategies, report, resume files) runs where
//! there is no GPU. A configuration the sweep lacks is answered as skipped, with the reason.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use crate::trial::{index_of, DeviceInfo};
use crate::{Config, Space, Status, Trial, TuneReport};
use crossbeam_channel::Sender;
use rr_engine::replay::energy::EnergyPolicy;
use rr_engine::replay::timing::TimingPolicy;

use super::msg::Msg;
use super::report_files::read_report;
use super::scheduler::{Scheduler, Work};
use super::worker::finish;
use rr_engine::{Error, Result};

/// A finished sweep's trials by configuration.
pub struct Table {
    trials: HashMap<Config, Trial>,
    /// The device the sweep ran on (the simulated "device" says so).
    device: DeviceInfo,
    source: String,
    /// The sweep's verification and timing policy (what its answers mean).
    verify: String,
    timing: TimingPolicy,
    /// Whether (and how long) the sweep measured energy.
    energy: Option<EnergyPolicy>,
}

/// A trial message kept from a sweep is cut to this many bytes.
const MAX_MESSAGE: usize = 1024;

fn cut(text: &mut String, max: usize) {
    if rr_format::text::cut_at_char(text, max) {
        text.push('…');
    }
}

impl Table {
    /// The measurements of the sweep in `path`: a `tune --json-out` report of this instance (the
    /// same kernel and recorded configuration as `run`, the report this run starts), measured
    /// rather than simulated. Kept: what `--resume` would keep (verified or failing to verify,
    /// plausible times, each configuration once) inside this run's space, messages cut short.
    pub fn load(path: &Path, run: &TuneReport, space: &Space) -> Result<Table> {
        let sweep = read_report(path, "--simulate")?;
        if run.objective.needs_energy() && sweep.energy.is_none() {
            return Err(Error::invalid(format!(
                "--simulate {}: that sweep measured no energy, and --objective {} needs it: simulate from a sweep run with --energy",
                rr_format::text::visible_path(path),
                run.objective.name()
            )));
        }
        // The recorded configuration is measured first wherever it lies.
        Table::of_sweep(sweep, path, run, |c| {
            index_of(space, c).is_some() || *c == run.recorded
        })
    }

    /// What a simulated engine (`rr-tui engine --simulate`) answers for the instance of
    /// `descriptor`: the sweep must be of that kernel and recorded configuration.
    pub fn for_engine(path: &Path, descriptor: &rr_format::Descriptor) -> Result<Table> {
        let sweep = read_report(path, "--simulate")?;
        let expected = TuneReport {
            kernel: descriptor.name.clone(),
            recorded: Config::recorded(descriptor),
            trials: Vec::new(),
            ..sweep.clone()
        };
        Table::of_sweep(sweep, path, &expected, |_| true)
    }

    /// The measured trials of `sweep` (read from `path`) that `run` may be answered with and
    /// `keep` takes.
    fn of_sweep(
        sweep: TuneReport,
        path: &Path,
        run: &TuneReport,
        keep: impl Fn(&Config) -> bool,
    ) -> Result<Table> {
        let source = rr_format::text::visible_path(path);
        let device = sweep.devices.first().cloned().unwrap_or(DeviceInfo {
            ordinal: 0,
            name: "unknown".into(),
            sm: 0,
            rated_clock_mhz: 0.0,
        });
        let (verify, timing, energy) = (sweep.verify.clone(), sweep.timing, sweep.energy);
        // Verification and energy are the sweep's, whatever this run's flags say.
        let expected = TuneReport {
            verify: verify.clone(),
            energy,
            ..run.clone()
        };
        let trials = sweep
            .resumable_trials(&expected, path, crate::ReadBack::Simulate)
            .map_err(|e| Error::invalid(format!("--simulate: {e}")))?
            .into_iter()
            .filter(|t| keep(&t.config))
            .map(|mut t| {
                if let Some(m) = t.message.as_mut() {
                    cut(m, MAX_MESSAGE);
                }
                (t.config, t)
            })
            .collect();
        Ok(Table {
            trials,
            device: DeviceInfo {
                name: format!("simulated from {source} ({})", device.name),
                ..device
            },
            source,
            verify,
            timing,
            energy,
        })
    }

    /// The sweep's file, as shown.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The simulated device.
    pub fn device(&self) -> &DeviceInfo {
        &self.device
    }

    /// Whether the sweep measured energy (an engine asked for energy needs it).
    pub fn has_energy(&self) -> bool {
        self.energy.is_some()
    }

    /// Mark `report` as answered from this sweep, with the sweep's verification and timing.
    pub fn label(&self, report: &mut TuneReport) {
        report.simulated_from = Some(self.source.clone());
        report.verify = self.verify.clone();
        report.timing = self.timing;
        report.energy = self.energy;
    }

    /// What the sweep measured for `config`, or a skip saying it did not.
    pub fn answer(&self, config: Config) -> Trial {
        match self.trials.get(&config) {
            Some(t) => Trial {
                recorded: false,
                ..t.clone()
            },
            None => Trial::refused(
                config,
                Status::Skipped,
                format!("not in the simulated sweep {}", self.source),
            ),
        }
    }
}

/// A simulated GPU: answers the scheduler's configurations from the table until it is done.
pub fn work(table: &Table, scheduler: &Mutex<Scheduler>, tx: &Sender<Msg>) {
    let ready = Msg::Ready {
        info: table.device.clone(),
        simulated_from: None,
        carried: None,
    };
    if tx.send(ready).is_err() {
        return;
    }
    loop {
        let next = match scheduler.lock() {
            Ok(mut s) => s.next(),
            Err(_) => return,
        };
        let (index, mut trial) = match next {
            Work::Done => return,
            Work::Skip { index, trial } => (Some(index), *trial),
            Work::Measure {
                index,
                config,
                recorded,
            } => {
                let mut t = table.answer(config);
                t.recorded = recorded;
                (index, t)
            }
        };
        trial.device = Some(table.device.ordinal);
        if !finish(scheduler, tx, index, trial) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_configurations_are_answered_and_others_skipped() {
        let config = |g: u32| Config {
            grid: [g, 1, 1],
            block: [64, 1, 1],
            shared_mem: 0,
            max_registers: None,
            variant: None,
        };
        let mut measured = Trial::new(config(2), Status::Ok);
        measured.recorded = true;
        let table = Table {
            trials: [(config(2), measured)].into_iter().collect(),
            device: DeviceInfo {
                ordinal: 0,
                name: "x".into(),
                sm: 90,
                rated_clock_mhz: 1980.0,
            },
            source: "s.json".into(),
            verify: "bytes".into(),
            timing: TimingPolicy::fixed(1, true),
            energy: None,
        };
        let a = table.answer(config(2));
        assert_eq!((a.status, a.recorded), (Status::Ok, false));
        let b = table.answer(config(3));
        assert_eq!(b.status, Status::Skipped);
        assert_eq!(
            b.message.as_deref(),
            Some("not in the simulated sweep s.json")
        );
    }
}
