//! Switching a session to another instance of the same recording: the device memory stays
//! mapped at the recorded addresses, what already holds the new instance's input stays, and the
//! kernel, parameters, globals and pristine copy become the new instance's.

use std::time::Instant;

use super::input::{keep_copy, read_input, resident_of, restored, upload_input};
use super::kernel::{bind_instance, Bound, Kernel};
use super::restore::host_slices;
use super::{Pristine, Session, DEFAULT_DYNAMIC_SHARED};
use crate::error::{Error, Result};
use crate::replay::instance::ReplayInstance;
use crate::replay::loading;
use crate::replay::protocol::Event;
use crate::snapshot::Snapshot;
use rr_format::globals::Globals;

impl Session {
    /// Why this session cannot become `inst`'s (None: it can): [`Session::switch_to`] keeps
    /// the memory mapped at the recorded addresses, so the instance must map the same ranges,
    /// and it recreates nothing that a fresh process numbers or maps (host memory, texture and
    /// surface objects, CUDA arrays).
    pub fn unswitchable(&self, inst: &ReplayInstance) -> Option<&'static str> {
        let has_objects = |i: &ReplayInstance| {
            !i.arrays().is_empty()
                || i.descriptor
                    .cuda
                    .as_ref()
                    .is_some_and(|c| !c.objects.is_empty())
        };
        if inst.plan != self.instance.plan {
            Some("its memory is laid out differently (the program allocated or freed memory in between)")
        } else if !inst.host.is_empty() {
            Some("this instance uses page-locked host memory or CUDA arrays")
        } else if !self.input.host_copies.is_empty() || !self.input.side_input.is_empty() {
            Some("the last instance used page-locked host memory or CUDA arrays")
        } else if has_objects(inst) {
            Some("this instance uses texture or surface objects")
        } else if !self.instance.objects.objects.is_empty() {
            Some("the last instance used texture or surface objects")
        } else if matches!(self.input.pristine, Pristine::None) && self.input.input_len > 0 {
            Some("this session was opened for a single launch")
        } else {
            None
        }
    }

    /// Become the session of `inst`, another instance of the same recording, keeping the
    /// device memory: ranges that already hold `inst`'s input blob stay as they are, the rest
    /// is uploaded (or copied on the device from a range holding the same blob); the kernel,
    /// parameters, globals and pristine copy become `inst`'s. Refused (nothing changed) when
    /// [`Session::unswitchable`] says why; after any other error the session must be dropped.
    pub fn switch_to(
        &mut self,
        inst: &ReplayInstance,
        progress: &mut dyn FnMut(Event),
    ) -> Result<Switched> {
        let prepared = self.prepare_switch(inst, progress)?;
        self.apply_switch(inst, prepared, progress)
    }

    /// What a switch to `inst` reads and binds before it changes anything: refused (the
    /// session as it was) when [`Session::unswitchable`] says why, the kernel does not bind or
    /// the input cannot be read.
    fn prepare_switch(
        &self,
        inst: &ReplayInstance,
        progress: &mut dyn FnMut(Event),
    ) -> Result<Prepared> {
        if let Some(why) = self.unswitchable(inst) {
            return Err(Error::invalid(format!("{SWITCH_REFUSED}{why}")));
        }
        let bound = bind_instance(inst, &self.device, progress)?;
        let input = read_input(inst, progress)?;
        Ok(Prepared { bound, input })
    }

    /// The switch proper, from what [`Session::prepare_switch`] read: after an error here the
    /// session must be dropped.
    fn apply_switch(
        &mut self,
        inst: &ReplayInstance,
        Prepared { bound, input }: Prepared,
        progress: &mut dyn FnMut(Event),
    ) -> Result<Switched> {
        let t = Instant::now();
        // Put back what stays, then upload the rest over it.
        let next = resident_of(inst);
        let kept = loading::kept(&self.instance.resident, &next);
        if self.input.dirty {
            let old: Vec<(u64, usize, usize)> =
                kept.iter().map(|k| (k.addr, k.offset, k.len)).collect();
            match &self.input.pristine {
                Pristine::Device(buf) => {
                    self.instance.memory.restore_from(&self.stream, buf, &old)?
                }
                Pristine::Host(host) => self
                    .instance
                    .memory
                    .upload(&self.stream, &host_slices(&old, host.as_slice()))?,
                Pristine::None => {}
            }
        }
        // The old copy goes before the new one is made: both may not fit.
        self.input.pristine = Pristine::None;
        self.verification.reset();
        let uploaded = upload_input(
            &self.instance.memory,
            &self.stream,
            inst,
            &input,
            &kept,
            &mut self.input.staging,
            progress,
        )?;
        let copies = inst.copies();
        self.input.pristine = keep_copy(
            &self.context,
            &self.instance.memory,
            &self.stream,
            &input,
            &copies,
        )?;
        drop(input);
        let seconds = t.elapsed().as_secs_f64();
        // What was written to the device, not what was already there: its rate is a real one.
        progress(restored(uploaded, seconds, &self.input.pristine));
        let Bound {
            params,
            objects,
            kernel,
            ptx,
            recorded_globals,
            kernel_name,
        } = bound;
        // The old kernel and its variants go with their modules; the poison was the old
        // instance's.
        self.kernels.candidate = None;
        self.kernels.candidate_module = None;
        self.guards.poison = None;
        self.kernels.parked.clear();
        self.kernels.active_variant = None;
        self.kernels.kernel = kernel;
        self.instance.params = params;
        self.instance.objects = objects;
        self.kernels.ptx = ptx;
        self.kernels.max_registers = None;
        self.kernels.recorded_globals = recorded_globals;
        self.kernels.kernel_name = kernel_name;
        self.kernels.shared_allowed = DEFAULT_DYNAMIC_SHARED;
        self.instance.resident = next;
        // The kept read-back buffer must be zero outside the new instance's ranges (as the
        // recorded output is): cleared when they moved, dropped when the length changed.
        if self.input.input_len != inst.input_len {
            self.read_buffer = None;
        } else if self.input.copies != copies {
            if let Some(b) = self.read_buffer.as_mut() {
                b.as_mut_slice().fill(0);
            }
        }
        self.input.copies = copies;
        self.input.input_len = inst.input_len;
        self.input.dirty = false;
        // A switch keeps the device: said again, as a new session would, for whoever follows.
        progress(Event::Device {
            name: self.device.name.clone(),
            sm: self.device.sm,
            ordinal: self.device.ordinal,
            rated_clock_mhz: Some(self.timer.reference_clock_mhz),
        });
        Ok(Switched {
            kept: kept.iter().map(|k| k.len as u64).sum(),
            uploaded,
            total: inst.input_len,
            seconds,
        })
    }
}

impl Session {
    /// [`Session::switch_to`], keeping the loaded A/B candidate: its module stays loaded (and
    /// with it whatever the candidate left where no reset reaches), its kernel is bound again
    /// against `inst`'s parameters and recorded globals, and its other globals are put back to
    /// their values as loaded before every run (a global the last instance recorded and this
    /// one does not included: each instance sees its own recording only). Rotating
    /// instances this way is what makes a result carried over from another instance's run fail
    /// verification ([`crate::replay::rotation`]). Without a candidate, a plain switch.
    pub fn switch_keeping_candidate(
        &mut self,
        inst: &ReplayInstance,
        progress: &mut dyn FnMut(Event),
    ) -> std::result::Result<Switched, SwitchFailed> {
        let prepared = self
            .prepare_switch(inst, progress)
            .map_err(SwitchFailed::Refused)?;
        // Bound before anything changes: a candidate that cannot take this instance's
        // parameters refuses this instance only, the session still the last one's.
        let kernel = match &self.kernels.candidate_module {
            Some(c) => Some(rebind(c, &prepared.bound).map_err(SwitchFailed::Refused)?),
            None => None,
        };
        let kept = self.kernels.candidate_module.take();
        let switched = self
            .apply_switch(inst, prepared, progress)
            .map_err(SwitchFailed::Broken)?;
        if let (Some(kernel), Some(c)) = (kernel, kept) {
            self.kernels.candidate = Some((kernel, DEFAULT_DYNAMIC_SHARED));
            self.kernels.candidate_module = Some(c);
        }
        Ok(switched)
    }
}

/// The candidate's kernel bound against the instance of `bound`: its recorded globals at the
/// recorded values, every other global the candidate had when loaded at its value then.
fn rebind(c: &LoadedCandidate, bound: &Bound) -> Result<Kernel> {
    let mut notes = Vec::new();
    let recorded = &bound.recorded_globals;
    let mut kernel = Kernel::bind_candidate(
        &c.module,
        &c.kernel,
        &bound.kernel.layout,
        recorded,
        &mut notes,
    )?;
    let taken: Vec<&str> = recorded
        .entries
        .iter()
        .filter(|g| {
            c.module
                .global(&g.name)
                .is_ok_and(|t| t.size as u64 == g.size)
        })
        .map(|g| g.name.as_str())
        .collect();
    for (name, value) in unbound(&c.as_loaded, &taken) {
        if let Ok(g) = c.module.global(name) {
            kernel.globals.push((g, value.clone()));
        }
    }
    Ok(kernel)
}

/// The globals of `as_loaded` that `taken` (the names bound to recorded values) leaves.
fn unbound<'a>(
    as_loaded: &'a [(String, Vec<u8>)],
    taken: &'a [&str],
) -> impl Iterator<Item = &'a (String, Vec<u8>)> + 'a {
    as_loaded
        .iter()
        .filter(move |(name, _)| !taken.contains(&name.as_str()))
}

/// A loaded A/B candidate, as a switch that keeps it binds it again: its module, its kernel's
/// name, and the value of each of its globals as loaded (those of the recorded names and its
/// own that are reset: [`as_loaded`]).
pub struct LoadedCandidate {
    pub module: rr_cuda::Module,
    pub kernel: String,
    pub as_loaded: Vec<(String, Vec<u8>)>,
}

/// The value as loaded of each global of `module` that `kernel` puts back before every run
/// (bound to `recorded` or the candidate's own from `image`), read before any run wrote
/// them: what a switch to an instance that records none of them puts back.
pub(super) fn as_loaded(
    module: &rr_cuda::Module,
    image: &[u8],
    recorded: &Globals,
    kernel: &Kernel,
) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    let names = recorded.entries.iter().map(|g| (g.name.clone(), true));
    let own = crate::replay::guards::image_globals(image)
        .into_iter()
        .map(|n| (n, false));
    for (name, is_recorded) in names.chain(own) {
        let Ok(g) = module.global(&name) else {
            continue;
        };
        if out.iter().any(|(n, _)| n == &name) {
            continue;
        }
        // Those the kernel resets (within the budget of its own globals). A recorded name's
        // reset value is the recording's, so its value as loaded is read from the device (none
        // was written yet); the candidate's own were read as loaded when bound
        // (`kernel::own_globals`) and are not read again.
        if let Some((k, value)) = kernel.globals.iter().find(|(k, _)| k.ptr == g.ptr) {
            let loaded = if is_recorded {
                k.download()?
            } else {
                value.clone()
            };
            out.push((name, loaded));
        }
    }
    Ok(out)
}

/// Why [`Session::switch_keeping_candidate`] did not switch.
#[derive(Debug)]
pub enum SwitchFailed {
    /// Before anything changed (refused, the instance's kernel or the candidate does not bind,
    /// the input cannot be read): the session still holds the last instance, the candidate
    /// loaded.
    Refused(Error),
    /// Part way: the session must be dropped.
    Broken(Error),
}

impl std::fmt::Display for SwitchFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SwitchFailed::Refused(e) | SwitchFailed::Broken(e) => e.fmt(f),
        }
    }
}

/// What a switch reads and binds before it changes the session.
struct Prepared {
    bound: Bound,
    input: Snapshot,
}

/// How [`Session::switch_to`]'s refusal starts (the reason follows).
pub const SWITCH_REFUSED: &str = "cannot switch to this instance: ";

/// What [`Session::switch_to`] did: bytes that stayed on the device, bytes read and uploaded
/// (the rest was copied on the device), the instance's bytes, and how long it took.
#[derive(Debug, Clone, Copy)]
pub struct Switched {
    pub kept: u64,
    pub uploaded: u64,
    pub total: u64,
    pub seconds: f64,
}

/// As the `switched` phase says it: what stayed on the GPU, what was loaded, and the rest
/// (copied on the GPU from a range holding the same blob, or cleared).
impl std::fmt::Display for Switched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Two decimals throughout ("24.00 GiB of 24.00 GiB"), whole bytes below a KiB.
        let size = |b: u64| match b {
            0..1024 => format!("{b} B"),
            _ => humansize::format_size(
                b,
                humansize::FormatSizeOptions::from(humansize::BINARY)
                    .decimal_places(2)
                    .decimal_zeroes(2),
            ),
        };
        write!(
            f,
            "{} of {} kept on the GPU, {} read and uploaded",
            size(self.kept),
            size(self.total),
            size(self.uploaded),
        )?;
        let rest = self
            .total
            .saturating_sub(self.kept)
            .saturating_sub(self.uploaded);
        if rest > 0 {
            write!(f, ", {} copied or cleared on the GPU", size(rest))?;
        }
        write!(f, ", in {:.3} s", self.seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::{unbound, Switched};

    #[test]
    fn a_switch_puts_back_the_loaded_value_of_every_global_the_instance_does_not_record() {
        // Loaded on an instance that recorded x and y; the candidate's own z. An instance that
        // records x only: y and z get their values as loaded (never the last instance's y).
        let as_loaded = vec![
            ("x".to_string(), vec![1u8]),
            ("y".to_string(), vec![2u8]),
            ("z".to_string(), vec![3u8]),
        ];
        let left: Vec<&str> = unbound(&as_loaded, &["x"])
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(left, ["y", "z"]);
        // One that records z as well (the candidate's own there): only y.
        let left: Vec<&str> = unbound(&as_loaded, &["x", "z"])
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(left, ["y"]);
    }

    #[test]
    fn a_switch_says_every_size_alike_and_what_was_neither_kept_nor_uploaded() {
        let gib = 1u64 << 30;
        let s = Switched {
            kept: 24 * gib,
            uploaded: 2 << 20,
            total: 24 * gib + (4 << 20),
            seconds: 0.1424,
        };
        assert_eq!(
            s.to_string(),
            "24.00 GiB of 24.00 GiB kept on the GPU, 2.00 MiB read and uploaded, 2.00 MiB copied or cleared on the GPU, in 0.142 s"
        );
        let all = Switched {
            kept: 0,
            uploaded: 512,
            total: 512,
            seconds: 0.0,
        };
        assert_eq!(
            all.to_string(),
            "0 B of 512 B kept on the GPU, 512 B read and uploaded, in 0.000 s"
        );
    }
}
