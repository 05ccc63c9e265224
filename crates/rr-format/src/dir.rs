//! A record directory: its instances, in report order, and its report if there is one.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::descriptor::Descriptor;
use super::ext::{self, EXT_LEGACY_INPUT};
use super::hash;
use super::instance::InstanceFiles;
use super::report::{self, Report, ReportRow};
use crate::error::{Error, Result};

/// Report candidates larger than this are not read (a captured log of gigabytes is not a report).
const MAX_REPORT_FILE: u64 = crate::fsio::MAX_REPORT_BYTES;
/// Bytes read at most while looking for reports among the other files of a directory and of the
/// recordings below it: stray (or sparse) files must not be read whole before anything is shown.
const MAX_REPORT_SEARCH: u64 = 4 * MAX_REPORT_FILE;

/// Whether `dir` already holds records (instances, blobs or a report named `report_file`):
/// recording into it would mix two recordings.
pub fn holds_records(dir: &Path, report_file: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name == report_file
            || name == crate::store::BLOB_DIR
            || name
                .strip_suffix(".json")
                .is_some_and(|stem| hash::parse_stem(stem).is_some())
    })
}

#[derive(Debug, Clone)]
pub struct InstanceEntry {
    pub files: InstanceFiles,
    pub json_file: String,
    /// From the report; `None` without one.
    pub kernel_name: Option<String>,
    pub time_ns: Option<u64>,
    pub occurrences: Option<u64>,
    pub in_report: bool,
}

#[derive(Debug)]
pub struct RecordDir {
    pub path: PathBuf,
    pub report_file: Option<PathBuf>,
    pub report: Option<Report>,
    /// A report banner was found but its body is malformed.
    pub report_problem: Option<Error>,
    pub instances: Vec<InstanceEntry>,
    /// Report rows whose descriptor file is missing.
    pub missing_rows: Vec<ReportRow>,
    /// The recordings `record` wrote below this directory (`pid-N/` for other processes of
    /// the program, `rank-N/` for MPI ranks), each opened the same way. Their instances are in
    /// `instances` too, named relative to this directory (`pid-42/1_2.json`).
    pub below: Vec<RecordDir>,
}

/// Whether a directory entry is one `record` writes for another process or rank:
/// `pid-<digits>` or `rank-<digits>`, a real directory (not a link).
fn is_recording_below(name: &str, file_type: Option<std::fs::FileType>) -> bool {
    file_type.is_some_and(|t| t.is_dir()) && is_process_directory(name)
}

/// Whether a name is one `record` gives another process's or rank's recording:
/// `pid-<digits>` or `rank-<digits>`.
pub(crate) fn is_process_directory(name: &str) -> bool {
    let number = name
        .strip_prefix("pid-")
        .or_else(|| name.strip_prefix("rank-"));
    number.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// What one listing of a directory found that opening it needs.
struct Listing {
    /// Descriptors, and legacy memory beside them: only what is looked up.
    names: HashSet<String>,
    /// Files that may be a report, `(name, bytes)`: small regular files that are not instance
    /// files or images.
    report_candidates: Vec<(String, u64)>,
    /// The recordings below it, `(name, path)`, unsorted.
    below: Vec<(String, PathBuf)>,
}

impl Listing {
    /// Lists `path` once, reading no file (only the entries' types and sizes).
    fn read(path: &Path) -> Result<Listing> {
        let mut names = HashSet::new();
        let mut report_candidates = Vec::new();
        let mut below = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| Error::io(path, e))? {
            let entry = entry.map_err(|e| Error::io(path, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_recording_below(&name, entry.file_type().ok()) {
                below.push((name.clone(), entry.path()));
            }
            let ext = Path::new(&name)
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("");
            if !ext::is_instance_file(&name) && !matches!(ext, "cubin" | "fatbin" | "ptx" | "csv") {
                let small_file = entry
                    .metadata()
                    .ok()
                    .filter(|m| m.is_file() && m.len() <= MAX_REPORT_FILE);
                if let Some(m) = small_file {
                    report_candidates.push((name.clone(), m.len()));
                }
            }
            // Only what is looked up below: descriptors, and legacy memory beside them.
            let legacy_input = name
                .strip_suffix(EXT_LEGACY_INPUT)
                .is_some_and(|rest| rest.ends_with('.'));
            if name.ends_with(".json") || legacy_input {
                names.insert(name);
            }
        }
        Ok(Listing {
            names,
            report_candidates,
            below,
        })
    }
}

impl RecordDir {
    /// Scan a directory. Reads only file names and the report; never snapshots, and descriptors
    /// only when a `.json` is named neither by hashes nor beside a `.memory` (is it a legacy
    /// descriptor whose memory is missing?). Callers that need more, such as the explorer, read
    /// descriptors once themselves.
    pub fn open(path: &Path) -> Result<RecordDir> {
        // One budget for the report search of the directory and of every recording below it.
        let mut budget = MAX_REPORT_SEARCH;
        let (mut dir, below) = Self::open_one(path, &mut budget)?;
        for (name, sub) in below {
            // A subdirectory that cannot be read is left out, not fatal: the rest is there.
            let Ok((below, _)) = Self::open_one(&sub, &mut budget) else {
                continue;
            };
            for inst in &below.instances {
                dir.instances.push(InstanceEntry {
                    json_file: format!("{name}/{}", inst.json_file),
                    ..inst.clone()
                });
            }
            dir.below.push(below);
        }
        Ok(dir)
    }

    /// Whether this is no record directory at all: no instance (its own or below), no report,
    /// not even a report row. `report`, `check` and `tune` refuse it, listing the record
    /// directories below it ([`crate::search`]).
    pub fn holds_nothing(&self) -> bool {
        self.instances.is_empty()
            && self.report.is_none()
            && self.report_problem.is_none()
            && self.missing_rows.is_empty()
    }

    /// The launches the recorders of this directory and those below it saw, summed.
    pub fn recorder_summary(&self) -> Option<report::RecorderSummary> {
        let mut all = std::iter::once(self)
            .chain(&self.below)
            .filter_map(|d| d.report.as_ref()?.summary.as_ref())
            .peekable();
        all.peek()?;
        Some(report::RecorderSummary::sum(all))
    }

    /// One directory, and the recordings below it (in name order) found in the same listing.
    /// `budget`: bytes the report search may still read.
    fn open_one(path: &Path, budget: &mut u64) -> Result<(RecordDir, Vec<(String, PathBuf)>)> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if !meta.is_dir() {
            return Err(Error::format(
                path,
                "not a directory (give a record directory, or a descriptor .json to `inspect`)",
            ));
        }
        let Listing {
            names,
            report_candidates,
            mut below,
        } = Listing::read(path)?;
        let mut dir = RecordDir {
            path: path.to_path_buf(),
            report_file: None,
            report: None,
            report_problem: None,
            instances: vec![],
            missing_rows: vec![],
            below: vec![],
        };
        dir.find_report(report_candidates, budget);
        let by_file = dir.add_reported_instances(&names);
        dir.add_unreported_instances(&names, &by_file);
        below.sort();
        Ok((dir, below))
    }

    /// Reads the first report among `candidates` (`(name, bytes)`) into `report` (or what is
    /// wrong with it into `report_problem`). Likely names first (the recorder's report.txt,
    /// captured logs), then by name; at most `budget` bytes read in all.
    fn find_report(&mut self, mut candidates: Vec<(String, u64)>, budget: &mut u64) {
        let rank = |n: &str| match n {
            "report.txt" => 0,
            _ if n.contains("report") => 1,
            _ if n.ends_with(".txt") || n.ends_with(".log") => 2,
            _ => 3,
        };
        candidates.sort_by(|a, b| (rank(&a.0), &a.0).cmp(&(rank(&b.0), &b.0)));
        for (cand, len) in candidates {
            let Some(left) = budget.checked_sub(len) else {
                continue;
            };
            *budget = left;
            let p = self.path.join(&cand);
            let Ok(bytes) = crate::fsio::read_limited(&p, MAX_REPORT_FILE, "report") else {
                continue;
            };
            if !report::contains_report(&bytes) {
                continue;
            }
            match report::parse(&String::from_utf8_lossy(&bytes)) {
                Ok(Some(r)) => {
                    self.report_file = Some(p);
                    self.report = Some(r);
                    break;
                }
                Ok(None) => {}
                Err(problem) => self.report_problem = Some(Error::format(&p, problem)),
            }
        }
    }

    /// The instances the report names, in its order, among the directory's `names`; rows whose
    /// descriptor is not there go to `missing_rows`. Returns each reported file's index.
    fn add_reported_instances(&mut self, names: &HashSet<String>) -> HashMap<String, usize> {
        let mut by_file: HashMap<String, usize> = HashMap::new();
        let Some(r) = &self.report else {
            return by_file;
        };
        for row in &r.rows {
            // A report row's file is relative to the recording directory, which may have moved.
            let file_name = Path::new(&row.json_file)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            if names.contains(&file_name) && !by_file.contains_key(&file_name) {
                by_file.insert(file_name.clone(), self.instances.len());
                self.instances.push(InstanceEntry {
                    files: InstanceFiles::from_descriptor_path(&self.path.join(&file_name)),
                    json_file: file_name,
                    kernel_name: Some(row.kernel_name.clone()),
                    time_ns: row.time_ns,
                    occurrences: row.occurrences,
                    in_report: true,
                });
            } else if !names.contains(&file_name) {
                self.missing_rows.push(row.clone());
            }
        }
        by_file
    }

    /// The descriptors among `names` that the report does not name (`by_file`), by name: those
    /// named by hashes, and legacy ones.
    fn add_unreported_instances(
        &mut self,
        names: &HashSet<String>,
        by_file: &HashMap<String, usize>,
    ) {
        let mut stems: Vec<&String> = names.iter().filter(|n| n.ends_with(".json")).collect();
        stems.sort();
        let path = &self.path;
        for name in stems {
            if by_file.contains_key(name) {
                continue;
            }
            let stem = &name[..name.len() - ".json".len()];
            // Legacy records (LLVM 16–22) are named by kernel: `<Name>.json` beside
            // `<Name>.memory`, or a descriptor with the legacy keys whose memory is missing.
            if hash::parse_stem(stem).is_none()
                && !names.contains(&format!("{stem}.{EXT_LEGACY_INPUT}"))
                && !crate::legacy::is_legacy_file(&path.join(name))
            {
                continue;
            }
            self.instances.push(InstanceEntry {
                files: InstanceFiles::from_descriptor_path(&path.join(name)),
                json_file: name.clone(),
                kernel_name: None,
                time_ns: None,
                occurrences: None,
                in_report: false,
            });
        }
    }

    /// Rows in LLVM's report format; unknown time and occurrences stay unknown. Without a
    /// report the kernel names come from the descriptors: those that cannot be read are `?` and
    /// their errors are returned beside the rows.
    pub fn report_rows(&self) -> (Vec<ReportRow>, Vec<Error>) {
        let mut problems = Vec::new();
        let rows = self
            .instances
            .iter()
            .map(|i| ReportRow {
                json_file: i.json_file.clone(),
                kernel_name: match &i.kernel_name {
                    Some(n) => n.clone(),
                    None => match Descriptor::read(&i.files.json()) {
                        Ok(d) => d.name,
                        Err(e) => {
                            problems.push(e);
                            "?".into()
                        }
                    },
                },
                time_ns: i.time_ns,
                occurrences: i.occurrences,
            })
            .collect();
        (rows, problems)
    }

    /// Where the report says the instances were recorded, when it says so.
    pub fn recorded_directory(&self) -> Option<&str> {
        self.report.as_ref().and_then(|r| r.directory.as_deref())
    }

    pub fn absolute_path(&self) -> String {
        std::fs::canonicalize(&self.path)
            .unwrap_or_else(|_| self.path.clone())
            .display()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn legacy_descriptors_are_instances_and_their_outputs_not_reports() {
        let d = tempfile::tempdir().unwrap();
        let legacy = r#"{"ArgOffsets":[],"ArgPtrs":[],"DeviceId":0,"DeviceMemorySize":0,"LoopTripCount":0,"Name":"k","NumArgs":0,"NumTeamsClause":1,"ThreadLimitClause":1}"#;
        std::fs::write(d.path().join("k.json"), legacy).unwrap();
        std::fs::write(d.path().join("j.json"), "{}").unwrap();
        std::fs::write(d.path().join("j.memory"), "").unwrap();
        std::fs::write(d.path().join("package.json"), r#"{"name":"x"}"#).unwrap();
        let banner = "=== Kernel Record Report ===";
        std::fs::write(d.path().join("k.original.output"), banner).unwrap();
        std::fs::write(d.path().join("k.replay.output"), banner).unwrap();
        let rd = super::RecordDir::open(d.path()).unwrap();
        let files: Vec<_> = rd.instances.iter().map(|i| i.json_file.as_str()).collect();
        assert_eq!(files, vec!["j.json", "k.json"]);
        assert!(rd.report_problem.is_none() && rd.report.is_none());
    }

    #[test]
    fn an_occupied_directory_is_recognised() {
        let d = tempfile::tempdir().unwrap();
        assert!(!super::holds_records(d.path(), "report.txt"));
        std::fs::write(d.path().join("notes.txt"), "x").unwrap();
        assert!(!super::holds_records(d.path(), "report.txt"));
        std::fs::write(d.path().join("1_2.json"), "{}").unwrap();
        assert!(super::holds_records(d.path(), "report.txt"));
    }
}
