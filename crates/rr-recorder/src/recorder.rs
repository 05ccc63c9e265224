//! The recorder proper: the observer that turns selected launches into instances.
//!
//! A selected stream launch is recorded without the application's thread waiting for anything:
//! at the launch's enter, the snapshot of the memory before the kernel is enqueued on the
//! launch's own stream; at its exit, the snapshot after it; the recorder's own thread drains
//! them and writes the instance ([`crate::ordered`]). A selected kernel inside a CUDA graph is
//! recorded by enqueuing the graph's nodes in the recorder, in order, on the launch stream,
//! with the snapshots around that kernel, and giving the application's launch the empty graph
//! ([`Recorder::run_graph`]). The application never sees anything else of the recorder. Any
//! internal error stops recording with one message on stderr and the application carries on.
//!
//! Locking: `state` is held only for bookkeeping, never across a driver call (our own driver
//! calls raise module callbacks that need it); `known` may be taken before `state`, never
//! after.

use std::collections::HashMap;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rr_cuda::cupti::{
    self, Allocation, CapturedObject, GraphChange, GraphTemplate, LaunchCall, NodeOp, Observer,
};
use rr_format::report::ReportRow;
use rr_format::store::BlobStore;

use crate::config::Config;
use crate::graphs::Graphs;
use crate::images::Images;
use crate::known::Known;
use crate::launch::{Cost, LaunchSpec, Pending};
use crate::locks::lock;
use crate::memory::Allocations;
use crate::objects::Objects;
use crate::ordered::drain::{Drain, Slot};
use crate::ordered::plan::SnapShared;
use crate::ordered::staging::ContextStaging;
use crate::races::{self, Races};
use crate::select::{Decision, LaunchKey, Selector};
use crate::settled::{count_settled, remember_settled, FastKey};
use crate::stats::{Reason, Stats};
use crate::write;

/// A context's snapshot resources: the kernels loaded (when the program first allocated
/// there), then the memory allocated (when its first launch was recorded), or why not.
pub(crate) enum Setup {
    Loaded(rr_cuda::ordered::Snapshotter),
    Ready(Arc<ContextStaging>),
    Failed(String),
}

/// The latest snapshot of a chunk on a stream, not drained yet: `(context, stream key,
/// address, length)` → the snapshot, the chunk's index in it and its launch's slot.
type Latest = HashMap<(u64, u64, u64, u64), (Arc<SnapShared>, usize, u64)>;

#[derive(Default)]
pub(crate) struct State {
    pub(crate) allocations: Allocations,
    pub(crate) images: Images,
    pub(crate) objects: Objects,
    pub(crate) graphs: Graphs,
    pub(crate) selector: Option<Selector>,
    /// Launches between their enter and exit, by id.
    pending: HashMap<u64, (Pending, Arc<Slot>)>,
    pub(crate) latest: Latest,
    pub(crate) races: Races,
    /// Report rows in recording order, with the key whose launches they count.
    pub(crate) rows: Vec<(ReportRow, LaunchKey)>,
    pub(crate) stats: Stats,
    notes: Vec<String>,
    /// Instances whose snapshots may have raced.
    raced: u64,
    /// Bytes of the recorded snapshots, and bytes actually written for them.
    snapshot_bytes: u64,
    stored_bytes: u64,
}

pub struct Recorder {
    pub(crate) cfg: Config,
    pub(crate) dir: PathBuf,
    pid: u32,
    /// The directory's blob store, made with the directory at the first instance (a program
    /// that lists its working directory before recording anything must not see it).
    store: OnceLock<BlobStore>,
    stopped: AtomicBool,
    /// Launches after recording stopped (counted, not offered to the selection rules).
    after_stop: AtomicU64,
    pub(crate) state: Mutex<State>,
    /// What is stored already, by content and by place (taken before `state`, never after).
    pub(crate) known: Mutex<Known>,
    /// Each context's snapshot resources (or why they could not be set up).
    pub(crate) contexts: Mutex<HashMap<u64, Setup>>,
    /// The device of each context seen (for the primary context of a device being reset).
    pub(crate) devices: Mutex<HashMap<u64, i32>>,
    pub(crate) drain: Drain,
    progress: Option<UnixDatagram>,
}

impl Recorder {
    pub fn new(cfg: Config, dir: PathBuf) -> Recorder {
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
            store: OnceLock::new(),
            stopped: AtomicBool::new(false),
            after_stop: AtomicU64::new(0),
            state: Mutex::new(state),
            known: Mutex::new(known),
            contexts: Mutex::new(HashMap::new()),
            devices: Mutex::new(HashMap::new()),
            drain: Drain::default(),
            progress,
        }
    }

    fn forked(&self) -> bool {
        // A child forked after CUDA started cannot use CUDA: it records nothing.
        std::process::id() != self.pid
    }

    pub(crate) fn active(&self) -> bool {
        !self.stopped.load(Ordering::Relaxed) && !self.forked()
    }

    /// A line for the report's notes (once, however often it is said).
    pub fn note(&self, text: &str) {
        let notes = &mut lock(&self.state).notes;
        if !notes.iter().any(|n| n == text) {
            notes.push(text.to_string());
        }
    }

    /// An instance whose snapshots may have raced, in the report's notes (the first 20; then
    /// how many more).
    pub(crate) fn note_raced(&self, json: &str, why: &str) {
        let mut st = lock(&self.state);
        st.raced += 1;
        let line = match st.raced {
            n if n <= 20 => format!(
                "{json}: its snapshots may have raced with another stream ({})",
                rr_format::text::visible(why)
            ),
            n => {
                st.notes
                    .retain(|l| !l.starts_with("more instances whose snapshots may have raced"));
                format!(
                    "more instances whose snapshots may have raced: {} (rr-tui check lists them)",
                    n - 20
                )
            }
        };
        st.notes.push(line);
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

    /// The blob store, the record directory made first when it is not there yet.
    pub(crate) fn store(&self) -> Result<&BlobStore, String> {
        if let Some(s) = self.store.get() {
            return Ok(s);
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            format!(
                "{}: {}",
                rr_format::text::visible_path(&self.dir),
                rr_format::text::io_reason(&e)
            )
        })?;
        let made = BlobStore::open(&self.dir).map_err(|e| e.to_string())?;
        Ok(self.store.get_or_init(|| made))
    }

    /// The report as it stands (occurrences so far), into the directory (none while nothing
    /// was recorded into a directory that is not there yet).
    pub fn write_report(&self) -> Option<String> {
        if !self.dir.is_dir() {
            return None;
        }
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
        let waited = self.drain.finish();
        if waited.as_secs_f64() >= 0.1 {
            let stored = lock(&self.state).stored_bytes;
            eprintln!(
                "rr-tui record: the program ended; writing the last instances took {:.1} s more ({:.2} GiB written in all)",
                waited.as_secs_f64(),
                stored as f64 / (1u64 << 30) as f64
            );
        }
        if let Some(text) = self.write_report() {
            if self.cfg.report_stdout {
                print!("{text}");
            }
        }
        self.send_progress("done", None);
    }

    /// An instance was written: count it, with its report row and what it cost; stop when
    /// the byte budget is used up.
    pub(crate) fn recorded(&self, key: &LaunchKey, json: String, time_ns: Option<u64>, cost: Cost) {
        let over = {
            let mut st = lock(&self.state);
            st.stats.recorded += 1;
            st.stored_bytes += cost.written;
            st.snapshot_bytes += cost.bytes;
            st.rows.push((
                ReportRow {
                    json_file: json,
                    kernel_name: key.kernel.clone(),
                    time_ns,
                    occurrences: None,
                },
                key.clone(),
            ));
            self.cfg.budget.filter(|&b| st.stored_bytes >= b)
        };
        if let Some(budget) = over {
            self.stop(&format!("the byte budget ({budget} bytes) is used up"));
        }
    }

    /// The contexts named: `context`, or every context seen on `device`.
    fn contexts_of(&self, context: Option<u64>, device: Option<i32>) -> Vec<u64> {
        match (context, device) {
            (Some(c), _) => vec![c],
            (None, Some(d)) => lock(&self.devices)
                .iter()
                .filter(|&(_, &dev)| dev == d)
                .map(|(&c, _)| c)
                .collect(),
            (None, None) => Vec::new(),
        }
    }

    /// A launch counted as recorded was lost after all: a later launch of its configuration may
    /// take its place.
    pub(crate) fn retract(&self, key: &LaunchKey) {
        if let Some(s) = lock(&self.state).selector.as_mut() {
            s.retract(key);
        }
    }

    /// A drained launch's snapshots are no one's latest any more, nor in flight.
    pub(crate) fn forget_pending(&self, p: &Pending) {
        let mut st = lock(&self.state);
        for snap in std::iter::once(&p.input).chain(p.output.as_ref()) {
            for c in &snap.chunks {
                let key = (snap.staging.context, p.spec.stream_key, c.src, c.len);
                if st
                    .latest
                    .get(&key)
                    .is_some_and(|l| Arc::ptr_eq(&l.0, &snap.shared))
                {
                    st.latest.remove(&key);
                }
            }
        }
        st.races.end(p.id);
    }

    /// The selection rules' decision for one launch (counted), under the lock.
    fn observe(&self, kernel: &str, key: ([u32; 3], [u32; 3], u32)) -> Decision {
        match lock(&self.state).selector.as_mut() {
            Some(s) => s.observe(kernel, key),
            None => Decision::Skip(None),
        }
    }

    pub(crate) fn not_recorded(&self, why: Reason) {
        lock(&self.state).stats.not_recorded(why, 1);
    }

    /// A launch the fast path could not count (see `launch_enter`).
    fn enter(&self, call: &mut LaunchCall, fast: FastKey) -> Result<(), String> {
        let stream = call.ordered_stream();
        races::launched_on(stream);
        if cupti::any_capture_active() && call.capturing().map_err(|e| e.to_string())? {
            // Captured into a graph: it does not run now, and is counted when the graph runs.
            return Ok(());
        }
        let symbol = call.symbol();
        let geometry = (call.grid, call.block, call.shared_mem);
        let decision = self.observe(&symbol, geometry);
        if races::any_in_flight() {
            self.check_race(call, &symbol, stream)?;
        }
        let occurrence = match decision {
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
            context: self.context_of(call)?,
            stream,
            stream_key: races::key(stream),
            from_graph: false,
        };
        match self.record_before(spec)? {
            Ok((pending, slot)) => {
                let id = pending.id;
                lock(&self.state).pending.insert(id, (pending, slot));
                *call.correlation = id;
            }
            Err(why) => self.not_recorded(why),
        }
        Ok(())
    }

    fn context_of(&self, call: &LaunchCall) -> Result<u64, String> {
        if call.context != 0 {
            return Ok(call.context);
        }
        cupti::current_context().map_err(|e| e.to_string())
    }

    /// A launch while snapshots are in flight: note it on those of other streams whose memory
    /// its parameters point into.
    fn check_race(&self, call: &LaunchCall, symbol: &str, stream: u64) -> Result<(), String> {
        let context = self.context_of(call)?;
        let stream = races::key(stream);
        if !lock(&self.state).races.concerns(context, stream) {
            return Ok(());
        }
        let (function, _) = call.function().map_err(|e| e.to_string())?;
        let layout = function.param_layout().map_err(|e| e.to_string())?;
        let params = call.params(&layout).map_err(|e| e.to_string())?;
        let words =
            rr_format::memory::words_of(&params, layout.iter().map(|&(o, s)| (o as u32, s as u32)));
        lock(&self.state)
            .races
            .launched(symbol, context, stream, &words);
        Ok(())
    }

    fn exit(&self, call: &mut LaunchCall) -> Result<(), String> {
        let id = std::mem::take(call.correlation);
        let Some((p, slot)) = lock(&self.state).pending.remove(&id) else {
            return Ok(());
        };
        // A failed launch ran nothing; its input snapshot is drained all the same.
        let launched = call.result.is_none_or(|r| r == 0);
        self.record_after(p, &slot, launched)
    }
}

impl Observer for Recorder {
    fn launch_settled(&self, call: &LaunchCall) -> bool {
        // The hot path of launch storms: no system call, no lock (a fork is noticed on the
        // slow path: `getpid` is a real system call, costly in virtual machines).
        if self.stopped.load(Ordering::Relaxed)
            || cupti::any_capture_active()
            || races::any_in_flight()
        {
            return false;
        }
        races::launched_on(call.ordered_stream());
        count_settled(&(call.handle(), call.grid, call.block, call.shared_mem))
    }

    fn launch_enter(&self, call: &mut LaunchCall) {
        // Through CUPTI's callbacks, launch_settled was not asked first.
        if self.stopped.load(Ordering::Relaxed) {
            self.after_stop.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let fast: FastKey = (call.handle(), call.grid, call.block, call.shared_mem);
        if !cupti::any_capture_active() && !races::any_in_flight() && count_settled(&fast) {
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
        // A child forked while another thread held the lock would wait for ever: a child
        // records nothing, and touches nothing of the recorder's.
        if self.forked() {
            return;
        }
        lock(&self.state).allocations.add(a);
        // The recorder's kernels are loaded when the program first allocates in a context,
        // never in the middle of its work: loading waits for the kernels running, which may be
        // waiting for the program's next launch.
        if self.active()
            && !lock(&self.contexts).contains_key(&a.context)
            && cupti::current_context().ok() == Some(a.context)
        {
            if let Ok(d) = cupti::current_device() {
                lock(&self.devices).insert(a.context, d);
            }
            cupti::outside_any_capture(|| self.load_kernels(a.context));
        }
    }

    fn freed(&self, context: u64, addr: u64) {
        if self.forked() {
            return;
        }
        lock(&self.state).allocations.remove(context, addr);
    }

    fn module_loaded(&self, module_id: u32, image: &[u8]) {
        if self.forked() {
            return;
        }
        lock(&self.state).images.loaded(module_id, image);
    }

    fn module_handle(&self, module: u64, loaded: &[u32]) {
        if self.forked() {
            return;
        }
        lock(&self.state).images.bind(module, loaded);
    }

    fn library_loaded(&self, library: u64, loaded: &[u32]) {
        if self.forked() {
            return;
        }
        lock(&self.state).images.library(library, loaded);
    }

    fn library_unloaded(&self, library: u64) {
        if self.forked() {
            return;
        }
        lock(&self.state).images.library_unloaded(library);
    }

    fn graph_instantiated(&self, exec: u64, graph: rr_cuda::Result<GraphTemplate>) {
        if self.forked() {
            return;
        }
        lock(&self.state)
            .graphs
            .instantiated(exec, graph.map_err(|e| e.to_string()));
    }

    fn graph_changed(&self, exec: u64, change: GraphChange) {
        if self.forked() {
            return;
        }
        lock(&self.state).graphs.changed(exec, change);
    }

    fn graph_destroyed(&self, exec: u64) {
        if self.forked() {
            return;
        }
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
        if races::any_in_flight() {
            self.graph_races(exec, stream, context);
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
        if self.forked() {
            return;
        }
        lock(&self.state).objects.created(handle, object);
    }

    fn object_destroyed(&self, handle: u64) {
        if self.forked() {
            return;
        }
        lock(&self.state).objects.destroyed(handle);
    }

    fn stream_destroyed(&self, stream: u64) {
        if !self.forked() {
            races::forget_stream(stream);
        }
    }

    fn context_ending(&self, context: Option<u64>, device: Option<i32>) {
        if self.forked() {
            return;
        }
        // Drained while the context lives: afterwards its staged memory is gone.
        let ending = self.contexts_of(context, device);
        self.drain.flush(&ending);
    }

    fn context_gone(&self, context: Option<u64>, device: Option<i32>) {
        if self.forked() {
            return;
        }
        // Its handle may come back for a new context: nothing of the old one may be used
        // then (its memory is freed; its addresses may be the new context's).
        for c in self.contexts_of(context, device) {
            if let Some(Setup::Ready(s)) = lock(&self.contexts).remove(&c) {
                std::mem::forget(s);
            }
            let mut st = lock(&self.state);
            st.allocations.forget_context(c);
            st.latest.retain(|k, _| k.0 != c);
            lock(&self.devices).remove(&c);
        }
    }
}
