//! Replay events as the user sees them, two sinks of the event stream
//! ([`rr_engine::replay::EventSink`]): one JSON object per line ([`JsonLines`]: `--json`, the
//! explorer's and the tuner's protocol), or text modelled on `llvm-omp-kernel-replay`
//! ([`TextPrinter`]).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use rr_engine::replay::protocol::{ErrorKind, Event, Tagged, VerifyOutcome};
use rr_engine::replay::{verify, EventSink};
use rr_format::demangle;

use crate::output;

pub(crate) const PREFIX: &str = "[rr-tui]";

/// Every event as one JSON line on stdout, tagged with its run (the wire form, [`Tagged`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct JsonLines;

impl EventSink for JsonLines {
    fn emit(&self, run: u64, event: Event) {
        output::json_line(&Tagged { run, event }.to_line());
    }
}

/// The events as `llvm-omp-kernel-replay`'s lines (progress on stdout, errors on stderr). A run
/// that ends well without a `verify` says that verification was skipped.
#[derive(Default)]
pub(crate) struct TextPrinter {
    /// A `verify` was said since the run's `start`.
    verified: AtomicBool,
}

/// The events of one run, as JSON lines or as text: what the tuning engine and the A/B workers
/// print their sessions' events with (JSON lines, there).
#[derive(Clone, Copy)]
pub(crate) struct Printer {
    pub json: bool,
    pub run: u64,
}

impl Printer {
    pub fn emit(&self, event: Event) {
        EventSink::emit(self, self.run, event)
    }
}

/// JSON lines, or text without [`TextPrinter`]'s word on a run that skipped verification.
impl EventSink for Printer {
    fn emit(&self, run: u64, event: Event) {
        match self.json {
            true => JsonLines.emit(run, event),
            false => text(event),
        }
    }
}

impl EventSink for TextPrinter {
    fn emit(&self, _run: u64, event: Event) {
        match &event {
            Event::Start { .. } => self.verified.store(false, Ordering::Relaxed),
            Event::Verify(_) => self.verified.store(true, Ordering::Relaxed),
            Event::Done { ok: true } if !self.verified.load(Ordering::Relaxed) => {
                output::line(&format!("{PREFIX} Replay done, verification skipped"));
            }
            _ => {}
        }
        text(event)
    }
}

/// Print `event` as text (nothing for the events that have no line).
fn text(event: Event) {
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
        Event::Device { name, sm, ordinal, .. } => output::line(&format!("{PREFIX} Device {ordinal}: {name} (sm_{sm})")),
        Event::Phase { name, detail } if matches!(name.as_str(), "warning" | "calibration" | "note") => {
            output::line(&format!("{PREFIX} {name}: {detail}"))
        }
        // Long loads say how far they are, where a person watches.
        Event::Phase { name, detail } if name == "loading" => {
            if std::io::stderr().is_terminal() {
                output::error_line(&format!("{PREFIX} loading the recorded input: {detail}"));
            }
        }
        Event::Phase { .. } => {}
        Event::Restore { bytes, seconds, gb_per_s, between_reps } => output::line(&format!(
            "{PREFIX} Restored {bytes} bytes in {:.3} ms ({gb_per_s:.1} GB/s); {}",
            seconds * 1e3,
            rr_engine::replay::protocol::between_reps_text(&between_reps)
        )),
        Event::Rep { index, kernel_ns, clock_mhz, throttled, candidate, .. } => output::line(&format!(
            "{PREFIX} Replay time ({index}{}): {kernel_ns:.0} ns{}{}",
            if candidate { ", candidate" } else { "" },
            clock_mhz.map(|c| format!(" at {c:.0} MHz")).unwrap_or_default(),
            if throttled { " (throttled: discarded)" } else { "" }
        )),
        Event::Summary { kernel_ns: k, host_ns: h, clock_mhz, discarded, reference_clock_mhz, .. } => {
            let noise = if k.mean > 0.0 { 100.0 * k.stddev / k.mean } else { 0.0 };
            output::line(&format!(
                "{PREFIX} Kernel time: min {:.0} ns, median {:.0} ns, mean {:.0} ns, max {:.0} ns, noise {noise:.2} % over {} repetition(s); host launch-to-completion median {:.0} ns",
                k.min, k.median, k.mean, k.max, k.count, h.median
            ));
            if let Some(c) = clock_mhz {
                let rated = reference_clock_mhz.map(|r| format!(" (rated {r:.0} MHz)")).unwrap_or_default();
                let dropped = if discarded > 0 { format!("; {discarded} throttled sample(s) discarded") } else { String::new() };
                output::line(&format!(
                    "{PREFIX} SM clock: median {:.0} MHz, min {:.0} MHz{rated}{dropped}",
                    c.median, c.min
                ));
            }
        }
        Event::Verify(v) => verify_text(&v),
        Event::Candidate { path, kernel, kind, compile_seconds } => output::line(&format!(
            "{PREFIX} Candidate {}: kernel {} ({kind}{})",
            rr_format::text::visible(&path),
            demangle(&kernel),
            compile_seconds.map(|s| format!(", compiled in {s:.2} s")).unwrap_or_default()
        )),
        Event::Compare(o) => {
            output::line(&format!(
                "{PREFIX} Kernel time: recorded median {:.0} ns, candidate median {:.0} ns over {} alternating pairs",
                o.baseline_ns.median, o.candidate_ns.median, o.pairs
            ));
            output::line(&format!("{PREFIX} Verdict: {}", o.describe()));
        }
        Event::Energy(e) => {
            output::line(&format!("{PREFIX} Energy: {}", e.describe()));
            output::line(&format!("{PREFIX} During the energy run: {}", e.conditions()));
        }
        Event::Saved { path } => output::line(&format!("{PREFIX} Replay output saved to {path}")),
        Event::Error { kind, message } => {
            let hint = match kind {
                ErrorKind::Address => " (the recorded addresses are taken on this machine)",
                _ => "",
            };
            output::error(&format!("{message}{hint}"))
        }
        // Events of sweeps: a replay never emits them.
        Event::Done { .. }
        | Event::Ready { .. }
        | Event::Sweep { .. }
        | Event::Trial(_)
        | Event::Profile(_) => {}
    }
}

/// A `verify` event as text: a progress line when it passed, the error and what differs when not.
fn verify_text(v: &VerifyOutcome) {
    let whose = if v.candidate {
        "the candidate's"
    } else {
        "replay"
    };
    if v.passed {
        output::line(&format!(
            "{PREFIX} {}, device memory verified{}{}",
            if v.candidate {
                "Candidate run"
            } else {
                "Replay done"
            },
            if v.mode == "bytes" {
                String::new()
            } else {
                format!(" ({})", v.mode)
            },
            if v.on_device {
                " (equal fingerprints computed on the GPU)"
            } else {
                ""
            }
        ));
    } else {
        // Errors go under the binary's one error prefix, not the progress lines'.
        output::error(&format!("{whose} device memory failed to verify"));
        for line in verify::describe(v) {
            output::error_line(&format!("rr-tui:   {line}"));
        }
    }
}
