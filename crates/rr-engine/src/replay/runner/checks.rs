//! What a replay refuses before it looks for a GPU ([`preflight`]), and what it says and refuses
//! between those checks and the GPU ([`screen`]).

use crate::error::{Error, Result};
use crate::replay::candidate::CandidateFile;
use crate::replay::instance::{directory_given, ReplayInstance};
use crate::replay::launch;
use crate::replay::protocol::Event;
use crate::replay::request::{ReplayRequest, Verify};

use super::Failure;

/// What `replay` has checked before it looks for a GPU.
pub struct Checked {
    pub inst: ReplayInstance,
    pub launch: launch::Launch,
    /// An A/B replay's candidate file, read and classified.
    pub candidate: Option<CandidateFile>,
}

/// Everything `replay` refuses before it looks for a GPU: repetitions and warm-ups, the
/// instance's files, the launch geometry against the record's limits, the output directory,
/// verification, an A/B candidate's file and options. The explorer runs the same checks before
/// it starts a replay, so it never starts what the command refuses.
pub fn preflight(req: &ReplayRequest) -> Result<Checked> {
    req.check_counts().map_err(Error::invalid)?;
    if req.descriptor.is_dir() {
        return Err(directory_given(&req.descriptor, "replay"));
    }
    let inst = ReplayInstance::load(&req.descriptor, &req.supplied)?;
    let l = inst.launch(&req.overrides)?;
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
            let file = spec.preflight()?;
            // A compiled candidate without the kernel is refused before the GPU is opened.
            spec.check_kernels(&file, [inst.descriptor.name.as_str()])?;
            Some(file)
        }
    };
    Ok(Checked {
        inst,
        launch: l,
        candidate,
    })
}

/// How an A/B replay verifies: as asked, bytes when not asked.
pub(super) fn ab_verify(req: &ReplayRequest) -> Verify {
    match req.verify {
        Verify::No => Verify::Bytes,
        v => v,
    }
}

/// Between the checks and the GPU: the instance's blobs against their names, a legacy replay's
/// inferences, arguments pointing outside the recorded memory (refused under `--strict`), a
/// usable driver. The phases to say (before the refusal, which they explain) and the verdict.
pub(super) fn screen(
    req: &ReplayRequest,
    checked: &Checked,
) -> (Vec<Event>, std::result::Result<(), Failure>) {
    let inst = &checked.inst;
    if let Err(e) = inst.verify_blobs() {
        return (vec![], Err(e.into()));
    }
    let d = &inst.descriptor;
    let phase = |name: &str, detail: String| Event::Phase {
        name: name.into(),
        detail,
    };
    // What a legacy replay inferred is said before anything can fail on the GPU side.
    let mut said: Vec<Event> = inst
        .notes
        .iter()
        .map(|note| phase("note", note.clone()))
        .collect();
    said.extend(
        rr_format::memory::replay_caveats(d)
            .into_iter()
            .map(|detail| phase("note", detail)),
    );
    let outside = rr_format::memory::outside_words(d);
    said.extend(
        outside
            .iter()
            .map(|w| phase("warning", rr_format::memory::describe_outside(d, w))),
    );
    if req.strict && !outside.is_empty() {
        let refused = Error::invalid(format!(
            "{} kernel argument(s) point outside the recorded memory (above); --strict refuses to run it",
            outside.len()
        ));
        return (said, Err(refused.into()));
    }
    let usable = crate::replay::driver_usable().map_err(Failure::from);
    (said, usable)
}
