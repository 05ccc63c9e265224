//! The rr-tui extension of a descriptor (`RrTuiFormat`): the CUDA launch's geometry, parameter
//! buffer and layout, objects, outside pointers and reasons, read from a hostile file. Each
//! section is read and checked in the order the messages have always come in: the first problem
//! found is the one reported.

use serde_json::Value;

use super::segments::segments;
use crate::descriptor::{hex_decode, CudaLaunch, Fields, ParamSlot};
use crate::error::{Error, Result};
use crate::limits::MAX_PARAM_BYTES;
use crate::objects::{ObjectArg, OutsideWord, SegmentKind};

/// The CUDA launch of an rr-tui descriptor of format `version`; its addressable segments lie in
/// `[valloc_addr, valloc_addr + valloc_size)` (whose end was checked for overflow).
pub(super) fn parse_cuda(
    f: &Fields,
    version: u64,
    valloc_addr: u64,
    valloc_size: u64,
) -> Result<CudaLaunch> {
    let err = |p: String| Error::format(f.path, p);
    let grid = dim3(f, "Grid")?;
    let block = dim3(f, "Block")?;
    let param_buffer = param_buffer(f)?;
    let param_layout = param_layout(f, param_buffer.len())?;
    let (segments, content) = segments(f, version, valloc_addr, valloc_size)?;
    let cluster_dim = if f.obj.contains_key("ClusterDim") {
        Some(dim3(f, "ClusterDim")?)
    } else {
        None
    };
    let cooperative = flag(f, "Cooperative")?;
    let occurrence = f.uint("Occurrence", u64::MAX)?;
    let image_file = image_file(f)?;
    let kinds: Vec<SegmentKind> = segments.iter().map(|s| s.kind).collect();
    let objects = objects(f, param_buffer.len(), &kinds)?;
    let outside = outside_pointers(f, param_buffer.len())?;
    let from_graph = flag(f, "FromGraph")?;
    let words = crate::objects::words_of(
        &param_buffer,
        param_layout.iter().map(|s| (s.offset, s.size)),
    );
    crate::objects::check_words(&objects, outside.as_deref().unwrap_or_default(), &words)
        .map_err(err)?;
    let unreplayable = reason(f, "Unreplayable")?;
    let raced = reason(f, "MayHaveRaced")?;
    // The recorder always says why; a record that does not still cannot be replayed.
    let unreplayable = unreplayable.or_else(|| unrecorded_mipmaps(&objects));
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
        raced,
    })
}

/// A launch dimension (`Grid`, `Block`, `ClusterDim`): three positive 32-bit integers.
fn dim3(f: &Fields, key: &str) -> Result<[u32; 3]> {
    let v = f.int_array(key)?;
    if v.len() != 3 || v.iter().any(|&x| x < 1 || x > u32::MAX as i64) {
        return Err(Error::format(
            f.path,
            format!("{key} must be three positive integers"),
        ));
    }
    Ok([v[0] as u32, v[1] as u32, v[2] as u32])
}

/// `ParamBuffer`: the kernel's parameters as launched, in hex, at most CUDA's limit.
fn param_buffer(f: &Fields) -> Result<Vec<u8>> {
    let err = |p: String| Error::format(f.path, p);
    let param_buffer = hex_decode(&f.string("ParamBuffer")?)
        .ok_or_else(|| err("ParamBuffer is not an even-length hex string".into()))?;
    if param_buffer.len() > MAX_PARAM_BYTES {
        return Err(err(format!(
            "ParamBuffer has {} bytes; CUDA allows at most {MAX_PARAM_BYTES}",
            param_buffer.len()
        )));
    }
    Ok(param_buffer)
}

/// `ParamLayout`: one `[offset, size]` per parameter, inside the `buffer_len`-byte buffer, in
/// order and not overlapping.
fn param_layout(f: &Fields, buffer_len: usize) -> Result<Vec<ParamSlot>> {
    let err = |p: String| Error::format(f.path, p);
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
            .is_none_or(|end| end > buffer_len as u64)
            || size == 0
        {
            return Err(err(format!(
                "ParamLayout entry [{offset}, {size}] lies outside the {buffer_len}-byte ParamBuffer"
            )));
        }
        // Parameters follow one another: a slot that starts inside the previous one would let
        // one word be read as two parameters.
        if let Some(prev) = param_layout.last() {
            let ParamSlot { offset: o, size: z } = *prev;
            if offset < o as u64 + z as u64 {
                return Err(err(format!(
                    "ParamLayout entry [{offset}, {size}] starts inside the parameter before it ([{o}, {z}]): entries must be in order and not overlap"
                )));
            }
        }
        param_layout.push(ParamSlot {
            offset: offset as u32,
            size: size as u32,
        });
    }
    Ok(param_layout)
}

/// An optional boolean key: absent is false.
fn flag(f: &Fields, key: &str) -> Result<bool> {
    match f.obj.get(key) {
        None => Ok(false),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| Error::format(f.path, format!("{key} must be true or false"))),
    }
}

/// `ImageFile`: a relative path inside the record directory (never `..` or absolute).
fn image_file(f: &Fields) -> Result<String> {
    let image_file = f.string("ImageFile")?;
    if let Err(why) = crate::fsio::check_relative(&image_file) {
        return Err(Error::format(
            f.path,
            format!(
                "ImageFile {image_file:?} {why}: it must be a relative path inside the record directory"
            ),
        ));
    }
    Ok(image_file)
}

/// The array under `key` (`Objects`, `OutsidePointers`), of at most one entry per 8-byte word of
/// the parameter buffer.
fn list<'a>(f: &Fields<'a>, key: &str) -> Result<&'a Vec<Value>> {
    let err = |p: String| Error::format(f.path, p);
    let v = f
        .obj
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("{key} must be an array")))?;
    if v.len() > MAX_PARAM_BYTES / 8 {
        return Err(err(format!(
            "{key} has {} entries; at most {} fit the parameter buffer",
            v.len(),
            MAX_PARAM_BYTES / 8
        )));
    }
    Ok(v)
}

/// `Objects` (optional): the texture and surface objects among the parameters, one per offset.
fn objects(f: &Fields, params: usize, kinds: &[SegmentKind]) -> Result<Vec<ObjectArg>> {
    let err = |p: String| Error::format(f.path, p);
    let mut objects: Vec<ObjectArg> = Vec::new();
    if f.obj.contains_key("Objects") {
        for (i, v) in list(f, "Objects")?.iter().enumerate() {
            let o =
                ObjectArg::from_json(v, &format!("Objects[{i}]"), params, kinds).map_err(err)?;
            if objects.iter().any(|p| p.offset == o.offset) {
                return Err(err(format!(
                    "Objects[{i}] is at the same Offset as another object"
                )));
            }
            objects.push(o);
        }
    }
    Ok(objects)
}

/// `OutsidePointers` (optional): the parameter words that point outside the recorded memory.
fn outside_pointers(f: &Fields, params: usize) -> Result<Option<Vec<OutsideWord>>> {
    if !f.obj.contains_key("OutsidePointers") {
        return Ok(None);
    }
    let mut out = Vec::new();
    for (i, v) in list(f, "OutsidePointers")?.iter().enumerate() {
        out.push(
            OutsideWord::from_json(v, &format!("OutsidePointers[{i}]"), params)
                .map_err(|p| Error::format(f.path, p))?,
        );
    }
    Ok(Some(out))
}

/// An optional reason (`Unreplayable`, `MayHaveRaced`). A reason says something: one letter or
/// digit at least (not only spaces, controls or invisible characters), in at most 1000 bytes.
fn reason(f: &Fields, key: &str) -> Result<Option<String>> {
    match f.obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if s.chars().any(char::is_alphanumeric) && s.len() <= 1000 => {
            Ok(Some(s.clone()))
        }
        Some(_) => Err(Error::format(
            f.path,
            format!("{key} must be a reason in words, of at most 1000 bytes"),
        )),
    }
}

/// Why the launch cannot be replayed when one of its objects reads a mipmapped array, which
/// rr-tui does not record.
fn unrecorded_mipmaps(objects: &[ObjectArg]) -> Option<String> {
    objects
        .iter()
        .find(|o| o.resource == crate::objects::Resource::MipmappedArray)
        .map(|o| {
            format!(
                "a {} object over a mipmapped array, which rr-tui does not record",
                o.kind.name()
            )
        })
}
