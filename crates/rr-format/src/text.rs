//! Strings from record files shown safely. Kernel names, symbol names and file names come from
//! anyone: an `ESC]0;…BEL` in a kernel name would retitle the user's terminal, an `ESC[2J` clear
//! it, a newline in a file name forge a line of `check`'s output. Text output and the explorer
//! show such characters escaped; JSON output keeps the exact strings (JSON escapes them itself).

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is: C0 and C1 controls, DEL, every Unicode
/// Bidi_Control character (marks and overrides reorder what follows them on screen), line and
/// paragraph separators, and the invisible format characters that make two names look alike
/// (zero-width space and joiners, word joiner, byte-order mark, soft hyphen).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// `s` with every control character written as an escape (`\n`, `\t`, `\r`, `\x1b`, `\u{9b}`).
/// Printable text, backslashes included, is unchanged, so the function is idempotent.
///
/// ```
/// use rr_format::text::visible;
/// assert_eq!(visible("k\x1b]0;pwned\x07"), "k\\x1b]0;pwned\\x07");
/// assert_eq!(visible("a\nb"), "a\\nb");
/// assert_eq!(visible("plain_kernel"), "plain_kernel");
/// ```
pub fn visible(s: &str) -> Cow<'_, str> {
    escape(s, hidden, |c, out| match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    })
}

/// The most of a value an error message quotes back: a 300-digit number sent in a job or a
/// flag is not echoed whole.
pub const QUOTE_MAX: usize = 40;

/// `s` made [`visible`] and cut after [`QUOTE_MAX`] characters with `…`: how a message shows a
/// value it was given (a number, a word), the one cap of every such quote.
///
/// ```
/// use rr_format::text::capped;
/// assert_eq!(capped("1e300"), "1e300");
/// assert_eq!(capped(&"9".repeat(300)), format!("{}…", "9".repeat(40)));
/// ```
pub fn capped(s: &str) -> Cow<'_, str> {
    cut_visible(s, QUOTE_MAX, false)
}

/// `s` made [`visible`] and cut after `max` characters, ending in `…` and, `with_len`, the
/// whole length in bytes: how a message shows a name of any length (a kernel name of MB must
/// not make a one-line error as long).
///
/// ```
/// use rr_format::text::cut_visible;
/// assert_eq!(cut_visible("k\x1b", 8, true), "k\\x1b");
/// assert_eq!(cut_visible("abcdef", 3, true), "abc… (6 bytes)");
/// assert_eq!(cut_visible("abcdef", 3, false), "abc…");
/// ```
pub fn cut_visible(s: &str, max: usize, with_len: bool) -> Cow<'_, str> {
    let shown = visible(s);
    match shown.char_indices().nth(max) {
        Some((at, _)) if with_len => Cow::Owned(format!("{}… ({} bytes)", &shown[..at], s.len())),
        Some((at, _)) => Cow::Owned(format!("{}…", &shown[..at])),
        None => shown,
    }
}

/// `s` quoted in a message: [`capped`], in double quotes. Not `{:?}` of a visible string, which
/// escapes its escapes again (`\\x1b` for `\x1b`).
///
/// ```
/// use rr_format::text::quoted;
/// assert_eq!(quoted("k\x1b[2J"), "\"k\\x1b[2J\"");
/// ```
pub fn quoted(s: &str) -> String {
    format!("\"{}\"", capped(s))
}

/// `message` with every number in it longer than [`QUOTE_MAX`] characters (a run of digits and
/// decimal points) cut as [`capped`] cuts it: for messages made by parsers that quote the value
/// they refuse whole (serde's `invalid type: floating point `1000…``, a check's `--pace 1e300`
/// written out in 301 digits), at the one place a reader says them.
///
/// ```
/// use rr_format::text::numbers_capped;
/// let long = format!("invalid type: floating point `{}`, expected u32", "1".repeat(301));
/// assert_eq!(
///     numbers_capped(&long),
///     format!("invalid type: floating point `{}…`, expected u32", "1".repeat(40))
/// );
/// assert_eq!(numbers_capped("--pace 500: at most 100"), "--pace 500: at most 100");
/// ```
pub fn numbers_capped(message: &str) -> Cow<'_, str> {
    let numeric = |c: char| c.is_ascii_digit() || c == '.';
    let mut out = String::new();
    let mut kept = 0;
    let mut run_start = None;
    for (i, c) in message.char_indices().chain([(message.len(), ' ')]) {
        match (numeric(c), run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(start)) => {
                run_start = None;
                if i - start > QUOTE_MAX {
                    out.push_str(&message[kept..start + QUOTE_MAX]);
                    out.push('…');
                    kept = i;
                }
            }
            _ => {}
        }
    }
    if kept == 0 {
        return Cow::Borrowed(message);
    }
    out.push_str(&message[kept..]);
    Cow::Owned(out)
}

/// `s` with every character `escaped` picks written by `write` (borrowed when there is none).
fn escape(
    s: &str,
    escaped: impl Fn(char) -> bool,
    write: impl Fn(char, &mut String),
) -> Cow<'_, str> {
    if !s.chars().any(&escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match escaped(c) {
            true => write(c, &mut out),
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// JSON text (as `serde_json` writes it) with the characters it leaves raw but a terminal must
/// not see, DEL, C1 controls and bidirectional overrides, written as `\uXXXX` escapes: the
/// same string to a JSON reader, inert on a screen (`rr-tui report --json` in a terminal).
/// They can only occur inside JSON strings, where the escape is valid.
///
/// ```
/// use rr_format::text::json_safe;
/// assert_eq!(json_safe("[\"a\u{202e}b\u{9b}\"]"), "[\"a\\u202eb\\u009b\"]");
/// ```
pub fn json_safe(json: &str) -> Cow<'_, str> {
    // serde_json has escaped C0 controls already; newlines between lines of pretty output are
    // layout, not string content.
    escape(
        json,
        |c| hidden(c) && (c as u32) >= 0x7f,
        |c, out| out.push_str(&format!("\\u{:04x}", c as u32)),
    )
}

/// Serialise a 64-bit value that may exceed 2^53 (a hash, a handle) as a decimal string:
/// JSON readers that hold numbers as doubles (jq, JavaScript) would round it.
pub fn u64_as_string<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

/// Counts, sizes and addresses in JSON: a number where a double holds it exactly (up to 2^53,
/// every real recording), a decimal string beyond (hostile or corrupt files), so that no JSON
/// reader sees a value other than the one read. Reads either form back.
pub mod exact_u64 {
    /// The largest integer every JSON reader holds exactly.
    pub const EXACT: u64 = 1 << 53;

    pub fn serialize<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        if *v <= EXACT {
            s.serialize_u64(*v)
        } else {
            s.serialize_str(&v.to_string())
        }
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Either {
            Number(u64),
            Text(String),
        }
        match <Either as serde::Deserialize>::deserialize(d)? {
            Either::Number(n) => Ok(n),
            Either::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// [`exact_u64`] for `(count, text)` pairs (the recorder's reasons).
pub mod exact_counted {
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Pair(#[serde(with = "super::exact_u64")] u64, String);

    pub fn serialize<S: serde::Serializer>(v: &[(u64, String)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|(n, t)| Pair(*n, t.clone())))
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(u64, String)>, D::Error> {
        let pairs: Vec<Pair> = serde::Deserialize::deserialize(d)?;
        Ok(pairs.into_iter().map(|Pair(n, t)| (n, t)).collect())
    }
}

/// [`exact_u64`] for an optional value (`null` when absent).
pub mod exact_opt_u64 {
    pub fn serialize<S: serde::Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => super::exact_u64::serialize(v, s),
            None => s.serialize_none(),
        }
    }
}

/// [`u64_as_string`] for an optional value (`null` when absent).
pub fn opt_u64_as_string<S: serde::Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_str(&v.to_string()),
        None => s.serialize_none(),
    }
}

/// [`u64_as_string`] for a list.
pub fn u64s_as_strings<S: serde::Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(u64::to_string))
}

/// Cut `text` to at most `max` bytes, on a character boundary; true when it was cut.
pub fn cut_at_char(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let at = (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    text.truncate(at);
    true
}

/// A byte count for people: `16 KiB`, `1.50 GiB`.
pub fn human(bytes: u64) -> String {
    humansize::format_size(bytes, humansize::BINARY)
}

/// A path for text output: control characters made visible as [`visible`] does, and each byte
/// that is not UTF-8 written `\xNN` (not U+FFFD: two different names must not read the same).
///
/// ```
/// use std::os::unix::ffi::OsStrExt;
/// let p = std::path::Path::new(std::ffi::OsStr::from_bytes(b"c\xff\x1b.cu"));
/// assert_eq!(rr_format::text::visible_path(p), "c\\xff\\x1b.cu");
/// ```
pub fn visible_path(p: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in p.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(&visible(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// An I/O error as a plain reason for a one-line error: the system's words without Rust's
/// ` (os error N)` suffix, which tells a user nothing, and in lower case as the middle of a line
/// (`no such file or directory`, `permission denied`). Every user-facing line that shows an
/// `io::Error` goes through here. Other errors' own text is kept (suffixes that wrapped errors
/// carry inside it are dropped too).
///
/// ```
/// let e = std::io::Error::from_raw_os_error(2);
/// assert_eq!(rr_format::text::io_reason(&e), "no such file or directory");
/// let e = std::io::Error::other("EOF before the header");
/// assert_eq!(rr_format::text::io_reason(&e), "EOF before the header");
/// ```
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    let mut stripped = false;
    while let Some(at) = rest.find(" (os error ") {
        let after = &rest[at + " (os error ".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..at]);
        if digits > 0 && after[digits..].starts_with(')') {
            stripped = true;
            rest = &after[digits + 1..];
        } else {
            out.push_str(" (os error ");
            rest = after;
        }
    }
    out.push_str(rest);
    // "No such file…" → "no such file…"; an acronym ("EOF", "I/O") stays as it is.
    let mut chars = out.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second))
            if stripped && first.is_ascii_uppercase() && second.is_lowercase() =>
        {
            format!("{}{}", first.to_ascii_lowercase(), &out[1..])
        }
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    /// The system's reason without Rust's suffix, whichever error carries it.
    #[test]
    fn io_reasons_are_plain_words() {
        let e = |code| std::io::Error::from_raw_os_error(code);
        assert_eq!(io_reason(&e(2)), "no such file or directory");
        assert_eq!(io_reason(&e(13)), "permission denied");
        assert_eq!(io_reason(&e(21)), "is a directory");
        // A wrapped error whose text carries the suffix (tempfile's, the atomic writer's).
        let wrapped = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "No such file or directory (os error 2)",
        );
        assert_eq!(io_reason(&wrapped), "no such file or directory");
        // Other text is left alone: nothing to strip, no case changed.
        let other = std::io::Error::other("Unexpected (os error x) here");
        assert_eq!(io_reason(&other), "Unexpected (os error x) here");
        assert_eq!(
            io_reason(&std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
            std::io::Error::from(std::io::ErrorKind::UnexpectedEof).to_string()
        );
    }

    use super::*;

    /// A quoted value is escaped once and cut at the cap; long numbers in a message are cut,
    /// each run on its own, one of exactly the cap kept, and a megabyte of digits in one pass.
    #[test]
    fn quotes_are_escaped_once_and_numbers_capped() {
        assert_eq!(quoted("a\x1bb"), "\"a\\x1bb\"");
        assert_eq!(quoted(&"x".repeat(41)), format!("\"{}…\"", "x".repeat(40)));
        let exact = "7".repeat(QUOTE_MAX);
        assert_eq!(numbers_capped(&exact), exact.as_str());
        let two = format!("a {} b 1.{} c", "1".repeat(50), "2".repeat(60));
        let cut = format!("a {}… b 1.{}… c", "1".repeat(40), "2".repeat(38));
        assert_eq!(numbers_capped(&two), cut);
        let huge = "9".repeat(1 << 20);
        assert_eq!(numbers_capped(&huge).chars().count(), QUOTE_MAX + 1);
        assert_eq!(numbers_capped("é 123 ü"), "é 123 ü");
    }

    /// Bytes that are not UTF-8 are written `\xNN`, so two names that differ there differ
    /// when shown; valid text is shown as [`visible`] shows it.
    #[test]
    fn a_path_that_is_not_utf8_is_escaped_not_replaced() {
        use std::os::unix::ffi::OsStrExt;
        let path = |b: &[u8]| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b));
        assert_eq!(visible_path(&path(b"a\xffb.cu")), "a\\xffb.cu");
        assert_ne!(
            visible_path(&path(b"\xfe.cu")),
            visible_path(&path(b"\xff.cu"))
        );
        assert_eq!(
            visible_path(&path("é\n\u{202e}".as_bytes())),
            "é\\n\\u{202e}"
        );
        let e = crate::Error::format(path(b"x\xc3"), "bad");
        assert_eq!(e.to_string(), "x\\xc3: bad");
    }

    #[test]
    fn escapes_controls_and_bidi_but_nothing_else() {
        assert_eq!(visible("\x1b[2J"), "\\x1b[2J");
        assert_eq!(visible("a\u{9b}b"), "a\\u{9b}b");
        assert_eq!(visible("x\u{202e}y"), "x\\u{202e}y");
        // Every Bidi_Control character, separators and invisible format characters.
        for c in [
            '\u{61c}', '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}', '\u{feff}', '\u{200b}',
            '\u{ad}', '\u{2066}',
        ] {
            assert_eq!(
                visible(&format!("a{c}b")),
                format!("a\\u{{{:x}}}b", c as u32)
            );
            assert_eq!(
                json_safe(&format!("\"a{c}b\"")),
                format!("\"a\\u{:04x}b\"", c as u32)
            );
        }
        assert_eq!(
            visible("void f<int, float>(int*)"),
            "void f<int, float>(int*)"
        );
        assert_eq!(visible("ünïcödé λ"), "ünïcödé λ");
        let once = visible("\x07\x7f").into_owned();
        assert_eq!(visible(&once), once, "idempotent");
    }
}
