//! What `rr-tui inspect` shows of one instance, as data (for `--json` and the explorer), as
//! text lines, and as named fields (the explorer's side-by-side descriptor diff). Reads the
//! descriptor, the globals and the image; snapshots only by size.
//!
//! The JSON form is plain data: numbers as numbers, and a part that could not be read is
//! `null` with a `*_problem` string beside it (never `{"Ok": …}` / `{"Err": …}`).

use std::path::{Path, PathBuf};

use super::descriptor::{Argument, Descriptor, Segment};
use super::globals::Globals;
use super::image::{self, ImageInfo, ImageKind};
use super::instance::{InstanceFiles, Side};
use super::memory::MemoryMap;
use crate::error::Result;

/// Bytes of each global's data kept for display and comparison (the hash covers all of it).
pub const GLOBAL_PREVIEW_BYTES: usize = 16;

/// What one launch argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgKind {
    /// Points into recorded memory.
    Pointer,
    /// Points into the reserved region, past the recorded bytes.
    Reserved,
    /// LLVM's `dyn_ptr` of ~0 (no reduction buffer).
    Sentinel,
    /// Passed by value.
    Value,
    /// LLVM 19–22: the host address of the argument's slot; the value was not recorded.
    Lost,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArgInfo {
    pub index: usize,
    pub kind: ArgKind,
    /// Bytes of the parameter as launched.
    pub size: usize,
    /// The parameter's bytes in hex (LLVM's 8-byte words as one `0x…` number).
    pub hex: String,
    /// The segment a pointer points into.
    pub segment: Option<usize>,
    /// Offset of the pointed-to byte in its segment (or, `reserved`, in the reserved region).
    pub offset: Option<u64>,
    /// Bytes from there up to the next argument pointer (records do not store buffer lengths).
    pub extent: Option<u64>,
    /// A by-value parameter of 1, 2, 4 or 8 bytes as an unsigned little-endian integer (a
    /// decimal string in JSON, as every 64-bit value: doubles would round it).
    #[serde(serialize_with = "crate::text::opt_u64_as_string")]
    pub value: Option<u64>,
    /// Text for `inspect`: where a pointer points, or a value in decimal and hex.
    #[serde(skip)]
    pub meaning: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GlobalInfo {
    pub name: String,
    pub size: u64,
    /// The first [`GLOBAL_PREVIEW_BYTES`] bytes of the data, in hex.
    pub preview_hex: String,
    /// XXH3-64 of the whole data, to tell changed values apart beyond the preview (a decimal
    /// string in JSON: hashes exceed 2^53).
    #[serde(serialize_with = "crate::text::u64_as_string")]
    pub xxh3: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageSummary {
    pub kind: String,
    /// The SM architecture of a cubin (90 for sm_90).
    pub sm: Option<u32>,
    pub size: u64,
    pub kernels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SnapshotSizes {
    pub record_input_bytes: Option<u64>,
    /// Why the size is unknown (missing, not a regular file).
    pub record_input_problem: Option<String>,
    pub record_output_bytes: Option<u64>,
    pub record_output_problem: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Inspection {
    pub descriptor_path: PathBuf,
    pub format: &'static str,
    /// The layout in words: what it holds and lacks.
    pub layout: &'static str,
    /// Legacy records: facts a reader needs (the generation's evidence, the region start and
    /// how it is known, a derived geometry, files the generation never wrote).
    pub notes: Vec<Note>,
    /// Why the instance cannot be replayed, when it cannot.
    pub unreplayable: Option<String>,
    pub kernel: String,
    pub kernel_demangled: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_memory_bytes: u32,
    /// The memory as allocated: an allocation recorded in chunks is one segment here.
    pub segments: Vec<Segment>,
    /// The descriptor's segments each of `segments` joins (its name: `segment 4–19`).
    pub chunks: Vec<crate::descriptor::Chunks>,
    pub arguments: Vec<ArgInfo>,
    pub globals: Vec<GlobalInfo>,
    /// False when the record's generation records no globals (LLVM 16–17) and it has none.
    pub globals_recorded: bool,
    pub globals_problem: Option<String>,
    pub image_path: PathBuf,
    pub image: Option<ImageSummary>,
    pub image_problem: Option<String>,
    pub snapshots: SnapshotSizes,
    /// Parameter words pointing outside the recorded memory, described (see
    /// [`crate::memory::outside_words`]).
    pub outside: Vec<String>,
    /// Every key of the descriptor file, decoded.
    pub descriptor: Descriptor,
}

/// A fact about a legacy record: `topic` (`Generation`, `Region start`, `Globals`, `Image`,
/// `Launch`) and what it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Note {
    pub topic: &'static str,
    pub text: String,
}

fn note(topic: &'static str, text: impl Into<String>) -> Note {
    Note {
        topic,
        text: text.into(),
    }
}

/// One named, decoded field of an instance (`grid`, `arg 1`, `global g_scale`, …): what the
/// explorer compares between two instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub value: String,
}

fn size_of(r: crate::Result<u64>) -> (Option<u64>, Option<String>) {
    match r {
        Ok(n) => (Some(n), None),
        Err(e) if e.is_not_found() => (None, Some("missing".to_string())),
        Err(crate::Error::Format { problem, .. }) => (None, Some(problem)),
        Err(e) => (None, Some(e.to_string())),
    }
}

pub use crate::text::human;

/// An unsigned integer in decimal and hex, with its signed reading when that is negative:
/// `16 (0x10)`, `18446744073709551615 (0xffffffffffffffff, i64 -1)`.
/// Why the instance cannot be replayed at all, if it cannot (arguments LLVM 19–22 did not
/// record, objects the recorder could not describe): what `inspect` says, the explorer shows,
/// and `replay` refuses with.
pub fn unreplayable(d: &crate::Descriptor) -> Option<String> {
    crate::legacy::refusal(d, false)
        .or_else(|| d.cuda.as_ref().and_then(|c| c.unreplayable.clone()))
}

pub fn integer_text(value: u64, size: usize) -> String {
    let bits = (size * 8).clamp(8, 64) as u32;
    let signed = if bits == 64 {
        value as i64
    } else {
        let shift = 64 - bits;
        ((value << shift) as i64) >> shift
    };
    if signed < 0 {
        format!("{value} ({value:#x}, i{bits} {signed})")
    } else {
        format!("{value} ({value:#x})")
    }
}

fn little_endian(bytes: &[u8]) -> Option<u64> {
    matches!(bytes.len(), 1 | 2 | 4 | 8).then(|| {
        let mut buf = [0u8; 8];
        buf[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(buf)
    })
}

fn hex_bytes(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn describe_argument(d: &Descriptor, map: &MemoryMap, a: &Argument, last: usize) -> ArgInfo {
    let legacy = d.format.is_legacy();
    let hex = match a.word {
        Some(w) => format!("{w:#018x}"),
        None => super::descriptor::hex_encode(&a.bytes),
    };
    let mut info = ArgInfo {
        index: a.index,
        kind: ArgKind::Value,
        size: a.bytes.len(),
        hex,
        segment: None,
        offset: None,
        extent: None,
        value: None,
        meaning: String::new(),
    };
    let object = d.cuda.as_ref().and_then(|c| {
        let slot = c.param_layout.get(a.index)?;
        c.objects
            .iter()
            .find(|o| o.offset == slot.offset && slot.size == 8)
    });
    if let Some(o) = object {
        info.value = Some(o.handle);
        info.meaning = format!("{} object {}", o.kind.name(), o.handle);
        return info;
    }
    if let Some(r) = map.arg_region(a.index) {
        let seg = map.segments[r.segment];
        let (offset, extent) = (r.addr - seg.addr, r.file_end - r.file_start);
        info.kind = ArgKind::Pointer;
        let number = map.segment_number(r.segment);
        (info.segment, info.offset, info.extent) = (Some(number), Some(offset), Some(extent));
        info.meaning = format!(
            "→ {} + {offset:#x} ({} up to the next argument)",
            map.segment_name(r.segment),
            human(extent)
        );
        return info;
    }
    if d.format == crate::RecordFormat::LegacyLlvm19 {
        info.kind = ArgKind::Lost;
        info.meaning =
            "host address of the argument's slot: the value was not recorded (LLVM 19–22)".into();
        return info;
    }
    match a.word {
        // 2026 kernels end with the dyn_ptr; clang 18–22 put the launch environment first.
        Some(u64::MAX) if d.cuda.is_none() && (a.index == last || (legacy && a.index == 0)) => {
            info.kind = ArgKind::Sentinel;
            info.value = Some(u64::MAX);
            info.meaning = "dyn_ptr sentinel (~0: no reduction buffer)".into();
        }
        Some(w) if !legacy && w >= d.valloc_addr && w - d.valloc_addr < d.valloc_size => {
            info.kind = ArgKind::Reserved;
            info.offset = Some(w - d.valloc_addr);
            info.meaning = format!(
                "→ reserved region + {:#x}, beyond the recorded bytes",
                w - d.valloc_addr
            );
        }
        _ => {
            info.value = little_endian(&a.bytes);
            info.meaning = match info.value {
                Some(v) if d.cuda.is_none() => {
                    format!("= {}, not a recorded address", integer_text(v, 8))
                }
                Some(v) => format!(
                    "= {}, {} bytes by value",
                    integer_text(v, a.bytes.len()),
                    a.bytes.len()
                ),
                None => format!("{} bytes by value", a.bytes.len()),
            };
        }
    }
    info
}

fn summarize_image(i: &ImageInfo) -> ImageSummary {
    ImageSummary {
        kind: i.kind.describe(),
        sm: match i.kind {
            ImageKind::Cubin { sm, .. } => Some(sm),
            _ => None,
        },
        size: i.size,
        kernels: i.kernels.clone(),
    }
}

impl Inspection {
    pub fn of(json: &Path) -> Result<Inspection> {
        let d = Descriptor::read(json)?;
        let files = InstanceFiles::from_descriptor_path(json);
        let (record_input_bytes, record_input_problem) =
            size_of(crate::store::recorded_len(&files, &d, Side::Input));
        let (record_output_bytes, record_output_problem) =
            size_of(crate::store::recorded_len(&files, &d, Side::Output));
        let map = MemoryMap::new(&d, record_input_bytes.unwrap_or(0));
        let all = d.arguments();
        let last = all.len().saturating_sub(1);
        let arguments = all
            .iter()
            .map(|a| describe_argument(&d, &map, a, last))
            .collect();
        let llvm16 = d.format == crate::RecordFormat::LegacyLlvm16;
        let mut notes = Vec::new();
        if let Some(l) = &d.legacy {
            notes.push(note("Generation", l.evidence.clone()));
            notes.push(note("Region start", l.start.describe(l.device_memory_size)));
        }
        let mut globals_recorded = true;
        let (globals, globals_problem) = match Globals::read_for(&d, &files.globals()) {
            Err(e) if e.is_not_found() && llvm16 => {
                notes.push(note(
                    "Globals",
                    "none recorded (LLVM 16–17 did not record globals; replay keeps the image's initial values)",
                ));
                globals_recorded = false;
                (vec![], None)
            }
            Ok(g) => (global_infos(&g), None),
            Err(e) => (vec![], Some(e.to_string())),
        };
        let image_path = files.image(&d);
        let (image, image_problem, image_bytes) =
            match files.resolve_image(&d).and_then(|p| image::read(&p)) {
                Ok((bytes, i)) => (Some(summarize_image(&i)), None, Some(bytes)),
                Err(e) if e.is_not_found() && llvm16 => {
                    notes.push(note(
                        "Image",
                        "none: LLVM 16–17 never saved the device image; replay needs --image FILE",
                    ));
                    (None, None, None)
                }
                Err(e) => (None, Some(e.to_string()), None),
            };
        let ((teams, threads), geometry_note) =
            crate::legacy::geometry::for_record(&d, image_bytes.as_deref());
        if let Some(n) = geometry_note {
            notes.push(note("Launch", n));
        }
        let unreplayable = unreplayable(&d);
        let outside = crate::memory::outside_words(&d)
            .iter()
            .map(|w| crate::memory::describe_outside(&d, w))
            .collect();
        let (grid, block) = if d.format.is_legacy() {
            ([teams, 1, 1], [threads, 1, 1])
        } else {
            (d.grid(), d.block())
        };
        Ok(Inspection {
            descriptor_path: json.to_path_buf(),
            format: d.format.label(),
            layout: d.format.description(),
            notes,
            unreplayable,
            kernel: d.name.clone(),
            kernel_demangled: super::demangle(&d.name),
            grid,
            block,
            shared_memory_bytes: d.shared_memory_size,
            segments: map.segments.clone(),
            chunks: map.chunks.clone(),
            arguments,
            globals,
            globals_recorded,
            globals_problem,
            image_path,
            image,
            image_problem,
            snapshots: SnapshotSizes {
                record_input_bytes,
                record_input_problem,
                record_output_bytes,
                record_output_problem,
            },
            outside,
            descriptor: d,
        })
    }

    /// Whether something `inspect` needed could not be read (the descriptor was; the globals or
    /// the image were not): `inspect` still prints what it could, then exits non-zero.
    pub fn problems(&self) -> Vec<String> {
        [&self.globals_problem, &self.image_problem]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    fn snapshot_text(bytes: Option<u64>, problem: &Option<String>) -> String {
        match (bytes, problem) {
            (Some(n), _) => human(n),
            (None, Some(why)) => why.clone(),
            (None, None) => "unknown".into(),
        }
    }

    /// Text lines: `inspect`'s output and the explorer's descriptor pane. Names from the files
    /// are shown with control characters made visible.
    pub fn lines(&self) -> Vec<String> {
        self.render(true)
    }

    /// The lines two instances' line diff compares (`rr-tui diff A.json B.json`, the
    /// explorer's `d`): [`Inspection::lines`] without the paths of the descriptor and the image,
    /// which name the instance (its hashes) and would differ between any two; the diff's
    /// header names the files instead.
    pub fn comparable_lines(&self) -> Vec<String> {
        self.render(false)
    }

    /// The text lines, the paths of the descriptor and the image among them if `paths`.
    fn render(&self, paths: bool) -> Vec<String> {
        let mut out = self.identity_lines(paths);
        self.push_launch_lines(&mut out);
        self.push_argument_lines(&mut out);
        self.push_globals_and_image_lines(paths, &mut out);
        let s = &self.snapshots;
        out.push(format!(
            "Snapshots    input {}, output {}",
            Self::snapshot_text(s.record_input_bytes, &s.record_input_problem),
            Self::snapshot_text(s.record_output_bytes, &s.record_output_problem)
        ));
        out.into_iter()
            .map(|l| crate::text::visible(&l).into_owned())
            .collect()
    }

    /// Which record and kernel this is, and whether it can be replayed.
    fn identity_lines(&self, paths: bool) -> Vec<String> {
        let d = &self.descriptor;
        let mut out = vec![
            match paths {
                true => format!(
                    "Descriptor   {} ({})",
                    self.descriptor_path.display(),
                    self.format
                ),
                false => format!("Format       {}", self.format),
            },
            format!("Kernel       {}", self.kernel_demangled),
        ];
        if self.kernel_demangled != d.name {
            out.push(format!("  raw name   {}", d.name));
        }
        if d.format.is_legacy() {
            out.push(format!("Layout       {}", self.layout));
            out.extend(
                self.notes
                    .iter()
                    .map(|n| format!("{:<12} {}", n.topic, n.text)),
            );
        }
        if let Some(why) = &self.unreplayable {
            out.push(format!("Replay       impossible: {why}"));
        }
        if let Some(why) = d.cuda.as_ref().and_then(|c| c.raced.as_ref()) {
            out.push(format!(
                "Races        its snapshots may have raced: {}",
                crate::text::visible(why)
            ));
        }
        out
    }

    /// How the kernel is launched, and the memory it was recorded with.
    fn push_launch_lines(&self, out: &mut Vec<String>) {
        let d = &self.descriptor;
        out.push(format!(
            "Geometry     grid {}, block {}, dynamic shared memory {}",
            dims(self.grid),
            dims(self.block),
            human(self.shared_memory_bytes as u64)
        ));
        if let Some(c) = &d.cuda {
            let cluster = c.cluster_dim.map(dims).unwrap_or_else(|| "none".into());
            out.push(format!(
                "Launch       cluster {cluster}, cooperative {}, launch {} of the kernel{}",
                c.cooperative,
                // Counted from 1, as `record --occurrence` counts (stored from 0).
                c.occurrence.saturating_add(1),
                if c.from_graph {
                    ", a kernel node of a CUDA graph"
                } else {
                    ""
                }
            ));
        }
        out.push(format!(
            "Limits       teams {}, threads {}",
            limits(d.teams_limits),
            limits(d.threads_limits)
        ));
        out.push(format!(
            "Trip count   {}    Device {}",
            d.loop_trip_count, d.device_id
        ));
        if d.format.is_legacy() {
            out.push(format!(
                "Region       {} used (DeviceMemorySize)",
                human(d.valloc_size)
            ));
        } else {
            out.push(format!(
                "Region       {:#x} + {} reserved",
                d.valloc_addr,
                human(d.valloc_size)
            ));
        }
        for (i, s) in self.segments.iter().enumerate() {
            let name = self.segment_name(i);
            if d.region_known() {
                out.push(format!("  {name}  {}", segment_text(s)));
            } else {
                out.push(format!(
                    "  {name}  device address unknown, {}  (file offset {:#x})",
                    human(s.size),
                    s.offset
                ));
            }
        }
    }

    /// The arguments, the objects among them and the parameter words pointing outside the record.
    fn push_argument_lines(&self, out: &mut Vec<String>) {
        let d = &self.descriptor;
        out.push(format!("Arguments    {}", self.arguments.len()));
        for a in &self.arguments {
            out.push(format!("  #{:<3} {}  {}", a.index, a.hex, a.meaning));
        }
        if let Some(c) = d.cuda.as_ref().filter(|c| !c.objects.is_empty()) {
            out.push(format!("Objects      {}", c.objects.len()));
            for o in &c.objects {
                out.push(format!("  byte {:<4} {}", o.offset, o.describe()));
            }
        }
        for w in &self.outside {
            out.push(format!("Warning      {w}"));
        }
    }

    /// The module globals and the device image (its path if `paths`), or why they are unreadable.
    fn push_globals_and_image_lines(&self, paths: bool, out: &mut Vec<String>) {
        match &self.globals_problem {
            // Not recorded (LLVM 16–17): a note above says so.
            None if !self.globals_recorded => {}
            None => {
                out.push(format!("Globals      {}", self.globals.len()));
                for g in &self.globals {
                    out.push(format!("  {}  {}", g.name, global_text(g)));
                }
            }
            Some(e) => out.push(format!("Globals      unreadable: {e}")),
        }
        match (&self.image, &self.image_problem) {
            (Some(i), _) => {
                let place = match paths {
                    true => format!("{}: ", self.image_path.display()),
                    false => String::new(),
                };
                out.push(format!(
                    "Image        {place}{}, {}, {} kernel(s)",
                    i.kind,
                    human(i.size),
                    i.kernels.len()
                ));
                for k in &i.kernels {
                    out.push(format!("  kernel     {}", super::demangle(k)));
                }
            }
            (None, Some(e)) => out.push(format!("Image        unreadable: {e}")),
            // Not recorded (LLVM 16–17): a note above says so.
            (None, None) => {}
        }
    }

    /// The decoded fields, in display order, named so that the same field of two instances has
    /// the same name (arguments by index, segments by index, globals by name). Pointers are
    /// described by segment and offset, not address, so two recordings of one launch compare
    /// equal where their layouts agree. Control characters are made visible.
    pub fn fields(&self) -> Vec<Field> {
        let d = &self.descriptor;
        let mut out = Vec::new();
        let mut push = |name: String, value: String| {
            out.push(Field {
                name: crate::text::visible(&name).into_owned(),
                value: crate::text::visible(&value).into_owned(),
            })
        };
        push("kernel".into(), self.kernel_demangled.clone());
        push("format".into(), self.format.into());
        if let Some(l) = &d.legacy {
            push(
                "region start".into(),
                l.start
                    .addr()
                    .map(|a| format!("{a:#x}"))
                    .unwrap_or_else(|| "unknown".into()),
            );
            if let Some(why) = &self.unreplayable {
                push("replay".into(), format!("impossible: {why}"));
            }
        }
        push("grid".into(), dims(self.grid));
        push("block".into(), dims(self.block));
        push(
            "shared memory".into(),
            human(self.shared_memory_bytes as u64),
        );
        if let Some(c) = &d.cuda {
            let cluster = c.cluster_dim.map(dims).unwrap_or_else(|| "none".into());
            push("cluster".into(), cluster);
            push("cooperative".into(), c.cooperative.to_string());
            push(
                "launch of the kernel".into(),
                c.occurrence.saturating_add(1).to_string(),
            );
            if c.from_graph {
                push("launched".into(), "from a CUDA graph".into());
            }
            for o in &c.objects {
                push(format!("object at byte {}", o.offset), o.describe());
            }
            if let Some(why) = &c.unreplayable {
                push("replay".into(), format!("impossible: {why}"));
            }
            if let Some(why) = &c.raced {
                push(
                    "snapshots".into(),
                    format!("may have raced: {}", crate::text::visible(why)),
                );
            }
        }
        push("teams limits".into(), limits(d.teams_limits));
        push("threads limits".into(), limits(d.threads_limits));
        push("trip count".into(), d.loop_trip_count.to_string());
        push("device".into(), d.device_id.to_string());
        push("reserved".into(), human(d.valloc_size));
        for (i, s) in self.segments.iter().enumerate() {
            let value = match s.kind {
                crate::objects::SegmentKind::Device => human(s.size),
                kind => format!("{}, {}", kind.label(), human(s.size)),
            };
            push(self.segment_name(i), value);
        }
        push("arguments".into(), self.arguments.len().to_string());
        for a in &self.arguments {
            push(format!("arg {}", a.index), argument_field(a));
        }
        match &self.globals_problem {
            None => {
                for g in &self.globals {
                    push(format!("global {}", g.name), global_text(g));
                }
            }
            Some(e) => push("globals".into(), format!("unreadable: {e}")),
        }
        match (&self.image, &self.image_problem) {
            (Some(i), _) => push("image".into(), format!("{}, {}", i.kind, human(i.size))),
            (None, Some(e)) => push("image".into(), format!("unreadable: {e}")),
            (None, None) => push("image".into(), "not recorded".into()),
        }
        let s = &self.snapshots;
        push(
            "input".into(),
            Self::snapshot_text(s.record_input_bytes, &s.record_input_problem),
        );
        push(
            "output".into(),
            Self::snapshot_text(s.record_output_bytes, &s.record_output_problem),
        );
        out
    }
}

/// Each global of `g`: its name, size, the first bytes of its data and the hash of all of it.
fn global_infos(g: &Globals) -> Vec<GlobalInfo> {
    g.entries
        .iter()
        .map(|e| {
            let data = g.data(e);
            GlobalInfo {
                name: e.name.clone(),
                size: e.size,
                preview_hex: hex_bytes(&data[..data.len().min(GLOBAL_PREVIEW_BYTES)]),
                xxh3: xxhash_rust::xxh3::xxh3_64(data),
            }
        })
        .collect()
}

/// An argument as [`Inspection::fields`] shows it: where a pointer points by segment and
/// offset (not address), or the value.
fn argument_field(a: &ArgInfo) -> String {
    match (a.kind, a.segment, a.offset, a.extent) {
        (ArgKind::Pointer, Some(s), Some(o), Some(e)) => {
            format!("→ seg {s} + {o:#x} ({})", human(e))
        }
        (ArgKind::Reserved, _, Some(o), _) => format!("→ reserved + {o:#x}"),
        (ArgKind::Sentinel, ..) => "dyn_ptr sentinel".into(),
        (ArgKind::Lost, ..) => "slot address (value lost)".into(),
        _ => match a.value {
            Some(v) => format!("= {}", integer_text(v, a.size)),
            None => format!("{} ({} bytes)", a.hex, a.size),
        },
    }
}

fn dims(v: [u32; 3]) -> String {
    format!("{}×{}×{}", v[0], v[1], v[2])
}

fn limits(l: [u32; 2]) -> String {
    if l == [0, 0] {
        "unrestricted".to_string()
    } else {
        format!("[{}, {}]", l[0], l[1])
    }
}

impl Inspection {
    /// How segment `i` of [`Inspection::segments`] is named (by the descriptor's segments).
    fn segment_name(&self, i: usize) -> String {
        crate::descriptor::Chunks::of(&self.chunks, i).name()
    }
}

fn segment_text(s: &Segment) -> String {
    match s.kind {
        crate::objects::SegmentKind::Array(a) => format!(
            "CUDA array {}  {}  (file offset {:#x})",
            a.describe(),
            human(s.size),
            s.offset
        ),
        kind => format!(
            "{:#x}..{:#x}  {}{}  (file offset {:#x})",
            s.addr,
            s.end(),
            human(s.size),
            if kind == crate::objects::SegmentKind::Host {
                "  host memory"
            } else {
                ""
            },
            s.offset
        ),
    }
}

/// `4 B  00 00 00 40` (and `…` when the data is longer than the preview).
fn global_text(g: &GlobalInfo) -> String {
    let more = if g.size as usize > GLOBAL_PREVIEW_BYTES {
        format!(" … (xxh3 {:016x})", g.xxh3)
    } else {
        String::new()
    };
    format!("{}  {}{more}", human(g.size), g.preview_hex)
}

#[cfg(test)]
#[path = "inspect_tests.rs"]
mod tests;
