//! Errors of record reading. Every error that concerns a file names it, so a command can print a
//! single line `path: problem` and exit non-zero. Paths and problems are shown with control
//! characters made visible ([`crate::text::visible`]): file names and kernel names come from
//! anyone and must not move the user's cursor or retitle the terminal.

use std::path::{Path, PathBuf};

use crate::text::{io_reason, visible, visible_path};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file exists but its contents (or its kind, or its size) are wrong.
    #[error("{}: {}", visible_path(path), visible(problem))]
    Format { path: PathBuf, problem: String },
    /// A file could not be opened, read or written.
    #[error("{}: {}", visible_path(path), io_reason(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A request that does not make sense (bad flag combination, limit violation).
    #[error("{}", visible(.0))]
    Invalid(String),
}

impl Error {
    pub fn format(path: impl AsRef<Path>, problem: impl Into<String>) -> Self {
        Error::Format {
            path: path.as_ref().to_path_buf(),
            problem: problem.into(),
        }
    }
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }
    /// The file this error is about, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Format { path, .. } | Error::Io { path, .. } => Some(path),
            Error::Invalid(_) => None,
        }
    }
    /// What is wrong, without the file's name (for a message that names the file its own way).
    pub fn problem(&self) -> String {
        match self {
            Error::Format { problem, .. } | Error::Invalid(problem) => {
                visible(problem).into_owned()
            }
            Error::Io { source, .. } => io_reason(source),
        }
    }
    /// Whether the file does not exist (as opposed to existing but being unusable).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
