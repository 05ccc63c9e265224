//! Meaning on top of snapshot bytes: which segment, device address and kernel argument a file
//! offset belongs to.
//!
//! A kernel argument whose 8-byte value points into recorded memory is taken to own the bytes
//! from that address up to the next argument pointer in the same segment (or the segment end):
//! records do not say how long a buffer is, and buffers passed to one kernel are laid out one
//! after the other by every allocator we know (libomptarget's bump allocator, cudaMalloc).
//!
//! Everything is built in O(n log n) and looked up by binary search: a hostile descriptor may
//! list 300 000 arguments, and the explorer labels every visible row on every frame.

use super::descriptor::{Chunks, Descriptor, Segment};

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ArgRegion {
    pub arg: usize,
    pub addr: u64,
    /// File offsets `[start, end)` in the snapshot.
    pub file_start: u64,
    pub file_end: u64,
    pub segment: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryMap {
    /// In file order (file offsets are consecutive from 0): allocations, the chunks of one
    /// joined ([`Descriptor::allocations`]).
    pub segments: Vec<Segment>,
    /// The descriptor's segments each of `segments` joins (what it is named by).
    pub chunks: Vec<Chunks>,
    /// Sorted by argument index.
    pub args: Vec<ArgRegion>,
    /// Indices into `segments`, sorted by device address.
    by_addr: Vec<usize>,
    /// Indices into `args` of disjoint regions sorted by `file_start` (of arguments sharing one
    /// pointer, the lowest index).
    by_offset: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    pub segment: usize,
    pub addr: u64,
    /// The argument whose buffer holds the byte, and the byte's offset from the argument pointer.
    pub arg: Option<(usize, u64)>,
}

impl MemoryMap {
    /// The map of a recorded instance. When the device address of its memory is unknown (an
    /// LLVM 16–17 record whose start could not be inferred) no argument is placed in it: a
    /// scalar such as `n = 1024` would otherwise look like a pointer into a region at 0.
    pub fn new(d: &Descriptor, input_len: u64) -> MemoryMap {
        let arguments = if d.region_known() {
            d.arguments()
        } else {
            vec![]
        };
        let (chunks, segments) = d.allocations(input_len).into_iter().unzip();
        MemoryMap {
            chunks,
            ..MemoryMap::from_parts(segments, &arguments)
        }
    }

    /// How segment `si` is named: by the descriptor's segment it starts at (`segment 4`, or
    /// `segment 4–19 (16 chunks)` for an allocation recorded in chunks).
    pub fn segment_name(&self, si: usize) -> String {
        Chunks::of(&self.chunks, si).name()
    }

    /// The descriptor's index of segment `si`'s first chunk.
    pub fn segment_number(&self, si: usize) -> usize {
        Chunks::of(&self.chunks, si).first
    }

    /// Build from segments (in file order) and the launch arguments.
    pub fn from_parts(
        segments: Vec<Segment>,
        arguments: &[super::descriptor::Argument],
    ) -> MemoryMap {
        // Only memory with an address: a CUDA array's contents are reached through objects.
        let mut by_addr: Vec<usize> = (0..segments.len())
            .filter(|&i| segments[i].addressable())
            .collect();
        by_addr.sort_by_key(|&i| segments[i].addr);
        let segment_of = |addr: u64| -> Option<usize> {
            let k = by_addr.partition_point(|&i| segments[i].addr <= addr);
            let i = *by_addr.get(k.checked_sub(1)?)?;
            segments[i].contains(addr).then_some(i)
        };
        // (address, argument, segment) of every argument that points into recorded memory.
        let mut pointers: Vec<(u64, usize, usize)> = arguments
            .iter()
            .filter_map(|a| {
                let w = a.word?;
                segment_of(w).map(|si| (w, a.index, si))
            })
            .collect();
        pointers.sort_unstable();
        // Segments are disjoint, so the pointers into one segment form one run of `pointers`:
        // the extent of each ends at the next larger address in the run, or the segment's end.
        let mut args = Vec::with_capacity(pointers.len());
        let mut next_end = vec![0u64; pointers.len()];
        for k in (0..pointers.len()).rev() {
            let (addr, _, si) = pointers[k];
            next_end[k] = match pointers.get(k + 1) {
                Some(&(a2, _, s2)) if s2 == si && a2 > addr => a2,
                Some(&(_, _, s2)) if s2 == si => next_end[k + 1],
                _ => segments[si].end(),
            };
        }
        for (k, &(addr, arg, si)) in pointers.iter().enumerate() {
            let seg = segments[si];
            args.push(ArgRegion {
                arg,
                addr,
                file_start: seg.offset + (addr - seg.addr),
                file_end: seg.offset + (next_end[k] - seg.addr),
                segment: si,
            });
        }
        args.sort_by_key(|a| a.arg);
        let mut by_offset: Vec<usize> = (0..args.len()).collect();
        by_offset.sort_by_key(|&i| (args[i].file_start, args[i].arg));
        by_offset.dedup_by_key(|i| args[*i].file_start);
        MemoryMap {
            chunks: (0..segments.len())
                .map(|first| Chunks { first, count: 1 })
                .collect(),
            segments,
            args,
            by_addr,
            by_offset,
        }
    }

    /// The segment holding a snapshot file offset.
    pub fn segment_at(&self, file_offset: u64) -> Option<usize> {
        let k = self.segments.partition_point(|s| s.offset <= file_offset);
        let i = k.checked_sub(1)?;
        let s = &self.segments[i];
        (file_offset < s.offset.saturating_add(s.size)).then_some(i)
    }

    /// The segment and address of a snapshot file offset.
    pub fn locate(&self, file_offset: u64) -> Option<Location> {
        let si = self.segment_at(file_offset)?;
        let seg = self.segments[si];
        let addr = seg.addr + (file_offset - seg.offset);
        let k = self
            .by_offset
            .partition_point(|&i| self.args[i].file_start <= file_offset);
        let arg = k
            .checked_sub(1)
            .map(|k| &self.args[self.by_offset[k]])
            .filter(|a| file_offset < a.file_end)
            .map(|a| (a.arg, file_offset - a.file_start));
        Some(Location {
            segment: si,
            addr,
            arg,
        })
    }

    /// The snapshot file offset of a device address.
    pub fn file_offset_of(&self, addr: u64) -> Option<u64> {
        let k = self
            .by_addr
            .partition_point(|&i| self.segments[i].addr <= addr);
        let s = self.segments[*self.by_addr.get(k.checked_sub(1)?)?];
        s.contains(addr).then(|| s.offset + (addr - s.addr))
    }

    pub fn arg_region(&self, arg: usize) -> Option<&ArgRegion> {
        self.args
            .binary_search_by_key(&arg, |a| a.arg)
            .ok()
            .map(|i| &self.args[i])
    }

    /// A short margin label for a file offset: `arg1+0x40` or `seg0+0x1000`.
    pub fn label(&self, file_offset: u64) -> String {
        match self.locate(file_offset) {
            Some(Location {
                arg: Some((a, off)),
                ..
            }) => format!("arg{a}+{off:#x}"),
            Some(Location { segment, addr, .. }) => {
                let prefix = match self.segments[segment].kind {
                    crate::objects::SegmentKind::Device => "seg",
                    crate::objects::SegmentKind::Host => "host",
                    crate::objects::SegmentKind::Array(_) => "array",
                };
                format!(
                    "{prefix}{}+{:#x}",
                    self.segment_number(segment),
                    addr - self.segments[segment].addr
                )
            }
            None => "outside".into(),
        }
    }
}

/// User-space addresses of x86-64 and AArch64 Linux end here (47-bit virtual addresses).
pub const USER_SPACE_END: u64 = 1 << 47;
/// Below this a word is a count or an index, not an address (CUDA allocations and host heaps
/// start higher on 64-bit Linux).
const ADDRESS_FLOOR: u64 = 1 << 32;
/// How far from the recorded memory a word may lie and still look like an address of the same
/// process: device allocations, pinned and heap memory of one process sit within a few TiB of
/// each other, while two packed 32-bit integers (`(5, 3)` = 0x3_0000_0005) are far below them.
const NEIGHBOURHOOD: u64 = 4 << 40;

/// The parameter words of an instance that point outside its recorded memory: a replay that
/// runs the kernel may fault on them or read whatever lies there. rr-tui records made since
/// this check list them as the recorder found them (the driver said what each pointed to);
/// for other records, words that *look* like addresses of the process (8-byte words between
/// 4 GiB and the end of user space, within 4 TiB of the recorded memory) are named
/// `address-like`. Texture and surface handles are not addresses. One rule for `record`,
/// `check`, `inspect` and `replay`.
/// Why a replay cannot map this record's memory, if it cannot: a segment (or LLVM's region)
/// past the 48-bit user address space, or wrapping. `segments` as [`Descriptor::segments`]
/// gives them. One rule for `replay`, `tune` and `check`.
pub fn unmappable(d: &Descriptor, segments: &[Segment]) -> Option<String> {
    segments
        .iter()
        .find_map(|s| crate::limits::unmappable_range(s.addr, s.size))
        .or_else(|| crate::limits::unmappable_range(d.valloc_addr, d.valloc_size))
}

pub fn outside_words(d: &Descriptor) -> Vec<crate::objects::OutsideWord> {
    if let Some(list) = d.cuda.as_ref().and_then(|c| c.outside.as_ref()) {
        return list.clone();
    }
    if !d.region_known() || !d.format.arguments_known() {
        return vec![];
    }
    // LLVM records: the whole region is the recorded memory (its used length is not needed).
    let segments: Vec<Segment> = d
        .segments(d.valloc_size)
        .into_iter()
        .filter(|s| s.addressable() && s.size > 0)
        .collect();
    let (Some(lo), Some(hi)) = (
        segments.iter().map(|s| s.addr).min(),
        segments.iter().map(|s| s.end()).max(),
    ) else {
        return vec![];
    };
    let near = lo.saturating_sub(NEIGHBOURHOOD)..hi.saturating_add(NEIGHBOURHOOD);
    let objects: Vec<u32> = d
        .cuda
        .as_ref()
        .map(|c| c.objects.iter().map(|o| o.offset).collect())
        .unwrap_or_default();
    let looks_outside = |v: u64| {
        (ADDRESS_FLOOR..USER_SPACE_END).contains(&v)
            && near.contains(&v)
            && !segments.iter().any(|s| s.contains(v))
    };
    parameter_words(d)
        .into_iter()
        .filter(|&(off, v)| !objects.contains(&off) && looks_outside(v))
        .map(|(offset, value)| crate::objects::OutsideWord {
            offset,
            value,
            what: "address-like".into(),
        })
        .collect()
}

/// Every 8-byte word a kernel receives, with its byte offset in the parameter buffer: whole
/// 8-byte parameters and the 8-byte-aligned words inside larger ones (structs passed by value).
/// LLVM records pass every argument as 8 bytes at offset 8 × index.
pub fn parameter_words(d: &Descriptor) -> Vec<(u32, u64)> {
    match &d.cuda {
        Some(c) => words_of(
            &c.param_buffer,
            c.param_layout.iter().map(|s| (s.offset, s.size)),
        ),
        None => d
            .arguments()
            .iter()
            .filter_map(|a| Some(((a.index as u32).saturating_mul(8), a.word?)))
            .collect(),
    }
}

pub use crate::objects::words_of;

/// Why a replay of this instance may not reproduce its recorded output, said before it runs:
/// its snapshots may have raced with another stream (`MayHaveRaced`), or host memory it can
/// reach changed while it ran (the program's host threads may have written it: XLA's
/// `DelayKernel` waits for the host to release it), which nothing does during a replay.
pub fn replay_caveats(d: &Descriptor) -> Vec<String> {
    let Some(c) = &d.cuda else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(why) = &c.raced {
        out.push(format!(
            "when recorded, its snapshots may have raced with another stream ({}): its recorded output need not be what a replay computes",
            crate::text::visible(why)
        ));
    }
    let changed: Vec<String> = c
        .segments
        .iter()
        .zip(c.content.as_deref().unwrap_or_default())
        .enumerate()
        .filter(|(_, (s, k))| {
            s.kind == crate::objects::SegmentKind::Host
                && k.output.as_ref().is_some_and(|o| *o != k.input)
        })
        .map(|(i, (s, _))| format!("segment {i}: {} B at {:#x}", s.size, s.addr))
        .take(4)
        .collect();
    if !changed.is_empty() {
        out.push(format!(
            "host memory it reads changed while it ran when recorded ({}): if the program's host threads wrote it, a replay cannot reproduce it",
            changed.join(", ")
        ));
    }
    out
}

/// The sentence `record`, `check` and `replay` print for a word outside the recorded memory.
pub fn describe_outside(d: &Descriptor, w: &crate::objects::OutsideWord) -> String {
    let arg = match &d.cuda {
        Some(c) => c
            .param_layout
            .iter()
            .position(|s| w.offset >= s.offset && w.offset < s.offset.saturating_add(s.size))
            .map(|i| {
                let s = c.param_layout[i];
                if s.size == 8 {
                    format!("argument {i}")
                } else {
                    format!("argument {i} (byte {} of it)", w.offset - s.offset)
                }
            })
            .unwrap_or_else(|| format!("parameter byte {}", w.offset)),
        None => format!("argument {}", w.offset / 8),
    };
    let what = if w.what == "address-like" {
        String::new()
    } else {
        format!(" ({} when recorded)", w.what)
    };
    format!(
        "{arg} = {:#x}{what} points outside the recorded memory: the replay may fault or read other data",
        w.value
    )
}

/// Why a texture or surface object of `d` cannot be recreated over the recorded memory
/// (`segments`: the instance's), if one cannot: the rule `check` reports and `replay` refuses
/// by.
pub fn object_problem(d: &Descriptor, segments: &[Segment]) -> Option<String> {
    let c = d.cuda.as_ref()?;
    c.objects.iter().find_map(|o| {
        let (addr, len) = o.resource.memory()?;
        let inside = segments
            .iter()
            .any(|s| s.addressable() && addr >= s.addr && addr.saturating_add(len) <= s.end());
        (!inside).then(|| {
            format!(
                "the {} object at parameter byte {} reads {len} bytes at {addr:#x}, outside the recorded memory: it cannot be recreated",
                o.kind.name(),
                o.offset
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::{Argument, Descriptor};
    use std::path::Path;

    fn llvm(args: &str) -> Descriptor {
        let s = format!(
            r#"{{"ArgOffsets":[0,0,0],"ArgPtrs":{args},"DeviceId":0,"LoopTripCount":0,"Name":"k","NumArgs":3,"NumTeams":1,"NumThreads":1,"SharedMemorySize":0,"TeamsLimits":[0,0],"ThreadsLimits":[0,0],"VAllocAddr":4096,"VAllocSize":1048576}}"#
        );
        Descriptor::parse(s.as_bytes(), Path::new("x")).unwrap()
    }

    #[test]
    fn arguments_own_bytes_up_to_the_next_pointer() {
        let m = MemoryMap::new(&llvm("[4096,4352,-1]"), 1024);
        assert_eq!(m.args.len(), 2);
        assert_eq!((m.args[0].file_start, m.args[0].file_end), (0, 256));
        assert_eq!((m.args[1].file_start, m.args[1].file_end), (256, 1024));
        assert_eq!(m.locate(300).unwrap().arg, Some((1, 44)));
        assert_eq!(m.label(0x10), "arg0+0x10");
        assert_eq!(m.file_offset_of(4096 + 5), Some(5));
        assert_eq!(m.locate(5000), None);
    }

    #[test]
    fn shared_pointers_share_extents_and_the_lowest_index_labels() {
        let m = MemoryMap::new(&llvm("[4352,4096,4352]"), 1024);
        assert_eq!(m.arg_region(0).unwrap().file_end, 1024);
        assert_eq!(m.arg_region(2).unwrap().file_start, 256);
        assert_eq!(m.label(300), "arg0+0x2c");
        assert_eq!(m.label(10), "arg1+0xa");
    }

    fn word(index: usize, w: u64) -> Argument {
        Argument {
            index,
            bytes: w.to_le_bytes().to_vec(),
            word: Some(w),
        }
    }

    #[test]
    fn scattered_segments_and_many_arguments() {
        let segs = vec![
            Segment::device(0x9000, 0x100, 0),
            Segment::device(0x1000, 0x100, 0x100),
        ];
        let args: Vec<Argument> = (0..300_000)
            .map(|i| {
                word(
                    i,
                    if i % 2 == 0 {
                        0x1000 + (i as u64 % 0x100)
                    } else {
                        0x9000
                    },
                )
            })
            .collect();
        let t = std::time::Instant::now();
        let m = MemoryMap::from_parts(segs, &args);
        assert!(t.elapsed().as_secs() < 5, "linearithmic");
        assert_eq!(m.args.len(), 300_000);
        assert_eq!(m.file_offset_of(0x1010), Some(0x110));
        assert_eq!(m.file_offset_of(0x9100), None);
        assert_eq!(m.segment_at(0x1ff), Some(1));
        assert_eq!(m.label(0x10), "arg1+0x10");
        assert_eq!(m.arg_region(299_999).unwrap().file_end, 0x100);
    }

    #[test]
    fn words_outside_the_recorded_memory() {
        use crate::descriptor::ParamSlot;
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        let c = d.cuda.as_mut().unwrap();
        let words: [u64; 5] = [
            0x7f00_0000_0010,      // inside
            0x7eff_0000_0000,      // outside, near: named
            0x0000_0003_0000_0005, // two packed ints: far below
            1024,                  // a count
            0x3ff0_0000_0000_0000, // 1.0 as a double
        ];
        c.param_buffer = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        // The last three words form one 24-byte struct parameter.
        c.param_layout = vec![
            ParamSlot { offset: 0, size: 8 },
            ParamSlot { offset: 8, size: 8 },
            ParamSlot {
                offset: 16,
                size: 24,
            },
        ];
        d.num_args = 3;
        let out = outside_words(&d);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].offset, out[0].value), (8, 0x7eff_0000_0000));
        let text = describe_outside(&d, &out[0]);
        assert!(
            text.starts_with("argument 1 = 0x7eff00000000 points outside the recorded memory"),
            "{text}"
        );
        // What the recorder found replaces the guess.
        d.cuda.as_mut().unwrap().outside = Some(vec![]);
        assert!(outside_words(&d).is_empty());
        assert_eq!(parameter_words(&d).len(), 5);
    }

    /// `check` and `replay` refuse an object over memory that was not recorded by one rule.
    #[test]
    fn objects_must_read_recorded_memory() {
        use crate::objects::{ObjectArg, ObjectKind, Resource};
        let seg = Segment::device(0x7f00_0000_0000, 0x1000, 0);
        let mut d = Descriptor::rr_for_tests(vec![seg]);
        let linear = |addr, size| Resource::Linear {
            addr,
            format: 0x20,
            channels: 1,
            size,
        };
        d.cuda.as_mut().unwrap().objects = vec![ObjectArg {
            offset: 0,
            kind: ObjectKind::Texture,
            handle: 1,
            resource: linear(0x7f00_0000_0800, 0x800),
            texture: Some(Default::default()),
            view: None,
        }];
        assert_eq!(object_problem(&d, &[seg]), None);
        for (addr, size) in [(0x7f00_0000_0800, 0x801), (u64::MAX, 1 << 30)] {
            d.cuda.as_mut().unwrap().objects[0].resource = linear(addr, size);
            let why = object_problem(&d, &[seg]).unwrap();
            assert!(why.contains("outside the recorded memory"), "{why}");
        }
    }
}
