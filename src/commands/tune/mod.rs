//! `rr-tui tune`: sweep launch configurations of one instance. One worker thread per GPU owns
//! an engine process (`rr-tui engine`) and asks the scheduler for configurations; results come
//! back to this thread, which prints one line per configuration as it completes, keeps the
//! report, and rewrites the `--json-out`/`--csv` files at most once a second (so an interrupted
//! sweep loses at most a second of work and `--resume` continues it).

mod collect;
mod compile;
mod engine_child;
mod export;
mod list;
mod merge;
mod pool;
mod recording;
mod scheduler;
pub(crate) mod simulate;
mod text;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use rr_engine::replay::candidate::{CandidateFile, CandidateSpec};
use rr_engine::replay::energy::EnergyPolicy;
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::replay::ReplayInstance;
use rr_engine::tune::engine::VariantImage;
use rr_engine::tune::space::{Rules, MAX_MEASURED};
use rr_engine::tune::trial::SourceInfo;
use rr_engine::tune::trial::{index_of, DeviceInfo};
use rr_engine::tune::{Config, Search, Space, Status, Trial, TuneReport};
use rr_format::fsio;

use crate::cli::{EngineArgs, TuneArgs};
use crate::error::{Error, Result};
use engine_child::{EngineChild, Reply};
use scheduler::{Scheduler, Work};

/// A --json-out file larger than this is not one of ours (the largest sweep's compact report is
/// about 300 MiB).
const MAX_REPORT: u64 = 512 << 20;
/// Set by `python -m rr_tui.ray --simulate SWEEP` on the tuner it starts: the hub's engines
/// answer from SWEEP, so nothing is measured.
const HUB_SIMULATES_ENV: &str = "RR_TUI_HUB_SIMULATES";
/// Engine starts that may fail in a row before a GPU is given up.
const MAX_START_FAILURES: u32 = 3;
/// Engines that may break the protocol in a row (answering for runs they were never sent)
/// before a GPU, or an engine of a hub, is given up.
const MAX_BROKEN: u32 = 3;

pub(crate) enum Msg {
    /// An engine is ready: when simulated, it answers from this sweep; `carried` says whether
    /// the last instance's engine of `tune DIR` went on to this one.
    Ready {
        info: DeviceInfo,
        simulated_from: Option<String>,
        carried: Option<Carried>,
    },
    Done(Box<Trial>),
    Gone(i32, String),
    /// Something to say that ends nothing.
    Warn(String),
}

/// Whether the engine of a GPU went on from the last instance of `tune DIR` to this one.
pub(crate) enum Carried {
    /// It did: what stayed on the GPU and what was loaded, in words.
    Kept(String),
    /// It could not (why); a new engine serves this instance.
    Refused(String),
}

/// Everything `tune` refuses before it looks for a GPU: compile-time flags without a source,
/// the instance's files, the axes against the record and the limits, verification, registers
/// without PTX, arguments outside the recorded memory under `--strict`. The explorer's tuning form runs the same checks before it
/// starts a sweep, so it never accepts what the command refuses.
pub fn preflight(a: &TuneArgs) -> Result<(ReplayInstance, Space)> {
    a.check_source_flags().map_err(Error::invalid)?;
    let inst = ReplayInstance::load(a.descriptor(), &a.supplied.supplied())?;
    let space = build_space(a, &inst.descriptor)?;
    if let Some(spec) = a.source_spec() {
        if !rr_engine::replay::candidate::is_source(&spec.path) {
            return Err(Error::invalid(format!(
                "--source {}: takes CUDA C++ source to compile variants from (*.cu, *.cuh, *.cpp); \
                 a compiled image is an A/B candidate (replay --candidate)",
                rr_format::text::visible_path(&spec.path)
            )));
        }
        spec.preflight()?;
    }
    // `--list` shows what the sweep would run: it refuses what the sweep refuses.
    if let Some(s) = a.shard().map_err(Error::invalid)? {
        use rr_engine::tune::StrategyKind;
        if !matches!(a.strategy, StrategyKind::Exhaustive | StrategyKind::Random)
            || a.budget.is_some()
        {
            return Err(Error::invalid(format!(
                "--shard {}/{} splits exhaustive and random sweeps without --budget (an adaptive strategy needs every result: run it unsharded, or over GPUs with --devices)",
                s.k, s.n
            )));
        }
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
        if a.source.is_some() {
            return Err(Error::invalid(
                "--registers recompiles the recorded PTX; with --source, limit registers per variant with --nvrtc-opt=-maxrregcount=N or a define used in __launch_bounds__",
            ));
        }
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

/// The source `a` compiles variants from (`--source`), and its text.
fn source_text(a: &TuneArgs) -> Result<Option<(CandidateSpec, String)>> {
    Ok(match a.source_spec() {
        Some(spec) => match spec.preflight()? {
            CandidateFile::Source(text) => Some((spec, text)),
            // Refused by `preflight` already (not named as source).
            CandidateFile::Image(..) => None,
        },
        None => None,
    })
}

/// The report a sweep of `a` starts with: what a sweep to resume or simulate from is checked
/// against (the same instance, variants and objective).
fn start_report(
    a: &TuneArgs,
    d: &rr_format::Descriptor,
    space: &Space,
    seed: u64,
    source: Option<&(CandidateSpec, String)>,
) -> TuneReport {
    let mut report = a.report(&d.name, space.rules.recorded, space.len(), seed);
    if let Some((spec, text)) = source {
        report.source = Some(SourceInfo {
            path: spec.path.display().to_string(),
            hash: rr_format::store::blob_id(text.as_bytes()),
            options: spec.options.clone(),
        });
        report.defines = space.defines.clone();
    }
    report
}

/// `--simulate FILE`'s checks of the sweep it answers from, against the sweep `a` asks for
/// (after [`preflight`]): the file `run` would refuse, refused. The explorer's tuning form runs
/// them before it starts a sweep, so it never starts one the command refuses.
pub fn preflight_simulate(a: &TuneArgs, inst: &ReplayInstance, space: &Space) -> Result<()> {
    let Some(path) = a.simulate.as_deref() else {
        return Ok(());
    };
    let source = source_text(a)?;
    let report = start_report(a, &inst.descriptor, space, 0, source.as_ref());
    simulate::Table::load(path, &report, space).map(|_| ())
}

pub fn run(a: &TuneArgs) -> Result<i32> {
    if let Some(crate::cli::TuneCommand::Merge(m)) = &a.command {
        return merge::run(m);
    }
    if let Some(why) = a.json_switch_refused() {
        return Err(Error::invalid(why));
    }
    if a.descriptor().is_dir() {
        return recording::run_dir(a, a.descriptor());
    }
    if a.resume && a.report_file().is_none() {
        return Err(Error::invalid(
            "--resume continues the report of --json-out FILE: name the file",
        ));
    }
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
    let started = Instant::now();
    let (inst, space) = preflight(a)?;
    if let Some(hub) = &a.engine_hub {
        check_hub(hub)?;
    }
    let shard = a.shard().map_err(Error::invalid)?;
    let d = &inst.descriptor;
    if a.list {
        // What the sweep would refuse of its output files, refused here too.
        check_outputs(a)?;
        if let Some(p) = &a.export {
            export::check(p, [a.report_file(), a.csv.as_deref()])?;
        }
        list::print(&space, shard, a.simulate.is_some());
        return Ok(0);
    }
    // Once for the sweep, here: the engines load the instance without reading its blobs again.
    if a.simulate.is_none() {
        inst.verify_blobs()?;
    }
    let policy = a.policy();
    let energy = a.energy_policy();
    let seed = a.seed.unwrap_or_else(|| fastrand::u64(..) >> 16);
    let printer = text::Printer::new(a.events, a.run_id);
    if a.seed.is_some() && a.strategy == rr_engine::tune::StrategyKind::Exhaustive {
        printer.warning("--seed has no effect on the exhaustive strategy");
    }
    let source = source_text(a)?;
    let mut report = start_report(a, d, &space, seed, source.as_ref());
    report.shard = shard;
    if let Some((spec, text)) = &source {
        // A misspelt define changes nothing: every variant would be the same code.
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
    let simulated = a
        .simulate
        .as_deref()
        .map(|p| simulate::Table::load(p, &report, &space))
        .transpose()?;
    if let Some(table) = &simulated {
        table.label(&mut report);
        // Nothing runs: what only measuring means is said to do nothing, not silently ignored.
        for (given, flag) in [
            (a.energy, "--energy"),
            (
                a.energy_seconds != crate::cli::DEFAULT_ENERGY_SECONDS,
                "--energy-seconds",
            ),
            (a.devices.is_some(), "--devices"),
            (
                a.samples.is_some() || a.timing.adaptive() || a.timing.cold || a.timing.hot,
                "the timing flags",
            ),
            (
                a.tolerance.is_some() || a.no_verify,
                "--tolerance/--no-verify",
            ),
        ] {
            if given {
                printer.warning(&format!(
                    "{flag}: no effect with --simulate; every answer (timing, verification, energy) is the simulated sweep's"
                ));
            }
        }
    }
    let mut resumed = load_previous(a, &report)?;
    // A part resumes only its own configurations (the axes may have changed since).
    for t in &mut resumed {
        t.index = index_of(&space, &t.config);
    }
    if let Some(s) = shard {
        resumed.retain(|t| t.recorded || t.index.is_some_and(|i| s.owns(i)));
    }
    if let Some(p) = &a.export {
        export::check(p, [a.report_file(), a.csv.as_deref()])?;
    }
    // Arguments pointing outside the recorded memory (refused under --strict by `preflight`).
    for w in rr_format::memory::outside_words(d) {
        printer.warning(&rr_format::memory::describe_outside(d, &w));
    }
    // Said once, before any header, rather than once per GPU by every engine.
    if simulated.is_none() && a.engine_hub.is_none() {
        rr_engine::replay::driver_usable()?;
    }
    // Through a hub, the numbers only name its engines.
    let mut devices: Vec<i32> = match (a.engines, &a.devices) {
        (Some(n), _) => (0..i32::from(n)).collect(),
        (None, Some(l)) => l.0.clone(),
        (None, None) => vec![d.device_id],
    };
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
    let resumed_in_space = resumed
        .iter()
        .filter(|t| index_of(&space, &t.config).is_some())
        .count() as u64;
    let planned = Scheduler::planned(
        space.len(),
        resumed_in_space,
        a.budget,
        index_of(&space, &space.rules.recorded),
        shard,
    );
    // A hub's engine holds a GPU of its cluster: no more engines than configurations.
    if a.engine_hub.is_some() {
        devices.truncate(usize::try_from(planned.max(1)).unwrap_or(usize::MAX));
    }
    // A hub whose engines answer from a finished sweep (`python -m rr_tui.ray --simulate`) says
    // so to the tuner it starts: the header then speaks of simulating, as `tune --simulate`'s.
    if a.engine_hub.is_some() && report.simulated_from.is_none() {
        if let Some(from) = std::env::var_os(HUB_SIMULATES_ENV).filter(|f| !f.is_empty()) {
            report.simulated_from = Some(from.to_string_lossy().into_owned());
        }
    }
    printer.start(
        &report,
        &text::Plan {
            planned,
            recorded_in_space,
            skipped: list::skipped(&space),
            devices: &devices,
            hub: a.engine_hub.as_deref(),
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
        a.objective,
        &report.trials,
        scheduler::Limits {
            budget: a.budget,
            deadline,
            stop: stop.clone(),
        },
        shard,
    )));
    let exe = std::env::current_exe()
        .map_err(|e| Error::invalid(format!("cannot find the rr-tui executable: {e}")))?;
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut workers = Vec::new();
    let simulated = simulated.map(Arc::new);
    for &device in simulated.as_ref().map_or(&devices[..], |_| &[]) {
        let engine_args = EngineArgs {
            descriptor: a.descriptor().to_path_buf(),
            device_id: Some(device),
            tolerance: a.tolerance,
            no_verify: a.no_verify,
            energy: energy.is_some(),
            kernel_timeout: a.kernel_timeout,
            supplied: a.supplied.clone(),
            simulate: None,
            pace: 1.0,
        };
        let (tx, scheduler, stop) = (tx.clone(), scheduler.clone(), stop.clone());
        let origin = match &a.engine_hub {
            Some(hub) => Origin::Hub(hub.clone()),
            None => Origin::Local(exe.clone()),
        };
        let compiler = compiler.clone();
        let measure = Measurement { policy, energy };
        workers.push(std::thread::spawn(move || {
            work(
                &origin,
                &engine_args,
                measure,
                &scheduler,
                compiler.as_deref(),
                &tx,
                &stop,
            )
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
            Msg::Ready {
                info,
                simulated_from,
                carried,
            } => results.ready(info, simulated_from, carried.as_ref()),
            // The worker told the strategy already, before asking for its next configuration.
            Msg::Done(trial) => results.trial(*trial),
            Msg::Gone(device, why) => results.gone(device, &why),
            Msg::Warn(text) => printer.warning(&text),
        }
    }
    for w in workers {
        let _ = w.join();
    }
    if let Some(c) = &compiler {
        let gpu_seconds = results.sweep_seconds() * devices.len() as f64;
        results.report.compile = Some(c.stats(gpu_seconds));
    }
    let saved = results.finish(started);
    let report = &results.report;
    if results.gone.len() == devices.len() && results.measured == 0 && report.best.is_none() {
        return Err(Error::Failed(format!(
            "no {} could run the sweep (see the messages above)",
            if a.engine_hub.is_some() {
                "engine of the hub"
            } else {
                "GPU"
            }
        )));
    }
    let interrupted = stop.load(Ordering::Relaxed);
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
    Ok(if interrupted {
        130
    } else if report.best.is_some() || (shard.is_some() && report.trials.is_empty()) {
        0
    } else {
        1
    })
}

/// `--engine-hub`: a socket that is there (a hub that is not listening is said by the first
/// engine that tries it).
fn check_hub(hub: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let shown = rr_format::text::visible_path(hub);
    match std::fs::metadata(hub) {
        Ok(m) if m.file_type().is_socket() => Ok(()),
        Ok(_) => Err(Error::invalid(format!(
            "--engine-hub {shown}: not a socket (the hub, e.g. python -m rr_tui.ray, makes one and passes it)"
        ))),
        Err(e) => Err(Error::invalid(format!(
            "--engine-hub {shown}: {e} (is the hub running?)"
        ))),
    }
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

/// How each configuration is measured: its timing, and its energy when asked.
#[derive(Clone, Copy)]
struct Measurement {
    policy: TimingPolicy,
    energy: Option<EnergyPolicy>,
}

/// Where a worker's engines run.
enum Origin {
    /// Child processes of this one, started from this executable.
    Local(PathBuf),
    /// Wherever the engine hub at this socket runs them.
    Hub(PathBuf),
}

impl Origin {
    /// What a worker drives, in messages.
    fn unit(&self) -> &'static str {
        match self {
            Origin::Local(_) => "GPU",
            Origin::Hub(_) => "engine",
        }
    }

    fn start(&self, args: &EngineArgs) -> std::result::Result<EngineChild, String> {
        match self {
            Origin::Local(exe) => EngineChild::start(exe, args),
            Origin::Hub(socket) => EngineChild::connect(socket, args),
        }
    }
}

/// One GPU: keep an engine running and feed it configurations until the scheduler is done.
fn work(
    origin: &Origin,
    args: &EngineArgs,
    Measurement { policy, energy }: Measurement,
    scheduler: &Mutex<Scheduler>,
    compiler: Option<&compile::Compiler>,
    tx: &Sender<Msg>,
    stop: &AtomicBool,
) {
    let device = args.device_id.unwrap_or(0);
    let mut engine: Option<EngineChild> = None;
    // Why the last instance's engine could not go on to this one (said with the new engine).
    let mut refused = None;
    let mut failures = 0;
    // Engines in a row that broke the protocol (counted against where engines come from).
    let mut broken = 0;
    // A reply may wait for a whole sampling timeout, then one slow sample more, and the
    // longest energy run.
    let energy_s = energy.map_or(0.0, |e| e.max_seconds);
    let watchdog = Duration::from_secs_f64(policy.target.timeout.min(3600.0) + 60.0 + energy_s);
    loop {
        if engine.is_none() {
            // An engine kept from the last instance of `tune DIR` keeps what the two share on
            // its GPU; one that cannot switch has ended, and a fresh one starts.
            if let Some(mut e) = pool::take(args) {
                match e.switch(&args.descriptor) {
                    Ok(()) => {
                        let _ = tx.send(Msg::Ready {
                            info: e.info.clone(),
                            simulated_from: None,
                            carried: Some(Carried::Kept(e.switched.take().unwrap_or_default())),
                        });
                        engine = Some(e);
                    }
                    Err(why) => refused = Some(Carried::Refused(why)),
                }
            }
        }
        if engine.is_none() {
            let started = Instant::now();
            match origin.start(args) {
                Ok(e) => {
                    failures = 0;
                    let mut info = e.info.clone();
                    // A hub's engines all see their one GPU as device 0: named by their number.
                    if let Origin::Hub(_) = origin {
                        info.ordinal = device;
                    }
                    let _ = tx.send(Msg::Ready {
                        info,
                        simulated_from: e.simulated_from.clone(),
                        carried: refused.take(),
                    });
                    engine = Some(e);
                }
                Err(why) => {
                    failures += 1;
                    // An engine that was not ready in all that time will not be the next time
                    // either: given up at once rather than after as long again, twice.
                    if failures >= MAX_START_FAILURES
                        || started.elapsed() >= engine_child::start_timeout()
                    {
                        let _ = tx.send(Msg::Gone(device, why));
                        return;
                    }
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let _ = tx.send(Msg::Warn(format!(
                        "{} {device} did not start (attempt {failures} of {MAX_START_FAILURES}): {why}",
                        origin.unit()
                    )));
                    continue;
                }
            }
        }
        let next = match scheduler.lock() {
            Ok(mut s) => s.next(),
            Err(_) => return,
        };
        let (index, config, recorded) = match next {
            Work::Done => {
                // Kept for the next instance when `tune DIR` keeps engines (a hub's engines
                // end with their connection).
                if let (Some(e), Origin::Local(_)) = (engine.take(), origin) {
                    pool::put(args, e);
                }
                return;
            }
            Work::Skip { index, trial } => {
                if !finish(scheduler, tx, Some(index), *trial) {
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
        // A compiled variant, compiled ahead (or now, the GPU waiting); one that does not
        // compile is reported and the sweep goes on.
        let variant = match (config.variant, compiler) {
            (Some(v), Some(c)) => match c.get(v as usize) {
                Ok(path) => Some(VariantImage {
                    path,
                    kernel: c.kernel().to_string(),
                }),
                Err(why) => {
                    let mut trial = Trial::refused(config, Status::Invalid, why);
                    trial.device = Some(device);
                    if !finish(scheduler, tx, index, trial) {
                        return;
                    }
                    continue;
                }
            },
            _ => None,
        };
        let Some(e) = engine.as_mut() else { continue };
        let reply = e.measure(config, variant, policy, energy, watchdog, stop);
        if !matches!(reply, Reply::Trial(_)) {
            engine = None;
        }
        let job = (index, config, recorded);
        let mut trial = match settle(
            reply,
            job,
            &mut broken,
            origin.unit(),
            device,
            scheduler,
            tx,
        ) {
            Settled::Done(t) => *t,
            Settled::Again => continue,
            Settled::Stop => return,
        };
        trial.recorded = recorded;
        trial.device = Some(device);
        if !finish(scheduler, tx, index, trial) {
            return;
        }
    }
}

/// What a worker does after an engine's reply.
enum Settled {
    /// The configuration is done, with this trial.
    Done(Box<Trial>),
    /// It went back to the scheduler: on to the next one.
    Again,
    /// The worker ends (stopped by a signal, or its engines given up).
    Stop,
}

/// Settle an engine's `reply` for `job` (index, configuration, recorded): its trial, a fault, or
/// the configuration back to the scheduler when its engine failed through no fault of its own —
/// a hub that lost its machine (counted against the configuration, which may be the cause after
/// all) or an engine that broke the protocol (counted in `broken` against where engines come
/// from: [`MAX_BROKEN`] in a row give the worker up).
fn settle(
    reply: Reply,
    (index, config, recorded): (Option<u64>, Config, bool),
    broken: &mut u32,
    unit: &str,
    device: i32,
    scheduler: &Mutex<Scheduler>,
    tx: &Sender<Msg>,
) -> Settled {
    match reply {
        Reply::Trial(t) => {
            *broken = 0;
            Settled::Done(t)
        }
        // Stopped by a signal: the scheduler hands out nothing more.
        Reply::Interrupted => Settled::Stop,
        Reply::Lost(why) => Settled::Done(Box::new(Trial::refused(config, Status::Fault, why))),
        Reply::Broken(why) => {
            if let Ok(mut s) = scheduler.lock() {
                s.requeue(index, config, recorded);
            }
            *broken += 1;
            if *broken >= MAX_BROKEN {
                let _ = tx.send(Msg::Gone(
                    device,
                    format!("{why} ({broken} engines in a row)"),
                ));
                return Settled::Stop;
            }
            let _ = tx.send(Msg::Warn(format!(
                "{unit} {device}: {why}; its configuration goes to another engine"
            )));
            Settled::Again
        }
        Reply::Unrun(why) => {
            let _ = tx.send(Msg::Warn(format!(
                "engine {device} was lost ({why}); its configuration goes to another engine"
            )));
            let again = scheduler
                .lock()
                .is_ok_and(|mut s| s.give_back(index, config, recorded));
            if again {
                return Settled::Again;
            }
            Settled::Done(Box::new(Trial::refused(
                config,
                Status::Fault,
                format!(
                    "its engine was lost {} times, the last: {why}",
                    scheduler::MAX_RETURNS
                ),
            )))
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
    mut trial: Trial,
) -> bool {
    trial.index = index;
    if let Ok(mut s) = scheduler.lock() {
        s.report(index, &trial);
    }
    tx.send(Msg::Done(Box::new(trial))).is_ok()
}

fn build_space(a: &TuneArgs, d: &rr_format::Descriptor) -> Result<Space> {
    let defines = a.source.is_some().then(|| a.defines.clone());
    Space::of_axes(Rules::of(d, a.ignore_limits), &a.axes(), defines).map_err(Error::invalid)
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

/// Outputs (`flag`, path) that can be written where they are named, checked before any work
/// (not after an hour of measuring): each one's directory exists and takes a file, and no two
/// name the same file, however spelled (`out` and `./out`, a linked directory).
pub(crate) fn output_targets(outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    let mut targets = Vec::new();
    for &(flag, path) in outputs {
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
        let Some(name) = path.file_name().filter(|_| dir.is_dir()) else {
            return refuse("its directory does not exist");
        };
        let target = dir.join(name);
        if targets.contains(&target) {
            return Err(Error::invalid("--json-out and --csv name the same file"));
        }
        if let Err(e) = fsio::AtomicWriter::create(&target) {
            return refuse(&format!("cannot be written ({e})"));
        }
        targets.push(target);
    }
    Ok(())
}

/// The trials of an earlier run (`--resume`), after checking that the files may be written:
/// before any GPU time is spent, not at the end of the sweep.
fn load_previous(a: &TuneArgs, report: &TuneReport) -> Result<Vec<Trial>> {
    check_outputs(a)?;
    let Some(path) = a.report_file().filter(|p| a.resume && p.exists()) else {
        return Ok(Vec::new());
    };
    let previous = read_report(path, "--resume")?;
    // Another part's results would pass for this part's.
    if previous.shard != report.shard {
        return Err(Error::invalid(format!(
            "--json-out {}: holds another part of a sharded sweep (--shard differs); choose another file",
            rr_format::text::visible_path(path)
        )));
    }
    // A configuration that faulted or was refused is measured again (the cause may be gone);
    // skips are decided again from this sweep's limits.
    previous
        .resumable_trials(report, path, rr_engine::tune::ReadBack::Resume)
        .map_err(Error::invalid)
}

/// `--json-out` and `--csv` can be written where they are named, and replace no file they may
/// not (checked by the sweep and by `--list`, which refuses what the sweep would).
fn check_outputs(a: &TuneArgs) -> Result<()> {
    output_targets(&[("--json-out", a.report_file()), ("--csv", a.csv.as_deref())])?;
    for (flag, path) in [("--json-out", a.report_file()), ("--csv", a.csv.as_deref())] {
        let Some(path) = path else { continue };
        let shown = rr_format::text::visible_path(path);
        let refuse = |why: &str| Err(Error::invalid(format!("{flag} {shown}: {why}")));
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.is_file() => {
                return refuse("exists and is not a regular file (a directory, link or device)")
            }
            // A simulated sweep is never resumed (--simulate refuses --resume).
            Ok(_) if !a.resume && flag == "--json-out" && a.simulate.is_none() => {
                return refuse(
                    "exists; choose another file, or add --resume to continue the sweep it holds",
                )
            }
            Ok(_) if !a.resume => return refuse("exists; choose another file"),
            _ => {}
        }
    }
    Ok(())
}

/// How a streamed output meets a file already at its path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Replaced (a sweep's own `--json-out`, which `--resume` continues).
    Replace,
    /// Refused, also when it appears while the output is written (`tune merge`'s outputs).
    Refuse,
}

/// Write `path` (atomically, as [`fsio::write_atomic`]) as `write` makes it, through a buffer:
/// a sweep's CSV holds the kernel's name in every row and is never whole in memory.
pub(crate) fn write_streamed(
    path: &Path,
    existing: Existing,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    use std::io::Write;
    let mut file = fsio::AtomicWriter::create(path)?;
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut file);
    write(&mut buffered)
        .and_then(|()| buffered.flush())
        .map_err(|e| Error::io(path, e))?;
    drop(buffered);
    match existing {
        Existing::Replace => file.commit()?,
        Existing::Refuse => file.commit_new()?,
    }
    Ok(())
}

/// What the explorer passes to [`read_report`] as its flag: it opens a sweep to show it.
pub(crate) const FOR_EXPLORER: &str = "the explorer";

/// A sweep's `--json-out` report, for `flag` (`--resume`, `--simulate`, `tune merge`,
/// [`FOR_EXPLORER`]): streamed, not read whole (memory holds the trials kept, not the file).
pub(crate) fn read_report(path: &Path, flag: &str) -> Result<TuneReport> {
    // A file a flag names that cannot be read is a usage error (exit 2), as a wrong flag is.
    let (file, _) =
        fsio::open_limited(path, MAX_REPORT, "tuning report").map_err(|e| {
            match flag.starts_with("--") {
                true => Error::invalid(format!("{flag} {e}")),
                false => e.into(),
            }
        })?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    serde_json::from_reader(reader).map_err(|e| {
        // The explorer given an instance's descriptor: say how to open its record.
        if flag == FOR_EXPLORER && rr_format::Descriptor::read(path).is_ok() {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            return Error::invalid(format!(
                "{} is not a tuning report but an instance's descriptor: open its record \
                 directory (`rr-tui {}`) and choose the instance there",
                rr_format::text::visible_path(path),
                shell_words::quote(&rr_format::text::visible_path(dir))
            ));
        }
        let what = match flag {
            "--resume" => "continues",
            FOR_EXPLORER => "opens",
            _ => "answers from",
        };
        Error::invalid(format!(
            "{} is not a tuning report ({e}): {flag} {what} a sweep's --json-out file",
            rr_format::text::visible_path(path)
        ))
    })
}
