//! The user's TOML files (the config file, theme files): read by the hostile-input rules of
//! `rr_format::fsio` (a regular file after following links, never a FIFO; its size checked before
//! reading), parsed into a table that the caller checks key by key, so every error is one line
//! that names the file and the key.

use std::path::Path;

use crate::error::{Error, Result};

/// The largest config or theme file read: a theme is about 2 KiB, a config file less; 64 KiB
/// leaves room for comments and refuses what is plainly not one.
pub const MAX_SETTINGS_FILE_BYTES: u64 = 64 << 10;

/// A file's problem as the error the command ends with: exit status 2 (the user's input is
/// wrong), one line naming the file.
pub fn file_error(path: &Path, problem: impl std::fmt::Display) -> Error {
    // `Error::invalid` makes control characters visible in the whole line, the path's too.
    Error::invalid(format!("{}: {problem}", path.display()))
}

/// Read `path` (`what` names it in messages) as UTF-8 text; every refusal is exit status 2.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    let bytes = rr_format::fsio::read_limited(path, MAX_SETTINGS_FILE_BYTES, what)
        .map_err(|e| Error::invalid(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| file_error(path, format!("the {what} is not UTF-8 text")))
}

/// Parse TOML text into a table, or say where it is not TOML: `line N: what` on one line
/// (the parser's own message is a multi-line drawing of the spot).
pub fn parse_table(text: &str) -> std::result::Result<toml::Table, String> {
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        match line {
            Some(n) => format!("line {n}: {message}"),
            None => message,
        }
    })
}

/// A value as the text a command-line flag would take: a string as it is, a number as written
/// (so `repetitions = 20` and `repetitions = "20"` go through the flag's own parser alike).
pub fn flag_text(key: &str, value: &toml::Value) -> std::result::Result<String, String> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(n) => Ok(n.to_string()),
        toml::Value::Float(x) => Ok(x.to_string()),
        other => Err(format!(
            "`{key}`: expected a string or a number, not {}",
            other.type_str()
        )),
    }
}

/// A value as a message shows it: a string quoted (control characters escaped), a number as
/// written, anything else by its kind.
pub fn shown(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(x) => x.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => format!("a {}", other.type_str()),
    }
}

/// A table's key that is not one of `known`, said with the keys it could have been.
pub fn unknown_key(key: &str, known: &[&str]) -> String {
    format!(
        "`{key}`: unknown key (expected one of: {})",
        known.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_error_is_one_line_with_its_line_number() {
        let e = parse_table("a = 1\nb = [\n").unwrap_err();
        assert!(
            e.starts_with("line 2: ") || e.starts_with("line 3: "),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        let e = parse_table("a = 1\na = 2\n").unwrap_err();
        assert!(e.starts_with("line 2: "), "{e}");
    }

    #[test]
    fn numbers_read_as_flag_text() {
        assert_eq!(
            flag_text("n", &toml::Value::Integer(1000)),
            Ok("1000".into())
        );
        assert_eq!(flag_text("t", &toml::Value::Float(2.5)), Ok("2.5".into()));
        let e = flag_text("x", &toml::Value::Boolean(true)).unwrap_err();
        assert_eq!(e, "`x`: expected a string or a number, not boolean");
    }
}
