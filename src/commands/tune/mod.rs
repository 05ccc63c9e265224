//! `rr-tui tune`: sweep launch configurations of one instance. One worker thread per GPU owns
//! an engine process (`rr-tui engine`) and asks the scheduler for configurations; results come
//! back to this thread, which prints one line per configuration as it completes, keeps the
//! report, and rewrites the `--json`/`--csv` files at most once a second (so an interrupted
//! sweep loses at most a second of work and `--resume` continues it).

mod collect;
mod engine_child;
mod list;
mod scheduler;
mod simulate;
mod text;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::replay::ReplayInstance;
use rr_engine::tune::space::{self, Rules, MAX_MEASURED};
use rr_engine::tune::trial::{index_of, DeviceInfo};
use rr_engine::tune::{Search, Space, Status, Trial, TuneReport};
use rr_format::fsio;

use crate::cli::{EngineArgs, TuneArgs};
use crate::error::{Error, Result};
use engine_child::{EngineChild, Reply};
use scheduler::{Scheduler, Work};

/// A --json file larger than this is not one of ours (the largest sweep's compact report is
/// about 300 MiB).
const MAX_REPORT: u64 = 512 << 20;
/// Engine starts that may fail in a row before a GPU is given up.
const MAX_START_FAILURES: u32 = 3;

pub(crate) enum Msg {
    Ready(DeviceInfo),
    Done(Box<Trial>),
    Gone(i32, String),
}

/// Everything `tune` refuses before it looks for a GPU: the instance's files, the axes against
/// the record and the limits, verification, registers without PTX, arguments outside the
/// recorded memory under `--strict`. The explorer's tuning form runs the same checks before it
/// starts a sweep, so it never accepts what the command refuses.
pub fn preflight(a: &TuneArgs) -> Result<(ReplayInstance, Space)> {
    let inst = ReplayInstance::load(&a.descriptor, &a.supplied.supplied())?;
    let space = build_space(a, &inst.descriptor)?;
    if a.list {
        return Ok((inst, space));
    }
    if space.len() > MAX_MEASURED && a.budget.is_none() {
        return Err(Error::invalid(format!(
            "the axes span {} configurations and a sweep measures at most {MAX_MEASURED}: add --budget N (with --strategy random, annealing or tpe), or narrow the axes",
            space.len()
        )));
    }
    inst.check_verifiable(&a.verify()).map_err(|e| {
        Error::invalid(format!(
            "{e}; every configuration is verified against it: add --no-verify to sweep without"
        ))
    })?;
    if a.registers.is_some() {
        check_ptx(&inst)?;
    }
    let outside = rr_format::memory::outside_words(&inst.descriptor);
    if let (true, Some(first)) = (a.strict, outside.first()) {
        return Err(Error::invalid(format!(
            "{} kernel argument(s) point outside the recorded memory ({}); --strict refuses to sweep",
            outside.len(),
            rr_format::memory::describe_outside(&inst.descriptor, first)
        )));
    }
    Ok((inst, space))
}

pub fn run(a: &TuneArgs) -> Result<i32> {
    let started = Instant::now();
    let (inst, space) = preflight(a)?;
    let d = &inst.descriptor;
    if a.list {
        list::print(&space);
        return Ok(0);
    }
    // Once for the sweep, here: the engines load the instance without reading its blobs again.
    if a.simulate.is_none() {
        inst.verify_blobs()?;
    }
    let policy = a.policy();
    let seed = a.seed.unwrap_or_else(|| fastrand::u64(..) >> 16);
    let printer = text::Printer::new(a.events, a.run_id);
    if a.seed.is_some() && a.strategy == rr_engine::tune::StrategyKind::Exhaustive {
        printer.warning("--seed has no effect on the exhaustive strategy");
    }
    let mut report = a.report(&d.name, space.rules.recorded, space.len(), seed);
    let simulated = a
        .simulate
        .as_deref()
        .map(|p| simulate::Table::load(p, &report, &space))
        .transpose()?;
    if let Some(table) = &simulated {
        table.label(&mut report);
    }
    let resumed = load_previous(a, &report)?;
    // Arguments pointing outside the recorded memory (refused under --strict by `preflight`).
    for w in rr_format::memory::outside_words(d) {
        printer.warning(&rr_format::memory::describe_outside(d, &w));
    }
    // Said once, before any header, rather than once per GPU by every engine.
    if simulated.is_none() {
        rr_engine::replay::driver_usable()?;
    }
    let horizon = a.budget.unwrap_or(space.len()).min(space.len());
    let search = Search::new(a.strategy, &space, seed, horizon);
    let recorded_in_space = index_of(&space, &space.rules.recorded).is_some();
    let resumed_in_space = resumed
        .iter()
        .filter(|t| index_of(&space, &t.config).is_some())
        .count() as u64;
    let planned = Scheduler::planned(space.len(), resumed_in_space, a.budget, recorded_in_space);
    let devices = a
        .devices
        .as_ref()
        .map_or_else(|| vec![d.device_id], |l| l.0.clone());
    printer.start(
        &report,
        &text::Plan {
            planned,
            recorded_in_space,
            skipped: list::skipped(&space),
            devices: &devices,
            seed_chosen: a.seed.is_none(),
            resumed: resumed.len(),
        },
    );
    report.trials = resumed;

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Error::invalid(format!("cannot handle signals: {e}")))?;
    }
    // A limit beyond what an Instant can hold is no limit.
    let deadline = a
        .time_limit
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .and_then(|t| started.checked_add(t));
    let scheduler = Arc::new(Mutex::new(Scheduler::new(
        space,
        search,
        &report.trials,
        a.budget,
        deadline,
        stop.clone(),
    )));
    let exe = std::env::current_exe()
        .map_err(|e| Error::invalid(format!("cannot find the rr-tui executable: {e}")))?;
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut workers = Vec::new();
    let simulated = simulated.map(Arc::new);
    for &device in simulated.as_ref().map_or(&devices[..], |_| &[]) {
        let engine_args = EngineArgs {
            descriptor: a.descriptor.clone(),
            device_id: Some(device),
            tolerance: a.tolerance,
            no_verify: a.no_verify,
            kernel_timeout: a.kernel_timeout,
            supplied: a.supplied.clone(),
        };
        let (exe, tx, scheduler) = (exe.clone(), tx.clone(), scheduler.clone());
        workers.push(std::thread::spawn(move || {
            work(&exe, &engine_args, policy, &scheduler, &tx)
        }));
    }
    if let Some(table) = &simulated {
        let (table, tx, scheduler) = (table.clone(), tx.clone(), scheduler.clone());
        workers.push(std::thread::spawn(move || {
            simulate::work(&table, &scheduler, &tx)
        }));
    }
    drop(tx);

    let mut results = collect::Collector::new(a, report, &printer, planned);
    for msg in rx {
        match msg {
            Msg::Ready(info) => results.ready(info),
            // The worker told the strategy already, before asking for its next configuration.
            Msg::Done(trial) => results.trial(*trial),
            Msg::Gone(device, why) => results.gone(device, &why),
        }
    }
    for w in workers {
        let _ = w.join();
    }
    let saved = results.finish(started);
    let report = &results.report;
    if results.gone.len() == devices.len() && results.measured == 0 && report.best.is_none() {
        return Err(Error::Failed(
            "no GPU could run the sweep (see the messages above)".into(),
        ));
    }
    let interrupted = stop.load(Ordering::Relaxed);
    printer.summary(
        report,
        results.measured,
        results.sweep_seconds(),
        interrupted,
    );
    saved?;
    Ok(if interrupted {
        130
    } else if report.best.is_some() {
        0
    } else {
        1
    })
}

/// One GPU: keep an engine running and feed it configurations until the scheduler is done.
fn work(
    exe: &Path,
    args: &EngineArgs,
    policy: TimingPolicy,
    scheduler: &Mutex<Scheduler>,
    tx: &Sender<Msg>,
) {
    let device = args.device_id.unwrap_or(0);
    let mut engine: Option<EngineChild> = None;
    let mut failures = 0;
    // A reply may wait for a whole sampling timeout, then one slow sample more.
    let watchdog = Duration::from_secs_f64(policy.target.timeout.min(3600.0) + 60.0);
    loop {
        if engine.is_none() {
            match EngineChild::start(exe, args) {
                Ok(e) => {
                    failures = 0;
                    let _ = tx.send(Msg::Ready(e.info.clone()));
                    engine = Some(e);
                }
                Err(why) => {
                    failures += 1;
                    if failures >= MAX_START_FAILURES {
                        let _ = tx.send(Msg::Gone(device, why));
                        return;
                    }
                    continue;
                }
            }
        }
        let next = match scheduler.lock() {
            Ok(mut s) => s.next(),
            Err(_) => return,
        };
        let (index, config, recorded) = match next {
            Work::Done => return,
            Work::Skip { index, trial } => {
                if !finish(scheduler, tx, Some(index), trial) {
                    return;
                }
                continue;
            }
            Work::Measure {
                index,
                config,
                recorded,
            } => (index, config, recorded),
        };
        let Some(e) = engine.as_mut() else { continue };
        let mut trial = match e.measure(config, policy, watchdog) {
            Reply::Trial(t) => *t,
            Reply::Lost(why) => {
                engine = None;
                Trial::refused(config, Status::Fault, why)
            }
        };
        trial.recorded = recorded;
        trial.device = Some(device);
        if !finish(scheduler, tx, index, trial) {
            return;
        }
    }
}

/// A configuration is done: its cost goes to the strategy before this worker asks for the
/// next one (so a search learns from every result it could have, and a simulated sweep is
/// repeatable), then the trial to the main thread. False when the main thread is gone.
pub(crate) fn finish(
    scheduler: &Mutex<Scheduler>,
    tx: &Sender<Msg>,
    index: Option<u64>,
    trial: Trial,
) -> bool {
    if let Ok(mut s) = scheduler.lock() {
        s.report(index, trial.cost());
    }
    tx.send(Msg::Done(Box::new(trial))).is_ok()
}

fn build_space(a: &TuneArgs, d: &rr_format::Descriptor) -> Result<Space> {
    let bad = |flag: &str, m: String| Error::invalid(format!("--{flag}: {m}"));
    let grids = a
        .grid
        .as_deref()
        .map(space::parse_grid)
        .transpose()
        .map_err(|m| bad("grid", m))?
        .unwrap_or_default();
    let blocks = a
        .block
        .as_deref()
        .map(space::parse_dims)
        .transpose()
        .map_err(|m| bad("block", m))?
        .unwrap_or_default();
    let shared = a
        .shared_mem
        .as_deref()
        .map(|s| space::parse_scalars(s, true))
        .transpose()
        .map_err(|m| bad("shared-mem", m))?
        .unwrap_or_default();
    let registers = a
        .registers
        .as_deref()
        .map(space::parse_registers)
        .transpose()
        .map_err(|m| bad("registers", m))?
        .unwrap_or_default();
    Space::new(
        Rules::of(d, a.ignore_limits),
        grids,
        blocks,
        shared,
        registers,
    )
    .map_err(Error::invalid)
}

/// `--registers` recompiles the image: only PTX can be.
fn check_ptx(inst: &ReplayInstance) -> Result<()> {
    let (_, info) = rr_format::image::read(&inst.image)?;
    if matches!(info.kind, rr_format::image::ImageKind::Ptx { .. }) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "--registers needs a record holding PTX; {} is {} (compiled machine code, whose registers are fixed)",
        rr_format::text::visible_path(&inst.image),
        info.kind.describe()
    )))
}

/// The trials of an earlier run (`--resume`), after checking that the files may be written:
/// before any GPU time is spent, not at the end of the sweep.
fn load_previous(a: &TuneArgs, report: &TuneReport) -> Result<Vec<Trial>> {
    let mut targets = Vec::new();
    for (flag, path) in [("--json", &a.json), ("--csv", &a.csv)] {
        let Some(path) = path else { continue };
        let shown = rr_format::text::visible_path(path);
        let refuse = |why: &str| Err(Error::invalid(format!("{flag} {shown}: {why}")));
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let Ok(dir) = std::fs::canonicalize(parent) else {
            return refuse("its directory does not exist");
        };
        if !dir.is_dir() {
            return refuse("its directory does not exist");
        }
        let target = dir.join(path.file_name().unwrap_or_default());
        if targets.contains(&target) {
            return Err(Error::invalid("--json and --csv name the same file"));
        }
        // Writable now, not after an hour of measuring.
        if let Err(e) = fsio::AtomicWriter::create(&target) {
            return refuse(&format!("cannot be written ({e})"));
        }
        targets.push(target);
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.is_file() => {
                return refuse("exists and is not a regular file (a directory, link or device)")
            }
            Ok(_) if !a.resume && flag == "--json" => {
                return refuse(
                    "exists; choose another file, or add --resume to continue the sweep it holds",
                )
            }
            Ok(_) if !a.resume => return refuse("exists; choose another file"),
            _ => {}
        }
    }
    let Some(path) = a.json.as_ref().filter(|p| a.resume && p.exists()) else {
        return Ok(Vec::new());
    };
    let previous = read_report(path, "--resume")?;
    // A configuration that faulted or was refused is measured again (the cause may be gone);
    // skips are decided again from this sweep's limits.
    previous
        .resumable_trials(report, path)
        .map_err(Error::invalid)
}

/// A sweep's `--json` report, for `flag` (`--resume`, `--simulate`): streamed, not read whole
/// (memory holds the trials kept, not the file).
fn read_report(path: &Path, flag: &str) -> Result<TuneReport> {
    let (file, _) = fsio::open_limited(path, MAX_REPORT, "tuning report")?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    serde_json::from_reader(reader).map_err(|e| {
        let what = if flag == "--resume" {
            "continues"
        } else {
            "answers from"
        };
        Error::invalid(format!(
            "{} is not a tuning report ({e}): {flag} {what} a sweep's --json file",
            rr_format::text::visible_path(path)
        ))
    })
}
