//! The commit a build is of, for `rr-tui --version`: read with git from a git checkout whose top
//! is this package, with `-dirty` when the sources that make the binary differ from that commit.
//! Shared by build.rs and its test (tests/build_version.rs), which runs it on a repository of
//! its own. Without git, or outside such a checkout (a source archive, even one unpacked inside
//! another repository), there is nothing to say: `None`, and the build says "unknown".

use std::path::Path;
use std::process::Command;

/// What `--version` adds to the commit when the sources built hold uncommitted changes.
pub const DIRTY: &str = "-dirty";

/// The paths whose contents make the binary: a change anywhere else (tests, documents) leaves
/// the build what the commit says. build.rs watches them, so the marker follows every edit,
/// and nothing else, which would rebuild for no reason.
pub const BUILT_FROM: [&str; 6] = [
    "src",
    "crates",
    "build",
    "build.rs",
    "Cargo.toml",
    "Cargo.lock",
];

/// git's answer in `root`, when git runs and answers. `--no-optional-locks`: `git status` must
/// not rewrite the index, which would change a watched file while the build runs.
pub fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .arg("--no-optional-locks")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string())
}

/// The commit these sources are, and the files whose change means another commit or another
/// state of the sources.
pub struct Built {
    /// `0123456789ab`, or `0123456789ab-dirty`.
    pub commit: String,
    /// Absolute paths: HEAD, the branch it names, packed refs, and [`BUILT_FROM`]. Not the
    /// index, which many git commands rewrite without changing anything built: watched, every
    /// `git status` elsewhere would rebuild rr-tui.
    pub watched: Vec<String>,
}

/// `None` outside a git checkout whose top is `root`, or when git cannot answer (not
/// installed, a repository it refuses to read): the caller falls back without a word.
pub fn built(root: &Path) -> Option<Built> {
    let top = git(root, &["rev-parse", "--show-toplevel"]).filter(|t| !t.is_empty())?;
    let same = |a: &Path, b: &Path| a.canonicalize().ok() == b.canonicalize().ok();
    if !same(Path::new(&top), root) {
        return None;
    }
    let hash = git(root, &["rev-parse", "--short=12", "HEAD"]).filter(|h| !h.is_empty())?;
    // Tracked files changed (staged or not) and untracked ones not ignored, under the paths
    // that are built; a status git cannot give is no claim either way.
    let mut status = vec!["status", "--porcelain", "--untracked-files=normal", "--"];
    status.extend(BUILT_FROM);
    let changes = git(root, &status)?;
    let commit = match changes.is_empty() {
        true => hash,
        false => format!("{hash}{DIRTY}"),
    };
    let mut watched = vec![git(root, &["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        watched.extend(git(root, &["rev-parse", "--git-path", &branch]));
    }
    watched.extend(git(root, &["rev-parse", "--git-path", "packed-refs"]));
    watched.extend(BUILT_FROM.iter().map(|p| p.to_string()));
    let watched = watched
        .into_iter()
        .map(|p| root.join(p).to_string_lossy().into_owned())
        .filter(|p| Path::new(p).exists())
        .collect();
    Some(Built { commit, watched })
}
