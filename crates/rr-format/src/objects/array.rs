//! A CUDA array's shape (`CUDA_ARRAY3D_DESCRIPTOR`): its size in bytes, how it is shown, and
//! which shapes a replay can recreate.

use serde_json::{Map, Value};

use super::json::Obj;

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
pub(super) const LAYERED: u32 = 0x01;
/// No GPU texture dimension is near this; larger values are corrupt descriptors.
pub(super) const MAX_ARRAY_DIM: u64 = 1 << 20;

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
