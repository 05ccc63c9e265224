//! Kernel launches from a recorded parameter buffer.

use cudarc::driver::sys;
use std::ffi::c_void;

use crate::error::{check, Result};
use crate::module::Function;
use crate::stream::Stream;

/// Geometry and launch attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    /// Thread-block cluster dimensions (Hopper), a `cuLaunchKernelEx` attribute.
    pub cluster: Option<[u32; 3]>,
    pub cooperative: bool,
}

/// A kernel's parameter bytes in device layout and where each parameter starts. Checked against
/// the kernel's own layout before the first launch, so the driver never reads past the buffer.
pub struct Params {
    buf: Vec<u8>,
    slots: Vec<(usize, usize)>,
    pointers: Vec<*mut c_void>,
}

impl Params {
    /// `slots` are `(offset, size)` per parameter; each must lie inside `buf`.
    pub fn new(buf: Vec<u8>, slots: Vec<(usize, usize)>) -> std::result::Result<Params, String> {
        for (i, &(off, size)) in slots.iter().enumerate() {
            if off.checked_add(size).is_none_or(|e| e > buf.len()) {
                return Err(format!(
                    "parameter {i} ({size} bytes at offset {off}) lies outside the {}-byte parameter buffer",
                    buf.len()
                ));
            }
        }
        let mut p = Params {
            buf,
            slots,
            pointers: Vec::new(),
        };
        let base = p.buf.as_mut_ptr();
        // `wrapping_add` keeps this free of `unsafe`; every offset was checked above.
        p.pointers = p
            .slots
            .iter()
            .map(|&(off, _)| base.wrapping_add(off) as *mut c_void)
            .collect();
        Ok(p)
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Replace the 8 bytes at `offset` (a texture or surface handle recreated by the replay);
    /// the offset must lie inside the buffer.
    pub fn set_word(&mut self, offset: usize, value: u64) -> std::result::Result<(), String> {
        let end = offset
            .checked_add(8)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| {
                format!(
                    "parameter bytes {offset}..+8 lie outside the {}-byte parameter buffer",
                    self.buf.len()
                )
            })?;
        self.buf[offset..end].copy_from_slice(&value.to_le_bytes());
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Compare with the kernel's layout from its image: same count, and each recorded parameter
    /// at least as large as the kernel's (the driver copies the kernel's size from our pointer).
    pub fn check_against(&self, kernel: &[(usize, usize)]) -> std::result::Result<(), String> {
        if kernel.len() != self.slots.len() {
            return Err(format!(
                "the kernel in the image takes {} parameter(s) but the record has {}",
                kernel.len(),
                self.slots.len()
            ));
        }
        for (i, (&(_, want), &(_, have))) in kernel.iter().zip(&self.slots).enumerate() {
            if have < want {
                return Err(format!(
                    "parameter {i} is {want} bytes in the image's kernel but the record has {have}"
                ));
            }
        }
        Ok(())
    }
}

/// A parameter layout as `[offset:size, …]`, for messages.
pub fn describe_layout(layout: &[(usize, usize)]) -> String {
    let items: Vec<String> = layout.iter().map(|(o, s)| format!("{o}:{s}")).collect();
    format!("[{}]", items.join(", "))
}

/// The `cuLaunchKernelEx` attributes of a launch: its cluster dimensions and whether it is
/// cooperative (empty for a plain launch). One place for replay's launches and the recorder's
/// launches of graph nodes.
pub(crate) fn launch_attributes(
    cluster: Option<[u32; 3]>,
    cooperative: bool,
) -> Vec<sys::CUlaunchAttribute> {
    let mut attrs = Vec::new();
    if let Some(c) = cluster {
        // SAFETY: a zeroed attribute is valid; the union member matching the id is written.
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a.value.clusterDim.x = c[0];
        a.value.clusterDim.y = c[1];
        a.value.clusterDim.z = c[2];
        attrs.push(a);
    }
    if cooperative {
        // SAFETY: as above, for the cooperative member.
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        a.value.cooperative = 1;
        attrs.push(a);
    }
    attrs
}

/// Launch `f` on `stream`. The caller has checked the parameters against the kernel
/// ([`Params::check_against`]); errors returned here are configuration errors (the kernel did
/// not start) unless [`crate::CudaError::is_sticky`] says an earlier fault surfaced.
pub fn launch(
    f: &Function,
    cfg: &LaunchConfig,
    stream: &Stream,
    params: &mut Params,
) -> Result<()> {
    let mut attrs = launch_attributes(cfg.cluster, cfg.cooperative);
    let [gx, gy, gz] = cfg.grid;
    let [bx, by, bz] = cfg.block;
    if attrs.is_empty() {
        // SAFETY: `f` is live; every pointer in `params.pointers` points into `params.buf` with
        // at least the kernel's parameter size behind it (checked against the image's layout);
        // the driver copies the parameters before returning.
        unsafe {
            cudarc::driver::result::launch_kernel(
                f.raw,
                (gx, gy, gz),
                (bx, by, bz),
                cfg.shared_mem,
                stream.raw,
                &mut params.pointers,
            )
        }
        .map_err(|e| crate::CudaError::new("cuLaunchKernel", e.0))
    } else {
        let config = sys::CUlaunchConfig {
            gridDimX: gx,
            gridDimY: gy,
            gridDimZ: gz,
            blockDimX: bx,
            blockDimY: by,
            blockDimZ: bz,
            sharedMemBytes: cfg.shared_mem,
            hStream: stream.raw,
            attrs: attrs.as_mut_ptr(),
            numAttrs: attrs.len() as u32,
        };
        check(
            // SAFETY: as for cuLaunchKernel; `config` and `attrs` outlive the call.
            unsafe {
                sys::cuLaunchKernelEx(
                    &config,
                    f.raw,
                    params.pointers.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
            "cuLaunchKernelEx",
        )
    }
}
