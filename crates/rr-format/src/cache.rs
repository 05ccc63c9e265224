//! rr-tui's per-user cache directory (`$XDG_CACHE_HOME/rr-tui`, `~/.cache/rr-tui` by default):
//! what is kept there (verified blobs, compiled variants) is trusted only in a directory of
//! this user's alone, never through a link.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// `$XDG_CACHE_HOME/rr-tui/<name>` (absolute paths only), else `$HOME/.cache/rr-tui/<name>`.
pub fn path(name: &str) -> Option<PathBuf> {
    Some(
        xdg_base("XDG_CACHE_HOME", ".cache")?
            .join("rr-tui")
            .join(name),
    )
}

/// An XDG base directory: `$<var>` when it is an absolute path (the XDG Base Directory
/// specification says relative ones are invalid and to be ignored), else `$HOME/<under_home>`
/// (`XDG_CACHE_HOME` and `.cache` here; the explorer's config file: `XDG_CONFIG_HOME`, `.config`).
pub fn xdg_base(var: &str, under_home: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| Path::new(&h).join(under_home))
                .filter(|p| p.is_absolute())
        })
}

/// Owned by this user, and writable by nobody else.
pub fn mine(m: &std::fs::Metadata) -> bool {
    m.uid() == rustix::process::geteuid().as_raw() && m.mode() & 0o022 == 0
}

/// `path` (not followed if a link) is this user's alone: a directory when `dir`, else a
/// regular file.
pub fn private(path: &Path, dir: bool) -> bool {
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| mine(&m) && if dir { m.is_dir() } else { m.is_file() })
}

/// Create `dir` (mode 0700, parents as needed) and say whether it is this user's alone.
pub fn private_dir(dir: &Path) -> bool {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .ok();
    private(dir, true)
}
