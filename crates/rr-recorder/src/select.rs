//! Which launches become instances. By default the first launch of each (kernel, launch
//! configuration), as libomptarget does; options narrow it (a kernel pattern, the N-th launch of
//! each kernel, a cap per kernel, warm-up launches skipped). Pure: tested without a GPU.
//!
//! Counts are atomics so that the launches of a configuration that can never be selected again
//! are counted without the selector's lock: [`Decision::Skip`] hands out a [`Settled`] counter
//! for them, which the recorder's per-thread cache bumps directly (the launch storms of real
//! programs repeat a few configurations millions of times).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::config::Config;

/// A launch configuration of a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LaunchKey {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
}

impl LaunchKey {
    pub fn geometry(&self) -> Geometry {
        (self.grid, self.block, self.shared_mem)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Not this one; `Some` when no later launch of the configuration will be selected either.
    Skip(Option<Settled>),
    /// Record it; `occurrence` is the launch's index among the kernel's launches (0-based).
    Record { occurrence: u64 },
}

/// The counters of a configuration no later launch of which will be selected: counting a launch
/// is three relaxed increments (the configuration, its kernel, all launches).
#[derive(Debug, Clone)]
pub struct Settled {
    config: Arc<AtomicU64>,
    kernel: Arc<AtomicU64>,
    all: Arc<AtomicU64>,
}

impl PartialEq for Settled {
    fn eq(&self, o: &Settled) -> bool {
        Arc::ptr_eq(&self.config, &o.config)
    }
}
impl Eq for Settled {}

impl Settled {
    /// Count one launch of the configuration.
    pub fn count(&self) {
        self.config.fetch_add(1, Ordering::Relaxed);
        self.kernel.fetch_add(1, Ordering::Relaxed);
        self.all.fetch_add(1, Ordering::Relaxed);
    }
}

/// A launch configuration: grid, block, dynamic shared memory.
type Geometry = ([u32; 3], [u32; 3], u32);

#[derive(Default)]
struct KernelCounts {
    launches: Arc<AtomicU64>,
    recorded: u64,
    /// Whether the kernel pattern selects it (cached: names repeat millions of times).
    selected: bool,
    /// Launches per configuration, and whether that configuration was recorded.
    configs: FxHashMap<Geometry, (Arc<AtomicU64>, bool)>,
}

pub struct Selector {
    pattern: Option<regex::Regex>,
    occurrence: Option<u64>,
    max_per_kernel: Option<u64>,
    skip: u64,
    launches: Arc<AtomicU64>,
    /// Looked up by `&str` on every launch of the program: no allocation, a fast hash.
    kernels: FxHashMap<String, KernelCounts>,
}

impl Selector {
    pub fn new(cfg: &Config) -> Selector {
        Selector {
            pattern: cfg
                .kernels
                .as_deref()
                .and_then(|p| regex::Regex::new(p).ok()),
            occurrence: cfg.occurrence,
            max_per_kernel: cfg.max_per_kernel,
            skip: cfg.skip,
            launches: Arc::default(),
            kernels: FxHashMap::default(),
        }
    }

    /// Count a launch and decide whether to record it. A decision to record is only a
    /// candidacy: [`Selector::recorded`] confirms it (a launch inside a graph capture, say, is
    /// not recorded, and the next launch of the configuration gets the chance).
    pub fn observe(&mut self, kernel: &str, geometry: Geometry) -> Decision {
        let launches = self.launches.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.kernels.contains_key(kernel) {
            let selected = self
                .pattern
                .as_ref()
                .is_none_or(|p| p.is_match(kernel) || p.is_match(&rr_format::demangle(kernel)));
            self.kernels.insert(
                kernel.to_string(),
                KernelCounts {
                    selected,
                    ..Default::default()
                },
            );
        }
        let Some(k) = self.kernels.get_mut(kernel) else {
            return Decision::Skip(None);
        };
        let kernel_launches = k.launches.fetch_add(1, Ordering::Relaxed) + 1;
        let occurrence = kernel_launches - 1;
        let config = k.configs.entry(geometry).or_default();
        config.0.fetch_add(1, Ordering::Relaxed);
        let settled = || {
            Decision::Skip(Some(Settled {
                config: config.0.clone(),
                kernel: k.launches.clone(),
                all: self.launches.clone(),
            }))
        };
        if !k.selected || self.max_per_kernel.is_some_and(|m| k.recorded >= m) {
            return settled();
        }
        if launches <= self.skip {
            return Decision::Skip(None);
        }
        match self.occurrence {
            Some(n) if kernel_launches == n => Decision::Record { occurrence },
            Some(n) if kernel_launches > n => settled(),
            Some(_) => Decision::Skip(None),
            None if config.1 => settled(),
            None => Decision::Record { occurrence },
        }
    }

    /// The launch of `key` was recorded.
    pub fn recorded(&mut self, key: &LaunchKey) {
        if let Some(k) = self.kernels.get_mut(&key.kernel) {
            k.recorded += 1;
            if let Some(c) = k.configs.get_mut(&key.geometry()) {
                c.1 = true;
            }
        }
    }

    /// The launch of `key` counted as recorded was lost after all (its snapshot could not be
    /// kept): a later launch of the configuration may take its place.
    pub fn retract(&mut self, key: &LaunchKey) {
        if let Some(k) = self.kernels.get_mut(&key.kernel) {
            k.recorded = k.recorded.saturating_sub(1);
            if let Some(c) = k.configs.get_mut(&key.geometry()) {
                c.1 = false;
            }
        }
    }

    /// How many launches of this configuration the program made so far.
    pub fn occurrences(&self, key: &LaunchKey) -> u64 {
        self.kernels
            .get(&key.kernel)
            .and_then(|k| k.configs.get(&key.geometry()))
            .map(|c| c.0.load(Ordering::Relaxed))
            .unwrap_or(0)
    }

    /// Every launch observed, the fast path's included.
    pub fn launches(&self) -> u64 {
        self.launches.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str, g: u32) -> LaunchKey {
        LaunchKey {
            kernel: k.into(),
            grid: [g, 1, 1],
            block: [128, 1, 1],
            shared_mem: 0,
        }
    }

    fn cfg(f: impl FnOnce(&mut Config)) -> Config {
        let mut c = Config::from_env(&|_| None).unwrap();
        f(&mut c);
        c
    }

    fn run(s: &mut Selector, keys: &[LaunchKey]) -> Vec<bool> {
        keys.iter()
            .map(|k| match s.observe(&k.kernel, k.geometry()) {
                Decision::Record { .. } => {
                    s.recorded(k);
                    true
                }
                Decision::Skip(_) => false,
            })
            .collect()
    }

    #[test]
    fn first_launch_of_each_configuration() {
        let mut s = Selector::new(&cfg(|_| {}));
        let l = [
            key("a", 1),
            key("a", 1),
            key("a", 2),
            key("b", 1),
            key("a", 2),
        ];
        assert_eq!(run(&mut s, &l), [true, false, true, true, false]);
        assert_eq!(s.occurrences(&key("a", 2)), 2);
    }

    #[test]
    fn an_unconfirmed_candidate_leaves_the_chance_to_the_next_launch() {
        let mut s = Selector::new(&cfg(|_| {}));
        let k = key("a", 1);
        assert!(matches!(
            s.observe(&k.kernel, k.geometry()),
            Decision::Record { occurrence: 0 }
        ));
        // Not confirmed (it was inside a graph capture): the next one is a candidate.
        assert!(matches!(
            s.observe(&k.kernel, k.geometry()),
            Decision::Record { occurrence: 1 }
        ));
    }

    #[test]
    fn settled_configurations_are_counted_without_the_selector() {
        let mut s = Selector::new(&cfg(|_| {}));
        let k = key("a", 1);
        assert!(matches!(
            s.observe(&k.kernel, k.geometry()),
            Decision::Record { .. }
        ));
        s.recorded(&k);
        let Decision::Skip(Some(settled)) = s.observe(&k.kernel, k.geometry()) else {
            panic!("a recorded configuration is settled");
        };
        for _ in 0..1000 {
            settled.count();
        }
        assert_eq!(s.occurrences(&k), 1002);
        assert_eq!(s.launches(), 1002);
        // The kernel's count goes on: another configuration's occurrence index is exact.
        assert_eq!(
            s.observe("a", key("a", 2).geometry()),
            Decision::Record { occurrence: 1002 }
        );
        // Outside the pattern: settled at once. Before --skip is past: not settled.
        let mut s = Selector::new(&cfg(|c| c.kernels = Some("^b$".into())));
        assert!(matches!(
            s.observe("a", k.geometry()),
            Decision::Skip(Some(_))
        ));
        let mut s = Selector::new(&cfg(|c| c.skip = 5));
        assert_eq!(s.observe("a", k.geometry()), Decision::Skip(None));
        // --occurrence 2: the first is not settled, the third is.
        let mut s = Selector::new(&cfg(|c| c.occurrence = Some(2)));
        assert_eq!(s.observe("a", k.geometry()), Decision::Skip(None));
        assert!(matches!(
            s.observe("a", k.geometry()),
            Decision::Record { occurrence: 1 }
        ));
        assert!(matches!(
            s.observe("a", k.geometry()),
            Decision::Skip(Some(_))
        ));
    }

    #[test]
    fn pattern_occurrence_cap_and_skip() {
        let mut s = Selector::new(&cfg(|c| c.kernels = Some("^_Z4gemm|softmax".into())));
        assert_eq!(
            run(
                &mut s,
                &[key("_Z4gemmPf", 1), key("relu", 1), key("my_softmax", 1)]
            ),
            [true, false, true]
        );
        let mut s = Selector::new(&cfg(|c| c.occurrence = Some(3)));
        let l: Vec<_> = (0..5).map(|i| key("a", i)).collect();
        assert_eq!(run(&mut s, &l), [false, false, true, false, false]);
        let mut s = Selector::new(&cfg(|c| c.max_per_kernel = Some(2)));
        let l: Vec<_> = (0..5).map(|i| key("a", i)).collect();
        assert_eq!(run(&mut s, &l), [true, true, false, false, false]);
        let mut s = Selector::new(&cfg(|c| c.skip = 2));
        let l: Vec<_> = (0..4).map(|i| key("a", i)).collect();
        assert_eq!(run(&mut s, &l), [false, false, true, true]);
    }
}
