//! What a replay's launch left: verified against the recorded output (on the device when the
//! fingerprints show it equal, else on the host, difference by difference) and saved
//! (`--save-output`).

use rr_format::fsio;
use rr_format::instance::Side;
use rr_format::memory::MemoryMap;

use crate::replay::instance::ReplayInstance;
use crate::replay::launch::Launch;
use crate::replay::protocol::{Event, VerifyOutcome};
use crate::replay::request::{ReplayRequest, Verify};
use crate::replay::session::Session;
use crate::replay::sink::RunSink;
use crate::replay::verify;
use crate::snapshot::open_recorded;

use super::Failure;

/// The file name ending of what an A/B replay's candidate left (`--save-output`), beside
/// `.replay_output`.
pub const CANDIDATE_OUTPUT: &str = "candidate_output";

/// What checking a replay's result needs.
pub(super) struct Outputs<'a> {
    pub inst: &'a ReplayInstance,
    pub req: &'a ReplayRequest,
    pub launch: &'a Launch,
    /// Fingerprints computed on the GPU may show the result equal.
    pub on_device: bool,
    pub out: RunSink<'a>,
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
    ) -> Result<bool, Failure> {
        let (inst, req) = (self.inst, self.req);
        let d = &inst.descriptor;
        let differing = match self.on_device {
            true => session.differing_on_device(inst)?,
            false => None,
        };
        if differing.as_ref().is_some_and(|d| d.is_empty()) {
            let mut outcome = verify::equal_on_device(inst.input_len, verify.typed());
            outcome.candidate = candidate;
            self.out.emit(Event::Verify(outcome));
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
            self.save(&replayed, candidate)?;
        }
        if !verify.is_on() {
            return Ok(true);
        }
        let expected = open_recorded(&inst.files, d, Side::Output)?;
        let outcome = verify::verify(&map, expected.bytes(), &replayed, verify.typed());
        expected.check_intact()?;
        Ok(self.said(outcome, candidate))
    }

    /// Write `replayed` where `.replay_output` goes (the candidate's beside it), and say where.
    fn save(&self, replayed: &[u8], candidate: bool) -> Result<(), Failure> {
        let (inst, l) = (self.inst, self.launch);
        let mut path = inst.files.replay_output(
            &inst.descriptor,
            l.grid,
            l.block,
            l.shared_mem,
            self.req.output_dir.as_deref(),
        );
        if candidate {
            path.set_extension(CANDIDATE_OUTPUT);
        }
        fsio::write_atomic(&path, replayed)?;
        self.out.emit(Event::Saved {
            path: path.display().to_string(),
        });
        Ok(())
    }

    /// Say a verification's outcome (tagged as the candidate's when it is); whether it passed.
    fn said(&self, mut outcome: VerifyOutcome, candidate: bool) -> bool {
        outcome.candidate = candidate;
        let passed = outcome.passed;
        self.out.emit(Event::Verify(outcome));
        passed
    }
}
