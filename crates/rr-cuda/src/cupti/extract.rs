//! The cubin the driver makes of a fatbin or PTX image for this GPU. A recorder that saw a
//! module load through its own entry point holds what the program passed (cudart passes whole
//! fatbins, often compressed, with code for many GPUs; JIT paths pass PTX); a record needs the
//! one cubin the kernel runs from, which names its globals. CUPTI hands it over when a module
//! loads: the image is loaded once more in the current context with the module-loaded callback
//! on, and unloaded again.
//!
//! CUPTI is initialised only then (when a kernel from such an image is first recorded): being
//! subscribed costs a few per cent of every driver call, which a recorder that records
//! nothing must not pay.

use std::cell::{Cell, RefCell};
use std::ffi::{c_void, CString};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use cudarc::cupti::sys as cs;
use cudarc::driver::sys as ds;

use super::subscription::{
    enable_module_loaded, load_library, subscribe, DOMAIN_RESOURCE, RESOURCE_MODULE_LOADED,
    SUBSCRIBED,
};
use crate::error::check;

thread_local! {
    /// Whether this thread's module loads are ours to catch.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// The last image caught on this thread.
    static CAUGHT: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// The extractor's own CUPTI subscription (made once, kept: CUPTI stays initialised anyway).
static EXTRACTOR: OnceLock<Result<(), String>> = OnceLock::new();

/// The cubin the driver loads for `image` (a fatbin or PTX text) on the current context's
/// GPU, with `kernel` in it. `cupti` is libcupti's path when it is not on the loader's path.
pub fn loaded_cubin(image: &[u8], kernel: &str, cupti: Option<&Path>) -> Result<Vec<u8>, String> {
    if SUBSCRIBED.load(Ordering::Acquire) {
        // CUPTI reports every module to the observer already: nothing to extract.
        return Err("CUPTI is subscribed to the recorder's callbacks".into());
    }
    EXTRACTOR
        .get_or_init(|| {
            if !load_library(cupti) {
                return Err("libcupti could not be loaded (set RR_TUI_CUPTI to its path)".into());
            }
            let sub = subscribe(caught).map_err(|e| e.0)?;
            enable_module_loaded(sub).map_err(|e| e.0)
        })
        .clone()?;
    // PTX must end with its NUL; a fatbin or cubin is read by its headers.
    let mut owned = image.to_vec();
    owned.push(0);
    let name = CString::new(kernel).map_err(|_| "a kernel name with a NUL byte".to_string())?;
    CAUGHT.with(|c| c.borrow_mut().take());
    CATCHING.with(|c| c.set(true));
    let mut module: ds::CUmodule = std::ptr::null_mut();
    // SAFETY: loads an image we own (valid for the call) into the current context.
    let loaded = check(
        unsafe { ds::cuModuleLoadData(&mut module, owned.as_ptr() as *const c_void) },
        "cuModuleLoadData",
    );
    if loaded.is_ok() {
        let mut f: ds::CUfunction = std::ptr::null_mut();
        // SAFETY: a lookup in the module just loaded; under lazy loading it loads the code.
        let _ = unsafe { ds::cuModuleGetFunction(&mut f, module, name.as_ptr()) };
    }
    CATCHING.with(|c| c.set(false));
    if loaded.is_ok() {
        // SAFETY: the module loaded above, used by nothing else.
        let _ = unsafe { ds::cuModuleUnload(module) };
    }
    loaded.map_err(|e| e.to_string())?;
    CAUGHT
        .with(|c| c.borrow_mut().take())
        .ok_or_else(|| "CUPTI reported no module for the image".into())
}

unsafe extern "C" fn caught(_user: *mut c_void, domain: u32, id: u32, data: *const c_void) {
    if domain != DOMAIN_RESOURCE || id != RESOURCE_MODULE_LOADED || data.is_null() {
        return;
    }
    if !CATCHING.with(|c| c.get()) {
        return; // the program's own loads
    }
    let contained = std::panic::catch_unwind(|| {
        // SAFETY: for MODULE_LOADED CUPTI passes a CUpti_ResourceData whose descriptor is a
        // CUpti_ModuleResourceData; its image is `cubinSize` bytes valid during the callback.
        unsafe {
            let r = &*(data as *const cs::CUpti_ResourceData);
            if r.resourceDescriptor.is_null() {
                return;
            }
            let m = &*(r.resourceDescriptor as *const cs::CUpti_ModuleResourceData);
            if m.pCubin.is_null() {
                return;
            }
            let image = std::slice::from_raw_parts(m.pCubin as *const u8, m.cubinSize).to_vec();
            CAUGHT.with(|c| *c.borrow_mut() = Some(image));
        }
    });
    drop(contained); // a panic stays here: nothing crosses into the driver
}
