//! CUPTI itself: loading libcupti, subscribing a callback and turning on the module-loaded
//! resource callback, and the errors of these calls. Both the observer's subscription
//! (`cupti::install`) and the cubin extractor use it.

use cudarc::cupti::sys as cs;
use std::ffi::{c_char, c_void, CStr};

/// CUPTI callback domains (`CUpti_CallbackDomain`).
pub(super) const DOMAIN_DRIVER: u32 = 1;
pub(super) const DOMAIN_RESOURCE: u32 = 3;
/// `CUPTI_CBID_RESOURCE_MODULE_LOADED`.
pub(super) const RESOURCE_MODULE_LOADED: u32 = 6;

/// Why CUPTI could not be set up.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct CuptiError(pub String);

pub(super) fn cupti_check(r: cs::CUptiResult, what: &str) -> std::result::Result<(), CuptiError> {
    if r == cs::CUptiResult::CUPTI_SUCCESS {
        return Ok(());
    }
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: writes a pointer to a static string.
    unsafe { cs::cuptiGetResultString(r, &mut s) };
    let text = if s.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: a NUL-terminated static string from CUPTI.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    };
    Err(CuptiError(format!("{what}: {text}")))
}

/// Load libcupti (an explicit `path` first, then the loader's search), returning whether found.
pub fn load_library(path: Option<&std::path::Path>) -> bool {
    if let Some(p) = path {
        if let Ok(c) = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()) {
            // SAFETY: dlopen of a NUL-terminated path; the handle is kept for the process's
            // life, so cudarc's later lookup by soname finds this library.
            unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        }
    }
    // SAFETY: only tries to dlopen the candidate names; calls nothing in them.
    unsafe { cs::is_culib_present() }
}

/// Whether the observer is subscribed to CUPTI (which allows one subscriber per process).
pub(super) static SUBSCRIBED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// A CUPTI callback, its enum arguments received as integers (same ABI, no invalid enums).
pub(super) type RawCallback = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);

/// Subscribe `callback` to CUPTI (nothing enabled yet).
pub(super) fn subscribe(
    callback: RawCallback,
) -> std::result::Result<cs::CUpti_SubscriberHandle, CuptiError> {
    let mut sub: cs::CUpti_SubscriberHandle = std::ptr::null_mut();
    // SAFETY: a RawCallback has CUpti_CallbackFunc's C signature with the enum parameters
    // declared as u32, which is their C representation.
    let cb: cs::CUpti_CallbackFunc = Some(unsafe {
        std::mem::transmute::<
            RawCallback,
            unsafe extern "C" fn(
                *mut c_void,
                cs::CUpti_CallbackDomain,
                cs::CUpti_CallbackId,
                *const c_void,
            ),
        >(callback)
    });
    // SAFETY: subscribes our callback; `sub` receives the handle.
    cupti_check(unsafe { cs::cuptiSubscribe(&mut sub, cb, std::ptr::null_mut()) }, "cuptiSubscribe")
        .map_err(|e| CuptiError(format!("{} (another CUPTI tool, such as Nsight or a profiler, may be attached: CUPTI allows one)", e.0)))?;
    Ok(sub)
}

/// Turn on the module-loaded resource callback for subscriber `sub`.
pub(super) fn enable_module_loaded(
    sub: cs::CUpti_SubscriberHandle,
) -> std::result::Result<(), CuptiError> {
    let resource = cs::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RESOURCE;
    // SAFETY: enables one resource callback for our subscriber.
    let r = unsafe { cs::cuptiEnableCallback(1, sub, resource, RESOURCE_MODULE_LOADED) };
    cupti_check(r, "cuptiEnableCallback")
}
