//! Blobs already held to their names, remembered across runs: replaying or tuning a
//! model-sized instance again should not hash tens of GiB again. A blob is remembered by its
//! id with the identity and times of the file that was hashed (device, inode, size,
//! modification and status-change times, taken before reading it); a file changed since then
//! (writing it, or replacing it, changes the status-change time, which no user can set back)
//! no longer matches and is hashed again. `check` never uses this: it always reads everything.
//!
//! The list lives in `$XDG_CACHE_HOME/rr-tui/verified-blobs` (`~/.cache/…` by default), one
//! line per blob, a few MiB at most; without a cache directory nothing is remembered.
//!
//! The stamp is a heuristic, and is narrowed to where it holds:
//! - only files nobody else may write (owned by this user, not writable by group or others);
//! - only on local disk file systems whose times the kernel keeps (ext2/3/4, XFS, Btrfs, F2FS,
//!   ZFS, overlayfs): not tmpfs, FUSE, network or cluster file systems, where a server or the
//!   mapping says what the times are;
//! - only within one boot and one mount (the boot id and the mount id are in the stamp: a disk
//!   image changed while unmounted is another mount);
//! - only files left alone for two minutes when stamped: a write through a shared mapping into
//!   a page that is already dirty changes no time until the page is written back (the kernel
//!   writes dirty pages back within about 35 s), so a file changed recently is hashed again
//!   next time rather than remembered ("racily clean", as git calls it).
//!
//! The list itself counts only while it and its directory are this user's alone.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Mutex;

use crate::cache::{mine, private, private_dir};

/// The list's size limit; past it, the list starts afresh.
const MAX_BYTES: u64 = 8 << 20;

/// A list of verified blobs in one file.
pub struct Verified {
    path: Option<PathBuf>,
    seen: Mutex<Option<HashSet<String>>>,
}

impl Verified {
    /// The list at `path` (read at first use); `None`: remember nothing.
    pub fn at(path: Option<PathBuf>) -> Verified {
        Verified {
            path,
            seen: Mutex::new(None),
        }
    }

    /// The user's list.
    pub fn user() -> &'static Verified {
        static USER: std::sync::OnceLock<Verified> = std::sync::OnceLock::new();
        USER.get_or_init(|| Verified::at(crate::cache::path("verified-blobs")))
    }

    /// Whether the blob `id`, open as `file`, was verified before and has not changed since.
    pub fn contains(&self, id: &str, file: &File) -> bool {
        let Some(line) = entry(id, file) else {
            return false;
        };
        self.with_seen(|seen| seen.contains(&line))
    }

    /// Remember that `id` matched the contents of `file` as `stamp` (taken before reading).
    pub fn remember(&self, stamp: String) {
        let fresh = self.with_seen(|seen| seen.insert(stamp.clone()));
        let Some(path) = &self.path else { return };
        if !fresh {
            return;
        }
        // Best effort: a cache that cannot be written only costs a hash next time.
        let Some(dir) = path.parent() else { return };
        if !private_dir(dir) {
            return;
        }
        // Full: start afresh (the directory is ours; a link there is removed, not followed).
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.len() > MAX_BYTES) {
            std::fs::remove_file(path).ok();
        }
        // O_NONBLOCK: a FIFO put there must not block the open.
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path);
        if let Ok(mut f) = file {
            if f.metadata().is_ok_and(|m| mine(&m) && m.is_file()) {
                f.write_all(format!("{stamp}\n").as_bytes()).ok();
            }
        }
    }

    fn with_seen<T>(&self, f: impl FnOnce(&mut HashSet<String>) -> T) -> T {
        let mut guard = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let seen = guard.get_or_insert_with(|| self.load());
        f(seen)
    }

    fn load(&self) -> HashSet<String> {
        let Some(path) = &self.path else {
            return HashSet::new();
        };
        // A list another user could have written is no evidence.
        let ours = path.parent().is_some_and(|d| private(d, true)) && private(path, false);
        if !ours {
            return HashSet::new();
        }
        match crate::fsio::read_limited(path, MAX_BYTES, "list of verified blobs") {
            Ok(bytes) => String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::to_string)
                .collect(),
            Err(_) => HashSet::new(),
        }
    }
}

/// What is remembered of blob `id` open as `file`: its id, where it lives (boot, mount,
/// device, inode, birth time), its size and times; `None` for a file the stamp cannot vouch
/// for (see the module).
pub fn entry(id: &str, file: &File) -> Option<String> {
    let m = file.metadata().ok()?;
    if !m.is_file() || !mine(&m) || !times_kept(file) {
        return None;
    }
    // STATX_MNT_ID_UNIQUE (Linux 6.8) when the kernel has it: a mount id never reused.
    let mask = rustix::fs::StatxFlags::MNT_ID
        | rustix::fs::StatxFlags::BTIME
        | rustix::fs::StatxFlags::from_bits_retain(0x4000);
    let x = rustix::fs::statx(file, "", rustix::fs::AtFlags::EMPTY_PATH, mask).ok()?;
    Some(format!(
        "{id} {} {} {} {} {}.{} {} {}.{} {}.{}",
        boot_id()?,
        x.stx_mnt_id,
        m.dev(),
        m.ino(),
        x.stx_btime.tv_sec,
        x.stx_btime.tv_nsec,
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    ))
}

/// Whether `file` has been left alone long enough to be remembered (see the module).
pub fn settled(file: &File) -> bool {
    let Ok(m) = file.metadata() else {
        return false;
    };
    let changed = m.mtime().max(m.ctime());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    now.saturating_sub(changed) >= SETTLE_SECONDS
}

/// How long a file must have been left alone to be remembered: twice the kernel's default
/// dirty-page expiry and write-back interval (30 s + 5 s), rounded up.
const SETTLE_SECONDS: i64 = 120;

/// This boot's id (a reboot may reuse device numbers and mount ids).
fn boot_id() -> Option<&'static str> {
    static ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let id = id.trim();
        (id.len() == 36 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
            .then(|| id.to_string())
    })
    .as_deref()
}

/// Whether the file system is a local disk file system whose times the kernel keeps.
fn times_kept(file: &File) -> bool {
    const EXT: i64 = 0xef53;
    const XFS: i64 = 0x5846_5342;
    const BTRFS: i64 = 0x9123_683e;
    const F2FS: i64 = 0xf2f5_2010;
    const ZFS: i64 = 0x2fc1_2fc1;
    const OVERLAY: i64 = 0x794c_7630;
    match rustix::fs::fstatfs(file) {
        #[allow(clippy::unnecessary_cast)]
        Ok(st) => [EXT, XFS, BTRFS, F2FS, ZFS, OVERLAY].contains(&(st.f_type as i64)),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

    /// A scratch directory on a file system whose times stamps may vouch for (the temporary
    /// directory, else beside the sources); `None` where there is none.
    fn scratch() -> Option<tempfile::TempDir> {
        let candidates = [std::env::temp_dir(), env!("CARGO_MANIFEST_DIR").into()];
        let found = candidates.into_iter().find_map(|base| {
            let d = tempfile::tempdir_in(base).ok()?;
            let probe = d.path().join("probe");
            std::fs::write(&probe, b"x").ok()?;
            times_kept(&File::open(&probe).ok()?).then_some(d)
        });
        if found.is_none() {
            eprintln!("no local disk file system to test on here: the test proves nothing");
        }
        found
    }

    #[test]
    fn a_blob_is_trusted_until_its_file_changes() {
        let Some(dir) = scratch() else { return };
        let blob = dir.path().join("b");
        std::fs::write(&blob, b"abc").unwrap();
        let list = dir.path().join("cache/verified-blobs");
        let v = Verified::at(Some(list.clone()));
        let f = File::open(&blob).unwrap();
        assert!(!v.contains("id", &f));
        v.remember(entry("id", &f).unwrap());
        assert!(v.contains("id", &f));
        assert!(!v.contains("other", &f), "another id is another claim");
        // A new run reads the list back.
        assert!(Verified::at(Some(list.clone())).contains("id", &f));
        // Rewriting the file (even with the same length) changes its status-change time.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&blob, b"abd").unwrap();
        let f = File::open(&blob).unwrap();
        assert!(!Verified::at(Some(list)).contains("id", &f));
        // A file just written is not settled: it is hashed again next time.
        assert!(!settled(&f));
        // Without a list, blobs are remembered for this run only.
        let none = Verified::at(None);
        assert!(!none.contains("id", &f));
        none.remember(entry("id", &f).unwrap());
        assert!(none.contains("id", &f));
    }

    #[test]
    fn only_files_and_lists_nobody_else_may_write_count() {
        let Some(dir) = scratch() else { return };
        let blob = dir.path().join("b");
        std::fs::write(&blob, b"abc").unwrap();
        std::fs::set_permissions(&blob, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert!(
            entry("id", &File::open(&blob).unwrap()).is_none(),
            "group-writable blob"
        );
        std::fs::set_permissions(&blob, std::fs::Permissions::from_mode(0o644)).unwrap();
        let f = File::open(&blob).unwrap();
        let stamp = entry("id", &f).unwrap();
        // A list others could have written is no evidence.
        let cache = dir.path().join("c");
        std::fs::create_dir(&cache).unwrap();
        let list = cache.join("verified-blobs");
        std::fs::write(&list, format!("{stamp}\n")).unwrap();
        assert!(Verified::at(Some(list.clone())).contains("id", &f));
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(
            !Verified::at(Some(list.clone())).contains("id", &f),
            "world-writable list"
        );
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            !Verified::at(Some(list)).contains("id", &f),
            "world-writable directory"
        );
        // A directory that is a link is not written through.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let linked = dir.path().join("linked");
        std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
        Verified::at(Some(linked.join("verified-blobs"))).remember(stamp.clone());
        assert!(!elsewhere.join("verified-blobs").exists());
        // A FIFO at the list's path neither blocks nor is written.
        let fifo_dir = dir.path().join("f");
        std::fs::create_dir(&fifo_dir).unwrap();
        let fifo = fifo_dir.join("verified-blobs");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            Verified::at(Some(fifo.clone())).remember(stamp);
            assert!(std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo());
        }
    }

    #[test]
    fn blobs_on_tmpfs_are_never_remembered() {
        let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
            return; // no /dev/shm here
        };
        let blob = d.path().join("b");
        std::fs::write(&blob, b"abc").unwrap();
        let f = File::open(&blob).unwrap();
        let tmpfs = std::process::Command::new("stat")
            .args(["-f", "-c", "%T"])
            .arg(d.path())
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "tmpfs");
        if tmpfs {
            assert!(!times_kept(&f));
            assert!(entry("id", &f).is_none());
        }
    }
}
