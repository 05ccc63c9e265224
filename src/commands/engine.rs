//! `rr-tui engine` (hidden): the process a sweep drives on one GPU. It opens one replay
//! session at the recorded addresses, says `ready`, then measures each configuration it is
//! sent on stdin (one JSON command per line) and answers with a `trial` event tagged with the
//! command's id. A fault ends it after an `error` event: its CUDA context is unusable, and the
//! tuner starts a new engine for the next configuration.

use std::io::{BufRead, Read};

use rr_engine::replay::protocol::{ErrorKind, Event, PROTOCOL_VERSION};
use rr_engine::replay::session::{error_kind, RunError};
use rr_engine::replay::{launch, Overrides, ReplayInstance, Verify};
use rr_engine::snapshot::open_recorded;
use rr_engine::tune::engine::{self, Command, Expected};
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;

use super::replay::{open, printer::Printer};
use crate::cli::EngineArgs;
use crate::error::{Error, Result};

/// A command line longer than this is not one of ours.
const MAX_COMMAND: u64 = 1 << 20;

pub fn run(a: &EngineArgs) -> Result<i32> {
    engine::end_with_parent();
    let setup = Printer { json: true, run: 0 };
    setup.emit(Event::Start {
        protocol: PROTOCOL_VERSION,
        descriptor: a.descriptor.display().to_string(),
    });
    match serve(a, &setup) {
        Ok(()) => Ok(0),
        Err((run, kind, message)) => {
            Printer { json: true, run }.emit(Event::Error { kind, message });
            Ok(1)
        }
    }
}

type Failure = (u64, ErrorKind, String);

fn setup_error(e: Error) -> Failure {
    (0, error_kind(&e), e.to_string())
}

fn serve(a: &EngineArgs, setup: &Printer) -> std::result::Result<(), Failure> {
    let inst = ReplayInstance::load(&a.descriptor, &a.supplied.supplied()).map_err(setup_error)?;
    let d = &inst.descriptor;
    // The recorded launch only supplies the device, cluster shape and cooperativeness: the
    // tuner checks each configuration's limits itself.
    let overrides = Overrides {
        device_id: a.device_id,
        ignore_limits: true,
        ..Overrides::default()
    };
    let recorded = launch::resolve(d, &overrides).map_err(setup_error)?;
    let verify = match (a.no_verify, a.tolerance) {
        (true, _) => Verify::No,
        (false, Some(c)) => Verify::Typed(c),
        (false, None) => Verify::Bytes,
    };
    inst.check_verifiable(&verify).map_err(setup_error)?;
    let expected = if verify.is_on() {
        Some(Expected {
            map: MemoryMap::new(d, inst.input_len),
            output: open_recorded(&inst.files, d, Side::Output).map_err(setup_error)?,
            typed: verify.typed().copied(),
            instance: &inst,
        })
    } else {
        None
    };
    let kernel_timeout =
        (a.kernel_timeout > 0.0).then(|| std::time::Duration::from_secs_f64(a.kernel_timeout));
    let mut session =
        open::session(&inst, &recorded, true, kernel_timeout, setup).map_err(setup_error)?;
    // NVML is opened before `ready`: a GPU whose energy cannot be read is refused at the start
    // of the sweep with NVML's reason, not once per configuration.
    let meter = if a.energy {
        Some(rr_engine::replay::energy::meter(&session).map_err(setup_error)?)
    } else {
        None
    };
    setup.emit(Event::Ready {
        rated_clock_mhz: session.reference_clock_mhz(),
        ptx: session.has_ptx(),
    });
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    loop {
        line.clear();
        let n = Read::by_ref(&mut stdin)
            .take(MAX_COMMAND)
            .read_line(&mut line)
            .map_err(|e| (0, ErrorKind::Setup, format!("reading commands: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        if line.trim().is_empty() {
            continue;
        }
        let command = Command::parse(&line).map_err(|m| (0, ErrorKind::Input, m))?;
        let (id, config, policy, variant, energy) = match command {
            Command::Quit => return Ok(()),
            Command::Measure {
                id,
                config,
                policy,
                variant,
                energy,
            } => (id, config, policy, variant, energy),
        };
        if energy.is_some() && meter.is_none() {
            return Err((
                id,
                ErrorKind::Input,
                "energy asked of an engine started without --energy".into(),
            ));
        }
        let energy = meter.as_ref().zip(energy.as_ref());
        match engine::measure(
            &mut session,
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
