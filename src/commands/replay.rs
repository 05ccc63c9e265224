//! `rr-tui replay`: text output modelled on `llvm-omp-kernel-replay`, or the JSON event stream
//! (protocol v2, every event tagged with the run id).

use rr_engine::replay::protocol::{ErrorKind, Event, Tagged, PROTOCOL_VERSION};
use rr_engine::replay::session::{error_kind, RunError, Session};
use rr_engine::replay::Placeholders;
use rr_engine::replay::{launch, verify, ReplayInstance, ReplayRequest, Verify};
use rr_engine::snapshot::open_recorded;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;
use rr_format::{demangle, fsio};

use crate::cli::ReplayArgs;
use crate::error::{Error, Result};
use crate::output;

const PREFIX: &str = "[rr-tui]";
/// How many times a replay re-executes itself when its own mappings sit on recorded ranges.
const MAX_FRESH_PROCESSES: u32 = 3;
const REEXEC_ENV: &str = "RR_TUI_REPLAY_ATTEMPT";

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

fn replay(req: &ReplayRequest, printer: &Printer) -> std::result::Result<bool, Failure> {
    printer.emit(Event::Start {
        protocol: PROTOCOL_VERSION,
        descriptor: req.descriptor.display().to_string(),
    });
    if req.repetitions == 0 {
        return Err(Error::invalid("invalid number of repetitions").into());
    }
    let inst = ReplayInstance::load(&req.descriptor, &req.supplied)?;
    let d = &inst.descriptor;
    let l = launch::resolve(d, &req.overrides)?;
    printer.emit(Event::Launch {
        kernel: d.name.clone(),
        grid: l.grid,
        block: l.block,
        shared_mem: l.shared_mem,
        repetitions: req.repetitions,
        warmup: req.warmup,
    });
    for note in &inst.notes {
        printer.emit(Event::Phase {
            name: "note".into(),
            detail: note.clone(),
        });
    }
    inst.check_verifiable(&req.verify)?;
    if let Some(dir) = &req.output_dir {
        if !dir.is_dir() {
            return Err(Error::format(dir, "--output-dir is not a directory").into());
        }
    }
    // Placeholders first: before the driver loads and before big host allocations.
    let mut placeholders = Placeholders::take(&inst.plan.reservations);
    let attempt: u32 = std::env::var(REEXEC_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let blocked = placeholders.blocked();
    if !blocked.is_empty() {
        if attempt < MAX_FRESH_PROCESSES {
            drop(placeholders);
            return Err(reexec(attempt + 1).into());
        }
        let list: Vec<String> = blocked
            .iter()
            .map(|r| format!("{:#x}+{:#x}", r.addr, r.size))
            .collect();
        printer.emit(Event::Phase {
            name: "warning".into(),
            detail: format!(
                "host mappings of this process cover recorded ranges {}; reserving anyway",
                list.join(", ")
            ),
        });
    }
    let launches = req.repetitions + req.warmup;
    let calibrate = std::env::var_os("RR_TUI_CALIBRATE").is_some();
    let mut session = match Session::open(
        &inst,
        l.device_id,
        launches > 1 || calibrate,
        &mut placeholders,
        &mut |e| printer.emit(e),
    ) {
        Ok(s) => s,
        // Another process has another layout (ASLR): retry the reservation in a fresh one.
        Err(Error::AddressInUse(msg)) if attempt < MAX_FRESH_PROCESSES => {
            printer.emit(Event::Phase {
                name: "retry".into(),
                detail: format!("{msg}; retrying in a fresh process"),
            });
            drop(placeholders);
            return Err(reexec(attempt + 1).into());
        }
        Err(e) => return Err(e.into()),
    };
    if calibrate {
        let detail = session.calibrate(&inst)?;
        printer.emit(Event::Phase {
            name: "calibration".into(),
            detail,
        });
    }
    let samples = session.run(&l.config(), req.repetitions, req.warmup, &mut |index, s| {
        printer.emit(Event::Rep {
            index,
            kernel_ns: s.kernel_ns,
            host_ns: s.host_ns,
            restore_ns: s.restore_ns,
        })
    })?;
    let of = |f: fn(&rr_engine::replay::session::Sample) -> f64| {
        rr_engine::replay::stats::Stats::of(&samples.iter().map(f).collect::<Vec<_>>())
    };
    printer.emit(Event::Summary {
        kernel_ns: of(|s| s.kernel_ns),
        host_ns: of(|s| s.host_ns),
        restore_ns: of(|s| s.restore_ns),
    });

    let mut ok = true;
    if req.verify.is_on() || req.save_output {
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

/// Replace this process with a fresh copy of itself (new address-space layout under ASLR).
fn reexec(attempt: u32) -> Error {
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Error::invalid(format!(
                "cannot re-execute to free recorded address ranges: {e}"
            ))
        }
    };
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(REEXEC_ENV, attempt.to_string())
        .exec();
    Error::invalid(format!(
        "cannot re-execute to free recorded address ranges: {err}"
    ))
}

struct Printer {
    json: bool,
    run: u64,
}

impl Printer {
    fn emit(&self, event: Event) {
        if self.json {
            output::json_line(
                &Tagged {
                    run: self.run,
                    event,
                }
                .to_line(),
            );
            return;
        }
        let dims = |v: [u32; 3]| format!("{}×{}×{}", v[0], v[1], v[2]);
        match event {
            Event::Start { .. } => {}
            Event::Launch { kernel, grid, block, shared_mem, repetitions, warmup } => output::line(&format!(
                "{PREFIX} Replaying {}: grid {}, block {}, {shared_mem} B dynamic shared memory, {repetitions} repetition(s){}",
                demangle(&kernel),
                dims(grid),
                dims(block),
                if warmup > 0 { format!(" after {warmup} warm-up") } else { String::new() }
            )),
            Event::Device { name, sm, ordinal } => output::line(&format!("{PREFIX} Device {ordinal}: {name} (sm_{sm})")),
            Event::Phase { name, detail } if matches!(name.as_str(), "warning" | "calibration" | "note") => {
                output::line(&format!("{PREFIX} {name}: {detail}"))
            }
            Event::Phase { .. } => {}
            Event::Restore { bytes, seconds, gb_per_s, between_reps } => output::line(&format!(
                "{PREFIX} Restored {bytes} bytes in {:.3} ms ({gb_per_s:.1} GB/s); repetitions restore from the {between_reps}",
                seconds * 1e3
            )),
            Event::Rep { index, kernel_ns, .. } => output::line(&format!("{PREFIX} Replay time ({index}): {kernel_ns:.0} ns")),
            Event::Summary { kernel_ns: k, host_ns: h, .. } => output::line(&format!(
                "{PREFIX} Kernel time: min {:.0} ns, median {:.0} ns, mean {:.0} ns, stddev {:.0} ns over {} repetition(s); host launch-to-completion median {:.0} ns",
                k.min, k.median, k.mean, k.stddev, k.count, h.median
            )),
            Event::Verify(v) => {
                if v.passed {
                    output::line(&format!(
                        "{PREFIX} Replay done, device memory verified{}",
                        if v.mode == "bytes" { String::new() } else { format!(" ({})", v.mode) }
                    ));
                } else {
                    output::error_line(&format!("{PREFIX} Error: replay device memory failed to verify"));
                    for line in verify::describe(&v) {
                        output::error_line(&format!("{PREFIX}   {line}"));
                    }
                }
            }
            Event::Saved { path } => output::line(&format!("{PREFIX} Replay output saved to {path}")),
            Event::Error { kind, message } => {
                let hint = match kind {
                    ErrorKind::Address => " (the recorded addresses are taken on this machine)",
                    _ => "",
                };
                output::error_line(&format!("{PREFIX} Error: {message}{hint}"))
            }
            Event::Done { .. } => {}
        }
    }
}
