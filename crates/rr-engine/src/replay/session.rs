//! The replay session: prepared once (device, context, memory at the recorded addresses, module,
//! kernel, globals, a pristine copy of the input), then any number of launches with different
//! geometry, shared memory and repetitions, restoring memory before each, and reading results
//! back. `replay`, the explorer (through a child process) and `tune` all go through it.
//!
//! Errors say which kind they are ([`RunError`]): a launch refused for its configuration leaves
//! the session usable (go on with the next configuration); a sticky fault poisons the context
//! (this process must end and a fresh one continue).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rr_cuda::timing::Probes;
use rr_cuda::upload::{StagingPool, UploadError};
use rr_cuda::{
    nvtx, Context, CudaError, Device, DeviceBuffer, Event as CudaEvent, ExactMemory, HostMemory,
    LaunchConfig, Module, Params, PinnedBuffer, Placeholders, ReserveError, Stream,
};
use rr_format::globals::Globals;
use rr_format::image::{self, ImageKind};
use rr_format::instance::Side;
use rr_format::text::visible;

use super::instance::ReplayInstance;
use super::launch;
use super::loading::Resident;
use super::objects::{self, ReplayObjects};
use super::plan::Plan;
use super::protocol::{ErrorKind, Event};
use super::timing::{Measurement, TimingPolicy};
use super::verify_device::DeviceVerifier;
use super::watchdog::Watchdog;
use crate::error::{Error, Result};
use crate::snapshot::{open_recorded, Snapshot};

/// Dynamic shared memory a kernel may use without opting in (CUDA's 48 KiB default).
const DEFAULT_DYNAMIC_SHARED: u32 = 48 * 1024;

/// Compiled variants a session keeps loaded at most.
const MAX_PARKED: usize = 64;

/// Device memory left free when deciding whether a pristine device-side copy fits.
const PRISTINE_MARGIN: usize = 512 << 20;

/// Why a launch did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Refused for its configuration before anything ran; the session is still usable.
    #[error("the launch configuration was refused: {0}")]
    InvalidLaunch(CudaError),
    /// A sticky fault: the context is poisoned; this process must end.
    #[error(
        "the kernel failed: {0}; a faulting kernel leaves the CUDA context unusable, so this replay stops here"
    )]
    Fault(CudaError),
    #[error(transparent)]
    Other(#[from] Error),
}

impl RunError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            RunError::InvalidLaunch(_) => ErrorKind::Launch,
            RunError::Fault(_) => ErrorKind::Fault,
            RunError::Other(e) => error_kind(e),
        }
    }
}

/// The protocol kind of an engine error.
pub fn error_kind(e: &Error) -> ErrorKind {
    match e {
        Error::Record(_) => ErrorKind::Input,
        Error::AddressInUse(_) => ErrorKind::Address,
        Error::Cuda(c) if c.is_sticky() => ErrorKind::Fault,
        Error::Cuda(_) | Error::Unavailable(_) | Error::Failed(_) => ErrorKind::Setup,
    }
}

/// A driver error during a run: sticky ones poison the context.
fn classify(e: CudaError) -> RunError {
    if e.is_sticky() {
        RunError::Fault(e)
    } else {
        RunError::Other(Error::Cuda(e))
    }
}

/// A driver error while preparing a configuration: sticky ones poison the context, the rest
/// refuse only this configuration.
fn refused(e: CudaError) -> RunError {
    if e.is_sticky() {
        RunError::Fault(e)
    } else {
        RunError::InvalidLaunch(e)
    }
}

// One measured launch: what timing's statistics are made of (defined there, below the session).
pub use super::timing::Sample;

/// The device, as the `device` event reports it.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub name: String,
    pub sm: u32,
    pub ordinal: i32,
}

enum Pristine {
    /// A device-side copy, restored device to device (0.5 ms per GiB on the H200).
    Device(DeviceBuffer),
    /// The page-locked host copy, restored over PCIe (55 GB/s).
    Host(PinnedBuffer),
    /// Opened for one launch: nothing kept.
    None,
}

pub struct Session {
    pub device: DeviceInfo,
    // Field order is drop order: device objects first, the context last.
    watchdog: Option<Watchdog>,
    params: Params,
    /// Texture and surface objects, and the CUDA arrays behind them.
    objects: ReplayObjects,
    /// Page-locked host memory at its recorded addresses.
    host: HostMemory,
    /// `(address, snapshot offset, length)` of host segments.
    host_copies: Vec<(u64, usize, usize)>,
    /// The input bytes of host segments and arrays, by snapshot offset (restored by the CPU
    /// and by array copies; device segments come from `pristine`).
    side_input: Vec<(usize, Vec<u8>)>,
    start: CudaEvent,
    end: CudaEvent,
    pristine: Pristine,
    probes: Option<Probes>,
    kernel: Kernel,
    /// An A/B candidate's kernel with the dynamic shared memory it allows: swapped with
    /// `kernel` while it runs ([`Session::with_candidate`]).
    candidate: Option<(Kernel, u32)>,
    /// Compile-time tuning: the variant bound now (None: the recorded image), and the kernels
    /// of the others loaded so far with the dynamic shared memory each allows.
    active_variant: Option<PathBuf>,
    parked: HashMap<Option<PathBuf>, (Kernel, u32)>,
    /// The image, kept when it is PTX (a register limit recompiles it).
    ptx: Option<Vec<u8>>,
    max_registers: Option<u32>,
    recorded_globals: Globals,
    kernel_name: String,
    /// The device's rated SM clock (MHz): samples well below it were throttled.
    reference_clock_mhz: f64,
    shared_allowed: u32,
    /// Where sweeps read the replayed memory back (allocated at the first read-back).
    read_buffer: Option<PinnedBuffer>,
    /// The page-locked buffers restores stage the recorded input through (made before the first
    /// restore is timed, kept for switches and calibration).
    staging: StagingPool,
    /// The device chunks `(addr, offset, len)` the last fingerprint comparison found to differ.
    differing_chunks: Vec<(u64, usize, usize)>,
    /// What is poisoned before candidate runs ([`super::guards`]), and whether the recorded
    /// kernel's runs are poisoned too (to check that poisoning is sound for this instance).
    poison: Option<(Vec<(u64, usize)>, bool)>,
    /// Poisoned runs so far: the poison byte changes with each.
    poisoned_runs: u64,
    /// The candidate's kernel is bound now ([`Session::with_candidate`]).
    candidate_bound: bool,
    /// The device's peak memory bandwidth (bytes/s) and L2 size: the plausibility bound.
    peak_bandwidth: Option<f64>,
    l2_bytes: u64,
    memory: ExactMemory,
    /// The reservations and mappings of `memory` (an instance with others cannot switch in).
    plan: Plan,
    /// The device ranges with the input blob each holds once restored (empty: the record
    /// names no blobs): what a switch to another instance need not upload again.
    resident: Vec<Resident>,
    stream: Stream,
    copies: Vec<(u64, usize, usize)>,
    input_len: u64,
    /// Memory differs from the recorded input (a kernel ran since the last restore).
    dirty: bool,
    /// Verification on the device: not tried yet (`None`), impossible for this record
    /// (`Some(None)`), or the expected fingerprints with the recorded output's mapping.
    verifier: Option<Option<(DeviceVerifier, crate::snapshot::Snapshot)>>,
    context: Context,
}

/// Refuse an instance whose device memory is larger than the device's: its mappings could
/// never be made.
fn fits_device(inst: &ReplayInstance, device: &str, total: u64) -> Result<()> {
    let needed = inst.plan.mapped_bytes();
    if needed <= total {
        return Ok(());
    }
    let size = |b: u64| humansize::format_size(b, humansize::BINARY);
    Err(Error::format(
        inst.files.json(),
        format!(
            "its recorded device memory needs {} ({needed} bytes) mapped, more than the {} of {device}: \
             no replay on this GPU can hold it (refused before reading the snapshot)",
            size(needed),
            size(total),
        ),
    ))
}

impl Session {
    /// Prepare `inst` on device `device_id`. `placeholders` (taken at process start over the
    /// ranges to reserve) are released right before the driver initialises. With
    /// `keep_pristine`, a copy of the input is kept so any number of launches can follow.
    ///
    /// With `kernel_timeout`, a kernel still running after that long ends the process with a
    /// message ([`super::watchdog`]).
    pub fn open(
        inst: &ReplayInstance,
        device_id: i32,
        keep_pristine: bool,
        placeholders: &mut Placeholders,
        kernel_timeout: Option<Duration>,
        progress: &mut dyn FnMut(Event),
    ) -> Result<Session> {
        placeholders.release_all();
        rr_cuda::driver::load()?;
        let count = Device::count()?;
        if device_id < 0 || device_id >= count {
            return Err(Error::invalid(format!(
                "device {device_id} does not exist: this machine has {count} CUDA device(s) (use --device)"
            )));
        }
        let device = Device::get(device_id)?;
        let info = DeviceInfo {
            name: device.name.clone(),
            sm: device.sm,
            ordinal: device_id,
        };
        progress(Event::Device {
            name: info.name.clone(),
            sm: info.sm,
            ordinal: device_id,
            rated_clock_mhz: None,
        });
        // Before any reservation, upload or read of the snapshot: memory no replay on this GPU
        // can hold is refused at once, not after mapping and reading it (a terabyte of holes).
        fits_device(inst, &device.name, device.total_memory()? as u64)?;
        if !device.supports_vmm()? {
            return Err(Error::invalid(format!(
                "{} does not support virtual memory management: exact-address replay is impossible",
                device.name
            )));
        }
        let context = Context::retain(&device)?;

        // 1. Memory at the recorded addresses, before anything else allocates device VA.
        progress(Event::Phase {
            name: "reserve".into(),
            detail: format!(
                "{} reservation(s), {} bytes mapped",
                inst.plan.reservations.len(),
                inst.plan.mapped_bytes()
            ),
        });
        let reserve_error = |e| match e {
            ReserveError::AddressInUse(m) => Error::AddressInUse(m),
            ReserveError::Cuda(c) => Error::Cuda(c),
        };
        let memory =
            ExactMemory::reserve_and_map(&inst.plan.reservations, &inst.plan.mappings, device_id)
                .map_err(reserve_error)?;
        let host_mem = HostMemory::map(&inst.host, placeholders).map_err(reserve_error)?;

        // 2. Module, kernel, parameters, globals.
        let bound = bind_instance(inst, &info, progress)?;
        let stream = Stream::new()?;

        // 3. Recorded input into pinned host memory, then onto the device.
        let input = read_input(inst, progress)?;
        let copies = inst.copies();
        let host_copies = inst.host_copies();
        let bytes = input.bytes();
        let side_input: Vec<(usize, Vec<u8>)> = host_copies
            .iter()
            .map(|&(_, off, len)| (off, len))
            .chain(bound.objects.arrays.iter().map(|&(_, off, len)| (off, len)))
            .map(|(off, len)| (off, bytes[off..off + len].to_vec()))
            .collect();
        // Page-locking is slow: the buffers are made before the restore is timed.
        let mut staging = StagingPool::default();
        staging
            .ensure(StagingPool::wanted(
                inst.input_len,
                super::loading::threads(),
            ))
            .map_err(Error::Cuda)?;
        let t = Instant::now();
        let resident = resident_of(inst);
        upload_input(&memory, &stream, inst, &input, &[], &mut staging, progress)?;
        let first_restore = t.elapsed().as_secs_f64();
        restore_side(&host_mem, &host_copies, &bound.objects, &side_input)?;
        let pristine = if keep_pristine {
            keep_copy(&context, &memory, &stream, &input, &copies)?
        } else {
            Pristine::None
        };
        drop(input);
        progress(restored(inst.input_len, first_restore, &pristine));
        // The timing probes are PTX compiled by the driver; without them timing falls back to
        // plain events (said once, as a phase).
        let probes = match Probes::new(device.l2_cache_bytes()?) {
            Ok(p) => Some(p),
            Err(e) => {
                progress(Event::Phase {
                    name: "warning".into(),
                    detail: format!("timing probes unavailable ({e}): launch latency and clocks are not measured"),
                });
                None
            }
        };
        let watchdog = kernel_timeout.map(|limit| {
            let kernel =
                rr_format::text::visible(&rr_format::demangle(&inst.descriptor.name)).into_owned();
            Watchdog::start(limit, kernel, waits_on(inst))
        });
        let Bound {
            params,
            objects,
            kernel,
            ptx,
            recorded_globals,
            kernel_name,
        } = bound;
        Ok(Session {
            device: info,
            watchdog,
            params,
            objects,
            host: host_mem,
            host_copies,
            side_input,
            start: CudaEvent::new()?,
            end: CudaEvent::new()?,
            pristine,
            probes,
            kernel,
            candidate: None,
            active_variant: None,
            parked: HashMap::new(),
            ptx,
            max_registers: None,
            recorded_globals,
            kernel_name,
            reference_clock_mhz: device.clock_khz()? as f64 / 1e3,
            shared_allowed: DEFAULT_DYNAMIC_SHARED,
            read_buffer: None,
            differing_chunks: Vec::new(),
            poison: None,
            // A phase no candidate can know in advance: where the poison sequence starts.
            poisoned_runs: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos() as u64),
            candidate_bound: false,
            peak_bandwidth: device.peak_memory_bandwidth().ok().flatten(),
            l2_bytes: device.l2_cache_bytes()? as u64,
            memory,
            staging,
            plan: inst.plan.clone(),
            resident,
            stream,
            copies,
            input_len: inst.input_len,
            dirty: false,
            verifier: None,
            context,
        })
    }

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
        if inst.plan != self.plan {
            Some("its memory is laid out differently (the program allocated or freed memory in between)")
        } else if !inst.host.is_empty() {
            Some("this instance uses page-locked host memory or CUDA arrays")
        } else if !self.host_copies.is_empty() || !self.side_input.is_empty() {
            Some("the last instance used page-locked host memory or CUDA arrays")
        } else if has_objects(inst) {
            Some("this instance uses texture or surface objects")
        } else if !self.objects.objects.is_empty() {
            Some("the last instance used texture or surface objects")
        } else if matches!(self.pristine, Pristine::None) && self.input_len > 0 {
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
        if let Some(why) = self.unswitchable(inst) {
            return Err(Error::invalid(format!("{SWITCH_REFUSED}{why}")));
        }
        let t = Instant::now();
        let bound = bind_instance(inst, &self.device, progress)?;
        let input = read_input(inst, progress)?;
        // Put back what stays, then upload the rest over it.
        let next = resident_of(inst);
        let kept = super::loading::kept(&self.resident, &next);
        if self.dirty {
            let old: Vec<(u64, usize, usize)> =
                kept.iter().map(|k| (k.addr, k.offset, k.len)).collect();
            match &self.pristine {
                Pristine::Device(buf) => self.memory.restore_from(&self.stream, buf, &old)?,
                Pristine::Host(host) => self
                    .memory
                    .upload(&self.stream, &host_slices(&old, host.as_slice()))?,
                Pristine::None => {}
            }
        }
        // The old copy goes before the new one is made: both may not fit.
        self.pristine = Pristine::None;
        self.verifier = None;
        self.differing_chunks.clear();
        let uploaded = upload_input(
            &self.memory,
            &self.stream,
            inst,
            &input,
            &kept,
            &mut self.staging,
            progress,
        )?;
        let copies = inst.copies();
        self.pristine = keep_copy(&self.context, &self.memory, &self.stream, &input, &copies)?;
        drop(input);
        let seconds = t.elapsed().as_secs_f64();
        // What was written to the device, not what was already there: its rate is a real one.
        progress(restored(uploaded, seconds, &self.pristine));
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
        self.candidate = None;
        self.poison = None;
        self.parked.clear();
        self.active_variant = None;
        self.kernel = kernel;
        self.params = params;
        self.objects = objects;
        self.ptx = ptx;
        self.max_registers = None;
        self.recorded_globals = recorded_globals;
        self.kernel_name = kernel_name;
        self.shared_allowed = DEFAULT_DYNAMIC_SHARED;
        self.resident = next;
        // The kept read-back buffer must be zero outside the new instance's ranges (as the
        // recorded output is): cleared when they moved, dropped when the length changed.
        if self.input_len != inst.input_len {
            self.read_buffer = None;
        } else if self.copies != copies {
            if let Some(b) = self.read_buffer.as_mut() {
                b.as_mut_slice().fill(0);
            }
        }
        self.copies = copies;
        self.input_len = inst.input_len;
        self.dirty = false;
        // A switch keeps the device: said again, as a new session would, for whoever follows.
        progress(Event::Device {
            name: self.device.name.clone(),
            sm: self.device.sm,
            ordinal: self.device.ordinal,
            rated_clock_mhz: Some(self.reference_clock_mhz),
        });
        Ok(Switched {
            kept: kept.iter().map(|k| k.len as u64).sum(),
            uploaded,
            total: inst.input_len,
            seconds,
        })
    }

    /// Put the recorded input back (from the pristine copy) and the globals.
    pub fn restore(&mut self) -> std::result::Result<(), RunError> {
        if self.dirty {
            match &self.pristine {
                Pristine::Device(buf) => self.memory.restore_from(&self.stream, buf, &self.copies),
                Pristine::Host(host) => self
                    .memory
                    .upload(&self.stream, &host_slices(&self.copies, host.as_slice())),
                Pristine::None => {
                    return Err(RunError::Other(Error::invalid(
                        "this session was opened for a single launch and kept no copy of the input",
                    )))
                }
            }
            .map_err(classify)?;
            restore_side(
                &self.host,
                &self.host_copies,
                &self.objects,
                &self.side_input,
            )
            .map_err(classify)?;
            self.dirty = false;
        }
        self.apply_poison()?;
        let items: Vec<(&rr_cuda::module::Global, &[u8])> = self
            .kernel
            .globals
            .iter()
            .map(|(g, v)| (g, v.as_slice()))
            .collect();
        rr_cuda::module::Global::upload_all(&self.stream, &items).map_err(classify)
    }

    /// Overwrite the poisoned ranges with this run's poison byte, before a candidate's run (or
    /// the recorded kernel's, while poisoning is being checked); the memory is then dirty, so
    /// the next restore puts the recorded input back.
    fn apply_poison(&mut self) -> std::result::Result<(), RunError> {
        let Some((ranges, on_recorded)) = &self.poison else {
            return Ok(());
        };
        if ranges.is_empty() || !(self.candidate_bound || *on_recorded) {
            return Ok(());
        }
        let byte = super::guards::poison_byte(self.poisoned_runs);
        self.poisoned_runs = self.poisoned_runs.wrapping_add(1);
        self.dirty = true;
        self.memory
            .fill(&self.stream, ranges, byte)
            .map_err(classify)
    }

    /// Poison `ranges` (device `(address, length)`, inside the recorded ranges) before every
    /// candidate run from now on, and before the recorded kernel's runs too while
    /// `on_recorded`; `None` stops poisoning. Switching instances stops it.
    pub fn set_poison(&mut self, ranges: Option<Vec<(u64, usize)>>, on_recorded: bool) {
        self.poison = ranges.map(|r| (r, on_recorded));
    }

    /// The device's peak memory bandwidth in bytes/s (None when it reports none) and its L2
    /// cache size: what [`super::guards::plausibility`] judges a candidate's time against.
    pub fn bandwidth_bound(&self) -> (Option<f64>, u64) {
        (self.peak_bandwidth, self.l2_bytes)
    }

    /// Apply what a configuration needs before launching (the dynamic shared memory limit);
    /// a candidate whose kernel cannot take the block is refused here, before it runs.
    fn prepare(&mut self, cfg: &LaunchConfig) -> std::result::Result<(), RunError> {
        if self.candidate_bound {
            let threads: u64 = cfg.block.iter().map(|&v| v as u64).product();
            let limit = self
                .kernel
                .function
                .max_threads_per_block()
                .map_err(classify)?;
            if threads > limit as u64 {
                return Err(RunError::Other(Error::invalid(format!(
                    "the candidate's kernel takes at most {limit} threads per block (its registers \
                     or __launch_bounds__); the recorded launch has {threads}: refused, never a pass"
                ))));
            }
        }
        if cfg.shared_mem > self.shared_allowed {
            self.kernel
                .function
                .allow_dynamic_shared(cfg.shared_mem)
                .map_err(refused)?;
            self.shared_allowed = cfg.shared_mem;
        }
        Ok(())
    }

    /// Restore (and flush the L2 cache when `cold`), launch once, wait; the kernel's
    /// CUDA-event time, host time and the SM clock. The kernel is queued behind a blocking
    /// kernel with its timing events, then released: no launch latency in the timed interval.
    pub fn launch(
        &mut self,
        cfg: &LaunchConfig,
        label: &str,
        cold: bool,
    ) -> std::result::Result<Sample, RunError> {
        self.prepare(cfg)?;
        let t = Instant::now();
        self.restore()?;
        if let (true, Some(p)) = (cold, &self.probes) {
            p.flush_l2(&self.stream).map_err(classify)?;
        }
        self.stream.synchronize().map_err(classify)?;
        let restore_ns = t.elapsed().as_nanos() as f64;
        let _range = nvtx::range(label);
        let held = Held::new(self.probes.as_ref(), &self.stream).map_err(classify)?;
        self.start.record(&self.stream).map_err(classify)?;
        if let Err(e) =
            rr_cuda::launch::launch(&self.kernel.function, cfg, &self.stream, &mut self.params)
        {
            drop(held);
            if e.is_sticky() {
                return Err(RunError::Fault(e));
            }
            // The kernel did not start; prove the context survived before saying so.
            self.context.synchronize().map_err(classify)?;
            return Err(if e.is_launch_config() {
                RunError::InvalidLaunch(e)
            } else {
                RunError::Other(Error::Cuda(e))
            });
        }
        self.dirty = true;
        self.end.record(&self.stream).map_err(classify)?;
        if let Some(p) = &self.probes {
            p.probe_clock(&self.stream).map_err(classify)?;
        }
        drop(held);
        let t0 = Instant::now();
        let stream = &self.stream;
        match &self.watchdog {
            Some(w) => w.watch(|| stream.synchronize()),
            None => stream.synchronize(),
        }
        .map_err(classify)?;
        let mut host_ns = t0.elapsed().as_nanos() as f64;
        let ms = self.start.elapsed_ms(&self.end).map_err(classify)?;
        let clock_mhz = match self.probes.as_mut() {
            Some(p) => {
                let mhz = p.clock_mhz().map_err(classify)?;
                host_ns = (host_ns - p.last_probe_ns() as f64).max(0.0);
                Some(mhz)
            }
            None => None,
        };
        Ok(Sample {
            kernel_ns: ms as f64 * 1e6,
            host_ns,
            restore_ns,
            clock_mhz,
        })
    }

    /// Sample one configuration until the policy is satisfied (see [`TimingPolicy`]); each
    /// sample goes to `on_sample` with whether it was kept. Samples taken while the SM clock was
    /// below the policy's share of the device's rated clock are discarded, as nvbench does.
    pub fn measure(
        &mut self,
        cfg: &LaunchConfig,
        policy: &TimingPolicy,
        on_sample: &mut dyn FnMut(&Sample, bool),
    ) -> std::result::Result<Measurement, RunError> {
        let started = Instant::now();
        let mut m = Measurement::default();
        loop {
            let label = format!("rr-tui sample {}", m.samples.len() + m.throttled.len() + 1);
            let s = self.launch(cfg, &label, policy.cold)?;
            let throttled = policy.throttled(s.clock_mhz, self.reference_clock_mhz);
            on_sample(&s, !throttled);
            if throttled {
                m.throttled.push(s);
            } else {
                m.keep(s);
            }
            if let Some(stop) = policy.stop(&m, started.elapsed().as_secs_f64()) {
                m.stop = stop;
                break;
            }
        }
        if m.samples.is_empty() {
            // Every sample throttled until the timeout: keep them, and say so.
            for s in std::mem::take(&mut m.throttled) {
                m.keep(s);
            }
            m.all_throttled = true;
        }
        Ok(m)
    }

    /// The device's rated SM clock in MHz (what throttling is judged against).
    pub fn reference_clock_mhz(&self) -> f64 {
        self.reference_clock_mhz
    }

    /// Limit the registers per thread (`CU_JIT_MAX_REGISTERS`) by recompiling the PTX image;
    /// `None` removes the limit. Records holding a cubin cannot: their registers are fixed.
    pub fn set_max_registers(&mut self, limit: Option<u32>) -> std::result::Result<(), RunError> {
        if limit == self.max_registers {
            return Ok(());
        }
        let Some(ptx) = &self.ptx else {
            return Err(RunError::Other(Error::invalid(
                "a register limit needs a PTX image; this record holds compiled machine code (a cubin)",
            )));
        };
        let module = match limit {
            Some(r) => Module::load_with_max_registers(ptx, r),
            None => Module::load(ptx),
        }
        .map_err(refused)?;
        self.kernel = Kernel::rebind(
            &module,
            &self.kernel_name,
            &self.params,
            &self.recorded_globals,
        )?;
        self.shared_allowed = DEFAULT_DYNAMIC_SHARED;
        self.max_registers = limit;
        Ok(())
    }

    /// Bind the kernel `name` of the compiled variant at `path` (None: the recorded image) for
    /// the launches that follow. Loaded variants are kept (up to [`MAX_PARKED`]), so a sweep
    /// going back to one does not load it again.
    pub fn select_variant(
        &mut self,
        variant: Option<(&Path, &str)>,
    ) -> std::result::Result<(), RunError> {
        let want = variant.map(|(p, _)| p.to_path_buf());
        if want == self.active_variant {
            return Ok(());
        }
        let mut next = match (self.parked.remove(&want), variant) {
            (Some(k), _) => k,
            (None, Some((path, name))) => (self.load_variant(path, name)?, DEFAULT_DYNAMIC_SHARED),
            (None, None) => {
                return Err(RunError::Other(Error::invalid(
                    "the recorded kernel was not kept",
                )))
            }
        };
        self.swap_kernel(&mut next);
        let previous = std::mem::replace(&mut self.active_variant, want);
        if self.parked.len() >= MAX_PARKED {
            // Any variant but the recorded image goes: it can be loaded again.
            if let Some(k) = self.parked.keys().find(|k| k.is_some()).cloned() {
                self.parked.remove(&k);
            }
        }
        self.parked.insert(previous, next);
        Ok(())
    }

    /// Load a compiled variant's image and bind its kernel as a candidate is bound.
    fn load_variant(&self, path: &Path, name: &str) -> std::result::Result<Kernel, RunError> {
        let bytes = rr_format::fsio::read_limited(
            path,
            rr_format::fsio::MAX_IMAGE_BYTES,
            "compiled variant",
        )
        .map_err(|e| RunError::Other(e.into()))?;
        let module = Module::load(&bytes).map_err(refused)?;
        self.bind_other(&module, name, &mut Vec::new())
            .map_err(RunError::Other)
    }

    /// Bind kernel `name` of another image (a candidate, a variant): its parameters as the
    /// recorded kernel's, the recorded globals where it has them (the rest said in `notes`).
    fn bind_other(&self, module: &Module, name: &str, notes: &mut Vec<String>) -> Result<Kernel> {
        Kernel::bind_candidate(
            module,
            name,
            &self.kernel.layout,
            &self.recorded_globals,
            notes,
        )
    }

    /// Load an A/B candidate beside the recorded kernel (see [`super::ab`]); what differs in its
    /// globals comes back as notes.
    pub fn load_candidate(&mut self, c: &super::candidate::Candidate) -> Result<Vec<String>> {
        let module = Module::load(&c.image)
            .map_err(|e| e.context("loading the candidate (is it built for this GPU?)"))?;
        let mut notes = Vec::new();
        let mut kernel = self.bind_other(&module, &c.kernel, &mut notes)?;
        own_globals(
            &module,
            &c.image,
            &self.recorded_globals,
            &mut kernel,
            &mut notes,
        )?;
        self.candidate = Some((kernel, DEFAULT_DYNAMIC_SHARED));
        Ok(notes)
    }

    /// Run `f` with the candidate's kernel bound in place of the recorded one (restored after,
    /// on every path).
    pub fn with_candidate<T>(
        &mut self,
        f: impl FnOnce(&mut Session) -> std::result::Result<T, RunError>,
    ) -> std::result::Result<T, RunError> {
        let Some(mut other) = self.candidate.take() else {
            return Err(RunError::Other(Error::invalid("no candidate is loaded")));
        };
        self.swap_kernel(&mut other);
        self.candidate_bound = true;
        let out = f(self);
        self.candidate_bound = false;
        self.swap_kernel(&mut other);
        self.candidate = Some(other);
        out
    }

    fn swap_kernel(&mut self, other: &mut (Kernel, u32)) {
        std::mem::swap(&mut self.kernel, &mut other.0);
        std::mem::swap(&mut self.shared_allowed, &mut other.1);
    }

    /// The kernel's registers per thread as compiled now.
    pub fn registers(&self) -> Option<u32> {
        self.kernel.function.registers().ok()
    }

    /// Resident blocks per SM for `cfg` as compiled now (None when the driver cannot say).
    pub fn blocks_per_sm(&self, cfg: &LaunchConfig) -> Option<u32> {
        let threads = cfg.block.iter().map(|&v| v as u64).product::<u64>();
        let threads = u32::try_from(threads).ok()?;
        self.kernel
            .function
            .blocks_per_sm(threads, cfg.shared_mem)
            .ok()
    }

    /// Time with CUDA events alone: no blocking kernel ahead of each launch and no clock probe
    /// after it, so a profiler that serialises kernels (Nsight Compute) sees only the replayed
    /// kernel and nothing spins waiting for the host. Launch latency and clocks go unmeasured.
    pub fn without_probes(&mut self) {
        self.probes = None;
    }

    /// The CUDA device the session runs on.
    pub fn cuda_device(&self) -> Result<rr_cuda::driver::Device> {
        Ok(rr_cuda::driver::Device::get(self.device.ordinal)?)
    }

    /// Launch `cfg` `count` times back to back, with no restore between the launches, and
    /// record an event after them; returns once they are queued. Memory drifts from the
    /// recorded input: the next [`Session::launch`] restores it.
    pub fn enqueue(
        &mut self,
        cfg: &LaunchConfig,
        count: u32,
    ) -> std::result::Result<CudaEvent, RunError> {
        self.prepare(cfg)?;
        for _ in 0..count {
            self.dirty = true;
            rr_cuda::launch::launch(&self.kernel.function, cfg, &self.stream, &mut self.params)
                .map_err(|e| match e.is_launch_config() {
                    true => refused(e),
                    false => classify(e),
                })?;
        }
        let mark = CudaEvent::new().map_err(classify)?;
        mark.record(&self.stream).map_err(classify)?;
        Ok(mark)
    }

    /// Restore the recorded input and wait for it (before back-to-back launches).
    pub fn restore_and_wait(&mut self) -> std::result::Result<(), RunError> {
        self.restore()?;
        self.stream.synchronize().map_err(classify)
    }

    /// Whether a register limit can be applied (the record holds PTX).
    pub fn has_ptx(&self) -> bool {
        self.ptx.is_some()
    }

    /// `warmup` untimed launches, then `repetitions` measured ones, each reported to `on_rep`
    /// (1-based index) as it completes.
    pub fn run(
        &mut self,
        cfg: &LaunchConfig,
        repetitions: u32,
        warmup: u32,
        cold: bool,
        on_rep: &mut dyn FnMut(u32, Sample),
    ) -> std::result::Result<Vec<Sample>, RunError> {
        // Grown as samples come: a huge count must not reserve memory up front.
        let mut samples = Vec::with_capacity(repetitions.min(1 << 16) as usize);
        for w in 0..warmup {
            self.launch(cfg, &format!("rr-tui warmup {}", w + 1), cold)?;
        }
        for rep in 1..=repetitions {
            let s = self.launch(cfg, &format!("rr-tui rep {rep}"), cold)?;
            on_rep(rep, s);
            samples.push(s);
        }
        Ok(samples)
    }

    /// Whether the replayed memory equals the recorded output, shown without copying the device
    /// memory back ([`super::verify_device`]). `false` means "not shown": something differs,
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
        if self.verifier.is_none() {
            let input_at = match &self.pristine {
                Pristine::Device(buf) => {
                    Some(self.copies.iter().map(|c| buf.ptr() + c.1 as u64).collect())
                }
                _ => None,
            };
            self.verifier = Some(match input_at {
                Some(at) => self.device_verifier(inst, at)?,
                None => None,
            });
        }
        let Some(Some((verifier, output))) = &mut self.verifier else {
            return Ok(None);
        };
        let Some(chunks) = verifier.differing(&self.memory).ok().flatten() else {
            return Ok(None);
        };
        // Host segments and arrays are small: compared on the host.
        for &(addr, off, len) in &self.host_copies {
            let mut now = vec![0u8; len];
            self.host.read(addr, &mut now)?;
            if now != output.window(off as u64, len) {
                return Ok(None);
            }
        }
        for (array, off, len) in &self.objects.arrays {
            let mut now = vec![0u8; *len];
            array.download(&mut now)?;
            if now != output.window(*off as u64, *len) {
                return Ok(None);
            }
        }
        output.check_intact()?;
        self.differing_chunks = chunks.clone();
        Ok(Some(
            chunks
                .into_iter()
                .map(|(_, off, len)| (off as u64, len as u64))
                .collect(),
        ))
    }

    /// The replayed bytes of the chunks [`Self::differing_on_device`] found last, and
    /// [`super::verify::WIDEN`] bytes either side within their device range, at their offsets
    /// in a buffer as long as the snapshot whose other bytes are zero. The buffer is pageable
    /// and zeroed lazily by the system (only the differing chunks' pages are ever touched): a
    /// page-locked one, allocated and cleared, cost about 20 s for a 24 GiB snapshot on the H100
    /// machine, where the chunks themselves come back in milliseconds.
    pub fn read_back_differing(&self) -> std::result::Result<Vec<u8>, RunError> {
        let mut out = vec![0u8; self.input_len as usize];
        self.download_chunks(&mut out)?;
        Ok(out)
    }

    fn download_chunks(&self, out: &mut [u8]) -> std::result::Result<(), RunError> {
        for &(_, off, len) in &self.differing_chunks {
            let Some((start, end)) = super::verify::widened(&self.copies, off, len) else {
                continue;
            };
            // The widened range may reach into the chunks either side: read from each.
            for &(addr, c_off, c_len) in &self.copies {
                let (s, e) = (start.max(c_off), end.min(c_off + c_len));
                if s < e {
                    self.memory
                        .download(addr + (s - c_off) as u64, &mut out[s..e])
                        .map_err(classify)?;
                }
            }
        }
        Ok(())
    }

    /// Get ready to verify on the device while the recorded input is still in place: call
    /// before the first launch when the session keeps no device copy of the input.
    pub fn prepare_device_verification(&mut self, inst: &ReplayInstance) -> Result<()> {
        if self.verifier.is_none() && !self.dirty {
            let at = self.copies.iter().map(|c| c.0).collect();
            self.verifier = Some(self.device_verifier(inst, at)?);
        }
        Ok(())
    }

    /// The expected fingerprints, the recorded input being at `input_at` (per device range);
    /// `None` when the record cannot be verified this way.
    fn device_verifier(
        &self,
        inst: &ReplayInstance,
        input_at: Vec<u64>,
    ) -> Result<Option<(DeviceVerifier, crate::snapshot::Snapshot)>> {
        let Some(unchanged) = inst.unchanged_copies() else {
            return Ok(None);
        };
        if unchanged.len() != self.copies.len() {
            return Ok(None);
        }
        let output = open_recorded(&inst.files, &inst.descriptor, Side::Output)?;
        if output.len() != self.input_len {
            return Ok(None);
        }
        // A fingerprinter that cannot load (a driver too old for its PTX) only means the host
        // compares.
        let v = DeviceVerifier::new(&self.copies, &unchanged, &input_at, &output)
            .ok()
            .flatten();
        output.check_intact()?;
        Ok(v.map(|v| (v, output)))
    }

    /// The recorded memory as it is now on the device, laid out as the snapshot files are.
    pub fn read_back(&self) -> std::result::Result<Vec<u8>, RunError> {
        let mut out = vec![0u8; self.input_len as usize];
        self.download_into(&mut out)?;
        Ok(out)
    }

    /// The replayed memory in a page-locked buffer kept for the next call: a sweep reads back
    /// after every configuration, and pinned memory copies at full link speed without a fresh
    /// allocation each time. Bytes outside the recorded segments stay zero.
    pub fn read_back_pinned(&mut self) -> std::result::Result<&[u8], RunError> {
        let mut buf = match self.read_buffer.take() {
            Some(b) => b,
            None => {
                let mut b = PinnedBuffer::new(self.input_len as usize).map_err(classify)?;
                b.as_mut_slice().fill(0);
                b
            }
        };
        let copied = self.download_into(buf.as_mut_slice());
        let buf = self.read_buffer.insert(buf);
        copied?;
        Ok(buf.as_slice())
    }

    fn download_into(&self, out: &mut [u8]) -> std::result::Result<(), RunError> {
        for &(addr, off, len) in &self.copies {
            self.memory
                .download(addr, &mut out[off..off + len])
                .map_err(classify)?;
        }
        for &(addr, off, len) in &self.host_copies {
            self.host
                .read(addr, &mut out[off..off + len])
                .map_err(classify)?;
        }
        for (array, off, len) in &self.objects.arrays {
            array
                .download(&mut out[*off..off + len])
                .map_err(classify)?;
        }
        Ok(())
    }

    /// Benchmark aids: the largest segment copied once from pinned memory with a single
    /// synchronous call and once from pageable memory, and restored once from the device copy.
    /// Leaves the recorded input in place.
    pub fn calibrate(&mut self, inst: &ReplayInstance) -> std::result::Result<String, RunError> {
        let Some(&(addr, off, len)) = self.copies.iter().max_by_key(|c| c.2) else {
            return Ok("bytes=0".into());
        };
        let input = open_recorded(&inst.files, &inst.descriptor, Side::Input)?;
        let pinned = PinnedBuffer::copy_of(input.window(off as u64, len)).map_err(classify)?;
        input.check_intact()?;
        let pageable = pinned.as_slice().to_vec();
        let t = Instant::now();
        self.memory
            .upload_single(addr, pinned.as_slice())
            .map_err(classify)?;
        let pinned_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        self.memory
            .upload_single(addr, &pageable)
            .map_err(classify)?;
        let pageable_s = t.elapsed().as_secs_f64();
        let device_s = match &self.pristine {
            Pristine::Device(buf) => {
                let t = Instant::now();
                self.memory
                    .restore_from(&self.stream, buf, &[(addr, off, len)])
                    .map_err(classify)?;
                Some(t.elapsed().as_secs_f64())
            }
            _ => None,
        };
        // The other limit of a first restore: reading the input as a restore reads it (the same
        // threads, into the same staging buffers), without copying it to the device.
        let t = Instant::now();
        let read = rr_cuda::upload::read_through(
            &self.copies,
            &super::loading::SnapshotSource(&input),
            super::loading::threads(),
            &mut self.staging,
        )
        .map_err(|e| match e {
            UploadError::Cuda(e) => classify(e),
            UploadError::Source(e) => RunError::from(e),
        })?;
        let read_s = t.elapsed().as_secs_f64();
        // The whole restore again, the same way as the first: a first restore much slower than
        // this one pays a one-time cost (cold page cache, first use of the device memory).
        let t = Instant::now();
        self.memory
            .upload_streamed(
                &self.stream,
                &self.copies,
                &super::loading::SnapshotSource(&input),
                super::loading::threads(),
                &mut self.staging,
                &mut |_| {},
            )
            .map_err(|e| match e {
                UploadError::Cuda(e) => classify(e),
                UploadError::Source(e) => RunError::from(e),
            })?;
        let again_s = t.elapsed().as_secs_f64();
        let gbps = |s: f64| len as f64 / s / 1e9;
        Ok(format!(
            "bytes={len} pinned_single_copy_gbps={:.2} pageable_copy_gbps={:.2} pageable_s={:.6} device_restore_s={} read_bytes={read} input_read_gbps={:.2} restore_again_gbps={:.2}",
            gbps(pinned_s),
            gbps(pageable_s),
            pageable_s,
            device_s.map(|d| format!("{d:.6}")).unwrap_or_else(|| "none".into()),
            read as f64 / read_s / 1e9,
            read as f64 / again_s / 1e9
        ))
    }

    pub fn input_len(&self) -> u64 {
        self.input_len
    }

    /// Device memory `(free, total)`.
    pub fn mem_info(&self) -> rr_cuda::Result<(usize, usize)> {
        self.context.mem_info()
    }
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

/// The parts of a session that come from its instance's descriptor and image.
struct Bound {
    params: Params,
    objects: ReplayObjects,
    kernel: Kernel,
    /// The image, kept when it is PTX (a register limit recompiles it).
    ptx: Option<Vec<u8>>,
    recorded_globals: Globals,
    kernel_name: String,
}

/// Load `inst`'s image on `device` and bind its kernel, parameters, objects and globals.
fn bind_instance(
    inst: &ReplayInstance,
    device: &DeviceInfo,
    progress: &mut dyn FnMut(Event),
) -> Result<Bound> {
    let d = &inst.descriptor;
    let (image_bytes, image_info) = image::read(&inst.image)?;
    if let ImageKind::Cubin { sm: image_sm, .. } = image_info.kind {
        if !image::sm_compatible(image_sm, device.sm) {
            return Err(Error::format(
                &inst.image,
                format!(
                    "the image is for sm_{image_sm} but {} is sm_{}; a cubin runs only on its own major architecture \
                     (re-record on this GPU, or record PTX)",
                    device.name, device.sm
                ),
            ));
        }
    }
    progress(Event::Phase {
        name: "load".into(),
        detail: format!(
            "{} ({})",
            visible(&inst.image.to_string_lossy()),
            image_info.kind.describe()
        ),
    });
    let module = Module::load(&image_bytes).map_err(|e| {
        e.context(format!(
            "loading the device image {}",
            visible(&inst.image.to_string_lossy())
        ))
    })?;
    let (buf, slots) = launch::parameters(d);
    let json = inst.files.json();
    let mut params = Params::new(buf, slots).map_err(|m| Error::format(&json, m))?;
    let objects = objects::create(inst, &mut params)?;
    for note in &objects.notes {
        progress(Event::Phase {
            name: "note".into(),
            detail: note.clone(),
        });
    }
    let recorded_globals = inst.globals.clone();
    let kernel = Kernel::bind(&module, &d.name, &params, &recorded_globals, inst)?;
    Ok(Bound {
        params,
        objects,
        kernel,
        ptx: matches!(image_info.kind, ImageKind::Ptx { .. }).then_some(image_bytes),
        recorded_globals,
        kernel_name: d.name.clone(),
    })
}

/// The recorded input of `inst`, opened and checked against the size the instance was
/// planned with.
/// What a kernel that never ends may be waiting for: the host memory it was recorded with
/// (nothing in a replay changes it while the kernel runs).
fn waits_on(inst: &ReplayInstance) -> String {
    let host: Vec<String> = inst
        .segments
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == rr_format::objects::SegmentKind::Host)
        .map(|(i, s)| format!("segment {i}: {} B at {:#x}", s.size, s.addr))
        .take(4)
        .collect();
    if host.is_empty() {
        return String::new();
    }
    format!(
        ": it may be waiting for host memory it reads ({}) that the recorded program changed while it ran; nothing changes it during a replay",
        host.join(", ")
    )
}

fn read_input(inst: &ReplayInstance, progress: &mut dyn FnMut(Event)) -> Result<Snapshot> {
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
fn resident_of(inst: &ReplayInstance) -> Vec<Resident> {
    super::loading::resident(&inst.copies(), inst.copy_inputs().as_deref())
}

/// Put `inst`'s device ranges in place from `input` (read by several threads, with progress),
/// except those `on_device` already holds; returns the bytes read and uploaded.
fn upload_input(
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
    let (upload, within) = super::loading::dedupe(&copies, inputs.as_deref(), on_device);
    let total = upload.iter().map(|c| c.2 as u64).sum();
    let mut loading = super::loading::Loading::new(total, progress);
    memory
        .upload_streamed(
            stream,
            &upload,
            &super::loading::SnapshotSource(input),
            super::loading::threads(),
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
fn keep_copy(
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
fn restored(bytes: u64, seconds: f64, pristine: &Pristine) -> Event {
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

/// Put the recorded input of host segments and CUDA arrays back (no kernel is running).
fn restore_side(
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
fn host_slices<'a>(copies: &[(u64, usize, usize)], host: &'a [u8]) -> Vec<(u64, &'a [u8])> {
    copies
        .iter()
        .map(|&(addr, off, len)| (addr, &host[off..off + len]))
        .collect()
}

/// The loaded kernel: its function (parameters checked against the record) and its globals.
struct Kernel {
    function: rr_cuda::Function,
    globals: Vec<(rr_cuda::module::Global, Vec<u8>)>,
    /// `(offset, size)` of each parameter, as the image declares them.
    layout: Vec<(usize, usize)>,
}

impl Kernel {
    fn bind(
        module: &Module,
        name: &str,
        params: &Params,
        recorded: &Globals,
        inst: &ReplayInstance,
    ) -> Result<Kernel> {
        let function = module.function(name).map_err(|e| {
            e.context(format!(
                "kernel {} not found in {}",
                visible(name),
                visible(&inst.image.to_string_lossy())
            ))
        })?;
        let layout = function.param_layout()?;
        params
            .check_against(&layout)
            .map_err(|m| Error::format(inst.files.json(), m))?;
        let globals_path = inst.files.globals();
        let mut globals = Vec::with_capacity(recorded.entries.len());
        for g in &recorded.entries {
            let target = module.global(&g.name).map_err(|e| {
                e.context(format!("global {} is not in the image", visible(&g.name)))
            })?;
            if target.size as u64 != g.size {
                return Err(Error::format(
                    &globals_path,
                    format!(
                        "global {} is {} bytes but the image's is {}",
                        visible(&g.name),
                        g.size,
                        target.size
                    ),
                ));
            }
            globals.push((target, recorded.data(g).to_vec()));
        }
        Ok(Kernel {
            function,
            globals,
            layout,
        })
    }

    /// Bind again after a recompilation (the record was checked when the session opened).
    fn rebind(
        module: &Module,
        name: &str,
        params: &Params,
        recorded: &Globals,
    ) -> std::result::Result<Kernel, RunError> {
        let function = module.function(name).map_err(classify)?;
        let layout = function.param_layout().map_err(classify)?;
        params
            .check_against(&layout)
            .map_err(|m| RunError::Other(Error::invalid(m)))?;
        let mut globals = Vec::with_capacity(recorded.entries.len());
        for g in &recorded.entries {
            let target = module.global(&g.name).map_err(classify)?;
            globals.push((target, recorded.data(g).to_vec()));
        }
        Ok(Kernel {
            function,
            globals,
            layout,
        })
    }

    /// Bind an A/B candidate's kernel: its parameters must be laid out exactly as the recorded
    /// kernel's (`recorded_layout`); its globals of the recorded names and sizes get the recorded
    /// values, and the others are said in the notes.
    fn bind_candidate(
        module: &Module,
        name: &str,
        recorded_layout: &[(usize, usize)],
        recorded: &Globals,
        notes: &mut Vec<String>,
    ) -> Result<Kernel> {
        let function = module.function(name).map_err(|e| {
            e.context(format!(
                "kernel {} not found in the candidate",
                visible(name)
            ))
        })?;
        let layout = function.param_layout()?;
        if layout != recorded_layout {
            return Err(Error::invalid(format!(
                "the candidate's parameters differ from the recorded kernel's (offset:size): recorded {}, candidate {}",
                rr_cuda::launch::describe_layout(recorded_layout),
                rr_cuda::launch::describe_layout(&layout)
            )));
        }
        let mut globals = Vec::with_capacity(recorded.entries.len());
        for g in &recorded.entries {
            match module.global(&g.name) {
                Ok(target) if target.size as u64 == g.size => {
                    globals.push((target, recorded.data(g).to_vec()))
                }
                Ok(target) => notes.push(format!(
                    "global {} is {} bytes in the candidate, {} recorded: left as the candidate initialises it",
                    visible(&g.name),
                    target.size,
                    g.size
                )),
                Err(_) => notes.push(format!(
                    "global {} is not in the candidate: its recorded value is not used",
                    visible(&g.name)
                )),
            }
        }
        Ok(Kernel {
            function,
            globals,
            layout,
        })
    }
}

/// Add the candidate's own globals (those its image defines beyond the recorded names) to what
/// is put back before every run, at their values as loaded: a result cached in a `static
/// __device__` variable by one run is gone for the next ([`super::guards`]). At most
/// [`super::guards::MAX_OWN_GLOBAL_BYTES`] in all; what is left out is said in `notes`.
fn own_globals(
    module: &Module,
    image: &[u8],
    recorded: &Globals,
    kernel: &mut Kernel,
    notes: &mut Vec<String>,
) -> Result<()> {
    let names = super::guards::image_globals(image);
    let mut budget = super::guards::MAX_OWN_GLOBAL_BYTES;
    let mut reset = 0;
    // Those of the recorded names already get the recorded values.
    let names = names
        .into_iter()
        .filter(|n| !recorded.entries.iter().any(|g| &g.name == n));
    for name in names {
        // A symbol the driver does not give (shared memory, a local) is no global to reset.
        let Ok(g) = module.global(&name) else {
            continue;
        };
        // Nothing to put back in an empty one (an extern array), nor twice in one.
        if g.size == 0 || kernel.globals.iter().any(|(k, _)| k.ptr == g.ptr) {
            continue;
        }
        if g.size as u64 > budget {
            notes.push(format!(
                "global {} of the candidate ({} bytes) is not reset between runs: over the {} MiB reset at most",
                visible(&name),
                g.size,
                super::guards::MAX_OWN_GLOBAL_BYTES >> 20
            ));
            continue;
        }
        budget -= g.size as u64;
        let value = g.download()?;
        kernel.globals.push((g, value));
        reset += 1;
    }
    if reset > 0 {
        notes.push(format!(
            "{reset} global(s) of the candidate's own are put back to their loaded values before every run"
        ));
    }
    if matches!(
        rr_format::image::identify(image, Path::new("candidate")).map(|i| i.kind),
        Ok(ImageKind::Fatbin)
    ) {
        notes.push(
            "a fatbin lists no globals without the driver: only those of the recorded names are reset between runs".into(),
        );
    }
    Ok(())
}

/// The blocking kernel holding the stream: released when dropped, on every path (a held
/// stream would otherwise wait for the kernel's timeout).
struct Held<'a>(Option<&'a Probes>);

impl<'a> Held<'a> {
    fn new(probes: Option<&'a Probes>, stream: &Stream) -> rr_cuda::Result<Held<'a>> {
        if let Some(p) = probes {
            p.hold(stream)?;
        }
        Ok(Held(probes))
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.0 {
            p.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Switched;

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
