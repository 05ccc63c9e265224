//! Opening a session: the device and its context, memory mapped at the recorded addresses, the
//! instance's image bound, the recorded input put in place (and a pristine copy kept), the
//! timing probes and the watchdog; each a step below, in the order the driver sees them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rr_cuda::timing::Probes;
use rr_cuda::upload::StagingPool;
use rr_cuda::{
    Context, Device, Event as CudaEvent, ExactMemory, HostMemory, Placeholders, ReserveError,
    Stream,
};

use super::input::{keep_copy, read_input, resident_of, restored, upload_input};
use super::kernel::{bind_instance, Bound};
use super::parts::{Guards, InstanceMemory, Kernels, RecordedInput, Timer};
use super::restore::restore_side;
use super::verification::DeviceVerification;
use super::{DeviceInfo, Pristine, Session, DEFAULT_DYNAMIC_SHARED};
use crate::error::{Error, Result};
use crate::replay::instance::ReplayInstance;
use crate::replay::load_threads::threads;
use crate::replay::loading::Resident;
use crate::replay::objects::ReplayObjects;
use crate::replay::protocol::Event;
use crate::replay::watchdog::Watchdog;

impl Session {
    /// Prepare `inst` on device `device_id`. `placeholders` (taken at process start over the
    /// ranges to reserve) are released right before the driver initialises. With
    /// `keep_pristine`, a copy of the input is kept so any number of launches can follow.
    ///
    /// With `kernel_timeout`, a kernel still running after that long ends the process with a
    /// message ([`crate::replay::watchdog`]).
    pub fn open(
        inst: &ReplayInstance,
        device_id: i32,
        keep_pristine: bool,
        placeholders: &mut Placeholders,
        kernel_timeout: Option<Duration>,
        progress: &mut dyn FnMut(Event),
    ) -> Result<Session> {
        placeholders.release_all();
        let (device, info) = open_device(inst, device_id, progress)?;
        let context = Context::retain(&device)?;

        // 1. Memory at the recorded addresses, before anything else allocates device VA.
        let (memory, host_mem) = map_memory(inst, device_id, placeholders, progress)?;

        // 2. Module, kernel, parameters, globals.
        let bound = bind_instance(inst, &info, progress)?;
        let stream = Stream::new()?;

        // 3. Recorded input into pinned host memory, then onto the device.
        let targets = Targets {
            context: &context,
            memory: &memory,
            host: &host_mem,
            stream: &stream,
            objects: &bound.objects,
        };
        let FirstLoad {
            copies,
            host_copies,
            side_input,
            staging,
            resident,
            pristine,
        } = first_load(inst, &targets, keep_pristine, progress)?;
        let probes = timing_probes(&device, progress)?;
        let watchdog = kernel_timeout.map(|limit| start_watchdog(inst, limit));
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
            timer: Timer {
                start: CudaEvent::new()?,
                end: CudaEvent::new()?,
                probes,
                reference_clock_mhz: device.clock_khz()? as f64 / 1e3,
            },
            input: RecordedInput {
                pristine,
                staging,
                copies,
                host_copies,
                side_input,
                input_len: inst.input_len,
                dirty: false,
            },
            kernels: Kernels {
                kernel,
                candidate: None,
                candidate_module: None,
                candidate_bound: false,
                active_variant: None,
                parked: HashMap::new(),
                ptx,
                max_registers: None,
                recorded_globals,
                kernel_name,
                shared_allowed: DEFAULT_DYNAMIC_SHARED,
            },
            guards: Guards {
                poison: None,
                // A phase no candidate can know in advance: where the poison sequence starts.
                poisoned_runs: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos() as u64),
                peak_bandwidth: device.peak_memory_bandwidth().ok().flatten(),
                l2_bytes: device.l2_cache_bytes()? as u64,
            },
            read_buffer: None,
            instance: InstanceMemory {
                params,
                objects,
                host: host_mem,
                memory,
                plan: inst.plan.clone(),
                resident,
            },
            stream,
            verification: DeviceVerification::default(),
            context,
        })
    }
}

/// The driver loaded, device `device_id` found and said (the `device` event), and checked: its
/// memory can hold `inst`'s and it supports virtual memory management.
fn open_device(
    inst: &ReplayInstance,
    device_id: i32,
    progress: &mut dyn FnMut(Event),
) -> Result<(Device, DeviceInfo)> {
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
    Ok((device, info))
}

/// Reserve and map `inst`'s device memory, then its page-locked host memory (over the
/// `placeholders` released before), at their recorded addresses.
fn map_memory(
    inst: &ReplayInstance,
    device_id: i32,
    placeholders: &mut Placeholders,
    progress: &mut dyn FnMut(Event),
) -> Result<(ExactMemory, HostMemory)> {
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
    Ok((memory, host_mem))
}

/// Where the first load puts the recorded input: the device memory (through `stream`), the
/// host memory and the CUDA arrays among `objects`; and the context, asked whether a pristine
/// copy fits on the device.
struct Targets<'a> {
    context: &'a Context,
    memory: &'a ExactMemory,
    host: &'a HostMemory,
    stream: &'a Stream,
    objects: &'a ReplayObjects,
}

/// What the session keeps of the first load of the recorded input.
struct FirstLoad {
    copies: Vec<(u64, usize, usize)>,
    host_copies: Vec<(u64, usize, usize)>,
    side_input: Vec<(usize, Vec<u8>)>,
    staging: StagingPool,
    resident: Vec<Resident>,
    pristine: Pristine,
}

/// Put `inst`'s recorded input in place for the first time (timed, and said as the `restore`
/// event), keeping a pristine copy when `keep_pristine`.
fn first_load(
    inst: &ReplayInstance,
    to: &Targets,
    keep_pristine: bool,
    progress: &mut dyn FnMut(Event),
) -> Result<FirstLoad> {
    let input = read_input(inst, progress)?;
    let copies = inst.copies();
    let host_copies = inst.host_copies();
    let bytes = input.bytes();
    let side_input: Vec<(usize, Vec<u8>)> = host_copies
        .iter()
        .map(|&(_, off, len)| (off, len))
        .chain(to.objects.arrays.iter().map(|&(_, off, len)| (off, len)))
        .map(|(off, len)| (off, bytes[off..off + len].to_vec()))
        .collect();
    // Page-locking is slow: the buffers are made before the restore is timed.
    let mut staging = StagingPool::default();
    staging
        .ensure(StagingPool::wanted(inst.input_len, threads()))
        .map_err(Error::Cuda)?;
    let t = Instant::now();
    let resident = resident_of(inst);
    upload_input(
        to.memory,
        to.stream,
        inst,
        &input,
        &[],
        &mut staging,
        progress,
    )?;
    let first_restore = t.elapsed().as_secs_f64();
    restore_side(to.host, &host_copies, to.objects, &side_input)?;
    let pristine = if keep_pristine {
        keep_copy(to.context, to.memory, to.stream, &input, &copies)?
    } else {
        Pristine::None
    };
    drop(input);
    progress(restored(inst.input_len, first_restore, &pristine));
    Ok(FirstLoad {
        copies,
        host_copies,
        side_input,
        staging,
        resident,
        pristine,
    })
}

/// The timing probes. They are PTX compiled by the driver; without them timing falls back to
/// plain events (said once, as a phase).
fn timing_probes(device: &Device, progress: &mut dyn FnMut(Event)) -> Result<Option<Probes>> {
    let probes = match Probes::new(device.l2_cache_bytes()?) {
        Ok(p) => Some(p),
        Err(e) => {
            progress(Event::Phase {
                name: "warning".into(),
                detail: format!(
                    "timing probes unavailable ({e}): launch latency and clocks are not measured"
                ),
            });
            None
        }
    };
    Ok(probes)
}

/// The watchdog that ends the process when `inst`'s kernel runs longer than `limit`.
fn start_watchdog(inst: &ReplayInstance, limit: Duration) -> Watchdog {
    let kernel = rr_format::text::visible(&rr_format::demangle(&inst.descriptor.name)).into_owned();
    Watchdog::start(limit, kernel, waits_on(inst))
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
