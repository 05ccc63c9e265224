//! Texture and surface objects and CUDA arrays: reading what the application created (the
//! recorder) and creating equivalents over restored memory (the replay).
//!
//! CUDA's descriptor structs hold enumerations; a value unknown to the bindings must not become
//! an invalid Rust enum, so they are read and written through `#[repr(C)]` mirrors of plain
//! integers whose sizes are checked against the bindings' at compile time.

use cudarc::driver::sys as ds;
use rr_format::objects::{ArrayDesc, ObjectKind, Resource, TextureDesc, ViewDesc};

use crate::error::{check, CudaError, Result};

#[repr(C)]
#[derive(Clone, Copy)]
struct RawResource {
    res_type: u32,
    /// The union is 8-byte aligned (it holds pointers).
    _pad: u32,
    /// `res`: array `{hArray}`, mipmap `{hMipmappedArray}`, linear `{devPtr, format u32,
    /// numChannels u32, sizeInBytes}`, pitch2D `{devPtr, format, numChannels, width, height,
    /// pitchInBytes}`.
    res: [u64; 16],
    flags: u32,
    _pad2: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawTexture {
    address_mode: [u32; 3],
    filter_mode: u32,
    flags: u32,
    max_anisotropy: u32,
    mipmap_filter_mode: u32,
    mipmap_level_bias: u32,
    min_mipmap_level_clamp: u32,
    max_mipmap_level_clamp: u32,
    border_color: [u32; 4],
    reserved: [u32; 12],
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawView {
    format: u32,
    _pad: u32,
    width: usize,
    height: usize,
    depth: usize,
    first_mipmap_level: u32,
    last_mipmap_level: u32,
    first_layer: u32,
    last_layer: u32,
    reserved: [u32; 16],
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawArray3d {
    width: usize,
    height: usize,
    depth: usize,
    format: u32,
    channels: u32,
    flags: u32,
    _pad: u32,
}

/// `CUDA_MEMCPY3D` with its memory types as integers (the bindings' enum has no zero value, so
/// the struct cannot be zero-initialised).
#[repr(C)]
#[derive(Default)]
struct RawMemcpy3d {
    src_x_in_bytes: usize,
    src_y: usize,
    src_z: usize,
    src_lod: usize,
    src_memory_type: u32,
    _pad0: u32,
    src_host: usize,
    src_device: u64,
    src_array: usize,
    _reserved0: usize,
    src_pitch: usize,
    src_height: usize,
    dst_x_in_bytes: usize,
    dst_y: usize,
    dst_z: usize,
    dst_lod: usize,
    dst_memory_type: u32,
    _pad1: u32,
    dst_host: usize,
    dst_device: u64,
    dst_array: usize,
    _reserved1: usize,
    dst_pitch: usize,
    dst_height: usize,
    width_in_bytes: usize,
    height: usize,
    depth: usize,
}

/// `CUmemorytype`.
const MEMORY_HOST: u32 = 1;
const MEMORY_DEVICE: u32 = 2;
const MEMORY_ARRAY: u32 = 3;

const _: () = {
    use std::mem::size_of;
    assert!(size_of::<RawMemcpy3d>() == size_of::<ds::CUDA_MEMCPY3D>());
    assert!(size_of::<RawResource>() == size_of::<ds::CUDA_RESOURCE_DESC>());
    assert!(size_of::<RawTexture>() == size_of::<ds::CUDA_TEXTURE_DESC>());
    assert!(size_of::<RawView>() == size_of::<ds::CUDA_RESOURCE_VIEW_DESC>());
    assert!(size_of::<RawArray3d>() == size_of::<ds::CUDA_ARRAY3D_DESCRIPTOR>());
};

/// `CUresourcetype`.
const RES_ARRAY: u32 = 0;
const RES_MIPMAPPED: u32 = 1;
const RES_LINEAR: u32 = 2;
const RES_PITCH2D: u32 = 3;

/// An object as the application created it: the resource still names its CUDA array by
/// handle (a record names it by segment, known only when an instance is written).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapturedObject {
    pub kind: ObjectKind,
    pub resource: CapturedResource,
    pub texture: Option<TextureDesc>,
    pub view: Option<ViewDesc>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CapturedResource {
    /// Linear or pitched device memory (as recorded).
    Memory(Resource),
    /// A CUDA array, by handle.
    Array(u64),
    Mipmapped,
    /// A resource type this build does not know.
    Unknown(u32),
}

/// Read a resource descriptor.
///
/// # Safety
/// `p` points to a `CUDA_RESOURCE_DESC` valid for the call.
pub(crate) unsafe fn capture_resource(p: *const ds::CUDA_RESOURCE_DESC) -> CapturedResource {
    // SAFETY: the caller's contract; the mirror has the same size and plain integer fields.
    let r = unsafe { *(p as *const RawResource) };
    let word = |i: usize| r.res[i];
    let half = |byte: usize| (r.res[byte / 8] >> (8 * (byte % 8))) as u32;
    match r.res_type {
        RES_ARRAY => CapturedResource::Array(word(0)),
        RES_MIPMAPPED => CapturedResource::Mipmapped,
        RES_LINEAR => CapturedResource::Memory(Resource::Linear {
            addr: word(0),
            format: half(8),
            channels: half(12),
            size: word(2),
        }),
        RES_PITCH2D => CapturedResource::Memory(Resource::Pitch2d {
            addr: word(0),
            format: half(8),
            channels: half(12),
            width: word(2),
            height: word(3),
            pitch: word(4),
        }),
        other => CapturedResource::Unknown(other),
    }
}

/// Read a texture descriptor.
///
/// # Safety
/// `p` points to a `CUDA_TEXTURE_DESC` valid for the call.
pub(crate) unsafe fn capture_texture(p: *const ds::CUDA_TEXTURE_DESC) -> TextureDesc {
    // SAFETY: the caller's contract; the mirror is all u32s of the same size.
    let t = unsafe { *(p as *const RawTexture) };
    TextureDesc {
        address_mode: t.address_mode,
        filter_mode: t.filter_mode,
        flags: t.flags,
        max_anisotropy: t.max_anisotropy,
        mipmap_filter_mode: t.mipmap_filter_mode,
        mipmap_level_bias: t.mipmap_level_bias,
        min_mipmap_level_clamp: t.min_mipmap_level_clamp,
        max_mipmap_level_clamp: t.max_mipmap_level_clamp,
        border_color: t.border_color,
    }
}

/// Read a resource view descriptor (null: none).
///
/// # Safety
/// `p` is null or points to a `CUDA_RESOURCE_VIEW_DESC` valid for the call.
pub(crate) unsafe fn capture_view(p: *const ds::CUDA_RESOURCE_VIEW_DESC) -> Option<ViewDesc> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's contract; the mirror has plain integer fields of the same layout.
    let v = unsafe { *(p as *const RawView) };
    Some(ViewDesc {
        format: v.format,
        width: v.width as u64,
        height: v.height as u64,
        depth: v.depth as u64,
        first_mipmap_level: v.first_mipmap_level,
        last_mipmap_level: v.last_mipmap_level,
        first_layer: v.first_layer,
        last_layer: v.last_layer,
    })
}

/// The shape of a CUDA array of the current context.
pub fn array_desc(handle: u64) -> Result<ArrayDesc> {
    let mut d = RawArray3d::default();
    // SAFETY: the driver validates the handle and writes one descriptor into the mirror.
    let r = unsafe {
        ds::cuArray3DGetDescriptor_v2(
            &mut d as *mut RawArray3d as *mut ds::CUDA_ARRAY3D_DESCRIPTOR,
            handle as ds::CUarray,
        )
    };
    check(r, "cuArray3DGetDescriptor")?;
    Ok(ArrayDesc {
        width: d.width as u64,
        height: d.height as u64,
        depth: d.depth as u64,
        format: d.format,
        channels: d.channels,
        flags: d.flags,
    })
}

/// The other side of a copy of array rows.
#[derive(Clone, Copy)]
enum Rows {
    /// Host memory, synchronously.
    Host(*mut u8),
    /// Device memory, enqueued on a stream (asynchronous).
    Device(u64, ds::CUstream),
}

/// Rows `[first, first + count)` of an array (rows of `height × depth`, slice by slice) to or
/// from `other`, `row_bytes` apart.
///
/// # Safety
/// `other` holds `count × row_bytes` bytes (writable when reading the array); device memory
/// stays allocated until the stream has run the copy.
unsafe fn copy_rows(
    handle: u64,
    desc: &ArrayDesc,
    first: u64,
    count: u64,
    other: Rows,
    to_other: bool,
) -> Result<()> {
    let bad = || {
        CudaError::new("cuMemcpy3D", ds::CUresult::CUDA_ERROR_INVALID_VALUE)
            .context(format!("array {}", desc.describe()))
    };
    let row_bytes = desc.row_bytes().ok_or_else(bad)? as usize;
    let per_slice = desc.height.max(1);
    let mut row = first;
    while row < first + count {
        let (z, y) = (row / per_slice, row % per_slice);
        let n = (per_slice - y).min(first + count - row);
        // `row - first` rows past the start of `other` (within the caller's memory).
        let skip = ((row - first) as usize) * row_bytes;
        let mut c = RawMemcpy3d {
            width_in_bytes: row_bytes,
            height: n as usize,
            depth: 1,
            ..Default::default()
        };
        let (other_type, host, device) = match other {
            Rows::Host(p) => (MEMORY_HOST, p.wrapping_add(skip) as usize, 0),
            Rows::Device(d, _) => (MEMORY_DEVICE, 0, d + skip as u64),
        };
        if to_other {
            (c.src_memory_type, c.src_array) = (MEMORY_ARRAY, handle as usize);
            (c.src_y, c.src_z) = (y as usize, z as usize);
            (c.dst_memory_type, c.dst_host, c.dst_device) = (other_type, host, device);
            (c.dst_pitch, c.dst_height) = (row_bytes, n as usize);
        } else {
            (c.dst_memory_type, c.dst_array) = (MEMORY_ARRAY, handle as usize);
            (c.dst_y, c.dst_z) = (y as usize, z as usize);
            (c.src_memory_type, c.src_host, c.src_device) = (other_type, host, device);
            (c.src_pitch, c.src_height) = (row_bytes, n as usize);
        }
        let raw = &c as *const RawMemcpy3d as *const ds::CUDA_MEMCPY3D;
        let r = match other {
            // SAFETY: the mirror has CUDA_MEMCPY3D's layout; a copy between the array
            // (validated by the driver) and rows of the caller's buffer.
            Rows::Host(_) => unsafe { ds::cuMemcpy3D_v2(raw) },
            // SAFETY: as above, to device memory the caller keeps until the stream ran it.
            Rows::Device(_, stream) => unsafe { ds::cuMemcpy3DAsync_v2(raw, stream) },
        };
        check(r, "cuMemcpy3D")?;
        row += n;
    }
    Ok(())
}

/// A CUDA array of the application's, to copy into device memory of the recorder's in stream
/// order (a stream-ordered snapshot of a texture's or surface's array).
pub struct ArrayCopy {
    pub handle: u64,
    pub desc: ArrayDesc,
}

impl ArrayCopy {
    /// Enqueue a copy of every row, one after the other, to device memory at `dst`
    /// (`desc.bytes()` long, the caller's until `stream` has run the copy).
    pub fn enqueue_to_device(&self, dst: u64, stream: u64) -> Result<()> {
        let rows = self.desc.rows().ok_or_else(|| {
            CudaError::new("cuMemcpy3DAsync", ds::CUresult::CUDA_ERROR_INVALID_VALUE)
                .context(format!("array {}", self.desc.describe()))
        })?;
        let other = Rows::Device(dst, stream as ds::CUstream);
        // SAFETY: the caller's contract: `dst` holds every row.
        unsafe { copy_rows(self.handle, &self.desc, 0, rows, other, true) }
    }
}

/// Bytes `[offset, offset + dst.len())` of an array's contents (its rows one after the other).
pub fn read_array(handle: u64, desc: &ArrayDesc, offset: u64, dst: &mut [u8]) -> Result<()> {
    let row_bytes = desc.row_bytes().filter(|&r| r > 0).ok_or_else(|| {
        CudaError::new("cuMemcpy3D", ds::CUresult::CUDA_ERROR_INVALID_VALUE)
            .context(format!("array {}", desc.describe()))
    })?;
    let end = offset + dst.len() as u64;
    let first = offset / row_bytes;
    let last = end.div_ceil(row_bytes);
    if first * row_bytes == offset && last * row_bytes == end {
        let to = Rows::Host(dst.as_mut_ptr());
        // SAFETY: `dst` holds exactly the rows copied.
        return unsafe { copy_rows(handle, desc, first, last - first, to, true) };
    }
    let mut rows = vec![0u8; ((last - first) * row_bytes) as usize];
    // SAFETY: `rows` holds exactly the rows copied.
    unsafe {
        copy_rows(
            handle,
            desc,
            first,
            last - first,
            Rows::Host(rows.as_mut_ptr()),
            true,
        )
    }?;
    let skip = (offset - first * row_bytes) as usize;
    dst.copy_from_slice(&rows[skip..skip + dst.len()]);
    Ok(())
}

/// A CUDA array created for a replay, destroyed with it.
pub struct Array {
    handle: ds::CUarray,
    pub desc: ArrayDesc,
}

impl Array {
    pub fn create(desc: &ArrayDesc) -> Result<Array> {
        let d = RawArray3d {
            width: desc.width as usize,
            height: desc.height as usize,
            depth: desc.depth as usize,
            format: desc.format,
            channels: desc.channels,
            flags: desc.flags,
            _pad: 0,
        };
        let mut handle: ds::CUarray = std::ptr::null_mut();
        // SAFETY: the mirror has the descriptor's layout; the driver validates its values
        // (parsed and range-checked from the record) and writes one handle.
        let r = unsafe { ds::cuArray3DCreate_v2(&mut handle, &d as *const RawArray3d as *const _) };
        check(r, "cuArray3DCreate").map_err(|e| e.context(format!("array {}", desc.describe())))?;
        Ok(Array {
            handle,
            desc: *desc,
        })
    }

    /// Write the whole contents (rows one after the other, `desc.bytes()` of them).
    pub fn upload(&self, bytes: &[u8]) -> Result<()> {
        let rows = self.desc.rows().unwrap_or(0);
        if Some(bytes.len() as u64) != self.desc.bytes() {
            return Err(
                CudaError::new("cuMemcpy3D", ds::CUresult::CUDA_ERROR_INVALID_VALUE).context(
                    format!("{} bytes for array {}", bytes.len(), self.desc.describe()),
                ),
            );
        }
        // SAFETY: `bytes` holds every row; the driver only reads it.
        unsafe {
            copy_rows(
                self.handle as u64,
                &self.desc,
                0,
                rows,
                Rows::Host(bytes.as_ptr() as *mut u8),
                false,
            )
        }
    }

    /// Read the whole contents into `dst` (`desc.bytes()` long).
    pub fn download(&self, dst: &mut [u8]) -> Result<()> {
        read_array(self.handle as u64, &self.desc, 0, dst)
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        // SAFETY: our own array, destroyed once; objects over it were destroyed first.
        let r = unsafe { ds::cuArrayDestroy(self.handle) };
        crate::error::teardown(check(r, "cuArrayDestroy"));
    }
}

/// A texture or surface object created for a replay.
pub struct Object {
    kind: ObjectKind,
    handle: u64,
}

impl Object {
    /// Create an object over recorded memory (`Resource::Linear`/`Pitch2d` at their recorded
    /// addresses, which the caller checked lie in the replay's memory) or over `array`.
    pub fn create(
        kind: ObjectKind,
        resource: &Resource,
        array: Option<&Array>,
        texture: Option<&TextureDesc>,
        view: Option<&ViewDesc>,
    ) -> Result<Object> {
        let mut r = RawResource {
            res_type: 0,
            _pad: 0,
            res: [0; 16],
            flags: 0,
            _pad2: 0,
        };
        let pack = |lo: u32, hi: u32| lo as u64 | (hi as u64) << 32;
        match (*resource, array) {
            (
                Resource::Linear {
                    addr,
                    format,
                    channels,
                    size,
                },
                _,
            ) => {
                r.res_type = RES_LINEAR;
                r.res[0] = addr;
                r.res[1] = pack(format, channels);
                r.res[2] = size;
            }
            (
                Resource::Pitch2d {
                    addr,
                    format,
                    channels,
                    width,
                    height,
                    pitch,
                },
                _,
            ) => {
                r.res_type = RES_PITCH2D;
                r.res[0] = addr;
                r.res[1] = pack(format, channels);
                r.res[2] = width;
                r.res[3] = height;
                r.res[4] = pitch;
            }
            (Resource::Array { .. }, Some(a)) => {
                r.res_type = RES_ARRAY;
                r.res[0] = a.handle as u64;
            }
            _ => {
                return Err(CudaError::new(
                    "cuTexObjectCreate",
                    ds::CUresult::CUDA_ERROR_NOT_SUPPORTED,
                )
                .context(resource.describe()))
            }
        }
        let view_raw = view.map(|v| RawView {
            format: v.format,
            width: v.width as usize,
            height: v.height as usize,
            depth: v.depth as usize,
            first_mipmap_level: v.first_mipmap_level,
            last_mipmap_level: v.last_mipmap_level,
            first_layer: v.first_layer,
            last_layer: v.last_layer,
            ..Default::default()
        });
        let mut handle = 0u64;
        let res_ptr = &r as *const RawResource as *const ds::CUDA_RESOURCE_DESC;
        let result = match kind {
            ObjectKind::Texture => {
                let t = texture.copied().unwrap_or_default();
                let raw = RawTexture {
                    address_mode: t.address_mode,
                    filter_mode: t.filter_mode,
                    flags: t.flags,
                    max_anisotropy: t.max_anisotropy,
                    mipmap_filter_mode: t.mipmap_filter_mode,
                    mipmap_level_bias: t.mipmap_level_bias,
                    min_mipmap_level_clamp: t.min_mipmap_level_clamp,
                    max_mipmap_level_clamp: t.max_mipmap_level_clamp,
                    border_color: t.border_color,
                    reserved: [0; 12],
                };
                let view_ptr = view_raw
                    .as_ref()
                    .map(|v| v as *const RawView as *const ds::CUDA_RESOURCE_VIEW_DESC)
                    .unwrap_or(std::ptr::null());
                // SAFETY: mirrors of the three descriptors (the driver validates every value)
                // and a slot for the handle.
                let res = unsafe {
                    ds::cuTexObjectCreate(
                        &mut handle,
                        res_ptr,
                        &raw as *const RawTexture as *const ds::CUDA_TEXTURE_DESC,
                        view_ptr,
                    )
                };
                check(res, "cuTexObjectCreate")
            }
            ObjectKind::Surface => check(
                // SAFETY: as above, for a surface (resource only).
                unsafe { ds::cuSurfObjectCreate(&mut handle, res_ptr) },
                "cuSurfObjectCreate",
            ),
        };
        result.map_err(|e| e.context(format!("{} over {}", kind.name(), resource.describe())))?;
        Ok(Object { kind, handle })
    }

    /// The handle to pass to the kernel.
    pub fn handle(&self) -> u64 {
        self.handle
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        // SAFETY: our own object, destroyed once.
        let r = unsafe {
            match self.kind {
                ObjectKind::Texture => ds::cuTexObjectDestroy(self.handle),
                ObjectKind::Surface => ds::cuSurfObjectDestroy(self.handle),
            }
        };
        crate::error::teardown(check(r, "cuTexObjectDestroy"));
    }
}

/// What the driver knows of an address: `None` when it is no CUDA memory at all, else the kind
/// of memory (`device memory`, `host memory`, `managed memory`, `an array`).
pub fn memory_kind(addr: u64) -> Option<&'static str> {
    let mut kind = 0u32;
    // SAFETY: the driver validates `addr` (any value) and writes one enum value as a u32.
    let r = unsafe {
        ds::cuPointerGetAttribute(
            &mut kind as *mut u32 as *mut std::ffi::c_void,
            ds::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            addr,
        )
    };
    if r != ds::CUresult::CUDA_SUCCESS {
        return None;
    }
    let mut managed = 0u32;
    // SAFETY: as above; writes a boolean as a u32.
    let m = unsafe {
        ds::cuPointerGetAttribute(
            &mut managed as *mut u32 as *mut std::ffi::c_void,
            ds::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
            addr,
        )
    };
    Some(match kind {
        _ if m == ds::CUresult::CUDA_SUCCESS && managed != 0 => "managed memory",
        1 => "host memory",
        2 => "device memory",
        3 => "an array",
        _ => "CUDA memory",
    })
}
