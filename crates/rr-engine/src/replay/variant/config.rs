//! One launch configuration of a sweep: what a sweep's events name for each trial.

use std::fmt;

use rr_format::Descriptor;
use serde::{Deserialize, Serialize};

use super::Defines;

/// `16x8x1` as the axes and reports write a launch dimension.
pub fn dim(v: [u32; 3]) -> String {
    format!("{}x{}x{}", v[0], v[1], v[2])
}

/// One launch configuration of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Config {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    /// `CU_JIT_MAX_REGISTERS` (None: as compiled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_registers: Option<u32>,
    /// The compile-time variant (a combination of the sweep's define axes; None: the recorded
    /// image).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<u32>,
}

impl Config {
    /// The recorded launch.
    pub fn recorded(d: &Descriptor) -> Config {
        Config {
            grid: d.grid(),
            block: d.block(),
            shared_mem: d.shared_memory_size,
            max_registers: None,
            variant: None,
        }
    }

    /// This configuration in words, its variant as its define values (`TILE=16 grid …`).
    pub fn describe(&self, defines: &Defines) -> String {
        let mut plain = *self;
        plain.variant = None;
        match self.variant {
            Some(v) if (v as usize) < defines.variants() && !defines.is_empty() => {
                format!("{} {plain}", defines.describe(v as usize))
            }
            Some(_) => format!("{plain} (source)"),
            None => plain.to_string(),
        }
    }

    pub fn block_threads(&self) -> u64 {
        rr_format::limits::block_threads(self.block)
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "grid {} block {} smem {}",
            dim(self.grid),
            dim(self.block),
            self.shared_mem
        )?;
        if let Some(r) = self.max_registers {
            write!(f, " regs {r}")?;
        }
        if let Some(v) = self.variant {
            write!(f, " variant {v}")?;
        }
        Ok(())
    }
}
