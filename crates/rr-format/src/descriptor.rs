//! The JSON descriptor of one recorded instance (llvm-record-format.md §2, FORMAT.md).
//!
//! Parsed by hand from `serde_json::Value` rather than derived, so that every missing or mistyped
//! key gets LLVM's own message (`failed to read JSON integer NumTeams`) and so that signed 64-bit
//! addresses (`intptr_t` printed negative) are reinterpreted instead of rejected.

use serde_json::{Map, Value};
use std::path::Path;

use crate::error::{Error, Result};
use crate::objects::{ObjectArg, OutsideWord, SegmentKind};

/// No GPU has a terabyte of memory; larger sizes are corrupt descriptors, not big recordings.
pub const MAX_REGION_BYTES: u64 = 1 << 40;
/// The largest kernel parameter buffer CUDA accepts (32 764 bytes on Volta+, CUDA ≥ 12.1).
pub const MAX_PARAM_BYTES: usize = 32 * 1024;
/// The newest format version of rr-tui's own records (`RrTuiFormat`); this build reads 1 and 2.
/// Version 2 stores snapshot contents per segment in content-addressed blobs (FORMAT.md).
pub const RR_FORMAT_VERSION: u64 = 2;
/// In version 2, segment offsets in the (virtual) snapshot are multiples of this, so each
/// segment's blob can be memory-mapped in place.
pub const SEGMENT_ALIGN: u64 = 4096;

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
    /// An 18.x–22.x record whose `ArgPtrs` do not tell which (see [`crate::legacy::classify`]).
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
}

/// One contiguous piece of recorded memory: `size` bytes at device address `addr`, stored at
/// `offset` in the snapshot files. Most segments are device memory; rr-tui records also hold
/// mapped host memory and the contents of CUDA arrays ([`SegmentKind`]; an array has no address,
/// its `addr` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    pub addr: u64,
    pub size: u64,
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
}

/// Where a segment's bytes are stored in a version-2 record: blob ids (32 lowercase hex digits
/// of XXH3-128) in `blobs/`, before and after the kernel. `output` is `None` when the output was
/// not recorded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SegmentContent {
    pub input: String,
    pub output: Option<String>,
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
    pub loop_trip_count: u64,
    pub device_id: i32,
    pub valloc_addr: u64,
    pub valloc_size: u64,
    pub teams_limits: [u32; 2],
    pub threads_limits: [u32; 2],
    /// Pointers, or by-value words of any 64 bits (a double's): decimal strings in `--json`.
    #[serde(serialize_with = "crate::text::u64s_as_strings")]
    pub arg_ptrs: Vec<u64>,
    pub arg_offsets: Vec<i64>,
    pub cuda: Option<CudaLaunch>,
    /// Legacy records only (LLVM 16–22): what they have instead of the 2026 keys.
    pub legacy: Option<crate::legacy::Legacy>,
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
            l.start = crate::legacy::RegionStart::Given { addr, doubts };
            self.valloc_addr = addr;
        }
        self
    }

    /// The address range the replayer must reserve. LLVM replays reserve the whole `VAllocSize`
    /// at `VAllocAddr` (llvm-record-format.md §4.4); rr-tui records list segments.
    pub fn reservation(&self) -> (u64, u64) {
        (self.valloc_addr, self.valloc_size)
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

    /// Parse descriptor text; `path` is only used in messages.
    pub fn parse(text: &[u8], path: &Path) -> Result<Descriptor> {
        let err = |p: String| Error::format(path, p);
        let value: Value =
            serde_json::from_slice(text).map_err(|e| err(format!("invalid JSON: {e}")))?;
        let obj = value
            .as_object()
            .ok_or_else(|| err("invalid JSON file: the top level is not an object".into()))?;
        let f = Fields { obj, path };
        if crate::legacy::is_legacy(obj) {
            return crate::legacy::parse(&f);
        }
        let format = if obj.contains_key("RrTuiFormat") {
            let v = f.uint("RrTuiFormat", u64::MAX)?;
            if !(1..=RR_FORMAT_VERSION).contains(&v) {
                return Err(err(format!("rr-tui format version {v} is not supported (this build reads 1 to {RR_FORMAT_VERSION}); a newer rr-tui wrote it")));
            }
            RecordFormat::RrTui
        } else if obj.contains_key("NumTeams") {
            RecordFormat::Llvm
        } else if obj.contains_key("NumTeamsClause") {
            RecordFormat::LlvmApril2026
        } else {
            return Err(err("failed to read JSON integer NumTeams".into()));
        };
        let april = format == RecordFormat::LlvmApril2026;
        let name = f.string("Name")?;
        if name.is_empty() {
            return Err(err("Name is empty".into()));
        }
        let num_args = f.uint("NumArgs", u32::MAX as u64)? as u32;
        let num_teams = f.uint(
            if april { "NumTeamsClause" } else { "NumTeams" },
            u32::MAX as u64,
        )? as u32;
        let num_threads = f.uint(
            if april {
                "ThreadLimitClause"
            } else {
                "NumThreads"
            },
            u32::MAX as u64,
        )? as u32;
        let shared_memory_size = f.uint("SharedMemorySize", u32::MAX as u64)? as u32;
        let loop_trip_count = f.int("LoopTripCount")? as u64;
        let device_id = f.int_in("DeviceId", i32::MIN as i64, i32::MAX as i64)? as i32;
        let valloc_addr = f.int("VAllocAddr")? as u64;
        let valloc_size = f.int("VAllocSize")? as u64;
        // LLVM's region is committed memory; an rr-tui record's VAllocSize only spans its
        // segments (managed and device allocations can lie terabytes apart), whose total is
        // bounded below.
        if valloc_size > MAX_REGION_BYTES && format != RecordFormat::RrTui {
            return Err(err(format!(
                "VAllocSize {valloc_size} is larger than any GPU's memory (rr-tui accepts at most {MAX_REGION_BYTES} bytes)"
            )));
        }
        if valloc_addr.checked_add(valloc_size).is_none() {
            return Err(err(
                "VAllocAddr + VAllocSize overflows the address space".into()
            ));
        }
        let limits = |key: &str| -> Result<[u32; 2]> {
            if !obj.contains_key(key) && april {
                return Ok([0, 0]);
            }
            let v = f.int_array(key)?;
            if v.len() != 2 {
                return Err(err(
                    "TeamsLimits and ThreadsLimits must have a min and max".into()
                ));
            }
            let conv = |x: i64| {
                u32::try_from(x)
                    .map_err(|_| err(format!("failed to read an integer from JSON array {key}")))
            };
            Ok([conv(v[0])?, conv(v[1])?])
        };
        let teams_limits = limits("TeamsLimits")?;
        let threads_limits = limits("ThreadsLimits")?;
        let (arg_ptrs, arg_offsets) = f.arguments()?;
        let cuda = if format == RecordFormat::RrTui {
            let version = f.uint("RrTuiFormat", RR_FORMAT_VERSION)?;
            Some(parse_cuda(&f, version, valloc_addr, valloc_size)?)
        } else {
            None
        };
        let expected_args = cuda
            .as_ref()
            .map(|c| c.param_layout.len())
            .unwrap_or(arg_ptrs.len());
        if num_args as usize != expected_args {
            return Err(err(format!(
                "NumArgs is {num_args} but {} lists {expected_args} arguments",
                if cuda.is_some() {
                    "ParamLayout"
                } else {
                    "ArgPtrs"
                }
            )));
        }
        Ok(Descriptor {
            format,
            name,
            num_args,
            num_teams,
            num_threads,
            shared_memory_size,
            loop_trip_count,
            device_id,
            valloc_addr,
            valloc_size,
            teams_limits,
            threads_limits,
            arg_ptrs,
            arg_offsets,
            cuda,
            legacy: None,
        })
    }

    /// Read and parse a descriptor file (a regular file of plausible size; see [`crate::fsio`]).
    pub fn read(path: &Path) -> Result<Descriptor> {
        let text =
            crate::fsio::read_limited(path, crate::fsio::MAX_DESCRIPTOR_BYTES, "descriptor")?;
        Descriptor::parse(&text, path)
    }

    /// Serialise as libomptarget does: compact, keys sorted, decimal integers, addresses as i64.
    pub fn to_json(&self) -> String {
        if let Some(l) = &self.legacy {
            return crate::legacy::to_json(self, l);
        }
        let mut m = Map::new();
        let i = |v: u64| Value::from(v as i64);
        m.insert("Name".into(), self.name.clone().into());
        m.insert("NumArgs".into(), self.num_args.into());
        m.insert("NumTeams".into(), self.num_teams.into());
        m.insert("NumThreads".into(), self.num_threads.into());
        m.insert("SharedMemorySize".into(), self.shared_memory_size.into());
        m.insert("LoopTripCount".into(), self.loop_trip_count.into());
        m.insert("DeviceId".into(), self.device_id.into());
        m.insert("VAllocAddr".into(), i(self.valloc_addr));
        m.insert("VAllocSize".into(), self.valloc_size.into());
        m.insert(
            "TeamsLimits".into(),
            Value::from(self.teams_limits.to_vec()),
        );
        m.insert(
            "ThreadsLimits".into(),
            Value::from(self.threads_limits.to_vec()),
        );
        m.insert(
            "ArgPtrs".into(),
            Value::from(self.arg_ptrs.iter().map(|&p| p as i64).collect::<Vec<_>>()),
        );
        m.insert("ArgOffsets".into(), Value::from(self.arg_offsets.clone()));
        if let Some(c) = &self.cuda {
            m.insert(
                "RrTuiFormat".into(),
                (if c.content.is_some() { 2u64 } else { 1 }).into(),
            );
            m.insert("Grid".into(), Value::from(c.grid.to_vec()));
            m.insert("Block".into(), Value::from(c.block.to_vec()));
            m.insert("ParamBuffer".into(), hex_encode(&c.param_buffer).into());
            m.insert(
                "ParamLayout".into(),
                Value::from(
                    c.param_layout
                        .iter()
                        .map(|s| Value::from(vec![s.offset, s.size]))
                        .collect::<Vec<_>>(),
                ),
            );
            let segs = c
                .segments
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let mut o = Map::new();
                    o.insert("Addr".into(), i(s.addr));
                    o.insert("Size".into(), s.size.into());
                    o.insert("Offset".into(), s.offset.into());
                    crate::objects::kind_to_json(&s.kind, &mut o);
                    if let Some(content) = c.content.as_ref().and_then(|v| v.get(k)) {
                        o.insert("Input".into(), content.input.clone().into());
                        if let Some(out) = &content.output {
                            o.insert("Output".into(), out.clone().into());
                        }
                    }
                    Value::Object(o)
                })
                .collect::<Vec<_>>();
            m.insert("Segments".into(), Value::from(segs));
            if let Some(cd) = c.cluster_dim {
                m.insert("ClusterDim".into(), Value::from(cd.to_vec()));
            }
            m.insert("Cooperative".into(), c.cooperative.into());
            m.insert("Occurrence".into(), c.occurrence.into());
            m.insert("ImageFile".into(), c.image_file.clone().into());
            if !c.objects.is_empty() {
                m.insert(
                    "Objects".into(),
                    Value::from(c.objects.iter().map(|o| o.to_json()).collect::<Vec<_>>()),
                );
            }
            if c.from_graph {
                m.insert("FromGraph".into(), true.into());
            }
            if let Some(out) = &c.outside {
                m.insert(
                    "OutsidePointers".into(),
                    Value::from(out.iter().map(|o| o.to_json()).collect::<Vec<_>>()),
                );
            }
            if let Some(why) = &c.unreplayable {
                m.insert("Unreplayable".into(), why.clone().into());
            }
        }
        // serde_json's Map is a BTreeMap without `preserve_order`: keys come out sorted, as LLVM's.
        Value::Object(m).to_string()
    }
}

fn parse_cuda(f: &Fields, version: u64, valloc_addr: u64, valloc_size: u64) -> Result<CudaLaunch> {
    let err = |p: String| Error::format(f.path, p);
    let dim3 = |key: &str| -> Result<[u32; 3]> {
        let v = f.int_array(key)?;
        if v.len() != 3 || v.iter().any(|&x| x < 1 || x > u32::MAX as i64) {
            return Err(err(format!("{key} must be three positive integers")));
        }
        Ok([v[0] as u32, v[1] as u32, v[2] as u32])
    };
    let grid = dim3("Grid")?;
    let block = dim3("Block")?;
    let param_buffer = hex_decode(&f.string("ParamBuffer")?)
        .ok_or_else(|| err("ParamBuffer is not an even-length hex string".into()))?;
    if param_buffer.len() > MAX_PARAM_BYTES {
        return Err(err(format!(
            "ParamBuffer has {} bytes; CUDA allows at most {MAX_PARAM_BYTES}",
            param_buffer.len()
        )));
    }
    let layout_v = f
        .obj
        .get("ParamLayout")
        .and_then(Value::as_array)
        .ok_or_else(|| err("failed to read JSON array ParamLayout".into()))?;
    let mut param_layout = Vec::with_capacity(layout_v.len());
    for item in layout_v {
        let pair = item
            .as_array()
            .filter(|a| a.len() == 2)
            .and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?)));
        let (offset, size) =
            pair.ok_or_else(|| err("ParamLayout entries must be [offset, size]".into()))?;
        if offset
            .checked_add(size)
            .is_none_or(|end| end > param_buffer.len() as u64)
            || size == 0
        {
            return Err(err(format!(
                "ParamLayout entry [{offset}, {size}] lies outside the {}-byte ParamBuffer",
                param_buffer.len()
            )));
        }
        param_layout.push(ParamSlot {
            offset: offset as u32,
            size: size as u32,
        });
    }
    let segs_v = f
        .obj
        .get("Segments")
        .and_then(Value::as_array)
        .ok_or_else(|| err("failed to read JSON array Segments".into()))?;
    let mut segments = Vec::with_capacity(segs_v.len());
    let mut content = Vec::new();
    let mut file_end = 0u64;
    for (i, s) in segs_v.iter().enumerate() {
        let get = |k: &str| s.get(k).and_then(Value::as_i64);
        let (Some(addr), Some(size), Some(offset)) = (get("Addr"), get("Size"), get("Offset"))
        else {
            return Err(err(format!(
                "Segments[{i}] needs integer Addr, Size and Offset"
            )));
        };
        let kind = s
            .as_object()
            .ok_or_else(|| err(format!("Segments[{i}] must be an object")))
            .and_then(|o| {
                crate::objects::kind_from_json(o, &format!("Segments[{i}]")).map_err(err)
            })?;
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
        if version >= 2 && (seg.offset < file_end || seg.offset % SEGMENT_ALIGN != 0) {
            return Err(err(format!(
                "Segments[{i}] starts at offset {} but must start at a multiple of {SEGMENT_ALIGN} at or after {file_end}",
                seg.offset
            )));
        }
        if version >= 2 {
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
            content.push(SegmentContent {
                input,
                output: blob("Output")?,
            });
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
    let cluster_dim = if f.obj.contains_key("ClusterDim") {
        Some(dim3("ClusterDim")?)
    } else {
        None
    };
    let cooperative = match f.obj.get("Cooperative") {
        None => false,
        Some(v) => v
            .as_bool()
            .ok_or_else(|| err("Cooperative must be true or false".into()))?,
    };
    let occurrence = f.uint("Occurrence", u64::MAX)?;
    let image_file = f.string("ImageFile")?;
    if let Err(why) = crate::fsio::check_relative(&image_file) {
        return Err(err(format!(
            "ImageFile {image_file:?} {why}: it must be a relative path inside the record directory"
        )));
    }
    let kinds: Vec<SegmentKind> = segments.iter().map(|s| s.kind).collect();
    let list = |key: &str| -> Result<&Vec<Value>> {
        let v = f
            .obj
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| err(format!("{key} must be an array")))?;
        // At most one entry per 8-byte word of the parameter buffer.
        if v.len() > MAX_PARAM_BYTES / 8 {
            return Err(err(format!(
                "{key} has {} entries; at most {} fit the parameter buffer",
                v.len(),
                MAX_PARAM_BYTES / 8
            )));
        }
        Ok(v)
    };
    let mut objects: Vec<ObjectArg> = Vec::new();
    if f.obj.contains_key("Objects") {
        for (i, v) in list("Objects")?.iter().enumerate() {
            let o = ObjectArg::from_json(v, &format!("Objects[{i}]"), param_buffer.len(), &kinds)
                .map_err(err)?;
            if objects.iter().any(|p| p.offset == o.offset) {
                return Err(err(format!(
                    "Objects[{i}] is at the same Offset as another object"
                )));
            }
            objects.push(o);
        }
    }
    let outside = if f.obj.contains_key("OutsidePointers") {
        let mut out = Vec::new();
        for (i, v) in list("OutsidePointers")?.iter().enumerate() {
            out.push(
                OutsideWord::from_json(v, &format!("OutsidePointers[{i}]"), param_buffer.len())
                    .map_err(err)?,
            );
        }
        Some(out)
    } else {
        None
    };
    let from_graph = match f.obj.get("FromGraph") {
        None => false,
        Some(v) => v
            .as_bool()
            .ok_or_else(|| err("FromGraph must be true or false".into()))?,
    };
    let words = crate::memory::words_of(
        &param_buffer,
        param_layout.iter().map(|s| (s.offset, s.size)),
    );
    crate::objects::check_words(&objects, outside.as_deref().unwrap_or_default(), &words)
        .map_err(err)?;
    let unreplayable = match f.obj.get("Unreplayable") {
        None => None,
        Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= 1000 => Some(s.clone()),
        Some(_) => {
            return Err(err(
                "Unreplayable must be a reason of 1 to 1000 bytes".into()
            ))
        }
    };
    // The recorder always says why; a record that does not still cannot be replayed.
    let unreplayable = unreplayable.or_else(|| {
        objects
            .iter()
            .any(|o| o.resource == crate::objects::Resource::MipmappedArray)
            .then(|| "a texture over a mipmapped array, which rr-tui does not record".into())
    });
    Ok(CudaLaunch {
        grid,
        block,
        param_buffer,
        param_layout,
        segments,
        cluster_dim,
        cooperative,
        occurrence,
        image_file,
        content: (version >= 2).then_some(content),
        objects,
        from_graph,
        outside,
        unreplayable,
    })
}

/// The keys of one descriptor object, read with LLVM's messages.
pub(crate) struct Fields<'a> {
    obj: &'a Map<String, Value>,
    path: &'a Path,
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

pub fn hex_encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

pub fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InstanceFiles;

    const SAMPLE: &str = r#"{"ArgOffsets":[0,0,0],"ArgPtrs":[23335631060992,1000,-1],"DeviceId":0,"LoopTripCount":1000,"Name":"__omp_offloading_10302_1e5d1a_main_l27","NumArgs":3,"NumTeams":8,"NumThreads":128,"SharedMemorySize":0,"TeamsLimits":[0,0],"ThreadsLimits":[1,128],"VAllocAddr":23335631060992,"VAllocSize":8589934592}"#;

    fn parse(s: &str) -> Result<Descriptor> {
        Descriptor::parse(s.as_bytes(), Path::new("x.json"))
    }

    #[test]
    fn parses_the_documented_sample_and_round_trips() {
        let d = parse(SAMPLE).unwrap();
        assert_eq!(d.format, RecordFormat::Llvm);
        assert_eq!(d.valloc_addr, 0x153940000000);
        assert_eq!(d.arg_ptrs[2], u64::MAX);
        assert_eq!(d.arguments()[2].word, Some(u64::MAX));
        assert_eq!(d.to_json(), SAMPLE);
    }

    #[test]
    fn april_aliases_and_missing_limits() {
        let s = r#"{"ArgOffsets":[0],"ArgPtrs":[1],"DeviceId":0,"LoopTripCount":0,"Name":"k","NumArgs":1,"NumTeamsClause":4,"ThreadLimitClause":64,"SharedMemorySize":0,"VAllocAddr":4096,"VAllocSize":4096}"#;
        let d = parse(s).unwrap();
        assert_eq!(d.format, RecordFormat::LlvmApril2026);
        assert_eq!((d.num_teams, d.num_threads), (4, 64));
        assert_eq!(d.teams_limits, [0, 0]);
    }

    #[test]
    fn errors_use_llvm_wording() {
        let e = parse(&SAMPLE.replace("\"NumThreads\":128,", ""))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "x.json: failed to read JSON integer NumThreads");
        let e = parse(&SAMPLE.replace("\"ThreadsLimits\":[1,128]", "\"ThreadsLimits\":[1]"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("must have a min and max"), "{e}");
        let e = parse(&SAMPLE.replace("\"NumArgs\":3", "\"NumArgs\":2"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("NumArgs is 2 but ArgPtrs lists 3"), "{e}");
        let e = parse(&SAMPLE.replace("8589934592", "4611686018427387904"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger than any GPU"), "{e}");
        let e = parse("[1,2").unwrap_err().to_string();
        assert!(e.starts_with("x.json: invalid JSON"), "{e}");
        let e = parse(r#"{"BumpAllocVAStart":1}"#).unwrap_err().to_string();
        assert_eq!(e, "x.json: failed to read JSON string Name");
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_garbage(text in "\\PC{0,300}") {
            let _ = parse(&text);
        }

        #[test]
        fn never_panics_on_mutated_descriptors(pos in 0usize..SAMPLE.len(), byte in proptest::prelude::any::<u8>(), cut in 0usize..SAMPLE.len()) {
            let mut b = SAMPLE.as_bytes().to_vec();
            b[pos] = byte;
            let _ = Descriptor::parse(&b, Path::new("m"));
            let _ = Descriptor::parse(&SAMPLE.as_bytes()[..cut], Path::new("m"));
        }

        #[test]
        fn never_panics_on_wild_values(v in proptest::prelude::any::<i64>(), key in 0usize..13) {
            let keys = ["NumArgs","NumTeams","NumThreads","SharedMemorySize","LoopTripCount","DeviceId","VAllocAddr","VAllocSize","ArgPtrs","ArgOffsets","TeamsLimits","ThreadsLimits","Name"];
            let mut obj: serde_json::Value = serde_json::from_str(SAMPLE).unwrap();
            obj[keys[key]] = serde_json::Value::from(v);
            let _ = parse(&obj.to_string());
        }
    }

    /// Any JSON value a hostile writer might put under a key.
    fn wild_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (0u64..64).prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::btree_map("[A-Za-z]{1,8}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// rr-tui records with every extension key replaced by anything: parsing never panics,
        /// and whatever parses can be used (arguments, memory map, JSON) without panicking and
        /// round-trips.
        #[test]
        fn rr_extension_survives_wild_values(
            key in 0usize..16,
            v in wild_value(),
            kind in wild_value(),
            seg_addr in proptest::prelude::any::<i64>(),
            seg_size in proptest::prelude::any::<i64>(),
            slot in (proptest::prelude::any::<u64>(), proptest::prelude::any::<u64>()),
            input_len in proptest::prelude::any::<u64>(),
        ) {
            let keys = ["Grid", "Block", "ParamBuffer", "ParamLayout", "Segments", "ClusterDim", "Cooperative", "Occurrence", "ImageFile", "RrTuiFormat", "VAllocAddr", "VAllocSize", "Objects", "FromGraph", "OutsidePointers", "Unreplayable"];
            let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
            let c = d.cuda.as_mut().unwrap();
            c.param_buffer = vec![0; 16];
            c.param_layout = vec![ParamSlot { offset: 0, size: 8 }, ParamSlot { offset: 8, size: 8 }];
            d.num_args = 2;
            let mut obj: Value = serde_json::from_str(&d.to_json()).unwrap();
            obj["Segments"][0]["Addr"] = Value::from(seg_addr);
            obj["Segments"][0]["Size"] = Value::from(seg_size);
            obj["ParamLayout"][1] = Value::from(vec![slot.0, slot.1]);
            obj["Segments"][0]["Kind"] = kind;
            obj[keys[key]] = v;
            if let Ok(d) = parse(&obj.to_string()) {
                let _ = crate::memory::outside_words(&d);
                let args = d.arguments();
                let _ = crate::memory::MemoryMap::new(&d, input_len);
                let _ = crate::memory::MemoryMap::from_parts(d.segments(input_len), &args);
                let _ = InstanceFiles::expected_stem(&d);
                proptest::prop_assert_eq!(parse(&d.to_json()).unwrap(), d);
            }
        }
    }

    #[test]
    fn overflowing_layout_and_segments_are_errors_not_panics() {
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        d.num_args = 1;
        d.cuda.as_mut().unwrap().param_buffer = vec![0; 8];
        d.cuda.as_mut().unwrap().param_layout = vec![ParamSlot { offset: 0, size: 8 }];
        let mut v: Value = serde_json::from_str(&d.to_json()).unwrap();
        v["ParamLayout"] = serde_json::json!([[u64::MAX, 8]]);
        let e = parse(&v.to_string()).unwrap_err().to_string();
        assert!(e.contains("lies outside the 8-byte ParamBuffer"), "{e}");
        let mut v: Value = serde_json::from_str(&d.to_json()).unwrap();
        v["Segments"] = serde_json::json!([{"Addr": -1, "Size": 16, "Offset": 0}]);
        assert!(parse(&v.to_string()).is_err());
        let mut v: Value = serde_json::from_str(&d.to_json()).unwrap();
        v["ImageFile"] = "images/../../etc/passwd".into();
        assert!(parse(&v.to_string())
            .unwrap_err()
            .to_string()
            .contains("contains `..`"));
    }

    /// Objects and outside words name parameter words that are there, with their values, once
    /// each; a blank reason is no reason; a mipmapped texture is unreplayable even unsaid.
    #[test]
    fn objects_and_outside_words_agree_with_the_parameters() {
        use crate::objects::{ObjectArg, ObjectKind, OutsideWord, Resource, TextureDesc};
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        d.num_args = 2;
        let c = d.cuda.as_mut().unwrap();
        c.param_buffer = [5u64.to_le_bytes(), 9u64.to_le_bytes()].concat();
        c.param_layout = vec![
            ParamSlot { offset: 0, size: 8 },
            ParamSlot { offset: 8, size: 8 },
        ];
        c.outside = Some(vec![OutsideWord {
            offset: 0,
            value: 5,
            what: "host memory".into(),
        }]);
        let good: Value = serde_json::from_str(&d.to_json()).unwrap();
        assert!(parse(&good.to_string()).is_ok());
        let edits: [(&str, Value, &str); 4] = [
            ("Value", "6".into(), "not the parameter word"),
            ("Offset", 4.into(), "not an 8-byte word"),
            ("dup", Value::Null, "named already"),
            ("Unreplayable", "   ".into(), "Unreplayable"),
        ];
        for (key, value, want) in edits {
            let mut v = good.clone();
            match key {
                "dup" => {
                    let w = v["OutsidePointers"][0].clone();
                    v["OutsidePointers"].as_array_mut().unwrap().push(w);
                }
                "Unreplayable" => v[key] = value,
                _ => v["OutsidePointers"][0][key] = value,
            }
            let e = parse(&v.to_string()).unwrap_err().to_string();
            assert!(e.contains(want), "{key}: {e}");
        }
        let c = d.cuda.as_mut().unwrap();
        c.objects = vec![ObjectArg {
            offset: 8,
            kind: ObjectKind::Texture,
            handle: 9,
            resource: Resource::MipmappedArray,
            texture: Some(TextureDesc::default()),
            view: None,
        }];
        let back = parse(&d.to_json()).unwrap();
        let why = back.cuda.unwrap().unreplayable.unwrap();
        assert!(why.contains("mipmapped"), "{why}");
    }

    #[test]
    fn rr_extension_round_trips() {
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        d.name = "_Z3addPfS_i".into();
        d.num_args = 2;
        d.num_teams = 4;
        d.num_threads = 32;
        let c = d.cuda.as_mut().unwrap();
        c.grid = [4, 2, 1];
        c.block = [32, 1, 1];
        c.param_buffer = vec![0, 0, 0, 0, 0, 0x7f, 0, 0, 7, 0, 0, 0];
        c.param_layout = vec![
            ParamSlot { offset: 0, size: 8 },
            ParamSlot { offset: 8, size: 4 },
        ];
        c.cluster_dim = Some([2, 1, 1]);
        c.occurrence = 3;
        c.image_file = "images/1.cubin".into();
        let back = parse(&d.to_json()).unwrap();
        assert_eq!(back, d);
        assert_eq!(back.arguments()[0].word, Some(0x7f00_0000_0000));
        assert_eq!(back.arguments()[1].word, None);
    }
}
