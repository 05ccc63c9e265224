//! One instance made ready for replay: descriptor read, input snapshot measured against the
//! descriptor, device image located, memory planned. Everything that can be wrong with the
//! files is found here, before a driver is loaded or a kernel runs.

use std::path::{Path, PathBuf};

use rr_format::instance::Side;
use rr_format::{Descriptor, InstanceFiles, Segment};

use super::plan::{self, Plan};
use super::request::Verify;
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct ReplayInstance {
    pub files: InstanceFiles,
    pub descriptor: Descriptor,
    pub input_len: u64,
    pub segments: Vec<Segment>,
    pub plan: Plan,
    /// The device image to load (resolved inside the record directory).
    pub image: PathBuf,
}

impl ReplayInstance {
    pub fn load(json: &Path) -> Result<ReplayInstance> {
        let descriptor = Descriptor::read(json)?;
        let files = InstanceFiles::from_descriptor_path(json);
        let input = files.record_input();
        let input_len = files.recorded_len(&descriptor, Side::Input)?;
        let segments = descriptor.segments(input_len);
        if let Some(total) = descriptor.snapshot_len().filter(|&t| t != input_len) {
            return Err(Error::format(
                &input,
                format!("is {input_len} bytes but the descriptor's segments end at {total}"),
            ));
        }
        if descriptor.cuda.is_none() && input_len > descriptor.valloc_size {
            return Err(Error::format(
                &input,
                format!(
                    "is {input_len} bytes, more than VAllocSize {}",
                    descriptor.valloc_size
                ),
            ));
        }
        let image = files.resolve_image(&descriptor)?;
        let plan = plan::plan(&descriptor, &segments);
        Ok(ReplayInstance {
            files,
            descriptor,
            input_len,
            segments,
            plan,
            image,
        })
    }

    /// Refuse verification up front when there is nothing to verify against, naming the file
    /// and the recording option (so no kernel runs for a verification that cannot happen).
    pub fn check_verifiable(&self, verify: &Verify) -> Result<()> {
        if !verify.is_on() {
            return Ok(());
        }
        let out = self.files.record_output();
        match self.files.recorded_len(&self.descriptor, Side::Output) {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Err(Error::format(
                &out,
                "missing, so there is nothing to verify against: the instance was recorded without its output \
                 (LIBOMPTARGET_RECORD_OUTPUT=false, or rr-tui record --no-output); replay without --verify",
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// `(device address, offset in the snapshot, length)` of every segment.
    pub fn copies(&self) -> Vec<(u64, usize, usize)> {
        self.segments
            .iter()
            .map(|s| (s.addr, s.offset as usize, s.size as usize))
            .collect()
    }
}
