//! The engine: the process a sweep drives on one GPU, run from an [`EngineJob`] (`rr-tui job`,
//! the job the first line of its input, as the tuner and an engine hub start it; or the hidden
//! `rr-tui engine DESCRIPTOR …`, whose flags become the same job). It opens one replay
//! session at the recorded addresses, says `ready`, then measures each configuration it is
//! sent on stdin (one JSON command per line) and answers with a `trial` event tagged with the
//! command's id. A fault ends it after an `error` event: its CUDA context is unusable, and the
//! tuner starts a new engine for the next configuration. With `--simulate SWEEP.json` it
//! answers from a finished sweep instead of a GPU (for testing what drives engines).
//!
//! Its commands are read from the standard input left after the job's line: the job's reader
//! takes that line through the same buffered standard input, and nothing more.

use crate::lines::Line;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rr_engine::replay::protocol::{ErrorKind, Event, PROTOCOL_VERSION};
use rr_engine::replay::session::{error_kind, RunError, Session};
use rr_engine::replay::{Overrides, ReplayInstance};
use rr_engine::snapshot::open_recorded;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;
use rr_format::Descriptor;
use rr_tune::engine::{self, Command, Expected};

use super::replay::{open, printer::Printer};
use crate::error::{Error, Result};
use rr_tune::engine_job::EngineJob;
use rr_tune::sweep::simulate::Table;

/// A command line longer than this is not one of ours.
const MAX_COMMAND: u64 = 1 << 20;

pub fn run(a: &EngineJob) -> Result<i32> {
    engine::end_with_parent();
    let setup = Printer { json: true, run: 0 };
    setup.emit(Event::Start {
        protocol: PROTOCOL_VERSION,
        descriptor: a.descriptor.display().to_string(),
    });
    let served = match &a.simulate {
        Some(sweep) => serve_simulated(a, sweep, &setup),
        None => serve(a, &setup),
    };
    match served {
        Ok(()) => Ok(0),
        Err((run, kind, message)) => {
            // What a hostile command or job put in the message is made visible, and a number
            // it quotes cut short.
            let message = rr_format::text::visible(&message);
            let message = rr_format::text::numbers_capped(&message).into_owned();
            Printer { json: true, run }.emit(Event::Error { kind, message });
            // Every command's exit policy (`Error::exit_status`): 2 when the job, a command or
            // the record it names is at fault, as a replay of the same input ends; 1 when the
            // run failed.
            Ok(if kind == ErrorKind::Input { 2 } else { 1 })
        }
    }
}

type Failure = (u64, ErrorKind, String);

fn setup_error(e: Error) -> Failure {
    (0, error_kind(&e), e.to_string())
}

fn serve(a: &EngineJob, setup: &Printer) -> std::result::Result<(), Failure> {
    let mut commands = Commands::new();
    let mut session = None;
    let mut meter = None;
    // The instance to serve and the command that asked for it (run 0: the start's).
    let mut next = (a.descriptor.clone(), setup.run);
    loop {
        let (descriptor, run) = next;
        match serve_instance(a, &descriptor, run, &mut session, &mut meter, &mut commands)? {
            Some(other) => next = other,
            None => return Ok(()),
        }
    }
}

/// Serve one instance: open the session (or switch the one open to it: `session` and NVML's
/// `meter` go on from one instance to the next), say `ready` tagged with `run`, then measure
/// until the end of input (None) or a `load` command (the next instance, with the command's
/// id).
fn serve_instance(
    a: &EngineJob,
    descriptor: &Path,
    run: u64,
    session: &mut Option<Session>,
    meter: &mut Option<rr_engine::replay::energy::Meter>,
    commands: &mut Commands,
) -> std::result::Result<Option<(PathBuf, u64)>, Failure> {
    let printer = Printer { json: true, run };
    let failed = |e: Error| (run, error_kind(&e), e.to_string());
    let inst = ReplayInstance::load(descriptor, &a.supplied).map_err(failed)?;
    let d = &inst.descriptor;
    // The recorded launch only supplies the device, cluster shape and cooperativeness: the
    // tuner checks each configuration's limits itself.
    let overrides = Overrides {
        device_id: a.device_id,
        ignore_limits: true,
        ..Overrides::default()
    };
    let recorded = inst.launch(&overrides).map_err(failed)?;
    let verify = a.verify;
    inst.check_verifiable(&verify).map_err(failed)?;
    let expected = if verify.is_on() {
        Some(Expected {
            map: MemoryMap::new(d, inst.input_len),
            output: open_recorded(&inst.files, d, Side::Output).map_err(failed)?,
            typed: verify.typed().copied(),
            instance: &inst,
        })
    } else {
        None
    };
    let session = match session {
        Some(session) => {
            let switched = session
                .switch_to(&inst, &mut |e| printer.emit(e))
                .map_err(failed)?;
            printer.emit(Event::Phase {
                name: "switched".into(),
                detail: switched.to_string(),
            });
            session
        }
        None => {
            let kernel_timeout = (a.kernel_timeout > 0.0)
                .then(|| std::time::Duration::from_secs_f64(a.kernel_timeout));
            let opened =
                open::session(&inst, &recorded, true, kernel_timeout, &printer).map_err(failed)?;
            session.insert(opened)
        }
    };
    // NVML is opened before the first `ready`: a GPU whose energy cannot be read is refused at
    // the start of the sweep with NVML's reason, not once per configuration.
    if a.energy && meter.is_none() {
        *meter = Some(rr_engine::replay::energy::meter(session).map_err(failed)?);
    }
    let meter = meter.as_ref();
    printer.emit(Event::Ready {
        rated_clock_mhz: session.reference_clock_mhz(),
        ptx: session.has_ptx(),
        simulated_from: None,
    });
    loop {
        let (id, config, policy, variant, energy) = match commands.next()? {
            None | Some(Command::Quit) => return Ok(None),
            Some(Command::Load { id, descriptor }) => return Ok(Some((descriptor, id))),
            Some(Command::Measure {
                id,
                config,
                policy,
                variant,
                energy,
            }) => (id, config, policy, variant, energy),
        };
        if energy.is_some() && meter.is_none() {
            return Err((
                id,
                ErrorKind::Input,
                "energy asked of an engine started without --energy".into(),
            ));
        }
        let energy = meter.zip(energy.as_ref());
        match engine::measure(
            session,
            &recorded,
            &config,
            variant.as_ref(),
            &policy,
            expected.as_ref(),
            energy,
        ) {
            Ok(trial) => Printer {
                json: true,
                run: id,
            }
            .emit(Event::Trial(Box::new(trial))),
            Err(e @ RunError::Fault(_)) => return Err((id, ErrorKind::Fault, e.to_string())),
            Err(e) => return Err((id, e.kind(), e.to_string())),
        }
    }
}

/// The commands on stdin, one JSON object a line (each line bounded).
struct Commands {
    stdin: std::io::StdinLock<'static>,
    line: Vec<u8>,
}

impl Commands {
    fn new() -> Commands {
        Commands {
            stdin: std::io::stdin().lock(),
            line: Vec::new(),
        }
    }

    /// The next command; None at the end of input.
    fn next(&mut self) -> std::result::Result<Option<Command>, Failure> {
        // An over-long command ends the engine: its rest is not waited for (it may never end).
        let line = crate::lines::next_job_line(&mut self.stdin, MAX_COMMAND, &mut self.line)
            .map_err(|e| (0, ErrorKind::Setup, format!("reading commands: {e}")))?;
        match line {
            None => return Ok(None),
            Some(Line::Cut) => {
                return Err((
                    0,
                    ErrorKind::Input,
                    format!("a command line longer than {MAX_COMMAND} bytes"),
                ))
            }
            Some(Line::Whole) => {}
        }
        match Command::parse(&String::from_utf8_lossy(&self.line)) {
            // Run 0 is the setup's: a command's answer must not be taken for it.
            Ok(Command::Measure { id: 0, .. } | Command::Load { id: 0, .. }) => Err((
                0,
                ErrorKind::Input,
                "command ids start at 1 (0 is the setup's)".into(),
            )),
            Ok(c) => Ok(Some(c)),
            Err(m) => Err((0, ErrorKind::Input, m)),
        }
    }
}

/// The longest a simulated answer waits, whatever the sweep and pace say.
const MAX_PACE_WAIT: Duration = Duration::from_secs(60);

/// A simulated engine: every configuration is answered with what the sweep in `sweep`
/// measured for it (a skip where it has none), after the engine time the sweep spent on it
/// times `--pace`.
fn serve_simulated(
    a: &EngineJob,
    sweep: &Path,
    setup: &Printer,
) -> std::result::Result<(), Failure> {
    let d = Descriptor::read(&a.descriptor).map_err(|e| setup_error(e.into()))?;
    let table = Table::for_engine(sweep, &d).map_err(setup_error)?;
    let device = table.device();
    setup.emit(Event::Device {
        name: device.name.clone(),
        sm: device.sm,
        ordinal: a.device_id.unwrap_or(0),
        rated_clock_mhz: Some(device.rated_clock_mhz),
    });
    setup.emit(Event::Ready {
        rated_clock_mhz: device.rated_clock_mhz,
        ptx: false,
        simulated_from: Some(table.source().to_string()),
    });
    let mut commands = Commands::new();
    loop {
        let (id, config, energy) = match commands.next()? {
            None | Some(Command::Quit) => return Ok(()),
            Some(Command::Load { id, .. }) => {
                return Err((
                    id,
                    ErrorKind::Input,
                    "a simulated engine answers for the one instance its sweep measured".into(),
                ))
            }
            Some(Command::Measure {
                id, config, energy, ..
            }) => (id, config, energy),
        };
        if energy.is_some() && !table.has_energy() {
            return Err((
                id,
                ErrorKind::Input,
                "energy asked of a simulated engine whose sweep measured none".into(),
            ));
        }
        let mut trial = table.answer(config);
        trial.device = a.device_id;
        if energy.is_none() {
            trial.energy = None;
        }
        let spent = trial.engine_ms.unwrap_or(0.0) * a.pace / 1e3;
        std::thread::sleep(
            Duration::try_from_secs_f64(spent).map_or(Duration::ZERO, |d| d.min(MAX_PACE_WAIT)),
        );
        Printer {
            json: true,
            run: id,
        }
        .emit(Event::Trial(Box::new(trial)));
    }
}
