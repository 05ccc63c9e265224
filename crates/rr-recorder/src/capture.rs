//! Recording one launch: a stream launch (between its enter and exit, the program launching
//! it) or a kernel node of a graph (the recorder launching it). Before the kernel: choose the
//! memory it can reach (live allocations, mapped host memory, the CUDA arrays behind the texture
//! and surface objects it takes) and the module's globals, and enqueue their snapshot on the
//! launch's stream. After it: enqueue the output snapshot and hand the launch to the drain
//! ([`crate::ordered`]). Nothing here waits for the GPU.

use std::sync::{Arc, Mutex};

use rr_cuda::cupti::{self, CapturedResource};
use rr_cuda::objects::ArrayCopy;
use rr_cuda::ordered::{Snapshotter, StreamEvent};
use rr_format::objects::{ObjectArg, OutsideWord, Resource, SegmentKind};
use rr_format::store::chunks;

use crate::config::Snapshot;
use crate::images::Image;
use crate::launch::{LaunchSpec, Pending};
use crate::locks::lock;
use crate::memory::{pointed_to, Live};
use crate::ordered::drain::{Sealed, Slot};
use crate::ordered::plan::{Chunk, Expect};
use crate::ordered::staging::{ContextStaging, Refused, Snap};
use crate::ordered::writer::start_drain_thread;
use crate::pipeline::Source;
use crate::races::{self, InFlight};
use crate::recorder::{Recorder, Setup};
use crate::stats::Reason;

/// The texture and surface objects a launch passes, the arrays behind them (as extra sources)
/// and why the instance cannot be replayed, if it cannot.
struct Passed {
    objects: Vec<ObjectArg>,
    arrays: Vec<Source>,
    /// Allocations holding the linear memory of objects (they may hold no argument pointer).
    memory: Vec<u64>,
    unreplayable: Option<String>,
}

/// What a launch's snapshots cover: the instance's segments (memory, then arrays) and the
/// module's globals.
struct Covered {
    sources: Vec<Source>,
    memory: usize,
    kinds: Vec<SegmentKind>,
    continues: Vec<bool>,
    /// Name, device address and size of each global.
    globals: Vec<(String, u64, u64)>,
    objects: Vec<ObjectArg>,
    outside: Vec<OutsideWord>,
    unreplayable: Option<String>,
    /// The allocations covered, for the race checks.
    ranges: Vec<(u64, u64)>,
}

/// Why a context was not set up yet.
const CAPTURE_SETUP: &str =
    "a CUDA graph was being captured (allocating then would end the capture)";

impl Recorder {
    /// The image kernel `kernel` of module `module` runs from, as the cubin the driver loaded
    /// where that can be had, checked to hold the kernel.
    fn image_of(
        &self,
        module: u64,
        loaded_now: &[u32],
        kernel: &str,
    ) -> Result<Arc<Image>, Reason> {
        let image = {
            let mut st = lock(&self.state);
            let stale = st
                .images
                .bound(module)
                .is_some_and(|i| i.is_cubin() && !i.has_kernel(kernel));
            if stale {
                // A handle reused by a module the recorder did not see loading: ask again.
                st.images.unbind(module);
            }
            if !st.images.is_bound(module) {
                // A library loaded through the interposed entry points: the one whose kernel of
                // this name runs from this module. Asked under the lock, so that no library is
                // unloaded meanwhile (`library_unloaded` takes it before the driver unloads).
                // Libraries are known only through the entry points, whose observer methods run
                // outside driver calls: the driver never waits for this lock.
                let owner = st.images.libraries().into_iter().find(|&(library, _)| {
                    cupti::library_kernel_module(library, kernel).ok() == Some(module)
                });
                if let Some((_, id)) = owner {
                    st.images.bind(module, &[id]);
                }
            }
            st.images
                .resolve(module, loaded_now, kernel)
                .ok_or(Reason::NoImage)?
        };
        if image.is_cubin() {
            return if image.has_kernel(kernel) {
                Ok(image)
            } else {
                Err(Reason::WrongImage)
            };
        }
        if cupti::any_capture_active() {
            // Loading a module now could break the capture: not this launch.
            return Err(Reason::Capture);
        }
        // A fatbin or PTX as the program passed it: the record needs the one cubin the kernel
        // runs from (it names the module's globals). The driver loads it outside the lock.
        match cupti::loaded_cubin(&image.bytes, kernel, self.cfg.cupti.as_deref()) {
            Ok(cubin) => {
                let derived = lock(&self.state).images.derive(module, image.id, cubin);
                if derived.has_kernel(kernel) {
                    Ok(derived)
                } else {
                    Err(Reason::WrongImage)
                }
            }
            Err(e) => {
                self.note(&format!(
                    "an image was kept as the program loaded it (fatbin or PTX), without the module's globals: {e}"
                ));
                Ok(image)
            }
        }
    }

    /// Load the recorder's kernels into `context` (the current one), once: done when the
    /// program first allocates there, before it runs anything (loading a kernel waits for the
    /// kernels running, which may be waiting for the program's next launch).
    pub(crate) fn load_kernels(&self, context: u64) {
        let mut all = lock(&self.contexts);
        if all.contains_key(&context) {
            return;
        }
        let loaded = Snapshotter::load().map_err(|e| e.to_string());
        all.insert(
            context,
            match loaded {
                Ok(gpu) => Setup::Loaded(gpu),
                Err(e) => Setup::Failed(e),
            },
        );
    }

    /// The snapshot resources of `context` (the current one): the kernels loaded if they were
    /// not, the memory allocated on first use.
    pub(crate) fn staging_for(&self, context: u64) -> Result<Arc<ContextStaging>, String> {
        if let Some(Setup::Ready(s)) = lock(&self.contexts).get(&context) {
            if s.gpu.still_in(context) {
                return Ok(s.clone());
            }
        }
        // Loading and allocating during a capture could end it: not now (a later launch sets it
        // up); no capture begins meanwhile.
        cupti::outside_any_capture(|| self.set_up(context))
            .unwrap_or_else(|| Err(CAPTURE_SETUP.to_string()))
    }

    fn set_up(&self, context: u64) -> Result<Arc<ContextStaging>, String> {
        if let Ok(d) = cupti::current_device() {
            lock(&self.devices).insert(context, d);
        }
        self.load_kernels(context);
        let mut all = lock(&self.contexts);
        let Some(setup) = all.remove(&context) else {
            return Err("the context's setup was lost".into());
        };
        let (now, result) = match setup {
            // The program destroyed the context and got the same handle for a new one: what was
            // ours is gone (never freed: the addresses may be the program's now).
            Setup::Ready(s) if !s.gpu.still_in(context) => {
                std::mem::forget(s);
                (
                    Setup::Failed("the context was destroyed and made anew".into()),
                    Err("the context was destroyed and made anew: recording there stops".into()),
                )
            }
            Setup::Ready(s) => (Setup::Ready(s.clone()), Ok(s)),
            Setup::Failed(e) => (Setup::Failed(e.clone()), Err(e)),
            Setup::Loaded(gpu) => match ContextStaging::new(context, gpu, self.cfg.staging)
                .and_then(|s| self.drain.prepare().map(|()| s))
            {
                Ok(s) => {
                    let s = Arc::new(s);
                    (Setup::Ready(s.clone()), Ok(s))
                }
                Err(e) => (Setup::Failed(e.clone()), Err(e)),
            },
        };
        all.insert(context, now);
        drop(all);
        if let Err(e) = result.as_ref().map_err(String::as_str) {
            if e == CAPTURE_SETUP {
                return result;
            }
            self.note(&format!(
                "no launch of a context was recorded: the recorder's snapshot resources could not be set up ({e})"
            ));
        }
        result
    }

    /// Whether `addr` is memory of the recorder's own in `context`.
    fn owns(&self, context: u64, addr: u64) -> bool {
        match lock(&self.contexts).get(&context) {
            Some(Setup::Ready(s)) => s.gpu.owns(addr),
            _ => false,
        }
    }

    /// What the recorder holds of chunk `(src, len)` as snapshot on the stream of key `stream`
    /// for the launch of slot `seq`: the last snapshot of it on the same stream (not drained
    /// yet, of a slot no later than `seq`: drained before it), or the content last stored there.
    fn expect(&self, context: u64, stream: u64, src: u64, len: u64, seq: u64) -> Expect {
        let known = lock(&self.known);
        if !known.enabled() {
            return Expect::None;
        }
        let earlier = lock(&self.state)
            .latest
            .get(&(context, stream, src, len))
            .filter(|l| l.2 <= seq)
            .cloned();
        match earlier {
            Some((snap, chunk, _)) => Expect::Earlier { snap, chunk },
            None => match known.at_place((context, src, len)) {
                Some((sums, id)) => Expect::Held { sums, id },
                None => Expect::None,
            },
        }
    }

    /// The chunks of a snapshot of `covered` on the stream of key `stream` (with the globals
    /// when `globals`), for the launch of slot `seq`.
    fn chunks_of(
        &self,
        c: &Covered,
        context: u64,
        stream: u64,
        globals: bool,
        seq: u64,
    ) -> Vec<Chunk> {
        let mut out: Vec<Chunk> = c.sources[..c.memory]
            .iter()
            .map(|s| Chunk {
                src: match s {
                    Source::Memory { addr, .. } => *addr,
                    _ => 0,
                },
                len: s.size(),
                expect: match s {
                    Source::Memory { addr, size } => {
                        self.expect(context, stream, *addr, *size, seq)
                    }
                    _ => Expect::None,
                },
                always: false,
            })
            .collect();
        if globals {
            out.extend(c.globals.iter().map(|&(_, addr, size)| Chunk {
                src: addr,
                len: size,
                expect: Expect::None,
                always: true,
            }));
        }
        out
    }

    /// Enqueue a snapshot of `c` on `stream`; registered as the latest of its chunks there.
    fn snapshot(
        &self,
        staging: &Arc<ContextStaging>,
        c: &Covered,
        spec: &LaunchSpec,
        globals: bool,
        seq: u64,
    ) -> Result<Result<Snap, Reason>, String> {
        let stream = spec.stream;
        let chunks = self.chunks_of(c, staging.context, spec.stream_key, globals, seq);
        let arrays: Vec<ArrayCopy> = c.sources[c.memory..]
            .iter()
            .filter_map(|s| match s {
                Source::Array { handle, desc, .. } => Some(ArrayCopy {
                    handle: *handle,
                    desc: *desc,
                }),
                _ => None,
            })
            .collect();
        match staging.enqueue(stream, chunks, &arrays) {
            Ok(snap) => Ok(Ok(snap)),
            Err(Refused::Full(why)) => Ok(Err(Reason::StagingFull(why))),
            Err(Refused::Failed(e)) => Err(e),
        }
    }

    /// Snapshot `snap` (of slot `seq`) of the chunks `memory` first ones is now the latest on
    /// the stream of key `stream`.
    fn register_latest(&self, snap: &Snap, stream: u64, memory: usize, seq: u64) {
        let mut st = lock(&self.state);
        for (i, c) in snap.chunks.iter().enumerate().take(memory) {
            st.latest.insert(
                (snap.staging.context, stream, c.src, c.len),
                (snap.shared.clone(), i, seq),
            );
        }
    }

    /// Before the kernel: enqueue the input snapshot and open the launch's slot in the drain.
    /// `Ok(Err(reason))`: this launch is not recorded (the program goes on); `Err`: recording
    /// must stop.
    pub(crate) fn record_before(
        &self,
        spec: LaunchSpec,
    ) -> Result<Result<(Pending, Arc<Slot>), Reason>, String> {
        let device = cupti::current_device().map_err(|e| e.to_string())?;
        if self.cfg.device.is_some_and(|d| d != device) {
            return Ok(Err(Reason::OtherDevice));
        }
        let module = spec.function.module().map_err(|e| e.to_string())?;
        let image = match self.image_of(module, &spec.loaded_now, &spec.key.kernel) {
            Ok(i) => i,
            Err(why) => return Ok(Err(why)),
        };
        let staging = match self.staging_for(spec.context) {
            Ok(s) => s,
            Err(why) if why == CAPTURE_SETUP => return Ok(Err(Reason::Capture)),
            Err(why) => return Ok(Err(Reason::NoStaging(why))),
        };
        let covered = self.covered(&spec, module, &image)?;
        let stream = spec.stream;
        // The slot (and with it the order the drain takes launches in) comes first: a snapshot
        // expects only what snapshots of earlier slots hold (they are drained before it).
        let slot = self.drain.open(spec.context, start_drain_thread);
        let id = slot.seq;
        // In flight from now on: a launch on another stream from here is checked as it comes;
        // what other streams have in flight already, asked just after.
        let raced = Arc::new(Mutex::new(Vec::new()));
        let flight = Arc::new(InFlight {
            id,
            context: spec.context,
            stream: spec.stream_key,
            thread: races::thread(),
            sealed: Default::default(),
            ranges: covered.ranges.clone(),
            done: Default::default(),
            notes: raced.clone(),
        });
        lock(&self.state).races.start(flight.clone());
        let mut notes = if cupti::any_capture_active() {
            vec!["other streams could not be asked whether they had work in flight (a CUDA graph was being captured)".to_string()]
        } else {
            races::busy_streams(spec.context, spec.stream_key)
        };
        notes.truncate(8);
        lock(&raced).extend(notes);
        // Not in flight after all when this launch is not recorded (or recording stops).
        let grounded = |this: &Self| lock(&this.state).races.end(id);
        let input = match self.snapshot(&staging, &covered, &spec, true, id) {
            Ok(Ok(s)) => s,
            Ok(Err(why)) => {
                grounded(self);
                slot.seal(Sealed::Nothing);
                return Ok(Err(why));
            }
            Err(e) => {
                grounded(self);
                return Err(e);
            }
        };
        let started = StreamEvent::record(stream, true).map_err(|e| {
            grounded(self);
            e.to_string()
        })?;
        self.register_latest(&input, spec.stream_key, covered.memory, id);
        if let Some(s) = lock(&self.state).selector.as_mut() {
            s.recorded(&spec.key);
        }
        Ok(Ok((
            Pending {
                id,
                spec,
                device,
                memory: covered.memory,
                globals: covered.globals.iter().map(|g| g.0.clone()).collect(),
                sources: covered.sources,
                kinds: covered.kinds,
                continues: covered.continues,
                image,
                objects: covered.objects,
                outside: covered.outside,
                unreplayable: covered.unreplayable,
                input,
                output: None,
                started,
                ended: None,
                done: None,
                flight,
                raced,
            },
            slot,
        )))
    }

    /// After the kernel: enqueue the output snapshot and seal the launch's slot. When the
    /// launch call failed (`launched` false) nothing ran: the slot is sealed as such.
    pub(crate) fn record_after(
        &self,
        mut p: Pending,
        slot: &Slot,
        launched: bool,
    ) -> Result<(), String> {
        let stream = p.spec.stream;
        if !launched {
            self.not_recorded(Reason::LaunchFailed);
            self.seal(p, slot, false);
            return Ok(());
        }
        p.ended = Some(StreamEvent::record(stream, true).map_err(|e| e.to_string())?);
        let mut kept = true;
        if self.cfg.output {
            let covered = Covered {
                sources: p.sources.clone(),
                memory: p.memory,
                kinds: Vec::new(),
                continues: Vec::new(),
                globals: Vec::new(),
                objects: Vec::new(),
                outside: Vec::new(),
                unreplayable: None,
                ranges: Vec::new(),
            };
            match self.snapshot(&p.input.staging.clone(), &covered, &p.spec, false, p.id)? {
                Ok(out) => {
                    self.register_latest(&out, p.spec.stream_key, p.memory, p.id);
                    p.output = Some(out);
                }
                Err(why) => {
                    self.not_recorded(why);
                    kept = false;
                }
            }
        }
        let done = Arc::new(StreamEvent::record(stream, false).map_err(|e| e.to_string())?);
        let _ = p.flight.done.set(done.clone());
        p.flight
            .sealed
            .store(true, std::sync::atomic::Ordering::Release);
        p.done = Some(done);
        self.seal(p, slot, kept);
        Ok(())
    }

    fn seal(&self, p: Pending, slot: &Slot, launched: bool) {
        if !launched {
            self.retract(&p.spec.key);
        }
        slot.seal(if launched {
            Sealed::Launched(Box::new(p))
        } else {
            Sealed::Failed(Box::new(p))
        });
        self.drain.poke();
    }

    /// What the launch's snapshots cover.
    fn covered(&self, spec: &LaunchSpec, module: u64, image: &Image) -> Result<Covered, String> {
        let words = rr_format::memory::words_of(
            &spec.params,
            spec.layout.iter().map(|&(o, s)| (o as u32, s as u32)),
        );
        let passed = self.passed(&words)?;
        let memory: Vec<Live> = {
            let st = lock(&self.state);
            match self.cfg.snapshot {
                Snapshot::All => st.allocations.live(spec.context),
                Snapshot::Args => {
                    let mut v = pointed_to(&st.allocations, spec.context, &spec.params);
                    for &a in &passed.memory {
                        v.extend(st.allocations.containing(spec.context, a));
                    }
                    v.sort_unstable_by_key(|l| l.addr);
                    v.dedup();
                    v
                }
            }
        };
        // Words pointing into the recorder's own memory are stale bytes (padding the program
        // never set, left over from our own calls), not arguments.
        let words: Vec<(u32, u64)> = words
            .into_iter()
            .filter(|&(_, v)| !self.owns(spec.context, v))
            .collect();
        let outside = outside_words(&words, &memory, &passed.objects);
        // Device memory in chunks: a partly changed allocation costs only its changed chunks.
        let mut c = Covered {
            sources: Vec::new(),
            memory: 0,
            kinds: Vec::new(),
            continues: Vec::new(),
            globals: Vec::new(),
            objects: Vec::new(),
            outside,
            unreplayable: passed.unreplayable,
            ranges: memory
                .iter()
                .map(|l| (l.addr, l.addr.saturating_add(l.size)))
                .collect(),
        };
        for l in &memory {
            let (pieces, kind): (Vec<(u64, u64)>, _) = if l.host {
                (vec![(l.addr, l.size)], SegmentKind::Host)
            } else {
                (chunks(l.addr, l.size).collect(), SegmentKind::Device)
            };
            for (k, (addr, size)) in pieces.into_iter().enumerate() {
                c.sources.push(Source::Memory { addr, size });
                c.kinds.push(kind);
                c.continues.push(k > 0);
            }
        }
        c.memory = c.sources.len();
        for a in &passed.arrays {
            if let Source::Array { desc, .. } = a {
                c.kinds.push(SegmentKind::Array(*desc));
                c.continues.push(false);
            }
            c.sources.push(*a);
        }
        // Objects name their array by segment: arrays follow the memory segments, in order.
        let memory_segments = c.memory;
        c.objects = passed
            .objects
            .into_iter()
            .map(|mut o| {
                if let Resource::Array { segment } = &mut o.resource {
                    *segment += memory_segments;
                }
                o
            })
            .collect();
        for (name, _) in image.globals() {
            // Symbols that are not variables of this module are skipped.
            if let Ok((addr, size)) = cupti::module_global(module, &name) {
                if size > 0 {
                    c.globals.push((name, addr, size as u64));
                }
            }
        }
        Ok(c)
    }

    /// The objects among the parameter words, with their arrays read from the driver.
    fn passed(&self, words: &[(u32, u64)]) -> Result<Passed, String> {
        let found = lock(&self.state).objects.passed(words);
        let mut out = Passed {
            objects: Vec::new(),
            arrays: Vec::new(),
            memory: Vec::new(),
            unreplayable: None,
        };
        let mut array_handles: Vec<u64> = Vec::new();
        for (offset, handle, o) in found {
            let resource = match o.resource {
                CapturedResource::Memory(r) => {
                    if let Some((addr, _)) = r.memory() {
                        out.memory.push(addr);
                    }
                    r
                }
                CapturedResource::Array(a) => {
                    let i = match array_handles.iter().position(|&h| h == a) {
                        Some(i) => i,
                        None => {
                            let desc =
                                rr_cuda::objects::array_desc(a).map_err(|e| e.to_string())?;
                            if let Some(p) = desc.problem() {
                                out.unreplayable.get_or_insert(format!(
                                    "the {} object at parameter byte {offset} reads a CUDA array rr-tui cannot record: {p}",
                                    o.kind.name()
                                ));
                                continue;
                            }
                            let Some(size) = desc.bytes() else { continue };
                            array_handles.push(a);
                            out.arrays.push(Source::Array {
                                handle: a,
                                desc,
                                size,
                            });
                            array_handles.len() - 1
                        }
                    };
                    Resource::Array { segment: i }
                }
                CapturedResource::Mipmapped => {
                    out.unreplayable.get_or_insert(format!(
                        "the {} object at parameter byte {offset} reads a mipmapped array, which rr-tui does not record",
                        o.kind.name()
                    ));
                    Resource::MipmappedArray
                }
                CapturedResource::Unknown(t) => {
                    out.unreplayable.get_or_insert(format!(
                        "the {} object at parameter byte {offset} reads a resource of unknown type {t}",
                        o.kind.name()
                    ));
                    continue;
                }
            };
            out.objects.push(ObjectArg {
                offset,
                kind: o.kind,
                handle,
                resource,
                texture: o.texture,
                view: o.view,
            });
        }
        Ok(out)
    }
}

/// Parameter words the driver knows as CUDA memory (device, host or managed) but that lie
/// outside every recorded segment: a replay would not have that memory.
fn outside_words(words: &[(u32, u64)], memory: &[Live], objects: &[ObjectArg]) -> Vec<OutsideWord> {
    words
        .iter()
        .filter(|(off, _)| !objects.iter().any(|o| o.offset == *off))
        .filter(|(_, v)| {
            !memory
                .iter()
                .any(|l| *v >= l.addr && *v < l.addr.saturating_add(l.size))
        })
        .filter_map(|&(offset, value)| {
            // Small values are counts and indices; the driver is not asked about them.
            if !(1 << 32..rr_format::memory::USER_SPACE_END).contains(&value) {
                return None;
            }
            let what = rr_cuda::objects::memory_kind(value)?;
            Some(OutsideWord {
                offset,
                value,
                what: what.to_string(),
            })
        })
        .collect()
}
