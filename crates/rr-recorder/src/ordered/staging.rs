//! One context's snapshot resources (the recorder's kernels, staging ring, metadata and upload
//! areas: `rr_cuda::ordered::Snapshotter`) with the space the recorder hands out of them, and
//! the enqueueing of one snapshot on an application's stream.

use std::sync::{Arc, Mutex, OnceLock};

use rr_cuda::objects::ArrayCopy;
use rr_cuda::ordered::{SnapAddrs, Snapshotter};

use super::arena::Arena;
use super::plan::{self, Chunk, Layout, SnapShared};
use super::ring::RingTail;
use crate::locks::lock;

/// The default staging ring: half the device memory free when the first launch of a context
/// is recorded, at most this much. A snapshot's new content (the chunks copied) must fit in
/// what the ring has free: the first snapshot of a model-sized process holds all of its
/// resident memory that is not zero.
const DEFAULT_RING_MAX: u64 = 32 << 30;
const DEFAULT_RING_MIN: u64 = 64 << 20;
/// The upload area (chunk tables and held sums: 16 bytes a MiB snapshot).
const UPLOAD_BYTES: u64 = 16 << 20;

pub struct ContextStaging {
    pub context: u64,
    pub gpu: Snapshotter,
    spaces: Mutex<Spaces>,
}

struct Spaces {
    meta: Arena,
    upload: Arena,
    tail: RingTail,
}

/// Why a snapshot was not enqueued.
#[derive(Debug)]
pub enum Refused {
    /// The recorder's own space is used up (the instance is skipped, said as "staging full").
    Full(String),
    /// A driver call failed: recording stops.
    Failed(String),
}

/// A piece of the metadata or upload area, given back when dropped (after the snapshot that
/// used it is drained: until then the stream may still write or read it).
pub struct Piece {
    staging: Arc<ContextStaging>,
    at: u64,
    len: u64,
    upload: bool,
}

impl Drop for Piece {
    fn drop(&mut self) {
        let mut s = lock(&self.staging.spaces);
        let arena = if self.upload {
            &mut s.upload
        } else {
            &mut s.meta
        };
        arena.give_back(self.at, self.len);
    }
}

/// A snapshot enqueued on an application's stream.
pub struct Snap {
    pub staging: Arc<ContextStaging>,
    pub shared: Arc<SnapShared>,
    pub chunks: Vec<Chunk>,
    pub layout: Layout,
    /// The device address of the snapshot's metadata region.
    pub base: u64,
    _upload: Piece,
}

impl Snap {
    /// The kernels' results (see [`plan::outcomes`]), read through the recorder's own stream.
    pub fn read_back(&self) -> Result<Vec<u8>, String> {
        let (start, len) = self.layout.readback();
        let mut out = vec![0u8; len as usize];
        self.staging
            .gpu
            .read(self.base + start, &mut out)
            .map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// The device address of array `i`'s copy.
    pub fn array_addr(&self, i: usize) -> u64 {
        self.base + self.layout.arrays[i]
    }
}

impl ContextStaging {
    /// Set up the current context (`context`) with its loaded kernels: allocate the areas. The
    /// ring holds `ring` bytes, or by default half the free device memory (at most 32 GiB).
    pub fn new(
        context: u64,
        mut gpu: Snapshotter,
        ring: Option<u64>,
    ) -> Result<ContextStaging, String> {
        let ring = match ring {
            Some(r) => r,
            None => {
                let free = rr_cuda::ordered::free_device_memory().map_err(|e| e.to_string())?;
                (free / 2).clamp(DEFAULT_RING_MIN, DEFAULT_RING_MAX)
            }
        };
        let meta = (ring / 16).clamp(16 << 20, 512 << 20);
        gpu.allocate(ring, meta, UPLOAD_BYTES as usize)
            .map_err(|e| e.to_string())?;
        Ok(ContextStaging {
            context,
            spaces: Mutex::new(Spaces {
                meta: Arena::new(meta),
                upload: Arena::new(UPLOAD_BYTES),
                tail: RingTail::default(),
            }),
            gpu,
        })
    }

    fn piece(self: &Arc<Self>, len: u64, upload: bool, what: &str) -> Result<Piece, Refused> {
        let at = {
            let mut s = lock(&self.spaces);
            let arena = if upload { &mut s.upload } else { &mut s.meta };
            arena.take(len).ok_or_else(|| {
                Refused::Full(format!(
                    "{what}: {len} bytes asked, {} of {} free",
                    arena.free_bytes(),
                    arena.len()
                ))
            })?
        };
        Ok(Piece {
            staging: self.clone(),
            at,
            len,
            upload,
        })
    }

    /// Enqueue a snapshot of `chunks` and `arrays` on `stream` (the application's).
    pub fn enqueue(
        self: &Arc<Self>,
        stream: u64,
        chunks: Vec<Chunk>,
        arrays: &[ArrayCopy],
    ) -> Result<Snap, Refused> {
        let sizes: Vec<u64> = arrays.iter().map(|a| a.desc.bytes().unwrap_or(0)).collect();
        let layout = plan::layout(&chunks, &sizes)
            .ok_or_else(|| Refused::Full("a snapshot too large to describe".into()))?;
        let meta = self.piece(layout.len, false, "snapshot metadata")?;
        let upload = self.piece(layout.upload_len(), true, "snapshot uploads")?;
        let base = self.gpu.meta_addr(meta.at);
        let bytes = plan::upload(&chunks, &layout, base);
        let failed = |e: rr_cuda::CudaError| Refused::Failed(e.to_string());
        self.gpu
            .stage_upload(upload.at as usize, &bytes)
            .map_err(failed)?;
        let addrs = SnapAddrs {
            table: base + layout.table,
            chunks: u32::try_from(chunks.len())
                .map_err(|_| Refused::Full("too many chunks in one snapshot".into()))?,
            leaves: layout.leaves,
            upload_from: upload.at as usize,
            upload_len: bytes.len(),
            flags: base + layout.flags,
            sums: base + layout.sums,
            offsets: base + layout.offsets,
            status: base + layout.status,
        };
        let enqueued = self.gpu.enqueue(stream, &addrs).and_then(|()| {
            arrays
                .iter()
                .enumerate()
                .try_for_each(|(i, a)| a.enqueue_to_device(base + layout.arrays[i], stream))
        });
        if let Err(e) = enqueued {
            // Part of it may still run on the stream: the pieces are never given back.
            std::mem::forget(meta);
            std::mem::forget(upload);
            return Err(failed(e));
        }
        let shared = Arc::new(SnapShared {
            sums_addr: base + layout.sums,
            first_leaf: layout.first_leaf.clone(),
            lens: chunks.iter().map(|c| c.len).collect(),
            ids: OnceLock::new(),
            region: Box::new(meta),
        });
        Ok(Snap {
            staging: self.clone(),
            shared,
            chunks,
            layout,
            base,
            _upload: upload,
        })
    }

    /// Give back a ring region the plan kernel took (drained now).
    pub fn give_back_ring(&self, taken_at: u64, length: u64) {
        let moved = lock(&self.spaces).tail.give_back(taken_at, length);
        if let Some(tail) = moved {
            self.gpu.set_tail(tail);
        }
    }
}
