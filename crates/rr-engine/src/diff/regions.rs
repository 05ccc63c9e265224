//! Per-argument comparison: "argument 1 (0x7f…): 4 096 of 1 048 576 f32 elements differ, first
//! at index 17". Regions come from the record's [`MemoryMap`]; segment bytes no argument points
//! to form regions of their own.

use super::typed::{self, Comparison, Mismatch};
use rr_format::memory::MemoryMap;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RegionReport {
    pub label: String,
    pub arg: Option<usize>,
    pub segment: usize,
    pub addr: u64,
    pub file_start: u64,
    pub file_end: u64,
    pub dtype: String,
    pub elements: u64,
    pub differing: u64,
    pub max_abs_err: f64,
    pub max_ulp: u64,
    pub first: Vec<Mismatch>,
}

impl RegionReport {
    pub fn summary(&self) -> String {
        let what = if self.dtype == "u8" {
            "bytes".to_string()
        } else {
            format!("{} elements", self.dtype)
        };
        if self.differing == 0 {
            return format!(
                "{} ({:#x}): all {} {what} equal",
                self.label,
                self.addr,
                group(self.elements)
            );
        }
        let first = self
            .first
            .first()
            .map(|m| {
                format!(
                    ", first at index {} (offset {:#x}: {} vs {})",
                    m.index, m.offset, m.a, m.b
                )
            })
            .unwrap_or_default();
        format!(
            "{} ({:#x}): {} of {} {what} differ{first}",
            self.label,
            self.addr,
            group(self.differing),
            group(self.elements)
        )
    }
}

/// Digits grouped by thin spaces, as the issue tracker writes big counts ("1 048 576").
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The labelled regions of a map: argument buffers first by file offset, then uncovered bytes.
pub fn regions(map: &MemoryMap) -> Vec<(String, Option<usize>, usize, u64, u64)> {
    let mut out = Vec::new();
    for (si, seg) in map.segments.iter().enumerate() {
        let mut cursor = seg.offset;
        let seg_end = seg.offset + seg.size;
        let mut args: Vec<_> = map.args.iter().filter(|a| a.segment == si).collect();
        args.sort_by_key(|a| (a.file_start, a.arg));
        args.dedup_by_key(|a| a.file_start);
        for a in args {
            if a.file_start > cursor {
                out.push((format!("segment {si}"), None, si, cursor, a.file_start));
            }
            out.push((
                format!("argument {}", a.arg),
                Some(a.arg),
                si,
                a.file_start,
                a.file_end,
            ));
            cursor = a.file_end;
        }
        if cursor < seg_end {
            out.push((format!("segment {si}"), None, si, cursor, seg_end));
        }
    }
    out
}

/// Bytes to compare: an in-memory buffer, or a memory-mapped snapshot read window by window
/// (so comparing multi-GiB files keeps resident memory bounded).
pub trait Source {
    fn size(&self) -> u64;
    /// Up to `len` bytes at `offset` (shorter at the end).
    fn window(&self, offset: u64, len: usize) -> &[u8];
    /// The caller is done with these bytes (a mapping may drop its pages).
    fn release(&self, _offset: u64, _len: u64) {}
    /// Err when the bytes read so far cannot be trusted (a file truncated under its mapping).
    fn intact(&self) -> crate::Result<()> {
        Ok(())
    }
}

impl Source for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn window(&self, offset: u64, len: usize) -> &[u8] {
        let start = (offset.min(self.len() as u64)) as usize;
        &self[start..start.saturating_add(len).min(self.len())]
    }
}

impl Source for crate::snapshot::Snapshot {
    fn size(&self) -> u64 {
        self.len()
    }
    fn window(&self, offset: u64, len: usize) -> &[u8] {
        crate::snapshot::Snapshot::window(self, offset, len)
    }
    fn release(&self, offset: u64, len: u64) {
        crate::snapshot::Snapshot::release(self, offset, len)
    }
    fn intact(&self) -> crate::Result<()> {
        self.check_intact()
    }
}

/// Compare two snapshots region by region (arguments, then the bytes no argument points to),
/// chunk by chunk over the common length.
pub fn compare_regions<A: Source + ?Sized, B: Source + ?Sized>(
    map: &MemoryMap,
    a: &A,
    b: &B,
    cmp: &Comparison,
    keep: usize,
) -> crate::Result<Vec<RegionReport>> {
    let size = cmp.dtype.size() as u64;
    let chunk = super::CHUNK / size * size;
    let common = a.size().min(b.size());
    let mut out = Vec::new();
    for (label, arg, segment, start, end) in regions(map) {
        let mut st = typed::TypedStats::default();
        let stop = end.min(common);
        let mut off = start;
        while off < stop {
            let len = chunk.min(stop - off) as usize;
            let part = typed::compare(
                cmp,
                a.window(off, len),
                b.window(off, len),
                off,
                (off - start) / size,
                keep,
            );
            a.intact()?;
            b.intact()?;
            st.merge(part, keep);
            a.release(off, len as u64);
            b.release(off, len as u64);
            off += len as u64;
        }
        let seg = map.segments[segment];
        out.push(RegionReport {
            label,
            arg,
            segment,
            addr: seg.addr + (start - seg.offset),
            file_start: start,
            file_end: end,
            dtype: cmp.dtype.name().to_string(),
            elements: (end - start) / size,
            differing: st.differing,
            max_abs_err: st.max_abs_err,
            max_ulp: st.max_ulp,
            first: st.first,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_format::descriptor::Segment;

    #[test]
    fn labels_arguments_and_leftovers() {
        let ptr = |index: usize, w: u64| rr_format::descriptor::Argument {
            index,
            bytes: w.to_le_bytes().to_vec(),
            word: Some(w),
        };
        let map = MemoryMap::from_parts(
            vec![Segment {
                addr: 0x1000,
                size: 64,
                offset: 0,
            }],
            &[ptr(1, 0x1010), ptr(2, 0x1030)],
        );
        let a = vec![0u8; 64];
        let mut b = a.clone();
        b[20] = 1;
        b[60] = 1;
        let r = compare_regions(&map, a.as_slice(), b.as_slice(), &Comparison::bytes(), 4).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(
            r[1].summary(),
            "argument 1 (0x1010): 1 of 32 bytes differ, first at index 4 (offset 0x14: 0 vs 1)"
        );
        assert_eq!(r[0].summary(), "segment 0 (0x1000): all 16 bytes equal");
        assert_eq!((r[2].arg, r[2].differing), (Some(2), 1));
        assert_eq!(group(1048576), "1 048 576");
    }
}
