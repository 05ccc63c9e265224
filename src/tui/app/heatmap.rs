//! The sweep's heatmap, grid × block, kept up to date as configurations complete: rows are the
//! distinct grids measured so far, columns the distinct blocks, both in ascending order (a
//! random or annealing search finds them in any order; a map whose rows jumped around would
//! not read as a map). Other axes (shared memory, register limits) fold into the cell: it shows
//! the best time of the configurations that share its grid and block.

use std::collections::HashMap;

use rr_engine::tune::{Status, Trial};

/// Levels of the colour scale, fastest first.
pub const LEVELS: usize = 4;

/// One grid × block cell.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HeatCell {
    /// The fastest verified median of the cell's configurations.
    pub best: Option<f64>,
    /// The most serious failure among them, shown when none verified.
    pub failure: Option<Status>,
    /// The recorded configuration is one of them.
    pub recorded: bool,
    pub trials: u32,
}

/// How serious a failure is, to pick what a cell shows when several failed differently.
fn severity(s: Status) -> u8 {
    match s {
        Status::Ok => 0,
        Status::Skipped => 1,
        Status::Invalid => 2,
        Status::VerifyFailed => 3,
        Status::Fault => 4,
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Heatmap {
    pub grids: Vec<[u32; 3]>,
    pub blocks: Vec<[u32; 3]>,
    cells: HashMap<([u32; 3], [u32; 3]), HeatCell>,
    /// The fastest and slowest cell medians (the ends of the colour scale).
    range: Option<(f64, f64)>,
}

/// z, then y, then x: 1-D values sort by x, and `32x1..8` by its y.
fn order(v: &[u32; 3]) -> [u32; 3] {
    [v[2], v[1], v[0]]
}

fn insert_sorted(v: &mut Vec<[u32; 3]>, x: [u32; 3]) {
    if let Err(at) = v.binary_search_by_key(&order(&x), order) {
        v.insert(at, x);
    }
}

impl Heatmap {
    pub fn add(&mut self, t: &Trial) {
        let (g, b) = (t.config.grid, t.config.block);
        insert_sorted(&mut self.grids, g);
        insert_sorted(&mut self.blocks, b);
        let cell = self.cells.entry((g, b)).or_default();
        cell.trials += 1;
        cell.recorded |= t.recorded;
        match t.cost() {
            Some(c) => {
                let old = cell.best;
                if old.is_none_or(|o| c < o) {
                    cell.best = Some(c);
                    self.range = match (self.range, old) {
                        (None, _) => Some((c, c)),
                        // The cell that set the slow end got faster: find the new slow end.
                        (Some((_, hi)), Some(o)) if o >= hi => self.scan_range(),
                        (Some((lo, hi)), _) => Some((lo.min(c), hi.max(c))),
                    };
                }
            }
            None => {
                if cell
                    .failure
                    .is_none_or(|f| severity(t.status) > severity(f))
                {
                    cell.failure = Some(t.status);
                }
            }
        }
    }

    fn scan_range(&self) -> Option<(f64, f64)> {
        self.cells
            .values()
            .filter_map(|c| c.best)
            .fold(None, |r, v| match r {
                None => Some((v, v)),
                Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
            })
    }

    pub fn cell(&self, grid: [u32; 3], block: [u32; 3]) -> Option<&HeatCell> {
        self.cells.get(&(grid, block))
    }

    /// The fastest and slowest cell medians.
    pub fn range(&self) -> Option<(f64, f64)> {
        self.range
    }

    /// The level of a median on the scale, 0 (fastest) to `LEVELS - 1` (slowest). The scale is
    /// logarithmic: a sweep spans orders of magnitude, and twice as slow should look the same
    /// at every speed.
    pub fn level(&self, median: f64) -> usize {
        let Some((lo, hi)) = self.range else { return 0 };
        if hi <= lo || lo <= 0.0 || median <= lo {
            return 0;
        }
        let x = (median.ln() - lo.ln()) / (hi.ln() - lo.ln());
        ((x * LEVELS as f64) as usize).min(LEVELS - 1)
    }
}

/// `X` for one-dimensional values, `XxYxZ` otherwise.
pub fn dims_label(v: [u32; 3]) -> String {
    if v[1] == 1 && v[2] == 1 {
        v[0].to_string()
    } else {
        rr_engine::tune::space::dim(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_engine::replay::stats::Stats;
    use rr_engine::tune::Config;

    fn trial(grid: u32, block: [u32; 3], smem: u32, status: Status, median: f64) -> Trial {
        let mut t = Trial::new(
            Config {
                grid: [grid, 1, 1],
                block,
                shared_mem: smem,
                max_registers: None,
                variant: None,
            },
            status,
        );
        if status == Status::Ok || status == Status::VerifyFailed {
            t.kernel_ns = Some(Stats::of(&[median]));
        }
        t
    }

    #[test]
    fn rows_and_columns_are_sorted_and_cells_keep_the_best() {
        let mut h = Heatmap::default();
        h.add(&trial(64, [256, 1, 1], 0, Status::Ok, 400.0));
        h.add(&trial(8, [32, 2, 1], 0, Status::Ok, 100.0));
        h.add(&trial(8, [32, 1, 1], 0, Status::Fault, 0.0));
        h.add(&trial(64, [256, 1, 1], 1024, Status::Ok, 200.0));
        h.add(&trial(64, [256, 1, 1], 2048, Status::VerifyFailed, 50.0));
        assert_eq!(h.grids, [[8, 1, 1], [64, 1, 1]]);
        assert_eq!(h.blocks, [[32, 1, 1], [256, 1, 1], [32, 2, 1]]);
        let c = h.cell([64, 1, 1], [256, 1, 1]).unwrap();
        assert_eq!(
            (c.best, c.failure, c.trials),
            (Some(200.0), Some(Status::VerifyFailed), 3)
        );
        assert_eq!(
            h.range(),
            Some((100.0, 200.0)),
            "the slow end moved when its cell improved"
        );
        assert_eq!(
            h.cell([8, 1, 1], [32, 1, 1]).unwrap().failure,
            Some(Status::Fault)
        );
        assert_eq!(dims_label([32, 2, 1]), "32x2x1");
        assert_eq!(dims_label([1024, 1, 1]), "1024");
    }

    #[test]
    fn the_scale_is_logarithmic() {
        let mut h = Heatmap::default();
        for (b, t) in [(32, 1000.0), (64, 2000.0), (128, 16000.0)] {
            h.add(&trial(1, [b, 1, 1], 0, Status::Ok, t));
        }
        assert_eq!(h.level(1000.0), 0);
        assert_eq!(h.level(2000.0), 1);
        assert_eq!(h.level(4000.0), 2);
        assert_eq!(h.level(16000.0), LEVELS - 1);
        let mut one = Heatmap::default();
        one.add(&trial(1, [32, 1, 1], 0, Status::Ok, 5.0));
        assert_eq!(one.level(5.0), 0);
    }
}
