//! What to record, from the environment. `rr-tui record` sets these variables; launchers that
//! cannot be wrapped (MPI, job schedulers) set them directly (docs/recording.md). Names mirror
//! libomptarget's `LIBOMPTARGET_RECORD_*` where they apply. One parser for both sides: the
//! recorder reads its configuration with it, and `rr-tui record` runs it on the variables it is
//! about to set, so a bad `--kernels` or `--ranks` is refused before the program starts.

use std::path::PathBuf;

/// How much device memory a recorded instance keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Snapshot {
    /// Every live device allocation of the launch's context.
    All,
    /// Only the allocations that a parameter word points into (for large applications).
    Args,
}

/// How the recorder sees what the program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hooks {
    /// Everything (launches, memory, modules, graphs, objects) through its own driver entry
    /// points, when the library is preloaded (`LD_PRELOAD`): CUPTI is not initialised unless a
    /// kernel from a fatbin or PTX image is recorded. Not preloaded: as `Cupti`.
    Interpose,
    /// Launches through its own entry points, the rest through CUPTI's callbacks.
    Mixed,
    /// CUPTI's callbacks only (slower per launch; no preloading involved).
    Cupti,
}

impl Hooks {
    pub const NAMES: &'static str = "interpose, mixed or cupti";

    pub fn name(self) -> &'static str {
        match self {
            Hooks::Interpose => "interpose",
            Hooks::Mixed => "mixed",
            Hooks::Cupti => "cupti",
        }
    }

    pub fn parse(s: &str) -> Option<Hooks> {
        [Hooks::Interpose, Hooks::Mixed, Hooks::Cupti]
            .into_iter()
            .find(|h| h.name() == s.trim())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `RR_TUI_RECORD_DIR` (LIBOMPTARGET_RECORD_DIR): where records go (default `rr-records`).
    pub dir: PathBuf,
    /// `RR_TUI_RECORD_OUTPUT` (LIBOMPTARGET_RECORD_OUTPUT): also record memory after the kernel.
    pub output: bool,
    /// `RR_TUI_RECORD_DEVICE` (LIBOMPTARGET_RECORD_DEVICE): only launches on this device.
    pub device: Option<i32>,
    /// `RR_TUI_RECORD_REPORT` (LIBOMPTARGET_RECORD_REPORT): also print the report on stdout.
    pub report_stdout: bool,
    /// `RR_TUI_RECORD_REPORT_FILENAME`: the report's file name in the directory.
    pub report_file: String,
    /// `RR_TUI_RECORD_BUDGET`: stop after this many bytes stored (suffixes K, M, G, T).
    pub budget: Option<u64>,
    /// `RR_TUI_RECORD_KERNELS`: only kernels whose name (mangled or readable) matches.
    pub kernels: Option<String>,
    /// `RR_TUI_RECORD_OCCURRENCE`: record the N-th launch (1-based) of each selected kernel
    /// instead of the first launch of each launch configuration.
    pub occurrence: Option<u64>,
    /// `RR_TUI_RECORD_MAX_PER_KERNEL`: at most this many instances per kernel.
    pub max_per_kernel: Option<u64>,
    /// `RR_TUI_RECORD_SKIP`: ignore this many launches first (warm-up).
    pub skip: u64,
    /// `RR_TUI_RECORD_SNAPSHOT`: `all` (default) or `args`.
    pub snapshot: Snapshot,
    /// `RR_TUI_RECORD_RANKS`: only these MPI ranks (`0,2-5`).
    pub ranks: Option<Vec<(u64, u64)>>,
    /// `RR_TUI_RECORD_OVERWRITE`: write into a directory holding another recording's files.
    pub overwrite: bool,
    /// `RR_TUI_RECORD_PROGRESS`: a datagram socket for progress lines (`rr-tui record`).
    pub progress: Option<PathBuf>,
    /// `RR_TUI_RECORD_PARENT_PID`: the pid of `rr-tui record`; the program it started writes the
    /// directory, other processes of the program (workers, children) subdirectories.
    pub parent_pid: Option<u32>,
    /// `RR_TUI_CUPTI`: libcupti to load when it is not on the loader path.
    pub cupti: Option<PathBuf>,
    /// `RR_TUI_RECORD_HOOKS` (earlier `RR_TUI_RECORD_LAUNCH_HOOKS`): `interpose` (default),
    /// `mixed` or `cupti`.
    pub hooks: Hooks,
    /// `RR_TUI_RECORD_STAGING`: bytes of device memory the recorder stages snapshots in, per
    /// context (suffixes K, M, G, T; default: half the device memory free when the context's
    /// first launch is recorded, at most 32 GiB). A snapshot whose new content does not fit is
    /// skipped ("staging full").
    pub staging: Option<u64>,
    /// `RR_TUI_RECORD_FINGERPRINTS`: tell device memory already stored by fingerprints computed
    /// on the GPU (default); off, every segment is copied to the host to be compared.
    pub fingerprints: bool,
}

/// libomptarget's boolean syntax: true/yes/on/1, false/no/off/0 (case-insensitive).
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// `0,2-5,9` → inclusive ranges (at least one: an empty list would record no rank).
pub fn parse_ranks(s: &str) -> Option<Vec<(u64, u64)>> {
    let ranks: Option<Vec<(u64, u64)>> = s
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                (a <= b).then_some((a, b))
            }
            None => p.trim().parse().ok().map(|v| (v, v)),
        })
        .collect();
    ranks.filter(|r| !r.is_empty())
}

/// This process's MPI rank, from the variables the common launchers set.
pub fn mpi_rank(get: &dyn Fn(&str) -> Option<String>) -> Option<u64> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "MV2_COMM_WORLD_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|k| get(k)?.trim().parse().ok())
}

impl Config {
    /// Read the configuration through `get` (the environment in production). Malformed values
    /// are errors naming the variable.
    pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
        let bad = |k: &str, v: &str, what: &str| format!("{k}={v:?}: expected {what}");
        let flag = |k: &str, default: bool| -> Result<bool, String> {
            match get(k) {
                None => Ok(default),
                Some(v) => parse_bool(&v).ok_or_else(|| bad(k, &v, "true or false")),
            }
        };
        let number = |k: &str| -> Result<Option<u64>, String> {
            match get(k) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| bad(k, &v, "a number")),
            }
        };
        // 0 would select nothing (or, read as "unset", everything): refused.
        let positive = |k: &str, what: &str| -> Result<Option<u64>, String> {
            match number(k)? {
                Some(0) => Err(bad(k, "0", what)),
                n => Ok(n),
            }
        };
        let kernels = get("RR_TUI_RECORD_KERNELS").filter(|k| !k.is_empty());
        if let Some(k) = &kernels {
            kernel_pattern(k).map_err(|why| format!("RR_TUI_RECORD_KERNELS={why}"))?;
        }
        Ok(Config {
            dir: get("RR_TUI_RECORD_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("rr-records")),
            output: flag("RR_TUI_RECORD_OUTPUT", true)?,
            device: match get("RR_TUI_RECORD_DEVICE") {
                None => None,
                Some(v) => Some(v.trim().parse().ok().filter(|&d: &i32| d >= 0).ok_or_else(
                    || bad("RR_TUI_RECORD_DEVICE", &v, "a device ordinal (0 or more)"),
                )?),
            },
            report_stdout: flag("RR_TUI_RECORD_REPORT", false)?,
            report_file: match get("RR_TUI_RECORD_REPORT_FILENAME") {
                None => "report.txt".into(),
                Some(v) if crate::fsio::check_relative(&v).is_ok() && !v.contains('/') => v,
                Some(v) => {
                    return Err(bad("RR_TUI_RECORD_REPORT_FILENAME", &v, "a bare file name"))
                }
            },
            budget: match get("RR_TUI_RECORD_BUDGET") {
                None => None,
                Some(v) => Some(
                    crate::parse_bytes(&v)
                        .ok_or_else(|| bad("RR_TUI_RECORD_BUDGET", &v, "bytes (e.g. 20G)"))?,
                ),
            },
            kernels,
            occurrence: positive("RR_TUI_RECORD_OCCURRENCE", "a launch number from 1")?,
            max_per_kernel: positive("RR_TUI_RECORD_MAX_PER_KERNEL", "a count from 1")?,
            skip: number("RR_TUI_RECORD_SKIP")?.unwrap_or(0),
            snapshot: match get("RR_TUI_RECORD_SNAPSHOT").as_deref().map(str::trim) {
                None | Some("all") => Snapshot::All,
                Some("args") => Snapshot::Args,
                Some(v) => return Err(bad("RR_TUI_RECORD_SNAPSHOT", v, "all or args")),
            },
            ranks: match get("RR_TUI_RECORD_RANKS") {
                None => None,
                Some(v) => Some(parse_ranks(&v).ok_or_else(|| {
                    bad(
                        "RR_TUI_RECORD_RANKS",
                        &v,
                        "ranks like 0,2-5 (a range runs from low to high)",
                    )
                })?),
            },
            overwrite: flag("RR_TUI_RECORD_OVERWRITE", false)?,
            progress: get("RR_TUI_RECORD_PROGRESS").map(PathBuf::from),
            parent_pid: get("RR_TUI_RECORD_PARENT_PID").and_then(|v| v.trim().parse().ok()),
            cupti: get("RR_TUI_CUPTI").map(PathBuf::from),
            // Read under its earlier name too (launch scripts written for it).
            hooks: match ["RR_TUI_RECORD_HOOKS", "RR_TUI_RECORD_LAUNCH_HOOKS"]
                .into_iter()
                .find_map(|k| Some((k, get(k)?)))
            {
                None => Hooks::Interpose,
                Some((k, v)) => Hooks::parse(&v).ok_or_else(|| bad(k, &v, Hooks::NAMES))?,
            },
            fingerprints: flag("RR_TUI_RECORD_FINGERPRINTS", true)?,
            staging: match get("RR_TUI_RECORD_STAGING") {
                None => None,
                Some(v) => Some(
                    crate::parse_bytes(&v)
                        .filter(|&b| b >= 1 << 20)
                        .ok_or_else(|| {
                            bad("RR_TUI_RECORD_STAGING", &v, "bytes, at least 1M (e.g. 4G)")
                        })?,
                ),
            },
        })
    }

    /// Whether a process of this rank records.
    pub fn records_rank(&self, rank: Option<u64>) -> bool {
        match (&self.ranks, rank) {
            (None, _) => true,
            (Some(r), Some(rank)) => r.iter().any(|&(a, b)| (a..=b).contains(&rank)),
            (Some(_), None) => true,
        }
    }

    /// Where this process (`pid`, child of `ppid`) writes: the directory, or a subdirectory per
    /// MPI rank, or per process when processes other than the one `rr-tui record` started use
    /// CUDA.
    pub fn process_dir(&self, rank: Option<u64>, pid: u32, ppid: u32) -> PathBuf {
        match (rank, self.parent_pid) {
            (Some(r), _) => self.dir.join(format!("rank-{r}")),
            (None, Some(parent)) if parent != ppid => self.dir.join(format!("pid-{pid}")),
            _ => self.dir.clone(),
        }
    }
}

/// A `--kernels` pattern (record's and `tune DIR`'s): the regular expression, or one line
/// saying why it is none (regex's own message spans lines: the pattern, a caret, the error).
pub fn kernel_pattern(pattern: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(pattern).map_err(|e| {
        let text = e.to_string();
        let why = text
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: "))
            .or_else(|| text.lines().last())
            .unwrap_or("invalid")
            .to_string();
        format!(
            "{}: not a regular expression: {why}",
            shown_pattern(pattern)
        )
    })
}

/// How many characters of a pattern a message quotes ([`shown_pattern`]).
pub const SHOWN_PATTERN_CHARS: usize = 80;

/// A pattern as a message quotes it: in quotes with control characters made visible, and a
/// long one cut to its first [`SHOWN_PATTERN_CHARS`] characters followed by its length (a
/// pattern of 100 KB must not make a 100 KB error line).
pub fn shown_pattern(pattern: &str) -> String {
    // Not `{:?}` of a visible string, which would escape its escapes again.
    let quoted = |s: &str| format!("\"{}\"", crate::text::visible(s));
    match pattern.char_indices().nth(SHOWN_PATTERN_CHARS) {
        None => quoted(pattern),
        Some((at, _)) => format!("{}… ({} bytes)", quoted(&pattern[..at]), pattern.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn defaults_and_values() {
        let c = Config::from_env(&env(&[])).unwrap();
        assert_eq!(c.dir, PathBuf::from("rr-records"));
        assert!(c.output && !c.report_stdout && c.snapshot == Snapshot::All);
        let c = Config::from_env(&env(&[
            ("RR_TUI_RECORD_DIR", "/tmp/r"),
            ("RR_TUI_RECORD_OUTPUT", "off"),
            ("RR_TUI_RECORD_BUDGET", "2G"),
            ("RR_TUI_RECORD_KERNELS", "gemm|softmax"),
            ("RR_TUI_RECORD_SNAPSHOT", "args"),
            ("RR_TUI_RECORD_RANKS", "0,2-3"),
        ]))
        .unwrap();
        assert!(!c.output);
        assert_eq!(c.budget, Some(2 << 30));
        assert_eq!(c.snapshot, Snapshot::Args);
        assert!(c.records_rank(Some(3)) && !c.records_rank(Some(1)));
    }

    #[test]
    fn malformed_values_name_the_variable() {
        for (k, v) in [
            ("RR_TUI_RECORD_OUTPUT", "maybe"),
            ("RR_TUI_RECORD_BUDGET", "lots"),
            ("RR_TUI_RECORD_KERNELS", "("),
            ("RR_TUI_RECORD_SNAPSHOT", "some"),
            ("RR_TUI_RECORD_RANKS", "3-1"),
            ("RR_TUI_RECORD_REPORT_FILENAME", "../x"),
            ("RR_TUI_RECORD_HOOKS", "ptrace"),
            ("RR_TUI_RECORD_LAUNCH_HOOKS", "ptrace"),
            ("RR_TUI_RECORD_MAX_PER_KERNEL", "0"),
            ("RR_TUI_RECORD_OCCURRENCE", "0"),
            ("RR_TUI_RECORD_DEVICE", "-1"),
            ("RR_TUI_RECORD_RANKS", ","),
            ("RR_TUI_RECORD_RANKS", ""),
        ] {
            let e = Config::from_env(&env(&[(k, v)])).unwrap_err();
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn processes_and_ranks_get_their_own_directories() {
        let c = Config::from_env(&env(&[("RR_TUI_RECORD_PARENT_PID", "100")])).unwrap();
        assert_eq!(c.process_dir(None, 200, 100), PathBuf::from("rr-records"));
        assert_eq!(
            c.process_dir(None, 201, 200),
            PathBuf::from("rr-records/pid-201")
        );
        assert_eq!(
            c.process_dir(Some(4), 200, 100),
            PathBuf::from("rr-records/rank-4")
        );
        assert_eq!(mpi_rank(&env(&[("PMI_RANK", "7")])), Some(7));
        assert_eq!(crate::parse_bytes("18446744073709551615T"), None);
    }

    /// A pattern that is no regular expression is quoted in the error, a long one cut (its
    /// length said), so the error stays one short line.
    #[test]
    fn a_bad_pattern_is_quoted_short() {
        let e = kernel_pattern("(").unwrap_err();
        assert_eq!(e, "\"(\": not a regular expression: unclosed group");
        let long = format!("({}", "é".repeat(50_000));
        let e = kernel_pattern(&long).unwrap_err();
        assert!(e.len() < 400, "{} bytes: {e}", e.len());
        assert!(e.contains(&format!("… ({} bytes)", long.len())), "{e}");
        assert!(
            e.ends_with("not a regular expression: unclosed group"),
            "{e}"
        );
        // Escaped once: `\x1b`, not `{:?}` of it (`\\x1b`).
        assert_eq!(shown_pattern("a\x1bb"), "\"a\\x1bb\"");
        let at_limit = "x".repeat(SHOWN_PATTERN_CHARS);
        assert_eq!(shown_pattern(&at_limit), format!("{at_limit:?}"));
    }
}
