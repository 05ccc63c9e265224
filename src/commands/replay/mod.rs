//! `rr-tui replay`: text output modelled on `llvm-omp-kernel-replay`, or the JSON event stream
//! (protocol v2, every event tagged with the run id).

use rr_engine::replay::protocol::{Event, PROTOCOL_VERSION};
use rr_engine::replay::session::{error_kind, RunError, Sample};
use rr_engine::replay::stats::Stats;
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::replay::{launch, verify, ReplayInstance, ReplayRequest, Verify};
use rr_engine::snapshot::open_recorded;
use rr_format::fsio;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;

use crate::cli::{ReplayArgs, MAX_REPETITIONS};
use crate::error::{Error, Result};
use crate::output;

pub(crate) mod open;
pub(crate) mod printer;

use printer::{Printer, PREFIX};

pub fn run(a: &ReplayArgs) -> Result<i32> {
    let req = a.request();
    let printer = Printer {
        json: a.json,
        run: req.run_id,
    };
    match replay(&req, &printer) {
        Ok(ok) => {
            printer.emit(Event::Done { ok });
            Ok(if ok { 0 } else { 1 })
        }
        Err(e) => {
            let (kind, message) = match &e {
                Failure::Run(r) => (r.kind(), r.to_string()),
                Failure::Setup(e) => (error_kind(e), e.to_string()),
            };
            printer.emit(Event::Error { kind, message });
            printer.emit(Event::Done { ok: false });
            Ok(1)
        }
    }
}

enum Failure {
    Setup(Error),
    Run(RunError),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Setup(e)
    }
}

impl From<rr_format::Error> for Failure {
    fn from(e: rr_format::Error) -> Self {
        Failure::Setup(e.into())
    }
}

impl From<RunError> for Failure {
    fn from(e: RunError) -> Self {
        Failure::Run(e)
    }
}

/// Everything `replay` refuses before it looks for a GPU: repetitions, the instance's files,
/// the launch geometry against the record's limits, the output directory, verification. The
/// explorer runs the same checks before it starts a replay, so it never starts what the command
/// refuses.
pub fn preflight(req: &ReplayRequest) -> Result<(ReplayInstance, launch::Launch)> {
    if req.repetitions == 0 {
        return Err(Error::invalid(format!(
            "invalid number of repetitions: 0 (1 to {MAX_REPETITIONS})"
        )));
    }
    if req.repetitions > MAX_REPETITIONS || req.warmup > MAX_REPETITIONS {
        return Err(Error::invalid(format!(
            "at most {MAX_REPETITIONS} repetitions and warm-ups per replay (every repetition's times are kept)"
        )));
    }
    let inst = ReplayInstance::load(&req.descriptor, &req.supplied)?;
    let l = launch::resolve(&inst.descriptor, &req.overrides)?;
    if let Some(dir) = &req.output_dir {
        if !dir.is_dir() {
            let why = if dir.exists() {
                "is not a directory"
            } else {
                "does not exist"
            };
            return Err(Error::invalid(format!(
                "--output-dir {}: {why}",
                dir.display()
            )));
        }
    }
    inst.check_verifiable(&req.verify)?;
    Ok((inst, l))
}

fn replay(req: &ReplayRequest, printer: &Printer) -> std::result::Result<bool, Failure> {
    printer.emit(Event::Start {
        protocol: PROTOCOL_VERSION,
        descriptor: req.descriptor.display().to_string(),
    });
    let (inst, l) = preflight(req)?;
    inst.verify_blobs()?;
    let d = &inst.descriptor;
    // What a legacy replay inferred is said before anything can fail on the GPU side.
    for note in &inst.notes {
        printer.emit(Event::Phase {
            name: "note".into(),
            detail: note.clone(),
        });
    }
    let outside = rr_format::memory::outside_words(d);
    for w in &outside {
        printer.emit(Event::Phase {
            name: "warning".into(),
            detail: rr_format::memory::describe_outside(d, w),
        });
    }
    if req.strict && !outside.is_empty() {
        return Err(Error::invalid(format!(
            "{} kernel argument(s) point outside the recorded memory (above); --strict refuses to run it",
            outside.len()
        ))
        .into());
    }
    rr_engine::replay::driver_usable()?;
    printer.emit(Event::Launch {
        kernel: d.name.clone(),
        grid: l.grid,
        block: l.block,
        shared_mem: l.shared_mem,
        repetitions: req.repetitions,
        warmup: req.warmup,
    });
    let launches = req.repetitions.saturating_add(req.warmup);
    let calibrate = std::env::var_os("RR_TUI_CALIBRATE").is_some();
    let kernel_timeout =
        (req.kernel_timeout > 0.0).then(|| std::time::Duration::from_secs_f64(req.kernel_timeout));
    let hang = *printer;
    rr_engine::replay::watchdog::on_hang(Box::new(move |message| {
        hang.emit(Event::Error {
            kind: rr_engine::replay::protocol::ErrorKind::Fault,
            message: message.to_string(),
        });
        hang.emit(Event::Done { ok: false });
    }));
    let mut session = open::session(
        &inst,
        &l,
        launches > 1 || calibrate,
        kernel_timeout,
        printer,
    )?;
    let on_device = req.verify.is_on() && !req.save_output && !req.verify_on_host;
    if on_device {
        // While the recorded input is in place: its fingerprints are half of what verifying
        // on the device needs.
        session.prepare_device_verification(&inst)?;
    }
    if calibrate {
        let detail = session.calibrate(&inst)?;
        printer.emit(Event::Phase {
            name: "calibration".into(),
            detail,
        });
    }
    let cfg = l.config();
    let emit_rep = |index: u32, s: &Sample, kept: bool| {
        printer.emit(Event::Rep {
            index,
            kernel_ns: s.kernel_ns,
            host_ns: s.host_ns,
            restore_ns: s.restore_ns,
            clock_mhz: s.clock_mhz,
            throttled: !kept,
        })
    };
    let (samples, discarded) = match &req.noise {
        None => {
            let samples =
                session.run(&cfg, req.repetitions, req.warmup, req.cold, &mut |i, s| {
                    emit_rep(i, &s, true)
                })?;
            (samples, 0)
        }
        Some(target) => {
            session.run(&cfg, 0, req.warmup, req.cold, &mut |_, _| {})?;
            let policy = TimingPolicy::adaptive(req.cold, *target, req.repetitions);
            let mut index = 0;
            let m = session.measure(&cfg, &policy, &mut |s, kept| {
                index += 1;
                emit_rep(index, s, kept)
            })?;
            let discarded = m.throttled.len();
            (m.samples, discarded)
        }
    };
    let of = |f: fn(&Sample) -> f64| Stats::of(&samples.iter().map(f).collect::<Vec<_>>());
    let clocks: Vec<f64> = samples.iter().filter_map(|s| s.clock_mhz).collect();
    printer.emit(Event::Summary {
        kernel_ns: of(|s| s.kernel_ns),
        host_ns: of(|s| s.host_ns),
        restore_ns: of(|s| s.restore_ns),
        clock_mhz: (!clocks.is_empty()).then(|| Stats::of(&clocks)),
        discarded,
        reference_clock_mhz: Some(session.reference_clock_mhz()),
    });

    let mut ok = true;
    // Memory equal to the recorded output passes any comparison: shown on the device, nothing
    // is copied back; anything else is compared on the host, difference by difference.
    let shown_equal = on_device && session.equal_on_device(&inst)?;
    if shown_equal {
        printer.emit(Event::Verify(verify::equal_on_device(
            inst.input_len,
            req.verify.typed(),
        )));
    } else if req.verify.is_on() || req.save_output {
        let replayed = session.read_back()?;
        if req.save_output {
            let path = inst.files.replay_output(
                d,
                l.grid,
                l.block,
                l.shared_mem,
                req.output_dir.as_deref(),
            );
            fsio::write_atomic(&path, &replayed)?;
            printer.emit(Event::Saved {
                path: path.display().to_string(),
            });
        }
        if req.verify.is_on() {
            let expected = open_recorded(&inst.files, d, Side::Output)?;
            let map = MemoryMap::new(d, inst.input_len);
            let outcome = verify::verify(&map, expected.bytes(), &replayed, req.verify.typed());
            expected.check_intact()?;
            ok = outcome.passed;
            printer.emit(Event::Verify(outcome));
        }
    }
    if !printer.json && req.verify == Verify::No {
        output::line(&format!("{PREFIX} Replay done, verification skipped"));
    }
    Ok(ok)
}
