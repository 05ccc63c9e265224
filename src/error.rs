//! Errors of the library. Every error that concerns a file names it, so the binary can print a
//! single line `path: problem` and exit non-zero.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file exists but its contents are wrong.
    #[error("{}: {problem}", path.display())]
    Format { path: PathBuf, problem: String },
    /// A file could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A request that does not make sense (bad flag combination, limit violation).
    #[error("{0}")]
    Invalid(String),
    /// A recorded address range could not be reserved; a fresh process may succeed.
    #[error("{0}")]
    AddressInUse(String),
    /// The CUDA driver is missing or refused something.
    #[error("{0}")]
    Cuda(String),
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
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
