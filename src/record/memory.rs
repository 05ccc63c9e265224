//! Meaning on top of snapshot bytes: which segment, device address and kernel argument a file
//! offset belongs to.
//!
//! A kernel argument whose 8-byte value points into recorded memory is taken to own the bytes
//! from that address up to the next argument pointer in the same segment (or the segment end):
//! records do not say how long a buffer is, and buffers passed to one kernel are laid out one
//! after the other by every allocator we know (libomptarget's bump allocator, cudaMalloc).

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
    pub segments: Vec<Segment>,
    pub args: Vec<ArgRegion>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    pub segment: usize,
    pub addr: u64,
    /// The argument whose buffer holds the byte, and the byte's offset from the argument pointer.
    pub arg: Option<(usize, u64)>,
}

impl MemoryMap {
    pub fn new(d: &Descriptor, input_len: u64) -> MemoryMap {
        let segments = d.segments(input_len);
        let mut pointers: Vec<(usize, u64, usize)> = Vec::new();
        for a in d.arguments() {
            let Some(w) = a.word else { continue };
            if let Some(si) = segments.iter().position(|s| s.contains(w)) {
                pointers.push((a.index, w, si));
            }
        }
        pointers.sort_by_key(|&(i, w, _)| (w, i));
        let mut args = Vec::new();
        for (k, &(arg, addr, si)) in pointers.iter().enumerate() {
            let seg = segments[si];
            // Several arguments may hold the same pointer: they share the extent.
            let next = pointers[k + 1..]
                .iter()
                .find(|p| p.2 == si && p.1 > addr)
                .map(|p| p.1)
                .unwrap_or(seg.end());
            args.push(ArgRegion {
                arg,
                addr,
                file_start: seg.offset + (addr - seg.addr),
                file_end: seg.offset + (next - seg.addr),
                segment: si,
            });
        }
        args.sort_by_key(|a| a.arg);
        MemoryMap { segments, args }
    }

    /// The segment and address of a snapshot file offset.
    pub fn locate(&self, file_offset: u64) -> Option<Location> {
        let (si, seg) = self
            .segments
            .iter()
            .enumerate()
            .find(|(_, s)| file_offset >= s.offset && file_offset < s.offset + s.size)?;
        let addr = seg.addr + (file_offset - seg.offset);
        let arg = self
            .args
            .iter()
            .filter(|a| file_offset >= a.file_start && file_offset < a.file_end)
            .min_by_key(|a| a.arg)
            .map(|a| (a.arg, file_offset - a.file_start));
        Some(Location {
            segment: si,
            addr,
            arg,
        })
    }

    /// The snapshot file offset of a device address.
    pub fn file_offset_of(&self, addr: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|s| s.contains(addr))
            .map(|s| s.offset + (addr - s.addr))
    }

    pub fn arg_region(&self, arg: usize) -> Option<&ArgRegion> {
        self.args.iter().find(|a| a.arg == arg)
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
    use crate::record::descriptor::Descriptor;
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
}
