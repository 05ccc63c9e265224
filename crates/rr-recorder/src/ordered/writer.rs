//! The recorder's own thread and what it does with each launch it takes from the drain's queue
//! ([`super::drain`]): waits for its events (never on the application's threads), reads back
//! what the snapshot kernels found, copies what is new from the staging ring through its own
//! stream, hashes and writes it, and writes the instance. Zero chunks and chunks known by
//! content or place are never copied.

use std::time::{Duration, Instant};

use rr_cuda::ordered::{make_current, Snapshotter, StreamEvent};
use rr_format::store::zeros_id;

use super::drain::Sealed;
use super::plan::{self, Outcome};
use super::staging::Snap;
use crate::launch::{Cost, Pending};
use crate::locks::lock;
use crate::pipeline::{DeviceMemory, Source};
use crate::recorder::Recorder;
use crate::stats::Reason;
use crate::write;

/// Start the recorder's thread (the drain's first slot was opened); `false` when there is no
/// recorder to drain for. The thread takes each sealed launch in order and writes its instance.
pub(crate) fn start_drain_thread() -> bool {
    let Some(recorder) = crate::recorder() else {
        return false;
    };
    let spawned = std::thread::Builder::new()
        .name("rr-tui-recorder".into())
        .spawn(move || {
            // Every driver call of this thread is the recorder's own: never observed.
            rr_cuda::cupti::own_thread();
            recorder.drain.run(
                |s| {
                    // Never crash the program: a panic here stops recording, with a message.
                    let drained = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        recorder.drain_one(s)
                    }));
                    if drained.is_err() {
                        recorder.stop("internal error while writing an instance");
                    }
                },
                || recorder.not_recorded(Reason::NeverReturned),
            )
        });
    if let Err(e) = spawned {
        recorder.stop(&format!(
            "cannot start the recorder's thread: {}",
            rr_format::text::io_reason(&e)
        ));
    }
    true
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
    /// longer than `drain::FINISH_LIMIT` (its kernel has not finished, or a graph capture left open
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
