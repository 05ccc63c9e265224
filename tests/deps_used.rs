//! Every declared building block does work: each `[dependencies]` entry of every package of the
//! workspace (the root and `crates/*`) is named in that package's own sources, as a path
//! (`name::…`, `use name`, `extern crate name`), with `-` read as `_`. A dependency that does
//! its work without ever being named is listed below with why. Dev-dependencies are not
//! checked: the tests that use them fail to build without them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Dependencies used without being named in the sources, by package, each with its reason.
const USED_WITHOUT_A_PATH: &[(&str, &str, &str)] = &[
    // (package, dependency, why)
];

/// The `[dependencies]` names of a Cargo.toml (`name = …`, `name.workspace = true`).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if !inside || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, _)) = line.split_once('=') else {
            continue;
        };
        let name = key.trim().trim_end_matches(".workspace").trim();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "cannot read the dependency line {line:?}"
        );
        out.push(name.to_string());
    }
    out
}

/// The package's name (`[package] name = "…"`).
fn package_name(manifest: &str) -> String {
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[package]";
            continue;
        }
        if let Some(v) = line.strip_prefix("name").map(str::trim) {
            if inside && v.starts_with('=') {
                return v
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"')
                    .to_string();
            }
        }
    }
    panic!("no [package] name")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Whether `ident` is named as a path in `source`: `ident::`, `use ident` or `extern crate ident`
/// after a character that cannot be part of an identifier.
fn names(source: &str, ident: &str) -> bool {
    let part_of_a_name = |c: char| c.is_alphanumeric() || c == '_';
    // `pat` at a word start; `whole`: and at a word end (`use similar`, not `use similarity`).
    let at = |pat: String, whole: bool| {
        source.match_indices(&pat).any(|(i, _)| {
            let starts = !source[..i].ends_with(part_of_a_name);
            let ends = !whole || !source[i + pat.len()..].starts_with(part_of_a_name);
            starts && ends
        })
    };
    at(format!("{ident}::"), false)
        || at(format!("use {ident}"), true)
        || at(format!("extern crate {ident}"), true)
}

/// The packages of the workspace: the root and each crate of `crates/`.
fn packages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let mut out = vec![root.clone()];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    out.extend(crates);
    out
}

#[test]
fn every_dependency_is_used_by_its_package() {
    let mut unused = Vec::new();
    let mut checked = BTreeMap::new();
    for dir in packages() {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let package = package_name(&manifest);
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        if dir.join("build.rs").is_file() {
            files.push(dir.join("build.rs"));
        }
        let sources: String = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        let deps = dependencies(&manifest);
        assert!(
            !deps.is_empty() || package == "rr-tui",
            "{package}: no dependencies read"
        );
        for dep in &deps {
            let allowed = USED_WITHOUT_A_PATH
                .iter()
                .any(|(p, d, _)| *p == package && d == dep);
            if !allowed && !names(&sources, &dep.replace('-', "_")) {
                unused.push(format!("{package}: {dep}"));
            }
        }
        checked.insert(package, deps.len());
    }
    assert!(
        checked.len() >= 5 && checked.values().all(|&n| n > 0),
        "packages read: {checked:?}"
    );
    assert!(
        unused.is_empty(),
        "declared in [dependencies] but never named in the package's sources (use it, remove it, \
         or list it in USED_WITHOUT_A_PATH with why): {unused:?}"
    );
    // The allow-list names only real dependencies.
    for (package, dep, _) in USED_WITHOUT_A_PATH {
        let dir = packages()
            .into_iter()
            .find(|d| {
                package_name(&std::fs::read_to_string(d.join("Cargo.toml")).unwrap()) == *package
            })
            .unwrap_or_else(|| panic!("no package {package}"));
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            dependencies(&manifest).contains(&dep.to_string()),
            "{package}: {dep} is not a dependency"
        );
    }
}

#[test]
fn the_reader_reads_dependency_tables() {
    let manifest = r#"
[package]
name = "x"

[dependencies]
# a comment
serde.workspace = true
rr-format = { path = "../f" }
similar = { version = "2", features = ["inline"] }

[dev-dependencies]
proptest = "1"
"#;
    assert_eq!(package_name(manifest), "x");
    assert_eq!(dependencies(manifest), ["serde", "rr-format", "similar"]);
    assert!(names("use similar::{TextDiff};", "similar"));
    assert!(names("let d = rr_format::text::visible(s);", "rr_format"));
    assert!(!names("let dissimilar::x = 1;", "similar"));
    assert!(!names("similar_lines::x", "similar"));
    assert!(!names("use similarity;", "similar"));
    assert!(names("use similar;", "similar"));
    assert!(!names("// the similar crate", "similar"));
}
