//! The record directories below a directory that is not one itself (the bundled
//! `record-fixtures/`, a user's `~/records/` of runs): what `report`, `check`, `tune` and the
//! explorer list instead of an empty record. The listing comes from anyone, so it is bounded
//! (depth, entries read, directories listed), follows no link and names nothing raw.

use std::path::{Path, PathBuf};

use crate::text::visible;
use crate::{hash, Descriptor, RecordFormat};

/// How deep below the given directory record directories are looked for: `~/records/run/`
/// is 1, `~/records/2026-11/run/rr-records/` is 3.
pub const MAX_DEPTH: usize = 3;
/// Directory entries read at most, all directories together: a directory of a million files
/// must not stall a command or the explorer.
pub const MAX_ENTRIES_READ: usize = 20_000;
/// Record directories listed at most.
pub const MAX_LISTED: usize = 200;

/// What a search that stopped early did not do, said the same by `report`, `check`, `tune`
/// and the explorer: it found none, which proves nothing.
pub fn did_not_see_everything() -> String {
    format!(
        "the search did not see everything (a directory could not be read, or it reached its \
         bound of {MAX_ENTRIES_READ} entries)"
    )
}

/// Every layout a record directory may have, for the message on a directory holding none.
pub const ACCEPTED_LAYOUTS: &str = "a record directory holds one of: \
LLVM 2026 records (<KernelHash>_<LaunchConfigHash>.json, and report.txt when the run wrote one), \
LLVM 16–22 records (<Name>.json beside <Name>.memory), \
rr-tui's own (the rr-records/ directory `rr-tui record` writes, blobs/ for format 2), \
and the pid-N/ and rank-N/ directories `record` writes for other processes and MPI ranks";

/// One record directory found below the searched one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FoundRecordDir {
    /// Where it is, to open it.
    #[serde(skip)]
    pub path: PathBuf,
    /// Its path relative to the searched directory, control characters made visible.
    pub name: String,
    /// Descriptors counted by name (with those of its `pid-N/`, `rank-N/`), as opening it
    /// finds them, less legacy descriptors whose `.memory` is missing.
    pub instances: usize,
    /// The layout its first descriptor has ("LLVM 2026", "rr-tui", "LLVM 16–17 layout", …).
    pub layout: String,
}

/// What the search found, and whether a bound stopped it before the end.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RecordDirsBelow {
    pub found: Vec<FoundRecordDir>,
    /// A bound was reached, or a directory could not be read: there may be more than `found`.
    pub incomplete: bool,
}

/// The record directories below `dir` (not `dir` itself), breadth first, in name order within
/// a directory. A record directory is not searched further (its `pid-N/` and `rank-N/` are part
/// of it); hidden directories (`.git`, `.cache`) and links are skipped.
pub fn record_dirs_below(dir: &Path) -> RecordDirsBelow {
    let mut out = RecordDirsBelow::default();
    let mut entries_left = MAX_ENTRIES_READ;
    let mut level = vec![dir.to_path_buf()];
    for _depth in 1..=MAX_DEPTH {
        let mut next = Vec::new();
        for parent in &level {
            for child in subdirectories(parent, &mut entries_left, &mut out.incomplete) {
                if out.found.len() >= MAX_LISTED {
                    out.incomplete = true;
                    return out;
                }
                let listing = list_instances(&child, &mut entries_left, &mut out.incomplete);
                if listing.count == 0 {
                    next.push(child);
                    continue;
                }
                let name = child.strip_prefix(dir).unwrap_or(&child);
                out.found.push(FoundRecordDir {
                    name: visible(&name.to_string_lossy()).into_owned(),
                    instances: listing.count,
                    layout: listing.first.map(|d| layout_of(&d)).unwrap_or_default(),
                    path: child,
                });
            }
        }
        level = next;
    }
    out
}

/// The layout label of a record directory, from one of its descriptors.
fn layout_of(descriptor: &Path) -> String {
    match Descriptor::read(descriptor).map(|d| d.format) {
        Ok(RecordFormat::Llvm | RecordFormat::LlvmApril2026) => "LLVM 2026".into(),
        Ok(RecordFormat::RrTui) if descriptor.with_file_name(crate::store::BLOB_DIR).is_dir() => {
            "rr-tui (format 2)".into()
        }
        Ok(RecordFormat::RrTui) => "rr-tui".into(),
        Ok(legacy) => legacy.label().into(),
        Err(_) => "descriptor unreadable".into(),
    }
}

/// The real (not linked), visible subdirectories of `dir`, in name order.
fn subdirectories(dir: &Path, entries_left: &mut usize, incomplete: &mut bool) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = read_entries(dir, entries_left, incomplete)
        .into_iter()
        .filter(|(name, is_dir)| *is_dir && !name.as_encoded_bytes().starts_with(b"."))
        .map(|(name, _)| dir.join(name))
        .collect();
    dirs.sort();
    dirs
}

struct InstanceListing {
    count: usize,
    /// A descriptor of the directory, the first by name, for its layout.
    first: Option<PathBuf>,
}

/// The descriptors of `dir` counted by name (no file is read), and those of its `pid-N/` and
/// `rank-N/` directories.
fn list_instances(dir: &Path, entries_left: &mut usize, incomplete: &mut bool) -> InstanceListing {
    let entries = read_entries(dir, entries_left, incomplete);
    // Descriptors are named in ASCII: other names are not counted (but directories below
    // with such names are searched).
    let names: std::collections::HashSet<&str> =
        entries.iter().filter_map(|(n, _)| n.to_str()).collect();
    let mut descriptors: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| {
            name.strip_suffix(".json").is_some_and(|stem| {
                hash::parse_stem(stem).is_some()
                    || names.contains(format!("{stem}.{}", crate::ext::EXT_LEGACY_INPUT).as_str())
            })
        })
        .collect();
    descriptors.sort();
    let mut listing = InstanceListing {
        count: descriptors.len(),
        first: descriptors.first().map(|n| dir.join(n)),
    };
    for (name, is_dir) in &entries {
        if *is_dir && name.to_str().is_some_and(crate::dir::is_process_directory) {
            let part = list_instances(&dir.join(name), entries_left, incomplete);
            listing.count += part.count;
            listing.first = listing.first.or(part.first);
        }
    }
    listing
}

/// `dir`'s entries as (name, is a real directory), at most `entries_left` of them in all. A
/// directory that cannot be read (permissions) has none, and makes the search incomplete: a
/// record may be in it.
fn read_entries(
    dir: &Path,
    entries_left: &mut usize,
    incomplete: &mut bool,
) -> Vec<(std::ffi::OsString, bool)> {
    let Ok(reader) = std::fs::read_dir(dir) else {
        *incomplete = true;
        return Vec::new();
    };
    let mut entries = Vec::new();
    for entry in reader.flatten() {
        if *entries_left == 0 {
            *incomplete = true;
            break;
        }
        *entries_left -= 1;
        // `file_type` does not follow links: a link to a directory is not a directory here.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        // The name as it is (not UTF-8 perhaps): the path must lead to it. Only what is shown
        // is made visible.
        entries.push((entry.file_name(), is_dir));
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../record-fixtures")
    }

    #[test]
    fn the_bundled_fixtures_are_listed_with_counts_and_layouts() {
        let below = record_dirs_below(&fixtures());
        let listed: Vec<(&str, usize, &str)> = below
            .found
            .iter()
            .map(|f| (f.name.as_str(), f.instances, f.layout.as_str()))
            .collect();
        assert_eq!(
            listed,
            vec![
                ("llvm-no-report", 2, "LLVM 2026"),
                ("llvm-two-kernels", 4, "LLVM 2026"),
                ("llvm16-saxpy", 1, "LLVM 16–17 layout"),
                ("llvm18-two-kernels", 2, "LLVM 18 layout"),
                ("llvm19-saxpy", 1, "LLVM 19–22 layout"),
                ("rrtui-stencil3d", 2, "rr-tui"),
                ("rrtui-v2-stencil3d", 2, "rr-tui (format 2)"),
            ]
        );
        assert!(!below.incomplete);
    }

    #[test]
    fn nested_runs_are_found_and_links_and_hidden_directories_are_not() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("2026-11/run\x1b1/rr-records");
        std::fs::create_dir_all(run.join("pid-7")).unwrap();
        std::fs::write(run.join("pid-7/1_2.json"), "{}").unwrap();
        std::fs::create_dir_all(d.path().join(".git/rec")).unwrap();
        std::fs::write(d.path().join(".git/rec/1_2.json"), "{}").unwrap();
        std::os::unix::fs::symlink(fixtures(), d.path().join("linked")).unwrap();
        let below = record_dirs_below(d.path());
        assert_eq!(below.found.len(), 1, "{below:?}");
        assert_eq!(below.found[0].name, "2026-11/run\\x1b1/rr-records");
        assert_eq!(below.found[0].instances, 1);
        assert_eq!(below.found[0].path, run);
    }

    /// A directory named in bytes that are not UTF-8 is listed (its path leads to it; its name
    /// is shown made visible), and one that cannot be read makes the search incomplete.
    #[test]
    fn odd_names_are_listed_and_unreadable_directories_make_it_incomplete() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let odd = d.path().join(std::ffi::OsStr::from_bytes(b"bad\xff"));
        std::fs::create_dir(&odd).unwrap();
        std::fs::write(odd.join("1_2.json"), "{}").unwrap();
        let below = record_dirs_below(d.path());
        assert_eq!(below.found.len(), 1, "{below:?}");
        assert_eq!(below.found[0].path, odd);
        assert!(!below.incomplete);
        // A directory that cannot be listed (a file where a directory was listed: ENOTDIR,
        // as unreadable as a `chmod 000` one, which root could read anyway).
        assert!(read_entries(&odd.join("1_2.json"), &mut 10, &mut false).is_empty());
        let mut incomplete = false;
        read_entries(&odd.join("1_2.json"), &mut 10, &mut incomplete);
        assert!(incomplete);
    }

    /// A descriptor that is a FIFO is counted by its name and never opened for reading (a read
    /// would block until a writer comes): its layout says it cannot be read.
    #[test]
    fn a_fifo_descriptor_does_not_block_the_search() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(run.join("1_2.json"))
            .status()
            .unwrap();
        assert!(made.success());
        let below = record_dirs_below(d.path());
        assert_eq!(below.found.len(), 1, "{below:?}");
        assert_eq!(below.found[0].layout, "descriptor unreadable");
    }

    #[test]
    fn the_search_stops_at_its_depth_and_its_count() {
        let d = tempfile::tempdir().unwrap();
        let too_deep = d.path().join("a/b/c/d");
        std::fs::create_dir_all(&too_deep).unwrap();
        std::fs::write(too_deep.join("1_2.json"), "{}").unwrap();
        assert!(record_dirs_below(d.path()).found.is_empty());
        for i in 0..MAX_LISTED + 1 {
            let run = d.path().join(format!("run{i:04}"));
            std::fs::create_dir(&run).unwrap();
            std::fs::write(run.join("1_2.json"), "{}").unwrap();
        }
        let below = record_dirs_below(d.path());
        assert_eq!(below.found.len(), MAX_LISTED);
        assert!(below.incomplete);
    }
}
