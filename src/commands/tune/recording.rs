//! `rr-tui tune DIR`: every selected instance of a recording swept with the same axes, one
//! after the other, each exactly as `tune X.json` sweeps it (its own report and CSV in the
//! reports directory, resumable one by one), then a summary of them all. An instance the axes
//! do not apply to (a limit, a missing record file, a legacy record lacking its image) is
//! listed with the reason and the next goes on. With `--shard K/N` the instances are shared
//! out: instance i (in the recording's order) is part `i mod N + 1`'s, swept whole.

use std::path::{Path, PathBuf};

use rr_format::dir::RecordDir;
use rr_format::text::{visible, visible_path};
use rr_format::{demangle, fsio, Descriptor};
use rr_tune::shard::Shard;
use rr_tune::{Status, TuneReport};
use serde::Serialize;

use rr_tune::sweep::{check_hub, preflight, read_report};

use super::text;
use crate::output;
use rr_engine::{Error, Result};
use rr_tune::job::TuneJob;

/// One instance of the summary.
#[derive(Debug, Clone, Serialize)]
struct Row {
    instance: String,
    kernel: String,
    /// `swept`, `interrupted`, `skipped` (with the reason) or `failed`.
    outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    best: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    best_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speedup: Option<f64>,
    verified: usize,
    failed: usize,
    report: String,
}

/// `tune DIR`: each selected instance swept by `sweep` (`tune`'s own entry point, passed in
/// rather than imported: it calls this for a directory), so exactly as `tune X.json` sweeps it.
pub fn run_dir(a: &TuneJob, dir: &Path, sweep: fn(&TuneJob) -> Result<i32>) -> Result<i32> {
    refuse_one_instance_flags(a)?;
    let pattern = a
        .kernels
        .as_deref()
        .map(rr_format::record_config::kernel_pattern)
        .transpose()
        .map_err(|e| Error::invalid(format!("--kernels {e}")))?;
    let shard = a.instances_shard();
    let rec = RecordDir::open(dir)?;
    if rec.holds_nothing() {
        let command = if a.list { "tune --list" } else { "tune" };
        return Ok(crate::commands::not_a_record::refuse(dir, command, false));
    }
    let selected = select_instances(&rec, shard, |kernel| {
        pattern
            .as_ref()
            .is_none_or(|p| p.is_match(kernel) || p.is_match(&demangle(kernel)))
    });
    if selected.is_empty() {
        return nothing_selected(a, dir, &rec, shard);
    }
    // A recording none of whose selected instances can be swept (LLVM 19–22's, say) is the
    // input's fault, said before the driver is looked for, as for one instance: the first
    // instance's refusal, which names its descriptor.
    if let Some(e) = all_refused(a, &selected) {
        return Err(e);
    }
    let reports = a.reports.clone().unwrap_or_else(|| default_reports(dir));
    if !a.list {
        prepare_reports(a, &reports)?;
    }
    // Engines go on from one instance to the next (quitting when this returns).
    let _keeping = (!a.fresh_engines && !a.list).then(rr_tune::sweep::pool::keep);
    let rows = sweep_instances(a, selected, &reports, sweep);
    if a.list {
        return Ok(0);
    }
    write_summary(&reports, &rows)?;
    print_summary(&rows, &reports);
    Ok(exit_status(&rows))
}

/// 130 when interrupted; else 0 only when every instance found a best configuration, as `tune
/// X.json` exits 0 for each: an instance skipped (its record refused, a limit), failed or with
/// nothing verified makes it 1, as an instance that errs does in `ab` and a row that cannot be
/// read does in `report`. The summary says which.
fn exit_status(rows: &[Row]) -> i32 {
    if rows.iter().any(|r| r.outcome == "interrupted") {
        130
    } else if rows.iter().all(|r| r.best.is_some()) {
        0
    } else {
        1
    }
}

/// What only one instance's sweep takes, refused for a recording (once, before its instances:
/// each one's preflight says the source flags' problem again).
fn refuse_one_instance_flags(a: &TuneJob) -> Result<()> {
    a.check_source_flags().map_err(Error::invalid)?;
    if a.simulate.is_some() {
        return Err(Error::invalid(
            "--simulate answers one instance from its own sweep: give the instance's descriptor, not a directory",
        ));
    }
    if a.report_file().is_some() || a.csv.is_some() {
        return Err(Error::invalid(
            "with a directory each instance's report goes to --reports DIR (<instance>.tune.json and .csv), not --json-out/--csv",
        ));
    }
    Ok(())
}

/// The instances of `rec` this run sweeps, in the recording's order: its part's (`shard`),
/// whose kernel is `wanted` (`--kernels`). Each as its descriptor's name, path and kernel.
fn select_instances(
    rec: &RecordDir,
    shard: Option<Shard>,
    wanted: impl Fn(&str) -> bool,
) -> Vec<(String, PathBuf, String)> {
    let mut selected = Vec::new();
    for (i, e) in rec.instances.iter().enumerate() {
        if shard.is_some_and(|s| !s.owns(i as u64)) {
            continue;
        }
        let json = e.files.json();
        // The kernel's name: the report's, else the descriptor's. An instance whose descriptor
        // cannot be read is taken whatever `--kernels` says: its sweep is refused, and the
        // summary lists it with the reason rather than leave it out unsaid.
        let kernel = match &e.kernel_name {
            Some(k) => k.clone(),
            None => Descriptor::read(&json).map(|d| d.name).unwrap_or_default(),
        };
        if kernel.is_empty() || wanted(&kernel) {
            selected.push((e.json_file.clone(), json, kernel));
        }
    }
    selected
}

/// No instance selected: nothing to do for a part of a job array with more tasks than
/// instances, else refused.
fn nothing_selected(a: &TuneJob, dir: &Path, rec: &RecordDir, shard: Option<Shard>) -> Result<i32> {
    if shard.is_some() && a.kernels.is_none() {
        // A job array with more tasks than instances: the surplus tasks have nothing to do.
        let s = shard.unwrap_or(Shard { k: 1, n: 1 });
        output::line(&format!(
            "part {}/{} holds none of the {} instance(s) of {}",
            s.k,
            s.n,
            rec.instances.len(),
            visible_path(dir)
        ));
        return Ok(0);
    }
    Err(Error::invalid(format!(
        "{}: no instance {}",
        visible_path(dir),
        if a.kernels.is_some() {
            "matches --kernels"
        } else {
            "to sweep"
        }
    )))
}

/// Said once here, not once per instance, and before anything is created: the driver (a hub's
/// engines run where its GPUs are, so this machine needs no driver then), then the reports
/// directory, made.
fn prepare_reports(a: &TuneJob, reports: &Path) -> Result<()> {
    match &a.engine_hub {
        Some(hub) => check_hub(hub)?,
        None => rr_engine::replay::driver_usable()?,
    }
    std::fs::create_dir_all(reports).map_err(|e| Error::io(reports, e))?;
    if !std::fs::symlink_metadata(reports).is_ok_and(|m| m.is_dir()) {
        return Err(Error::invalid(format!(
            "--reports {}: not a directory",
            visible_path(reports)
        )));
    }
    Ok(())
}

/// Each selected instance swept (or listed, with `--list`) as `tune X.json` sweeps it, one
/// after the other until one is interrupted: what each came to.
fn sweep_instances(
    a: &TuneJob,
    selected: Vec<(String, PathBuf, String)>,
    reports: &Path,
    sweep: fn(&TuneJob) -> Result<i32>,
) -> Vec<Row> {
    let mut rows = Vec::with_capacity(selected.len());
    let n = selected.len();
    for (i, (name, json, kernel)) in selected.into_iter().enumerate() {
        let shown = match kernel.as_str() {
            "" => "kernel unknown".into(),
            k => visible(&demangle(k)).into_owned(),
        };
        output::line(&format!(
            "== instance {}/{n}: {shown} ({})",
            i + 1,
            visible(&name)
        ));
        let stem = name.trim_end_matches(".json").replace('/', "_");
        let report = reports.join(format!("{stem}.tune.json"));
        let mut one = whole_instance(a, json);
        one.fresh_engines = false;
        one.events = false;
        if !a.list {
            one.json_out = Some(report.clone());
            one.csv = Some(reports.join(format!("{stem}.tune.csv")));
        }
        let outcome = sweep(&one);
        // Said where it happens too (the summary repeats it): the sweep's refusal.
        if let Err(e) = &outcome {
            output::line(&format!("skipped: {e}"));
        }
        if a.list {
            continue;
        }
        let row = summarise(&name, &kernel, &report, outcome);
        let stop = row.outcome == "interrupted";
        rows.push(row);
        if stop {
            break;
        }
    }
    rows
}

/// The first instance's refusal when every one of `selected` is refused by [`preflight`]
/// (which needs no GPU); None as soon as one passes.
fn all_refused(a: &TuneJob, selected: &[(String, PathBuf, String)]) -> Option<Error> {
    let mut first = None;
    for (_, json, _) in selected {
        match preflight(&whole_instance(a, json.clone())) {
            Ok(_) => return None,
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    first
}

/// The sweep of one instance (`json`) of the recording `a` sweeps: whole (the recording's
/// part is of its instances), with the recording's flags left out.
fn whole_instance(a: &TuneJob, json: PathBuf) -> TuneJob {
    TuneJob {
        descriptor: json,
        kernels: None,
        reports: None,
        shard: None,
        array_task: None,
        ..a.clone()
    }
}

/// `./rr-tune-<recording's name>`.
fn default_reports(dir: &Path) -> PathBuf {
    let name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "recording".into());
    PathBuf::from(format!("rr-tune-{name}"))
}

/// What one instance's sweep came to, from its report.
fn summarise(name: &str, kernel: &str, report: &Path, outcome: Result<i32>) -> Row {
    let mut row = Row {
        instance: name.to_string(),
        kernel: demangle(kernel),
        outcome: "swept".into(),
        reason: None,
        recorded_ns: None,
        best: None,
        best_ns: None,
        speedup: None,
        verified: 0,
        failed: 0,
        report: report.display().to_string(),
    };
    match outcome {
        Err(e) => {
            row.outcome = "skipped".into();
            row.reason = Some(e.to_string());
            return row;
        }
        Ok(130) => row.outcome = "interrupted".into(),
        Ok(_) => {}
    }
    let Ok(r) = read_report(report, "tune DIR") else {
        row.outcome = "failed".into();
        row.reason = Some("no report was written".into());
        return row;
    };
    fill(&mut row, &r);
    row
}

fn fill(row: &mut Row, r: &TuneReport) {
    row.recorded_ns = r.trials.iter().find(|t| t.recorded).and_then(|t| t.cost());
    row.best = r.best.as_ref().map(|b| b.config.describe(&r.defines));
    row.best_ns = r.best.as_ref().and_then(|b| b.cost());
    row.speedup = r.speedup;
    row.verified = r.trials.iter().filter(|t| t.status == Status::Ok).count();
    row.failed = r
        .trials
        .iter()
        .filter(|t| {
            matches!(
                t.status,
                Status::VerifyFailed | Status::Fault | Status::Invalid
            )
        })
        .count();
}

fn write_summary(reports: &Path, rows: &[Row]) -> Result<()> {
    let json = serde_json::to_vec_pretty(rows).unwrap_or_default();
    fsio::write_atomic(&reports.join("summary.json"), &json)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let io = |e: csv::Error| Error::invalid(format!("CSV: {e}"));
    w.write_record([
        "instance",
        "kernel",
        "outcome",
        "reason",
        "recorded_ns",
        "best",
        "best_ns",
        "speedup",
        "verified",
        "failed",
        "report",
    ])
    .map_err(io)?;
    let num = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for r in rows {
        w.write_record([
            r.instance.clone(),
            r.kernel.clone(),
            r.outcome.clone(),
            r.reason.clone().unwrap_or_default(),
            num(r.recorded_ns),
            r.best.clone().unwrap_or_default(),
            num(r.best_ns),
            num(r.speedup),
            r.verified.to_string(),
            r.failed.to_string(),
            r.report.clone(),
        ])
        .map_err(io)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::invalid(format!("CSV: {e}")))?;
    Ok(fsio::write_atomic(&reports.join("summary.csv"), &bytes)?)
}

fn print_summary(rows: &[Row], reports: &Path) {
    output::line("");
    output::line(&format!(
        "Summary of {} instance(s) (also {}/summary.csv and summary.json):",
        rows.len(),
        visible_path(reports)
    ));
    for r in rows {
        let what = match (&r.best, r.speedup, &r.reason) {
            (Some(b), Some(s), _) => format!(
                "best {b} at {}: {s:.3}x the recorded",
                text::ns(r.best_ns.unwrap_or(0.0))
            ),
            (Some(b), None, _) => format!("best {b} (the recorded configuration did not verify)"),
            (None, _, Some(why)) => format!("{}: {why}", r.outcome),
            (None, _, None) => format!("{}: nothing verified", r.outcome),
        };
        let kernel = match r.kernel.as_str() {
            // A descriptor that could not be read named none.
            "" => "kernel unknown".into(),
            k => visible(k),
        };
        output::line(&format!(
            "  {kernel} ({}): {what}; {} verified, {} failed",
            visible(&r.instance),
            r.verified,
            r.failed
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_engine::replay::stats::Stats;
    use rr_engine::replay::timing::TimingPolicy;
    use rr_tune::{Config, Trial};

    #[test]
    fn a_row_says_what_each_instance_came_to() {
        let c = |b: u32| Config {
            grid: [8, 1, 1],
            block: [b, 1, 1],
            shared_mem: 0,
            max_registers: None,
            variant: None,
        };
        let mut r = TuneReport::new(
            "x.json".into(),
            "k".into(),
            c(128),
            TimingPolicy::fixed(1, true),
        );
        for (b, ns, status) in [
            (128, 200.0, Status::Ok),
            (64, 100.0, Status::Ok),
            (32, 0.0, Status::Fault),
        ] {
            let mut t = Trial::new(c(b), status);
            t.recorded = b == 128;
            if status == Status::Ok {
                t.kernel_ns = Some(Stats::of(&[ns]));
            }
            r.trials.push(t);
        }
        r.summarise();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.tune.json");
        std::fs::write(&path, r.to_json()).unwrap();
        let row = summarise("x.json", "k", &path, Ok(0));
        assert_eq!(
            (row.outcome.as_str(), row.verified, row.failed),
            ("swept", 2, 1)
        );
        assert_eq!(
            (row.recorded_ns, row.best_ns, row.speedup),
            (Some(200.0), Some(100.0), Some(2.0))
        );
        let skipped = summarise("y.json", "k", &path, Err(Error::invalid("a limit")));
        assert_eq!(
            (skipped.outcome.as_str(), skipped.reason.as_deref()),
            ("skipped", Some("a limit"))
        );
        let missing = summarise("z.json", "k", &dir.path().join("none.json"), Ok(1));
        assert_eq!(missing.outcome, "failed");
        // Exit 0 only when every instance found a best; 130 when one was interrupted.
        let interrupted = summarise("i.json", "k", &path, Ok(130));
        assert_eq!(exit_status(std::slice::from_ref(&row)), 0);
        assert_eq!(exit_status(&[]), 0);
        for other in [&skipped, &missing] {
            assert_eq!(
                exit_status(&[summarise("x.json", "k", &path, Ok(0)), (*other).clone()]),
                1
            );
        }
        assert_eq!(exit_status(&[skipped.clone(), interrupted]), 130);
        write_summary(dir.path(), &[row, skipped, missing]).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
        assert_eq!(csv.lines().count(), 4);
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("x.json,k,swept,,200,"),
            "{csv}"
        );
    }
}
