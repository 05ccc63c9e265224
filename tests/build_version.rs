//! build.rs's commit for `--version` (build/version.rs), on repositories of the test's own:
//! the commit, `-dirty` exactly when the sources that are built differ from it (tracked or
//! untracked, staged or not; tests and documents do not count), and nothing at all without a
//! repository (a source archive) or inside another one's tree.

#[path = "../build/version.rs"]
mod version;

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        ok.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A package with sources, a test and a document, committed.
fn package() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(&root.join("Cargo.toml"), "[package]\nname = \"p\"\n");
    write(&root.join("src/main.rs"), "fn main() {}\n");
    write(&root.join("crates/a/src/lib.rs"), "\n");
    write(&root.join("tests/t.rs"), "\n");
    write(&root.join("README.md"), "p\n");
    write(&root.join(".gitignore"), "target/\n");
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "one"]);
    t
}

fn commit(root: &Path) -> String {
    version::built(root).expect("a checkout of its own").commit
}

#[test]
fn the_commit_is_marked_dirty_exactly_when_built_sources_changed() {
    let t = package();
    let root = t.path();
    let clean = commit(root);
    assert_eq!(clean.len(), 12, "{clean}");
    assert!(clean.bytes().all(|b| b.is_ascii_hexdigit()), "{clean}");
    let dirty = format!("{clean}{}", version::DIRTY);
    // Tests, documents and ignored build output are not what the binary is made of.
    write(&root.join("tests/t.rs"), "// changed\n");
    write(&root.join("README.md"), "changed\n");
    write(&root.join("notes.txt"), "untracked\n");
    write(&root.join("target/debug/x"), "built\n");
    assert_eq!(commit(root), clean);
    // A changed source, staged or not, and a new one not yet added.
    write(&root.join("src/main.rs"), "fn main() { }\n");
    assert_eq!(commit(root), dirty);
    git(root, &["add", "src/main.rs"]);
    assert_eq!(commit(root), dirty);
    git(root, &["commit", "-q", "-m", "two"]);
    let second = commit(root);
    assert!(
        second != clean && !second.ends_with(version::DIRTY),
        "{second}"
    );
    write(&root.join("crates/a/src/new.rs"), "\n");
    assert_eq!(commit(root), format!("{second}{}", version::DIRTY));
    std::fs::remove_file(root.join("crates/a/src/new.rs")).unwrap();
    write(&root.join("Cargo.toml"), "[package]\nname = \"q\"\n");
    assert_eq!(commit(root), format!("{second}{}", version::DIRTY));
}

/// What build.rs watches: the refs that name the commit and the built paths, each that exists,
/// never the index (rewritten by any `git status`) nor anything outside the package.
#[test]
fn the_watched_files_are_the_refs_and_the_built_paths() {
    let t = package();
    let root = t.path();
    let built = version::built(root).unwrap();
    let root_text = root.to_string_lossy().into_owned();
    assert!(
        built.watched.iter().all(|w| w.starts_with(&root_text)),
        "{:?}",
        built.watched
    );
    let named = |tail: &str| built.watched.iter().any(|w| w.ends_with(tail));
    for tail in [".git/HEAD", "/src", "/crates", "/Cargo.toml"] {
        assert!(named(tail), "{tail}: {:?}", built.watched);
    }
    // Paths that do not exist are not watched (Cargo would rebuild every time).
    assert!(!named("/Cargo.lock") && !named("/build.rs") && !named("/build"));
    assert!(!named("index") && !named("/tests") && !named("README.md"));
}

#[test]
fn without_a_repository_of_its_own_there_is_no_commit() {
    // A source archive unpacked: no .git.
    let t = tempfile::tempdir().unwrap();
    write(&t.path().join("src/main.rs"), "fn main() {}\n");
    assert!(version::built(t.path()).is_none());
    // The archive unpacked inside some other repository: not that repository's commit.
    let outer = package();
    let inner = outer.path().join("vendor/rr-tui");
    write(&inner.join("src/main.rs"), "fn main() {}\n");
    assert!(version::built(&inner).is_none());
}
