//! Putting the recorded input back before a run: device memory from the pristine copy, host
//! segments and CUDA arrays from the bytes kept on the host, the globals, and the poison a
//! candidate's run starts from ([`guards`]).

use rr_cuda::HostMemory;

use super::{classify, Pristine, RunError, Session};
use crate::error::Error;
use crate::replay::objects::ReplayObjects;

impl Session {
    /// Put the recorded input back (from the pristine copy) and the globals.
    pub fn restore(&mut self) -> std::result::Result<(), RunError> {
        if self.input.dirty {
            match &self.input.pristine {
                Pristine::Device(buf) => {
                    self.instance
                        .memory
                        .restore_from(&self.stream, buf, &self.input.copies)
                }
                Pristine::Host(host) => self.instance.memory.upload(
                    &self.stream,
                    &host_slices(&self.input.copies, host.as_slice()),
                ),
                Pristine::None => {
                    return Err(RunError::Other(Error::invalid(
                        "this session was opened for a single launch and kept no copy of the input",
                    )))
                }
            }
            .map_err(classify)?;
            restore_side(
                &self.instance.host,
                &self.input.host_copies,
                &self.instance.objects,
                &self.input.side_input,
            )
            .map_err(classify)?;
            self.input.dirty = false;
        }
        self.apply_poison()?;
        let items: Vec<(&rr_cuda::module::Global, &[u8])> = self
            .kernels
            .kernel
            .globals
            .iter()
            .map(|(g, v)| (g, v.as_slice()))
            .collect();
        rr_cuda::module::Global::upload_all(&self.stream, &items).map_err(classify)
    }

    /// Restore the recorded input and wait for it (before back-to-back launches).
    pub fn restore_and_wait(&mut self) -> std::result::Result<(), RunError> {
        self.restore()?;
        self.stream.synchronize().map_err(classify)
    }

    /// Overwrite the poisoned ranges with this run's poison byte, before a candidate's run (or
    /// the recorded kernel's, while poisoning is being checked); the memory is then dirty, so
    /// the next restore puts the recorded input back.
    fn apply_poison(&mut self) -> std::result::Result<(), RunError> {
        let Some((ranges, byte)) = self.guards.next_poison(self.kernels.candidate_bound) else {
            return Ok(());
        };
        self.input.dirty = true;
        self.instance
            .memory
            .fill(&self.stream, ranges, byte)
            .map_err(classify)
    }

    /// The ranges poisoned before candidate runs now (None: no poison), to arm them again after
    /// a switch, which stops poisoning.
    pub fn poison_ranges(&self) -> Option<&[(u64, usize)]> {
        self.guards.poison.as_ref().map(|(r, _)| r.as_slice())
    }

    /// Poison `ranges` (device `(address, length)`, inside the recorded ranges) before every
    /// candidate run from now on, and before the recorded kernel's runs too while
    /// `on_recorded`; `None` stops poisoning. Switching instances stops it.
    pub fn set_poison(&mut self, ranges: Option<Vec<(u64, usize)>>, on_recorded: bool) {
        self.guards.poison = ranges.map(|r| (r, on_recorded));
    }
}

/// Put the recorded input of host segments and CUDA arrays back (no kernel is running).
pub(super) fn restore_side(
    host: &HostMemory,
    host_copies: &[(u64, usize, usize)],
    objects: &ReplayObjects,
    side_input: &[(usize, Vec<u8>)],
) -> rr_cuda::Result<()> {
    let bytes_at = |off: usize| {
        side_input
            .iter()
            .find(|(o, _)| *o == off)
            .map(|(_, b)| b.as_slice())
            .unwrap_or(&[])
    };
    for &(addr, off, _) in host_copies {
        host.write(addr, bytes_at(off))?;
    }
    for (array, off, _) in &objects.arrays {
        array.upload(bytes_at(*off))?;
    }
    Ok(())
}

/// The host bytes of each segment, paired with its device address.
pub(super) fn host_slices<'a>(
    copies: &[(u64, usize, usize)],
    host: &'a [u8],
) -> Vec<(u64, &'a [u8])> {
    copies
        .iter()
        .map(|&(addr, off, len)| (addr, &host[off..off + len]))
        .collect()
}
