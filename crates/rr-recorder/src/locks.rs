//! Locking that survives a contained panic: every lock of the recorder is taken through
//! [`lock`].

use std::sync::{Mutex, MutexGuard};

/// Lock, recovering from a poisoned lock (a panic elsewhere was already contained).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
