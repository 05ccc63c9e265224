//! How a texture samples (`CUDA_TEXTURE_DESC`) and a resource view (`CUDA_RESOURCE_VIEW_DESC`),
//! to and from their JSON.

use serde_json::{Map, Value};

use super::array::MAX_ARRAY_DIM;
use super::json::Obj;

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

    pub(super) fn to_json(self) -> Value {
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

    pub(super) fn from_json(v: &Value, at: &str) -> Result<TextureDesc, String> {
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
    pub(super) fn to_json(self) -> Value {
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

    pub(super) fn from_json(v: &Value, at: &str) -> Result<ViewDesc, String> {
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
