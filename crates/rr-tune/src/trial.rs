//! The sweep's report: JSON with the measurement metadata (the same file is read back by
//! `--resume`), CSV with Mneme's columns first (`report_csv`). It sits above what it holds:
//! the trials (`measurement`), the objective, the strategy and the shard (`part`).

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::defines::Defines;
use super::objective::Objective;
use super::part::Shard;
use super::space::{Config, Space};
use super::strategy::StrategyKind;
use rr_engine::replay::timing::TimingPolicy;

// What the report is made of, where the rest of the workspace finds it (`tune::trial::…`).
pub use super::axis::Axes;
pub use super::limits::{
    plausible_time, MAX_NAME_BYTES, MAX_SKIPPED_LISTED, MAX_TRIALS, MIN_KERNEL_NS,
};
pub use rr_engine::replay::variant::trial::{Status, Trial, TrialEnergy};

/// The device that measured, as the report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub ordinal: i32,
    pub name: String,
    pub sm: u32,
    pub rated_clock_mhz: f64,
}

/// What a sweep's report is read back for, which says what to do with one that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadBack {
    /// `tune --resume`: continued in the same `--json-out` file.
    Resume,
    /// `tune --simulate`: answered from, in place of a GPU.
    Simulate,
}

impl ReadBack {
    fn choose_another(self) -> &'static str {
        match self {
            ReadBack::Resume => "choose another --json-out file",
            ReadBack::Simulate => "choose another sweep for --simulate",
        }
    }
}

/// Everything a sweep produced: the JSON output, and what `--resume` reads back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TuneReport {
    pub tool: String,
    pub version: String,
    pub descriptor: String,
    /// At most [`MAX_NAME_BYTES`] when read back: it goes into every CSV row.
    #[serde(deserialize_with = "rr_engine::bounded::text::<_, MAX_NAME_BYTES>")]
    pub kernel: String,
    #[serde(deserialize_with = "rr_engine::bounded::at_most::<_, _, 1024>")]
    pub devices: Vec<DeviceInfo>,
    pub strategy: StrategyKind,
    pub seed: u64,
    #[serde(default)]
    pub budget: Option<u64>,
    #[serde(default)]
    pub time_limit_s: Option<f64>,
    pub timing: TimingPolicy,
    /// What `best` minimises (`--objective`).
    #[serde(default)]
    pub objective: Objective,
    /// Whether every configuration's energy is measured (`--energy`), and for how long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<rr_engine::replay::outcome::EnergyPolicy>,
    /// "bytes", a typed comparison, or "off".
    pub verify: String,
    pub axes: Axes,
    pub space_size: u64,
    pub recorded: Config,
    /// At most [`MAX_TRIALS`] when read back: the reading stops there (`bounded::at_most`).
    #[serde(deserialize_with = "rr_engine::bounded::at_most::<_, _, MAX_TRIALS>")]
    pub trials: Vec<Trial>,
    #[serde(default)]
    pub best: Option<Trial>,
    /// Recorded median / best median.
    #[serde(default)]
    pub speedup: Option<f64>,
    /// Recorded energy per execution / best's (with `--energy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_ratio: Option<f64>,
    /// The Pareto front of time against energy, as indices into `trials`, fastest first.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "rr_engine::bounded::at_most::<_, _, MAX_TRIALS>"
    )]
    pub pareto: Vec<usize>,
    #[serde(default)]
    pub elapsed_s: f64,
    /// Measured configurations per second of this run (resumed ones not counted), from the
    /// first engine ready to the last result.
    #[serde(default)]
    pub configs_per_s: f64,
    /// Seconds until the first engine was ready (driver start, reservation, first restore).
    #[serde(default)]
    pub engine_start_s: f64,
    /// Skipped configurations beyond the ones listed in `trials`.
    #[serde(default)]
    pub skipped_unlisted: u64,
    /// The sweep whose measurements answered this one (`tune --simulate`): nothing here was
    /// measured, and such a report is never resumed or simulated from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_from: Option<String>,
    /// Compile-time tuning: the source the variants come from, with a hash of its text (a
    /// changed source is another sweep), the define axes, and how compiling went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceInfo>,
    #[serde(default, skip_serializing_if = "Defines::is_empty")]
    pub defines: Defines,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile: Option<CompileStats>,
    /// The part of the sweep this run measured (`--shard K/N`; `tune merge` joins them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// Where a sweep's variants come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub path: String,
    /// XXH3-128 of the text, hex.
    pub hash: String,
    /// NVRTC options given beyond the defines.
    #[serde(default, deserialize_with = "rr_engine::bounded::at_most::<_, _, 256>")]
    pub options: Vec<String>,
}

/// How compiling the variants went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompileStats {
    /// The GPU architecture compiled for (`sm_90`).
    pub arch: String,
    pub variants: usize,
    /// Compiled in this run / found in the cache / refused by the compiler.
    pub compiled: usize,
    pub cached: usize,
    pub failed: usize,
    pub threads: usize,
    /// Wall time from the first compilation to the last.
    pub seconds: f64,
    /// Compiled variants per second of that wall time.
    pub per_s: f64,
    /// Seconds GPU workers waited for a variant to be compiled, and that over the sweep's GPU
    /// time (workers × sweep seconds).
    pub gpu_wait_s: f64,
    pub gpu_idle_fraction: f64,
}

impl TuneReport {
    /// An empty report of a sweep of `kernel` (exhaustive, verified byte for byte, until the
    /// caller says otherwise).
    pub fn new(descriptor: String, kernel: String, recorded: Config, timing: TimingPolicy) -> Self {
        TuneReport {
            tool: "rr-tui tune".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            descriptor,
            kernel,
            devices: Vec::new(),
            strategy: StrategyKind::Exhaustive,
            seed: 0,
            budget: None,
            time_limit_s: None,
            timing,
            objective: Objective::Time,
            energy: None,
            verify: "bytes".into(),
            axes: Axes::default(),
            space_size: 0,
            recorded,
            trials: Vec::new(),
            best: None,
            speedup: None,
            energy_ratio: None,
            pareto: Vec::new(),
            elapsed_s: 0.0,
            configs_per_s: 0.0,
            engine_start_s: 0.0,
            skipped_unlisted: 0,
            simulated_from: None,
            source: None,
            defines: Defines::default(),
            compile: None,
            shard: None,
        }
    }

    /// Recompute `best` (by the objective), `speedup`, `energy_ratio` and the Pareto front from
    /// the trials.
    pub fn summarise(&mut self) {
        self.best = self.ranking(1).first().map(|t| (*t).clone());
        let recorded = self.trials.iter().find(|t| t.recorded);
        let ratio = |r: Option<f64>, b: Option<f64>| match (r, b) {
            (Some(r), Some(b)) if b > 0.0 => Some(r / b),
            _ => None,
        };
        let best = self.best.as_ref();
        self.speedup = ratio(recorded.and_then(Trial::cost), best.and_then(Trial::cost));
        self.energy_ratio = ratio(
            recorded.and_then(Trial::joules),
            best.and_then(Trial::joules),
        );
        self.pareto = super::objective::pareto_front(&self.trials);
        for t in &mut self.trials {
            t.pareto = false;
        }
        for &i in &self.pareto {
            self.trials[i].pareto = true;
        }
        if let Some(b) = self.best.as_mut() {
            b.pareto = self
                .pareto
                .iter()
                .any(|&i| self.trials[i].config == b.config);
        }
    }

    /// The best `n` trials by the objective, best first (verified ones whose objective was
    /// measured).
    pub fn ranking(&self, n: usize) -> Vec<&Trial> {
        let o = self.objective;
        let mut ok: Vec<(&Trial, (f64, f64))> = self
            .trials
            .iter()
            .filter_map(|t| Some((t, o.rank(t)?)))
            .collect();
        ok.sort_by(|a, b| Objective::cmp_rank(a.1, b.1));
        ok.truncate(n);
        ok.into_iter().map(|(t, _)| t).collect()
    }

    /// Whether a report read back (for `purpose`) belongs to a sweep of `other`'s instance
    /// with the same verification, and the trials worth keeping from it: measured ones (a
    /// fault, refusal or skip is decided again), well-formed, one per configuration, the
    /// recorded flag only on the recorded configuration.
    pub fn resumable_trials(
        self,
        other: &TuneReport,
        file: &Path,
        purpose: ReadBack,
    ) -> Result<Vec<Trial>, String> {
        let shown = rr_format::text::visible_path(file);
        let choose_another = purpose.choose_another();
        if let Some(from) = &self.simulated_from {
            return Err(format!(
                "{shown} was simulated from {}, not measured: {choose_another}",
                rr_format::text::visible(from)
            ));
        }
        if self.kernel != other.kernel {
            return Err(format!(
                "{shown} holds a sweep of another kernel ({}); {choose_another}",
                rr_format::text::visible(&self.kernel)
            ));
        }
        if self.recorded != other.recorded {
            let c = &self.recorded;
            return Err(format!(
                "{shown} holds a sweep of another instance of {} (recorded at grid {}x{}x{}, block {}x{}x{}); {choose_another}",
                rr_format::text::visible(&self.kernel),
                c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]
            ));
        }
        if self.source != other.source || self.defines != other.defines {
            return Err(format!(
                "{shown} holds a sweep of other compile-time variants (source, its text, options or defines differ); {choose_another}"
            ));
        }
        if let Some(e) = self.energy.filter(|e| !e.is_plausible()) {
            return Err(format!(
                "{shown} says energy was measured for {} to {} s a configuration, which no run does",
                e.min_seconds, e.max_seconds
            ));
        }
        if let (Some(was), Some(now)) = (self.energy, other.energy) {
            if was != now {
                return Err(format!(
                    "{shown} measured energy for at least {} s a configuration and this sweep does for {} s: give the same --energy-seconds, or {choose_another}",
                    was.min_seconds, now.min_seconds
                ));
            }
        }
        if self.verify != other.verify {
            return Err(format!(
                "{shown} was verified as {} and this sweep verifies as {}: {choose_another}",
                rr_format::text::visible(&self.verify),
                other.verify
            ));
        }
        if self.trials.len() > MAX_TRIALS {
            return Err(format!(
                "{shown} holds {} trials, more than a sweep makes ({MAX_TRIALS})",
                self.trials.len()
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let recorded = other.recorded;
        Ok(self
            .trials
            .into_iter()
            .filter(|t| matches!(t.status, Status::Ok | Status::VerifyFailed))
            .filter(|t| t.kernel_ns.as_ref().is_some_and(plausible_time))
            // A sweep measuring energy measures again a verified configuration measured without
            // (or with forged values); one that failed to verify has no energy to measure.
            .filter(|t| {
                other.energy.is_none()
                    || t.status != Status::Ok
                    || t.energy.is_some_and(|e| e.is_plausible())
            })
            .filter(|t| seen.insert(t.config))
            .map(|mut t| {
                t.recorded = t.config == recorded;
                // Decided again over this sweep's trials (`summarise`).
                t.pareto = false;
                // Forged, or measured while this sweep measures none: not this report's.
                if other.energy.is_none() || t.energy.is_some_and(|e| !e.is_plausible()) {
                    t.energy = None;
                }
                t
            })
            .collect())
    }

    /// The report as JSON: indented for reading, compact once it is large.
    pub fn to_json(&self) -> Vec<u8> {
        let mut v = Vec::new();
        // Writing into memory fails only where serialising does, which a report never does.
        let _ = self.write_json(&mut v);
        v
    }

    /// [`TuneReport::to_json`] into `w` as it is made, never whole in memory.
    pub fn write_json(&self, mut w: impl Write) -> std::io::Result<()> {
        if self.trials.len() > COMPACT_ABOVE {
            serde_json::to_writer(&mut w, self)
        } else {
            serde_json::to_writer_pretty(&mut w, self)
        }?;
        w.write_all(b"\n")
    }
}

/// Reports with more trials are written without indentation (a third of the size).
const COMPACT_ABOVE: usize = 10_000;

/// The index of `config` in `space`, when it is one of its configurations.
pub fn index_of(space: &Space, config: &Config) -> Option<u64> {
    space.index_of(config)
}

#[cfg(test)]
mod tests {
    use super::super::space::{parse_dims, parse_grid, Rules};
    use super::*;
    use rr_engine::replay::stats::Stats;

    fn trial(block: u32, status: Status, median: f64, recorded: bool) -> Trial {
        let mut t = Trial::new(
            Config {
                grid: [64, 1, 1],
                block: [block, 1, 1],
                shared_mem: 0,
                max_registers: None,
                variant: None,
            },
            status,
        );
        t.kernel_ns = Some(Stats::of(&[median * 0.99, median, median * 1.01]));
        t.recorded = recorded;
        t
    }

    fn report(trials: Vec<Trial>) -> TuneReport {
        let mut r = TuneReport::new(
            "x.json".into(),
            "k".into(),
            trials[0].config,
            TimingPolicy::fixed(10, true),
        );
        r.space_size = 3;
        r.trials = trials;
        r
    }

    /// Trials read back as they were written; fields a newer (or hostile) writer added are
    /// skipped as they stream by rather than buffered.
    #[test]
    fn trials_round_trip_and_unknown_fields_are_skipped() {
        let mut r = report(vec![
            trial(128, Status::Ok, 2000.0, true),
            trial(256, Status::VerifyFailed, 500.0, false),
        ]);
        r.summarise();
        let text = serde_json::to_string(&r).unwrap();
        let back: TuneReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back.trials, r.trials);
        assert_eq!(back.best, r.best);
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["trials"][0]["padding"] = serde_json::json!(vec!["x"; 1000]);
        let back: TuneReport = serde_json::from_value(v).unwrap();
        assert_eq!(back.trials, r.trials);
    }

    #[test]
    fn best_ignores_failures_and_speedup_is_against_the_recorded_one() {
        let mut r = report(vec![
            trial(128, Status::Ok, 2000.0, true),
            trial(256, Status::VerifyFailed, 500.0, false),
            trial(512, Status::Ok, 1000.0, false),
        ]);
        r.summarise();
        assert_eq!(r.best.as_ref().unwrap().config.block[0], 512);
        assert!((r.speedup.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(r.ranking(5).len(), 2);
    }

    #[test]
    fn json_round_trips_and_csv_has_mnemes_columns_first() {
        let mut r = report(vec![trial(128, Status::Ok, 2000.0, true)]);
        r.summarise();
        let back: TuneReport = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!(back.trials, r.trials);
        let csv = String::from_utf8(r.to_csv().unwrap()).unwrap();
        let mut lines = csv.lines();
        assert!(lines.next().unwrap().starts_with(
            "Kernel-Name,GridDim-X,BlockDim-X,MaxThreads,MinBlock,Duration (ms),Duration (stdev),Verify,GridDim-Y"
        ));
        assert!(lines.next().unwrap().starts_with("k,64,128,128,,0.002000,"));
        let mut other = r.clone();
        other.kernel = "other".into();
        assert!(r
            .clone()
            .resumable_trials(&other, Path::new("t.json"), ReadBack::Resume)
            .is_err());
        let mut forged = r.clone();
        forged.trials.push(forged.trials[0].clone());
        forged.trials[0].kernel_ns = Some(Stats::of(&[-1e308]));
        let kept = forged
            .resumable_trials(&r, Path::new("t.json"), ReadBack::Resume)
            .unwrap();
        assert_eq!(
            kept.len(),
            1,
            "a duplicate and an implausible time are dropped"
        );
    }

    /// A sweep measuring energy keeps a configuration that failed to verify (it has no energy
    /// to measure) and measures again a verified one measured without energy or with forged
    /// values; a report's Pareto flags are never taken as they are.
    #[test]
    fn resuming_with_energy_keeps_failures_and_remeasures_what_lacks_energy() {
        let mut with = trial(512, Status::Ok, 800.0, false);
        with.energy = Some(TrialEnergy {
            joules: 0.2,
            power_w: 300.0,
            noise: 0.01,
            windows: 5,
        });
        with.pareto = true;
        let mut forged = trial(1024, Status::Ok, 700.0, false);
        forged.energy = Some(TrialEnergy {
            joules: -1.0,
            ..with.energy.unwrap()
        });
        let previous = report(vec![
            trial(128, Status::Ok, 2000.0, true),
            trial(256, Status::VerifyFailed, 500.0, false),
            with,
            forged,
        ]);
        let mut energy = previous.clone();
        energy.energy = Some(rr_engine::replay::outcome::EnergyPolicy::sweep(1.0));
        let kept = previous
            .clone()
            .resumable_trials(&energy, Path::new("t.json"), ReadBack::Resume)
            .unwrap();
        let blocks: Vec<u32> = kept.iter().map(|t| t.config.block[0]).collect();
        assert_eq!(blocks, [256, 512]);
        assert!(kept.iter().all(|t| !t.pareto));
        // Without energy, everything measured is kept, forged energy dropped.
        let kept = previous
            .clone()
            .resumable_trials(&previous, Path::new("t.json"), ReadBack::Resume)
            .unwrap();
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[3].energy, None);
    }

    #[test]
    fn index_of_finds_configs_of_the_space() {
        let t = trial(256, Status::Ok, 1.0, false);
        let rules = Rules::hardware_only(t.config);
        let s = Space::new(
            rules,
            parse_grid("32,64").unwrap(),
            parse_dims("128,256").unwrap(),
            vec![],
            vec![],
        )
        .unwrap();
        let i = index_of(&s, &t.config).unwrap();
        assert_eq!(s.config(i), t.config);
        let mut other = t.config;
        other.shared_mem = 4;
        assert_eq!(index_of(&s, &other), None);
    }
}
