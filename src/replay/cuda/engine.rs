//! Replay one instance on the GPU: context, exact-address memory, module and globals, restore,
//! timed repetitions, read-back, verification. Emits protocol events as it goes.

use cudarc::driver::sys;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::time::Instant;

use super::staging;
use super::vmm::{self, DeviceMemory, Placeholders};
use super::{check, describe};
use crate::diff::Comparison;
use crate::error::{Error, Result};
use crate::record::globals::Globals;
use crate::record::image::{self, ImageKind};
use crate::record::memory::MemoryMap;
use crate::record::{Descriptor, InstanceFiles, Segment};
use crate::replay::launch::{self, Launch};
use crate::replay::plan::Plan;
use crate::replay::protocol::Event;
use crate::replay::stats::Stats;
use crate::replay::verify;

/// Copies between host and device go in pieces this large, so copies overlap their issue.
const COPY_CHUNK: usize = 64 << 20;
/// Device memory left free when deciding whether a pristine device-side copy fits.
const PRISTINE_MARGIN: usize = 512 << 20;

pub struct Request<'a> {
    pub files: &'a InstanceFiles,
    pub descriptor: &'a Descriptor,
    pub launch: &'a Launch,
    pub plan: &'a Plan,
    pub segments: &'a [Segment],
    pub input_len: u64,
    pub repetitions: u32,
    pub warmup: u32,
    /// `Some(None)`: byte verification; `Some(Some(c))`: typed with tolerance.
    pub verify: Option<Option<Comparison>>,
    pub save_output: Option<PathBuf>,
    /// Also measure a single pinned copy and a pageable copy of the same bytes (benchmarks).
    pub calibrate: bool,
}

struct Context {
    stream: sys::CUstream,
    module: sys::CUmodule,
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: both handles were created by us; errors after a fault are irrelevant.
        unsafe {
            if !self.module.is_null() {
                sys::cuModuleUnload(self.module);
            }
            if !self.stream.is_null() {
                sys::cuStreamDestroy_v2(self.stream);
            }
        }
    }
}

struct CudaEvent(sys::CUevent);
impl CudaEvent {
    fn new() -> Result<CudaEvent> {
        let mut e = std::ptr::null_mut();
        // SAFETY: creates a timing-enabled event (flags 0 = CU_EVENT_DEFAULT).
        check(unsafe { sys::cuEventCreate(&mut e, 0) }, || {
            "cuEventCreate".into()
        })?;
        Ok(CudaEvent(e))
    }
}
impl Drop for CudaEvent {
    fn drop(&mut self) {
        // SAFETY: destroys the event we created.
        unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}

struct DeviceBuffer(sys::CUdeviceptr);
impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: frees memory from cuMemAlloc, once.
        unsafe { sys::cuMemFree_v2(self.0) };
    }
}

fn attr(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> i32 {
    let mut v = 0;
    // SAFETY: writes one integer.
    unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) };
    v
}

/// Copy host bytes to device ranges, chunked and asynchronous on `stream`, then wait.
fn copy_to_device(stream: sys::CUstream, host: &[u8], segments: &[Segment]) -> Result<()> {
    for s in segments {
        let src = &host[s.offset as usize..(s.offset + s.size) as usize];
        for (i, chunk) in src.chunks(COPY_CHUNK).enumerate() {
            let dst = s.addr + (i * COPY_CHUNK) as u64;
            // SAFETY: `dst..dst+len` lies in a mapped segment; `chunk` is pinned (or pageable,
            // which the driver stages) host memory that outlives the synchronize below.
            check(
                unsafe {
                    sys::cuMemcpyHtoDAsync_v2(
                        dst,
                        chunk.as_ptr() as *const c_void,
                        chunk.len(),
                        stream,
                    )
                },
                || format!("copy to {dst:#x}"),
            )?;
        }
    }
    // SAFETY: waits for the copies above.
    check(unsafe { sys::cuStreamSynchronize(stream) }, || {
        "restoring recorded memory".into()
    })
}

fn copy_device_to_device(stream: sys::CUstream, pairs: &[(u64, u64, usize)]) -> Result<()> {
    for &(dst, src, len) in pairs {
        // SAFETY: both ranges are device memory we own (mapped segments and the pristine copy).
        check(
            unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, len, stream) },
            || format!("device copy to {dst:#x}"),
        )?;
    }
    // SAFETY: waits for the copies above.
    check(unsafe { sys::cuStreamSynchronize(stream) }, || {
        "restoring from the pristine copy".into()
    })
}

fn read_back(segments: &[Segment], len: u64) -> Result<Vec<u8>> {
    let mut out = vec![0u8; len as usize];
    for s in segments {
        let dst = &mut out[s.offset as usize..(s.offset + s.size) as usize];
        // SAFETY: reads `s.size` bytes from a mapped segment into a host buffer of that size.
        check(
            unsafe { sys::cuMemcpyDtoH_v2(dst.as_mut_ptr() as *mut c_void, s.addr, dst.len()) },
            || format!("reading back {:#x}", s.addr),
        )?;
    }
    Ok(out)
}

pub fn run(
    req: &Request,
    placeholders: &mut Placeholders,
    sink: &mut dyn FnMut(Event),
) -> Result<bool> {
    if !super::driver_present() {
        return Err(super::no_driver_error());
    }
    let d = req.descriptor;
    let l = req.launch;
    placeholders.release_all();
    // SAFETY: cuInit is the documented first call; flags must be 0.
    check(unsafe { sys::cuInit(0) }, || {
        "cuInit (is a GPU visible to this process?)".into()
    })?;
    let mut count = 0;
    // SAFETY: writes one integer.
    check(unsafe { sys::cuDeviceGetCount(&mut count) }, || {
        "cuDeviceGetCount".into()
    })?;
    if l.device_id < 0 || l.device_id >= count {
        return Err(Error::Invalid(format!(
            "device {} does not exist: this machine has {count} CUDA device(s) (use --device-id)",
            l.device_id
        )));
    }
    let mut dev = 0;
    // SAFETY: valid ordinal checked above.
    check(unsafe { sys::cuDeviceGet(&mut dev, l.device_id) }, || {
        "cuDeviceGet".into()
    })?;
    let mut name = [0 as std::ffi::c_char; 128];
    // SAFETY: the buffer is 128 bytes and the driver NUL-terminates within it.
    unsafe { sys::cuDeviceGetName(name.as_mut_ptr(), 128, dev) };
    // SAFETY: NUL-terminated by the driver (zero-initialised otherwise).
    let dev_name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let sm = (attr(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
    ) * 10
        + attr(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        )) as u32;
    sink(Event::Start {
        kernel: d.name.clone(),
        device: dev_name.clone(),
        sm,
        grid: l.grid,
        block: l.block,
        shared_mem: l.shared_mem,
        repetitions: req.repetitions,
        warmup: req.warmup,
    });
    if attr(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    ) == 0
    {
        return Err(Error::Cuda(format!("{dev_name} does not support virtual memory management: exact-address replay is impossible")));
    }
    let mut ctx = std::ptr::null_mut();
    // SAFETY: retains the device's primary context (released at process exit).
    check(
        unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) },
        || "cuDevicePrimaryCtxRetain".into(),
    )?;
    // SAFETY: makes the retained context current on this thread.
    check(unsafe { sys::cuCtxSetCurrent(ctx) }, || {
        "cuCtxSetCurrent".into()
    })?;

    // 1. Memory at the recorded addresses, before anything else allocates device VA.
    sink(Event::Phase {
        name: "reserve".into(),
        detail: format!(
            "{} reservation(s), {} bytes mapped",
            req.plan.reservations.len(),
            req.plan.mapped_bytes()
        ),
    });
    let _memory = DeviceMemory::reserve_and_map(req.plan, l.device_id)?;

    // 2. Module, kernel, globals.
    let image_path = req.files.image(d);
    let (mut image_bytes, info) = image::read(&image_path)?;
    if let ImageKind::Cubin { sm: image_sm, .. } = info.kind {
        if !image::sm_compatible(image_sm, sm) {
            return Err(Error::Cuda(format!(
                "{}: the image is for sm_{image_sm} but {dev_name} is sm_{sm}; a cubin runs only on its own major architecture \
                 (re-record on this GPU, or record PTX)",
                image_path.display()
            )));
        }
    }
    if matches!(info.kind, ImageKind::Ptx { .. }) {
        image_bytes.push(0);
    }
    let mut cx = Context {
        stream: std::ptr::null_mut(),
        module: std::ptr::null_mut(),
    };
    sink(Event::Phase {
        name: "load".into(),
        detail: format!("{} ({})", image_path.display(), info.kind.describe()),
    });
    // SAFETY: the image bytes are a complete cubin/fatbin/NUL-terminated PTX that outlive the call.
    check(
        unsafe { sys::cuModuleLoadData(&mut cx.module, image_bytes.as_ptr() as *const c_void) },
        || format!("{}: loading the device image", image_path.display()),
    )?;
    let cname = CString::new(d.name.clone())
        .map_err(|_| Error::format(req.files.json(), "kernel name contains NUL"))?;
    let mut func = std::ptr::null_mut();
    // SAFETY: module loaded above; name is NUL-terminated.
    check(
        unsafe { sys::cuModuleGetFunction(&mut func, cx.module, cname.as_ptr()) },
        || format!("kernel {} not found in {}", d.name, image_path.display()),
    )?;
    if l.shared_mem >= 48 * 1024 {
        // SAFETY: sets a launch attribute on a valid function.
        check(
            unsafe {
                sys::cuFuncSetAttribute(
                    func,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    l.shared_mem as i32,
                )
            },
            || {
                format!(
                    "raising the dynamic shared memory limit to {} bytes",
                    l.shared_mem
                )
            },
        )?;
    }
    let globals = Globals::read(&req.files.globals())?;
    let mut global_targets = Vec::new();
    for g in &globals.entries {
        let gname = CString::new(g.name.clone())
            .map_err(|_| Error::format(req.files.globals(), "global name contains NUL"))?;
        let (mut ptr, mut size) = (0u64, 0usize);
        // SAFETY: module is loaded; writes an address and a size.
        check(
            unsafe { sys::cuModuleGetGlobal_v2(&mut ptr, &mut size, cx.module, gname.as_ptr()) },
            || format!("global {} is not in the image", g.name),
        )?;
        if size as u64 != g.size {
            return Err(Error::format(
                req.files.globals(),
                format!(
                    "global {} is {} bytes but the image's is {size}",
                    g.name, g.size
                ),
            ));
        }
        global_targets.push((ptr, globals.data(g)));
    }
    // SAFETY: creates a non-blocking stream.
    check(
        unsafe {
            sys::cuStreamCreate(
                &mut cx.stream,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            )
        },
        || "cuStreamCreate".into(),
    )?;
    let restore_globals = |stream: sys::CUstream| -> Result<()> {
        for (ptr, data) in &global_targets {
            // SAFETY: `ptr` is the global's device address, `data` exactly its size.
            check(
                unsafe {
                    sys::cuMemcpyHtoDAsync_v2(
                        *ptr,
                        data.as_ptr() as *const c_void,
                        data.len(),
                        stream,
                    )
                },
                || "restoring globals".into(),
            )?;
        }
        Ok(())
    };

    // 3. Recorded input into pinned host memory, then onto the device.
    sink(Event::Phase {
        name: "read".into(),
        detail: format!(
            "{} ({} bytes)",
            req.files.record_input().display(),
            req.input_len
        ),
    });
    let host = staging::load(&req.files.record_input(), req.input_len)?;
    let t = Instant::now();
    copy_to_device(cx.stream, host.as_slice(), req.segments)?;
    let first_restore = t.elapsed().as_secs_f64();
    let total_reps = req.repetitions + req.warmup;
    let (free, _) = vmm::mem_info();
    let pristine =
        if total_reps > 1 && req.input_len > 0 && free > req.input_len as usize + PRISTINE_MARGIN {
            let mut p = 0u64;
            // SAFETY: plain allocation; freed by DeviceBuffer's Drop.
            check(
                unsafe { sys::cuMemAlloc_v2(&mut p, req.input_len as usize) },
                || "allocating the pristine copy".into(),
            )?;
            let buf = DeviceBuffer(p);
            let pairs: Vec<_> = req
                .segments
                .iter()
                .map(|s| (p + s.offset, s.addr, s.size as usize))
                .collect();
            copy_device_to_device(cx.stream, &pairs)?;
            Some(buf)
        } else {
            None
        };
    sink(Event::Restore {
        bytes: req.input_len,
        seconds: first_restore,
        gb_per_s: if first_restore > 0.0 {
            req.input_len as f64 / first_restore / 1e9
        } else {
            0.0
        },
        between_reps: if pristine.is_some() { "device" } else { "host" }.into(),
    });
    if req.calibrate && req.input_len > 0 {
        calibrate(
            &cx,
            host.as_slice(),
            req.segments,
            pristine.as_ref().map(|p| p.0),
            sink,
        )?;
    }

    // 4. Repetitions.
    let (mut param_buf, offsets) = launch::parameters(d);
    let base = param_buf.as_mut_ptr();
    // SAFETY: offsets come from the recorded layout, which the descriptor parser bounds-checked.
    let mut params: Vec<*mut c_void> = offsets
        .iter()
        .map(|&o| unsafe { base.add(o) } as *mut c_void)
        .collect();
    let (start, end) = (CudaEvent::new()?, CudaEvent::new()?);
    let mut attrs: Vec<sys::CUlaunchAttribute> = Vec::new();
    if let Some(c) = l.cluster_dim {
        // SAFETY: zeroed attribute, then the union member matching the id is written.
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a.value.clusterDim.x = c[0];
        a.value.clusterDim.y = c[1];
        a.value.clusterDim.z = c[2];
        attrs.push(a);
    }
    if l.cooperative {
        // SAFETY: as above.
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        a.value.cooperative = 1;
        attrs.push(a);
    }
    let (mut kernel_ns, mut host_ns, mut restore_ns) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..total_reps {
        let t = Instant::now();
        if rep > 0 {
            match &pristine {
                Some(p) => copy_device_to_device(
                    cx.stream,
                    &req.segments
                        .iter()
                        .map(|s| (s.addr, p.0 + s.offset, s.size as usize))
                        .collect::<Vec<_>>(),
                )?,
                None => copy_to_device(cx.stream, host.as_slice(), req.segments)?,
            }
        }
        restore_globals(cx.stream)?;
        // SAFETY: waits for the restores; nothing of them is timed below.
        check(unsafe { sys::cuStreamSynchronize(cx.stream) }, || {
            "restoring".into()
        })?;
        let restore = t.elapsed().as_nanos() as f64;
        let measured = rep >= req.warmup;
        let label = if measured {
            format!("rr-tui rep {}", rep - req.warmup + 1)
        } else {
            format!("rr-tui warmup {}", rep + 1)
        };
        let _range = super::range(&label);
        let t0 = Instant::now();
        // SAFETY: events and stream are ours; `params` points into `param_buf`, which lives
        // until after the synchronize; geometry was validated by `launch::resolve`.
        let res = unsafe {
            sys::cuEventRecord(start.0, cx.stream);
            let r = if attrs.is_empty() {
                sys::cuLaunchKernel(
                    func,
                    l.grid[0],
                    l.grid[1],
                    l.grid[2],
                    l.block[0],
                    l.block[1],
                    l.block[2],
                    l.shared_mem,
                    cx.stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            } else {
                let cfg = sys::CUlaunchConfig {
                    gridDimX: l.grid[0],
                    gridDimY: l.grid[1],
                    gridDimZ: l.grid[2],
                    blockDimX: l.block[0],
                    blockDimY: l.block[1],
                    blockDimZ: l.block[2],
                    sharedMemBytes: l.shared_mem,
                    hStream: cx.stream,
                    attrs: attrs.as_mut_ptr(),
                    numAttrs: attrs.len() as u32,
                };
                sys::cuLaunchKernelEx(&cfg, func, params.as_mut_ptr(), std::ptr::null_mut())
            };
            if r == sys::CUresult::CUDA_SUCCESS {
                sys::cuEventRecord(end.0, cx.stream);
                sys::cuStreamSynchronize(cx.stream)
            } else {
                r
            }
        };
        let host_elapsed = t0.elapsed().as_nanos() as f64;
        if res != sys::CUresult::CUDA_SUCCESS {
            return Err(Error::Cuda(format!(
                "the kernel failed in {}: {}; a faulting kernel leaves the CUDA context unusable, so this replay stops here",
                label.trim_start_matches("rr-tui "),
                describe(res)
            )));
        }
        let mut ms = 0f32;
        // SAFETY: both events completed (the stream was synchronized).
        check(
            unsafe { sys::cuEventElapsedTime_v2(&mut ms, start.0, end.0) },
            || "cuEventElapsedTime".into(),
        )?;
        if measured {
            let k = ms as f64 * 1e6;
            kernel_ns.push(k);
            host_ns.push(host_elapsed);
            restore_ns.push(restore);
            sink(Event::Rep {
                index: rep - req.warmup + 1,
                kernel_ns: k,
                host_ns: host_elapsed,
                restore_ns: restore,
            });
        }
    }
    sink(Event::Summary {
        kernel_ns: Stats::of(&kernel_ns),
        host_ns: Stats::of(&host_ns),
        restore_ns: Stats::of(&restore_ns),
    });

    // 5. Read back, verify, save.
    let mut ok = true;
    if req.verify.is_some() || req.save_output.is_some() {
        let replayed = read_back(req.segments, req.input_len)?;
        if let Some(path) = &req.save_output {
            std::fs::write(path, &replayed).map_err(|e| Error::io(path, e))?;
            sink(Event::Saved {
                path: path.display().to_string(),
            });
        }
        if let Some(typed) = &req.verify {
            let expected_path = req.files.record_output();
            let expected = crate::snapshot::Snapshot::open(&expected_path)?;
            let map = MemoryMap::new(d, req.input_len);
            let outcome = verify::verify(&map, expected.bytes(), &replayed, typed.as_ref());
            expected.check_intact()?;
            ok = outcome.passed;
            sink(Event::Verify(outcome));
        }
    }
    drop(pristine);
    drop(host);
    Ok(ok)
}

/// Benchmark aids: one pinned copy and one pageable copy of the same bytes to the same place,
/// and one device-side restore, each timed alone.
fn calibrate(
    cx: &Context,
    host: &[u8],
    segments: &[Segment],
    pristine: Option<u64>,
    sink: &mut dyn FnMut(Event),
) -> Result<()> {
    let Some(seg) = segments.iter().max_by_key(|s| s.size).copied() else {
        return Ok(());
    };
    let n = seg.size as usize;
    let src = &host[seg.offset as usize..seg.offset as usize + n];
    let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        let t = Instant::now();
        f()?;
        Ok(t.elapsed().as_secs_f64())
    };
    let pinned = time(&mut || {
        // SAFETY: synchronous copy of `n` pinned bytes into a mapped segment.
        check(
            unsafe { sys::cuMemcpyHtoD_v2(seg.addr, src.as_ptr() as *const c_void, n) },
            || "calibration copy".into(),
        )
    })?;
    let pageable_copy = src.to_vec();
    let pageable = time(&mut || {
        // SAFETY: synchronous copy from pageable memory (the driver stages it).
        check(
            unsafe { sys::cuMemcpyHtoD_v2(seg.addr, pageable_copy.as_ptr() as *const c_void, n) },
            || "calibration copy".into(),
        )
    })?;
    let device = match pristine {
        Some(p) => Some(time(&mut || {
            copy_device_to_device(cx.stream, &[(seg.addr, p + seg.offset, n)])
        })?),
        None => None,
    };
    let gbps = |s: f64| n as f64 / s / 1e9;
    sink(Event::Phase {
        name: "calibration".into(),
        detail: format!(
            "bytes={n} pinned_single_copy_gbps={:.2} pageable_copy_gbps={:.2} pageable_s={:.6} device_restore_s={}",
            gbps(pinned),
            gbps(pageable),
            pageable,
            device.map(|d| format!("{d:.6}")).unwrap_or_else(|| "none".into())
        ),
    });
    // Put the recorded bytes back (the copies above wrote the same bytes, but be exact).
    copy_to_device(cx.stream, host, segments)
}
