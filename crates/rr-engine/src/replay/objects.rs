//! Texture and surface objects for a replay: the CUDA arrays behind them, and the objects
//! created over the restored memory.
//!
//! Handles are small numbers, the lowest free one each time (measured on the GPU machine). So
//! objects are created in the order of their recorded handles, with placeholder textures taking
//! the numbers below each recorded one: a fresh process then hands out the recorded numbers and
//! the parameter bytes stay as recorded. Where it cannot (a number already taken), the
//! parameter bytes are rewritten with the new handle, and a note says so.

use rr_cuda::objects::{Array, Object};
use rr_cuda::{DeviceBuffer, Params};
use rr_format::objects::{ObjectKind, Resource, TextureDesc};

use super::instance::ReplayInstance;
use crate::error::{Error, Result};

/// Placeholder objects taken to line handles up, at most (beyond, handles are rewritten).
const MAX_PLACEHOLDERS: usize = 4096;

/// The arrays and objects of a replay (destroyed with it: objects first).
pub struct ReplayObjects {
    pub objects: Vec<Object>,
    /// `(array, offset in the snapshot, length)`.
    pub arrays: Vec<(Array, usize, usize)>,
    /// What differs from the recording (rewritten handles), one sentence each.
    pub notes: Vec<String>,
}

/// Create the instance's arrays and objects, rewriting `params` where a handle differs.
pub fn create(inst: &ReplayInstance, params: &mut Params) -> Result<ReplayObjects> {
    let mut out = ReplayObjects {
        objects: Vec::new(),
        arrays: Vec::new(),
        notes: Vec::new(),
    };
    let mut array_of_segment = Vec::new();
    for (segment, desc, off, len) in inst.arrays() {
        out.arrays.push((Array::create(&desc)?, off, len));
        array_of_segment.push(segment);
    }
    let Some(c) = &inst.descriptor.cuda else {
        return Ok(out);
    };
    if c.objects.is_empty() {
        return Ok(out);
    }
    let mut wanted = c.objects.clone();
    wanted.sort_by_key(|o| o.handle);
    let scratch = DeviceBuffer::new(256)?;
    let placeholder = || {
        Object::create(
            ObjectKind::Texture,
            &Resource::Linear {
                addr: scratch.ptr(),
                format: 0x20,
                channels: 1,
                size: 256,
            },
            None,
            Some(&TextureDesc::default()),
            None,
        )
    };
    let mut placeholders = Vec::new();
    for o in &wanted {
        while placeholders.len() < MAX_PLACEHOLDERS {
            let p = placeholder()?;
            if p.handle() >= o.handle {
                break; // dropped: its number (perhaps the recorded one) is free again
            }
            placeholders.push(p);
        }
        let array = match o.resource {
            Resource::Array { segment } => {
                let k = array_of_segment
                    .iter()
                    .position(|&s| s == segment)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "the {} object at parameter byte {} names segment {segment}, which is not a CUDA array",
                            o.kind.name(),
                            o.offset
                        ))
                    })?;
                Some(&out.arrays[k].0)
            }
            _ => None,
        };
        let obj = Object::create(
            o.kind,
            &o.resource,
            array,
            o.texture.as_ref(),
            o.view.as_ref(),
        )?;
        if obj.handle() != o.handle {
            params
                .set_word(o.offset as usize, obj.handle())
                .map_err(Error::invalid)?;
            out.notes.push(format!(
                "the {} object at parameter byte {} was recorded as handle {} and is handle {} in this replay (parameter rewritten)",
                o.kind.name(),
                o.offset,
                o.handle,
                obj.handle()
            ));
        }
        out.objects.push(obj);
    }
    drop(placeholders);
    Ok(out)
}
