//! The instances `ab` judges candidates on: every recorded instance in the record directory
//! (and the recordings `record` wrote below it, `pid-N/` and `rank-N/`, as `RecordDir` lists
//! them) of a kernel the pattern matches, in the recording's order; and the spans of them one
//! process can run in turn.

use std::path::{Path, PathBuf};

use rr_engine::replay::plan::Plan;
use rr_engine::replay::request::{Overrides, Verify};
use rr_engine::replay::{ReplayInstance, Supplied};
use rr_format::dir::RecordDir;
use rr_format::record_config::shown_pattern;
use rr_format::text::visible_path;
use rr_format::{demangle, Descriptor};

use crate::error::{Error, Result};

/// One selected instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Selected {
    /// The descriptor, relative to the record directory (`pid-42/1_2.json`).
    pub name: String,
    pub json: PathBuf,
    /// Its kernel's (mangled) name.
    pub kernel: String,
}

/// The instances of `dir` whose kernel `pattern` matches (mangled or demangled name, as
/// `tune DIR --kernels` selects); `Ok(None)` when `dir` holds no record at all (the caller
/// refuses it as `report` does).
pub fn instances(dir: &Path, pattern: &str) -> Result<Option<Vec<Selected>>> {
    let re = rr_format::record_config::kernel_pattern(pattern)
        .map_err(|e| Error::invalid(format!("--kernels {e}")))?;
    refuse_a_file(dir)?;
    let rec = RecordDir::open(dir)?;
    if rec.holds_nothing() {
        return Ok(None);
    }
    let mut selected = Vec::new();
    let mut recorded: Vec<String> = Vec::new();
    for e in &rec.instances {
        let json = e.files.json();
        // The report's name, else the descriptor's. A descriptor that cannot be read refuses
        // the judgement (exit 2, naming it): whether its instance belongs to the kernels is
        // unknown, and a verdict that left it out would still read "verified on every
        // instance".
        let kernel = match &e.kernel_name {
            Some(k) => k.clone(),
            None => Descriptor::read(&json)?.name,
        };
        if !recorded.contains(&kernel) {
            recorded.push(kernel.clone());
        }
        if re.is_match(&kernel) || re.is_match(&demangle(&kernel)) {
            selected.push(Selected {
                name: e.json_file.clone(),
                json,
                kernel,
            });
        }
    }
    if selected.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no recorded instance of a kernel matching --kernels {} (recorded: {})",
            visible_path(dir),
            shown_pattern(pattern),
            kernel_list(&recorded)
        )));
    }
    Ok(Some(selected))
}

/// The kernels recorded, for a pattern that matches none: the first few, each made visible and
/// cut (a mangled name can be long), then how many more.
fn kernel_list(recorded: &[String]) -> String {
    const SHOWN: usize = 8;
    const NAME_MAX: usize = 120;
    if recorded.is_empty() {
        return "none".to_string();
    }
    let mut names: Vec<String> = recorded
        .iter()
        .take(SHOWN)
        .map(|k| rr_format::text::cut_visible(k, NAME_MAX, false).into_owned())
        .collect();
    if recorded.len() > SHOWN {
        names.push(format!("and {} more", recorded.len() - SHOWN));
    }
    names.join(", ")
}

/// `ab` judges a record directory; a file given instead (most likely one instance's
/// descriptor) is refused pointing to what judges one instance: `replay X.json --candidate`.
fn refuse_a_file(dir: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(dir) else {
        return Ok(()); // RecordDir::open says why it cannot be read
    };
    if meta.is_dir() {
        return Ok(());
    }
    let why = if dir
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        format!(
            "a descriptor, not a record directory: judge a candidate on this one instance with \
             `rr-tui replay {} --candidate FILE`",
            shell_words::quote(&visible_path(dir))
        )
    } else {
        "not a directory (ab takes a record directory; for one instance, \
         `rr-tui replay X.json --candidate FILE`)"
            .to_string()
    };
    Err(Error::format(dir, why))
}

/// Every selected instance loaded as `replay` loads it (with what the user supplies that a
/// legacy record lacks), before anything looks for a GPU: an instance no replay can run (an
/// LLVM 19–22 record, an LLVM 16–17 one without --image, one recorded as unreplayable or with a
/// launch no GPU can run, a file that is missing or wrong, its recorded output included)
/// refuses the whole judgement, naming the file (exit status 2, as `replay --candidate` refuses
/// it). For each, what decides whether one process can go on to the next ([`switch_key`]).
pub fn load_all(selected: &[Selected], supplied: &Supplied) -> Result<Vec<Option<Plan>>> {
    selected
        .iter()
        .map(|s| {
            let inst = ReplayInstance::load(&s.json, supplied).map_err(|e| named(e, &s.json))?;
            // Every candidate is verified against the recorded output (bytes, or a tolerance:
            // either way verification is on), so an output that is missing or wrong is refused
            // here, as `replay --candidate` refuses it, not found out instance by instance.
            inst.check_verifiable(&Verify::Bytes)
                .map_err(|e| named(e, &s.json))?;
            // A recorded launch no GPU can run (a block of 2^31 threads) is the record's
            // fault, refused here as `replay` refuses it, not blamed on every candidate.
            inst.launch(&Overrides::default())?;
            Ok(switch_key(&inst))
        })
        .collect()
}

/// `e`, naming `json` unless it names its file already (the descriptor or one beside it).
fn named(e: Error, json: &Path) -> Error {
    match &e {
        Error::Record(r) if r.path().is_some() => e,
        _ => Error::format(json, e.to_string()),
    }
}

/// What decides whether one process can go on from one instance to the next: the memory
/// layout, when the instance has nothing a switch cannot carry (host memory, arrays, texture
/// or surface objects); `None` for an instance that needs a process of its own.
pub fn switch_key(inst: &ReplayInstance) -> Option<Plan> {
    let has_objects = inst
        .descriptor
        .cuda
        .as_ref()
        .is_some_and(|c| !c.objects.is_empty());
    (inst.host.is_empty() && inst.arrays().is_empty() && !has_objects).then(|| inst.plan.clone())
}

/// Cut `keys` into spans `[from, to)` of consecutive instances with the same key (a `None`
/// key is a span of its own): each span runs in one process, switching instances.
pub fn spans<K: PartialEq>(keys: &[Option<K>]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let joins = i > 0 && k.is_some() && *k == keys[i - 1];
        match out.last_mut() {
            Some(last) if joins => last.1 = i + 1,
            _ => out.push((i, i + 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_list_is_capped() {
        let many: Vec<String> = (0..11).map(|i| format!("k{i}")).collect();
        assert_eq!(
            kernel_list(&many),
            "k0, k1, k2, k3, k4, k5, k6, k7, and 3 more"
        );
        let long = ["x".repeat(500), "a\x1b".to_string()];
        assert_eq!(kernel_list(&long), format!("{}…, a\\x1b", "x".repeat(120)));
        assert_eq!(kernel_list(&[]), "none");
    }

    #[test]
    fn spans_join_equal_layouts_only() {
        let keys = [Some(1), Some(1), Some(2), None, None, Some(2), Some(2)];
        assert_eq!(spans(&keys), [(0, 2), (2, 3), (3, 4), (4, 5), (5, 7)]);
        assert!(spans::<u8>(&[]).is_empty());
    }

    #[test]
    fn the_bundled_records_select_by_kernel() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("record-fixtures/llvm-two-kernels");
        let all = instances(&root, ".").unwrap().unwrap();
        assert!(all.len() >= 2, "{all:?}");
        let e = instances(&root, "^no_such_kernel$")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no recorded instance"), "{e}");
        // What is recorded, to pick from.
        assert!(
            e.ends_with("(recorded: rr_saxpy, rr_scale_global)")
                || e.ends_with("(recorded: rr_scale_global, rr_saxpy)"),
            "{e}"
        );
        assert!(instances(&root, "(").is_err());
        let empty = tempfile::tempdir().unwrap();
        assert!(instances(empty.path(), ".").unwrap().is_none());
    }
}
