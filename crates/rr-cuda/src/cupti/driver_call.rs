//! One driver call as the decoder takes it, whichever way it came (CUPTI's callback or an
//! interposed entry point).

use std::ffi::c_void;

/// One driver call as the decoder sees it: from CUPTI's callback data, or from an interposed
/// entry point that packed its arguments into the same parameter struct.
pub(crate) struct DriverCall {
    /// The CUPTI callback id of the call.
    pub id: u32,
    /// The call's parameter struct (CUPTI's layout for `id`).
    pub params: *mut c_void,
    /// The context current on the calling thread (an opaque id; 0 if none).
    pub context: u64,
    /// `None` before the call; its `CUresult` as a number after it.
    pub result: Option<u32>,
}
