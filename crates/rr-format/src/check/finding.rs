//! One problem `check` found: how bad, in which file, what.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub path: PathBuf,
    pub problem: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tag = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        // One line whatever the file and kernel names hold.
        write!(
            f,
            "{}: {tag}: {}",
            crate::text::visible_path(&self.path),
            crate::text::visible(&self.problem)
        )
    }
}

pub fn finding(severity: Severity, path: &Path, problem: impl Into<String>) -> Finding {
    Finding {
        severity,
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// An error reading a file, as a finding about that file.
pub fn from_error(e: crate::error::Error) -> Finding {
    match e {
        crate::error::Error::Format { path, problem } => Finding {
            severity: Severity::Error,
            path,
            problem,
        },
        crate::error::Error::Io { path, source } => Finding {
            severity: Severity::Error,
            path,
            problem: source.to_string(),
        },
        other => Finding {
            severity: Severity::Error,
            path: PathBuf::new(),
            problem: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_and_severity() {
        let f = finding(Severity::Error, Path::new("a/b.json"), "bad");
        assert_eq!(f.to_string(), "a/b.json: error: bad");
    }
}
