//! What one configuration of a sweep gave ([`Trial`]): its status, times, energy and place in
//! the space. Plain data below the report (`trial`), the objective and the shard merge, which
//! all read it.

use serde::{Deserialize, Serialize};

use super::config::Config;
use crate::replay::stats::Stats;
use crate::replay::timing::StopReason;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured and verified (or verification off).
    Ok,
    /// Measured, but the memory after it differs from the recorded output.
    VerifyFailed,
    /// The driver refused the launch (too many resources, bad geometry); nothing ran.
    Invalid,
    /// The kernel faulted; the engine process was restarted.
    Fault,
    /// Not launched: it breaks a hardware or recorded limit.
    Skipped,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::VerifyFailed => "verify failed",
            Status::Invalid => "invalid",
            Status::Fault => "fault",
            Status::Skipped => "skipped",
        }
    }
}

/// One measured (or refused) configuration. Read back (`tune --resume`) through [`TrialWire`]:
/// a flattened struct makes serde buffer every field of a trial, unknown ones included, so a
/// hostile report file could cost many times its size in memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "TrialWire")]
pub struct Trial {
    #[serde(flatten)]
    pub config: Config,
    pub status: Status,
    /// Why it failed, was refused or skipped (control characters made visible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Kernel time in ns over the kept samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_ns: Option<Stats>,
    /// SM clock over the kept samples, in MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_mhz: Option<Stats>,
    /// Samples discarded because the clock was throttled.
    #[serde(default)]
    pub discarded: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopReason>,
    /// Registers per thread as compiled for this configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registers: Option<u32>,
    /// Resident blocks per SM the driver computes for this block and shared memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks_per_sm: Option<u32>,
    /// The CUDA device that measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<i32>,
    /// Time the engine spent on this configuration: samples, restores, recompilation and
    /// verification (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_ms: Option<f64>,
    /// Of which reading the memory back and verifying it (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_ms: Option<f64>,
    /// Whether this is the recorded configuration.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recorded: bool,
    /// Its position in the sweep's space (`tune merge` puts shards in this order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// Energy per execution (`tune --energy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<TrialEnergy>,
    /// On the Pareto front of time against energy (set by [`TuneReport::summarise`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pareto: bool,
}

/// What NVML measured for one configuration: the part of [`crate::replay::outcome::Energy`] a
/// sweep keeps per row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialEnergy {
    /// Joules per execution.
    pub joules: f64,
    /// Average power while it ran back to back (W).
    pub power_w: f64,
    /// Relative spread of the power over groups of counter windows.
    pub noise: f64,
    /// Counter windows measured.
    pub windows: usize,
}

impl TrialEnergy {
    pub fn of(e: &crate::replay::outcome::Energy) -> TrialEnergy {
        TrialEnergy {
            joules: e.joules,
            power_w: e.power_w,
            noise: e.noise,
            windows: e.windows,
        }
    }

    /// Values a measurement can give (a report read back may hold anything): a positive
    /// energy up to a megajoule per execution, a power up to a megawatt, a noise up to 100 times
    /// the mean — beyond, the report's arithmetic would run into infinities.
    pub fn is_plausible(&self) -> bool {
        let within = |v: f64, lo: f64, hi: f64| v.is_finite() && v >= lo && v <= hi;
        self.joules > 0.0
            && within(self.joules, 0.0, 1e6)
            && within(self.power_w, 0.0, 1e6)
            && within(self.noise, 0.0, 100.0)
    }
}

/// A [`Trial`] as its JSON holds it: the configuration's fields inline, unknown fields
/// skipped as they stream by.
#[derive(Deserialize)]
struct TrialWire {
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem: u32,
    #[serde(default)]
    max_registers: Option<u32>,
    #[serde(default)]
    variant: Option<u32>,
    status: Status,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    kernel_ns: Option<Stats>,
    #[serde(default)]
    clock_mhz: Option<Stats>,
    #[serde(default)]
    discarded: usize,
    #[serde(default)]
    stop: Option<StopReason>,
    #[serde(default)]
    registers: Option<u32>,
    #[serde(default)]
    blocks_per_sm: Option<u32>,
    #[serde(default)]
    device: Option<i32>,
    #[serde(default)]
    engine_ms: Option<f64>,
    #[serde(default)]
    verify_ms: Option<f64>,
    #[serde(default)]
    recorded: bool,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    energy: Option<TrialEnergy>,
    #[serde(default)]
    pareto: bool,
}

impl From<TrialWire> for Trial {
    fn from(w: TrialWire) -> Trial {
        Trial {
            config: Config {
                grid: w.grid,
                block: w.block,
                shared_mem: w.shared_mem,
                max_registers: w.max_registers,
                variant: w.variant,
            },
            status: w.status,
            message: w.message,
            kernel_ns: w.kernel_ns,
            clock_mhz: w.clock_mhz,
            discarded: w.discarded,
            stop: w.stop,
            registers: w.registers,
            blocks_per_sm: w.blocks_per_sm,
            device: w.device,
            engine_ms: w.engine_ms,
            verify_ms: w.verify_ms,
            recorded: w.recorded,
            index: w.index,
            energy: w.energy,
            pareto: w.pareto,
        }
    }
}

impl Trial {
    /// A configuration with nothing measured yet.
    pub fn new(config: Config, status: Status) -> Trial {
        Trial {
            config,
            status,
            message: None,
            kernel_ns: None,
            clock_mhz: None,
            discarded: 0,
            stop: None,
            registers: None,
            blocks_per_sm: None,
            device: None,
            engine_ms: None,
            verify_ms: None,
            recorded: false,
            index: None,
            energy: None,
            pareto: false,
        }
    }

    /// A configuration that was not measured, and why.
    pub fn refused(config: Config, status: Status, message: String) -> Trial {
        Trial {
            message: Some(message),
            ..Trial::new(config, status)
        }
    }

    /// The cost a search minimises: the median kernel time of a verified configuration.
    pub fn cost(&self) -> Option<f64> {
        match (self.status, &self.kernel_ns) {
            (Status::Ok, Some(k)) if k.count > 0 => Some(k.median),
            _ => None,
        }
    }

    /// Joules per execution, when measured.
    pub fn joules(&self) -> Option<f64> {
        self.energy.map(|e| e.joules)
    }

    /// Relative standard deviation of the kernel time.
    pub fn noise(&self) -> Option<f64> {
        self.kernel_ns
            .filter(|k| k.count > 1 && k.mean > 0.0)
            .map(|k| k.stddev / k.mean)
    }
}
