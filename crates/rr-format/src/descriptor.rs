//! The JSON descriptor of one recorded instance (llvm-record-format.md §2, FORMAT.md).
//!
//! Parsed by hand from `serde_json::Value` rather than derived, so that every missing or mistyped
//! key gets LLVM's own message (`failed to read JSON integer NumTeams`) and so that signed 64-bit
//! addresses (`intptr_t` printed negative) are reinterpreted instead of rejected.

use serde_json::{Map, Value};
use std::path::Path;

use crate::error::{Error, Result};
use crate::objects::{ObjectArg, OutsideWord, SegmentKind};

pub use crate::limits::{MAX_PARAM_BYTES, MAX_REGION_BYTES, SEGMENT_ALIGN};
/// The newest format version of rr-tui's own records (`RrTuiFormat`); this build reads 1 and 2.
/// Version 2 stores snapshot contents per segment in content-addressed blobs (FORMAT.md).
pub const RR_FORMAT_VERSION: u64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum RecordFormat {
    /// libomptarget, current (2026-05 onwards): all 13 keys.
    Llvm,
    /// libomptarget right after PR #190588 (April 2026): `NumTeamsClause`/`ThreadLimitClause`.
    LlvmApril2026,
    /// rr-tui's CUDA-program records, a superset of the LLVM descriptor.
    RrTui,
    /// libomptarget 16.x and 17.x: kernel-name files, no start address, no globals, no image.
    LegacyLlvm16,
    /// libomptarget 18.x: `BumpAllocVAStart`, count-less `.globals`, `ArgPtrs` are values.
    LegacyLlvm18,
    /// libomptarget 19.x–22.x: as 18, but `ArgPtrs` are host addresses of the argument slots.
    LegacyLlvm19,
    /// An 18.x–22.x record whose `ArgPtrs` do not tell which (see `legacy::classify`).
    LegacyLlvm18To22,
}

impl RecordFormat {
    pub fn label(self) -> &'static str {
        match self {
            RecordFormat::Llvm => "LLVM offload",
            RecordFormat::LlvmApril2026 => "LLVM offload (April 2026 keys)",
            RecordFormat::RrTui => "rr-tui CUDA",
            RecordFormat::LegacyLlvm16 => "LLVM 16–17 layout",
            RecordFormat::LegacyLlvm18 => "LLVM 18 layout",
            RecordFormat::LegacyLlvm19 => "LLVM 19–22 layout",
            RecordFormat::LegacyLlvm18To22 => "LLVM 18–22 layout",
        }
    }

    /// What the layout holds and lacks, for `inspect`.
    pub fn description(self) -> &'static str {
        match self {
            RecordFormat::Llvm | RecordFormat::LlvmApril2026 => "libomptarget record (2026 format)",
            RecordFormat::RrTui => "rr-tui record of a CUDA program",
            RecordFormat::LegacyLlvm16 => {
                "LLVM 16–17 legacy layout (kernel-name files, no start address, no globals, no image)"
            }
            RecordFormat::LegacyLlvm18 => "LLVM 18 legacy layout (kernel-name files, count-less globals)",
            RecordFormat::LegacyLlvm19 => "LLVM 19–22 legacy layout (argument values lost)",
            RecordFormat::LegacyLlvm18To22 => {
                "LLVM 18–22 legacy layout (generation undetermined: argument values or slot addresses)"
            }
        }
    }

    /// One of the layouts libomptarget wrote before the 2026 rewrite (files named by kernel).
    pub fn is_legacy(self) -> bool {
        matches!(
            self,
            RecordFormat::LegacyLlvm16
                | RecordFormat::LegacyLlvm18
                | RecordFormat::LegacyLlvm19
                | RecordFormat::LegacyLlvm18To22
        )
    }

    /// Whether the parameter words are the kernel's arguments: LLVM 19–22 stored the host
    /// addresses of the argument slots instead, and an undetermined 18–22 record may have.
    pub fn arguments_known(self) -> bool {
        !matches!(
            self,
            RecordFormat::LegacyLlvm19 | RecordFormat::LegacyLlvm18To22
        )
    }
}

/// One contiguous piece of recorded memory: `size` bytes at device address `addr`, stored at
/// `offset` in the snapshot files. Most segments are device memory; rr-tui records also hold
/// mapped host memory and the contents of CUDA arrays ([`SegmentKind`]; an array has no address,
/// its `addr` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    #[serde(with = "crate::text::exact_u64")]
    pub addr: u64,
    #[serde(with = "crate::text::exact_u64")]
    pub size: u64,
    #[serde(with = "crate::text::exact_u64")]
    pub offset: u64,
    pub kind: SegmentKind,
}

impl Segment {
    /// A segment of device memory.
    pub fn device(addr: u64, size: u64, offset: u64) -> Segment {
        Segment {
            addr,
            size,
            offset,
            kind: SegmentKind::Device,
        }
    }
    /// Whether kernels reach the segment through its address (device and host memory; not the
    /// contents of a CUDA array).
    pub fn addressable(&self) -> bool {
        self.kind.addressable()
    }
    /// One past the last address (saturating: segments built from hostile sizes never wrap).
    pub fn end(&self) -> u64 {
        self.addr.saturating_add(self.size)
    }
    pub fn contains(&self, addr: u64) -> bool {
        self.addressable() && addr >= self.addr && addr < self.end()
    }
}

/// Where one kernel parameter sits in the parameter buffer (from `cuFuncGetParamInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ParamSlot {
    pub offset: u32,
    pub size: u32,
}

/// The rr-tui extension: what CUDA programs need beyond LLVM's x-only, 8-byte-argument model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CudaLaunch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub param_buffer: Vec<u8>,
    pub param_layout: Vec<ParamSlot>,
    pub segments: Vec<Segment>,
    pub cluster_dim: Option<[u32; 3]>,
    pub cooperative: bool,
    #[serde(with = "crate::text::exact_u64")]
    pub occurrence: u64,
    /// Path of the shared device image, relative to the record directory.
    pub image_file: String,
    /// Format version 2: each segment's contents, by blob id (`None`: version 1, snapshots are
    /// whole files `.record_input` / `.record_output`).
    pub content: Option<Vec<SegmentContent>>,
    /// Texture and surface objects among the parameters (`Objects`).
    pub objects: Vec<ObjectArg>,
    /// The launch was a kernel node of a CUDA graph (`FromGraph`).
    pub from_graph: bool,
    /// Parameter words the recorder found pointing outside the recorded memory
    /// (`OutsidePointers`); `None` when the record does not say (then the words are judged by
    /// their values: [`crate::memory::outside_words`]).
    pub outside: Option<Vec<OutsideWord>>,
    /// Why the instance cannot be replayed, when the recorder knew (`Unreplayable`).
    pub unreplayable: Option<String>,
    /// Why a snapshot may not be consistent: another stream had work in flight on the memory it
    /// covers while it was taken (`MayHaveRaced`).
    pub raced: Option<String>,
}

/// Where a segment's bytes are stored in a version-2 record: blob ids (32 lowercase hex digits
/// of XXH3-128) in `blobs/`, before and after the kernel. `output` is `None` when the output was
/// not recorded. `continues`: the segment is a chunk of the allocation the previous segment
/// starts (the recorder stores device memory in chunks of at most
/// [`crate::store::CHUNK_BYTES`]); it lies right after it, in memory and in the snapshot.
/// Which of a descriptor's segments an allocation joins ([`Descriptor::allocations`]): `count`
/// consecutive ones from index `first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Chunks {
    pub first: usize,
    pub count: usize,
}

impl Chunks {
    /// Entry `i` of `chunks`; a segment of its own past their end (memory not from a
    /// descriptor).
    pub fn of(chunks: &[Chunks], i: usize) -> Chunks {
        chunks
            .get(i)
            .copied()
            .unwrap_or(Chunks { first: i, count: 1 })
    }

    /// `segment 4`, or `segment 4–19 (16 chunks)`.
    pub fn name(&self) -> String {
        match self.count {
            0 | 1 => format!("segment {}", self.first),
            n => format!("segment {}–{} ({n} chunks)", self.first, self.first + n - 1),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SegmentContent {
    pub input: String,
    pub output: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub continues: bool,
}

/// Whether `s` is a blob id: exactly 32 lowercase hex digits (so it is a safe file name).
pub fn is_blob_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Descriptor {
    pub format: RecordFormat,
    pub name: String,
    pub num_args: u32,
    pub num_teams: u32,
    pub num_threads: u32,
    pub shared_memory_size: u32,
    #[serde(with = "crate::text::exact_u64")]
    pub loop_trip_count: u64,
    pub device_id: i32,
    #[serde(with = "crate::text::exact_u64")]
    pub valloc_addr: u64,
    #[serde(with = "crate::text::exact_u64")]
    pub valloc_size: u64,
    pub teams_limits: [u32; 2],
    pub threads_limits: [u32; 2],
    /// Pointers, or by-value words of any 64 bits (a double's): decimal strings in `--json`.
    #[serde(serialize_with = "crate::text::u64s_as_strings")]
    pub arg_ptrs: Vec<u64>,
    pub arg_offsets: Vec<i64>,
    pub cuda: Option<CudaLaunch>,
    /// Legacy records only (LLVM 16–22): what they have instead of the 2026 keys.
    pub legacy: Option<crate::legacy::region::Legacy>,
}

/// What one kernel argument is, for display and for labelling memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Argument {
    pub index: usize,
    /// The parameter's bytes as launched.
    pub bytes: Vec<u8>,
    /// The value as a little-endian integer when the parameter is 8 bytes (pointer candidates).
    pub word: Option<u64>,
}

impl Descriptor {
    /// An rr-tui descriptor for a CUDA launch (what the recorder writes). The LLVM keys are
    /// filled consistently: `NumTeams`/`NumThreads` are grid x / block x, `VAllocAddr` and
    /// `VAllocSize` span the segments, `ArgPtrs`/`ArgOffsets` are empty.
    pub fn from_cuda(
        name: String,
        shared_memory_size: u32,
        device_id: i32,
        cuda: CudaLaunch,
    ) -> Descriptor {
        let addressed = || cuda.segments.iter().filter(|s| s.addressable());
        let valloc_addr = addressed().map(|s| s.addr).min().unwrap_or(0);
        let valloc_size = addressed()
            .map(|s| s.end())
            .max()
            .unwrap_or(0)
            .saturating_sub(valloc_addr);
        Descriptor {
            format: RecordFormat::RrTui,
            name,
            num_args: cuda.param_layout.len() as u32,
            num_teams: cuda.grid[0],
            num_threads: cuda.block[0],
            shared_memory_size,
            loop_trip_count: 0,
            device_id,
            valloc_addr,
            valloc_size,
            teams_limits: [0, 0],
            threads_limits: [0, 0],
            arg_ptrs: vec![],
            arg_offsets: vec![],
            cuda: Some(cuda),
            legacy: None,
        }
    }

    /// A minimal rr-tui descriptor over `segments` (kernel `k`, one thread), for tests.
    #[doc(hidden)]
    pub fn rr_for_tests(segments: Vec<Segment>) -> Descriptor {
        Descriptor::from_cuda(
            "k".into(),
            0,
            0,
            CudaLaunch {
                grid: [1; 3],
                block: [1; 3],
                param_buffer: vec![],
                param_layout: vec![],
                segments,
                cluster_dim: None,
                cooperative: false,
                occurrence: 0,
                image_file: "i".into(),
                content: None,
                objects: vec![],
                from_graph: false,
                outside: None,
                unreplayable: None,
                raced: None,
            },
        )
    }

    pub fn grid(&self) -> [u32; 3] {
        self.cuda
            .as_ref()
            .map(|c| c.grid)
            .unwrap_or([self.num_teams, 1, 1])
    }
    pub fn block(&self) -> [u32; 3] {
        self.cuda
            .as_ref()
            .map(|c| c.block)
            .unwrap_or([self.num_threads, 1, 1])
    }

    /// The recorded memory as segments. LLVM records have one region at `VAllocAddr` whose used
    /// length is the length of `.record_input` (the bump allocator's `CurrentSize`).
    pub fn segments(&self, input_len: u64) -> Vec<Segment> {
        match &self.cuda {
            Some(c) => c.segments.clone(),
            None => vec![Segment::device(self.valloc_addr, input_len, 0)],
        }
    }

    /// The recorded memory as the program allocated it: the segments, with the chunks of one
    /// allocation ([`SegmentContent::continues`]) joined into one (what labels, argument extents
    /// and diffs speak of; replay, storage and verification go by the segments themselves),
    /// each with the descriptor's segments it joins (so it is named by the first of them).
    pub fn allocations(&self, input_len: u64) -> Vec<(Chunks, Segment)> {
        let continues = self
            .cuda
            .as_ref()
            .and_then(|c| c.content.as_ref())
            .map(|c| c.iter().map(|c| c.continues).collect::<Vec<_>>())
            .unwrap_or_default();
        let mut out: Vec<(Chunks, Segment)> = Vec::new();
        for (i, s) in self.segments(input_len).into_iter().enumerate() {
            let c = continues.get(i).copied().unwrap_or(false);
            match out.last_mut() {
                // The parser checked that a continuing chunk follows its allocation exactly.
                Some((n, last))
                    if c && last.end() == s.addr && last.offset + last.size == s.offset =>
                {
                    last.size += s.size;
                    n.count += 1;
                }
                _ => out.push((Chunks { first: i, count: 1 }, s)),
            }
        }
        out
    }

    /// The length the recorded snapshots must have, when the descriptor says (rr-tui records:
    /// the end of the last segment; LLVM records: whatever the bump allocator used).
    pub fn snapshot_len(&self) -> Option<u64> {
        self.cuda.as_ref().map(|c| {
            c.segments
                .iter()
                .map(|s| s.offset + s.size)
                .max()
                .unwrap_or(0)
        })
    }

    /// Whether the recorded memory's device address is known: not for LLVM 16–17 records whose
    /// start could not be inferred (their segment is then placed at 0, and no argument is taken
    /// to point into it).
    pub fn region_known(&self) -> bool {
        self.legacy
            .as_ref()
            .is_none_or(|l| l.start.addr().is_some())
    }

    /// A legacy record with its region start given (`--base-address`): the start an LLVM 16–17
    /// record did not store, or another one.
    pub fn with_region_start(mut self, addr: u64) -> Descriptor {
        if let Some(l) = &mut self.legacy {
            let doubts =
                crate::legacy::start::doubts_about(addr, &self.arg_ptrs, l.device_memory_size);
            l.start = crate::legacy::region::RegionStart::Given { addr, doubts };
            self.valloc_addr = addr;
        }
        self
    }

    /// The address range the replayer must reserve. LLVM replays reserve the whole `VAllocSize`
    /// at `VAllocAddr` (llvm-record-format.md §4.4); rr-tui records list segments.
    pub fn reservation(&self) -> (u64, u64) {
        (self.valloc_addr, self.valloc_size)
    }

    /// Where the device image is kept, as the layout keeps it (the descriptor alone: it does not
    /// know its own file name). One rule for every reader that names the image without opening
    /// it; [`crate::InstanceFiles::image`] gives the path.
    pub fn image_kept(&self) -> ImageKept<'_> {
        match &self.cuda {
            Some(c) => ImageKept::Shared(&c.image_file),
            None if self.format == RecordFormat::LegacyLlvm16 => ImageKept::NotRecorded,
            None => ImageKept::BesideDescriptor,
        }
    }

    /// The launch arguments, in order. LLVM: `ArgPtrs[i] + ArgOffsets[i]`, 8 bytes each.
    pub fn arguments(&self) -> Vec<Argument> {
        match &self.cuda {
            Some(c) => c
                .param_layout
                .iter()
                .enumerate()
                .map(|(index, slot)| {
                    // The parser bounds-checked every slot; `get` keeps hand-built values safe too.
                    let start = slot.offset as usize;
                    let bytes = c
                        .param_buffer
                        .get(start..start.saturating_add(slot.size as usize))
                        .unwrap_or(&[])
                        .to_vec();
                    let word = (bytes.len() == 8)
                        .then(|| u64::from_le_bytes(bytes[..8].try_into().unwrap_or([0; 8])));
                    Argument { index, bytes, word }
                })
                .collect(),
            None => self
                .arg_ptrs
                .iter()
                .zip(&self.arg_offsets)
                .enumerate()
                .map(|(index, (&p, &o))| {
                    let v = p.wrapping_add(o as u64);
                    Argument {
                        index,
                        bytes: v.to_le_bytes().to_vec(),
                        word: Some(v),
                    }
                })
                .collect(),
        }
    }
}

/// Where an instance's device image is kept ([`Descriptor::image_kept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKept<'a> {
    /// rr-tui records: a file shared by the instances of a module (`ImageFile`, relative to the
    /// record directory).
    Shared(&'a str),
    /// LLVM records (2026, and 18–22): the instance's own `<stem>.image` beside its descriptor.
    BesideDescriptor,
    /// LLVM 16–17 never saved the image.
    NotRecorded,
}

impl ImageKept<'_> {
    /// In words, for a line that names the image without the instance's file name.
    pub fn describe(&self) -> String {
        match self {
            ImageKept::Shared(path) => crate::text::visible(path).into_owned(),
            ImageKept::BesideDescriptor => {
                format!("own .{} beside the .json", crate::ext::EXT_IMAGE)
            }
            ImageKept::NotRecorded => "not recorded (LLVM 16–17)".into(),
        }
    }
}

/// The keys of one descriptor object, read with LLVM's messages.
pub(crate) struct Fields<'a> {
    pub(crate) obj: &'a Map<String, Value>,
    pub(crate) path: &'a Path,
}

impl Fields<'_> {
    pub(crate) fn err(&self, p: String) -> Error {
        Error::format(self.path, p)
    }
    pub(crate) fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }
    pub(crate) fn int(&self, key: &str) -> Result<i64> {
        match self.obj.get(key) {
            Some(v) => v
                .as_i64()
                .or_else(|| v.as_u64().map(|u| u as i64))
                .ok_or_else(|| self.err(format!("failed to read JSON integer {key}"))),
            None => Err(self.err(format!("failed to read JSON integer {key}"))),
        }
    }
    pub(crate) fn int_in(&self, key: &str, lo: i64, hi: i64) -> Result<i64> {
        let v = self.int(key)?;
        if v < lo || v > hi {
            return Err(self.err(format!(
                "failed to read JSON integer {key}: {v} is out of range"
            )));
        }
        Ok(v)
    }
    pub(crate) fn uint(&self, key: &str, max: u64) -> Result<u64> {
        let v = self.obj.get(key).and_then(Value::as_u64).ok_or_else(|| {
            match self.obj.get(key).and_then(Value::as_i64) {
                Some(n) => self.err(format!(
                    "failed to read JSON integer {key}: {n} is negative"
                )),
                None => self.err(format!("failed to read JSON integer {key}")),
            }
        })?;
        if v > max {
            return Err(self.err(format!(
                "failed to read JSON integer {key}: {v} is out of range"
            )));
        }
        Ok(v)
    }
    pub(crate) fn string(&self, key: &str) -> Result<String> {
        self.obj
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.err(format!("failed to read JSON string {key}")))
    }
    // The keys every generation of descriptor has (LLVM 16 to rr-tui's own), read in one place;
    // `insert_common_keys` writes them.
    pub(crate) fn name(&self) -> Result<String> {
        let name = self.string("Name")?;
        if name.is_empty() {
            return Err(self.err("Name is empty".into()));
        }
        Ok(name)
    }
    pub(crate) fn num_args(&self) -> Result<u32> {
        Ok(self.uint("NumArgs", u32::MAX as u64)? as u32)
    }
    pub(crate) fn loop_trip_count(&self) -> Result<u64> {
        Ok(self.int("LoopTripCount")? as u64)
    }
    pub(crate) fn device_id(&self) -> Result<i32> {
        Ok(self.int_in("DeviceId", i32::MIN as i64, i32::MAX as i64)? as i32)
    }
    /// `ArgPtrs` (signed in the file: addresses reinterpreted as unsigned) and `ArgOffsets`, of
    /// equal length.
    pub(crate) fn arguments(&self) -> Result<(Vec<u64>, Vec<i64>)> {
        let arg_ptrs: Vec<u64> = self
            .int_array("ArgPtrs")?
            .into_iter()
            .map(|v| v as u64)
            .collect();
        let arg_offsets = self.int_array("ArgOffsets")?;
        if arg_ptrs.len() != arg_offsets.len() {
            return Err(self.err(format!(
                "ArgPtrs has {} entries but ArgOffsets has {}",
                arg_ptrs.len(),
                arg_offsets.len()
            )));
        }
        Ok((arg_ptrs, arg_offsets))
    }

    pub(crate) fn int_array(&self, key: &str) -> Result<Vec<i64>> {
        let arr = self
            .obj
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| self.err(format!("failed to read JSON array {key}")))?;
        arr.iter()
            .map(|v| {
                v.as_i64()
                    .or_else(|| v.as_u64().map(|u| u as i64))
                    .ok_or_else(|| {
                        self.err(format!("failed to read an integer from JSON array {key}"))
                    })
            })
            .collect()
    }
}

/// Write the keys every generation of descriptor has, as [`Fields`] reads them: `Name`,
/// `NumArgs`, `LoopTripCount`, `DeviceId`, and `ArgPtrs` (addresses as i64) with `ArgOffsets`.
pub(crate) fn insert_common_keys(d: &Descriptor, m: &mut Map<String, Value>) {
    m.insert("Name".into(), d.name.clone().into());
    m.insert("NumArgs".into(), d.num_args.into());
    m.insert("LoopTripCount".into(), d.loop_trip_count.into());
    m.insert("DeviceId".into(), d.device_id.into());
    m.insert(
        "ArgPtrs".into(),
        Value::from(d.arg_ptrs.iter().map(|&p| p as i64).collect::<Vec<_>>()),
    );
    m.insert("ArgOffsets".into(), Value::from(d.arg_offsets.clone()));
}

pub fn hex_encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

pub fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}
