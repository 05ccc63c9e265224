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

use super::descriptor::{Descriptor, Segment};

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
    /// In file order (file offsets are consecutive from 0).
    pub segments: Vec<Segment>,
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
        MemoryMap::from_parts(d.segments(input_len), &arguments)
    }

    /// Build from segments (in file order) and the launch arguments.
    pub fn from_parts(
        segments: Vec<Segment>,
        arguments: &[super::descriptor::Argument],
    ) -> MemoryMap {
        let mut by_addr: Vec<usize> = (0..segments.len()).collect();
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
                format!("seg{segment}+{:#x}", addr - self.segments[segment].addr)
            }
            None => "outside".into(),
        }
    }
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
            Segment {
                addr: 0x9000,
                size: 0x100,
                offset: 0,
            },
            Segment {
                addr: 0x1000,
                size: 0x100,
                offset: 0x100,
            },
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
}
