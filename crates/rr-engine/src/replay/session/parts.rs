//! The parts a [`Session`](super::Session) composes, one concern each: timing, the recorded
//! input restores come from, the kernels (recorded, variants, an A/B candidate), the guards of
//! candidate runs, and the instance's memory at its recorded addresses. Each part's field order
//! is its drop order (the session's documentation says why it matters).

use std::collections::HashMap;
use std::path::PathBuf;

use rr_cuda::timing::Probes;
use rr_cuda::upload::StagingPool;
use rr_cuda::{DeviceBuffer, Event as CudaEvent, ExactMemory, HostMemory, Params, PinnedBuffer};
use rr_format::globals::Globals;

use super::kernel::Kernel;
use crate::replay::guards;
use crate::replay::loading::Resident;
use crate::replay::objects::ReplayObjects;
use crate::replay::plan::Plan;

/// Launching and timing: the events around a timed launch and the clock probes after it.
pub(super) struct Timer {
    pub start: CudaEvent,
    pub end: CudaEvent,
    pub probes: Option<Probes>,
    /// The device's rated SM clock (MHz): samples well below it were throttled.
    pub reference_clock_mhz: f64,
}

/// The copy of the recorded input that restores come from.
pub(super) enum Pristine {
    /// A device-side copy, restored device to device (0.5 ms per GiB on the H200).
    Device(DeviceBuffer),
    /// The page-locked host copy, restored over PCIe (55 GB/s).
    Host(PinnedBuffer),
    /// Opened for one launch: nothing kept.
    None,
}

/// The recorded input and what restoring it needs.
pub(super) struct RecordedInput {
    pub pristine: Pristine,
    /// The page-locked buffers restores stage the recorded input through (made before the first
    /// restore is timed, kept for switches and calibration).
    pub staging: StagingPool,
    /// `(address, snapshot offset, length)` of device segments.
    pub copies: Vec<(u64, usize, usize)>,
    /// `(address, snapshot offset, length)` of host segments.
    pub host_copies: Vec<(u64, usize, usize)>,
    /// The input bytes of host segments and arrays, by snapshot offset (restored by the CPU
    /// and by array copies; device segments come from `pristine`).
    pub side_input: Vec<(usize, Vec<u8>)>,
    pub input_len: u64,
    /// Memory differs from the recorded input (a kernel ran since the last restore).
    pub dirty: bool,
}

/// The kernels a session can launch: the recorded one (bound now unless a variant or the
/// candidate is), compile-time variants, an A/B candidate, and what rebinding them needs.
pub(super) struct Kernels {
    pub kernel: Kernel,
    /// An A/B candidate's kernel with the dynamic shared memory it allows: swapped with
    /// `kernel` while it runs ([`super::Session::with_candidate`]).
    pub candidate: Option<(Kernel, u32)>,
    /// The candidate's module, kernel name and globals as loaded: what binds it again when a
    /// switch keeps it ([`super::Session::switch_keeping_candidate`]).
    pub candidate_module: Option<super::switch::LoadedCandidate>,
    /// The candidate's kernel is bound now ([`super::Session::with_candidate`]).
    pub candidate_bound: bool,
    /// Compile-time tuning: the variant bound now (None: the recorded image), and the kernels
    /// of the others loaded so far with the dynamic shared memory each allows.
    pub active_variant: Option<PathBuf>,
    pub parked: HashMap<Option<PathBuf>, (Kernel, u32)>,
    /// The image, kept when it is PTX (a register limit recompiles it).
    pub ptx: Option<Vec<u8>>,
    pub max_registers: Option<u32>,
    pub recorded_globals: Globals,
    pub kernel_name: String,
    pub shared_allowed: u32,
}

/// The guards of candidate runs ([`guards`]): the poison, and the bound on a plausible time.
pub(super) struct Guards {
    /// What is poisoned before candidate runs, and whether the recorded kernel's runs are
    /// poisoned too (to check that poisoning is sound for this instance).
    pub poison: Option<(Vec<(u64, usize)>, bool)>,
    /// Poisoned runs so far: the poison byte changes with each.
    pub poisoned_runs: u64,
    /// The device's peak memory bandwidth (bytes/s) and L2 size: the plausibility bound.
    pub peak_bandwidth: Option<f64>,
    pub l2_bytes: u64,
}

impl Guards {
    /// The ranges to poison before this run and the byte to fill them with (None: no poison
    /// now); each call moves the poison sequence on.
    pub fn next_poison(&mut self, candidate_bound: bool) -> Option<(&[(u64, usize)], u8)> {
        let (ranges, on_recorded) = self.poison.as_ref()?;
        if ranges.is_empty() || !(candidate_bound || *on_recorded) {
            return None;
        }
        let byte = guards::poison_byte(self.poisoned_runs);
        self.poisoned_runs = self.poisoned_runs.wrapping_add(1);
        Some((ranges.as_slice(), byte))
    }
}

/// The instance on the device: its launch parameters, texture and surface objects (released
/// before the memory they read), host memory and device memory at the recorded addresses.
pub(super) struct InstanceMemory {
    pub params: Params,
    /// Texture and surface objects, and the CUDA arrays behind them.
    pub objects: ReplayObjects,
    /// Page-locked host memory at its recorded addresses.
    pub host: HostMemory,
    pub memory: ExactMemory,
    /// The reservations and mappings of `memory` (an instance with others cannot switch in).
    pub plan: Plan,
    /// The device ranges with the input blob each holds once restored (empty: the record
    /// names no blobs): what a switch to another instance need not upload again.
    pub resident: Vec<Resident>,
}
