//! The sweep driver: launch configurations of one instance swept from a [`TuneJob`] (`rr-tui
//! tune` converts its command line into one; the explorer hands its sweeps over as jobs too,
//! through `rr-tui job`). What it says goes to a [`SweepOutput`] (the CLI's text or event lines). One worker thread per GPU owns an engine process
//! (`rr-tui job` running an [`crate::engine_job::EngineJob`]) and asks the scheduler for configurations; results come
//! back to this thread, which prints one line per configuration as it completes, keeps the
//! report, and rewrites the `--json-out`/`--csv` files at most once a second (so an interrupted
//! sweep loses at most a second of work and `--resume` continues it).

mod collect;
mod compile;
mod engine_child;
pub mod export;
mod msg;
mod output;
pub mod pool;
mod preflight;
mod report_files;
mod scheduler;
pub mod simulate;
mod worker;

use rr_format::text::io_reason;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::job::TuneJob;
use crate::shard::Shard;
use crate::trial::index_of;
use crate::{Search, Space, Trial, TuneReport};
use crossbeam_channel::{Receiver, Sender};
use rr_engine::replay::candidate::CandidateSpec;
use rr_engine::replay::ReplayInstance;
use rr_engine::replay::Verify;

use msg::Msg;
use preflight::{source_text, start_report};
use report_files::{check_outputs, load_previous};
use rr_engine::{Error, Result};
use scheduler::Scheduler;
use worker::{Measurement, Origin};

pub use msg::Carried;
pub use output::{Plan, SweepOutput};
pub use preflight::{check_hub, preflight, preflight_simulate};
pub use report_files::{output_targets, read_report, write_streamed, Existing, FOR_EXPLORER};

/// Set by `python -m rr_tui.ray --simulate SWEEP` on the tuner it starts: the hub's engines
/// answer from SWEEP, so nothing is measured.
const HUB_SIMULATES_ENV: &str = "RR_TUI_HUB_SIMULATES";

/// Run a sweep job of one instance (`tune X.json`, or `rr-tui job` with a tune job; a
/// recording's instances are swept one by one by the caller), saying what it does to `out`.
pub fn run(a: &TuneJob, out: &dyn SweepOutput) -> Result<i32> {
    if a.resume && a.report_file().is_none() {
        return Err(Error::invalid(
            "--resume continues the report of --json-out FILE: name the file",
        ));
    }
    refuse_recording_flags(a)?;
    let started = Instant::now();
    let (inst, space) = preflight(a)?;
    if let Some(hub) = &a.engine_hub {
        check_hub(hub)?;
    }
    let shard = a.shard();
    if a.list {
        // What the sweep would refuse of its output files, refused here too.
        check_outputs(a)?;
        if let Some(p) = &a.export {
            export::check(p, [a.report_file(), a.csv.as_deref()])?;
        }
        out.list(&space, shard, a.simulate.is_some());
        return Ok(0);
    }
    // Once for the sweep, here: the engines load the instance without reading its blobs again.
    if a.simulate.is_none() {
        inst.verify_blobs()?;
    }
    let sweep = prepare(a, &inst, space, shard, out)?;
    execute(a, &inst, sweep, started)
}

/// A sweep ready to start its workers: what [`prepare`] made of the arguments, the instance
/// and its space, for [`execute`].
struct Sweep<'o> {
    printer: &'o dyn SweepOutput,
    /// The sweep's settings, with the resumed trials.
    report: TuneReport,
    space: Space,
    search: Search,
    shard: Option<Shard>,
    /// Configurations this run measures or skips.
    planned: u64,
    devices: Vec<i32>,
    measure: Measurement,
    compiler: Option<Arc<compile::Compiler>>,
    /// The sweep `--simulate` answers from.
    simulated: Option<simulate::Table>,
}

/// Everything a sweep settles before it measures, in the order its refusals and warnings are
/// said: the report it starts from, the driver, the devices, `--source`'s compiler, the
/// search and the plan; then its header.
fn prepare<'o>(
    a: &TuneJob,
    inst: &ReplayInstance,
    space: Space,
    shard: Option<Shard>,
    printer: &'o dyn SweepOutput,
) -> Result<Sweep<'o>> {
    let d = &inst.descriptor;
    let measure = Measurement {
        policy: a.policy(),
        energy: a.energy_policy(),
    };
    let seed = a.seed.unwrap_or_else(|| fastrand::u64(..) >> 16);
    if a.seed.is_some() && a.strategy == crate::StrategyKind::Exhaustive {
        printer.warning("--seed has no effect on the exhaustive strategy");
    }
    let source = source_text(a)?;
    let (mut report, simulated, resumed) =
        open_report(a, d, &space, seed, source.as_ref(), shard, printer)?;
    // Said once, before any header, rather than once per GPU by every engine.
    if simulated.is_none() && a.engine_hub.is_none() {
        rr_engine::replay::driver_usable()?;
    }
    let mut devices = sweep_devices(a, d);
    if source.is_some() && a.engine_hub.is_some() {
        return Err(Error::invalid(
            "--source compiles for this machine's GPUs: it does not go with --engine-hub",
        ));
    }
    let compiler = match (source, &simulated) {
        (Some((spec, text)), None) => Some(start_compiler(spec, text, &space, &devices, d)?),
        _ => None,
    };
    let horizon = a.budget.unwrap_or(space.len()).min(space.len());
    let search = Search::new(a.strategy, &space, seed, horizon);
    let recorded_in_space = index_of(&space, &space.rules.recorded).is_some();
    let planned = planned_count(a, &space, &resumed, shard);
    // A hub's engine holds a GPU of its cluster: no more engines than configurations.
    if a.engine_hub.is_some() {
        devices.truncate(usize::try_from(planned.max(1)).unwrap_or(usize::MAX));
    }
    note_hub_simulation(a, &mut report);
    printer.start(
        &report,
        &Plan {
            planned,
            recorded_in_space,
            skipped: space.skipped(),
            devices: &devices,
            hub: a.engine_hub.as_deref(),
            seed_chosen: a.seed.is_none(),
            resumed: resumed.len(),
        },
    );
    report.trials = resumed;
    Ok(Sweep {
        printer,
        report,
        space,
        search,
        shard,
        planned,
        devices,
        measure,
        compiler,
        simulated,
    })
}

/// The report this run starts from (its trials still to come), the sweep `--simulate` answers
/// from, and the trials `--resume` keeps; with the warnings said before the header.
fn open_report(
    a: &TuneJob,
    d: &rr_format::Descriptor,
    space: &Space,
    seed: u64,
    source: Option<&(CandidateSpec, String)>,
    shard: Option<Shard>,
    printer: &dyn SweepOutput,
) -> Result<(TuneReport, Option<simulate::Table>, Vec<Trial>)> {
    let mut report = start_report(a, d, space, seed, source);
    report.shard = shard;
    if let Some((spec, text)) = source {
        warn_unused_defines(printer, space, spec, text);
    }
    let simulated = a
        .simulate
        .as_deref()
        .map(|p| simulate::Table::load(p, &report, space))
        .transpose()?;
    if let Some(table) = &simulated {
        table.label(&mut report);
        warn_unsimulated_flags(a, printer);
    }
    let resumed = resumed_trials(a, &report, space, shard)?;
    if let Some(p) = &a.export {
        export::check(p, [a.report_file(), a.csv.as_deref()])?;
    }
    // Arguments pointing outside the recorded memory (refused under --strict by `preflight`).
    for w in rr_format::memory::outside_words(d) {
        printer.warning(&rr_format::memory::describe_outside(d, &w));
    }
    Ok((report, simulated, resumed))
}

/// Run a prepared sweep until its scheduler is done or a signal stops it: the workers, their
/// results as they come, then the saved report, the export and the summary. The exit status:
/// 130 when interrupted, 0 with a best configuration (or a part that had none to measure).
fn execute(a: &TuneJob, inst: &ReplayInstance, sweep: Sweep, started: Instant) -> Result<i32> {
    let Sweep {
        printer,
        report,
        space,
        search,
        shard,
        planned,
        devices,
        measure,
        compiler,
        simulated,
    } = sweep;
    let stop = stop_on_signals()?;
    // A limit beyond what an Instant can hold is no limit.
    let deadline = a
        .time_limit
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .and_then(|t| started.checked_add(t));
    let scheduler = Arc::new(Mutex::new(Scheduler::new(
        space,
        search,
        a.objective,
        &report.trials,
        scheduler::Limits {
            budget: a.budget,
            deadline,
            stop: stop.clone(),
        },
        shard,
    )));
    let (tx, rx) = crossbeam_channel::unbounded();
    let simulated = simulated.map(Arc::new);
    let engines = match &simulated {
        Some(_) => &[][..],
        None => &devices[..],
    };
    let mut workers = spawn_engine_workers(a, engines, measure, &scheduler, &compiler, &tx, &stop)?;
    if let Some(table) = &simulated {
        let (table, tx, scheduler) = (table.clone(), tx.clone(), scheduler.clone());
        workers.push(std::thread::spawn(move || {
            simulate::work(&table, &scheduler, &tx)
        }));
    }
    drop(tx);

    let mut results = collect::Collector::new(a, report, printer, planned);
    collect_messages(rx, &mut results, printer);
    for w in workers {
        let _ = w.join();
    }
    if let Some(c) = &compiler {
        let gpu_seconds = results.sweep_seconds() * devices.len() as f64;
        results.report.compile = Some(c.stats(gpu_seconds));
    }
    let saved = results.finish(started);
    if results.gone.len() == devices.len() && results.measured == 0 && results.report.best.is_none()
    {
        // The record's fault, said as `replay` says it (exit status 2), not as GPUs that failed.
        if let Some((_, why)) = results.refused.take() {
            return Err(Error::invalid(why));
        }
        return Err(Error::Failed(format!(
            "no {} could run the sweep (see the messages above)",
            if a.engine_hub.is_some() {
                "engine of the hub"
            } else {
                "GPU"
            }
        )));
    }
    results.said_refused();
    let interrupted = stop.load(Ordering::Relaxed);
    end_sweep(a, inst, &results, printer, interrupted, saved)?;
    let report = &results.report;
    Ok(if interrupted {
        130
    } else if report.best.is_some() || (shard.is_some() && report.trials.is_empty()) {
        0
    } else {
        1
    })
}

/// `--kernels`, `--reports` and `--fresh-engines` are about the instances of a recording:
/// refused for one instance.
fn refuse_recording_flags(a: &TuneJob) -> Result<()> {
    let for_directories: Vec<&str> = [
        (a.kernels.is_some(), "--kernels"),
        (a.reports.is_some(), "--reports"),
        (a.fresh_engines, "--fresh-engines"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !for_directories.is_empty() {
        return Err(Error::invalid(format!(
            "{} {}: give its directory, not one instance ({})",
            for_directories.join(" and "),
            if for_directories.len() == 1 {
                "is about the instances of a recording"
            } else {
                "are about the instances of a recording"
            },
            rr_format::text::visible_path(a.descriptor())
        )));
    }
    Ok(())
}

/// A misspelt define changes nothing: every variant would be the same code. Said for each
/// define axis whose name `text` (the `--source` at `spec`) does not contain.
fn warn_unused_defines(printer: &dyn SweepOutput, space: &Space, spec: &CandidateSpec, text: &str) {
    for axis in &space.defines.axes {
        if !text.contains(axis.name.as_str()) {
            printer.warning(&format!(
                "--define {}: the name does not appear in {}, so its variants may not differ",
                axis.name,
                rr_format::text::visible_path(&spec.path)
            ));
        }
    }
}

/// Nothing runs under `--simulate`: what only measuring means is said to do nothing, not
/// silently ignored.
fn warn_unsimulated_flags(a: &TuneJob, printer: &dyn SweepOutput) {
    for (given, flag) in [
        (a.energy, "--energy"),
        (
            a.energy_seconds != crate::job::DEFAULT_ENERGY_SECONDS,
            "--energy-seconds",
        ),
        (a.devices.is_some(), "--devices"),
        (
            a.samples.is_some() || a.timing.adaptive() || a.timing.cold.is_some(),
            "the timing flags",
        ),
        (a.verify != Verify::Bytes, "--tolerance/--no-verify"),
    ] {
        if given {
            printer.warning(&format!(
                "{flag}: no effect with --simulate; every answer (timing, verification, energy) is the simulated sweep's"
            ));
        }
    }
}

/// The trials `--resume` keeps (after [`load_previous`]'s checks), placed in `space`.
fn resumed_trials(
    a: &TuneJob,
    report: &TuneReport,
    space: &Space,
    shard: Option<Shard>,
) -> Result<Vec<Trial>> {
    let mut resumed = load_previous(a, report)?;
    // A part resumes only its own configurations (the axes may have changed since).
    for t in &mut resumed {
        t.index = index_of(space, &t.config);
    }
    if let Some(s) = shard {
        resumed.retain(|t| t.recorded || t.index.is_some_and(|i| s.owns(i)));
    }
    Ok(resumed)
}

/// The GPUs that measure (`--devices`, else the recorded one); through a hub
/// (`--engines N`), the numbers only name its engines.
fn sweep_devices(a: &TuneJob, d: &rr_format::Descriptor) -> Vec<i32> {
    match (a.engines, &a.devices) {
        (Some(n), _) => (0..i32::from(n)).collect(),
        (None, Some(l)) => l.clone(),
        (None, None) => vec![d.device_id],
    }
}

/// How many configurations this run will measure or skip, the resumed ones of `space` aside.
fn planned_count(a: &TuneJob, space: &Space, resumed: &[Trial], shard: Option<Shard>) -> u64 {
    let resumed_in_space = resumed
        .iter()
        .filter(|t| index_of(space, &t.config).is_some())
        .count() as u64;
    Scheduler::planned(
        space.len(),
        resumed_in_space,
        a.budget,
        index_of(space, &space.rules.recorded),
        shard,
    )
}

/// A hub whose engines answer from a finished sweep (`python -m rr_tui.ray --simulate`) says
/// so to the tuner it starts: the header then speaks of simulating, as `tune --simulate`'s.
fn note_hub_simulation(a: &TuneJob, report: &mut TuneReport) {
    if a.engine_hub.is_some() && report.simulated_from.is_none() {
        if let Some(from) = std::env::var_os(HUB_SIMULATES_ENV).filter(|f| !f.is_empty()) {
            report.simulated_from = Some(from.to_string_lossy().into_owned());
        }
    }
}

/// A flag that SIGINT and SIGTERM set: the sweep stops handing out configurations and keeps
/// what it has.
fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Error::invalid(format!("cannot handle signals: {e}")))?;
    }
    Ok(stop)
}

/// One worker thread per device, each driving engines (this executable's children, or a
/// hub's) until the scheduler is done.
fn spawn_engine_workers(
    a: &TuneJob,
    devices: &[i32],
    measure: Measurement,
    scheduler: &Arc<Mutex<Scheduler>>,
    compiler: &Option<Arc<compile::Compiler>>,
    tx: &Sender<Msg>,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<JoinHandle<()>>> {
    let exe = std::env::current_exe().map_err(|e| {
        Error::invalid(format!(
            "cannot find the rr-tui executable: {}",
            io_reason(&e)
        ))
    })?;
    let mut workers = Vec::new();
    for &device in devices {
        let engine_job = a.engine(device);
        let (tx, scheduler, stop) = (tx.clone(), scheduler.clone(), stop.clone());
        let origin = match &a.engine_hub {
            Some(hub) => Origin::Hub(hub.clone()),
            None => Origin::Local(exe.clone()),
        };
        let compiler = compiler.clone();
        workers.push(std::thread::spawn(move || {
            worker::work(
                &origin,
                &engine_job,
                measure,
                &scheduler,
                compiler.as_deref(),
                &tx,
                &stop,
            )
        }));
    }
    Ok(workers)
}

/// The workers' messages, as they come, until every worker is done.
fn collect_messages(
    rx: Receiver<Msg>,
    results: &mut collect::Collector,
    printer: &dyn SweepOutput,
) {
    for msg in rx {
        match msg {
            Msg::Ready {
                info,
                simulated_from,
                carried,
            } => results.ready(info, simulated_from, carried.as_ref()),
            // The worker told the strategy already, before asking for its next configuration.
            Msg::Done(trial) => results.trial(*trial),
            Msg::Gone(device, why) => results.gone(device, &why),
            Msg::Refused(device, why) => results.refused(device, why),
            Msg::Warn(text) => printer.warning(&text),
        }
    }
}

/// The end of a sweep that ran: `--export` written, the summary printed, then the report's
/// saving (`saved`) and the export's failures said.
fn end_sweep(
    a: &TuneJob,
    inst: &ReplayInstance,
    results: &collect::Collector,
    printer: &dyn SweepOutput,
    interrupted: bool,
    saved: Result<()>,
) -> Result<()> {
    let (report, d) = (&results.report, &inst.descriptor);
    // A failed export is said after the summary (the report is saved either way).
    let exported = match &a.export {
        Some(path) => export::write(path, report, d, &d.segments(inst.input_len)),
        None => Ok(None),
    };
    let notes: Vec<String> = exported
        .as_ref()
        .ok()
        .cloned()
        .flatten()
        .into_iter()
        .collect();
    printer.summary(
        report,
        results.measured,
        results.sweep_seconds(),
        interrupted,
        &notes,
    );
    saved?;
    exported?;
    Ok(())
}

/// Compile `--source`'s variants for the sweep's GPUs (which must share one architecture) on
/// every CPU core.
fn start_compiler(
    spec: CandidateSpec,
    text: String,
    space: &Space,
    devices: &[i32],
    d: &rr_format::Descriptor,
) -> Result<Arc<compile::Compiler>> {
    let mut sm = None;
    for &device in devices {
        let this = rr_engine::replay::device_sm(device)?;
        match sm {
            Some(s) if s != this => {
                return Err(Error::invalid(format!(
                    "--source compiles one variant per architecture: device {device} is sm_{this}, another sm_{s}; sweep them separately"
                )))
            }
            _ => sm = Some(this),
        }
    }
    let job = compile::Job {
        kernel: spec.kernel.clone().unwrap_or_else(|| d.name.clone()),
        spec,
        text,
        defines: space.defines.clone(),
        sm: sm.unwrap_or(0),
    };
    // RR_TUI_COMPILE_THREADS: fewer (or more) compiler threads than CPU cores.
    let threads = std::env::var("RR_TUI_COMPILE_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| (1..=1024).contains(&n))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    compile::Compiler::start(job, threads).map_err(Error::Failed)
}
