//! `rr-tui tune`: sweep launch configurations of one instance. One worker thread per GPU owns
//! an engine process (`rr-tui engine`) and asks the scheduler for configurations; results come
//! back to this thread, which prints one line per configuration as it completes, keeps the
//! report, and rewrites the `--json`/`--csv` files at most once a second (so an interrupted
//! sweep loses at most a second of work and `--resume` continues it).

mod engine_child;
mod scheduler;
mod text;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::replay::ReplayInstance;
use rr_engine::tune::space::{self, Rules};
use rr_engine::tune::trial::{index_of, DeviceInfo};
use rr_engine::tune::{Search, Space, Status, Trial, TuneReport};
use rr_format::fsio;

use crate::cli::{EngineArgs, TuneArgs};
use crate::error::{Error, Result};
use engine_child::{EngineChild, Reply};
use scheduler::{Scheduler, Work};

/// A --json file larger than this is not one of ours.
const MAX_REPORT: u64 = 512 << 20;
/// Engine starts that may fail in a row before a GPU is given up.
const MAX_START_FAILURES: u32 = 3;
/// How often the output files are rewritten during a sweep.
const SAVE_EVERY: Duration = Duration::from_secs(1);

enum Msg {
    Ready(DeviceInfo),
    Done(Option<u64>, Box<Trial>),
    Gone(i32, String),
}

pub fn run(a: &TuneArgs) -> Result<i32> {
    let started = Instant::now();
    let inst = ReplayInstance::load(&a.descriptor, &a.supplied.supplied())?;
    let d = &inst.descriptor;
    let verify = a.verify();
    inst.check_verifiable(&verify).map_err(|e| {
        Error::invalid(format!(
            "{e} (every configuration is verified; --no-verify to sweep without)"
        ))
    })?;
    let space = build_space(a, d)?;
    let policy = a.policy();
    if let Some(t) = a.time_limit {
        if !(t.is_finite() && t > 0.0) {
            return Err(Error::invalid(
                "--time-limit must be a positive number of seconds",
            ));
        }
    }
    let seed = a.seed.unwrap_or_else(|| fastrand::u64(..) >> 16);
    let events = a.events;
    let printer = text::Printer::new(events, a.run_id);

    let mut report = a.report(&d.name, space.rules.recorded, space.len(), seed);
    let resumed = load_previous(a, &report)?;
    let horizon = a.budget.unwrap_or(space.len()).min(space.len());
    let search = Search::new(a.strategy, &space, seed, horizon);
    let recorded_in_space = index_of(&space, &space.rules.recorded).is_some();
    let resumed_in_space = resumed
        .iter()
        .filter(|t| index_of(&space, &t.config).is_some())
        .count() as u64;
    let planned = Scheduler::planned(space.len(), resumed_in_space, a.budget, recorded_in_space);
    let devices = if a.devices.is_empty() {
        vec![d.device_id]
    } else {
        a.devices.clone()
    };
    printer.start(
        &report,
        planned,
        &devices,
        a.strategy,
        seed,
        a.seed.is_none(),
        resumed.len(),
    );
    report.trials = resumed;

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Error::invalid(format!("cannot handle signals: {e}")))?;
    }
    let deadline = a.time_limit.map(|t| started + Duration::from_secs_f64(t));
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
    let registers_wanted = a.registers.is_some();
    let mut workers = Vec::new();
    for &device in &devices {
        let engine_args = EngineArgs {
            descriptor: a.descriptor.clone(),
            device_id: Some(device),
            tolerance: a.tolerance,
            no_verify: a.no_verify,
            supplied: a.supplied.clone(),
        };
        let (exe, tx, scheduler) = (exe.clone(), tx.clone(), scheduler.clone());
        workers.push(std::thread::spawn(move || {
            work(
                &exe,
                &engine_args,
                policy,
                registers_wanted,
                &scheduler,
                &tx,
            )
        }));
    }
    drop(tx);

    let mut first_ready: Option<Instant> = None;
    let mut last_result = Instant::now();
    let mut measured_now = 0u64;
    let mut last_save = Instant::now();
    let mut gone = Vec::new();
    let mut fatal = None;
    for msg in rx {
        match msg {
            Msg::Ready(info) => {
                first_ready.get_or_insert_with(Instant::now);
                if !report.devices.iter().any(|x| x.ordinal == info.ordinal) {
                    printer.device(&info);
                    report.devices.push(info);
                }
            }
            Msg::Done(index, trial) => {
                if let Ok(mut s) = scheduler.lock() {
                    s.report(index, trial.cost());
                }
                if trial.status != Status::Skipped {
                    measured_now += 1;
                    last_result = Instant::now();
                }
                printer.trial(&trial, report.trials.len() + 1, planned);
                report.trials.push(*trial);
                if last_save.elapsed() >= SAVE_EVERY {
                    report.summarise();
                    save(a, &report)?;
                    last_save = Instant::now();
                }
            }
            Msg::Gone(device, why) => {
                printer.warning(&format!("GPU {device} given up: {why}"));
                if why.starts_with("FATAL:") {
                    fatal = Some(why.trim_start_matches("FATAL:").trim().to_string());
                    stop.store(true, Ordering::Relaxed);
                }
                gone.push(device);
            }
        }
    }
    for w in workers {
        let _ = w.join();
    }
    let elapsed = first_ready.map_or(0.0, |t| {
        last_result.saturating_duration_since(t).as_secs_f64()
    });
    report.engine_start_s = first_ready.map_or(0.0, |t| t.duration_since(started).as_secs_f64());
    report.elapsed_s = started.elapsed().as_secs_f64();
    report.configs_per_s = if elapsed > 0.0 {
        measured_now as f64 / elapsed
    } else {
        0.0
    };
    report.summarise();
    if !report.trials.is_empty() {
        save(a, &report)?;
    }
    if let Some(why) = fatal {
        return Err(Error::invalid(why));
    }
    if gone.len() == devices.len() && measured_now == 0 && report.best.is_none() {
        return Err(Error::Failed(
            "no GPU could run the sweep (see the messages above)".into(),
        ));
    }
    let interrupted = stop.load(Ordering::Relaxed);
    printer.summary(&report, measured_now, elapsed, interrupted);
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
    registers_wanted: bool,
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
                    if registers_wanted && !e.ptx {
                        let _ = tx.send(Msg::Gone(
                            device,
                            "FATAL: --registers needs a record holding PTX; this one holds compiled machine code (a cubin)".into(),
                        ));
                        return;
                    }
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
                let _ = tx.send(Msg::Done(Some(index), Box::new(trial)));
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
        if tx.send(Msg::Done(index, Box::new(trial))).is_err() {
            return;
        }
    }
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

/// The trials of an earlier run (`--resume`), after checking that the files may be written:
/// before any GPU time is spent, not at the end of the sweep.
fn load_previous(a: &TuneArgs, report: &TuneReport) -> Result<Vec<Trial>> {
    if a.json.is_some() && a.json == a.csv {
        return Err(Error::invalid("--json and --csv name the same file"));
    }
    for path in [&a.json, &a.csv].into_iter().flatten() {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !parent.is_dir() {
            return Err(Error::format(
                path,
                "cannot be written: its directory does not exist",
            ));
        }
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.is_file() {
                return Err(Error::format(
                    path,
                    "exists and is not a regular file (a directory, link or device): refused",
                ));
            }
        }
        if path.exists() && !a.resume {
            return Err(Error::invalid(format!(
                "{} exists; --resume to continue that sweep, or choose another file",
                path.display()
            )));
        }
    }
    let Some(path) = a.json.as_ref().filter(|p| a.resume && p.exists()) else {
        return Ok(Vec::new());
    };
    let bytes = fsio::read_limited(path, MAX_REPORT, "tuning report")?;
    let previous: TuneReport = serde_json::from_slice(&bytes)
        .map_err(|e| Error::format(path, format!("is not a tuning report: {e}")))?;
    previous
        .resumable_by(&report.kernel, &report.recorded, path)
        .map_err(Error::invalid)?;
    // A configuration that faulted or was refused is measured again (the cause may be gone).
    Ok(previous
        .trials
        .into_iter()
        .filter(|t| {
            matches!(
                t.status,
                Status::Ok | Status::VerifyFailed | Status::Skipped
            )
        })
        .collect())
}

fn save(a: &TuneArgs, report: &TuneReport) -> Result<()> {
    if let Some(p) = &a.json {
        fsio::write_atomic(p, &report.to_json())?;
    }
    if let Some(p) = &a.csv {
        let csv = report
            .to_csv()
            .map_err(|e| Error::format(p, format!("CSV: {e}")))?;
        fsio::write_atomic(p, &csv)?;
    }
    Ok(())
}
