//! A finished sweep opened from its `tune --json-out` file (`rr-tui SWEEP.json`): a sweep's
//! heatmap, best configurations and Pareto front, without a GPU. The file is read with `tune`'s
//! own reader (a regular file, its size checked before a byte is read, the trials bounded) and
//! shown on the tuning screen of the instance it is a sweep of, which must be the one its
//! descriptor names (same kernel, same recorded configuration).

use std::path::{Path, PathBuf};

use rr_format::text::visible_path;
use rr_tune::{Config, TuneReport};

use super::run::TuneRun;
use crate::error::{Error, Result};
use crate::tui::app::{App, Cmd, Field, Msg, Screen, Work};

/// A sweep read from a file, and the descriptor of its instance.
pub struct SweepFile {
    pub report: TuneReport,
    /// The descriptor the report names, found (see [`locate`]).
    pub descriptor: PathBuf,
    /// The sweep's file, as given and as shown.
    pub path: PathBuf,
    pub shown: String,
}

impl SweepFile {
    /// Read `path` and find the instance it is a sweep of. Every refusal is one line naming
    /// the file.
    pub fn read(path: &Path) -> Result<SweepFile> {
        let shown = visible_path(path);
        let report = rr_tune::sweep::read_report(path, rr_tune::sweep::FOR_EXPLORER)?;
        let descriptor = locate(path, &report.descriptor)?;
        let d = rr_format::Descriptor::read(&descriptor).map_err(|e| {
            Error::invalid(format!(
                "{shown}: its instance's descriptor cannot be read: {e}"
            ))
        })?;
        let recorded = Config::recorded(&d);
        if d.name != report.kernel || recorded != report.recorded {
            return Err(Error::invalid(format!(
                "{shown} is a sweep of {} recorded at {}, but {} is {} recorded at {}: not the instance it swept",
                rr_format::text::visible(&report.kernel),
                report.recorded,
                visible_path(&descriptor),
                rr_format::text::visible(&d.name),
                recorded
            )));
        }
        check_rows(&shown, &report)?;
        Ok(SweepFile {
            report,
            descriptor,
            path: path.to_path_buf(),
            shown,
        })
    }

    /// The record directory the sweep's instance is in.
    pub fn record_dir(&self) -> PathBuf {
        match self.descriptor.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }
}

/// The rows a sweep can hold, checked as `tune merge` checks its parts' (one rule): each a
/// configuration of the space its axes span, at its own index; and at least one with a time a
/// launch takes when any has a time (a file of only forged times would open as an empty sweep).
fn check_rows(shown: &str, report: &TuneReport) -> Result<()> {
    rr_tune::shard::check_report_rows(shown, report).map_err(Error::invalid)?;
    let timed = || report.trials.iter().filter_map(|t| t.kernel_ns.as_ref());
    if timed().next().is_some() && !timed().any(rr_tune::trial::plausible_time) {
        return Err(Error::invalid(format!(
            "{shown}: no row has a plausible time (finite, ordered, none under {} ns: no launch \
             takes less)",
            rr_tune::trial::MIN_KERNEL_NS
        )));
    }
    Ok(())
}

/// Where the descriptor a sweep names is: `tune` writes it as it was given, relative to where
/// `tune` ran, so a relative one is looked for from here first, then from the sweep file's
/// directory (a sweep kept beside its record, or bundled with the repository as
/// `assets/sweeps/` is, names it from there).
fn locate(sweep: &Path, named: &str) -> Result<PathBuf> {
    let named_path = Path::new(named);
    let beside = sweep
        .parent()
        .filter(|_| named_path.is_relative())
        .map(|dir| dir.join(named_path));
    std::iter::once(named_path.to_path_buf())
        .chain(beside.map(|p| tidy(&p)))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::invalid(format!(
                "{}: the descriptor of the instance it is a sweep of, {}, is not a file here{}",
                visible_path(sweep),
                rr_format::text::visible(named),
                if named_path.is_relative() {
                    " (looked for from the current directory and from the sweep's)"
                } else {
                    ""
                }
            ))
        })
}

/// `p` without its `..` steps (`assets/sweeps/../../record-fixtures/x` is shown as
/// `record-fixtures/x`) when that names the same file; `p` itself where a symbolic link makes
/// the two differ.
fn tidy(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    if same_file(&out, p) {
        out
    } else {
        p.to_path_buf()
    }
}

/// A sweep file the explorer is reading on a worker.
#[derive(Debug, Clone)]
pub struct OpeningSweep {
    pub path: PathBuf,
    /// As shown ("reading SWEEP.json…").
    pub shown: String,
}

/// A sweep file read on a worker with the record directory of its instance, its rows worked
/// out (heatmap, ranking, front: seconds for a million rows), ready to show.
pub struct OpenedSweep {
    meta: SweepFile,
    run: TuneRun,
    record: crate::tui::app::picker::OpenedRecord,
}

impl std::fmt::Debug for OpenedSweep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenedSweep({})", self.meta.shown)
    }
}

impl App {
    /// An explorer started on a sweep file (`rr-tui SWEEP.json`): its first frame says the file
    /// is being read, which a worker does once that frame is drawn ([`App::read_sweep`]);
    /// the sweep then replaces it, shown as [`App::show_sweep`] shows one.
    pub fn opening_sweep(
        path: PathBuf,
        gpu: std::result::Result<(), String>,
        output_dir: PathBuf,
    ) -> App {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut app = App::new(dir, Vec::new(), gpu, output_dir);
        app.status = None;
        app.tune.opening = Some(OpeningSweep {
            shown: visible_path(&path),
            path,
        });
        app
    }

    /// The sweep file of [`App::opening_sweep`], read on a worker (once: the first frame).
    pub(in crate::tui::app) fn read_sweep(&mut self) -> Vec<Cmd> {
        let Some(o) = self.tune.opening.as_ref() else {
            return vec![];
        };
        let path = o.path.clone();
        vec![Cmd::Work(Work::new(move || {
            let opened = (|| -> Result<OpenedSweep> {
                let mut meta = SweepFile::read(&path)?;
                let dir = meta.record_dir();
                let (rd, rows, pending) = crate::tui::app::instances::load(&dir)?;
                let report = std::mem::take(&mut meta.report.trials);
                let mut report_only = meta.report.clone();
                report_only.trials = report;
                let run = TuneRun::from_report(1, report_only, meta.shown.clone());
                Ok(OpenedSweep {
                    meta,
                    run,
                    record: crate::tui::app::picker::OpenedRecord {
                        recorder: rd.recorder_summary(),
                        dir,
                        rows,
                        pending,
                    },
                })
            })();
            Msg::SweepOpened(opened.map(Box::new).map_err(|e| e.to_string()))
        }))]
    }

    /// The sweep file is read: its record replaces the explorer's (the settings stay) and the
    /// sweep is shown; one that cannot be ends the explorer with why, as before a frame.
    pub(in crate::tui::app) fn on_sweep_opened(
        &mut self,
        result: std::result::Result<Box<OpenedSweep>, String>,
    ) -> Vec<Cmd> {
        if self.tune.opening.take().is_none() {
            return vec![];
        }
        let shown = result.and_then(|opened| {
            let OpenedSweep { meta, run, record } = *opened;
            let mut fresh = App::new(
                record.dir,
                record.rows,
                self.gpu.clone(),
                self.output_dir.clone(),
            );
            fresh.settings = self.settings.clone();
            fresh.tune.form = self.tune.form.clone();
            fresh.export_dir = self.export_dir.clone();
            fresh.width = self.width;
            fresh.height = self.height;
            fresh.recorder = record.recorder;
            fresh.pending_rows = record.pending;
            // Said after what was said before (the screen changes, the message stays); the
            // record is another than the placeholder's, whose answers are dropped.
            fresh.status_serial = self.status_serial;
            fresh.record_serial = self.record_serial + 1;
            fresh.show_sweep_run(&meta, run)?;
            Ok(fresh)
        });
        match shown {
            Ok(fresh) => {
                *self = fresh;
                self.relayout();
                let mut cmds = self.start_checks();
                cmds.extend(self.read_more_rows());
                cmds
            }
            Err(e) => {
                self.fatal = Some(e);
                self.quit = true;
                vec![Cmd::Quit]
            }
        }
    }

    /// Show `sweep` on the tuning screen of its instance, which must be among the rows (the
    /// caller opened its record directory). Err: why not.
    pub fn show_sweep(&mut self, mut sweep: SweepFile) -> std::result::Result<(), String> {
        let mut report = sweep.report.clone();
        report.trials = std::mem::take(&mut sweep.report.trials);
        let run = TuneRun::from_report(self.jobs.next_run(), report, sweep.shown.clone());
        self.show_sweep_run(&sweep, run)
    }

    /// Show `run`, worked out from `sweep`'s rows, on the tuning screen of its instance.
    fn show_sweep_run(
        &mut self,
        sweep: &SweepFile,
        run: TuneRun,
    ) -> std::result::Result<(), String> {
        let same = |a: &Path| same_file(a, &sweep.descriptor);
        let Some(i) = self.rows.iter().position(|r| same(&r.json_path)) else {
            return Err(format!(
                "{}: its instance {} is not among the instances of {}",
                sweep.shown,
                visible_path(&sweep.descriptor),
                visible_path(&self.dir)
            ));
        };
        self.fill_form_from(sweep);
        self.jobs.seen_run(run.run);
        let (verified, rows) = (run.count(rr_tune::Status::Ok), run.report.trials.len());
        let energy = match run.report.energy {
            Some(_) => ", p for the Pareto front",
            None => "",
        };
        self.tune.runs.insert(i, run);
        if let Some(at) = self.view.iter().position(|&v| v == i) {
            self.selected = at;
        }
        self.tune.heat_scroll = (0, 0);
        self.screen = Screen::Tune;
        self.set_status(
            format!(
                "{}: {rows} configuration(s), {verified} verified, opened from the file (a for other axes{energy})",
                sweep.shown
            ),
            false,
        );
        Ok(())
    }
}

impl App {
    /// The tuning form takes the sweep's axes and strategy, and answers from the sweep
    /// (`simulate FILE` in the GPUs field): `r` then simulates a search of that space from it,
    /// with no GPU. A value the form does not take (the file may say anything) leaves the
    /// field as it was.
    fn fill_form_from(&mut self, sweep: &SweepFile) {
        let axes = &sweep.report.axes;
        let simulate = format!("simulate {}", sweep.path.display());
        let values = [
            (Field::Grid, axes.grid.clone()),
            (Field::Block, axes.block.clone()),
            (Field::SharedMem, axes.shared_mem.clone()),
            (Field::Registers, axes.registers.clone()),
            (
                Field::Strategy,
                Some(sweep.report.strategy.name().to_string()),
            ),
            (Field::Devices, Some(simulate)),
        ];
        for (field, value) in values {
            let _ = self
                .tune
                .form
                .settings
                .set_text(field, value.as_deref().unwrap_or(""));
        }
    }
}

/// Whether two paths name the same file (device and inode: the rows' paths and the sweep's
/// may be spelt differently).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => false,
    }
}
