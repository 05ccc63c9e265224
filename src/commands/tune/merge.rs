//! `rr-tui tune merge SHARD.json…`: the shards of a sweep (`--shard K/N`) joined into the
//! report one unsharded run writes ([`rr_tune::shard::merge`]), written as `--json-out`,
//! `--csv` and added to `--export` like a sweep's own.

use rr_engine::replay::ReplayInstance;
use rr_format::fsio;
use rr_format::text::visible_path;
use rr_tune::shard;
use rr_tune::TuneReport;

use crate::cli::MergeArgs;
use crate::error::{Error, Result};
use crate::output;
use rr_tune::sweep::{self as report_files, read_report};

pub fn run(m: &MergeArgs) -> Result<i32> {
    if let Some(why) = m.json_switch_refused() {
        return Err(Error::invalid(why));
    }
    check_files(m)?;
    let mut reports = Vec::with_capacity(m.reports.len());
    for p in &m.reports {
        reports.push((visible_path(p), read_report(p, "tune merge")?));
    }
    let (merged, missing) = shard::merge(reports, m.allow_missing)
        .map_err(|e| Error::invalid(format!("tune merge: {e}")))?;
    if m.export.is_some() && merged.simulated_from.is_some() {
        return Err(Error::invalid(
            "tune merge: the parts were simulated, not measured: nothing to export",
        ));
    }
    // The export's signature comes from the instance the parts name: it must be theirs, and
    // is loaded before anything is written.
    let instance = match &m.export {
        Some(_) => Some(swept_instance(&merged)?),
        None => None,
    };
    if let Some(p) = m.report_file() {
        report_files::write_streamed(p, report_files::Existing::Refuse, |w| merged.write_json(w))?;
    }
    if let Some(p) = &m.csv {
        report_files::write_streamed(p, report_files::Existing::Refuse, |w| {
            Ok(merged.write_csv(w)?)
        })?;
    }
    print_merged(m, &merged, missing);
    if let (Some(p), Some(inst)) = (&m.export, &instance) {
        let segments = inst.descriptor.segments(inst.input_len);
        if let Some(line) = rr_tune::sweep::export::write(p, &merged, &inst.descriptor, &segments)?
        {
            output::line(&line);
        }
    }
    Ok(if merged.best.is_some() { 0 } else { 1 })
}

/// The inputs first: a missing part is said before what the flags lack. The same file twice
/// is refused before anything is read (each may be hundreds of MiB). Then the outputs: at
/// least one, none that exists, each writable.
fn check_files(m: &MergeArgs) -> Result<()> {
    let mut files = std::collections::HashSet::new();
    for p in &m.reports {
        use std::os::unix::fs::MetadataExt;
        let meta = fsio::regular_metadata(p)?;
        if !files.insert((meta.dev(), meta.ino())) {
            return Err(Error::invalid(format!(
                "{} is given twice",
                visible_path(p)
            )));
        }
    }
    if m.report_file().is_none() && m.csv.is_none() && m.export.is_none() {
        return Err(Error::invalid(
            "say where the merged report goes: --json-out FILE, --csv FILE and/or --export FILE",
        ));
    }
    for (flag, p) in [("--json-out", m.report_file()), ("--csv", m.csv.as_deref())] {
        if let Some(p) = p {
            if std::fs::symlink_metadata(p).is_ok() {
                return Err(Error::invalid(format!(
                    "{flag} {}: exists; tune merge never replaces an existing file: choose \
                     another {flag} or remove it",
                    visible_path(p)
                )));
            }
        }
    }
    report_files::output_targets(&[("--json-out", m.report_file()), ("--csv", m.csv.as_deref())])?;
    if let Some(p) = &m.export {
        rr_tune::sweep::export::check(p, [m.report_file(), m.csv.as_deref()])?;
    }
    Ok(())
}

/// The instance the merged parts swept (`--export` signs with it), loaded from the descriptor
/// they name and refused when it is not theirs.
fn swept_instance(merged: &TuneReport) -> Result<ReplayInstance> {
    let inst = ReplayInstance::load(
        std::path::Path::new(&merged.descriptor),
        &Default::default(),
    )?;
    let recorded = rr_tune::Config::recorded(&inst.descriptor);
    if inst.descriptor.name != merged.kernel || recorded != merged.recorded {
        return Err(Error::invalid(format!(
            "tune merge: {} is not the instance the parts swept ({})",
            rr_format::text::visible(&merged.descriptor),
            rr_format::text::visible(&merged.kernel)
        )));
    }
    Ok(inst)
}

/// One line: how many shards and configurations were merged, how many the parts lack, and
/// the best.
fn print_merged(m: &MergeArgs, merged: &TuneReport, missing: u64) {
    let measured = merged
        .trials
        .iter()
        .filter(|t| t.status != rr_tune::Status::Skipped)
        .count();
    let in_no_part = match missing {
        0 => String::new(),
        n => format!("; {n} of the sweep's {} in no part", merged.space_size),
    };
    output::line(&format!(
        "Merged {} shard(s): {} configuration(s), {measured} {}{in_no_part}{}",
        m.reports.len(),
        merged.trials.len(),
        match merged.simulated_from {
            Some(_) => "simulated",
            None => "measured",
        },
        match (&merged.best, merged.speedup) {
            (Some(b), Some(s)) => format!(
                "; best {} at {}: {s:.3}x the recorded configuration",
                b.config.describe(&merged.defines),
                super::text::ns(b.cost().unwrap_or(0.0))
            ),
            (Some(b), None) => format!("; best {}", b.config.describe(&merged.defines)),
            _ => "; none verified".into(),
        }
    ));
}
