//! The decoding of the driver calls that load or unload modules and libraries, for
//! `cupti::on_call`.

use std::sync::atomic::Ordering;

use super::cbid;
use super::driver_call::DriverCall;
use super::observer::Observer;
use super::state::{HANDLE_GENERATION, LOADED_HERE};

/// Decode a module or library load (the handle it returned, with the modules loaded during
/// it) or unload for the observer.
///
/// # Safety
/// As `cupti::on_call`: `c.params` points to the parameter struct of call `c.id`, valid
/// during the call; after a successful call, its output pointers were written.
pub(super) unsafe fn on_module_call(observer: &dyn Observer, c: &DriverCall) {
    let (id, p) = (c.id, c.params);
    let entering = c.result.is_none();
    let exit_ok = c.result == Some(0);
    // SAFETY: (for every cast below) the caller's contract.
    unsafe {
        match id {
            cbid::MODULE_UNLOAD if entering => {
                HANDLE_GENERATION.fetch_add(1, Ordering::Relaxed);
            }
            cbid::LIBRARY_UNLOAD if entering => {
                HANDLE_GENERATION.fetch_add(1, Ordering::Relaxed);
                observer.library_unloaded(*(p as *const u64));
            }
            cbid::MODULE_LOAD
            | cbid::MODULE_LOAD_DATA
            | cbid::MODULE_LOAD_DATA_EX
            | cbid::MODULE_LOAD_FAT_BINARY
            | cbid::LIBRARY_LOAD_DATA
            | cbid::LIBRARY_LOAD_FROM_FILE => {
                if entering {
                    LOADED_HERE.with(|l| l.borrow_mut().clear());
                } else if exit_ok {
                    // Every cuModuleLoad* and cuLibraryLoad* params struct starts with the
                    // pointer the handle is written to.
                    let handle = *(*(p as *const *const u64));
                    let loaded = LOADED_HERE.with(|l| std::mem::take(&mut *l.borrow_mut()));
                    if matches!(id, cbid::LIBRARY_LOAD_DATA | cbid::LIBRARY_LOAD_FROM_FILE) {
                        observer.library_loaded(handle, &loaded);
                    } else {
                        observer.module_handle(handle, &loaded);
                    }
                }
            }
            _ => {}
        }
    }
}
