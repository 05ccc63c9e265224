//! Which launches become instances. By default the first launch of each (kernel, launch
//! configuration), as libomptarget does; options narrow it (a kernel pattern, the N-th launch of
//! each kernel, a cap per kernel, warm-up launches skipped). Pure: tested without a GPU.

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Skip,
    /// Record it; `occurrence` is the launch's index among the kernel's launches (0-based).
    Record {
        occurrence: u64,
    },
}

/// A launch configuration: grid, block, dynamic shared memory.
type Geometry = ([u32; 3], [u32; 3], u32);

#[derive(Default)]
struct KernelCounts {
    launches: u64,
    recorded: u64,
    /// Whether the kernel pattern selects it (cached: names repeat millions of times).
    selected: bool,
    /// Launches per configuration, and whether that configuration was recorded.
    configs: FxHashMap<Geometry, (u64, bool)>,
}

pub struct Selector {
    pattern: Option<regex::Regex>,
    occurrence: Option<u64>,
    max_per_kernel: Option<u64>,
    skip: u64,
    launches: u64,
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
            launches: 0,
            kernels: FxHashMap::default(),
        }
    }

    /// Count a launch and decide whether to record it. A decision to record is only a
    /// candidacy: [`Selector::recorded`] confirms it (a launch inside a graph capture, say, is
    /// not recorded, and the next launch of the configuration gets the chance).
    pub fn observe(&mut self, kernel: &str, geometry: Geometry) -> Decision {
        self.launches += 1;
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
            return Decision::Skip;
        };
        k.launches += 1;
        let occurrence = k.launches - 1;
        let config = k.configs.entry(geometry).or_insert((0, false));
        config.0 += 1;
        if self.launches <= self.skip || !k.selected {
            return Decision::Skip;
        }
        if self.max_per_kernel.is_some_and(|m| k.recorded >= m) {
            return Decision::Skip;
        }
        let wanted = match self.occurrence {
            Some(n) => k.launches == n,
            None => !config.1,
        };
        if wanted {
            Decision::Record { occurrence }
        } else {
            Decision::Skip
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

    /// How many launches of this configuration the program made so far.
    pub fn occurrences(&self, key: &LaunchKey) -> u64 {
        self.kernels
            .get(&key.kernel)
            .and_then(|k| k.configs.get(&key.geometry()))
            .map(|c| c.0)
            .unwrap_or(0)
    }

    pub fn launches(&self) -> u64 {
        self.launches
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
                Decision::Skip => false,
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
