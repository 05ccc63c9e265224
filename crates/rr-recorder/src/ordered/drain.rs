//! The recorder's own thread: it takes recorded launches in the order their snapshots were
//! enqueued, waits for their events (never on the application's threads), reads back what the
//! snapshot kernels found, copies what is new from the staging ring through its own stream,
//! hashes and writes it, and writes the instance. Zero chunks and chunks known by content or
//! place are never copied. At the program's end, `finish` waits for what is still in flight
//! and says how long that took.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rr_cuda::ordered::{make_current, Snapshotter, StreamEvent};
use rr_cuda::PinnedBuffer;
use rr_format::store::zeros_id;

use super::plan::{self, Outcome};
use super::staging::Snap;
use crate::launch::{Cost, Pending};
use crate::pipeline::{DeviceMemory, Source, Staging};
use crate::recorder::{lock, Recorder};
use crate::stats::Reason;
use crate::write;

/// Pinned buffers for copies out of the staging ring: three of 32 MiB keep a copy, a hash and
/// a write in flight.
const HOST_BUFFERS: usize = 3;
const HOST_BUFFER: usize = 32 << 20;
/// A launch whose call has not returned after this long is given up (its slot would otherwise
/// hold every later one back).
const UNSEALED_LIMIT: Duration = Duration::from_secs(30);
/// At the program's end, how long the recorder waits for a kernel of its to finish.
const FINISH_LIMIT: Duration = Duration::from_secs(60);

/// A recorded launch once its call returned.
pub enum Sealed {
    /// The kernel ran: an instance, once drained.
    Launched(Box<Pending>),
    /// The launch call failed: its input snapshot ran all the same and is drained (its content
    /// may be what later snapshots expect), but no instance is written.
    Failed(Box<Pending>),
    /// Nothing was enqueued after all (the snapshot was refused): the slot is passed over.
    Nothing,
}

/// A place in the drain's queue, taken when a launch's input snapshot is enqueued and filled
/// when the launch call returns.
pub struct Slot {
    /// The order the drain takes launches in (from 1).
    pub seq: u64,
    /// The context the launch's snapshots are in.
    pub context: u64,
    sealed: Mutex<Option<Sealed>>,
    made: Instant,
}

impl Slot {
    pub fn seal(&self, s: Sealed) {
        *lock(&self.sealed) = Some(s);
    }
}

#[derive(Default)]
pub struct Drain {
    queue: Mutex<VecDeque<Arc<Slot>>>,
    /// The last slot's sequence number.
    last_seq: std::sync::atomic::AtomicU64,
    /// When the program's end began to be waited for (one deadline for all that is left).
    finish_started: std::sync::OnceLock<Instant>,
    changed: Condvar,
    started: AtomicBool,
    /// Pinned buffers of the copies out of the ring (the drain thread's alone).
    buffers: Mutex<Option<Staging<PinnedBuffer>>>,
}

impl Drain {
    /// A new slot at the end of the queue (the drain thread starts with the first).
    pub fn open(&self, context: u64) -> Arc<Slot> {
        let slot = {
            let mut q = lock(&self.queue);
            // Numbered under the queue's lock: the numbers are the queue's order.
            let slot = Arc::new(Slot {
                seq: self.last_seq.fetch_add(1, Ordering::AcqRel) + 1,
                context,
                sealed: Mutex::new(None),
                made: Instant::now(),
            });
            q.push_back(slot.clone());
            slot
        };
        if !self.started.swap(true, Ordering::AcqRel) {
            let Some(recorder) = crate::recorder() else {
                return slot;
            };
            let spawned = std::thread::Builder::new()
                .name("rr-tui-recorder".into())
                .spawn(move || {
                    // Every driver call of this thread is the recorder's own: never observed.
                    rr_cuda::cupti::own_thread();
                    recorder.drain.run(recorder)
                });
            if let Err(e) = spawned {
                recorder.stop(&format!("cannot start the recorder's thread: {e}"));
            }
        }
        self.changed.notify_all();
        slot
    }

    /// Allocate the page-locked buffers the drain copies through, once: on the program's thread
    /// when a context is set up (allocating them on the drain's thread while a graph is being
    /// captured in global mode would end the capture).
    pub fn prepare(&self) -> Result<(), String> {
        let mut guard = lock(&self.buffers);
        if guard.is_none() {
            let buffers = (0..HOST_BUFFERS)
                .map(|_| PinnedBuffer::new(HOST_BUFFER))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            *guard = Some(Staging::new(buffers));
        }
        Ok(())
    }

    /// Wake the drain (a slot was sealed).
    pub fn poke(&self) {
        self.changed.notify_all();
    }

    /// Wait until everything queued is drained (the program is ending); returns how long. One
    /// deadline for all that is left ([`FINISH_LIMIT`]): then the recorder's waits are given
    /// up (a graph capture left open forbids its copies for good), and the program ends.
    pub fn finish(&self) -> Duration {
        let start = *self.finish_started.get_or_init(Instant::now);
        if !self.started.load(Ordering::Acquire) {
            return Duration::ZERO;
        }
        self.wait_until(start + FINISH_LIMIT, |_| true);
        if !lock(&self.queue).is_empty() {
            rr_cuda::ordered::abandon_waits();
            self.wait_until(Instant::now() + Duration::from_secs(10), |_| true);
        }
        start.elapsed()
    }

    /// Wait until no queued slot is of `contexts` (they are about to be destroyed: what is
    /// pending there must be drained while they live), at most [`FINISH_LIMIT`].
    pub fn flush(&self, contexts: &[u64]) {
        if self.started.load(Ordering::Acquire) {
            self.wait_until(Instant::now() + FINISH_LIMIT, |s| {
                contexts.contains(&s.context)
            });
        }
    }

    /// Wait until no queued slot matches `pending`, or `deadline`.
    fn wait_until(&self, deadline: Instant, pending: impl Fn(&Slot) -> bool) {
        let mut q = lock(&self.queue);
        while q.iter().any(|s| pending(s)) && Instant::now() < deadline {
            self.changed.notify_all();
            q = self
                .changed
                .wait_timeout(q, Duration::from_millis(20))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    fn run(&self, rec: &Recorder) {
        loop {
            let head = {
                let mut q = lock(&self.queue);
                loop {
                    if let Some(h) = q.front() {
                        break h.clone();
                    }
                    q = self
                        .changed
                        .wait_timeout(q, Duration::from_millis(50))
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
            };
            let sealed = lock(&head.sealed).take();
            match sealed {
                Some(s) => {
                    // Never crash the program: a panic here stops recording, with a message.
                    let drained =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rec.drain_one(s)));
                    if drained.is_err() {
                        rec.stop("internal error while writing an instance");
                    }
                }
                None if head.made.elapsed() > UNSEALED_LIMIT => {
                    rec.not_recorded(Reason::NeverReturned);
                }
                None => {
                    std::thread::sleep(Duration::from_micros(50));
                    continue;
                }
            }
            lock(&self.queue).pop_front();
            self.changed.notify_all();
        }
    }

    /// Whether the program's end has been waited for longer than [`FINISH_LIMIT`].
    fn past_deadline(&self) -> bool {
        self.finish_started
            .get()
            .is_some_and(|t| t.elapsed() > FINISH_LIMIT)
    }
}

/// Reads of the staging ring and of the metadata area, through the recorder's own stream,
/// into the pipeline's page-locked buffers.
struct Staged<'a>(&'a Snapshotter);

impl DeviceMemory for Staged<'_> {
    fn read(&self, source: &Source, offset: u64, dst: &mut [u8]) -> Result<(), String> {
        match source {
            Source::Memory { addr, .. } => self.0.read_pinned(addr + offset, dst),
            Source::Staged { at, .. } => self
                .0
                .read_ring_pinned((at + offset) % self.0.sizes().0, dst),
            Source::Array { .. } => return Err("arrays are staged as memory".into()),
        }
        .map_err(|e| e.to_string())
    }
}

/// One snapshot drained: a blob id for each chunk (`None`: lost), the chunks' leaf sums, the
/// globals' bytes, the arrays' blob ids, why it was not kept whole, and what it cost.
struct Drained {
    ids: Vec<Option<String>>,
    sums: Vec<Vec<u8>>,
    globals: Vec<Vec<u8>>,
    arrays: Vec<String>,
    lost: Option<&'static str>,
    cost: Cost,
}

impl Recorder {
    fn drain_one(&self, sealed: Sealed) {
        let (p, launched) = match sealed {
            Sealed::Launched(p) => (p, true),
            Sealed::Failed(p) => (p, false),
            Sealed::Nothing => return,
        };
        let context = p.input.staging.context;
        match self.drain_instance(*p, launched) {
            Ok(()) => {}
            // Given up at the program's end (a graph capture left open): said, not an error.
            Err(_) if rr_cuda::ordered::waits_abandoned() => {
                self.not_recorded(Reason::ProgramEnded)
            }
            // Its context was destroyed before it could be written (a reset the recorder did
            // not see coming): that instance is lost, the recording goes on.
            Err(e) if e.contains("CUDA_ERROR_CONTEXT_IS_DESTROYED") => {
                self.not_recorded(Reason::ContextGone);
                rr_cuda::cupti::Observer::context_gone(self, Some(context), None);
            }
            Err(e) => self.stop(&e),
        }
    }

    /// Wait for `ev` on this thread; `Ok(false)` when the program's end has been waited for
    /// longer than [`FINISH_LIMIT`] (its kernel has not finished, or a graph capture left open
    /// keeps the event from being asked about).
    fn wait_for(&self, ev: &StreamEvent) -> Result<bool, String> {
        let mut pause = Duration::from_micros(20);
        loop {
            if ev.done().map_err(|e| e.to_string())? {
                return Ok(true);
            }
            if self.drain.past_deadline() {
                return Ok(false);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    /// Drain a launch: its input as soon as the kernel has started (its ring space is given back
    /// while the kernel runs), then its output, then write the instance.
    fn drain_instance(&self, p: Pending, launched: bool) -> Result<(), String> {
        if !self.wait_for(&p.started)? {
            self.forget_pending(&p);
            self.not_recorded(Reason::ProgramEnded);
            return Ok(());
        }
        make_current(p.input.staging.context).map_err(|e| e.to_string())?;
        let input = self.drain_snap(&p.input, &p)?;
        let output = match &p.output {
            Some(out) => {
                if !self.wait_for(p.last_event())? {
                    self.forget_pending(&p);
                    self.not_recorded(Reason::ProgramEnded);
                    return Ok(());
                }
                Some(self.drain_snap(out, &p)?)
            }
            None => None,
        };
        self.forget_pending(&p);
        if !launched {
            return Ok(());
        }
        let lost = input.lost.or(output.as_ref().and_then(|o| o.lost));
        if let Some(why) = lost {
            self.not_recorded(Reason::Lost(why));
            self.retract(&p.spec.key);
            return Ok(());
        }
        if p.image.is_cubin() && !p.image.has_kernel(&p.spec.key.kernel) {
            self.not_recorded(Reason::WrongImage);
            return Ok(());
        }
        let cost = match &output {
            Some(o) => input.cost.add(o.cost),
            None => input.cost,
        };
        self.write_drained(&p, input, output, cost)
    }

    /// Drain one snapshot of launch `p`.
    fn drain_snap(&self, snap: &Snap, p: &Pending) -> Result<Drained, String> {
        let started = Instant::now();
        let back = snap.read_back()?;
        let (outs, status) = plan::outcomes(&snap.chunks, &snap.layout, &back)
            .ok_or("the snapshot kernels' results do not match their plan")?;
        let gpu = &snap.staging.gpu;
        let n = snap.chunks.len();
        let mut d = Drained {
            ids: vec![None; n],
            sums: Vec::with_capacity(n),
            globals: Vec::new(),
            arrays: Vec::new(),
            lost: None,
            cost: Cost::default(),
        };
        // What must be copied out of the ring (or the metadata area, for arrays) and stored:
        // the chunk it is (or `None`: array `i`), and where.
        let mut todo: Vec<(Option<usize>, Source)> = Vec::new();
        for (i, ((outcome, sums), c)) in outs.into_iter().zip(&snap.chunks).enumerate() {
            d.cost.bytes = d.cost.bytes.saturating_add(c.len);
            match outcome {
                Outcome::Zero => d.ids[i] = Some(self.zero_blob(c.len)?),
                Outcome::Same(id) => d.ids[i] = Some(id),
                Outcome::Lost(why) => {
                    d.lost.get_or_insert(why);
                }
                Outcome::Staged { at } if c.always => {
                    let mut bytes = vec![0u8; c.len as usize];
                    gpu.read_ring(at, &mut bytes).map_err(|e| e.to_string())?;
                    d.globals.push(bytes);
                }
                Outcome::Staged { at } => match lock(&self.known).by_content(c.len, &sums) {
                    Some(id) => d.ids[i] = Some(id),
                    None => todo.push((Some(i), Source::Staged { at, size: c.len })),
                },
            }
            d.sums.push(sums);
        }
        for (i, src) in p.sources[p.memory..].iter().enumerate() {
            let addr = snap.array_addr(i);
            todo.push((
                None,
                Source::Memory {
                    addr,
                    size: src.size(),
                },
            ));
        }
        let sources: Vec<Source> = todo.iter().map(|t| t.1).collect();
        let (ids, written) = self.store_staged(gpu, &sources)?;
        d.cost.copied = sources.iter().map(Source::size).sum();
        d.cost.written = written;
        for ((chunk, _), id) in todo.into_iter().zip(ids) {
            match chunk {
                Some(i) => d.ids[i] = Some(id),
                None => d.arrays.push(id),
            }
        }
        // The ring region is drained: the device may reuse it.
        snap.staging.give_back_ring(status.taken_at, status.length);
        d.cost.seconds = started.elapsed().as_secs_f64();
        let _ = snap.shared.ids.set(d.ids.clone());
        let mut known = lock(&self.known);
        for (i, c) in snap.chunks.iter().enumerate().take(p.memory) {
            if let Some(id) = &d.ids[i] {
                known.remember((snap.staging.context, c.src, c.len), &d.sums[i], id);
            }
        }
        Ok(d)
    }

    /// Hash and store `sources` (staged copies), through the pinned buffers.
    fn store_staged(
        &self,
        gpu: &Snapshotter,
        sources: &[Source],
    ) -> Result<(Vec<String>, u64), String> {
        if sources.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let mut guard = lock(&self.drain.buffers);
        let staging = guard.as_mut().ok_or("no staging buffers")?;
        staging
            .hash_and_store(&Staged(gpu), self.store()?, sources)
            .map_err(|e| format!("{e} (is the disk full?)"))
    }

    /// The blob of `len` zero bytes, stored once (a hole: nothing is written).
    fn zero_blob(&self, len: u64) -> Result<String, String> {
        if let Some(id) = lock(&self.known).zeros(len) {
            return Ok(id);
        }
        let id = zeros_id(len);
        let store = self.store()?;
        if !store.contains(&id, len) {
            let mut w = store.writer(len).map_err(|e| e.to_string())?;
            w.zeros(len);
            w.commit(store, &id).map_err(|e| e.to_string())?;
        }
        lock(&self.known).remember_zeros(len, &id);
        Ok(id)
    }

    /// Write the instance of a drained launch.
    fn write_drained(
        &self,
        p: &Pending,
        input: Drained,
        output: Option<Drained>,
        cost: Cost,
    ) -> Result<(), String> {
        let ids = |d: &Drained| -> Option<Vec<String>> {
            let mut v: Vec<String> = d.ids[..p.memory].iter().cloned().collect::<Option<_>>()?;
            v.extend(d.arrays.iter().cloned());
            Some(v)
        };
        let inputs = ids(&input).ok_or("a snapshot segment got no blob id")?;
        let outputs = match &output {
            Some(o) => Some(ids(o).ok_or("a snapshot segment got no blob id")?),
            None => None,
        };
        let globals: Vec<(String, Vec<u8>)> =
            p.globals.iter().cloned().zip(input.globals).collect();
        let segments: Vec<(u64, u64, rr_format::objects::SegmentKind)> = p
            .sources
            .iter()
            .zip(&p.kinds)
            .map(|(s, k)| match *s {
                Source::Memory { addr, size } => (addr, size, *k),
                Source::Array { size, .. } | Source::Staged { size, .. } => (0, size, *k),
            })
            .collect();
        let time_ns = match (&p.ended, self.cfg.output) {
            (Some(end), _) => p
                .started
                .elapsed_ms(end)
                .ok()
                .map(|ms| (ms as f64 * 1e6) as u64),
            _ => None,
        };
        let raced = lock(&p.raced).join("; ");
        let key = &p.spec.key;
        let image_file = p.image.file_name();
        self.store()?; // the directory, made at the first instance
        let json = write::instance(
            &self.dir,
            &write::Instance {
                kernel: &key.kernel,
                grid: key.grid,
                block: key.block,
                shared_mem: key.shared_mem,
                device: p.device,
                params: p.spec.params.clone(),
                layout: &p.spec.layout,
                cluster: p.spec.cluster,
                cooperative: p.spec.cooperative,
                occurrence: p.spec.occurrence,
                segments: &segments,
                continues: &p.continues,
                inputs: &inputs,
                outputs: outputs.as_deref(),
                image: &p.image.bytes,
                image_file: &image_file,
                globals: &globals,
                objects: &p.objects,
                from_graph: p.spec.from_graph,
                outside: &p.outside,
                unreplayable: p.unreplayable.as_deref(),
                raced: (!raced.is_empty()).then_some(raced.as_str()),
            },
        )
        .map_err(|e| format!("{e} (is the disk full?)"))?;
        if !raced.is_empty() {
            self.note_raced(&json, &raced);
        }
        self.recorded(&p.spec.key, json.clone(), time_ns, cost);
        self.write_report();
        self.send_cost(&json, cost);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zero_blob_is_named_by_its_bytes() {
        for len in [0u64, 1, 4096, (1 << 20) + 3] {
            assert_eq!(
                zeros_id(len),
                rr_format::store::blob_id(&vec![0u8; len as usize])
            );
        }
    }
}
