//! `rr-tui replay`: text output modelled on `llvm-omp-kernel-replay`, or the JSON event stream
//! (protocol v2, every event tagged with the run id).

use rr_engine::replay::candidate::CandidateFile;
use rr_engine::replay::protocol::{Event, PROTOCOL_VERSION};
use rr_engine::replay::session::{error_kind, RunError, Sample};
use rr_engine::replay::stats::Stats;
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::replay::Session;
use rr_engine::replay::{launch, verify, ReplayInstance, ReplayRequest, Verify};
use rr_engine::snapshot::open_recorded;
use rr_format::fsio;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;

use crate::cli::{ReplayArgs, MAX_REPETITIONS};
use crate::error::{Error, Result};
use crate::output;
use std::sync::atomic::{AtomicU64, Ordering};

mod ab;
mod handover;
pub(crate) mod open;
pub(crate) mod printer;
mod serve;

use printer::{Printer, PREFIX};

pub fn run(a: &ReplayArgs) -> Result<i32> {
    if a.serve {
        return serve::run(a);
    }
    let req = a.request();
    let printer = Printer {
        json: a.json,
        run: req.run_id,
    };
    Ok(finish(replay(&req, &printer), &printer))
}

/// Run one replay job another rr-tui process handed over (`rr-tui job`): its events as JSON.
pub(crate) fn run_job(req: ReplayRequest) -> Result<i32> {
    let printer = Printer {
        json: true,
        run: req.run_id,
    };
    Ok(finish(replay(&req, &printer), &printer))
}

/// Say how a replay ended (`done`, after the `error` when it failed); the exit status.
fn finish(outcome: std::result::Result<bool, Failure>, printer: &Printer) -> i32 {
    match outcome {
        Ok(ok) => {
            printer.emit(Event::Done { ok });
            if ok {
                0
            } else {
                1
            }
        }
        Err(e) => {
            // A failed run is 1; what the flags or the record get wrong is 2, as in every
            // command (`Error::exit_status`).
            let (kind, message, status) = match &e {
                Failure::Run(r) => (r.kind(), r.to_string(), 1),
                Failure::Setup(e) => (error_kind(e), e.to_string(), e.exit_status()),
            };
            printer.emit(Event::Error { kind, message });
            printer.emit(Event::Done { ok: false });
            status
        }
    }
}

pub(crate) enum Failure {
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

/// What `replay` has checked before it looks for a GPU.
pub struct Checked {
    pub inst: ReplayInstance,
    pub launch: launch::Launch,
    /// An A/B replay's candidate file, read and classified.
    pub candidate: Option<CandidateFile>,
}

/// Everything `replay` refuses before it looks for a GPU: repetitions, the instance's files,
/// the launch geometry against the record's limits, the output directory, verification, an A/B
/// candidate's file and options. The explorer runs the same checks before it starts a replay,
/// so it never starts what the command refuses.
pub fn preflight(req: &ReplayRequest) -> Result<Checked> {
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
    if req.descriptor.is_dir() {
        return Err(crate::commands::not_a_record::directory_given(
            &req.descriptor,
            "replay",
        ));
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
    let candidate = match &req.candidate {
        None => {
            inst.check_verifiable(&req.verify)?;
            None
        }
        Some(spec) => {
            if req.noise.is_some() {
                return Err(Error::invalid(
                    "--candidate does not take --max-noise: an A/B replay times --repetitions \
                     pairs, alternating the two kernels",
                ));
            }
            // The candidate is always verified: bytes unless a tolerance is given.
            inst.check_verifiable(&ab_verify(req))?;
            Some(spec.preflight()?)
        }
    };
    Ok(Checked {
        inst,
        launch: l,
        candidate,
    })
}

/// How an A/B replay verifies: as asked, bytes when not asked.
fn ab_verify(req: &ReplayRequest) -> Verify {
    match req.verify {
        Verify::No => Verify::Bytes,
        v => v,
    }
}

/// The `start` event: first of every run.
fn start(printer: &Printer, descriptor: &std::path::Path) {
    printer.emit(Event::Start {
        protocol: PROTOCOL_VERSION,
        descriptor: descriptor.display().to_string(),
    });
}

fn replay(req: &ReplayRequest, printer: &Printer) -> std::result::Result<bool, Failure> {
    in_new_session(req, printer, None, &mut false).map(|(ok, _, _)| ok)
}

/// A replay from its `start` (then `note`, when given) to its result, in a session opened for
/// it: whether it passed, the session and its device. `opened` is set once it tries to open one
/// (what failed before that touched nothing).
fn in_new_session(
    req: &ReplayRequest,
    printer: &Printer,
    note: Option<Event>,
    opened: &mut bool,
) -> std::result::Result<(bool, Session, i32), Failure> {
    start(printer, &req.descriptor);
    if let Some(e) = note {
        printer.emit(e);
    }
    let checked = preflight(req)?;
    announce(req, &checked, printer)?;
    *opened = true;
    let mut session = open_session(req, &checked, printer)?;
    let device = checked.launch.device_id;
    let ok = run_on(req, checked, &mut session, printer)?;
    Ok((ok, session, device))
}

/// What is said, and refused, between the checks and the GPU (see [`screen`]); then the launch.
fn announce(
    req: &ReplayRequest,
    checked: &Checked,
    printer: &Printer,
) -> std::result::Result<(), Failure> {
    let (said, verdict) = screen(req, checked);
    for e in said {
        printer.emit(e);
    }
    verdict?;
    printer.emit(launch_event(req, checked));
    Ok(())
}

/// Between the checks and the GPU: the instance's blobs against their names, a legacy replay's
/// inferences, arguments pointing outside the recorded memory (refused under `--strict`), a
/// usable driver. The phases to say (before the refusal, which they explain) and the verdict.
fn screen(
    req: &ReplayRequest,
    checked: &Checked,
) -> (Vec<Event>, std::result::Result<(), Failure>) {
    let inst = &checked.inst;
    if let Err(e) = inst.verify_blobs() {
        return (vec![], Err(e.into()));
    }
    let d = &inst.descriptor;
    // What a legacy replay inferred is said before anything can fail on the GPU side.
    let mut said: Vec<Event> = inst
        .notes
        .iter()
        .map(|note| Event::Phase {
            name: "note".into(),
            detail: note.clone(),
        })
        .collect();
    said.extend(
        rr_format::memory::replay_caveats(d)
            .into_iter()
            .map(|detail| Event::Phase {
                name: "note".into(),
                detail,
            }),
    );
    let outside = rr_format::memory::outside_words(d);
    said.extend(outside.iter().map(|w| Event::Phase {
        name: "warning".into(),
        detail: rr_format::memory::describe_outside(d, w),
    }));
    if req.strict && !outside.is_empty() {
        let refused = Error::invalid(format!(
            "{} kernel argument(s) point outside the recorded memory (above); --strict refuses to run it",
            outside.len()
        ));
        return (said, Err(refused.into()));
    }
    let usable = rr_engine::replay::driver_usable().map_err(Failure::from);
    (said, usable)
}

/// The `launch` event of a checked replay.
fn launch_event(req: &ReplayRequest, checked: &Checked) -> Event {
    let l = &checked.launch;
    Event::Launch {
        kernel: checked.inst.descriptor.name.clone(),
        grid: l.grid,
        block: l.block,
        shared_mem: l.shared_mem,
        repetitions: req.repetitions,
        warmup: req.warmup,
    }
}

/// The run id a hung kernel is reported under: the replay being served.
static HUNG_RUN: AtomicU64 = AtomicU64::new(0);

/// Open the session of `checked`'s instance (see [`open::session`]).
fn open_session(
    req: &ReplayRequest,
    checked: &Checked,
    printer: &Printer,
) -> std::result::Result<Session, Failure> {
    // An A/B replay launches each side at least twice: a warm-up, then the pairs.
    let launches = match req.candidate {
        Some(_) => req
            .repetitions
            .saturating_add(req.warmup.max(1))
            .saturating_mul(2),
        None => req.repetitions.saturating_add(req.warmup),
    };
    // A served replay keeps its input copy: the next replay may be as long as it likes.
    let keep_pristine = launches > 1 || calibrating() || req.energy || serving();
    let kernel_timeout =
        (req.kernel_timeout > 0.0).then(|| std::time::Duration::from_secs_f64(req.kernel_timeout));
    HUNG_RUN.store(printer.run, Ordering::Relaxed);
    let json = printer.json;
    rr_engine::replay::watchdog::on_hang(Box::new(move |message| {
        // A kept replay process says it on stderr and ends without `done`: a `done` would let
        // the next request be sent to a process about to exit. Its reader ends the run, quoting
        // the message.
        if serving() {
            output::error(message);
            return;
        }
        let hang = Printer {
            json,
            run: HUNG_RUN.load(Ordering::Relaxed),
        };
        hang.emit(Event::Error {
            kind: rr_engine::replay::protocol::ErrorKind::Fault,
            message: message.to_string(),
        });
        hang.emit(Event::Done { ok: false });
    }));
    let mut session = open::session(
        &checked.inst,
        &checked.launch,
        keep_pristine,
        kernel_timeout,
        printer,
    )?;
    if req.events_only {
        session.without_probes();
    }
    Ok(session)
}

fn calibrating() -> bool {
    std::env::var_os("RR_TUI_CALIBRATE").is_some()
}

fn serving() -> bool {
    serve::SERVING.load(Ordering::Relaxed)
}

/// Time, verify and save the replay of `checked` in `session`, opened (or switched) for it.
fn run_on(
    req: &ReplayRequest,
    checked: Checked,
    session: &mut Session,
    printer: &Printer,
) -> std::result::Result<bool, Failure> {
    let Checked {
        inst,
        launch: l,
        candidate,
    } = checked;
    HUNG_RUN.store(printer.run, Ordering::Relaxed);
    let verify = match candidate {
        Some(_) => ab_verify(req),
        None => req.verify,
    };
    let on_device = verify.is_on() && !req.save_output && !req.verify_on_host;
    if on_device {
        // While the recorded input is in place: its fingerprints are half of what verifying
        // on the device needs.
        session.prepare_device_verification(&inst)?;
    }
    if calibrating() {
        let detail = session.calibrate(&inst)?;
        printer.emit(Event::Phase {
            name: "calibration".into(),
            detail,
        });
    }
    let cfg = l.config();
    let outputs = Outputs {
        inst: &inst,
        req,
        launch: &l,
        on_device,
        printer,
    };
    if let (Some(file), Some(spec)) = (candidate, &req.candidate) {
        return ab::run(session, spec, file, &outputs, &cfg);
    }
    if req.energy {
        // Before the timed repetitions: they restore the input the back-to-back launches left.
        let meter = rr_engine::replay::energy::meter(session)?;
        let energy =
            rr_engine::replay::energy::measure(session, &cfg, &meter, &Default::default())?;
        printer.emit(Event::Energy(energy));
    }
    let emit_rep =
        |index: u32, s: &Sample, kept: bool| printer.emit(Event::rep(index, s, !kept, false));
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

    let ok = outputs.check(session, req.verify, false)?;
    if !printer.json && req.verify == Verify::No {
        output::line(&format!("{PREFIX} Replay done, verification skipped"));
    }
    Ok(ok)
}

/// The file name ending of what an A/B replay's candidate left (`--save-output`), beside
/// `.replay_output`.
pub const CANDIDATE_OUTPUT: &str = "candidate_output";

/// What checking a replay's result needs.
pub(crate) struct Outputs<'a> {
    pub inst: &'a ReplayInstance,
    pub req: &'a ReplayRequest,
    pub launch: &'a launch::Launch,
    /// Fingerprints computed on the GPU may show the result equal.
    pub on_device: bool,
    pub printer: &'a Printer,
}

impl Outputs<'_> {
    /// Verify (as `verify` says) and save (as the request says) the memory the last launch left;
    /// `candidate` tags the outcome. Memory equal to the recorded output passes any comparison:
    /// shown on the device, nothing is copied back; anything else is compared on the host,
    /// difference by difference. Whether it passed.
    pub fn check(
        &self,
        session: &mut Session,
        verify: Verify,
        candidate: bool,
    ) -> std::result::Result<bool, Failure> {
        let (inst, req, printer) = (self.inst, self.req, self.printer);
        let d = &inst.descriptor;
        let differing = match self.on_device {
            true => session.differing_on_device(inst)?,
            false => None,
        };
        if differing.as_ref().is_some_and(|d| d.is_empty()) {
            let mut outcome = verify::equal_on_device(inst.input_len, verify.typed());
            outcome.candidate = candidate;
            printer.emit(Event::Verify(outcome));
            return Ok(true);
        }
        // An A/B replay saves what the candidate left (the recorded kernel's is the record's).
        let save = req.save_output && candidate == req.candidate.is_some();
        if !verify.is_on() && !save {
            return Ok(true);
        }
        // Only the chunks that differ come back, and only they are compared (unless the whole
        // result is saved).
        let map = MemoryMap::new(d, inst.input_len);
        if let (Some(ranges), false) = (&differing, save) {
            let expected = open_recorded(&inst.files, d, Side::Output)?;
            let replayed = session.read_back_differing()?;
            let outcome =
                verify::verify_within(&map, expected.bytes(), &replayed, ranges, verify.typed());
            expected.check_intact()?;
            return Ok(self.said(outcome, candidate));
        }
        let replayed = session.read_back()?;
        if save {
            let l = self.launch;
            let mut path = inst.files.replay_output(
                d,
                l.grid,
                l.block,
                l.shared_mem,
                req.output_dir.as_deref(),
            );
            if candidate {
                path.set_extension(CANDIDATE_OUTPUT);
            }
            fsio::write_atomic(&path, &replayed)?;
            printer.emit(Event::Saved {
                path: path.display().to_string(),
            });
        }
        if !verify.is_on() {
            return Ok(true);
        }
        let expected = open_recorded(&inst.files, d, Side::Output)?;
        let outcome = verify::verify(&map, expected.bytes(), &replayed, verify.typed());
        expected.check_intact()?;
        Ok(self.said(outcome, candidate))
    }

    /// Say a verification's outcome (tagged as the candidate's when it is); whether it passed.
    fn said(
        &self,
        mut outcome: rr_engine::replay::protocol::VerifyOutcome,
        candidate: bool,
    ) -> bool {
        outcome.candidate = candidate;
        let passed = outcome.passed;
        self.printer.emit(Event::Verify(outcome));
        passed
    }
}
