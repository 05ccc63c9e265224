//! Bytes to disk through page-locked buffers and worker threads: the drain copies what the
//! snapshot kernels staged (chunks of the staging ring, arrays in the metadata area) into free
//! buffers through its own stream and hands each to a worker, which hashes it (to name its
//! blob) and writes it (skipping zero pages); buffers come back when done, so copying, hashing
//! and writing overlap. A segment's chunks always go to the same worker, in order. What is
//! copied is likely new (the GPU told what is not): hashed while written, in one pass, and
//! dropped when a blob of its id is stored already (`hash_and_store`).

use crossbeam_channel::{bounded, unbounded};
use rr_format::store::{BlobHasher, BlobStore};

/// One piece of what a kernel reads, as the pipeline copies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `size` bytes of device (or device-mapped host) memory at `addr`.
    Memory { addr: u64, size: u64 },
    /// The contents of a CUDA array (row after row).
    Array {
        handle: u64,
        desc: rr_format::objects::ArrayDesc,
        size: u64,
    },
    /// `size` bytes at position `at` of the recorder's staging ring (they may run over its end
    /// and go on at its start).
    Staged { at: u64, size: u64 },
}

impl Source {
    pub fn size(&self) -> u64 {
        match *self {
            Source::Memory { size, .. }
            | Source::Array { size, .. }
            | Source::Staged { size, .. } => size,
        }
    }
}

/// Where segment bytes come from (the GPU in production, a buffer in tests).
pub trait DeviceMemory: Sync {
    /// Bytes `[offset, offset + dst.len())` of `source`.
    fn read(&self, source: &Source, offset: u64, dst: &mut [u8]) -> Result<(), String>;
}

/// The staging buffers (all of the same size).
pub struct Staging<B> {
    buffers: Vec<B>,
}

impl<B: AsRef<[u8]> + AsMut<[u8]> + Send> Staging<B> {
    pub fn new(buffers: Vec<B>) -> Staging<B> {
        assert!(!buffers.is_empty(), "at least one staging buffer");
        Staging { buffers }
    }

    fn chunk(&self) -> usize {
        self.buffers[0].as_ref().len()
    }

    /// Stream every segment `(addr, size)` through its sink, chunk by chunk, in order.
    fn run<S: Sink>(
        &mut self,
        dev: &dyn DeviceMemory,
        segments: &[Source],
        sinks: Vec<S>,
    ) -> Result<Vec<S>, String> {
        let chunk = self.chunk();
        let workers = segments.len().clamp(1, 4);
        let (free_tx, free_rx) = unbounded::<B>();
        for b in self.buffers.drain(..) {
            let _ = free_tx.send(b);
        }
        let mut queues = Vec::new();
        let mut owned: Vec<Vec<(usize, S)>> = (0..workers).map(|_| Vec::new()).collect();
        for (i, s) in sinks.into_iter().enumerate() {
            owned[i % workers].push((i, s));
        }
        let result = std::thread::scope(|scope| {
            let mut handles = Vec::new();
            for mine in owned {
                let (tx, rx) = bounded::<(usize, B, usize)>(4);
                queues.push(tx);
                let free = free_tx.clone();
                handles.push(scope.spawn(move || {
                    let mut mine = mine;
                    let mut error = None;
                    for (seg, buf, len) in rx {
                        if error.is_none() {
                            if let Some((_, sink)) = mine.iter_mut().find(|(i, _)| *i == seg) {
                                error = sink.take(&buf.as_ref()[..len]).err();
                            }
                        }
                        let _ = free.send(buf);
                    }
                    (mine, error)
                }));
            }
            let mut read_error = None;
            'segments: for (i, source) in segments.iter().enumerate() {
                let size = source.size();
                let mut off = 0u64;
                while off < size {
                    let len = chunk.min((size - off) as usize);
                    let Ok(mut buf) = free_rx.recv() else {
                        break 'segments;
                    };
                    if let Err(e) = dev.read(source, off, &mut buf.as_mut()[..len]) {
                        read_error = Some(e);
                        let _ = free_tx.send(buf);
                        break 'segments;
                    }
                    if queues[i % workers].send((i, buf, len)).is_err() {
                        break 'segments;
                    }
                    off += len as u64;
                }
            }
            queues.clear();
            let mut sinks: Vec<(usize, S)> = Vec::new();
            let mut error = read_error;
            for h in handles {
                match h.join() {
                    Ok((mine, e)) => {
                        sinks.extend(mine);
                        error = error.or(e);
                    }
                    Err(_) => error = error.or(Some("a snapshot worker panicked".into())),
                }
            }
            sinks.sort_by_key(|(i, _)| *i);
            match error {
                Some(e) => Err(e),
                None => Ok(sinks.into_iter().map(|(_, s)| s).collect()),
            }
        });
        drop(free_tx);
        self.buffers.extend(free_rx.try_iter());
        result
    }

    /// Hash and write in one pass, for contents that are likely new (their fingerprint was
    /// not known): each segment goes to a temporary file while it is hashed, and is renamed to
    /// its id, or dropped when a blob of that id is stored already. Returns the ids and the
    /// bytes written.
    pub fn hash_and_store(
        &mut self,
        dev: &dyn DeviceMemory,
        store: &BlobStore,
        segments: &[Source],
    ) -> Result<(Vec<String>, u64), String> {
        if segments.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let sinks = segments
            .iter()
            .map(|s| {
                let w = store.writer(s.size()).map_err(|e| e.to_string())?;
                Ok(HashWriting(BlobHasher::new(), w))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let mut ids = Vec::with_capacity(segments.len());
        let mut stored = 0;
        for (sink, seg) in self.run(dev, segments, sinks)?.into_iter().zip(segments) {
            let id = sink.0.finish();
            if !store.contains(&id, seg.size()) {
                stored += sink.1.commit(store, &id).map_err(|e| e.to_string())?;
            }
            ids.push(id);
        }
        Ok((ids, stored))
    }
}

/// What a worker does with a segment's chunks.
trait Sink: Send {
    fn take(&mut self, bytes: &[u8]) -> Result<(), String>;
}

struct HashWriting(BlobHasher, rr_format::store::BlobWriter);

impl Sink for HashWriting {
    fn take(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.0.update(bytes);
        self.1.write(bytes).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Device memory faked by a buffer at address 0x1000.
    struct Fake(Vec<u8>);

    impl DeviceMemory for Fake {
        fn read(&self, source: &Source, offset: u64, dst: &mut [u8]) -> Result<(), String> {
            let Source::Memory { addr, .. } = *source else {
                return Err("no arrays here".into());
            };
            let start = (addr + offset - 0x1000) as usize;
            dst.copy_from_slice(self.0.get(start..start + dst.len()).ok_or("out of range")?);
            Ok(())
        }
    }

    #[test]
    fn blobs_are_named_by_their_bytes_and_written_once() {
        let mut mem = vec![0u8; 3 << 20];
        for (i, b) in mem.iter_mut().enumerate().take(1 << 20) {
            *b = (i % 251) as u8;
        }
        mem[(2 << 20)..(2 << 20) + 5].copy_from_slice(b"hello");
        let dev = Fake(mem.clone());
        let mut staging = Staging::new((0..3).map(|_| vec![0u8; 64 << 10]).collect());
        // Two identical segments and one mostly-zero segment.
        let mem_at = |addr: u64, size: u64| Source::Memory { addr, size };
        let segs = [
            mem_at(0x1000, 1 << 20),
            mem_at(0x1000, 1 << 20),
            mem_at(0x1000 + (2 << 20), 1 << 20),
        ];
        let d = tempfile::tempdir().unwrap();
        let store = BlobStore::open(d.path()).unwrap();
        let (ids, written) = staging.hash_and_store(&dev, &store, &segs).unwrap();
        assert_eq!(ids[0], rr_format::store::blob_id(&mem[..1 << 20]));
        assert_eq!(ids[0], ids[1]);
        assert_eq!(ids[2], rr_format::store::blob_id(&mem[2 << 20..3 << 20]));
        assert_eq!(
            written,
            (1 << 20) + 4096,
            "the shared blob once, the zero pages as holes"
        );
        assert_eq!(std::fs::read(store.path(&ids[0])).unwrap(), &mem[..1 << 20]);
        assert_eq!(std::fs::read(store.path(&ids[2])).unwrap(), &mem[2 << 20..]);
        let again = staging.hash_and_store(&dev, &store, &segs).unwrap();
        assert_eq!(again, (ids.clone(), 0), "stored already: nothing written");
        let files = std::fs::read_dir(d.path().join("blobs")).unwrap().count();
        assert_eq!(files, 2, "two distinct blobs, no temporary file left");
        assert_eq!(staging.buffers.len(), 3, "every buffer came back");
        assert!(
            staging
                .hash_and_store(&dev, &store, &[mem_at(0x1000 + (3 << 20), 16)])
                .is_err(),
            "read errors surface"
        );
        assert_eq!(staging.buffers.len(), 3);
    }
}
