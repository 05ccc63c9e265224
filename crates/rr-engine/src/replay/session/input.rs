//! The recorded input of a session: read from its snapshot, put in place on the device (except
//! what the device already holds), and kept as the pristine copy later restores come from.

use rr_cuda::upload::{StagingPool, UploadError};
use rr_cuda::{Context, DeviceBuffer, ExactMemory, PinnedBuffer, Stream};
use rr_format::instance::Side;
use rr_format::text::visible;

use super::{Pristine, PRISTINE_MARGIN};
use crate::error::{Error, Result};
use crate::replay::instance::ReplayInstance;
use crate::replay::load_threads::threads;
use crate::replay::loading::{dedupe, resident, Loading, Resident, SnapshotSource};
use crate::replay::protocol::Event;
use crate::snapshot::{open_recorded, Snapshot};

/// The recorded input of `inst`, opened and checked against the size the instance was
/// planned with.
pub(super) fn read_input(
    inst: &ReplayInstance,
    progress: &mut dyn FnMut(Event),
) -> Result<Snapshot> {
    let input = open_recorded(&inst.files, &inst.descriptor, Side::Input)?;
    progress(Event::Phase {
        name: "read".into(),
        detail: format!(
            "{} ({} bytes)",
            visible(&input.path().to_string_lossy()),
            inst.input_len
        ),
    });
    if input.len() != inst.input_len {
        return Err(Error::format(
            input.path(),
            format!(
                "changed size while opening (now {} bytes, was {})",
                input.len(),
                inst.input_len
            ),
        ));
    }
    Ok(input)
}

/// `inst`'s device ranges with their input blobs.
pub(super) fn resident_of(inst: &ReplayInstance) -> Vec<Resident> {
    resident(&inst.copies(), inst.copy_inputs().as_deref())
}

/// Put `inst`'s device ranges in place from `input` (read by several threads, with progress),
/// except those `on_device` already holds; returns the bytes read and uploaded.
pub(super) fn upload_input(
    memory: &ExactMemory,
    stream: &Stream,
    inst: &ReplayInstance,
    input: &Snapshot,
    on_device: &[Resident],
    staging: &mut StagingPool,
    progress: &mut dyn FnMut(Event),
) -> Result<u64> {
    let copies = inst.copies();
    let inputs = inst.copy_inputs();
    let (upload, within) = dedupe(&copies, inputs.as_deref(), on_device);
    let total = upload.iter().map(|c| c.2 as u64).sum();
    let mut loading = Loading::new(total, progress);
    memory
        .upload_streamed(
            stream,
            &upload,
            &SnapshotSource(input),
            threads(),
            staging,
            &mut |done| loading.done(done),
        )
        .map_err(|e| match e {
            UploadError::Cuda(e) => Error::Cuda(e),
            UploadError::Source(e) => e,
        })?;
    memory.copy_within(stream, &within)?;
    input.check_intact()?;
    Ok(total)
}

/// A copy of the input just put in place, for the launches that follow: on the device when it
/// fits beside everything else, else page-locked on the host.
pub(super) fn keep_copy(
    context: &Context,
    memory: &ExactMemory,
    stream: &Stream,
    input: &Snapshot,
    copies: &[(u64, usize, usize)],
) -> Result<Pristine> {
    let len = input.len() as usize;
    if len == 0 {
        return Ok(Pristine::None);
    }
    let (free, _) = context.mem_info()?;
    if free > len + PRISTINE_MARGIN {
        let buf = DeviceBuffer::new(len)?;
        memory.save_to(stream, &buf, copies)?;
        Ok(Pristine::Device(buf))
    } else {
        let host = PinnedBuffer::copy_of(input.bytes())?;
        input.check_intact()?;
        Ok(Pristine::Host(host))
    }
}

/// The `restore` event of a load of `bytes` that took `seconds`.
pub(super) fn restored(bytes: u64, seconds: f64, pristine: &Pristine) -> Event {
    Event::Restore {
        bytes,
        seconds,
        gb_per_s: if seconds > 0.0 {
            bytes as f64 / seconds / 1e9
        } else {
            0.0
        },
        between_reps: match pristine {
            Pristine::Device(_) => "device",
            Pristine::Host(_) => "host",
            Pristine::None => "none",
        }
        .into(),
    }
}
