//! The report as CSV: Mneme's columns first, then the 3-D dimensions, the measurement details
//! and a column per define.

use std::io::Write;

use super::objective::Objective;
use super::trial::TuneReport;
use rr_engine::replay::stats::Stats;
use rr_engine::replay::variant::trial::{Status, Trial, TrialEnergy};

impl TuneReport {
    /// CSV: Mneme's columns first, then the 3-D dimensions and the measurement details.
    pub fn to_csv(&self) -> Result<Vec<u8>, csv::Error> {
        let mut v = Vec::new();
        self.write_csv(&mut v)?;
        Ok(v)
    }

    /// [`TuneReport::to_csv`] into `w` row by row: the kernel's name is in every row, so the CSV
    /// can be many times the size of the report.
    pub fn write_csv(&self, w: impl Write) -> Result<(), csv::Error> {
        let mut w = csv::Writer::from_writer(w);
        // Compile-time tuning adds a column per define (empty for the recorded image).
        let names = self.defines.axes.iter().map(|a| a.name.as_str());
        w.write_record(CSV_HEADER.iter().copied().chain(names))?;
        for t in &self.trials {
            let mut row = csv_row(&self.kernel, t);
            let values = t.config.variant.map(|v| self.defines.values(v as usize));
            for i in 0..self.defines.axes.len() {
                let value = values.as_ref().and_then(|v| v.get(i)).map(|(_, x)| *x);
                row.push(value.unwrap_or_default().to_string());
            }
            w.write_record(row)?;
        }
        w.flush()?;
        Ok(())
    }
}

pub const CSV_HEADER: [&str; 30] = [
    "Kernel-Name",
    "GridDim-X",
    "BlockDim-X",
    "MaxThreads",
    "MinBlock",
    "Duration (ms)",
    "Duration (stdev)",
    "Verify",
    "GridDim-Y",
    "GridDim-Z",
    "BlockDim-Y",
    "BlockDim-Z",
    "SharedMem",
    "MaxRegisters",
    "Registers",
    "Median (ms)",
    "Min (ms)",
    "Max (ms)",
    "Noise (%)",
    "Samples",
    "Discarded",
    "Clock (MHz)",
    "Status",
    "Device",
    "Recorded",
    "Energy (mJ)",
    "Power (W)",
    "Energy noise (%)",
    "EDP (J*s)",
    "Pareto",
];

fn csv_row(kernel: &str, t: &Trial) -> Vec<String> {
    let ms = |f: fn(&Stats) -> f64| {
        t.kernel_ns
            .map(|k| format!("{:.6}", f(&k) / 1e6))
            .unwrap_or_default()
    };
    let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    let energy = |f: fn(&TrialEnergy) -> String| t.energy.as_ref().map(f).unwrap_or_default();
    let c = &t.config;
    vec![
        kernel.to_string(),
        c.grid[0].to_string(),
        c.block[0].to_string(),
        // Mneme's launch bounds: the threads per block, and the blocks per SM that reside.
        c.block_threads().to_string(),
        opt(t.blocks_per_sm),
        ms(|k| k.mean),
        ms(|k| k.stddev),
        // Mneme: 0 = correct.
        if t.status == Status::Ok { "0" } else { "1" }.to_string(),
        c.grid[1].to_string(),
        c.grid[2].to_string(),
        c.block[1].to_string(),
        c.block[2].to_string(),
        c.shared_mem.to_string(),
        opt(c.max_registers),
        opt(t.registers),
        ms(|k| k.median),
        ms(|k| k.min),
        ms(|k| k.max),
        t.noise()
            .map(|n| format!("{:.3}", n * 100.0))
            .unwrap_or_default(),
        t.kernel_ns.map(|k| k.count.to_string()).unwrap_or_default(),
        t.discarded.to_string(),
        t.clock_mhz
            .map(|c| format!("{:.0}", c.median))
            .unwrap_or_default(),
        t.status.label().to_string(),
        t.device.map(|d| d.to_string()).unwrap_or_default(),
        if t.recorded { "1" } else { "0" }.to_string(),
        energy(|e| format!("{:.6}", e.joules * 1e3)),
        energy(|e| format!("{:.2}", e.power_w)),
        energy(|e| format!("{:.3}", e.noise * 100.0)),
        Objective::Edp
            .of(t)
            .map(|v| format!("{v:.6e}"))
            .unwrap_or_default(),
        if t.pareto { "1" } else { "0" }.to_string(),
    ]
}
