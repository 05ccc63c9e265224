//! Verification on the device: whether the replayed memory equals the recorded output, told by
//! fingerprints computed on the GPU ([`crate::replay::verify_device`]) without copying the memory
//! back, and the bytes of the chunks found to differ read back for the host to compare.

use rr_format::instance::Side;

use super::{classify, Pristine, RunError, Session};
use crate::error::Result;
use crate::replay::instance::ReplayInstance;
use crate::replay::verify;
use crate::replay::verify_device::DeviceVerifier;
use crate::snapshot::{open_recorded, Snapshot};

/// A session's verification on the device. Field order is drop order: the fingerprints (device
/// memory and the fingerprinter's module) with the recorded output's mapping, then the chunks
/// (host memory only).
#[derive(Default)]
pub(super) struct DeviceVerification {
    /// Not tried yet (`None`), impossible for this record (`Some(None)`), or the expected
    /// fingerprints with the recorded output's mapping.
    verifier: Option<Option<(DeviceVerifier, Snapshot)>>,
    /// The device chunks `(addr, offset, len)` the last fingerprint comparison found to differ.
    differing_chunks: Vec<(u64, usize, usize)>,
}

impl DeviceVerification {
    /// Forget the fingerprints (released here) and the chunks found to differ: they were
    /// another instance's.
    pub(super) fn reset(&mut self) {
        self.verifier = None;
        self.differing_chunks.clear();
    }
}

impl Session {
    /// Whether the replayed memory equals the recorded output, shown without copying the device
    /// memory back ([`crate::replay::verify_device`]). `false` means "not shown": something differs,
    /// or the record lacks what it needs; the caller then compares on the host.
    pub fn equal_on_device(&mut self, inst: &ReplayInstance) -> Result<bool> {
        Ok(self
            .differing_on_device(inst)?
            .is_some_and(|chunks| chunks.is_empty()))
    }

    /// Where the replayed memory may differ from the recorded output, told on the device:
    /// the file ranges `(offset, len)` of the device chunks whose fingerprints differ (empty:
    /// equal). `None` when it cannot be told (the record lacks what it needs, or a host
    /// segment or array differs): the caller compares everything on the host.
    pub fn differing_on_device(
        &mut self,
        inst: &ReplayInstance,
    ) -> Result<Option<Vec<(u64, u64)>>> {
        if self.verification.verifier.is_none() {
            let input_at = match &self.input.pristine {
                Pristine::Device(buf) => Some(
                    self.input
                        .copies
                        .iter()
                        .map(|c| buf.ptr() + c.1 as u64)
                        .collect(),
                ),
                _ => None,
            };
            self.verification.verifier = Some(match input_at {
                Some(at) => self.device_verifier(inst, at)?,
                None => None,
            });
        }
        let Some(Some((verifier, output))) = &mut self.verification.verifier else {
            return Ok(None);
        };
        let Some(chunks) = verifier.differing(&self.instance.memory).ok().flatten() else {
            return Ok(None);
        };
        // Host segments and arrays are small: compared on the host.
        for &(addr, off, len) in &self.input.host_copies {
            let mut now = vec![0u8; len];
            self.instance.host.read(addr, &mut now)?;
            if now != output.window(off as u64, len) {
                return Ok(None);
            }
        }
        for (array, off, len) in &self.instance.objects.arrays {
            let mut now = vec![0u8; *len];
            array.download(&mut now)?;
            if now != output.window(*off as u64, *len) {
                return Ok(None);
            }
        }
        output.check_intact()?;
        self.verification.differing_chunks = chunks.clone();
        Ok(Some(
            chunks
                .into_iter()
                .map(|(_, off, len)| (off as u64, len as u64))
                .collect(),
        ))
    }

    /// Get ready to verify on the device while the recorded input is still in place: call
    /// before the first launch when the session keeps no device copy of the input.
    pub fn prepare_device_verification(&mut self, inst: &ReplayInstance) -> Result<()> {
        if self.verification.verifier.is_none() && !self.input.dirty {
            let at = self.input.copies.iter().map(|c| c.0).collect();
            self.verification.verifier = Some(self.device_verifier(inst, at)?);
        }
        Ok(())
    }

    /// The expected fingerprints, the recorded input being at `input_at` (per device range);
    /// `None` when the record cannot be verified this way.
    fn device_verifier(
        &self,
        inst: &ReplayInstance,
        input_at: Vec<u64>,
    ) -> Result<Option<(DeviceVerifier, Snapshot)>> {
        let Some(unchanged) = inst.unchanged_copies() else {
            return Ok(None);
        };
        if unchanged.len() != self.input.copies.len() {
            return Ok(None);
        }
        let output = open_recorded(&inst.files, &inst.descriptor, Side::Output)?;
        if output.len() != self.input.input_len {
            return Ok(None);
        }
        // A fingerprinter that cannot load (a driver too old for its PTX) only means the host
        // compares.
        let v = DeviceVerifier::new(&self.input.copies, &unchanged, &input_at, &output)
            .ok()
            .flatten();
        output.check_intact()?;
        Ok(v.map(|v| (v, output)))
    }

    /// The replayed bytes of the chunks [`Self::differing_on_device`] found last, and
    /// [`verify::WIDEN`] bytes either side within their device range, at their offsets
    /// in a buffer as long as the snapshot whose other bytes are zero. The buffer is pageable
    /// and zeroed lazily by the system (only the differing chunks' pages are ever touched): a
    /// page-locked one, allocated and cleared, cost about 20 s for a 24 GiB snapshot on the H100
    /// machine, where the chunks themselves come back in milliseconds.
    pub fn read_back_differing(&self) -> std::result::Result<Vec<u8>, RunError> {
        let mut out = vec![0u8; self.input.input_len as usize];
        self.download_chunks(&mut out)?;
        Ok(out)
    }

    fn download_chunks(&self, out: &mut [u8]) -> std::result::Result<(), RunError> {
        for &(_, off, len) in &self.verification.differing_chunks {
            let Some((start, end)) = verify::widened(&self.input.copies, off, len) else {
                continue;
            };
            // The widened range may reach into the chunks either side: read from each.
            for &(addr, c_off, c_len) in &self.input.copies {
                let (s, e) = (start.max(c_off), end.min(c_off + c_len));
                if s < e {
                    self.instance
                        .memory
                        .download(addr + (s - c_off) as u64, &mut out[s..e])
                        .map_err(classify)?;
                }
            }
        }
        Ok(())
    }
}
