//! Engine errors: a record problem (names its file), a driver error (names its call), the driver
//! missing, or recorded addresses taken.

use rr_cuda::CudaError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Record(#[from] rr_format::Error),
    #[error("{0}")]
    Cuda(#[from] CudaError),
    #[error("{0}")]
    Unavailable(#[from] rr_cuda::driver::Unavailable),
    /// A recorded address range could not be reserved; a fresh process may succeed.
    #[error("{0}")]
    AddressInUse(String),
    /// Work that could not be done for a reason outside the input (every GPU gave up, …).
    #[error("{0}")]
    Failed(String),
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Error {
        Error::Record(rr_format::Error::Invalid(msg.into()))
    }
    pub fn format(path: impl AsRef<std::path::Path>, problem: impl Into<String>) -> Error {
        Error::Record(rr_format::Error::format(path, problem))
    }
    pub fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Error {
        Error::Record(rr_format::Error::io(path, source))
    }
    /// The exit status a command ends with on this error (the policy `rr-tui --help` states):
    /// 2 for what the flags or the input named by the user get wrong (a bad combination, a
    /// file that is missing, unreadable or not what it should be, a record this tool cannot
    /// replay: every record error, the `input` kind of the JSON error), 1 for a run that failed
    /// (no driver, a GPU error, a tool that did not finish).
    pub fn exit_status(&self) -> i32 {
        match self {
            Error::Record(_) => 2,
            _ => 1,
        }
    }

    /// The CUDA context of this process is poisoned: it must end.
    pub fn is_sticky(&self) -> bool {
        matches!(self, Error::Cuda(e) if e.is_sticky())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
