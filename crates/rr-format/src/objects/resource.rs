//! What a texture or surface object reads (`CUDA_RESOURCE_DESC`): linear or pitched device
//! memory, a recorded CUDA array, or an unrecorded mipmapped array.

use serde_json::{Map, Value};

use super::array::{format_bytes, format_name, MAX_ARRAY_DIM};
use super::json::Obj;

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

    pub(super) fn to_json(self) -> Value {
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

    pub(super) fn from_json(v: &Value, at: &str) -> Result<Resource, String> {
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
                    "{at}.Type {} is not linear, pitch2d, array or mipmapped-array",
                    crate::text::quoted(other)
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
