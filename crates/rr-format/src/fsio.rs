//! Files that come from anyone, read and written safely.
//!
//! A record directory may come from a bug report, a colleague or a shared scratch space. So:
//!
//! - every file is read only if it is a **regular file** (after following links): a FIFO would
//!   block `open` and `read` forever, a link to `/dev/zero` would never end. The kind is checked
//!   by `stat` before opening, the file is opened non-blocking (so a file swapped for a FIFO
//!   between the two cannot block), and checked again with `fstat` on the open descriptor;
//! - its **size is checked before reading** against a limit sane for its kind, and the read
//!   itself stops one byte past the limit (a file that grows meanwhile is refused, not followed);
//! - paths taken from file *contents* must **resolve inside the record directory** after
//!   following links ([`resolve_inside`]);
//! - everything written is **created fresh** ([`write_atomic`], [`AtomicWriter`]): a new
//!   temporary file (`O_CREAT | O_EXCL`, so never through an existing link) in the target's
//!   directory, renamed over the target at the end (`rename` replaces a link, it does not follow
//!   it), so readers never see half a file and a killed writer leaves no partial one.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// Descriptors are small JSON objects: 300 000 arguments or 100 000 segments fit in about 6 MiB.
/// A parsed JSON document takes about ten times its size in memory, so this bounds what one
/// descriptor can cost (about 200 MiB) rather than what any recording needs.
pub const MAX_DESCRIPTOR_BYTES: u64 = 16 << 20;
/// Module globals: a large `__device__` array is plausible, a file beyond 1 GiB is not.
pub const MAX_GLOBALS_BYTES: u64 = 1 << 30;
/// Device images: PyTorch's largest cubins are ~14 MB, fatbins of big libraries a few hundred.
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;
/// A report file, or a captured application log holding one.
pub const MAX_REPORT_BYTES: u64 = 64 << 20;

/// What a non-regular file is, for messages.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

fn ensure_regular(path: &Path, meta: &Metadata) -> Result<()> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(Error::format(
            path,
            format!("is {}, not a regular file: refused", kind_of(meta)),
        ))
    }
}

/// The metadata of a regular file (links followed), without opening it.
pub fn regular_metadata(path: &Path) -> Result<Metadata> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    ensure_regular(path, &meta)?;
    Ok(meta)
}

/// The size of a regular file, without opening it.
pub fn regular_len(path: &Path) -> Result<u64> {
    regular_metadata(path).map(|m| m.len())
}

/// Open a regular file for reading; anything else is refused without a blocking `open`.
pub fn open_regular(path: &Path) -> Result<File> {
    let before = regular_metadata(path)?;
    // O_NONBLOCK: if the path was swapped for a FIFO after the stat, `open` still returns at
    // once and the fstat below refuses it. O_NOCTTY: a terminal device never becomes ours.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let after = file.metadata().map_err(|e| Error::io(path, e))?;
    ensure_regular(path, &after)?;
    if (before.dev(), before.ino()) != (after.dev(), after.ino()) {
        return Err(Error::format(
            path,
            "was replaced while being opened: refused",
        ));
    }
    Ok(file)
}

/// Open a regular file of at most `limit` bytes for streaming (no more than `limit + 1` bytes
/// can be read from it: one past the limit tells a file that grew meanwhile); `what` names it in
/// messages. Also returns its length when opened.
pub fn open_limited(path: &Path, limit: u64, what: &str) -> Result<(std::io::Take<File>, u64)> {
    let file = open_regular(path)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len > limit {
        return Err(Error::format(
            path,
            format!(
                "is {len} bytes; a {what} larger than {limit} bytes is not plausible, so it is not read"
            ),
        ));
    }
    Ok((file.take(limit + 1), len))
}

/// Read a whole regular file of at most `limit` bytes; `what` names it in messages.
///
/// Holes of a sparse file are not read: the buffer starts as zeros the system maps lazily, and
/// only the file's data extents (SEEK_DATA/SEEK_HOLE) are read into it. A 1 GiB file of holes
/// then costs neither a gigabyte of reads nor of resident memory.
pub fn read_limited(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let (take, len) = open_limited(path, limit, what)?;
    let file = take.into_inner();
    // Fits: `len <= limit`, and every limit of this module is far below `usize::MAX`.
    let mut buf = vec![0u8; usize::try_from(len).map_err(|_| too_large(path, len))?];
    let mut at = 0;
    while let Some(start) = next_data(&file, at, len) {
        let end = next_hole(&file, start, len);
        read_exact_at(&file, &mut buf[start as usize..end as usize], start)
            .map_err(|e| changed_or(path, e))?;
        at = end;
    }
    // A file still being written (a report, say) is read as it was when opened, unless it grew
    // past what is plausible for its kind.
    let now = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if now > limit {
        return Err(Error::format(
            path,
            format!("grew past {limit} bytes while being read: refused"),
        ));
    }
    Ok(buf)
}

fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

fn too_large(path: &Path, len: u64) -> Error {
    Error::format(
        path,
        format!("is {len} bytes, more than this machine can address"),
    )
}

/// A read that ended early: the file shrank while being read.
fn changed_or(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        Error::format(path, "shrank while being read: refused")
    } else {
        Error::io(path, e)
    }
}

/// Where the next data of `file` at or after `at` starts, below `end` (SEEK_DATA, lseek(2): the
/// file system's own map of a sparse file); `None` when only a hole follows. A file system that
/// cannot say gets `Some(at)`: everything is data then, read as usual.
pub fn next_data(file: &File, at: u64, end: u64) -> Option<u64> {
    use rustix::fs::SeekFrom;
    match rustix::fs::seek(file, SeekFrom::Data(at)) {
        Ok(s) if s < end => Some(s.max(at)),
        Ok(_) | Err(rustix::io::Errno::NXIO) => None,
        Err(_) => Some(at),
    }
}

/// Where the data of `file` starting at `at` ends (SEEK_HOLE), in `(at, end]`; `end` when the
/// file system cannot say.
pub fn next_hole(file: &File, at: u64, end: u64) -> u64 {
    match rustix::fs::seek(file, rustix::fs::SeekFrom::Hole(at)) {
        Ok(e) => e.clamp(at.saturating_add(1).min(end), end),
        Err(_) => end,
    }
}

/// Where a file of a record directory really lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// Inside the directory (after following links).
    Inside,
    /// A link to a file outside the directory (a snapshot kept on another disk, say).
    Outside(PathBuf),
}

/// Whether `path` resolves inside `dir` after following links.
pub fn locate(dir: &Path, path: &Path) -> Result<Location> {
    let root = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
    let real = std::fs::canonicalize(path).map_err(|e| Error::io(path, e))?;
    Ok(if real.starts_with(&root) {
        Location::Inside
    } else {
        Location::Outside(real)
    })
}

/// Check that a relative path taken from file contents stays lexically inside a directory: not
/// absolute, no `..`, not empty. (Links are checked by [`resolve_inside`] when it is opened.)
pub fn check_relative(relative: &str) -> std::result::Result<(), String> {
    let p = Path::new(relative);
    if relative.is_empty() || relative.contains('\0') {
        return Err("is empty or contains NUL".into());
    }
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err("contains `..`".into()),
            Component::RootDir | Component::Prefix(_) => return Err("is absolute".into()),
        }
    }
    Ok(())
}

/// `dir/relative`, which must resolve inside `dir` after following links (the real path when a
/// link is involved). `source` is the file the relative path was read from (named in messages).
pub fn resolve_inside(dir: &Path, relative: &str, source: &Path) -> Result<PathBuf> {
    check_relative(relative).map_err(|why| {
        Error::format(
            source,
            format!(
                "the path {relative:?} it names {why}: it must lie inside the record directory"
            ),
        )
    })?;
    let joined = dir.join(relative);
    // Without a link below `dir` the path cannot leave it: one `lstat` per component of
    // `relative` settles it (a recording names hundreds of thousands of blobs; resolving each
    // whole path would read every link of it, component by component, from the root).
    let mut at = dir.to_path_buf();
    let mut linked = false;
    for c in Path::new(relative).components() {
        if let Component::Normal(name) = c {
            at.push(name);
            let meta = std::fs::symlink_metadata(&at).map_err(|e| Error::io(&joined, e))?;
            if meta.file_type().is_symlink() {
                linked = true;
                break;
            }
        }
    }
    if !linked {
        return Ok(joined);
    }
    match locate(dir, &joined)? {
        Location::Inside => std::fs::canonicalize(&joined).map_err(|e| Error::io(&joined, e)),
        Location::Outside(real) => Err(Error::format(
            &joined,
            format!(
                "named by {} as inside the record directory, but it is a link to {}: refused",
                crate::text::visible_path(source),
                crate::text::visible_path(&real)
            ),
        )),
    }
}

/// A file being written: a fresh temporary file beside `path`, renamed over it by
/// [`AtomicWriter::commit`]. Dropped without committing, it leaves nothing behind.
pub struct AtomicWriter {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl AtomicWriter {
    pub fn create(path: &Path) -> Result<AtomicWriter> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| Error::io(path, without_temporary_name(e)))?;
        // Temporary files are private (0600); the result keeps the mode of the file it replaces,
        // or gets the usual 0644.
        let mode = std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map_or(0o644, |m| m.permissions().mode() & 0o777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io(path, e))?;
        Ok(AtomicWriter {
            tmp,
            path: path.to_path_buf(),
        })
    }

    /// Change the name the file gets at commit (content-addressed files know their name only
    /// once written).
    pub fn retarget(&mut self, path: &Path) {
        self.path = path.to_path_buf();
    }

    /// The open temporary file (for positioned writes, `set_len` to make holes, …).
    pub fn file(&self) -> &File {
        self.tmp.as_file()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flush and rename to the target, which must not exist (for outputs that must never
    /// replace a user's file).
    pub fn commit_new(mut self) -> Result<()> {
        self.tmp.flush().map_err(|e| Error::io(&self.path, e))?;
        let path = self.path;
        self.tmp.persist_noclobber(&path).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Invalid(format!(
                    "{}: appeared while it was being written; an export never replaces a file: \
                     choose another name",
                    crate::text::visible_path(&path)
                ))
            } else {
                Error::io(&path, e.error)
            }
        })?;
        Ok(())
    }

    /// Flush and rename over the target.
    pub fn commit(mut self) -> Result<()> {
        self.tmp.flush().map_err(|e| Error::io(&self.path, e))?;
        self.tmp
            .persist(&self.path)
            .map_err(|e| Error::io(&self.path, e.error))?;
        Ok(())
    }
}

/// tempfile names its temporary file in its errors (`… at path "/d/.x.csv.V441X1.tmp"`), a
/// name the user never gave: the system's error alone (of the same kind), said of the path they
/// did give. (tempfile keeps the system's error only in that text: its error has no source.)
fn without_temporary_name(e: std::io::Error) -> std::io::Error {
    let text = e.to_string();
    match text.rsplit_once(" at path \"") {
        Some((system, _)) => std::io::Error::new(e.kind(), system.to_string()),
        None => e,
    }
}

impl Write for AtomicWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.flush()
    }
}

/// Write `bytes` to `path` atomically and never through an existing link.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut w = AtomicWriter::create(path)?;
    w.write_all(bytes).map_err(|e| Error::io(path, e))?;
    w.commit()
}

/// An output that never replaces a file (an export, a merged report), refused before the work
/// when something is at `path` already: a file, or a link (dangling or not), said to be one
/// since writing would replace the link, not write where it points. [`write_new`] and
/// [`AtomicWriter::commit_new`] refuse one that appears meanwhile.
pub fn ensure_absent(path: &Path) -> Result<()> {
    let problem = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(path, e)),
        Ok(meta) if meta.file_type().is_symlink() => "is a symbolic link",
        Ok(_) => "exists",
    };
    // A usage error (exit status 2), as any output path that cannot be used.
    Err(Error::Invalid(format!(
        "{}: {problem}; an export never replaces a file: choose another name",
        crate::text::visible_path(path)
    )))
}

/// Write `bytes` to a new file at `path`; an existing file (or link) there is an error.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut w = AtomicWriter::create(path)?;
    w.write_all(bytes).map_err(|e| Error::io(path, e))?;
    w.commit_new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn resident_bytes() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib << 10
    }

    /// A sparse file reads as its bytes, holes as zeros, without reading or keeping the holes:
    /// a 1 GiB file of holes with data at both ends adds far less than 1 GiB resident.
    #[test]
    fn a_sparse_file_is_read_without_its_holes() {
        use std::os::unix::fs::FileExt;
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("sparse.globals");
        let f = File::create(&path).unwrap();
        let len = 1u64 << 30;
        f.set_len(len).unwrap();
        f.write_all_at(b"head", 0).unwrap();
        f.write_all_at(b"tail", len - 4).unwrap();
        let before = resident_bytes();
        let bytes = read_limited(&path, MAX_GLOBALS_BYTES, "globals file").unwrap();
        let grown = resident_bytes().saturating_sub(before);
        assert_eq!(bytes.len() as u64, len);
        assert_eq!(&bytes[..4], b"head");
        assert_eq!(&bytes[bytes.len() - 4..], b"tail");
        assert!(bytes[4096..8192].iter().all(|&b| b == 0));
        assert!(
            grown < 256 << 20,
            "{grown} bytes resident for a file of holes"
        );
    }

    /// What a file holds with no holes at all is read the same way.
    #[test]
    fn a_dense_file_reads_whole() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("dense");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        assert_eq!(read_limited(&path, 1 << 20, "file").unwrap(), data);
        let e = read_limited(&path, 1000, "file").unwrap_err().to_string();
        assert!(e.contains("is 100000 bytes"), "{e}");
    }

    /// A file that appears at an export's path while it is written is never replaced: the
    /// commit fails in one line naming the path, and the file keeps what it held.
    #[test]
    fn a_file_appearing_while_an_export_is_written_is_not_replaced() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("out.json");
        let mut w = AtomicWriter::create(&path).unwrap();
        w.write_all(b"export").unwrap();
        std::fs::write(&path, b"precious").unwrap();
        let e = w.commit_new().unwrap_err().to_string();
        assert!(
            e.contains("out.json: appeared while it was being written"),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
        let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "the temporary file is removed");
    }

    /// A file that cannot be created is named as given, never by its temporary name.
    #[test]
    fn an_output_in_a_missing_directory_is_named_as_given() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("nodir/x.csv");
        let e = AtomicWriter::create(&path).err().unwrap().to_string();
        assert_eq!(e, format!("{}: no such file or directory", path.display()));
    }

    #[test]
    fn refuses_fifos_devices_and_directories_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("x.json");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = read_limited(&fifo, 100, "descriptor")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        let zero = d.path().join("z.json");
        symlink("/dev/zero", &zero).unwrap();
        let e = read_limited(&zero, 100, "descriptor")
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        let e = read_limited(d.path(), 100, "descriptor")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a directory"), "{e}");
    }

    #[test]
    fn refuses_files_over_the_limit_before_reading() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        std::fs::File::create(&p).unwrap().set_len(1 << 40).unwrap();
        let e = read_limited(&p, 1 << 20, "globals file")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is 1099511627776 bytes; a globals file larger"),
            "{e}"
        );
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(read_limited(&p, 3, "x").unwrap(), b"abc");
    }

    #[test]
    fn paths_from_contents_stay_inside() {
        let d = tempfile::tempdir().unwrap();
        let rec = d.path().join("rec");
        std::fs::create_dir_all(rec.join("images")).unwrap();
        std::fs::write(rec.join("images/a.cubin"), b"x").unwrap();
        std::fs::write(d.path().join("secret"), b"s").unwrap();
        symlink(d.path().join("secret"), rec.join("images/evil")).unwrap();
        let src = rec.join("1_2.json");
        assert!(resolve_inside(&rec, "images/a.cubin", &src).is_ok());
        for bad in ["../secret", "/etc/passwd", "", "images/../../secret"] {
            assert!(resolve_inside(&rec, bad, &src).is_err(), "{bad}");
        }
        let e = resolve_inside(&rec, "images/evil", &src)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a link to"), "{e}");
    }

    #[test]
    fn an_output_that_never_replaces_refuses_files_and_links() {
        let d = tempfile::tempdir().unwrap();
        let free = d.path().join("new.csv");
        ensure_absent(&free).unwrap();
        let file = d.path().join("file.csv");
        std::fs::write(&file, b"keep").unwrap();
        let dangling = d.path().join("dangling.csv");
        symlink(d.path().join("nowhere"), &dangling).unwrap();
        for (path, said) in [(&file, "exists;"), (&dangling, "is a symbolic link;")] {
            let e = ensure_absent(path).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: {said}", path.display())), "{e}");
            assert!(e.contains("an export never replaces a file"), "{e}");
        }
    }

    #[test]
    fn atomic_writes_replace_links_instead_of_following_them() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let out = d.path().join("x.replay_output");
        symlink(&victim, &out).unwrap();
        write_atomic(&out, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert!(!std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink());
        let w = AtomicWriter::create(&d.path().join("never")).unwrap();
        drop(w);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            2,
            "no leftovers"
        );
    }
}
