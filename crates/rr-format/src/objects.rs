//! What a kernel reads besides device memory: pinned host memory mapped into the device's
//! address space, CUDA arrays, and the texture and surface objects over them (FORMAT.md,
//! "Host memory, arrays, textures and surfaces").
//!
//! A texture or surface object is a 64-bit handle passed by value; it is only meaningful in the
//! process that created it, so a record keeps what it was created from (the resource, texture
//! and view descriptors) and a replay creates an equivalent object over the restored memory and
//! passes the new handle. CUDA enumerations are kept as the numbers CUDA takes (`Format: 32` is
//! `CU_AD_FORMAT_FLOAT`); floating-point fields as their IEEE bit patterns, so every value,
//! NaN included, round-trips exactly through JSON.

use serde_json::{Map, Value};

/// What memory a segment holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SegmentKind {
    /// Device memory at its device address (the default; the only kind before this extension).
    #[default]
    Device,
    /// Page-locked host memory, mapped into the device address space at the segment's address
    /// (`cuMemHostAlloc`, `cuMemAllocHost`, `cuMemHostRegister`; under unified addressing the
    /// device address is the host address).
    Host,
    /// The contents of a CUDA array (no address: arrays are opaque), row by row.
    Array(ArrayDesc),
}

impl SegmentKind {
    /// Whether kernels reach the segment through an address (device and host memory).
    pub fn addressable(&self) -> bool {
        !matches!(self, SegmentKind::Array(_))
    }

    pub fn label(&self) -> String {
        match self {
            SegmentKind::Device => "device".into(),
            SegmentKind::Host => "host".into(),
            SegmentKind::Array(a) => format!("array {}", a.describe()),
        }
    }
}

/// A CUDA array's shape (`CUDA_ARRAY3D_DESCRIPTOR`). `height`/`depth` 0 mean a 1-D/2-D array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ArrayDesc {
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    /// `CUarray_format`.
    pub format: u32,
    pub channels: u32,
    /// `CUDA_ARRAY3D_*` flags.
    pub flags: u32,
}

/// Flags of CUDA arrays a replay can recreate: layered, surface load/store, cubemap, texture
/// gather, depth texture, colour attachment.
const KNOWN_ARRAY_FLAGS: u32 = 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x20;
/// `CUDA_ARRAY3D_LAYERED`: the depth counts layers.
const LAYERED: u32 = 0x01;
/// No GPU texture dimension is near this; larger values are corrupt descriptors.
const MAX_ARRAY_DIM: u64 = 1 << 20;

/// Bytes of one channel of a `CUarray_format`, for the formats rr-tui records.
pub fn format_bytes(format: u32) -> Option<u64> {
    Some(match format {
        0x01 | 0x08 => 1,
        0x02 | 0x09 | 0x10 => 2,
        0x03 | 0x0a | 0x20 => 4,
        _ => return None,
    })
}

pub fn format_name(format: u32) -> String {
    match format {
        0x01 => "u8".into(),
        0x02 => "u16".into(),
        0x03 => "u32".into(),
        0x08 => "i8".into(),
        0x09 => "i16".into(),
        0x0a => "i32".into(),
        0x10 => "f16".into(),
        0x20 => "f32".into(),
        other => format!("format {other:#x}"),
    }
}

impl ArrayDesc {
    /// Bytes per element (all channels).
    pub fn element_bytes(&self) -> Option<u64> {
        format_bytes(self.format)?.checked_mul(self.channels as u64)
    }

    /// Bytes of one row.
    pub fn row_bytes(&self) -> Option<u64> {
        self.width.checked_mul(self.element_bytes()?)
    }

    /// Rows (height × depth, each at least 1): how the contents are laid out in the snapshot.
    pub fn rows(&self) -> Option<u64> {
        self.height.max(1).checked_mul(self.depth.max(1))
    }

    /// Bytes of the whole contents.
    pub fn bytes(&self) -> Option<u64> {
        self.row_bytes()?.checked_mul(self.rows()?)
    }

    pub fn describe(&self) -> String {
        let mut dims = vec![self.width];
        if self.height > 0 || self.depth > 0 {
            dims.push(self.height.max(1));
        }
        if self.depth > 0 {
            dims.push(self.depth);
        }
        let dims: Vec<String> = dims.iter().map(u64::to_string).collect();
        let channels = if self.channels > 1 {
            format!("×{}", self.channels)
        } else {
            String::new()
        };
        format!("{} {}{channels}", dims.join("×"), format_name(self.format))
    }

    /// Why the array cannot be recorded or replayed, if it cannot.
    pub fn problem(&self) -> Option<String> {
        if format_bytes(self.format).is_none() {
            return Some(format!(
                "{} is not a format rr-tui records",
                format_name(self.format)
            ));
        }
        if !matches!(self.channels, 1 | 2 | 4) {
            return Some(format!(
                "{} channels (CUDA allows 1, 2 or 4)",
                self.channels
            ));
        }
        if self.flags & !KNOWN_ARRAY_FLAGS != 0 {
            return Some(format!(
                "array flags {:#x} (sparse or deferred-mapping arrays are not recorded)",
                self.flags
            ));
        }
        if self.height == 0 && self.depth > 0 {
            return Some(format!(
                "depth {} with height 0 (a 3-D array has a height)",
                self.depth
            ));
        }
        if self.flags & LAYERED != 0 && self.depth == 0 {
            return Some("a layered array without layers (depth 0)".into());
        }
        if self.width == 0
            || [self.width, self.height, self.depth]
                .iter()
                .any(|&d| d > MAX_ARRAY_DIM)
        {
            return Some(format!(
                "dimensions {}×{}×{} are out of range",
                self.width, self.height, self.depth
            ));
        }
        None
    }

    pub(crate) fn to_json(self) -> Value {
        let mut m = Map::new();
        m.insert("Width".into(), self.width.into());
        m.insert("Height".into(), self.height.into());
        m.insert("Depth".into(), self.depth.into());
        m.insert("Format".into(), self.format.into());
        m.insert("Channels".into(), self.channels.into());
        m.insert("Flags".into(), self.flags.into());
        Value::Object(m)
    }

    pub(crate) fn from_json(v: &Value, at: &str) -> Result<ArrayDesc, String> {
        let o = Obj::new(v, at)?;
        let a = ArrayDesc {
            width: o.uint("Width", u64::MAX)?,
            height: o.uint("Height", u64::MAX)?,
            depth: o.uint("Depth", u64::MAX)?,
            format: o.uint("Format", u32::MAX as u64)? as u32,
            channels: o.uint("Channels", u32::MAX as u64)? as u32,
            flags: o.uint("Flags", u32::MAX as u64)? as u32,
        };
        match a.problem() {
            Some(p) => Err(format!("{at}: {p}")),
            None => Ok(a),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectKind {
    Texture,
    Surface,
}

impl ObjectKind {
    pub fn name(self) -> &'static str {
        match self {
            ObjectKind::Texture => "texture",
            ObjectKind::Surface => "surface",
        }
    }
}

/// What an object reads (`CUDA_RESOURCE_DESC`).
// `--json` spells kinds as the descriptor does (`"type": "pitch2d"`), keys in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Resource {
    /// Linear device memory: `size` bytes at `addr`.
    Linear {
        addr: u64,
        format: u32,
        channels: u32,
        size: u64,
    },
    /// Pitched 2-D device memory.
    Pitch2d {
        addr: u64,
        format: u32,
        channels: u32,
        width: u64,
        height: u64,
        pitch: u64,
    },
    /// A CUDA array, recorded as segment `segment` (of kind array).
    Array { segment: usize },
    /// A mipmapped array: not recorded (the instance is unreplayable).
    MipmappedArray,
}

impl Resource {
    /// The device memory the object reads, `(addr, bytes)`, when it reads device memory.
    pub fn memory(&self) -> Option<(u64, u64)> {
        match *self {
            Resource::Linear { addr, size, .. } => Some((addr, size)),
            Resource::Pitch2d {
                addr,
                height,
                pitch,
                ..
            } => Some((addr, pitch.saturating_mul(height))),
            _ => None,
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            Resource::Linear {
                addr,
                format,
                channels,
                size,
            } => format!(
                "linear memory at {addr:#x}, {size} bytes of {}{}",
                format_name(format),
                channels_suffix(channels)
            ),
            Resource::Pitch2d {
                addr,
                format,
                channels,
                width,
                height,
                pitch,
            } => format!(
                "pitched memory at {addr:#x}, {width}×{height} {}{} (pitch {pitch})",
                format_name(format),
                channels_suffix(channels)
            ),
            Resource::Array { segment } => format!("the CUDA array of segment {segment}"),
            Resource::MipmappedArray => "a mipmapped array (not recorded)".into(),
        }
    }

    fn to_json(self) -> Value {
        let mut m = Map::new();
        match self {
            Resource::Linear {
                addr,
                format,
                channels,
                size,
            } => {
                m.insert("Type".into(), "linear".into());
                m.insert("Addr".into(), (addr as i64).into());
                m.insert("Format".into(), format.into());
                m.insert("Channels".into(), channels.into());
                m.insert("Size".into(), size.into());
            }
            Resource::Pitch2d {
                addr,
                format,
                channels,
                width,
                height,
                pitch,
            } => {
                m.insert("Type".into(), "pitch2d".into());
                m.insert("Addr".into(), (addr as i64).into());
                m.insert("Format".into(), format.into());
                m.insert("Channels".into(), channels.into());
                m.insert("Width".into(), width.into());
                m.insert("Height".into(), height.into());
                m.insert("Pitch".into(), pitch.into());
            }
            Resource::Array { segment } => {
                m.insert("Type".into(), "array".into());
                m.insert("Segment".into(), segment.into());
            }
            Resource::MipmappedArray => {
                m.insert("Type".into(), "mipmapped-array".into());
            }
        }
        Value::Object(m)
    }

    fn from_json(v: &Value, at: &str) -> Result<Resource, String> {
        let o = Obj::new(v, at)?;
        let channels = |o: &Obj| -> Result<u32, String> {
            let c = o.uint("Channels", 4)? as u32;
            match c {
                1 | 2 | 4 => Ok(c),
                _ => Err(format!("{at}.Channels must be 1, 2 or 4")),
            }
        };
        let format = |o: &Obj| -> Result<u32, String> {
            let f = o.uint("Format", u32::MAX as u64)? as u32;
            format_bytes(f)
                .map(|_| f)
                .ok_or_else(|| format!("{at}.Format {} is not supported", format_name(f)))
        };
        Ok(match o.string("Type")? {
            "linear" => Resource::Linear {
                addr: o.addr("Addr")?,
                format: format(&o)?,
                channels: channels(&o)?,
                size: o.uint("Size", crate::limits::MAX_REGION_BYTES)?,
            },
            "pitch2d" => {
                let (format, channels) = (format(&o)?, channels(&o)?);
                let width = o.uint("Width", MAX_ARRAY_DIM)?;
                let pitch = o.uint("Pitch", u32::MAX as u64)?;
                // Both factors are bounded (2^20 texels, 16 bytes each): no overflow.
                let row = width * format_bytes(format).unwrap_or(1) * channels as u64;
                if row > pitch {
                    return Err(format!(
                        "{at}: a row of {width} texels is {row} bytes, longer than its Pitch {pitch}"
                    ));
                }
                Resource::Pitch2d {
                    addr: o.addr("Addr")?,
                    format,
                    channels,
                    width,
                    height: o.uint("Height", MAX_ARRAY_DIM)?,
                    pitch,
                }
            }
            "array" => Resource::Array {
                segment: o.uint("Segment", u32::MAX as u64)? as usize,
            },
            "mipmapped-array" => Resource::MipmappedArray,
            other => {
                return Err(format!(
                    "{at}.Type {:?} is not linear, pitch2d, array or mipmapped-array",
                    crate::text::visible(other)
                ))
            }
        })
    }
}

fn channels_suffix(c: u32) -> String {
    if c > 1 {
        format!("×{c}")
    } else {
        String::new()
    }
}

/// How a texture samples (`CUDA_TEXTURE_DESC`); floats as bit patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct TextureDesc {
    pub address_mode: [u32; 3],
    pub filter_mode: u32,
    pub flags: u32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: u32,
    pub mipmap_level_bias: u32,
    pub min_mipmap_level_clamp: u32,
    pub max_mipmap_level_clamp: u32,
    pub border_color: [u32; 4],
}

impl TextureDesc {
    pub fn describe(&self) -> String {
        let mode = |m: u32| match m {
            0 => "wrap".to_string(),
            1 => "clamp".into(),
            2 => "mirror".into(),
            3 => "border".into(),
            o => format!("mode {o}"),
        };
        let filter = if self.filter_mode == 1 {
            "linear"
        } else {
            "point"
        };
        let mut flags = Vec::new();
        for (bit, name) in [
            (1, "integer reads"),
            (2, "normalised coordinates"),
            (0x10, "sRGB"),
            (0x20, "no trilinear optimisation"),
            (0x40, "seamless cubemap"),
        ] {
            if self.flags & bit != 0 {
                flags.push(name);
            }
        }
        format!(
            "{filter} filtering, address {}/{}/{}{}{}",
            mode(self.address_mode[0]),
            mode(self.address_mode[1]),
            mode(self.address_mode[2]),
            if flags.is_empty() { "" } else { ", " },
            flags.join(", ")
        )
    }

    fn to_json(self) -> Value {
        let mut m = Map::new();
        m.insert("AddressMode".into(), self.address_mode.to_vec().into());
        m.insert("FilterMode".into(), self.filter_mode.into());
        m.insert("Flags".into(), self.flags.into());
        m.insert("MaxAnisotropy".into(), self.max_anisotropy.into());
        m.insert("MipmapFilterMode".into(), self.mipmap_filter_mode.into());
        m.insert("MipmapLevelBias".into(), self.mipmap_level_bias.into());
        m.insert(
            "MinMipmapLevelClamp".into(),
            self.min_mipmap_level_clamp.into(),
        );
        m.insert(
            "MaxMipmapLevelClamp".into(),
            self.max_mipmap_level_clamp.into(),
        );
        m.insert("BorderColor".into(), self.border_color.to_vec().into());
        Value::Object(m)
    }

    fn from_json(v: &Value, at: &str) -> Result<TextureDesc, String> {
        let o = Obj::new(v, at)?;
        let u = |k: &str| o.uint(k, u32::MAX as u64).map(|v| v as u32);
        Ok(TextureDesc {
            address_mode: o.u32_array::<3>("AddressMode")?,
            filter_mode: u("FilterMode")?,
            flags: u("Flags")?,
            max_anisotropy: u("MaxAnisotropy")?,
            mipmap_filter_mode: u("MipmapFilterMode")?,
            mipmap_level_bias: u("MipmapLevelBias")?,
            min_mipmap_level_clamp: u("MinMipmapLevelClamp")?,
            max_mipmap_level_clamp: u("MaxMipmapLevelClamp")?,
            border_color: o.u32_array::<4>("BorderColor")?,
        })
    }
}

/// A resource view (`CUDA_RESOURCE_VIEW_DESC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ViewDesc {
    pub format: u32,
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub first_mipmap_level: u32,
    pub last_mipmap_level: u32,
    pub first_layer: u32,
    pub last_layer: u32,
}

impl ViewDesc {
    fn to_json(self) -> Value {
        let mut m = Map::new();
        m.insert("Format".into(), self.format.into());
        m.insert("Width".into(), self.width.into());
        m.insert("Height".into(), self.height.into());
        m.insert("Depth".into(), self.depth.into());
        m.insert("FirstMipmapLevel".into(), self.first_mipmap_level.into());
        m.insert("LastMipmapLevel".into(), self.last_mipmap_level.into());
        m.insert("FirstLayer".into(), self.first_layer.into());
        m.insert("LastLayer".into(), self.last_layer.into());
        Value::Object(m)
    }

    fn from_json(v: &Value, at: &str) -> Result<ViewDesc, String> {
        let o = Obj::new(v, at)?;
        let u = |k: &str| o.uint(k, u32::MAX as u64).map(|v| v as u32);
        Ok(ViewDesc {
            format: u("Format")?,
            width: o.uint("Width", MAX_ARRAY_DIM)?,
            height: o.uint("Height", MAX_ARRAY_DIM)?,
            depth: o.uint("Depth", MAX_ARRAY_DIM)?,
            first_mipmap_level: u("FirstMipmapLevel")?,
            last_mipmap_level: u("LastMipmapLevel")?,
            first_layer: u("FirstLayer")?,
            last_layer: u("LastLayer")?,
        })
    }
}

/// A texture or surface object passed to the kernel: the 8 parameter bytes at `offset` of the
/// parameter buffer held handle `handle` when recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ObjectArg {
    pub offset: u32,
    pub kind: ObjectKind,
    #[serde(serialize_with = "crate::text::u64_as_string")]
    pub handle: u64,
    pub resource: Resource,
    /// Textures only.
    pub texture: Option<TextureDesc>,
    pub view: Option<ViewDesc>,
}

impl ObjectArg {
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} object {} over {}",
            self.kind.name(),
            self.handle,
            self.resource.describe()
        );
        if let Some(t) = &self.texture {
            s.push_str(&format!("; {}", t.describe()));
        }
        if self.view.is_some() {
            s.push_str("; with a resource view");
        }
        s
    }

    pub(crate) fn to_json(self) -> Value {
        let mut m = Map::new();
        m.insert("Offset".into(), self.offset.into());
        m.insert("Kind".into(), self.kind.name().into());
        m.insert("Handle".into(), self.handle.to_string().into());
        m.insert("Resource".into(), self.resource.to_json());
        if let Some(t) = self.texture {
            m.insert("Texture".into(), t.to_json());
        }
        if let Some(v) = self.view {
            m.insert("View".into(), v.to_json());
        }
        Value::Object(m)
    }

    /// Parse one `Objects` entry; `params` is the parameter buffer's length and `segments` the
    /// kinds of the descriptor's segments (an array resource must name an array segment).
    pub(crate) fn from_json(
        v: &Value,
        at: &str,
        params: usize,
        segments: &[SegmentKind],
    ) -> Result<ObjectArg, String> {
        let o = Obj::new(v, at)?;
        let offset = o.uint("Offset", u32::MAX as u64)?;
        if offset % 8 != 0 || offset + 8 > params as u64 {
            return Err(format!(
                "{at}.Offset {offset} is not an 8-byte slot of the {params}-byte ParamBuffer"
            ));
        }
        let kind = match o.string("Kind")? {
            "texture" => ObjectKind::Texture,
            "surface" => ObjectKind::Surface,
            other => {
                return Err(format!(
                    "{at}.Kind {:?} is not texture or surface",
                    crate::text::visible(other)
                ))
            }
        };
        // Handles are written as decimal strings: JSON readers lose integers above 2^53.
        let handle = o.decimal("Handle")?;
        let resource = Resource::from_json(o.get("Resource")?, &format!("{at}.Resource"))?;
        if let Resource::Array { segment } = resource {
            if !matches!(segments.get(segment), Some(SegmentKind::Array(_))) {
                return Err(format!(
                    "{at}.Resource names segment {segment}, which is not a CUDA array"
                ));
            }
        }
        let texture = match (kind, o.opt("Texture")) {
            (ObjectKind::Texture, Some(t)) => {
                Some(TextureDesc::from_json(t, &format!("{at}.Texture"))?)
            }
            (ObjectKind::Texture, None) => {
                return Err(format!("{at} is a texture without a Texture descriptor"))
            }
            (ObjectKind::Surface, Some(_)) => {
                return Err(format!("{at} is a surface with a Texture descriptor"))
            }
            (ObjectKind::Surface, None) => None,
        };
        let view = o
            .opt("View")
            .map(|v| ViewDesc::from_json(v, &format!("{at}.View")))
            .transpose()?;
        Ok(ObjectArg {
            offset: offset as u32,
            kind,
            handle,
            resource,
            texture,
            view,
        })
    }
}

/// A parameter word that points outside the recorded memory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OutsideWord {
    /// Byte offset in the parameter buffer.
    pub offset: u32,
    #[serde(serialize_with = "crate::text::u64_as_string")]
    pub value: u64,
    /// What the word pointed to when recorded (`device memory`, `host memory`, …), or
    /// `address-like` when only its value suggests an address.
    pub what: String,
}

impl OutsideWord {
    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("Offset".into(), self.offset.into());
        m.insert("Value".into(), self.value.to_string().into());
        m.insert("What".into(), self.what.clone().into());
        Value::Object(m)
    }

    pub(crate) fn from_json(v: &Value, at: &str, params: usize) -> Result<OutsideWord, String> {
        let o = Obj::new(v, at)?;
        let offset = o.uint("Offset", u32::MAX as u64)?;
        if offset + 8 > params as u64 {
            return Err(format!(
                "{at}.Offset {offset} lies outside the {params}-byte ParamBuffer"
            ));
        }
        let value = o.decimal("Value")?;
        let what = o.string("What")?;
        if what.len() > 200 {
            return Err(format!("{at}.What is longer than 200 bytes"));
        }
        Ok(OutsideWord {
            offset: offset as u32,
            value,
            what: what.to_owned(),
        })
    }
}

/// The 8-byte words of a parameter buffer laid out as `(offset, size)` slots (see
/// `memory::parameter_words`).
pub fn words_of(buffer: &[u8], layout: impl Iterator<Item = (u32, u32)>) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    for (offset, size) in layout.filter(|s| s.1 >= 8) {
        let end = offset.saturating_add(size);
        let mut off = offset.next_multiple_of(8);
        while off.saturating_add(8) <= end {
            let bytes = buffer.get(off as usize..off as usize + 8);
            if let Some(b) = bytes.and_then(|b| <[u8; 8]>::try_from(b).ok()) {
                out.push((off, u64::from_le_bytes(b)));
            }
            off += 8;
        }
    }
    out
}

/// The objects and outside words of a descriptor against its parameter words (`(offset,
/// value)` of every 8-byte word of a parameter): each names a word that is there, with the value
/// it claims, and no word is named twice (as two objects, two outside words, or one of each).
pub(crate) fn check_words(
    objects: &[ObjectArg],
    outside: &[OutsideWord],
    words: &[(u32, u64)],
) -> Result<(), String> {
    let value_at = |offset: u32| words.iter().find(|w| w.0 == offset).map(|w| w.1);
    let claims = objects
        .iter()
        .enumerate()
        .map(|(i, o)| (format!("Objects[{i}]"), o.offset, o.handle, "Handle"))
        .chain(
            outside
                .iter()
                .enumerate()
                .map(|(i, w)| (format!("OutsidePointers[{i}]"), w.offset, w.value, "Value")),
        );
    let mut seen: Vec<u32> = Vec::new();
    for (at, offset, value, key) in claims {
        match value_at(offset) {
            None => {
                return Err(format!(
                    "{at}.Offset {offset} is not an 8-byte word of a parameter (ParamLayout)"
                ))
            }
            Some(w) if w != value => {
                return Err(format!(
                    "{at}.{key} {value} is not the parameter word at byte {offset} ({w})"
                ))
            }
            Some(_) if seen.contains(&offset) => {
                return Err(format!("{at} names byte {offset}, named already"))
            }
            Some(_) => seen.push(offset),
        }
    }
    Ok(())
}

/// A JSON object read with messages that name where it is (`Objects[0].Resource`).
struct Obj<'a> {
    map: &'a Map<String, Value>,
    at: &'a str,
}

impl<'a> Obj<'a> {
    fn new(v: &'a Value, at: &'a str) -> Result<Obj<'a>, String> {
        v.as_object()
            .map(|map| Obj { map, at })
            .ok_or_else(|| format!("{at} must be an object"))
    }
    fn opt(&self, k: &str) -> Option<&'a Value> {
        self.map.get(k)
    }
    fn get(&self, k: &str) -> Result<&'a Value, String> {
        self.map
            .get(k)
            .ok_or_else(|| format!("{}.{k} is missing", self.at))
    }
    fn uint(&self, k: &str, max: u64) -> Result<u64, String> {
        let v = self
            .get(k)?
            .as_u64()
            .ok_or_else(|| format!("{}.{k} must be a non-negative integer", self.at))?;
        if v > max {
            return Err(format!("{}.{k} is {v}, more than {max}", self.at));
        }
        Ok(v)
    }
    /// An address, written as LLVM writes addresses (signed 64-bit).
    fn addr(&self, k: &str) -> Result<u64, String> {
        let v = self.get(k)?;
        v.as_i64()
            .map(|a| a as u64)
            .or_else(|| v.as_u64())
            .ok_or_else(|| format!("{}.{k} must be an integer address", self.at))
    }
    fn string(&self, k: &str) -> Result<&'a str, String> {
        self.get(k)?
            .as_str()
            .ok_or_else(|| format!("{}.{k} must be a string", self.at))
    }
    /// A 64-bit number written as a decimal string (JSON readers lose integers above 2^53).
    fn decimal(&self, k: &str) -> Result<u64, String> {
        self.get(k)?
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| {
                format!(
                    "{}.{k} must be a decimal 64-bit number in a string",
                    self.at
                )
            })
    }
    fn u32_array<const N: usize>(&self, k: &str) -> Result<[u32; N], String> {
        let a = self
            .get(k)?
            .as_array()
            .filter(|a| a.len() == N)
            .ok_or_else(|| format!("{}.{k} must be an array of {N} integers", self.at))?;
        let mut out = [0u32; N];
        for (o, v) in out.iter_mut().zip(a) {
            *o = v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("{}.{k} must hold 32-bit unsigned integers", self.at))?;
        }
        Ok(out)
    }
}

/// The JSON of a segment's kind (`Kind`, `Array`), added to its `Segments` entry.
pub(crate) fn kind_to_json(kind: &SegmentKind, m: &mut Map<String, Value>) {
    match kind {
        SegmentKind::Device => {}
        SegmentKind::Host => {
            m.insert("Kind".into(), "host".into());
        }
        SegmentKind::Array(a) => {
            m.insert("Kind".into(), "array".into());
            m.insert("Array".into(), a.to_json());
        }
    }
}

pub(crate) fn kind_from_json(s: &Map<String, Value>, at: &str) -> Result<SegmentKind, String> {
    match s.get("Kind").map(|k| k.as_str()) {
        None | Some(Some("device")) => Ok(SegmentKind::Device),
        Some(Some("host")) => Ok(SegmentKind::Host),
        Some(Some("array")) => {
            let a = s
                .get("Array")
                .ok_or_else(|| format!("{at} is an array segment without Array"))?;
            Ok(SegmentKind::Array(ArrayDesc::from_json(
                a,
                &format!("{at}.Array"),
            )?))
        }
        _ => Err(format!("{at}.Kind must be device, host or array")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tex() -> ObjectArg {
        ObjectArg {
            offset: 8,
            kind: ObjectKind::Texture,
            handle: u64::MAX - 3,
            resource: Resource::Pitch2d {
                addr: 0x7f00_0000_1000,
                format: 0x20,
                channels: 2,
                width: 64,
                height: 32,
                pitch: 512,
            },
            texture: Some(TextureDesc {
                address_mode: [1, 1, 0],
                filter_mode: 1,
                flags: 2,
                border_color: [f32::NAN.to_bits(), 0, 0, 1.0f32.to_bits()],
                ..Default::default()
            }),
            view: Some(ViewDesc {
                format: 0x25,
                width: 64,
                height: 32,
                depth: 0,
                first_mipmap_level: 0,
                last_mipmap_level: 0,
                first_layer: 0,
                last_layer: 0,
            }),
        }
    }

    #[test]
    fn objects_round_trip_exactly() {
        let t = tex();
        let back = ObjectArg::from_json(&t.to_json(), "o", 16, &[]).unwrap();
        assert_eq!(back, t);
        assert!(t
            .describe()
            .contains("linear filtering, address clamp/clamp/wrap"));
        let s = ObjectArg {
            kind: ObjectKind::Surface,
            texture: None,
            view: None,
            resource: Resource::Array { segment: 1 },
            ..t
        };
        let kinds = [
            SegmentKind::Device,
            SegmentKind::Array(ArrayDesc {
                width: 256,
                height: 128,
                depth: 0,
                format: 0x20,
                channels: 1,
                flags: 2,
            }),
        ];
        assert_eq!(
            ObjectArg::from_json(&s.to_json(), "o", 16, &kinds).unwrap(),
            s
        );
    }

    #[test]
    fn hostile_objects_are_refused_with_their_place() {
        let t = tex();
        let cases: Vec<(Value, &str)> = vec![
            (
                {
                    let mut v = t.to_json();
                    v["Offset"] = 12.into();
                    v
                },
                "8-byte slot",
            ),
            (
                {
                    let mut v = t.to_json();
                    v["Offset"] = 16.into();
                    v
                },
                "8-byte slot",
            ),
            (
                {
                    let mut v = t.to_json();
                    v["Kind"] = "sampler\u{1b}".into();
                    v
                },
                "x1b",
            ),
            (
                {
                    let mut v = t.to_json();
                    v["Handle"] = 7.into();
                    v
                },
                "decimal 64-bit",
            ),
            (
                {
                    let mut v = t.to_json();
                    v["Resource"]["Type"] = "array".into();
                    v["Resource"]["Segment"] = 9.into();
                    v
                },
                "not a CUDA array",
            ),
            (
                {
                    let mut v = t.to_json();
                    v["Resource"]["Format"] = 0xc0.into();
                    v
                },
                "not supported",
            ),
            (
                {
                    let mut v = t.to_json();
                    v["Resource"]["Channels"] = 3.into();
                    v
                },
                "Channels",
            ),
            (
                {
                    let mut v = t.to_json();
                    v.as_object_mut().unwrap().remove("Texture");
                    v
                },
                "without a Texture",
            ),
            (
                {
                    let mut v = t.to_json();
                    v["Texture"]["BorderColor"] = serde_json::json!([1, 2]);
                    v
                },
                "4 integers",
            ),
        ];
        let cases = cases.into_iter().chain([(
            {
                let mut v = t.to_json();
                v["Resource"]["Pitch"] = 16.into();
                v
            },
            "longer than its Pitch",
        )]);
        for (v, want) in cases {
            let e = ObjectArg::from_json(&v, "Objects[0]", 16, &[]).unwrap_err();
            assert!(e.contains(want) && e.starts_with("Objects[0]"), "{e}");
        }
    }

    #[test]
    fn array_sizes_use_checked_arithmetic() {
        let a = ArrayDesc {
            width: 256,
            height: 0,
            depth: 0,
            format: 0x10,
            channels: 4,
            flags: 0,
        };
        assert_eq!(a.bytes(), Some(256 * 8));
        assert_eq!(a.describe(), "256 f16×4");
        let huge = ArrayDesc {
            width: 1 << 20,
            height: 1 << 20,
            depth: 1 << 20,
            format: 0x20,
            ..a
        };
        assert_eq!(huge.bytes(), None, "2^64 bytes overflow");
        assert!(ArrayDesc { width: 0, ..a }.problem().is_some());
        assert!(ArrayDesc { flags: 0x40, ..a }
            .problem()
            .unwrap()
            .contains("sparse"));
        assert!(ArrayDesc { format: 0xb0, ..a }.problem().is_some());
        let shape = |height, depth, flags| {
            ArrayDesc {
                height,
                depth,
                flags,
                ..a
            }
            .problem()
        };
        assert!(shape(0, 4, 0).unwrap().contains("height 0"));
        assert!(shape(8, 0, LAYERED).unwrap().contains("layered"));
        assert_eq!(shape(8, 4, LAYERED), None);
    }

    #[test]
    fn objects_and_outside_words_must_be_the_parameter_words_they_name() {
        let words = [(0u32, 5u64), (8, u64::MAX - 3)];
        let t = tex();
        let w = |offset, value| OutsideWord {
            offset,
            value,
            what: "device memory".into(),
        };
        assert_eq!(check_words(&[t], &[w(0, 5)], &words), Ok(()));
        let cases: [(Vec<ObjectArg>, Vec<OutsideWord>, &str); 5] = [
            (vec![], vec![w(0, 6)], "not the parameter word"),
            (vec![], vec![w(0, 5), w(0, 5)], "named already"),
            (vec![], vec![w(4, 5)], "not an 8-byte word"),
            (vec![t], vec![w(8, u64::MAX - 3)], "named already"),
            (
                vec![ObjectArg { handle: 1, ..t }],
                vec![],
                "not the parameter word",
            ),
        ];
        for (objects, outside, want) in cases {
            let e = check_words(&objects, &outside, &words).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}
