//! The instance table: one row per recorded instance, sorted and filtered.

use std::path::Path;

use rr_format::instance::Side;
use rr_format::text::visible;
use rr_format::{demangle, Descriptor, RecordDir};

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub json_path: std::path::PathBuf,
    pub json_file: String,
    /// The kernel name exactly as recorded (for exports and matching).
    pub kernel: String,
    /// The readable name, with control characters made visible (for display).
    pub demangled: String,
    pub time_ns: Option<u64>,
    pub occurrences: Option<u64>,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub input_len: Option<u64>,
    /// The kernel the report names for this instance (what `check` compares the descriptor
    /// with), if the report lists it.
    pub report_name: Option<String>,
    /// Why the instance is broken: its descriptor is unreadable (known at load), or the first
    /// error `check` found (filled in by a worker after the first frame).
    pub problem: Option<String>,
    /// Why the instance cannot be replayed at all (known once its descriptor is read).
    pub unreplayable: Option<String>,
    /// The device image an LLVM 16–17 record lacks (`rr_engine::replay::legacy::missing_image`):
    /// it cannot be replayed until one is given (`I`, as `--image`).
    pub missing_image: Option<std::path::PathBuf>,
    /// A legacy record's `.replay.output`, written by LLVM's old replay tool (found at load):
    /// the output → replay pair shows it until rr-tui replays the instance.
    pub old_replay_output: Option<std::path::PathBuf>,
}

impl Row {
    /// The kernel name as recorded, safe to draw.
    pub fn raw_kernel(&self) -> String {
        visible(&self.kernel).into_owned()
    }

    pub fn geometry(&self) -> String {
        match (self.grid, self.block) {
            (Some(g), Some(b)) => {
                format!("{}×{}×{} · {}×{}×{}", g[0], g[1], g[2], b[0], b[1], b[2])
            }
            _ => "?".into(),
        }
    }
}

/// Rows whose descriptors are read before the first frame; beyond them the table starts with
/// what the directory listing and the report say, and workers fill the rest in (a recording
/// of 100 000 instances draws at once and completes while it is browsed).
pub const EAGER_ROWS: usize = 500;
/// Rows a worker reads per batch after the first frame.
pub const ROWS_PER_BATCH: usize = 5000;

/// Instances whose rows are still placeholders: their index and their files.
pub type PendingRows = Vec<(usize, rr_format::InstanceEntry)>;

/// Load the rows of a directory: the report (or descriptors) plus each descriptor's geometry
/// and the snapshot size (a `stat`, never the bytes) for the first [`EAGER_ROWS`]; the others
/// as placeholders, returned to be read later ([`read_rows`]).
/// The returned directory's instances have moved into the rows and the pending list.
pub fn load(dir: &Path) -> crate::error::Result<(RecordDir, Vec<Row>, PendingRows)> {
    let mut rd = RecordDir::open(dir)?;
    let instances = std::mem::take(&mut rd.instances);
    let now = instances.len().min(EAGER_ROWS);
    let mut all = instances.into_iter().enumerate();
    let eager: PendingRows = all.by_ref().take(now).collect();
    let mut rows: Vec<Row> = read_rows(&eager).into_iter().map(|(_, r)| r).collect();
    let pending: PendingRows = all.collect();
    rows.extend(pending.iter().map(|(_, inst)| placeholder(inst)));
    Ok((rd, rows, pending))
}

/// The rows of `entries`, descriptors read on all cores (they are small but many).
pub fn read_rows(entries: &[(usize, rr_format::InstanceEntry)]) -> Vec<(usize, Row)> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
    let per = entries.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = entries
            .chunks(per)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(i, inst)| (*i, row(inst)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// What a row shows before its descriptor is read: the report's name and times, if any.
fn placeholder(inst: &rr_format::InstanceEntry) -> Row {
    let kernel = inst.kernel_name.clone().unwrap_or_else(|| "…".into());
    Row {
        json_path: inst.files.json(),
        json_file: inst.json_file.clone(),
        demangled: visible(&demangle(&kernel)).into_owned(),
        kernel,
        time_ns: inst.time_ns,
        occurrences: inst.occurrences,
        grid: None,
        block: None,
        input_len: None,
        report_name: inst.kernel_name.clone().filter(|_| inst.in_report),
        problem: None,
        unreplayable: None,
        missing_image: None,
        old_replay_output: None,
    }
}

fn row(inst: &rr_format::InstanceEntry) -> Row {
    let json_path = inst.files.json();
    let (d, problem) = match Descriptor::read(&json_path) {
        Ok(d) => (Some(d), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let kernel = d
        .as_ref()
        .map(|d| d.name.clone())
        .or_else(|| inst.kernel_name.clone())
        .unwrap_or_else(|| "?".into());
    Row {
        json_file: inst.json_file.clone(),
        demangled: visible(&demangle(&kernel)).into_owned(),
        kernel,
        time_ns: inst.time_ns,
        occurrences: inst.occurrences,
        grid: d.as_ref().map(|d| d.grid()),
        block: d.as_ref().map(|d| d.block()),
        input_len: d
            .as_ref()
            .and_then(|d| rr_format::store::recorded_len(&inst.files, d, Side::Input).ok()),
        report_name: inst.kernel_name.clone().filter(|_| inst.in_report),
        unreplayable: d.as_ref().and_then(rr_format::inspect::unreplayable),
        missing_image: d
            .as_ref()
            .and_then(|d| rr_engine::replay::legacy::missing_image(d, &inst.files)),
        old_replay_output: d
            .as_ref()
            .filter(|d| d.format.is_legacy())
            .map(|_| inst.files.legacy_replay_output())
            .filter(|p| rr_format::fsio::regular_len(p).is_ok()),
        problem,
        json_path,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Report,
    Kernel,
    Time,
    Occurrences,
    Size,
    Status,
}

impl SortKey {
    pub fn next(self) -> SortKey {
        match self {
            SortKey::Report => SortKey::Kernel,
            SortKey::Kernel => SortKey::Time,
            SortKey::Time => SortKey::Occurrences,
            SortKey::Occurrences => SortKey::Size,
            SortKey::Size => SortKey::Status,
            SortKey::Status => SortKey::Report,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Report => "report order",
            SortKey::Kernel => "kernel",
            SortKey::Time => "time",
            SortKey::Occurrences => "occurrences",
            SortKey::Size => "snapshot size",
            SortKey::Status => "status",
        }
    }
}

/// Indices of the rows that match `filter` (case-insensitive, kernel or file), sorted.
pub fn view(
    rows: &[Row],
    filter: &str,
    key: SortKey,
    descending: bool,
    status_rank: impl Fn(usize) -> u8,
) -> Vec<usize> {
    let f = filter.to_lowercase();
    let mut v: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            f.is_empty()
                || rows[i].demangled.to_lowercase().contains(&f)
                || rows[i].kernel.to_lowercase().contains(&f)
                || rows[i].json_file.contains(&f)
        })
        .collect();
    match key {
        SortKey::Report => {}
        SortKey::Kernel => v.sort_by(|&a, &b| rows[a].demangled.cmp(&rows[b].demangled)),
        SortKey::Time => v.sort_by_key(|&i| rows[i].time_ns),
        SortKey::Occurrences => v.sort_by_key(|&i| rows[i].occurrences),
        SortKey::Size => v.sort_by_key(|&i| rows[i].input_len),
        SortKey::Status => v.sort_by_key(|&i| status_rank(i)),
    }
    if descending {
        v.reverse();
    }
    v
}
