//! The recorder proper: the CUPTI observer that turns selected launches into instances.
//!
//! A selected launch is recorded in its own callbacks, on the application's thread: at the
//! launch's enter, after synchronising the context, the parameters, the globals of the kernel's
//! module and the device memory before the kernel; at its exit, after synchronising again, the
//! memory after the kernel, then the instance's files. The application waits meanwhile; it
//! never sees anything else of the recorder. Any internal error stops recording with one message
//! on stderr and the application carries on.
//!
//! Locking: `state` is held only for bookkeeping, never across a driver call (our own driver
//! calls raise module callbacks that need it); `staging` (the pinned buffers) serialises
//! snapshots of concurrent launches.

use std::collections::HashMap;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use rr_cuda::cupti::{self, Allocation, LaunchCall, Observer};
use rr_cuda::PinnedBuffer;
use rr_format::report::ReportRow;
use rr_format::store::BlobStore;

use crate::config::{Config, Snapshot};
use crate::images::{Image, Images};
use crate::memory::{pointed_to, Allocations};
use crate::pipeline::{DeviceMemory, Staging};
use crate::select::{Decision, LaunchKey, Selector};
use crate::write;

/// Pinned staging: three 32 MiB buffers keep a copy, a hash and a write in flight.
const STAGING_BUFFERS: usize = 3;
const STAGING_CHUNK: usize = 32 << 20;

/// The GPU as the pipeline's memory: synchronous device-to-host copies of the application's
/// addresses (into pinned buffers).
struct Gpu;

impl DeviceMemory for Gpu {
    fn read(&self, addr: u64, dst: &mut [u8]) -> Result<(), String> {
        cupti::read_device(addr, dst).map_err(|e| e.to_string())
    }
}

/// A launch recorded at its enter, waiting for its exit.
struct Pending {
    key: LaunchKey,
    occurrence: u64,
    device: i32,
    params: Vec<u8>,
    layout: Vec<(usize, usize)>,
    cluster: Option<[u32; 3]>,
    cooperative: bool,
    segments: Vec<(u64, u64)>,
    inputs: Vec<String>,
    image: Arc<Image>,
    globals: Vec<(String, Vec<u8>)>,
    started: Instant,
}

#[derive(Default)]
struct State {
    allocations: Allocations,
    images: Images,
    selector: Option<Selector>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    /// Report rows in recording order, with the key whose launches they count.
    rows: Vec<(ReportRow, LaunchKey)>,
    notes: Vec<String>,
    in_capture: u64,
    graph_launches: u64,
    no_image: u64,
    /// Bytes of the recorded snapshots, and bytes actually written for them.
    snapshot_bytes: u64,
    stored_bytes: u64,
}

pub struct Recorder {
    cfg: Config,
    dir: PathBuf,
    pid: u32,
    store: BlobStore,
    stopped: AtomicBool,
    state: Mutex<State>,
    staging: Mutex<Option<Staging<PinnedBuffer>>>,
    progress: Option<UnixDatagram>,
}

/// Lock, recovering from a poisoned lock (a panic elsewhere was already contained).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Recorder {
    pub fn new(cfg: Config, dir: PathBuf, store: BlobStore) -> Recorder {
        let progress = cfg.progress.as_ref().and_then(|path| {
            let s = UnixDatagram::unbound().ok()?;
            s.set_nonblocking(true).ok()?;
            s.connect(path).ok()?;
            Some(s)
        });
        let state = State {
            selector: Some(Selector::new(&cfg)),
            ..Default::default()
        };
        Recorder {
            pid: std::process::id(),
            cfg,
            dir,
            store,
            stopped: AtomicBool::new(false),
            state: Mutex::new(state),
            staging: Mutex::new(None),
            progress,
        }
    }

    fn active(&self) -> bool {
        // A child forked after CUDA started cannot use CUDA: it records nothing.
        !self.stopped.load(Ordering::Relaxed) && std::process::id() == self.pid
    }

    /// Stop recording for good, saying why once.
    pub fn stop(&self, why: &str) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        eprintln!("rr-tui record: recording stopped: {why}; the program carries on");
        lock(&self.state)
            .notes
            .push(format!("recording stopped: {why}"));
        self.send_progress("stopped", Some(why));
        self.write_report();
    }

    fn send_progress(&self, event: &str, message: Option<&str>) {
        let Some(sock) = &self.progress else { return };
        let (instances, bytes, stored) = {
            let st = lock(&self.state);
            (st.rows.len(), st.snapshot_bytes, st.stored_bytes)
        };
        let line = serde_json::json!({
            "pid": self.pid,
            "event": event,
            "instances": instances,
            "snapshot_bytes": bytes,
            "stored_bytes": stored,
            "message": message,
        });
        // Best effort: a full socket drops a progress line, never blocks the program.
        let _ = sock.send(line.to_string().as_bytes());
    }

    /// The report as it stands (occurrences so far), into the directory.
    pub fn write_report(&self) -> Option<String> {
        let (rows, notes) = {
            let st = lock(&self.state);
            let sel = st.selector.as_ref();
            let rows: Vec<ReportRow> = st
                .rows
                .iter()
                .map(|(r, key)| ReportRow {
                    occurrences: sel.map(|s| s.occurrences(key)).or(r.occurrences),
                    ..r.clone()
                })
                .collect();
            let mut notes = st.notes.clone();
            if st.in_capture > 0 || st.graph_launches > 0 {
                notes.push(format!(
                    "{} launch(es) inside stream capture and {} CUDA graph launch(es) were not recorded (their kernels do \
                     not run when launched); to record them, run without CUDA graphs (PyTorch: no torch.compile \
                     mode=\"reduce-overhead\", TORCHINDUCTOR_CUDAGRAPHS=0)",
                    st.in_capture, st.graph_launches
                ));
            }
            if st.no_image > 0 {
                notes.push(format!(
                    "{} launch(es) were not recorded: the device image of their kernel was not seen loading",
                    st.no_image
                ));
            }
            (rows, notes)
        };
        match write::report(&self.dir, &self.cfg.report_file, &rows, &notes) {
            Ok(text) => Some(text),
            Err(e) => {
                eprintln!("rr-tui record: cannot write the report: {e}");
                None
            }
        }
    }

    /// At exit: the final report (and on stdout when asked), and the last progress line.
    pub fn finish(&self) {
        if std::process::id() != self.pid {
            return;
        }
        if let Some(text) = self.write_report() {
            if self.cfg.report_stdout {
                print!("{text}");
            }
        }
        self.send_progress("done", None);
    }

    fn staging(&self) -> Result<MutexGuard<'_, Option<Staging<PinnedBuffer>>>, String> {
        let mut guard = lock(&self.staging);
        if guard.is_none() {
            let buffers = (0..STAGING_BUFFERS)
                .map(|_| PinnedBuffer::new(STAGING_CHUNK))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            *guard = Some(Staging::new(buffers));
        }
        Ok(guard)
    }

    /// Hash the segments and store the blobs not stored yet; returns their ids.
    fn snapshot(&self, segments: &[(u64, u64)]) -> Result<Vec<String>, String> {
        let mut guard = self.staging()?;
        let staging = guard.as_mut().ok_or("no staging buffers")?;
        let ids = staging.hash(&Gpu, segments)?;
        if let Some(budget) = self.cfg.budget {
            if lock(&self.state).stored_bytes >= budget {
                return Err(format!("the byte budget ({budget} bytes) is used up"));
            }
        }
        let stored = staging
            .store(&Gpu, &self.store, segments, &ids)
            .map_err(|e| format!("{e} (is the disk full?)"))?;
        let mut st = lock(&self.state);
        st.stored_bytes += stored;
        st.snapshot_bytes += segments.iter().map(|s| s.1).sum::<u64>();
        Ok(ids)
    }

    fn enter(&self, call: &mut LaunchCall) -> Result<(), String> {
        if cupti::any_capture_active() {
            lock(&self.state).in_capture += 1;
            return Ok(());
        }
        let geometry = (call.grid, call.block, call.shared_mem);
        let decision = match lock(&self.state).selector.as_mut() {
            Some(s) => s.observe(&call.symbol, geometry),
            None => Decision::Skip,
        };
        let Decision::Record { occurrence } = decision else {
            return Ok(());
        };
        let key = LaunchKey {
            kernel: call.symbol.to_string(),
            grid: call.grid,
            block: call.block,
            shared_mem: call.shared_mem,
        };
        let device = cupti::current_device().map_err(|e| e.to_string())?;
        if self.cfg.device.is_some_and(|d| d != device) {
            return Ok(());
        }
        if call.capturing().map_err(|e| e.to_string())? {
            lock(&self.state).in_capture += 1;
            return Ok(());
        }
        let (function, loaded_now) = call.function().map_err(|e| e.to_string())?;
        let layout = function.param_layout().map_err(|e| e.to_string())?;
        let params = call.params(&layout).map_err(|e| e.to_string())?;
        let module = function.module().map_err(|e| e.to_string())?;
        let image = lock(&self.state)
            .images
            .resolve(module, &loaded_now, &call.symbol);
        let Some(image) = image else {
            lock(&self.state).no_image += 1;
            return Ok(());
        };
        cupti::synchronize().map_err(|e| e.to_string())?;
        let segments = {
            let st = lock(&self.state);
            match self.cfg.snapshot {
                Snapshot::All => st.allocations.live(call.context),
                Snapshot::Args => pointed_to(&st.allocations, call.context, &params),
            }
        };
        let mut globals = Vec::new();
        for (name, _) in image.globals() {
            // Symbols that are not variables of this module are skipped.
            let Ok((addr, size)) = cupti::module_global(module, &name) else {
                continue;
            };
            let mut value = vec![0u8; size];
            cupti::read_device(addr, &mut value).map_err(|e| e.to_string())?;
            globals.push((name, value));
        }
        let inputs = self.snapshot(&segments)?;
        let mut st = lock(&self.state);
        st.next_id += 1;
        let id = st.next_id;
        st.pending.insert(
            id,
            Pending {
                key,
                occurrence,
                device,
                params,
                layout,
                cluster: call.cluster,
                cooperative: call.cooperative,
                segments,
                inputs,
                image,
                globals,
                started: Instant::now(),
            },
        );
        *call.correlation = id;
        Ok(())
    }

    fn exit(&self, call: &mut LaunchCall) -> Result<(), String> {
        let id = std::mem::take(call.correlation);
        if id == 0 {
            return Ok(());
        }
        let Some(p) = lock(&self.state).pending.remove(&id) else {
            return Ok(());
        };
        if call.result.is_some_and(|r| r != 0) {
            return Ok(()); // the launch itself failed: nothing ran, nothing to record
        }
        cupti::synchronize().map_err(|e| e.to_string())?;
        let elapsed = p.started.elapsed().as_nanos() as u64;
        let outputs = if self.cfg.output {
            Some(self.snapshot(&p.segments)?)
        } else {
            None
        };
        let image_file = p.image.file_name();
        let json = write::instance(
            &self.dir,
            &write::Instance {
                kernel: &p.key.kernel,
                grid: p.key.grid,
                block: p.key.block,
                shared_mem: p.key.shared_mem,
                device: p.device,
                params: p.params,
                layout: &p.layout,
                cluster: p.cluster,
                cooperative: p.cooperative,
                occurrence: p.occurrence,
                segments: &p.segments,
                inputs: &p.inputs,
                outputs: outputs.as_deref(),
                image: &p.image.bytes,
                image_file: &image_file,
                globals: &p.globals,
            },
        )
        .map_err(|e| format!("{e} (is the disk full?)"))?;
        {
            let mut st = lock(&self.state);
            if let Some(s) = st.selector.as_mut() {
                s.recorded(&p.key);
            }
            st.rows.push((
                ReportRow {
                    json_file: json,
                    kernel_name: p.key.kernel.clone(),
                    time_ns: Some(elapsed),
                    occurrences: None,
                },
                p.key,
            ));
        }
        self.write_report();
        self.send_progress("instance", None);
        Ok(())
    }
}

impl Observer for Recorder {
    fn launch_enter(&self, call: &mut LaunchCall) {
        if self.active() {
            if let Err(e) = self.enter(call) {
                self.stop(&e);
            }
        }
    }

    fn launch_exit(&self, call: &mut LaunchCall) {
        if self.active() {
            if let Err(e) = self.exit(call) {
                self.stop(&e);
            }
        }
    }

    fn allocated(&self, a: Allocation) {
        lock(&self.state).allocations.add(a);
    }

    fn freed(&self, context: u64, addr: u64) {
        lock(&self.state).allocations.remove(context, addr);
    }

    fn module_loaded(&self, module_id: u32, image: &[u8]) {
        lock(&self.state).images.loaded(module_id, image);
    }

    fn module_handle(&self, module: u64, loaded: &[u32]) {
        lock(&self.state).images.bind(module, loaded);
    }

    fn graph_launched(&self) {
        lock(&self.state).graph_launches += 1;
    }
}
