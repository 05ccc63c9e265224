//! One instance made ready for replay: descriptor read, input snapshot measured against the
//! descriptor, device image located, globals read, memory planned (legacy records completed by
//! [`super::legacy`]). Everything that can be wrong with the files is found here, before a
//! driver is loaded or a kernel runs.

use std::path::{Path, PathBuf};

use rr_format::globals::Globals;
use rr_format::instance::Side;
use rr_format::{Descriptor, InstanceFiles, Segment};

use super::plan::{self, Plan};
use super::request::{Supplied, Verify};
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct ReplayInstance {
    pub files: InstanceFiles,
    pub descriptor: Descriptor,
    pub input_len: u64,
    pub segments: Vec<Segment>,
    pub plan: Plan,
    /// The device image to load (resolved inside the record directory, or `--image`).
    pub image: PathBuf,
    /// The module globals to restore before every launch (none for LLVM 16–17 records).
    pub globals: Globals,
    /// What the replay of a legacy record inferred or assumed, one sentence each.
    pub notes: Vec<String>,
}

/// The end of the user address space with 4-level page tables (x86-64, AArch64 48-bit).
const USER_SPACE_END: u64 = 1 << 48;

impl ReplayInstance {
    pub fn load(json: &Path, supplied: &Supplied) -> Result<ReplayInstance> {
        let descriptor = Descriptor::read(json)?;
        let files = InstanceFiles::from_descriptor_path(json);
        let (descriptor, image, globals, notes) = if descriptor.format.is_legacy() {
            let p = super::legacy::prepare(descriptor, &files, supplied)?;
            (p.descriptor, p.image, p.globals, p.notes)
        } else {
            if supplied.base_address.is_some() || supplied.assume_llvm18 {
                return Err(Error::invalid(
                    "--base-address and --assume-llvm18 are for legacy (LLVM 16–22) records; this one records its addresses",
                ));
            }
            let image = match &supplied.image {
                Some(p) => p.clone(),
                None => files.resolve_image(&descriptor)?,
            };
            let globals = Globals::read(&files.globals())?;
            (descriptor, image, globals, vec![])
        };
        let input = files.snapshot_file(&descriptor, Side::Input);
        let input_len = files.recorded_len(&descriptor, Side::Input)?;
        let segments = descriptor.segments(input_len);
        if let Some(total) = descriptor.snapshot_len().filter(|&t| t != input_len) {
            return Err(Error::format(
                &input,
                format!("is {input_len} bytes but the descriptor's segments end at {total}"),
            ));
        }
        if let Some(l) = descriptor
            .legacy
            .as_ref()
            .filter(|l| l.device_memory_size != input_len)
        {
            return Err(Error::format(
                &input,
                format!(
                    "is {input_len} bytes but DeviceMemorySize is {}",
                    l.device_memory_size
                ),
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
        // Recorded addresses are user-space addresses of the recording process: a range past
        // the 48-bit user address space (or wrapping) cannot be reserved anywhere.
        let ends = |addr: u64, size: u64| addr.checked_add(size).filter(|&e| e <= USER_SPACE_END);
        let bad = segments
            .iter()
            .find(|s| ends(s.addr, s.size).is_none())
            .map(|s| (s.addr, s.size))
            .or_else(|| {
                ends(descriptor.valloc_addr, descriptor.valloc_size)
                    .is_none()
                    .then_some((descriptor.valloc_addr, descriptor.valloc_size))
            });
        if let Some((addr, size)) = bad {
            return Err(Error::format(
                json,
                format!(
                    "the recorded range {addr:#x}+{size:#x} lies beyond the 48-bit user address space: no process can map it"
                ),
            ));
        }
        let plan = plan::plan(&descriptor, &segments);
        Ok(ReplayInstance {
            files,
            descriptor,
            input_len,
            segments,
            plan,
            image,
            globals,
            notes,
        })
    }

    /// Refuse verification up front when there is nothing to verify against, naming the file
    /// and the recording option (so no kernel runs for a verification that cannot happen).
    pub fn check_verifiable(&self, verify: &Verify) -> Result<()> {
        if !verify.is_on() {
            return Ok(());
        }
        let out = self.files.snapshot_file(&self.descriptor, Side::Output);
        let option = if self.descriptor.format.is_legacy() {
            "without LIBOMPTARGET_RR_SAVE_OUTPUT"
        } else {
            "without its output (LIBOMPTARGET_RECORD_OUTPUT=false, or rr-tui record --no-output)"
        };
        match self.files.recorded_len(&self.descriptor, Side::Output) {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Err(Error::format(
                &out,
                format!(
                    "missing, so there is nothing to verify against: the instance was recorded {option}; \
                     replay without --verify"
                ),
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
