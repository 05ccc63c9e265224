//! Benchmark aids: how fast this machine copies the recorded input to the device, measured
//! by the ways a restore can go.

use std::time::Instant;

use rr_cuda::upload::UploadError;
use rr_cuda::PinnedBuffer;
use rr_format::instance::Side;

use super::{classify, Pristine, RunError, Session};
use crate::replay::instance::ReplayInstance;
use crate::replay::load_threads::threads;
use crate::replay::loading::SnapshotSource;
use crate::snapshot::open_recorded;

impl Session {
    /// Benchmark aids: the largest segment copied once from pinned memory with a single
    /// synchronous call and once from pageable memory, and restored once from the device copy.
    /// Leaves the recorded input in place.
    pub fn calibrate(&mut self, inst: &ReplayInstance) -> std::result::Result<String, RunError> {
        let Some(&(addr, off, len)) = self.input.copies.iter().max_by_key(|c| c.2) else {
            return Ok("bytes=0".into());
        };
        let input = open_recorded(&inst.files, &inst.descriptor, Side::Input)?;
        let pinned = PinnedBuffer::copy_of(input.window(off as u64, len)).map_err(classify)?;
        input.check_intact()?;
        let pageable = pinned.as_slice().to_vec();
        let t = Instant::now();
        self.instance
            .memory
            .upload_single(addr, pinned.as_slice())
            .map_err(classify)?;
        let pinned_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        self.instance
            .memory
            .upload_single(addr, &pageable)
            .map_err(classify)?;
        let pageable_s = t.elapsed().as_secs_f64();
        let device_s = match &self.input.pristine {
            Pristine::Device(buf) => {
                let t = Instant::now();
                self.instance
                    .memory
                    .restore_from(&self.stream, buf, &[(addr, off, len)])
                    .map_err(classify)?;
                Some(t.elapsed().as_secs_f64())
            }
            _ => None,
        };
        // The other limit of a first restore: reading the input as a restore reads it (the same
        // threads, into the same staging buffers), without copying it to the device.
        let t = Instant::now();
        let read = rr_cuda::upload::read_through(
            &self.input.copies,
            &SnapshotSource(&input),
            threads(),
            &mut self.input.staging,
        )
        .map_err(|e| match e {
            UploadError::Cuda(e) => classify(e),
            UploadError::Source(e) => RunError::from(e),
        })?;
        let read_s = t.elapsed().as_secs_f64();
        // The whole restore again, the same way as the first: a first restore much slower than
        // this one pays a one-time cost (cold page cache, first use of the device memory).
        let t = Instant::now();
        self.instance
            .memory
            .upload_streamed(
                &self.stream,
                &self.input.copies,
                &SnapshotSource(&input),
                threads(),
                &mut self.input.staging,
                &mut |_| {},
            )
            .map_err(|e| match e {
                UploadError::Cuda(e) => classify(e),
                UploadError::Source(e) => RunError::from(e),
            })?;
        let again_s = t.elapsed().as_secs_f64();
        let gbps = |s: f64| len as f64 / s / 1e9;
        Ok(format!(
            "bytes={len} pinned_single_copy_gbps={:.2} pageable_copy_gbps={:.2} pageable_s={:.6} device_restore_s={} read_bytes={read} input_read_gbps={:.2} restore_again_gbps={:.2}",
            gbps(pinned_s),
            gbps(pageable_s),
            pageable_s,
            device_s.map(|d| format!("{d:.6}")).unwrap_or_else(|| "none".into()),
            read as f64 / read_s / 1e9,
            read as f64 / again_s / 1e9
        ))
    }
}
