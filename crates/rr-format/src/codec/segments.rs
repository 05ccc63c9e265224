//! The `Segments` of an rr-tui descriptor, read from a hostile file: each segment's place in
//! memory and in the snapshot, its kind, and (format 2) its blobs and whether it continues the
//! allocation before it; then all of them against one another.

use serde_json::Value;

use crate::descriptor::{is_blob_id, Fields, Segment, SegmentContent};
use crate::error::{Error, Result};
use crate::limits::{MAX_REGION_BYTES, SEGMENT_ALIGN};
use crate::objects::SegmentKind;

/// `Segments`, and (format 2) their contents: in snapshot order, inside `[valloc_addr,
/// valloc_addr + valloc_size)` (whose end was checked for overflow), not overlapping in memory.
pub(super) fn segments(
    f: &Fields,
    version: u64,
    valloc_addr: u64,
    valloc_size: u64,
) -> Result<(Vec<Segment>, Vec<SegmentContent>)> {
    let err = |p: String| Error::format(f.path, p);
    let segs_v = f
        .obj
        .get("Segments")
        .and_then(Value::as_array)
        .ok_or_else(|| err("failed to read JSON array Segments".into()))?;
    let mut segments: Vec<Segment> = Vec::with_capacity(segs_v.len());
    let mut content = Vec::new();
    let mut file_end = 0u64;
    for (i, s) in segs_v.iter().enumerate() {
        let seg = segment(f, s, i, version, file_end)?;
        if version >= 2 {
            content.push(segment_content(f, s, i, &seg, segments.last())?);
        }
        file_end = seg
            .offset
            .checked_add(seg.size)
            .filter(|&e| e <= MAX_REGION_BYTES)
            .ok_or_else(|| err("Segments total more than any GPU's memory".into()))?;
        // VAllocAddr + VAllocSize was checked for overflow above.
        if seg.addressable() && (seg.addr < valloc_addr || seg.end() > valloc_addr + valloc_size) {
            return Err(err(format!(
                "Segments[{i}] lies outside [VAllocAddr, VAllocAddr + VAllocSize)"
            )));
        }
        segments.push(seg);
    }
    let mut sorted: Vec<Segment> = segments
        .iter()
        .filter(|s| s.addressable())
        .copied()
        .collect();
    sorted.sort_by_key(|s| s.addr);
    if sorted.windows(2).any(|w| w[0].end() > w[1].addr) {
        return Err(err("Segments overlap".into()));
    }
    Ok((segments, content))
}

/// `Segments[i]` on its own: address, size, file offset and kind, and a file offset that follows
/// the segments before it (ending at `file_end`) as format `version` lays them out.
fn segment(f: &Fields, s: &Value, i: usize, version: u64, file_end: u64) -> Result<Segment> {
    let err = |p: String| Error::format(f.path, p);
    let get = |k: &str| s.get(k).and_then(Value::as_i64);
    let (Some(addr), Some(size), Some(offset)) = (get("Addr"), get("Size"), get("Offset")) else {
        return Err(err(format!(
            "Segments[{i}] needs integer Addr, Size and Offset"
        )));
    };
    let kind = s
        .as_object()
        .ok_or_else(|| err(format!("Segments[{i}] must be an object")))
        .and_then(|o| crate::objects::kind_from_json(o, &format!("Segments[{i}]")).map_err(err))?;
    let seg = Segment {
        addr: addr as u64,
        size: size as u64,
        offset: offset as u64,
        kind,
    };
    if let SegmentKind::Array(a) = kind {
        if version < 2 || seg.addr != 0 || a.bytes() != Some(seg.size) {
            return Err(err(format!(
                "Segments[{i}] is a CUDA array of {} bytes: it needs format version 2, Addr 0 and Size {}",
                a.bytes().map(|b| b.to_string()).unwrap_or_else(|| "too many".into()),
                a.bytes().unwrap_or(0)
            )));
        }
    }
    if size < 0
        || offset < 0
        || seg.size > MAX_REGION_BYTES
        || seg.addr.checked_add(seg.size).is_none()
    {
        return Err(err(format!(
            "Segments[{i}] has an impossible size or address"
        )));
    }
    if version == 1 && seg.offset != file_end {
        return Err(err(format!(
            "Segments[{i}] starts at file offset {} but the previous segments end at {file_end}",
            seg.offset
        )));
    }
    if version >= 2 && (seg.offset < file_end || !seg.offset.is_multiple_of(SEGMENT_ALIGN)) {
        return Err(err(format!(
            "Segments[{i}] starts at offset {} but must start at a multiple of {SEGMENT_ALIGN} at or after {file_end}",
            seg.offset
        )));
    }
    Ok(seg)
}

/// Format 2's contents of `Segments[i]` (`seg`, read from `s`): its Input and Output blobs, and
/// whether it continues the allocation of `prev`, the segment before it.
fn segment_content(
    f: &Fields,
    s: &Value,
    i: usize,
    seg: &Segment,
    prev: Option<&Segment>,
) -> Result<SegmentContent> {
    let err = |p: String| Error::format(f.path, p);
    let blob = |k: &str| -> Result<Option<String>> {
        match s.get(k) {
            None => Ok(None),
            Some(Value::String(id)) if is_blob_id(id) => Ok(Some(id.clone())),
            Some(_) => Err(err(format!(
                "Segments[{i}].{k} must be a blob id (32 lowercase hex digits)"
            ))),
        }
    };
    let input = blob("Input")?.ok_or_else(|| {
        err(format!(
            "Segments[{i}] has no Input blob (format version 2)"
        ))
    })?;
    let continues = match s.get("Continues") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(v) => {
            return Err(err(format!(
                "Segments[{i}].Continues must be true or false, not {}",
                // At most a few words of whatever was there.
                crate::text::visible(&v.to_string().chars().take(40).collect::<String>())
            )));
        }
    };
    if continues {
        if let Some(why) = why_not_a_continuation(i, seg, prev) {
            return Err(err(format!(
                "Segments[{i}] continues the allocation of the segment before it, but {why}"
            )));
        }
    }
    Ok(SegmentContent {
        input,
        output: blob("Output")?,
        continues,
    })
}

/// Why `Segments[i]` (`seg`) cannot continue the allocation of `prev`, the segment before it. A
/// chunk continues the allocation of the segment right before it, in memory and in the snapshot
/// (so joining them never overlaps or reorders anything).
fn why_not_a_continuation(i: usize, seg: &Segment, prev: Option<&Segment>) -> Option<String> {
    match prev {
        None => Some("it is the first segment".to_string()),
        Some(p) if p.kind != SegmentKind::Device || seg.kind != SegmentKind::Device => {
            Some("only device memory is recorded in chunks".to_string())
        }
        Some(p) if p.end() != seg.addr || p.offset + p.size != seg.offset => Some(format!(
            "it starts at {:#x} (file offset {:#x}) where Segments[{}] ends at {:#x} (file offset {:#x})",
            seg.addr,
            seg.offset,
            i - 1,
            p.end(),
            p.offset + p.size
        )),
        Some(_) if seg.size == 0 => Some("it is empty".to_string()),
        Some(_) => None,
    }
}
