//! Content-addressed snapshot storage (rr-tui format version 2).
//!
//! Each segment's bytes before and after the kernel are a *blob*: a file `blobs/<id>` named by
//! the XXH3-128 of its contents (32 lowercase hex digits). Identical contents are stored once
//! across all instances of a recording (a network's weights read by a hundred kernels; an output
//! segment the kernel did not change costs nothing), and all-zero 4 KiB pages are file holes.
//! A snapshot is the segments' blobs laid out at their (4 KiB-aligned) offsets, zeros between.

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::descriptor::Descriptor;
use crate::error::{Error, Result};
use crate::fsio;
use crate::instance::{InstanceFiles, Side};
use crate::limits::SEGMENT_ALIGN;

pub const BLOB_DIR: &str = "blobs";
const PAGE: usize = 4096;

/// The recorder stores device memory in pieces of at most this many bytes: an allocation larger
/// than this is recorded as consecutive segments, one per chunk (the last shorter), so a partly
/// changed allocation costs only its changed chunks, and a replay uploads, keeps and verifies
/// each chunk on its own.
pub const CHUNK_BYTES: u64 = 64 << 20;

/// `[addr, addr + size)` cut into consecutive pieces of at most [`CHUNK_BYTES`] (none for an
/// empty range).
pub fn chunks(addr: u64, size: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..size.div_ceil(CHUNK_BYTES)).map(move |i| {
        let at = i * CHUNK_BYTES;
        (addr + at, CHUNK_BYTES.min(size - at))
    })
}

/// The blob id of some bytes.
pub fn blob_id(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// Streaming blob id, for contents that arrive in chunks (xxhash-rust's XXH3, the fastest on
/// data: the recorder hashes every byte it writes with it).
#[derive(Default, Clone)]
pub struct BlobHasher(xxhash_rust::xxh3::Xxh3);

impl BlobHasher {
    pub fn new() -> BlobHasher {
        BlobHasher(xxhash_rust::xxh3::Xxh3::new())
    }
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    pub fn finish(&self) -> String {
        format!("{:032x}", self.0.digest128())
    }
}

/// The blob id of `len` zero bytes, computed without them ([`crate::sparse_hash`]): a chunk of
/// zeros costs no memory and no reading.
pub fn zeros_id(len: u64) -> String {
    let mut h = crate::sparse_hash::Xxh3Sparse::new();
    h.zeros(len);
    format!("{:032x}", h.digest128())
}

/// Whether the blob at `path` holds what its name `id` says: the XXH3-128 of its bytes
/// ([`file_id`]: data read in 1 MiB chunks, holes hashed without reading them). `progress`
/// hears the bytes hashed so far, and may stop the work by returning false (an error then).
pub fn verify_blob(path: &Path, id: &str, progress: &mut dyn FnMut(u64) -> bool) -> Result<()> {
    verify_open(fsio::open_regular(path)?, path, id, progress)
}

/// [`verify_blob`], unless this very file was verified before and has not changed since
/// ([`crate::verified`]): what replay and tune use before loading an instance.
pub fn verify_blob_once(
    path: &Path,
    id: &str,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<()> {
    let list = crate::verified::Verified::user();
    let file = fsio::open_regular(path)?;
    if list.contains(id, &file) {
        return Ok(());
    }
    // Taken before reading: a change made while hashing makes the stamp stale; and only for a
    // file left alone long enough (a recent change may not show in its times yet).
    let stamp = crate::verified::settled(&file)
        .then(|| crate::verified::entry(id, &file))
        .flatten();
    verify_open(file, path, id, progress)?;
    if let Some(stamp) = stamp {
        list.remember(stamp);
    }
    Ok(())
}

fn verify_open(
    file: std::fs::File,
    path: &Path,
    id: &str,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<()> {
    let got = file_id(&file, path, progress)?;
    if got != id {
        return Err(Error::format(
            path,
            format!(
                "holds other bytes than its name says (their XXH3-128 is {got}): the recording was changed after it was made"
            ),
        ));
    }
    Ok(())
}

/// A hole shorter than this is read like data: skipping it costs two more `lseek`s, and a file
/// of many short holes would otherwise cost a pair per page. Short enough that a file can only
/// make `check` read zeros by spending disk on data around them: one 4 KiB block every 64 KiB
/// (a 16th of the file's length on disk) at worst, where 1 MiB let one byte in 512 KiB make a
/// 16 GiB file of 129 MB on disk read in full (hostile review: 53 s against 0.3 s of holes).
const MIN_SKIPPED_HOLE: u64 = 64 << 10;
/// Zeros hashed between two progress reports (about 5 ms of lane arithmetic).
const ZERO_STEP: u64 = 1 << 30;

/// The blob id of an open file: its bytes as long as it was when opened, data read in 1 MiB
/// chunks, holes hashed as zeros without reading them (a terabyte of holes takes seconds, not a
/// quarter of an hour of reading zeros). The id is the same as of the bytes read one by one. A
/// file whose length changes meanwhile is an error: what was hashed is not what it holds.
pub fn file_id(
    file: &std::fs::File,
    path: &Path,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<String> {
    let len_now = || {
        file.metadata()
            .map(|m| m.len())
            .map_err(|e| Error::io(path, e))
    };
    let len = len_now()?;
    let mut hasher = crate::sparse_hash::Xxh3Sparse::new();
    let mut buf = Vec::new();
    let mut at = 0u64;
    let interrupted = || Error::format(path, "verification interrupted");
    while at < len {
        // Zeros up to `skip_to`, then bytes read from `at` to the end of the data at `data`
        // (a short hole before it is read with it).
        let (skip_to, data) = match fsio::next_data(file, at, len) {
            Some(d) if d - at >= MIN_SKIPPED_HOLE => (d, d),
            Some(d) => (at, d),
            None => (len, len),
        };
        while at < skip_to {
            let n = (skip_to - at).min(ZERO_STEP);
            hasher.zeros(n);
            at += n;
            if !progress(at) {
                return Err(interrupted());
            }
        }
        let end = match data < len {
            true => fsio::next_hole(file, data, len),
            false => len,
        };
        if buf.is_empty() && at < end {
            buf = vec![0u8; 1 << 20];
        }
        while at < end {
            let want = (end - at).min(buf.len() as u64) as usize;
            let n = match file.read_at(&mut buf[..want], at) {
                Ok(0) => return Err(Error::format(path, "became shorter while being read")),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(path, e)),
            };
            hasher.update(&buf[..n]);
            at += n as u64;
            if !progress(at) {
                return Err(interrupted());
            }
        }
    }
    if len_now()? != len {
        return Err(Error::format(
            path,
            format!("changed length while being read (it was {len} bytes)"),
        ));
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

/// The distinct blobs an instance's snapshots name, `(id, path)` (in the directory's `blobs/`;
/// a name that is not a plain 32-digit hex id is not a blob rr-tui wrote and is left to
/// [`layout`]'s checks). A blob whose length is not its segment's is left out too: that is
/// [`layout`]'s error already, and hashing it (perhaps a terabyte of holes) says nothing more.
pub fn blobs_of(files: &InstanceFiles, d: &Descriptor) -> Vec<(String, PathBuf)> {
    let Some(cuda) = d.cuda.as_ref() else {
        return vec![];
    };
    let Some(content) = cuda.content.as_ref() else {
        return vec![];
    };
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    let mut seen: std::collections::HashSet<&str> = Default::default();
    for (seg, id) in cuda.segments.iter().zip(content).flat_map(|(seg, c)| {
        std::iter::once((seg, &c.input)).chain(c.output.as_ref().map(|o| (seg, o)))
    }) {
        let plain = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
        if !plain || !seen.insert(id.as_str()) {
            continue;
        }
        // Only blobs inside the directory (a link out of it is refused by `layout`).
        let rel = format!("{BLOB_DIR}/{id}");
        if let Ok(path) = fsio::resolve_inside(&files.dir, &rel, &files.json()) {
            if fsio::regular_len(&path).is_ok_and(|len| len == seg.size) {
                out.push((id.clone(), path));
            }
        }
    }
    out
}

/// The blobs of a record directory, `(id, path)`: the files of its `blobs/` folder named as
/// rr-tui names them (a `blobs` that is a link out of the directory gives none: `layout`
/// refuses it where an instance uses it).
pub fn blobs_in(record_dir: &Path) -> Vec<(String, PathBuf)> {
    let dir = record_dir.join(BLOB_DIR);
    let is_dir = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
    let Some(entries) = is_dir.then(|| std::fs::read_dir(&dir).ok()).flatten() else {
        return vec![];
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let id = e.file_name().to_str()?.to_string();
            let plain = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
            plain.then(|| (id, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// One piece of a snapshot: `size` bytes at `offset`, from a blob file (or zeros between
/// segments when `blob` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub offset: u64,
    pub size: u64,
    pub blob: Option<PathBuf>,
}

/// How a recorded snapshot is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// One file holds the whole snapshot (LLVM records, legacy ones too, and rr-tui format 1).
    File(PathBuf),
    /// Blobs per segment (rr-tui format 2); `len` is the snapshot's length.
    Blobs { len: u64, pieces: Vec<Piece> },
}

/// Where a recorded snapshot's bytes are. Blob paths come from file contents, so each must
/// resolve inside the record directory; a missing output (not recorded) is `NotFound`.
pub fn layout(files: &InstanceFiles, d: &Descriptor, side: Side) -> Result<Layout> {
    let Some(content) = d.cuda.as_ref().and_then(|c| c.content.as_ref()) else {
        return Ok(Layout::File(files.snapshot_file(d, side)));
    };
    let segments = &d.cuda.as_ref().expect("content implies cuda").segments;
    let mut pieces = Vec::with_capacity(segments.len());
    let mut end = 0u64;
    // Segments by index, with the address where they have one (arrays have none).
    let name = |i: usize, seg: &crate::Segment| match seg.addressable() {
        true => format!("segment {i} ({:#x})", seg.addr),
        false => format!("segment {i} (a CUDA array)"),
    };
    for (i, (seg, c)) in segments.iter().zip(content).enumerate() {
        let id = match side {
            Side::Input => Some(&c.input),
            Side::Output => c.output.as_ref(),
        };
        let Some(id) = id else {
            return Err(Error::io(
                files.json(),
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the output was not recorded (rr-tui record --no-output)",
                ),
            ));
        };
        let rel = format!("{BLOB_DIR}/{id}");
        // A blob the descriptor names but the directory lacks is damage, not "not recorded".
        let missing = |e: Error| {
            if e.is_not_found() {
                Error::format(
                    files.dir.join(&rel),
                    format!(
                        "missing: the {} blob of {} named by {}",
                        if side == Side::Input {
                            "input"
                        } else {
                            "output"
                        },
                        name(i, seg),
                        crate::text::visible_path(&files.json())
                    ),
                )
            } else {
                e
            }
        };
        let path = fsio::resolve_inside(&files.dir, &rel, &files.json()).map_err(missing)?;
        let len = fsio::regular_len(&path).map_err(missing)?;
        if len != seg.size {
            return Err(Error::format(
                &path,
                format!("is {len} bytes but {} is {} bytes", name(i, seg), seg.size),
            ));
        }
        pieces.push(Piece {
            offset: seg.offset,
            size: seg.size,
            blob: Some(path),
        });
        end = end.max(seg.offset + seg.size);
    }
    Ok(Layout::Blobs { len: end, pieces })
}

/// The length of a recorded snapshot without reading it.
pub fn recorded_len(files: &InstanceFiles, d: &Descriptor, side: Side) -> Result<u64> {
    match layout(files, d, side)? {
        Layout::File(p) => fsio::regular_len(&p),
        Layout::Blobs { len, .. } => Ok(len),
    }
}

/// The directory's blob store, for writing.
pub struct BlobStore {
    dir: PathBuf,
}

impl BlobStore {
    /// Open (creating `blobs/` if needed) the store of a record directory.
    pub fn open(record_dir: &Path) -> Result<BlobStore> {
        let dir = record_dir.join(BLOB_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(BlobStore { dir })
    }

    pub fn path(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// Whether a blob with this id and size is already stored.
    pub fn contains(&self, id: &str, size: u64) -> bool {
        fsio::regular_len(&self.path(id)).is_ok_and(|n| n == size)
    }

    /// Start writing a blob of `size` bytes (into a fresh temporary file).
    pub fn writer(&self, size: u64) -> Result<BlobWriter> {
        let tmp = fsio::AtomicWriter::create(&self.dir.join("incoming"))?;
        Ok(BlobWriter {
            tmp,
            size,
            written: 0,
            stored: 0,
        })
    }
}

/// A blob being written: chunks in order; all-zero pages are skipped, leaving holes.
pub struct BlobWriter {
    tmp: fsio::AtomicWriter,
    size: u64,
    written: u64,
    /// Bytes actually written (not holes).
    stored: u64,
}

impl BlobWriter {
    /// Append the next chunk of the blob.
    pub fn write(&mut self, chunk: &[u8]) -> Result<()> {
        let mut off = 0usize;
        while off < chunk.len() {
            let end = (off + PAGE).min(chunk.len());
            let page = &chunk[off..end];
            if page.iter().any(|&b| b != 0) {
                // Coalesce this run of non-zero pages into one write.
                let mut run_end = end;
                while run_end < chunk.len() {
                    let next = (run_end + PAGE).min(chunk.len());
                    if chunk[run_end..next].iter().all(|&b| b == 0) {
                        break;
                    }
                    run_end = next;
                }
                self.tmp
                    .file()
                    .write_all_at(&chunk[off..run_end], self.written + off as u64)
                    .map_err(|e| Error::io(self.tmp.path(), e))?;
                self.stored += (run_end - off) as u64;
                off = run_end;
            } else {
                off = end;
            }
        }
        self.written += chunk.len() as u64;
        Ok(())
    }

    /// Append `n` zero bytes (a hole: nothing is written).
    pub fn zeros(&mut self, n: u64) {
        self.written = self.written.saturating_add(n);
    }

    /// Finish: the file gets its full length (trailing zeros are a hole too) and is renamed to
    /// its id. Returns the bytes actually stored.
    pub fn commit(mut self, store: &BlobStore, id: &str) -> Result<u64> {
        if self.written != self.size {
            return Err(Error::format(
                self.tmp.path(),
                format!("blob got {} of {} bytes", self.written, self.size),
            ));
        }
        self.tmp
            .file()
            .set_len(self.size)
            .map_err(|e| Error::io(self.tmp.path(), e))?;
        self.tmp
            .flush()
            .map_err(|e| Error::io(self.tmp.path(), e))?;
        let target = store.path(id);
        let stored = self.stored;
        // Renaming over an existing blob (written meanwhile by another process of the same
        // recording) is harmless: same id, same bytes.
        let mut w = self.tmp;
        w.retarget(&target);
        w.commit()?;
        Ok(stored)
    }
}

/// The offsets of segments of these sizes in a version-2 snapshot (each at a multiple of
/// [`SEGMENT_ALIGN`]).
pub fn aligned_offsets(sizes: &[u64]) -> Vec<u64> {
    let mut off = 0u64;
    sizes
        .iter()
        .map(|&s| {
            let at = off;
            off = (at + s).div_ceil(SEGMENT_ALIGN) * SEGMENT_ALIGN;
            at
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn zero_pages_become_holes_and_ids_are_contents() {
        let d = tempfile::tempdir().unwrap();
        let store = BlobStore::open(d.path()).unwrap();
        let mut bytes = vec![0u8; 64 * PAGE];
        bytes[3 * PAGE + 7] = 1;
        bytes[40 * PAGE] = 2;
        let id = blob_id(&bytes);
        let mut h = BlobHasher::new();
        for c in bytes.chunks(10_000) {
            h.update(c);
        }
        assert_eq!(h.finish(), id, "streaming and one-shot ids agree");
        assert!(!store.contains(&id, bytes.len() as u64));
        let mut w = store.writer(bytes.len() as u64).unwrap();
        for c in bytes.chunks(10_000) {
            w.write(c).unwrap();
        }
        let stored = w.commit(&store, &id).unwrap();
        assert!(
            stored <= 4 * PAGE as u64,
            "only the non-zero pages: {stored}"
        );
        assert!(store.contains(&id, bytes.len() as u64));
        assert_eq!(std::fs::read(store.path(&id)).unwrap(), bytes);
        let blocks = std::fs::metadata(store.path(&id)).unwrap().blocks();
        assert!(
            blocks * 512 < bytes.len() as u64 / 2,
            "sparse on disk: {blocks} blocks"
        );
        assert_eq!(
            std::fs::read_dir(d.path().join(BLOB_DIR)).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn ids_are_canonical_xxh3_128_hex() {
        // python3 -c "import xxhash; print(xxhash.xxh3_128_hexdigest(b'abc'))"
        assert_eq!(blob_id(b"abc"), "06b05ab6733a618578af5f94892f3950");
        assert!(crate::descriptor::is_blob_id(&blob_id(b"")));
    }

    #[test]
    fn ranges_are_cut_into_whole_chunks_and_a_shorter_last_one() {
        let c = CHUNK_BYTES;
        assert_eq!(chunks(0x1000, 10).collect::<Vec<_>>(), [(0x1000, 10)]);
        assert_eq!(chunks(0x1000, c).collect::<Vec<_>>(), [(0x1000, c)]);
        assert_eq!(
            chunks(0x1000, 2 * c + 5).collect::<Vec<_>>(),
            [(0x1000, c), (0x1000 + c, c), (0x1000 + 2 * c, 5)]
        );
        assert_eq!(chunks(0x1000, 0).count(), 0);
    }

    #[test]
    fn offsets_are_page_aligned() {
        assert_eq!(aligned_offsets(&[1000, 4096, 1]), vec![0, 4096, 8192]);
        assert_eq!(aligned_offsets(&[]), Vec::<u64>::new());
    }
}
