//! The search space of a sweep: axes parsed from the command line, the configurations they
//! span (a mixed-radix index over the axes), and the constraints that skip a configuration
//! before any GPU time is spent on it. Pure: tested without a GPU.
//!
//! Axis syntax, for `--grid`, `--block`, `--shared-mem` and `--registers`:
//! a comma-separated list of items; an item is up to three dimensions joined by `x`
//! (`256`, `32x8`, `16x16x1`; missing dimensions are 1), and each dimension is a number,
//! an arithmetic range `A..B:S` (step S, B included when reached) or a geometric range `A..B*F`.
//! `--grid cover` keeps the recorded number of threads in every dimension for each block.

use rr_format::Descriptor;

use super::axis::Axes;
use super::defines::{DefineAxis, Defines, GeometryExpr};
use rr_engine::replay::launch::check_limits;
pub use rr_engine::replay::variant::Config;

pub use super::axis::{
    dim, parse_dims, parse_grid, parse_registers, parse_scalars, GridChoice, MAX_AXIS_VALUES,
    MAX_REGISTERS,
};
pub use super::limits::MAX_MEASURED;

/// At most this many configurations in one space: a typo is refused instead of exhausting
/// memory.
pub const MAX_CONFIGS: u64 = 1 << 24;

/// Spaces up to this size are walked in full for the count of skipped configurations.
const SKIPPED_COUNT_LIMIT: u64 = 1 << 20;

/// How many axes a configuration has a position on: variant, grid, block, shared memory,
/// registers.
pub const AXES: usize = 5;
/// A configuration's position on each axis, in [`AXES`] order.
pub type Coords = [usize; AXES];

/// The axes of a sweep, each a list of values; a configuration is one value of each.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// Whether configurations run variants compiled from a source (otherwise the recorded
    /// image), one per combination of `defines`.
    pub from_source: bool,
    pub defines: Defines,
    pub grids: Vec<GridChoice>,
    pub blocks: Vec<[u32; 3]>,
    pub shared: Vec<u32>,
    pub registers: Vec<Option<u32>>,
    /// Geometry written in terms of the defines: per variant, replacing that axis.
    pub grid_expr: Option<GeometryExpr>,
    pub block_expr: Option<GeometryExpr>,
    variant_grids: Vec<[u32; 3]>,
    variant_blocks: Vec<[u32; 3]>,
    /// What the recorded launch needs kept (its limits, cluster shape).
    pub rules: Rules,
}

/// What makes a configuration unlaunchable or not allowed, known before launching.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub recorded: Config,
    pub teams_limits: [u32; 2],
    pub threads_limits: [u32; 2],
    pub cluster: Option<[u32; 3]>,
    pub ignore_limits: bool,
}

impl Rules {
    /// Only the hardware limits: a record without TeamsLimits/ThreadsLimits or clusters.
    pub fn hardware_only(recorded: Config) -> Rules {
        Rules {
            recorded,
            teams_limits: [0, 0],
            threads_limits: [0, 0],
            cluster: None,
            ignore_limits: false,
        }
    }

    pub fn of(d: &Descriptor, ignore_limits: bool) -> Rules {
        Rules {
            recorded: Config::recorded(d),
            teams_limits: d.teams_limits,
            threads_limits: d.threads_limits,
            cluster: d.cuda.as_ref().and_then(|c| c.cluster_dim),
            ignore_limits,
        }
    }

    /// Why `c` is skipped, or None when it may be launched. Hardware limits common to every
    /// CUDA GPU always apply; the recorded limits unless `--ignore-limits`.
    pub fn skip_reason(&self, c: &Config) -> Option<String> {
        if let Some(why) = rr_format::limits::geometry_problem(c.grid, c.block) {
            return Some(why);
        }
        if let Some(cl) = self.cluster {
            if c.grid.iter().zip(cl).any(|(&g, k)| k == 0 || g % k != 0) {
                return Some(format!(
                    "grid {} is not a multiple of the recorded cluster {}",
                    dim(c.grid),
                    dim(cl)
                ));
            }
        }
        check_limits(
            self.teams_limits,
            self.threads_limits,
            c.grid[0],
            c.block[0],
            self.ignore_limits,
        )
        .err()
        .map(|e| format!("{e} (--ignore-limits to try it)"))
    }

    /// The grid for `block` under `choice`.
    pub fn grid_for(&self, choice: GridChoice, block: [u32; 3]) -> [u32; 3] {
        match choice {
            GridChoice::Dims(g) => g,
            GridChoice::Cover => {
                let r = &self.recorded;
                let mut g = [1u32; 3];
                for i in 0..3 {
                    let threads = r.grid[i] as u64 * r.block[i] as u64;
                    let blocks = threads.div_ceil(block[i].max(1) as u64).max(1);
                    g[i] = blocks.min(u32::MAX as u64) as u32;
                }
                g
            }
        }
    }
}

impl Space {
    /// Axes left empty keep the recorded value.
    pub fn new(
        rules: Rules,
        grids: Vec<GridChoice>,
        blocks: Vec<[u32; 3]>,
        shared: Vec<u32>,
        registers: Vec<u32>,
    ) -> Result<Space, String> {
        let r = rules.recorded;
        let space = Space {
            from_source: false,
            defines: Defines::default(),
            grid_expr: None,
            block_expr: None,
            variant_grids: vec![],
            variant_blocks: vec![],
            grids: or(grids, GridChoice::Dims(r.grid)),
            blocks: or(blocks, r.block),
            shared: or(shared, r.shared_mem),
            registers: if registers.is_empty() {
                vec![None]
            } else {
                registers.into_iter().map(Some).collect()
            },
            rules,
        };
        let n = space.len_checked();
        match n {
            Some(n) if n <= MAX_CONFIGS => Ok(space),
            _ => Err(format!(
                "the axes span more than {MAX_CONFIGS} configurations; narrow them or sample with --strategy random --budget N"
            )),
        }
    }

    /// The space `tune` sweeps for `axes` as its command line gave them (`rules` from the
    /// recorded launch), with `--source`'s define axes when given: what a sweep builds, and what
    /// `tune merge` builds again from a report to check its rows. Errors name the flag.
    pub fn of_axes(
        rules: Rules,
        axes: &Axes,
        source_defines: Option<Vec<DefineAxis>>,
    ) -> Result<Space, String> {
        let bad = |flag: &str, m: String| format!("--{flag}: {m}");
        // Geometry written in terms of the defines replaces its axis.
        let expression = |flag: &str, spec: Option<&str>| -> Result<Option<GeometryExpr>, String> {
            let Some(spec) = spec.filter(|s| GeometryExpr::is_expression(s)) else {
                return Ok(None);
            };
            if source_defines.is_none() {
                return Err(bad(
                    flag,
                    format!(
                        "{} names something: geometry written as an expression needs --source (and --define for names of your own)",
                        rr_format::text::quoted(spec)
                    ),
                ));
            }
            GeometryExpr::parse(spec)
                .map(Some)
                .map_err(|m| bad(flag, m))
        };
        let grid_expr = expression("grid", axes.grid.as_deref())?;
        let block_expr = expression("block", axes.block.as_deref())?;
        let grids = match (&axes.grid, &grid_expr) {
            (Some(s), None) => parse_grid(s).map_err(|m| bad("grid", m))?,
            _ => Vec::new(),
        };
        let blocks = match (&axes.block, &block_expr) {
            (Some(s), None) => parse_dims(s).map_err(|m| bad("block", m))?,
            _ => Vec::new(),
        };
        let shared = axes
            .shared_mem
            .as_deref()
            .map(|s| parse_scalars(s, true).map_err(|m| bad("shared-mem", m)))
            .transpose()?
            .unwrap_or_default();
        let registers = axes
            .registers
            .as_deref()
            .map(|s| parse_registers(s).map_err(|m| bad("registers", m)))
            .transpose()?
            .unwrap_or_default();
        let space = Space::new(rules, grids, blocks, shared, registers)?;
        match source_defines {
            None => Ok(space),
            Some(axes) => space.with_defines(Defines::new(axes)?, grid_expr, block_expr),
        }
    }

    /// Run variants compiled from a source: one per combination of `defines`, and the grid or block
    /// written in terms of them (replacing that axis). Every expression is evaluated for every
    /// variant here, so a sweep never meets one that does not evaluate.
    pub fn with_defines(
        mut self,
        defines: Defines,
        grid_expr: Option<GeometryExpr>,
        block_expr: Option<GeometryExpr>,
    ) -> Result<Space, String> {
        let r = self.rules.recorded;
        let eval = |e: &GeometryExpr, flag: &str| -> Result<Vec<[u32; 3]>, String> {
            (0..defines.variants())
                .map(|v| {
                    e.eval(&defines, v, r.grid, r.block)
                        .map_err(|why| format!("{flag} {}: {why}", e.dims.join(" x ")))
                })
                .collect()
        };
        if let Some(e) = &grid_expr {
            self.variant_grids = eval(e, "--grid")?;
            self.grids = vec![GridChoice::Dims(r.grid)];
        }
        if let Some(e) = &block_expr {
            self.variant_blocks = eval(e, "--block")?;
            self.blocks = vec![r.block];
        }
        self.from_source = true;
        self.defines = defines;
        self.grid_expr = grid_expr;
        self.block_expr = block_expr;
        match self.len_checked() {
            Some(n) if n <= MAX_CONFIGS => Ok(self),
            _ => Err(format!(
                "the axes span more than {MAX_CONFIGS} configurations; narrow them or sample with --strategy random --budget N"
            )),
        }
    }

    fn len_checked(&self) -> Option<u64> {
        self.radices()
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n as u64))
    }

    /// How many configurations the axes span (skipped ones included).
    pub fn len(&self) -> u64 {
        self.len_checked().unwrap_or(u64::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sizes of the axes, in index order (variant, grid, block, shared memory, registers).
    pub fn radices(&self) -> Coords {
        [
            self.defines.variants(),
            self.grids.len(),
            self.blocks.len(),
            self.shared.len(),
            self.registers.len(),
        ]
    }

    /// The axis positions of configuration `index` (the variant varies slowest, so an
    /// exhaustive sweep needs each compilation once, in order; the block varies fastest after
    /// the grid so that it fills the heatmap row by row).
    pub fn coords(&self, index: u64) -> Coords {
        coords(self.radices(), index)
    }

    pub fn index(&self, coords: Coords) -> u64 {
        index(self.radices(), coords)
    }

    pub fn config(&self, index: u64) -> Config {
        let [v, g, b, s, r] = self.coords(index);
        let block = match self.block_expr {
            Some(_) => self.variant_blocks[v],
            None => self.blocks[b],
        };
        let grid = match self.grid_expr {
            Some(_) => self.variant_grids[v],
            None => self.rules.grid_for(self.grids[g], block),
        };
        Config {
            grid,
            block,
            shared_mem: self.shared[s],
            max_registers: self.registers[r],
            variant: self.from_source.then_some(v as u32),
        }
    }
    /// How many configurations a limit skips, and the first reason; None for spaces too large
    /// to walk cheaply (a sweep's header says it when known).
    pub fn skipped(&self) -> Option<(u64, String)> {
        if self.len() > SKIPPED_COUNT_LIMIT {
            return None;
        }
        let mut first = None;
        let mut n = 0;
        for i in 0..self.len() {
            if let Some(why) = self.rules.skip_reason(&self.config(i)) {
                n += 1;
                first.get_or_insert(why);
            }
        }
        Some((n, first.unwrap_or_default()))
    }

    /// The index of `config`, when it is one of this space's configurations.
    pub fn index_of(&self, config: &Config) -> Option<u64> {
        let v = match config.variant {
            None if !self.from_source => 0,
            Some(v) if self.from_source && (v as usize) < self.defines.variants() => v as usize,
            _ => return None,
        };
        let b = match self.block_expr {
            Some(_) => (self.variant_blocks[v] == config.block).then_some(0)?,
            None => self.blocks.iter().position(|&b| b == config.block)?,
        };
        let g = match self.grid_expr {
            Some(_) => (self.variant_grids[v] == config.grid).then_some(0)?,
            None => self
                .grids
                .iter()
                .position(|&g| self.rules.grid_for(g, config.block) == config.grid)?,
        };
        let s = self.shared.iter().position(|&s| s == config.shared_mem)?;
        let r = self
            .registers
            .iter()
            .position(|&r| r == config.max_registers)?;
        Some(self.index([v, g, b, s, r]))
    }
}

/// The axis positions of `index` in a space of these `radices` (mixed radix, the last axis
/// fastest).
pub fn coords(radices: Coords, index: u64) -> Coords {
    let mut rest = index;
    let mut c = [0usize; AXES];
    for (i, &n) in radices.iter().enumerate().rev() {
        c[i] = (rest % n.max(1) as u64) as usize;
        rest /= n.max(1) as u64;
    }
    c
}

/// The index of `coords` in a space of these `radices`.
pub fn index(radices: Coords, coords: Coords) -> u64 {
    coords
        .iter()
        .zip(radices)
        .fold(0u64, |acc, (&c, n)| acc * n as u64 + c as u64)
}

/// `v`, or the one `default` value when empty.
fn or<T>(v: Vec<T>, default: T) -> Vec<T> {
    if v.is_empty() {
        vec![default]
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defines::DefineAxis;

    #[test]
    fn variants_are_the_slowest_axis_and_expressions_follow_them() {
        let recorded = Config {
            grid: [1024, 1, 1],
            block: [256, 1, 1],
            shared_mem: 0,
            max_registers: None,
            variant: None,
        };
        let defines = Defines::new(vec![DefineAxis::parse("TILE=1,2,4").unwrap()]).unwrap();
        let s = Space::new(
            Rules::hardware_only(recorded),
            vec![],
            parse_dims("128,256").unwrap(),
            vec![],
            vec![],
        )
        .unwrap()
        .with_defines(
            defines.clone(),
            Some(GeometryExpr::parse("GRID_X * 256 / (BLOCK_X * TILE)").unwrap()),
            None,
        )
        .unwrap();
        assert_eq!(s.len(), 6);
        let all: Vec<Config> = (0..s.len()).map(|i| s.config(i)).collect();
        assert_eq!(all[0].variant, Some(0));
        assert_eq!((all[0].grid[0], all[0].block[0]), (1024, 128));
        assert_eq!(
            (all[5].grid[0], all[5].block[0], all[5].variant),
            (256, 256, Some(2))
        );
        for (i, c) in all.iter().enumerate() {
            assert_eq!(s.index_of(c), Some(i as u64));
        }
        // The recorded image is no variant of this space; a grid the expression does not give
        // is no configuration of it.
        assert_eq!(s.index_of(&recorded), None);
        let mut other = all[1];
        other.grid = [7, 1, 1];
        assert_eq!(s.index_of(&other), None);
        // An expression that fails for one variant fails the space, naming it.
        let e = Space::new(
            Rules::hardware_only(recorded),
            vec![],
            vec![],
            vec![],
            vec![],
        )
        .unwrap()
        .with_defines(
            defines,
            None,
            Some(GeometryExpr::parse("TILE - 2").unwrap()),
        )
        .unwrap_err();
        assert!(
            e.contains("--block TILE - 2") && e.contains("TILE=1"),
            "{e}"
        );
    }

    fn rules() -> Rules {
        Rules::hardware_only(Config {
            grid: [1024, 1, 1],
            block: [256, 1, 1],
            shared_mem: 0,
            max_registers: None,
            variant: None,
        })
    }

    #[test]
    fn axis_forms() {
        assert_eq!(parse_scalars("32..1024*2", false).unwrap().len(), 6);
        assert_eq!(
            parse_scalars("0..96:32", true).unwrap(),
            vec![0, 32, 64, 96]
        );
        assert_eq!(parse_scalars("1..10:4", false).unwrap(), vec![1, 5, 9]);
        assert_eq!(parse_scalars("64, 128,64", false).unwrap(), vec![64, 128]);
        assert_eq!(
            parse_dims("32x4,16..32*2x2x1").unwrap(),
            vec![[32, 4, 1], [16, 2, 1], [32, 2, 1]]
        );
        assert_eq!(parse_dims("8").unwrap(), vec![[8, 1, 1]]);
        assert_eq!(
            parse_dims("128,1,1").unwrap_err(),
            "\"128,1,1\" is a list of 3 values here; one 3-D value is written 128x1x1"
        );
        assert_eq!(parse_dims("1,128").unwrap(), vec![[1, 1, 1], [128, 1, 1]]);
        assert_eq!(parse_grid("Cover").unwrap(), vec![GridChoice::Cover]);
        assert_eq!(
            parse_grid("8x8x8, cover").unwrap(),
            vec![GridChoice::Dims([8, 8, 8]), GridChoice::Cover]
        );
        for bad in [
            "",
            "0",
            "1,,2",
            "a",
            "4..2",
            "1..8:0",
            "1..8*1",
            "1x2x3x4",
            "1..4294967295",
        ] {
            assert!(parse_dims(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_scalars("32x2", false).is_err());
        assert!(parse_scalars("0", false).is_err());
        assert!(parse_scalars("0", true).is_ok());
        assert_eq!(
            parse_registers("32..128:32").unwrap(),
            vec![32, 64, 96, 128]
        );
        assert!(parse_registers("128,256")
            .unwrap_err()
            .contains("256 is above 255"));
    }

    #[test]
    fn index_round_trips_and_axes_default_to_the_recorded_launch() {
        let s = Space::new(
            rules(),
            parse_grid("64,128").unwrap(),
            parse_dims("32..1024*2").unwrap(),
            vec![],
            vec![32, 64],
        )
        .unwrap();
        assert_eq!(s.len(), 2 * 6 * 2, "grids x blocks x registers");
        for i in 0..s.len() {
            assert_eq!(s.index(s.coords(i)), i);
        }
        let c = s.config(s.index([0, 1, 2, 0, 1]));
        assert_eq!(c.grid, [128, 1, 1]);
        assert_eq!(c.block, [128, 1, 1]);
        assert_eq!(c.shared_mem, 0);
        assert_eq!(c.max_registers, Some(64));
    }

    #[test]
    fn cover_keeps_the_recorded_threads() {
        let r = rules();
        assert_eq!(r.grid_for(GridChoice::Cover, [128, 1, 1]), [2048, 1, 1]);
        assert_eq!(r.grid_for(GridChoice::Cover, [1000, 1, 1]), [263, 1, 1]);
    }

    #[test]
    fn skips_what_cannot_launch_or_breaks_recorded_limits() {
        let mut r = rules();
        let mut c = r.recorded;
        assert_eq!(r.skip_reason(&c), None);
        c.block = [64, 32, 1];
        assert!(r.skip_reason(&c).unwrap().contains("1024 threads"));
        c.block = [1, 1, 65];
        assert!(r.skip_reason(&c).unwrap().contains("above 64"));
        c.block = [256, 1, 1];
        r.threads_limits = [1, 128];
        assert!(r
            .skip_reason(&c)
            .unwrap()
            .contains("out of the allowed limits"));
        r.ignore_limits = true;
        assert_eq!(r.skip_reason(&c), None);
        r.cluster = Some([2, 1, 1]);
        c.grid = [3, 1, 1];
        assert!(r.skip_reason(&c).unwrap().contains("cluster"));
    }

    #[test]
    fn huge_spaces_are_refused() {
        let many = parse_scalars("1..65536", false).unwrap();
        let blocks: Vec<[u32; 3]> = many.iter().map(|&v| [v, 1, 1]).collect();
        let grids = blocks.iter().map(|&b| GridChoice::Dims(b)).collect();
        assert!(Space::new(rules(), grids, blocks, vec![], vec![]).is_err());
        assert!(parse_scalars("1..65537", false).is_err());
    }

    /// Every axis flag refuses a 300-digit value in a short message that names the flag.
    #[test]
    fn a_300_digit_axis_value_is_refused_in_a_short_message() {
        let long = "1".repeat(300);
        let set = [
            |a: &mut Axes, v: String| a.grid = Some(v),
            |a: &mut Axes, v: String| a.block = Some(v),
            |a: &mut Axes, v: String| a.shared_mem = Some(v),
            |a: &mut Axes, v: String| a.registers = Some(v),
        ];
        for (flag, set) in ["grid", "block", "shared-mem", "registers"].iter().zip(set) {
            for value in [long.clone(), format!("1..{long}"), format!("N*{long}")] {
                let mut axes = Axes::default();
                set(&mut axes, value);
                let e = Space::of_axes(rules(), &axes, None)
                    .map(|_| ())
                    .unwrap_err();
                assert!(e.starts_with(&format!("--{flag}: ")), "{e}");
                assert!(e.len() < 200 && !e.contains(&long[..QUOTE_LONGER]), "{e}");
                assert!(e.contains('…'), "{e}");
            }
        }
    }

    /// More digits than any quote keeps.
    const QUOTE_LONGER: usize = rr_format::text::QUOTE_MAX + 1;
}
