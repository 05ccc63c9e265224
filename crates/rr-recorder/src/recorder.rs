//! The recorder proper: the CUPTI observer that turns selected launches into instances.
//!
//! A selected stream launch is recorded in its own callbacks, on the application's thread: at
//! the launch's enter the memory before the kernel, at its exit the memory after it, then the
//! instance's files ([`crate::capture`]). A selected kernel inside a CUDA graph is recorded by
//! running the graph's nodes in the recorder, in order, on the launch stream, recording around
//! that kernel, and giving the application's launch the empty graph ([`Recorder::run_graph`]).
//! The application waits meanwhile; it never sees anything else of the recorder. Any internal
//! error stops recording with one message on stderr and the application carries on.
//!
//! Locking: `state` is held only for bookkeeping, never across a driver call (our own driver
//! calls raise module callbacks that need it); `staging` (the pinned buffers) serialises
//! snapshots of concurrent launches.

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use rustc_hash::FxHashMap;

use rr_cuda::cupti::{
    self, Allocation, CapturedObject, GraphChange, GraphTemplate, LaunchCall, NodeOp, Observer,
};
use rr_cuda::PinnedBuffer;
use rr_format::report::ReportRow;
use rr_format::store::BlobStore;

use crate::config::Config;
use crate::graphs::Graphs;
use crate::images::Images;
use crate::known::Known;
use crate::launch::{Cost, LaunchSpec, Pending, Stored};
use crate::memory::Allocations;
use crate::objects::Objects;
use crate::pipeline::{DeviceMemory, Source, Staging};
use crate::select::{Decision, LaunchKey, Selector, Settled};
use crate::stats::{Reason, Stats};
use crate::write;

/// Pinned staging: three 32 MiB buffers keep a copy, a hash and a write in flight.
const STAGING_BUFFERS: usize = 3;
const STAGING_CHUNK: usize = 32 << 20;

/// The GPU as the pipeline's memory: synchronous copies of the application's memory (device
/// or mapped host memory, by address; CUDA arrays, row by row) into pinned buffers.
struct Gpu;

impl DeviceMemory for Gpu {
    fn read(&self, source: &Source, offset: u64, dst: &mut [u8]) -> Result<(), String> {
        match source {
            Source::Memory { addr, .. } => cupti::read_device(addr + offset, dst),
            Source::Array { handle, desc, .. } => {
                rr_cuda::objects::read_array(*handle, desc, offset, dst)
            }
        }
        .map_err(|e| e.to_string())
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) allocations: Allocations,
    pub(crate) images: Images,
    pub(crate) objects: Objects,
    pub(crate) graphs: Graphs,
    pub(crate) selector: Option<Selector>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    /// Report rows in recording order, with the key whose launches they count.
    pub(crate) rows: Vec<(ReportRow, LaunchKey)>,
    pub(crate) stats: Stats,
    notes: Vec<String>,
    /// Bytes of the recorded snapshots, and bytes actually written for them.
    snapshot_bytes: u64,
    stored_bytes: u64,
}

/// A launch as the fast path knows it: the kernel handle and the launch configuration.
type FastKey = (u64, [u32; 3], [u32; 3], u32);

thread_local! {
    /// Per thread: the configurations no later launch of which will be selected, by kernel
    /// handle (no lock, no kernel name: a launch storm costs a hash lookup and three atomic
    /// increments per launch), and the generation of kernel handles it was filled in.
    static SETTLED: RefCell<(u64, FxHashMap<FastKey, Settled>)> = RefCell::default();
}

/// Count the launch if its configuration is settled; `false` when the selector must decide.
fn count_settled(key: &FastKey) -> bool {
    SETTLED.with(|s| {
        // Busy only if a signal handler launched while this thread was counting.
        let Ok(mut s) = s.try_borrow_mut() else {
            return false;
        };
        let generation = cupti::handle_generation();
        if s.0 != generation {
            // Modules were unloaded: a handle may now name another kernel.
            s.1.clear();
            s.0 = generation;
        }
        match s.1.get(key) {
            Some(settled) => {
                settled.count();
                true
            }
            None => false,
        }
    })
}

fn remember_settled(key: FastKey, settled: Settled) {
    SETTLED.with(|s| {
        let mut s = s.borrow_mut();
        if s.1.len() < 1 << 16 {
            s.1.insert(key, settled);
        }
    });
}

pub struct Recorder {
    pub(crate) cfg: Config,
    pub(crate) dir: PathBuf,
    pid: u32,
    store: BlobStore,
    stopped: AtomicBool,
    /// Launches after recording stopped (counted, not offered to the selection rules).
    after_stop: AtomicU64,
    pub(crate) state: Mutex<State>,
    staging: Mutex<Option<Staging<PinnedBuffer>>>,
    /// Fingerprints of the device memory stored so far (locked after `staging`).
    known: Mutex<Known>,
    progress: Option<UnixDatagram>,
}

/// A graph launch the recorder runs itself: the graph, and its selected kernel nodes (index,
/// occurrence).
type GraphPlan = (GraphTemplate, Vec<(usize, u64)>);

/// Lock, recovering from a poisoned lock (a panic elsewhere was already contained).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Recorder {
    pub fn new(cfg: Config, dir: PathBuf, store: BlobStore) -> Recorder {
        let known = if cfg.fingerprints {
            Known::default()
        } else {
            Known::disabled()
        };
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
            after_stop: AtomicU64::new(0),
            state: Mutex::new(state),
            staging: Mutex::new(None),
            known: Mutex::new(known),
            progress,
        }
    }

    fn forked(&self) -> bool {
        // A child forked after CUDA started cannot use CUDA: it records nothing.
        std::process::id() != self.pid
    }

    fn active(&self) -> bool {
        !self.stopped.load(Ordering::Relaxed) && !self.forked()
    }

    /// A line for the report's notes (once, however often it is said).
    pub fn note(&self, text: &str) {
        let notes = &mut lock(&self.state).notes;
        if !notes.iter().any(|n| n == text) {
            notes.push(text.to_string());
        }
    }

    /// Stop recording for good, saying why once.
    pub fn stop(&self, why: &str) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        eprintln!("rr-tui record: recording stopped: {why}; the program carries on");
        {
            let mut st = lock(&self.state);
            st.stats.stopped(why);
            st.notes.push(format!("recording stopped: {why}"));
        }
        self.send_progress("stopped", Some(why));
        self.write_report();
    }

    pub(crate) fn send_progress(&self, event: &str, message: Option<&str>) {
        self.send(event, message, None);
    }

    /// An instance was written: the progress line, with what its snapshots cost.
    pub(crate) fn send_cost(&self, json: &str, cost: Cost) {
        let cost = serde_json::json!({
            "json": json,
            "seconds": cost.seconds,
            "bytes": cost.bytes,
            "copied": cost.copied,
            "written": cost.written,
        });
        self.send("instance", None, Some(cost));
    }

    fn send(&self, event: &str, message: Option<&str>, cost: Option<serde_json::Value>) {
        let Some(sock) = &self.progress else { return };
        let (instances, bytes, stored, summary) = {
            let st = lock(&self.state);
            let observed = st.selector.as_ref().map(|s| s.launches()).unwrap_or(0);
            (
                st.rows.len(),
                st.snapshot_bytes,
                st.stored_bytes,
                st.stats
                    .summary(observed, self.after_stop.load(Ordering::Relaxed)),
            )
        };
        let line = serde_json::json!({
            "pid": self.pid,
            "event": event,
            "instances": instances,
            "snapshot_bytes": bytes,
            "stored_bytes": stored,
            "message": message,
            "summary": summary,
            "cost": cost,
        });
        // Best effort: a full socket drops a progress line, never blocks the program.
        let _ = sock.send(line.to_string().as_bytes());
    }

    /// The report as it stands (occurrences so far), into the directory.
    pub fn write_report(&self) -> Option<String> {
        let (rows, summary, notes) = {
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
            let observed = sel.map(|s| s.launches()).unwrap_or(0);
            let after_stop = self.after_stop.load(Ordering::Relaxed);
            (
                rows,
                st.stats.summary(observed, after_stop),
                st.notes.clone(),
            )
        };
        match write::report(
            &self.dir,
            &self.cfg.report_file,
            &rows,
            Some(&summary),
            &notes,
        ) {
            Ok(text) => Some(text),
            Err(e) => {
                eprintln!("rr-tui record: cannot write the report: {e}");
                None
            }
        }
    }

    /// At exit: the final report (and on stdout when asked), and the last progress line.
    pub fn finish(&self) {
        if self.forked() {
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

    /// Store the blobs of the sources not stored yet; returns their ids and what it cost.
    /// Device sources whose fingerprint (computed on the GPU) is known are not copied at all;
    /// the others are hashed on the host, and written when new. `device[i]`: source `i` is
    /// device memory of `context`.
    pub(crate) fn snapshot(
        &self,
        context: u64,
        sources: &[Source],
        device: &[bool],
    ) -> Result<Stored, String> {
        let started = std::time::Instant::now();
        let mut guard = self.staging()?;
        let staging = guard.as_mut().ok_or("no staging buffers")?;
        let mut known = lock(&self.known);
        let (looked, note) = known.look_up(context, sources, device);
        if let Some(note) = note {
            self.note(&note);
        }
        if let Some(budget) = self.cfg.budget {
            if lock(&self.state).stored_bytes >= budget {
                return Err(format!("the byte budget ({budget} bytes) is used up"));
            }
        }
        // Device memory whose fingerprint is new is most likely new content: hashed while it is
        // written, in one pass. The rest (host memory, arrays, or without fingerprints) is
        // hashed first and written only when its blob is not stored yet.
        let (fresh, other): (Vec<usize>, Vec<usize>) = (0..sources.len())
            .filter(|&i| looked.ids[i].is_none())
            .partition(|&i| looked.prints[i].is_some());
        let pick = |idx: &[usize]| idx.iter().map(|&i| sources[i]).collect::<Vec<Source>>();
        let (fresh_sources, other_sources) = (pick(&fresh), pick(&other));
        let err = |e: String| format!("{e} (is the disk full?)");
        let (fresh_ids, mut written) = staging
            .hash_and_store(&Gpu, &self.store, &fresh_sources)
            .map_err(err)?;
        let other_ids = staging.hash(&Gpu, &other_sources)?;
        written += staging
            .store(&Gpu, &self.store, &other_sources, &other_ids)
            .map_err(err)?;
        let mut ids = looked.ids;
        for (&i, id) in fresh.iter().zip(fresh_ids) {
            if let Some(print) = looked.prints[i] {
                known.remember(print, sources[i].size(), &id);
            }
            ids[i] = Some(id);
        }
        for (&i, id) in other.iter().zip(other_ids) {
            ids[i] = Some(id);
        }
        let copied_bytes: u64 = fresh_sources
            .iter()
            .chain(&other_sources)
            .map(Source::size)
            .sum();
        let ids = ids
            .into_iter()
            .collect::<Option<Vec<String>>>()
            .ok_or("a snapshot segment got no blob id")?;
        let bytes: u64 = sources.iter().map(Source::size).sum();
        let mut st = lock(&self.state);
        st.stored_bytes += written;
        st.snapshot_bytes += bytes;
        Ok(Stored {
            ids,
            cost: Cost {
                seconds: started.elapsed().as_secs_f64(),
                bytes,
                copied: copied_bytes,
                written,
            },
        })
    }

    /// The selection rules' decision for one launch (counted), under the lock.
    fn observe(&self, kernel: &str, key: ([u32; 3], [u32; 3], u32)) -> Decision {
        match lock(&self.state).selector.as_mut() {
            Some(s) => s.observe(kernel, key),
            None => Decision::Skip(None),
        }
    }

    fn not_recorded(&self, why: Reason) {
        lock(&self.state).stats.not_recorded(why, 1);
    }

    /// A launch the fast path could not count (see `launch_enter`).
    fn enter(&self, call: &mut LaunchCall, fast: FastKey) -> Result<(), String> {
        if cupti::any_capture_active() {
            // A launch captured into a graph does not run now: it is counted when the graph
            // runs. One on another stream runs, but nothing may synchronise meanwhile.
            if call.capturing().map_err(|e| e.to_string())? {
                return Ok(());
            }
            let geometry = (call.grid, call.block, call.shared_mem);
            if let Decision::Record { .. } = self.observe(&call.symbol(), geometry) {
                lock(&self.state).stats.selected += 1;
                self.not_recorded(Reason::Capture);
            }
            return Ok(());
        }
        let symbol = call.symbol();
        let geometry = (call.grid, call.block, call.shared_mem);
        let occurrence = match self.observe(&symbol, geometry) {
            Decision::Record { occurrence } => occurrence,
            Decision::Skip(Some(settled)) => {
                remember_settled(fast, settled);
                return Ok(());
            }
            Decision::Skip(None) => return Ok(()),
        };
        lock(&self.state).stats.selected += 1;
        let (function, loaded_now) = call.function().map_err(|e| e.to_string())?;
        let layout = function.param_layout().map_err(|e| e.to_string())?;
        let params = call.params(&layout).map_err(|e| e.to_string())?;
        let spec = LaunchSpec {
            key: LaunchKey {
                kernel: symbol.into_owned(),
                grid: call.grid,
                block: call.block,
                shared_mem: call.shared_mem,
            },
            occurrence,
            function,
            loaded_now,
            params,
            layout,
            cluster: call.cluster,
            cooperative: call.cooperative,
            context: if call.context != 0 {
                call.context
            } else {
                cupti::current_context().map_err(|e| e.to_string())?
            },
            from_graph: false,
        };
        match self.record_before(spec)? {
            Ok(pending) => {
                let mut st = lock(&self.state);
                st.next_id += 1;
                let id = st.next_id;
                st.pending.insert(id, pending);
                *call.correlation = id;
            }
            Err(why) => self.not_recorded(why),
        }
        Ok(())
    }

    fn exit(&self, call: &mut LaunchCall) -> Result<(), String> {
        let id = std::mem::take(call.correlation);
        let Some(p) = lock(&self.state).pending.remove(&id) else {
            return Ok(());
        };
        if call.result.is_some_and(|r| r != 0) {
            // The launch itself failed: nothing ran, nothing to record.
            self.not_recorded(Reason::LaunchFailed);
            return Ok(());
        }
        self.record_after(p)
    }

    /// A graph launch: which of its kernels the selection rules pick, and whether the recorder
    /// can run the graph itself. Returns the nodes to run and the selected ones, or `None` when
    /// the launch goes through untouched.
    fn plan_graph(&self, exec: u64, stream: u64) -> Result<Option<GraphPlan>, String> {
        if cupti::any_capture_active() && stream_capturing(stream)? {
            return Ok(None); // captured into another graph: it runs with that one
        }
        let mut guard = lock(&self.state);
        let st = &mut *guard;
        let Some(e) = st.graphs.get(exec) else {
            st.stats.not_recorded(Reason::GraphUnknown, 1);
            return Ok(None);
        };
        let t = match &e.template {
            Ok(t) => t,
            Err(why) => {
                let why = why.clone();
                st.stats.not_recorded(Reason::GraphUnreadable(why), 1);
                return Ok(None);
            }
        };
        let Some(selector) = st.selector.as_mut() else {
            return Ok(None);
        };
        let mut selected = Vec::new();
        for (i, n) in t.nodes.iter().enumerate() {
            let (true, NodeOp::Kernel(k)) = (n.enabled, &n.op) else {
                continue;
            };
            let fast: FastKey = (k.function, k.grid, k.block, k.shared_mem);
            if count_settled(&fast) {
                continue;
            }
            match selector.observe(&k.name, (k.grid, k.block, k.shared_mem)) {
                Decision::Record { occurrence } => selected.push((i, occurrence)),
                Decision::Skip(Some(settled)) => remember_settled(fast, settled),
                Decision::Skip(None) => {}
            }
        }
        if selected.is_empty() {
            return Ok(None);
        }
        st.stats.selected += selected.len() as u64;
        let refusal = if cupti::any_capture_active() {
            Some(Reason::Capture)
        } else {
            e.refusal()
        };
        if let Some(why) = refusal {
            st.stats.not_recorded(why, selected.len() as u64);
            return Ok(None);
        }
        let template = t.clone();
        drop(guard);
        if !cupti::graph::swap_supported() {
            lock(&self.state)
                .stats
                .not_recorded(Reason::GraphSwapUnsupported, selected.len() as u64);
            return Ok(None);
        }
        Ok(Some((template, selected)))
    }

    /// Run a graph's nodes in order on `stream`, recording the selected kernels.
    fn run_graph(&self, t: &GraphTemplate, selected: &[(usize, u64)], stream: u64, context: u64) {
        // Until a node runs, the launch could still go through untouched; from then on every
        // node must run here, whatever happens to recording.
        if let Err(e) = cupti::synchronize() {
            self.stop(&e.to_string());
        }
        for (i, node) in t.nodes.iter().enumerate() {
            if !node.enabled {
                continue;
            }
            let chosen = selected.iter().find(|s| s.0 == i).map(|s| s.1);
            let (NodeOp::Kernel(k), Some(occurrence), true) = (&node.op, chosen, self.active())
            else {
                if let Err(e) = cupti::graph::run_node(&node.op, stream) {
                    eprintln!("rr-tui record: a graph node failed: {e}");
                }
                continue;
            };
            let spec = LaunchSpec {
                key: LaunchKey {
                    kernel: k.name.clone(),
                    grid: k.grid,
                    block: k.block,
                    shared_mem: k.shared_mem,
                },
                occurrence,
                function: k.kernel_function(),
                loaded_now: vec![],
                params: k.params.clone(),
                layout: k.layout.clone(),
                cluster: k.cluster,
                cooperative: k.cooperative,
                context,
                from_graph: true,
            };
            let pending = match self.record_before(spec) {
                Ok(Ok(p)) => Some(p),
                Ok(Err(why)) => {
                    self.not_recorded(why);
                    None
                }
                Err(e) => {
                    self.stop(&e);
                    None
                }
            };
            if let Err(e) = cupti::graph::launch_kernel(k, stream) {
                eprintln!("rr-tui record: a graph kernel node failed to launch: {e}");
                continue;
            }
            if let Some(p) = pending {
                if let Err(e) = self.record_after(p) {
                    self.stop(&e);
                }
            }
        }
    }
}

fn stream_capturing(stream: u64) -> Result<bool, String> {
    rr_cuda::cupti::stream_is_capturing(stream).map_err(|e| e.to_string())
}

impl Observer for Recorder {
    fn launch_settled(&self, call: &LaunchCall) -> bool {
        // The hot path of launch storms: no system call, no lock (a fork is noticed on the
        // slow path: `getpid` is a real system call, costly in virtual machines).
        !self.stopped.load(Ordering::Relaxed)
            && !cupti::any_capture_active()
            && count_settled(&(call.handle(), call.grid, call.block, call.shared_mem))
    }

    fn launch_enter(&self, call: &mut LaunchCall) {
        // Through CUPTI's callbacks, launch_settled was not asked first.
        if self.stopped.load(Ordering::Relaxed) {
            self.after_stop.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let fast: FastKey = (call.handle(), call.grid, call.block, call.shared_mem);
        if !cupti::any_capture_active() && count_settled(&fast) {
            return;
        }
        if self.forked() {
            return;
        }
        if let Err(e) = self.enter(call, fast) {
            self.stop(&e);
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

    fn library_loaded(&self, library: u64, loaded: &[u32]) {
        lock(&self.state).images.library(library, loaded);
    }

    fn library_unloaded(&self, library: u64) {
        lock(&self.state).images.library_unloaded(library);
    }

    fn graph_instantiated(&self, exec: u64, graph: rr_cuda::Result<GraphTemplate>) {
        lock(&self.state)
            .graphs
            .instantiated(exec, graph.map_err(|e| e.to_string()));
    }

    fn graph_changed(&self, exec: u64, change: GraphChange) {
        lock(&self.state).graphs.changed(exec, change);
    }

    fn graph_destroyed(&self, exec: u64) {
        lock(&self.state).graphs.destroyed(exec);
    }

    fn graph_launch(&self, exec: u64, stream: u64, context: u64) -> bool {
        if self.forked() {
            return false;
        }
        if !self.active() {
            let st = lock(&self.state);
            let kernels = st
                .graphs
                .get(exec)
                .and_then(|e| e.template.as_ref().ok())
                .map(|t| {
                    t.nodes
                        .iter()
                        .filter(|n| n.enabled && matches!(n.op, NodeOp::Kernel(_)))
                        .count() as u64
                })
                .unwrap_or(0);
            self.after_stop.fetch_add(kernels, Ordering::Relaxed);
            return false;
        }
        match self.plan_graph(exec, stream) {
            Ok(Some((template, selected))) => {
                self.run_graph(&template, &selected, stream, context);
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.stop(&e);
                false
            }
        }
    }

    fn object_created(&self, handle: u64, object: CapturedObject) {
        lock(&self.state).objects.created(handle, object);
    }

    fn object_destroyed(&self, handle: u64) {
        lock(&self.state).objects.destroyed(handle);
    }
}
