//! The sweep's heatmap, kept up to date as configurations complete: rows are the distinct values
//! of one axis measured so far (the grid unless `a` picks another), columns those of another
//! (the block), both in ascending order (a random or annealing search finds them in any order;
//! a map whose rows jumped around would not read as a map). Other axes fold into the cell: it
//! shows the best time of the configurations that share its row and column.

use std::collections::HashMap;

use rr_tune::defines::Defines;
use rr_tune::{Config, Objective, Status, Trial};

/// An axis the heatmap can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeatAxis {
    Grid,
    Block,
    SharedMem,
    Registers,
    /// A define axis of compile-time tuning, by position.
    Define(usize),
}

impl HeatAxis {
    pub fn name(self, defines: &Defines) -> String {
        match self {
            HeatAxis::Grid => "grid".into(),
            HeatAxis::Block => "block".into(),
            HeatAxis::SharedMem => "smem".into(),
            HeatAxis::Registers => "regs".into(),
            HeatAxis::Define(i) => defines.axes.get(i).map_or_else(
                || format!("define {i}"),
                |a| rr_format::text::visible(&a.name).into_owned(),
            ),
        }
    }

    /// Every axis of a sweep with these defines.
    pub fn all(defines: &Defines) -> Vec<HeatAxis> {
        let mut v = vec![
            HeatAxis::Grid,
            HeatAxis::Block,
            HeatAxis::SharedMem,
            HeatAxis::Registers,
        ];
        v.extend((0..defines.axes.len()).map(HeatAxis::Define));
        v
    }
}

/// One row or column: how it sorts, and what it says.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeatKey {
    order: [u64; 3],
    pub label: String,
}

impl HeatKey {
    fn dims(v: [u32; 3]) -> HeatKey {
        // z, then y, then x: 1-D values sort by x, and `32x1..8` by its y.
        HeatKey {
            order: [v[2] as u64, v[1] as u64, v[0] as u64],
            label: dims_label(v),
        }
    }

    fn scalar(n: u64, label: String) -> HeatKey {
        HeatKey {
            order: [0, 0, n],
            label,
        }
    }
}

/// Levels of the colour scale, fastest first.
pub const LEVELS: usize = 4;

/// One grid × block cell.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HeatCell {
    /// The best value (by the objective: median time, energy or EDP) of the cell's verified
    /// configurations.
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

#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// The axes of the rows and of the columns.
    pub axes: (HeatAxis, HeatAxis),
    /// The sweep's define axes (what a define axis's values are called).
    pub defines: Defines,
    pub rows: Vec<HeatKey>,
    pub cols: Vec<HeatKey>,
    cells: HashMap<(HeatKey, HeatKey), HeatCell>,
    /// The best and worst cell values (the ends of the colour scale).
    range: Option<(f64, f64)>,
    /// What a cell's value is: the sweep's objective (time, energy or EDP).
    pub objective: Objective,
}

impl Default for Heatmap {
    fn default() -> Heatmap {
        Heatmap::new((HeatAxis::Grid, HeatAxis::Block), Defines::default())
    }
}

fn insert_sorted(v: &mut Vec<HeatKey>, x: HeatKey) {
    if let Err(at) = v.binary_search(&x) {
        v.insert(at, x);
    }
}

impl Heatmap {
    pub fn new(axes: (HeatAxis, HeatAxis), defines: Defines) -> Heatmap {
        Heatmap {
            axes,
            defines,
            rows: Vec::new(),
            cols: Vec::new(),
            cells: HashMap::new(),
            range: None,
            objective: Objective::Time,
        }
    }

    /// The same map valued by `objective`.
    pub fn by(self, objective: Objective) -> Heatmap {
        Heatmap { objective, ..self }
    }

    /// The same sweep shown on other axes (or a whole sweep read from a file). The rows and
    /// columns are sorted once: added one at a time in no order, each would shift the ones
    /// after it, quadratic in a sweep of a million distinct values.
    pub fn rebuilt(
        axes: (HeatAxis, HeatAxis),
        defines: Defines,
        objective: Objective,
        trials: &[Trial],
    ) -> Heatmap {
        let mut h = Heatmap::new(axes, defines).by(objective);
        let (mut rows, mut cols): (Vec<HeatKey>, Vec<HeatKey>) =
            trials.iter().map(|t| h.place(&t.config)).unzip();
        for v in [&mut rows, &mut cols] {
            v.sort_unstable();
            v.dedup();
        }
        (h.rows, h.cols) = (rows, cols);
        for t in trials {
            h.add(t);
        }
        h
    }

    /// `(rows axis name, columns axis name)`.
    pub fn axis_names(&self) -> (String, String) {
        (
            self.axes.0.name(&self.defines),
            self.axes.1.name(&self.defines),
        )
    }

    /// Where a configuration lies on `axis`.
    fn key(&self, axis: HeatAxis, c: &Config) -> HeatKey {
        match axis {
            HeatAxis::Grid => HeatKey::dims(c.grid),
            HeatAxis::Block => HeatKey::dims(c.block),
            HeatAxis::SharedMem => HeatKey::scalar(c.shared_mem as u64, c.shared_mem.to_string()),
            HeatAxis::Registers => match c.max_registers {
                Some(r) => HeatKey::scalar(r as u64, r.to_string()),
                None => HeatKey::scalar(0, "as compiled".into()),
            },
            HeatAxis::Define(i) => match c.variant {
                // Values in the order they were given; the recorded image first.
                Some(v) => {
                    let values = self.defines.values(v as usize);
                    let value = values.get(i).map_or("", |x| x.1);
                    let at = self
                        .defines
                        .axes
                        .get(i)
                        .and_then(|a| a.values.iter().position(|x| x == value))
                        .map_or(u64::MAX, |p| p as u64 + 1);
                    HeatKey::scalar(at, rr_format::text::visible(value).into_owned())
                }
                None => HeatKey::scalar(0, "recorded".into()),
            },
        }
    }

    /// The row and column of a configuration.
    pub fn place(&self, c: &Config) -> (HeatKey, HeatKey) {
        (self.key(self.axes.0, c), self.key(self.axes.1, c))
    }

    pub fn add(&mut self, t: &Trial) {
        let (r, c) = self.place(&t.config);
        insert_sorted(&mut self.rows, r.clone());
        insert_sorted(&mut self.cols, c.clone());
        let cell = self.cells.entry((r, c)).or_default();
        cell.trials += 1;
        cell.recorded |= t.recorded;
        match self.objective.of(t) {
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

    pub fn cell(&self, row: &HeatKey, col: &HeatKey) -> Option<&HeatCell> {
        self.cells.get(&(row.clone(), col.clone()))
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
        rr_tune::space::dim(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_engine::replay::stats::Stats;
    use rr_tune::Config;

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
        let labels = |v: &[HeatKey]| v.iter().map(|k| k.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(&h.rows), ["8", "64"]);
        assert_eq!(labels(&h.cols), ["32", "256", "32x2x1"]);
        let at = |g: u32, b: [u32; 3]| (HeatKey::dims([g, 1, 1]), HeatKey::dims(b));
        let (r, c) = at(64, [256, 1, 1]);
        let c = h.cell(&r, &c).unwrap();
        assert_eq!(
            (c.best, c.failure, c.trials),
            (Some(200.0), Some(Status::VerifyFailed), 3)
        );
        assert_eq!(
            h.range(),
            Some((100.0, 200.0)),
            "the slow end moved when its cell improved"
        );
        let (r, c) = at(8, [32, 1, 1]);
        assert_eq!(h.cell(&r, &c).unwrap().failure, Some(Status::Fault));
        // The same trials on shared memory × block: the fault and the two grid-8 results fold
        // into the smem-0 row.
        let trials = [
            trial(64, [256, 1, 1], 0, Status::Ok, 400.0),
            trial(64, [256, 1, 1], 1024, Status::Ok, 200.0),
        ];
        let s = Heatmap::rebuilt(
            (HeatAxis::SharedMem, HeatAxis::Block),
            Defines::default(),
            Objective::Time,
            &trials,
        );
        assert_eq!(labels(&s.rows), ["0", "1024"]);
        assert_eq!(s.axis_names(), ("smem".into(), "block".into()));
        assert_eq!(dims_label([32, 2, 1]), "32x2x1");
        assert_eq!(dims_label([1024, 1, 1]), "1024");
    }

    #[test]
    fn define_axes_show_their_values_in_order_and_the_recorded_image_first() {
        use rr_tune::defines::DefineAxis;
        let defines = Defines::new(vec![
            DefineAxis::parse("TILE=8,2").unwrap(),
            DefineAxis::parse("T=float,double").unwrap(),
        ])
        .unwrap();
        let mut trials = Vec::new();
        for v in 0..4u32 {
            let mut t = trial(1, [32, 1, 1], 0, Status::Ok, 100.0 + v as f64);
            t.config.variant = Some(v);
            trials.push(t);
        }
        trials.push(trial(1, [32, 1, 1], 0, Status::Ok, 300.0));
        let h = Heatmap::rebuilt(
            (HeatAxis::Define(0), HeatAxis::Define(1)),
            defines.clone(),
            Objective::Time,
            &trials,
        );
        let labels = |v: &[HeatKey]| v.iter().map(|k| k.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(&h.rows), ["recorded", "8", "2"]);
        assert_eq!(labels(&h.cols), ["recorded", "float", "double"]);
        assert_eq!(h.axis_names(), ("TILE".into(), "T".into()));
        let (r, c) = h.place(&trials[3].config);
        assert_eq!((r.label.as_str(), c.label.as_str()), ("2", "double"));
        assert_eq!(h.cell(&r, &c).unwrap().best, Some(103.0));
        assert_eq!(HeatAxis::all(&defines).len(), 6);
    }

    /// A sweep file may hold any define name and value: they are shown with their control
    /// characters visible (the ranked list's `describe` likewise, in ui::tuning).
    #[test]
    fn define_names_and_values_from_a_file_show_control_characters() {
        use rr_tune::defines::DefineAxis;
        // As read back: the fields as the file says.
        let defines = Defines {
            axes: vec![DefineAxis {
                name: "T\x1b]0;X\x07".into(),
                values: vec!["a\u{9b}31m".into()],
            }],
        };
        let mut t = trial(1, [32, 1, 1], 0, Status::Ok, 100.0);
        t.config.variant = Some(0);
        let h = Heatmap::rebuilt(
            (HeatAxis::Define(0), HeatAxis::Block),
            defines,
            Objective::Time,
            &[t],
        );
        assert_eq!(h.axis_names().0, "T\\x1b]0;X\\x07");
        assert_eq!(h.rows[0].label, "a\\u{9b}31m");
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
