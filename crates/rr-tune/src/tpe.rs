//! The Tree-structured Parzen Estimator over a sweep's axes (the `tpe` crate: one univariate
//! estimator per axis, as Optuna's independent TPE sampler). Each axis is a list of values; a
//! configuration is a position per axis. Axes of up to `CATEGORICAL` values are modelled as
//! categories (a histogram), longer ones as ordered positions (a Parzen window: neighbouring
//! grid and block sizes cost alike). Failed configurations are told as infinitely bad, so the
//! model steers away from them. The first `STARTUP` configurations are random (the strategy
//! falls back to random picks until the model is ready), as Optuna does; past `MODELLED`
//! measurements the model rests.

use rand::SeedableRng;
use tpe::density_estimation::DefaultEstimatorBuilder;
use tpe::TpeOptimizer;

use super::space::{Coords, AXES};

/// Random configurations before the model is asked.
const STARTUP: usize = 10;
/// Measurements after which the model is no longer asked: each ask weighs every measurement
/// (O(n)), and a search this long has found what the model can find; the strategy goes on with
/// neighbours of the best.
const MODELLED: usize = 1000;
/// Axes of at most this many values are categories.
const CATEGORICAL: usize = 8;

pub struct Model {
    /// `(axis, categorical, estimator)` for each axis with more than one value.
    axes: Vec<(usize, bool, TpeOptimizer<DefaultEstimatorBuilder>)>,
    rng: rand::rngs::StdRng,
    told: usize,
}

impl Model {
    pub fn new(radices: Coords, seed: u64) -> Model {
        let axes = radices
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 1)
            .filter_map(|(axis, &n)| {
                let categorical = n <= CATEGORICAL;
                let estimator = if categorical {
                    TpeOptimizer::new(tpe::histogram_estimator(), tpe::categorical_range(n).ok()?)
                } else {
                    TpeOptimizer::new(tpe::parzen_estimator(), tpe::range(0.0, n as f64).ok()?)
                };
                Some((axis, categorical, estimator))
            })
            .collect();
        Model {
            axes,
            rng: rand::rngs::StdRng::seed_from_u64(seed),
            told: 0,
        }
    }

    /// Enough configurations were measured for the model to be asked, and not too many.
    pub fn ready(&self) -> bool {
        (STARTUP..MODELLED).contains(&self.told)
    }

    /// The most promising position on every axis (0 on axes without a choice).
    pub fn ask(&mut self) -> Coords {
        let mut at = [0usize; AXES];
        for (axis, _, estimator) in &mut self.axes {
            // The default estimators cannot fail to ask (their error type is uninhabited).
            let Ok(p) = estimator.ask(&mut self.rng);
            at[*axis] = p.max(0.0) as usize;
        }
        at
    }

    /// The cost of the configuration at these positions (None: it failed).
    pub fn tell(&mut self, at: Coords, cost: Option<f64>) {
        let value = cost.filter(|c| c.is_finite()).unwrap_or(f64::INFINITY);
        for (axis, categorical, estimator) in &mut self.axes {
            // Categories are told their index, ordered positions the middle of their bin.
            let p = at[*axis] as f64;
            let param = if *categorical { p } else { p + 0.5 };
            // Out-of-range positions cannot come from the space; ignoring one is harmless.
            estimator.tell(param, value).ok();
        }
        self.told += 1;
    }
}
