//! One worker thread per GPU (or per engine of a hub): it keeps an engine running, feeds it the
//! scheduler's configurations (compiled variants from the compiler), settles each reply, and
//! sends the trials to the sweep's main thread.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::VariantImage;
use crate::{Config, Status, Trial};
use crossbeam_channel::Sender;
use rr_engine::replay::energy::EnergyPolicy;
use rr_engine::replay::timing::TimingPolicy;

use super::compile;
use super::engine_child::{self, EngineChild, NotStarted, Reply};
use super::msg::{Carried, Msg};
use super::pool;
use super::scheduler::{self, Scheduler, Work};
use crate::engine_job::EngineJob;

/// Engine starts that may fail in a row before a GPU is given up.
const MAX_START_FAILURES: u32 = 3;
/// Engines that may break the protocol in a row (answering for runs they were never sent)
/// before a GPU, or an engine of a hub, is given up.
const MAX_BROKEN: u32 = 3;

/// How each configuration is measured: its timing, and its energy when asked.
#[derive(Clone, Copy)]
pub(super) struct Measurement {
    pub(super) policy: TimingPolicy,
    pub(super) energy: Option<EnergyPolicy>,
}

/// Where a worker's engines run.
pub(super) enum Origin {
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

    fn start(&self, args: &EngineJob) -> std::result::Result<EngineChild, NotStarted> {
        match self {
            Origin::Local(exe) => EngineChild::start(exe, args),
            Origin::Hub(socket) => EngineChild::connect(socket, args),
        }
    }
}

/// One GPU: keep an engine running and feed it configurations until the scheduler is done.
pub(super) fn work(
    origin: &Origin,
    args: &EngineJob,
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
            engine = kept_engine(args, tx, &mut refused);
        }
        if engine.is_none() {
            match start_engine(origin, args, &mut failures, &mut refused, tx, stop) {
                Started::Ready(e) => engine = Some(e),
                Started::Retry => continue,
                Started::GiveUp => return,
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
        // A variant that does not compile is reported and the sweep goes on.
        let variant = match variant_image(config, compiler) {
            Ok(variant) => variant,
            Err(why) => {
                let mut trial = Trial::refused(config, Status::Invalid, why);
                trial.device = Some(device);
                if !finish(scheduler, tx, index, trial) {
                    return;
                }
                continue;
            }
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

/// An engine kept from the last instance of `tune DIR` keeps what the two share on its GPU;
/// one that cannot switch has ended (why, in `refused`), and a fresh one starts.
fn kept_engine(
    args: &EngineJob,
    tx: &Sender<Msg>,
    refused: &mut Option<Carried>,
) -> Option<EngineChild> {
    let mut e = pool::take(args)?;
    match e.switch(&args.descriptor) {
        Ok(()) => {
            let _ = tx.send(Msg::Ready {
                info: e.info.clone(),
                simulated_from: None,
                carried: Some(Carried::Kept(e.switched.take().unwrap_or_default())),
            });
            Some(e)
        }
        Err(why) => {
            *refused = Some(Carried::Refused(why.why));
            None
        }
    }
}

/// What came of starting an engine.
enum Started {
    Ready(EngineChild),
    /// It failed, not yet for the last time: try again.
    Retry,
    /// The worker ends (its engines given up, or stopped by a signal).
    GiveUp,
}

/// Start an engine where `origin` runs them, counting the starts that failed in a row in
/// `failures`; `refused` (why the last instance's engine could not go on) is said with it.
fn start_engine(
    origin: &Origin,
    args: &EngineJob,
    failures: &mut u32,
    refused: &mut Option<Carried>,
    tx: &Sender<Msg>,
    stop: &AtomicBool,
) -> Started {
    let device = args.device_id.unwrap_or(0);
    let started = Instant::now();
    match origin.start(args) {
        Ok(e) => {
            *failures = 0;
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
            Started::Ready(e)
        }
        // The engine refused the instance itself (its record): no attempt and no GPU will run
        // it, and the reason is the sweep's, not this GPU's.
        Err(NotStarted { why, input: true }) => {
            let _ = tx.send(Msg::Refused(device, why));
            Started::GiveUp
        }
        Err(NotStarted { why, .. }) => {
            *failures += 1;
            // An engine that was not ready in all that time will not be the next time
            // either: given up at once rather than after as long again, twice.
            if *failures >= MAX_START_FAILURES || started.elapsed() >= engine_child::start_timeout()
            {
                let _ = tx.send(Msg::Gone(device, why));
                return Started::GiveUp;
            }
            if stop.load(Ordering::Relaxed) {
                return Started::GiveUp;
            }
            let _ = tx.send(Msg::Warn(format!(
                "{} {device} did not start (attempt {failures} of {MAX_START_FAILURES}): {why}",
                origin.unit()
            )));
            Started::Retry
        }
    }
}

/// The compiled image of `config`'s variant, compiled ahead (or now, the GPU waiting); None
/// for the recorded image. Why, when it does not compile.
fn variant_image(
    config: Config,
    compiler: Option<&compile::Compiler>,
) -> Result<Option<VariantImage>, String> {
    Ok(match (config.variant, compiler) {
        (Some(v), Some(c)) => Some(VariantImage {
            path: c.get(v as usize)?,
            kernel: c.kernel().to_string(),
        }),
        _ => None,
    })
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
