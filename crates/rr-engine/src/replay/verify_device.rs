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

/// Device ranges are fingerprinted in chunks of this many bytes, so that a result that differs
/// is copied back and compared only where it does.
pub const CHUNK: usize = rr_format::store::CHUNK_BYTES as usize;

/// The expected fingerprints of a session's device ranges, chunk by chunk, computed once.
pub struct DeviceVerifier {
    fingerprinter: Fingerprinter,
    /// Per chunk: its device address, file offset and length.
    chunks: Vec<(u64, usize, usize)>,
    expected: Vec<u128>,
}

/// The chunks of the device ranges `(addr, offset, len)`, in order.
fn chunks_of(copies: &[(u64, usize, usize)]) -> Vec<(u64, usize, usize)> {
    let mut out = Vec::new();
    for &(addr, off, len) in copies {
        let mut at = 0;
        while at < len {
            let n = CHUNK.min(len - at);
            out.push((addr + at as u64, off + at, n));
            at += n;
        }
    }
    out
}

impl DeviceVerifier {
    /// Fingerprint the recorded output of each device range `(addr, offset, len)`, chunk by
    /// chunk: where `unchanged`, the recorded input at device address `input_at[i]` (the range
    /// itself before any launch, or its place in the pristine copy), else uploaded from
    /// `output`. `None` when a range cannot be fingerprinted.
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
        let mut expected = Vec::new();
        for ((&(_, off, len), &unchanged), &at) in copies.iter().zip(unchanged).zip(input_at) {
            // The expected bytes of this range are at `from` on the device.
            let from = if unchanged {
                at
            } else {
                let Some(scratch) = &scratch else {
                    return Ok(None);
                };
                scratch.upload(0, output.window(off as u64, len))?;
                scratch.ptr()
            };
            let ranges: Vec<(u64, u64)> = chunks_of(&[(from, 0, len)])
                .into_iter()
                .map(|(a, _, n)| (a, n as u64))
                .collect();
            for p in fingerprinter.fingerprints(&ranges)? {
                match p {
                    Some(p) => expected.push(p),
                    None => return Ok(None),
                }
            }
        }
        Ok(Some(DeviceVerifier {
            fingerprinter,
            chunks: chunks_of(copies),
            expected,
        }))
    }

    /// The chunks of `memory`'s device ranges that do not hold their recorded output now, as
    /// `(addr, file offset, len)`: empty when all do. `None` when that cannot be told.
    pub fn differing(
        &mut self,
        memory: &ExactMemory,
    ) -> rr_cuda::Result<Option<Vec<(u64, usize, usize)>>> {
        let ranges: Vec<(u64, u64)> = self.chunks.iter().map(|&(a, _, l)| (a, l as u64)).collect();
        if ranges.iter().any(|&(a, l)| !memory.owns(a, l)) {
            return Ok(None);
        }
        let now = self.fingerprinter.fingerprints(&ranges)?;
        if now.len() != self.expected.len() {
            return Ok(None);
        }
        let mut out = Vec::new();
        for ((n, e), chunk) in now.iter().zip(&self.expected).zip(&self.chunks) {
            match n {
                None => return Ok(None),
                Some(n) if n != e => out.push(*chunk),
                Some(_) => {}
            }
        }
        Ok(Some(out))
    }
}
