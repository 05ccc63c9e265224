//! The documentation's relative links lead somewhere: every `[text](path)` and
//! `[text](path#anchor)` of README.md, ARCHITECTURE.md, FORMAT.md, docs/*.md and
//! docs/internals/*.md names a file that exists (relative to the linking file) and, with an
//! anchor, a heading of that file whose
//! GitHub slug is the anchor. Links to other sites (`http:`, `https:`, `mailto:`, any scheme) are
//! not followed. Links inside code (fenced blocks, code spans) are not links. The README stays a
//! page a newcomer reads in five minutes, and names the test command `.ci/run` runs.
//!
//! Plain std, no Markdown crate: the rules below are the subset of CommonMark these files use.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documents checked: the three at the root, then docs/*.md and docs/internals/*.md in name
/// order.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut out: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "FORMAT.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    for folder in ["docs", "docs/internals"] {
        let dir = root.join(folder);
        let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
            .collect();
        pages.sort();
        out.extend(pages);
    }
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", shown(path)))
}

/// A path as the messages name it: relative to the repository root.
fn shown(path: &Path) -> String {
    let root = root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn run_len(s: &str, c: char) -> usize {
    s.chars().take_while(|&x| x == c).count()
}

/// Tracks fenced code blocks (``` or ~~~, three or more) line by line.
#[derive(Default)]
struct Fences {
    open: Option<(char, usize)>,
}

impl Fences {
    /// Whether `line` is code: inside a fence, or a fence's opening or closing line.
    fn code(&mut self, line: &str) -> bool {
        let t = line.trim_start();
        if let Some((c, n)) = self.open {
            if run_len(t, c) >= n && t.trim_start_matches(c).trim().is_empty() {
                self.open = None;
            }
            return true;
        }
        for c in ['`', '~'] {
            let n = run_len(t, c);
            if n >= 3 {
                self.open = Some((c, n));
                return true;
            }
        }
        false
    }
}

/// Text outside fenced code blocks as paragraphs (runs of non-blank lines), each with the
/// number of its first line (from 1).
fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fences = Fences::default();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if fences.code(line) || line.trim().is_empty() {
            out.extend(current.take());
            continue;
        }
        match &mut current {
            Some((_, p)) => {
                p.push('\n');
                p.push_str(line);
            }
            None => current = Some((i + 1, line.to_string())),
        }
    }
    out.extend(current.take());
    out
}

/// `s` with every code span (a run of N backticks up to the next run of exactly N) blanked
/// out, newlines kept; an unmatched run stays as it is.
fn without_code_spans(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let run = |at: usize| chars[at..].iter().take_while(|&&c| c == '`').count();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run(i);
        let mut j = i + n;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = run(j);
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                for &c in &chars[i..j + n] {
                    out.push(if c == '\n' { '\n' } else { ' ' });
                }
                i = j + n;
            }
            None => {
                out.extend(std::iter::repeat_n('`', n));
                i += n;
            }
        }
    }
    out
}

/// The link destinations of a paragraph whose code spans are blanked: `(line offset,
/// destination)` for every `[text](destination)` (and image `![alt](destination)`).
fn destinations(p: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = p.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < chars.len() {
        if !(chars[i] == ']' && chars[i + 1] == '(') {
            i += 1;
            continue;
        }
        // The `[` this `]` closes.
        let mut depth = 0usize;
        let opened = (0..i).rev().any(|k| match chars[k] {
            ']' => {
                depth += 1;
                false
            }
            '[' if depth == 0 => true,
            '[' => {
                depth -= 1;
                false
            }
            _ => false,
        });
        if !opened {
            i += 2;
            continue;
        }
        let line = chars[..i].iter().filter(|&&c| c == '\n').count();
        let mut j = i + 2;
        let mut dest = String::new();
        if chars.get(j) == Some(&'<') {
            j += 1;
            while j < chars.len() && chars[j] != '>' && chars[j] != '\n' {
                dest.push(chars[j]);
                j += 1;
            }
        } else {
            let mut parens = 0usize;
            while j < chars.len() && !chars[j].is_whitespace() {
                match chars[j] {
                    '(' => parens += 1,
                    ')' if parens == 0 => break,
                    ')' => parens -= 1,
                    _ => {}
                }
                dest.push(chars[j]);
                j += 1;
            }
        }
        out.push((line, dest));
        i = j;
    }
    out
}

/// Every link destination of a document: `(line, destination)`.
fn links(text: &str) -> Vec<(usize, String)> {
    paragraphs(text)
        .into_iter()
        .flat_map(|(first, p)| {
            destinations(&without_code_spans(&p))
                .into_iter()
                .map(move |(offset, d)| (first + offset, d))
        })
        .collect()
}

/// Whether a destination names another site: it starts with a URI scheme (`https:`,
/// `mailto:` …).
fn external(dest: &str) -> bool {
    let Some((scheme, _)) = dest.split_once(':') else {
        return false;
    };
    let mut c = scheme.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && c.all(|x| x.is_ascii_alphanumeric() || "+-.".contains(x))
}

/// `%XX` escapes decoded (links to names with spaces); anything malformed kept as it is.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
        {
            // Two ASCII hex digits: a char boundary on either side.
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// A heading's text as GitHub renders it for its slug: links and images keep their text,
/// HTML tags go.
fn rendered(heading: &str) -> String {
    let chars: Vec<char> = heading.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ']' && chars.get(i + 1) == Some(&'(') {
            // Skip the destination.
            let mut parens = 0usize;
            let mut j = i + 2;
            while j < chars.len() {
                match chars[j] {
                    '(' => parens += 1,
                    ')' if parens == 0 => break,
                    ')' => parens -= 1,
                    _ => {}
                }
                j += 1;
            }
            i = j + 1;
            continue;
        }
        if chars[i] == '<'
            && chars
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == '/')
        {
            if let Some(end) = chars[i..].iter().position(|&c| c == '>') {
                i += end + 1;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// GitHub's slug of a heading before duplicates are numbered: lower case, letters, digits,
/// `-` and `_` kept, each space a `-`, everything else dropped.
fn slug(heading: &str) -> String {
    rendered(heading)
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The text of an ATX heading line (`# …` to `###### …`, at most three spaces in), without
/// its closing `#`s.
fn atx(line: &str) -> Option<&str> {
    if line.len() - line.trim_start_matches(' ').len() > 3 {
        return None;
    }
    let t = line.trim_start_matches(' ');
    let n = run_len(t, '#');
    if !(1..=6).contains(&n) {
        return None;
    }
    let rest = &t[n..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let rest = rest.trim();
    // A closing sequence: `#`s preceded by a space (or the whole text).
    let body = rest.trim_end_matches('#');
    Some(
        if body.is_empty() || body.ends_with(' ') || body.ends_with('\t') {
            body.trim_end()
        } else {
            rest
        },
    )
}

/// The anchors a document offers: its headings' slugs (duplicates numbered `-1`, `-2` … as
/// GitHub numbers them), and `id`/`name` attributes of HTML anchors.
fn anchors(text: &str) -> HashSet<String> {
    let mut headings: Vec<String> = Vec::new();
    let mut fences = Fences::default();
    let mut previous: Option<&str> = None;
    let mut out = HashSet::new();
    for line in text.lines() {
        if fences.code(line) {
            previous = None;
            continue;
        }
        if let Some(h) = atx(line) {
            headings.push(h.to_string());
            previous = None;
            continue;
        }
        let t = line.trim();
        let underline =
            !t.is_empty() && (t.chars().all(|c| c == '=') || t.chars().all(|c| c == '-'));
        if let (true, Some(p)) = (underline, previous) {
            let plain = !p.trim().is_empty()
                && !p.trim_start().starts_with(['|', '-', '*', '+', '>'])
                && line.len() - line.trim_start().len() <= 3;
            if plain {
                headings.push(p.trim().to_string());
                previous = None;
                continue;
            }
        }
        for attr in ["id=\"", "name=\""] {
            let mut rest = line;
            while let Some(at) = rest.find("<a ") {
                rest = &rest[at + 3..];
                let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
                if let Some(v) = tag.find(attr) {
                    let v = &tag[v + attr.len()..];
                    if let Some(end) = v.find('"') {
                        out.insert(v[..end].to_string());
                    }
                }
            }
        }
        previous = (!t.is_empty()).then_some(line);
    }
    // github-slugger: a slug seen before gets `-N`, N counting up from 1 until unused.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for h in headings {
        let base = slug(&h);
        let mut s = base.clone();
        while seen.contains_key(&s) {
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            s = format!("{base}-{n}");
        }
        seen.insert(s.clone(), 0);
        out.insert(s);
    }
    out
}

/// What is wrong with one link of `from`, if anything.
fn problem(
    from: &Path,
    dest: &str,
    cache: &mut HashMap<PathBuf, HashSet<String>>,
) -> Option<String> {
    if dest.is_empty() {
        return Some("an empty link".into());
    }
    let (path, anchor) = match dest.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (dest, None),
    };
    let target = if path.is_empty() {
        from.to_path_buf()
    } else {
        if path.starts_with('/') {
            return Some("an absolute path (GitHub resolves it against the site, not the repository): write it relative to this file".into());
        }
        from.parent()
            .unwrap_or(Path::new("."))
            .join(percent_decoded(path))
    };
    if !target.exists() {
        return Some(format!("{} does not exist", shown(&target)));
    }
    let anchor = anchor?;
    if anchor.is_empty() {
        return None;
    }
    if !target.is_file() {
        return Some(format!(
            "{} is a directory: it has no heading #{anchor}",
            shown(&target)
        ));
    }
    let offered = cache
        .entry(target.clone())
        .or_insert_with(|| anchors(&read(&target)));
    let anchor = percent_decoded(anchor);
    if offered.contains(&anchor) {
        return None;
    }
    let mut near: Vec<&String> = offered
        .iter()
        .filter(|s| {
            let a = anchor.split('-').next().unwrap_or_default();
            !a.is_empty() && s.contains(a)
        })
        .collect();
    near.sort();
    near.truncate(5);
    Some(format!(
        "no heading of {} has the slug `{anchor}`{}",
        shown(&target),
        if near.is_empty() {
            String::new()
        } else {
            format!(
                " (similar: {})",
                near.iter()
                    .map(|s| format!("#{s}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ))
}

#[test]
fn every_relative_link_leads_to_a_file_and_its_heading() {
    let mut cache = HashMap::new();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = read(&doc);
        for (line, dest) in links(&text) {
            if external(&dest) {
                continue;
            }
            checked += 1;
            if let Some(why) = problem(&doc, &dest, &mut cache) {
                broken.push(format!("{}:{line}: link `{dest}`: {why}", shown(&doc)));
            }
        }
    }
    assert!(checked > 0, "no relative link found: is the parser broken?");
    assert!(
        broken.is_empty(),
        "{} broken link(s) in the documentation:\n  {}",
        broken.len(),
        broken.join("\n  ")
    );
}

#[test]
fn the_readme_is_read_in_five_minutes_and_names_the_test_command() {
    let path = root().join("README.md");
    let text = read(&path);
    assert!(
        text.len() <= 20_000,
        "README.md: {} bytes, more than 20 000: move what a newcomer does not need into docs/",
        text.len()
    );
    assert!(
        text.contains("cargo test --locked"),
        "README.md: does not contain `cargo test --locked`, the command .ci/run runs"
    );
}

#[test]
fn the_architecture_page_is_a_map() {
    // The crates, their processes and rules on one page; how each part works inside belongs in
    // docs/internals/.
    let path = root().join("ARCHITECTURE.md");
    let text = read(&path);
    assert!(
        text.len() <= 15_000,
        "ARCHITECTURE.md: {} bytes, more than 15 000: move how a part works inside into docs/internals/",
        text.len()
    );
}

#[test]
fn slugs_are_githubs() {
    for (heading, want) in [
        (
            "Legacy LLVM records (LLVM 16–22)",
            "legacy-llvm-records-llvm-1622",
        ),
        ("What it costs: `--energy`", "what-it-costs---energy"),
        (
            "Replay in a child process: protocol version 2",
            "replay-in-a-child-process-protocol-version-2",
        ),
        (
            "Format version 2: content-addressed blobs",
            "format-version-2-content-addressed-blobs",
        ),
        ("Descriptor (`.json`)", "descriptor-json"),
        ("A [linked](other.md#x) heading", "a-linked-heading"),
        ("snake_case and Ünïcode", "snake_case-and-ünïcode"),
    ] {
        assert_eq!(slug(heading), want, "{heading}");
    }
    let doc = "# Title\n\n## Same\n\ntext\n\n## Same ##\n\n```sh\n# not a heading\n```\n\nSetext\n------\n";
    let got = anchors(doc);
    for want in ["title", "same", "same-1", "setext"] {
        assert!(got.contains(want), "{want} missing from {got:?}");
    }
    assert!(!got.contains("not-a-heading"), "{got:?}");
}

#[test]
fn links_in_code_are_not_links() {
    let doc = "See [the guide](docs/README.md#x) and `[not](a.md)`.\n\n```md\n[not](b.md)\n```\n\
               A ``code `[span](c.md)` `` then [two](d.md \"title\") and [three](<e f.md>).\n\
               Not a link: a](g.md) nor https://x.org; [site](https://example.com).";
    let got: Vec<String> = links(doc).into_iter().map(|(_, d)| d).collect();
    assert_eq!(
        got,
        ["docs/README.md#x", "d.md", "e f.md", "https://example.com"]
    );
    assert!(external("https://example.com") && external("mailto:a@b.c"));
    assert!(!external("docs/README.md#a:b") && !external("FORMAT.md"));
    assert_eq!(percent_decoded("a%20b%zz%4"), "a b%zz%4");
    let lines: Vec<usize> = links("a\n\n[x](y.md)\n[z](w.md)")
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(lines, [3, 4]);
}
