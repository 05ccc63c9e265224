//! Blobs already held to their names, remembered across runs: replaying or tuning a
//! model-sized instance again should not hash tens of GiB again. A blob is remembered by its
//! id with the identity and times of the file that was hashed (device, inode, size,
//! modification and status-change times, taken before reading it); a file changed since then
//! (writing it, or replacing it, changes the status-change time, which no user can set back)
//! no longer matches and is hashed again. `check` never uses this: it always reads everything.
//!
//! The list lives in `$XDG_CACHE_HOME/rr-tui/verified-blobs` (`~/.cache/…` by default), one
//! line per blob, a few MiB at most; without a cache directory nothing is remembered.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
        USER.get_or_init(|| Verified::at(default_path()))
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
        if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_BYTES) {
            std::fs::remove_file(path).ok();
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).ok();
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path);
        if let Ok(mut f) = file {
            f.write_all(format!("{stamp}\n").as_bytes()).ok();
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
        match crate::fsio::read_limited(path, MAX_BYTES, "list of verified blobs") {
            Ok(bytes) => String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::to_string)
                .collect(),
            Err(_) => HashSet::new(),
        }
    }
}

/// What is remembered of blob `id` open as `file`: its id, device, inode, size and times.
pub fn entry(id: &str, file: &File) -> Option<String> {
    let m = file.metadata().ok()?;
    Some(format!(
        "{id} {} {} {} {}.{} {}.{}",
        m.dev(),
        m.ino(),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    ))
}

fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| Path::new(&h).join(".cache"))
                .filter(|p| p.is_absolute())
        })?;
    Some(base.join("rr-tui").join("verified-blobs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_is_trusted_until_its_file_changes() {
        let dir = tempfile::tempdir().unwrap();
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
        // Without a list, blobs are remembered for this run only.
        let none = Verified::at(None);
        assert!(!none.contains("id", &f));
        none.remember(entry("id", &f).unwrap());
        assert!(none.contains("id", &f));
    }
}
