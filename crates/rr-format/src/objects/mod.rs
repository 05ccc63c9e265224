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

mod array;
mod json;
mod resource;
#[cfg(test)]
mod tests;
mod texture;

use serde_json::{Map, Value};

pub use array::{format_bytes, format_name, ArrayDesc};
use json::Obj;
pub use resource::{ObjectKind, Resource};
pub use texture::{TextureDesc, ViewDesc};

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
                    "{at}.Kind {} is not texture or surface",
                    crate::text::quoted(other)
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
