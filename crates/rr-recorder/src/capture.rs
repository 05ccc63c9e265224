//! Recording one launch: a stream launch (between its enter and exit callbacks, the program
//! launching it) or a kernel node of a graph (the recorder launching it). Before the kernel:
//! synchronise, choose the memory it can reach (live allocations, mapped host memory, the CUDA
//! arrays behind the texture and surface objects it takes), read the module's globals and
//! snapshot it all. After it: synchronise, snapshot again, write the instance.

use std::sync::Arc;
use std::time::Instant;

use rr_cuda::cupti::{self, CapturedResource};
use rr_format::objects::{ObjectArg, OutsideWord, Resource, SegmentKind};
use rr_format::report::ReportRow;
use rr_format::store::chunks;

use crate::config::Snapshot;
use crate::images::Image;
use crate::launch::{LaunchSpec, Pending};
use crate::memory::{pointed_to, Live};
use crate::pipeline::Source;
use crate::recorder::{lock, Recorder};
use crate::stats::Reason;
use crate::write;

/// The texture and surface objects a launch passes, the arrays behind them (as extra sources)
/// and why the instance cannot be replayed, if it cannot.
struct Passed {
    objects: Vec<ObjectArg>,
    arrays: Vec<Source>,
    /// Allocations holding the linear memory of objects (they may hold no argument pointer).
    memory: Vec<u64>,
    unreplayable: Option<String>,
}

impl Recorder {
    /// The image kernel `kernel` of module `module` runs from, as the cubin the driver loaded
    /// where that can be had.
    fn image_of(&self, module: u64, loaded_now: &[u32], kernel: &str) -> Option<Arc<Image>> {
        let image = {
            let mut st = lock(&self.state);
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
            st.images.resolve(module, loaded_now, kernel)?
        };
        if image.is_cubin() {
            return Some(image);
        }
        // A fatbin or PTX as the program passed it: the record needs the one cubin the kernel
        // runs from (it names the module's globals). The driver loads it outside the lock.
        match cupti::loaded_cubin(&image.bytes, kernel, self.cfg.cupti.as_deref()) {
            Ok(cubin) => Some(lock(&self.state).images.derive(module, image.id, cubin)),
            Err(e) => {
                self.note(&format!(
                    "an image was kept as the program loaded it (fatbin or PTX), without the module's globals: {e}"
                ));
                Some(image)
            }
        }
    }

    /// Before the kernel. `Ok(Err(reason))`: this launch is not recorded (the program goes on);
    /// `Err`: recording must stop.
    pub(crate) fn record_before(
        &self,
        spec: LaunchSpec,
    ) -> Result<Result<Pending, Reason>, String> {
        let device = cupti::current_device().map_err(|e| e.to_string())?;
        if self.cfg.device.is_some_and(|d| d != device) {
            return Ok(Err(Reason::OtherDevice));
        }
        let module = spec.function.module().map_err(|e| e.to_string())?;
        let Some(image) = self.image_of(module, &spec.loaded_now, &spec.key.kernel) else {
            return Ok(Err(Reason::NoImage));
        };
        cupti::synchronize().map_err(|e| e.to_string())?;
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
        let outside = outside_words(&words, &memory, &passed.objects);
        // Device memory in chunks: a partly changed allocation costs only its changed chunks.
        let mut sources = Vec::new();
        let mut kinds = Vec::new();
        let mut continues = Vec::new();
        for l in &memory {
            let (pieces, kind): (Vec<(u64, u64)>, _) = if l.host {
                (vec![(l.addr, l.size)], SegmentKind::Host)
            } else {
                (chunks(l.addr, l.size).collect(), SegmentKind::Device)
            };
            for (k, (addr, size)) in pieces.into_iter().enumerate() {
                sources.push(Source::Memory { addr, size });
                kinds.push(kind);
                continues.push(k > 0);
            }
        }
        let memory_segments = sources.len();
        for a in &passed.arrays {
            if let Source::Array { desc, .. } = a {
                kinds.push(SegmentKind::Array(*desc));
                continues.push(false);
            }
            sources.push(*a);
        }
        // Objects name their array by segment: arrays follow the memory segments, in order.
        let objects = passed
            .objects
            .into_iter()
            .map(|mut o| {
                if let Resource::Array { segment } = &mut o.resource {
                    *segment += memory_segments;
                }
                o
            })
            .collect();
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
        let input = self.snapshot(spec.context, &sources, &on_device(&kinds))?;
        Ok(Ok(Pending {
            spec,
            device,
            sources,
            kinds,
            continues,
            inputs: input.ids,
            cost: input.cost,
            image,
            globals,
            objects,
            outside,
            unreplayable: passed.unreplayable,
            started: Instant::now(),
        }))
    }

    /// After the kernel: the output snapshot and the instance's files.
    pub(crate) fn record_after(&self, p: Pending) -> Result<(), String> {
        cupti::synchronize().map_err(|e| e.to_string())?;
        let elapsed = p.started.elapsed().as_nanos() as u64;
        let (outputs, cost) = if self.cfg.output {
            let out = self.snapshot(p.spec.context, &p.sources, &on_device(&p.kinds))?;
            (Some(out.ids), p.cost.add(out.cost))
        } else {
            (None, p.cost)
        };
        let image_file = p.image.file_name();
        let segments: Vec<(u64, u64, SegmentKind)> = p
            .sources
            .iter()
            .zip(&p.kinds)
            .map(|(s, k)| match *s {
                Source::Memory { addr, size } => (addr, size, *k),
                Source::Array { size, .. } => (0, size, *k),
            })
            .collect();
        let key = &p.spec.key;
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
                inputs: &p.inputs,
                outputs: outputs.as_deref(),
                image: &p.image.bytes,
                image_file: &image_file,
                globals: &p.globals,
                objects: &p.objects,
                from_graph: p.spec.from_graph,
                outside: &p.outside,
                unreplayable: p.unreplayable.as_deref(),
            },
        )
        .map_err(|e| format!("{e} (is the disk full?)"))?;
        {
            let mut st = lock(&self.state);
            if let Some(s) = st.selector.as_mut() {
                s.recorded(key);
            }
            st.stats.recorded += 1;
            st.rows.push((
                ReportRow {
                    json_file: json.clone(),
                    kernel_name: key.kernel.clone(),
                    time_ns: Some(elapsed),
                    occurrences: None,
                },
                p.spec.key,
            ));
        }
        self.write_report();
        self.send_cost(&json, cost);
        Ok(())
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

/// Which sources are device memory (fingerprinted on the GPU before anything is copied).
fn on_device(kinds: &[SegmentKind]) -> Vec<bool> {
    kinds
        .iter()
        .map(|k| matches!(k, SegmentKind::Device))
        .collect()
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
