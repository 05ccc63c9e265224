//! The sweep's results as they arrive: a line each, the report kept, the strategy told the
//! cost, and the output files rewritten now and then. Saving never ends a sweep: a failed save
//! is a warning, and the last one decides the exit.

use std::time::{Duration, Instant};

use crate::trial::{DeviceInfo, MAX_SKIPPED_LISTED};
use crate::{Status, Trial, TuneReport};

use super::output::SweepOutput;
use super::report_files;
use crate::job::TuneJob;
use rr_engine::{Error, Result};

/// Files are rewritten at most this often, and never more than 5 % of the time: a save of a
/// large report takes a while, and saving continuously would stall the sweep.
const SAVE_EVERY: Duration = Duration::from_secs(1);
const SAVE_SHARE: u32 = 20;

pub struct Collector<'a> {
    args: &'a TuneJob,
    pub report: TuneReport,
    printer: &'a dyn SweepOutput,
    planned: u64,
    pub first_ready: Option<Instant>,
    pub last_result: Instant,
    /// Configurations measured by this run (not resumed, not skipped).
    pub measured: u64,
    skipped_listed: usize,
    next_save: Instant,
    save_error: Option<String>,
    pub gone: Vec<i32>,
    /// Why an engine refused the instance itself, and its GPU (the first said), when one did.
    pub refused: Option<(i32, String)>,
}

impl<'a> Collector<'a> {
    pub fn new(
        args: &'a TuneJob,
        report: TuneReport,
        printer: &'a dyn SweepOutput,
        planned: u64,
    ) -> Self {
        let skipped_listed = report
            .trials
            .iter()
            .filter(|t| t.status == Status::Skipped)
            .count();
        Collector {
            args,
            report,
            printer,
            planned,
            first_ready: None,
            last_result: Instant::now(),
            measured: 0,
            skipped_listed,
            next_save: Instant::now() + SAVE_EVERY,
            save_error: None,
            gone: Vec::new(),
            refused: None,
        }
    }

    pub fn ready(
        &mut self,
        info: DeviceInfo,
        simulated_from: Option<String>,
        carried: Option<&super::msg::Carried>,
    ) {
        self.first_ready.get_or_insert_with(Instant::now);
        // Answers of a simulated engine are no measurements: never resumed or simulated from.
        if let Some(from) = simulated_from {
            self.report.simulated_from.get_or_insert(from);
        }
        if !self
            .report
            .devices
            .iter()
            .any(|x| x.ordinal == info.ordinal)
        {
            self.printer.device(&info, self.unit(), carried);
            self.report.devices.push(info);
        }
    }

    pub fn gone(&mut self, device: i32, why: &str) {
        self.printer
            .warning(&format!("{} {device} given up: {why}", self.unit()));
        self.gone.push(device);
    }

    /// The engine of `device` refused the instance: said once, as the sweep's error when nothing
    /// ran (every engine refuses the same record), else after the sweep ([`Collector::said_refused`]).
    pub fn refused(&mut self, device: i32, why: String) {
        self.gone.push(device);
        self.refused.get_or_insert((device, why));
    }

    /// A refusal said as a warning, for a sweep that went on without the GPUs that refused.
    pub fn said_refused(&self) {
        if let Some((device, why)) = &self.refused {
            self.printer
                .warning(&format!("{} {device} given up: {why}", self.unit()));
        }
    }

    /// What a worker drives: a GPU here, or an engine through a hub.
    fn unit(&self) -> &'static str {
        if self.args.engine_hub.is_some() {
            "engine"
        } else {
            "GPU"
        }
    }

    pub fn trial(&mut self, trial: Trial) {
        if trial.status == Status::Skipped {
            // Skips cost nothing to find again: a space of millions lists only the first.
            if self.skipped_listed >= MAX_SKIPPED_LISTED {
                self.report.skipped_unlisted += 1;
                return;
            }
            self.skipped_listed += 1;
        } else {
            self.measured += 1;
            self.last_result = Instant::now();
        }
        self.printer.trial(
            &trial,
            &self.report,
            self.report.trials.len() + 1,
            self.planned,
        );
        self.report.trials.push(trial);
        if Instant::now() >= self.next_save {
            self.report.summarise();
            let t = Instant::now();
            self.save();
            self.next_save = Instant::now() + SAVE_EVERY.max(t.elapsed() * SAVE_SHARE);
        }
    }

    /// Write the files; a failure is said once and remembered.
    fn save(&mut self) {
        if let Err(e) = save(self.args, &self.report) {
            let e = e.to_string();
            if self.save_error.as_ref() != Some(&e) {
                self.printer.warning(&format!(
                    "{e} (the sweep goes on; the results are kept in memory)"
                ));
            }
            self.save_error = Some(e);
        } else {
            self.save_error = None;
        }
    }

    /// The final report and files: an error when the last save failed.
    pub fn finish(&mut self, started: Instant) -> Result<()> {
        let elapsed = self.sweep_seconds();
        let r = &mut self.report;
        r.engine_start_s = self
            .first_ready
            .map_or(0.0, |t| t.duration_since(started).as_secs_f64());
        r.elapsed_s = started.elapsed().as_secs_f64();
        r.configs_per_s = if elapsed > 0.0 {
            self.measured as f64 / elapsed
        } else {
            0.0
        };
        r.summarise();
        // A shard with no configuration of its own still says so: `tune merge` needs every part.
        if self.report.trials.is_empty() && self.report.shard.is_none() {
            return Ok(());
        }
        self.save();
        match &self.save_error {
            Some(e) => Err(Error::Failed(e.clone())),
            None => Ok(()),
        }
    }

    /// From the first ready engine to the last result.
    pub fn sweep_seconds(&self) -> f64 {
        self.first_ready.map_or(0.0, |t| {
            self.last_result.saturating_duration_since(t).as_secs_f64()
        })
    }
}

fn save(a: &TuneJob, report: &TuneReport) -> Result<()> {
    if let Some(p) = a.report_file() {
        report_files::write_streamed(p, report_files::Existing::Replace, |w| report.write_json(w))?;
    }
    if let Some(p) = &a.csv {
        report_files::write_streamed(p, report_files::Existing::Replace, |w| {
            Ok(report.write_csv(w)?)
        })?;
    }
    Ok(())
}
