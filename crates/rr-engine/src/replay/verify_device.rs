//! Verification where the memory lives: the replayed device memory's fingerprints
//! (`rr_cuda::fingerprint`, computed at the GPU's bandwidth) against those of the recorded
//! output. The expected fingerprints come from the session's pristine device copy of the input
//! for the segments the kernel left as they were (their output blob is their input blob), and
//! from the recorded output uploaded once to a scratch buffer for the others (the segments the
//! kernel wrote, usually small). Host segments and CUDA arrays are small and compared on the
//! host.
//!
//! It only ever *proves equality*: when anything differs, or the record lacks what it needs
//! (no blob ids, no output, no device copy of the input), the caller compares on the host as
//! before and reports each difference. Equal fingerprints are taken as equal memory: the
//! fingerprint is 128 bits of an additive hash, not a cryptographic one, which is sound for a
//! kernel's own output (nothing adversarial chooses it).

use rr_cuda::fingerprint::Fingerprinter;
use rr_cuda::{DeviceBuffer, ExactMemory};

use crate::snapshot::Snapshot;

/// The expected fingerprints of a session's device ranges, computed once.
pub struct DeviceVerifier {
    fingerprinter: Fingerprinter,
    expected: Vec<u128>,
}

impl DeviceVerifier {
    /// Fingerprint the recorded output of each device range `(addr, offset, len)`: where
    /// `unchanged`, the recorded input at device address `input_at[i]` (the range itself before
    /// any launch, or its place in the pristine copy), else uploaded from `output`. `None`
    /// when a range cannot be fingerprinted.
    pub fn new(
        copies: &[(u64, usize, usize)],
        unchanged: &[bool],
        input_at: &[u64],
        output: &Snapshot,
    ) -> rr_cuda::Result<Option<DeviceVerifier>> {
        let mut fingerprinter = Fingerprinter::new()?;
        let largest_changed = copies
            .iter()
            .zip(unchanged)
            .filter(|(_, same)| !**same)
            .map(|(c, _)| c.2)
            .max()
            .unwrap_or(0);
        let scratch = if largest_changed > 0 {
            Some(DeviceBuffer::new(largest_changed)?)
        } else {
            None
        };
        let mut expected = Vec::with_capacity(copies.len());
        let mut same = Vec::new();
        for ((&(_, off, len), &unchanged), &at) in copies.iter().zip(unchanged).zip(input_at) {
            if unchanged {
                same.push((at, len as u64));
                continue;
            }
            let Some(scratch) = &scratch else {
                return Ok(None);
            };
            scratch.upload(0, output.window(off as u64, len))?;
            match fingerprinter.fingerprints(&[(scratch.ptr(), len as u64)])?[0] {
                Some(p) => expected.push((off, p)),
                None => return Ok(None),
            }
        }
        let same_prints = fingerprinter.fingerprints(&same)?;
        let mut same_prints = same_prints.into_iter();
        let mut changed = expected.into_iter();
        let mut all = Vec::with_capacity(copies.len());
        for &unchanged in unchanged {
            let p = if unchanged {
                same_prints.next().flatten()
            } else {
                changed.next().map(|(_, p)| p)
            };
            match p {
                Some(p) => all.push(p),
                None => return Ok(None),
            }
        }
        Ok(Some(DeviceVerifier {
            fingerprinter,
            expected: all,
        }))
    }

    /// Whether every device range of `memory` holds its recorded output now.
    pub fn device_equal(
        &mut self,
        memory: &ExactMemory,
        copies: &[(u64, usize, usize)],
    ) -> rr_cuda::Result<bool> {
        let ranges: Vec<(u64, u64)> = copies.iter().map(|&(a, _, l)| (a, l as u64)).collect();
        if ranges.iter().any(|&(a, l)| !memory.owns(a, l)) {
            return Ok(false);
        }
        let now = self.fingerprinter.fingerprints(&ranges)?;
        Ok(now.len() == self.expected.len()
            && now.iter().zip(&self.expected).all(|(n, e)| *n == Some(*e)))
    }
}
