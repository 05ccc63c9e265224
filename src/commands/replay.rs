//! `rr-tui replay`: text output modelled on `llvm-omp-kernel-replay`, or the JSON event stream.

use std::io::Write;

use crate::cli::ReplayArgs;
use crate::diff::Comparison;
use crate::error::{Error, Result};
use crate::record::{Descriptor, InstanceFiles};
use crate::replay::cuda::{engine, vmm::Placeholders};
use crate::replay::{launch, plan, verify, Event};

const PREFIX: &str = "[rr-tui]";
/// How many times a replay re-executes itself when its own mappings sit on recorded ranges.
const MAX_FRESH_PROCESSES: u32 = 3;
const REEXEC_ENV: &str = "RR_TUI_REPLAY_ATTEMPT";

pub fn run(a: &ReplayArgs) -> Result<i32> {
    let printer = Printer { json: a.json };
    match replay(a, &printer) {
        Ok(ok) => {
            printer.emit(Event::Done { ok });
            Ok(if ok { 0 } else { 1 })
        }
        Err(e) => {
            if a.json {
                printer.emit(Event::Error {
                    message: e.to_string(),
                });
                printer.emit(Event::Done { ok: false });
            } else {
                eprintln!("{PREFIX} Error: {e}");
            }
            Ok(1)
        }
    }
}

fn replay(a: &ReplayArgs, printer: &Printer) -> Result<bool> {
    if a.repetitions == 0 {
        return Err(Error::Invalid("invalid number of repetitions".into()));
    }
    let d = Descriptor::read(&a.descriptor)?;
    let files = InstanceFiles::from_descriptor_path(&a.descriptor);
    let typed = match &a.tolerance {
        Some(spec) => Some(
            Comparison::parse_spec(spec)
                .map_err(|e| Error::Invalid(format!("--tolerance: {e}")))?,
        ),
        None => None,
    };
    let l = launch::resolve(&d, a)?;
    let input = files.record_input();
    let input_len = std::fs::metadata(&input)
        .map_err(|e| Error::io(&input, e))?
        .len();
    let segments = d.segments(input_len);
    let total: u64 = segments.iter().map(|s| s.size).sum();
    if total != input_len {
        return Err(Error::format(
            &input,
            format!("is {input_len} bytes but the descriptor's segments total {total}"),
        ));
    }
    if d.cuda.is_none() && input_len > d.valloc_size {
        return Err(Error::format(
            &input,
            format!(
                "is {input_len} bytes, more than VAllocSize {}",
                d.valloc_size
            ),
        ));
    }
    let plan = plan::plan(&d, &segments);
    // Placeholders first: before the driver loads and before big host allocations.
    let mut placeholders = Placeholders::take(&plan.reservations);
    let attempt: u32 = std::env::var(REEXEC_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let blocked = placeholders.blocked();
    if !blocked.is_empty() {
        if attempt < MAX_FRESH_PROCESSES {
            drop(placeholders);
            return Err(reexec(attempt + 1));
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
    let save_output = (a.save_output).then(|| {
        let dir = a.output_dir.as_deref();
        files.replay_output(&d, l.grid, l.block, l.shared_mem, dir)
    });
    if let Some(dir) = &a.output_dir {
        if !dir.is_dir() {
            return Err(Error::format(dir, "--output-dir is not a directory"));
        }
    }
    let req = engine::Request {
        files: &files,
        descriptor: &d,
        launch: &l,
        plan: &plan,
        segments: &segments,
        input_len,
        repetitions: a.repetitions,
        warmup: a.warmup,
        verify: (a.verify || typed.is_some()).then_some(typed),
        save_output,
        calibrate: std::env::var_os("RR_TUI_CALIBRATE").is_some(),
    };
    let ok = match engine::run(&req, &mut placeholders, &mut |e| printer.emit(e)) {
        // Another process has another layout (ASLR): retry the reservation in a fresh one.
        Err(Error::AddressInUse(msg)) if attempt < MAX_FRESH_PROCESSES => {
            printer.emit(Event::Phase {
                name: "retry".into(),
                detail: format!("{msg}; retrying in a fresh process"),
            });
            drop(placeholders);
            return Err(reexec(attempt + 1));
        }
        other => other?,
    };
    if !a.json && req.verify.is_none() {
        println!("{PREFIX} Replay done, verification skipped");
    }
    Ok(ok)
}

/// Replace this process with a fresh copy of itself (new address-space layout under ASLR).
fn reexec(attempt: u32) -> Error {
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Error::Cuda(format!(
                "cannot re-execute to free recorded address ranges: {e}"
            ))
        }
    };
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(REEXEC_ENV, attempt.to_string())
        .exec();
    Error::Cuda(format!(
        "cannot re-execute to free recorded address ranges: {err}"
    ))
}

struct Printer {
    json: bool,
}

impl Printer {
    fn emit(&self, e: Event) {
        if self.json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", e.to_line());
            let _ = out.flush();
            return;
        }
        let dims = |v: [u32; 3]| format!("{}×{}×{}", v[0], v[1], v[2]);
        match e {
            Event::Start { kernel, device, sm, grid, block, shared_mem, repetitions, warmup } => println!(
                "{PREFIX} Replaying {} on {device} (sm_{sm}): grid {}, block {}, {shared_mem} B dynamic shared memory, {repetitions} repetition(s){}",
                crate::record::demangle(&kernel),
                dims(grid),
                dims(block),
                if warmup > 0 { format!(" after {warmup} warm-up") } else { String::new() }
            ),
            Event::Phase { name, detail } if name == "warning" || name == "calibration" => println!("{PREFIX} {name}: {detail}"),
            Event::Phase { .. } => {}
            Event::Restore { bytes, seconds, gb_per_s, between_reps } => println!(
                "{PREFIX} Restored {bytes} bytes in {:.3} ms ({gb_per_s:.1} GB/s); repetitions restore from the {between_reps}",
                seconds * 1e3
            ),
            Event::Rep { index, kernel_ns, .. } => println!("{PREFIX} Replay time ({index}): {kernel_ns:.0} ns"),
            Event::Summary { kernel_ns: k, host_ns: h, .. } => println!(
                "{PREFIX} Kernel time: min {:.0} ns, median {:.0} ns, mean {:.0} ns, stddev {:.0} ns over {} repetition(s); host launch-to-completion median {:.0} ns",
                k.min, k.median, k.mean, k.stddev, k.count, h.median
            ),
            Event::Verify(v) => {
                if v.passed {
                    println!("{PREFIX} Replay done, device memory verified{}", if v.mode == "bytes" { String::new() } else { format!(" ({})", v.mode) });
                } else {
                    eprintln!("{PREFIX} Error: replay device memory failed to verify");
                    for line in verify::describe(&v) {
                        eprintln!("{PREFIX}   {line}");
                    }
                }
            }
            Event::Saved { path } => println!("{PREFIX} Replay output saved to {path}"),
            Event::Error { message } => eprintln!("{PREFIX} Error: {message}"),
            Event::Done { .. } => {}
        }
    }
}
