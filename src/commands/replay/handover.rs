//! The job a serving replay process hands to the copy that replaces it (a fresh session, or
//! another address layout): its line, in the copy's environment. Kept apart so that the server
//! (`serve`) and the code that replaces the process (`open::exec_fresh`) both use it without
//! importing each other.

use std::sync::Mutex;

/// The job a fresh copy of a serving process runs first: the one its predecessor could not.
pub(crate) use rr_engine::job::JOB_ENV;

/// The job being served, as its line.
static CURRENT_JOB: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// Remember `line` as the job this process serves now.
pub(crate) fn serving(line: Vec<u8>) {
    if let Ok(mut current) = CURRENT_JOB.lock() {
        *current = Some(line);
    }
}

/// The job this process serves now, if it serves jobs.
pub(crate) fn current_job() -> Option<Vec<u8>> {
    CURRENT_JOB.lock().ok()?.clone()
}
