//! The decoding of the driver calls that create or destroy texture and surface objects, for
//! `cupti::on_call`.

use cudarc::cupti::sys as cs;

use super::cbid;
use super::driver_call::DriverCall;
use super::observer::Observer;
use crate::objects::CapturedObject;

/// Decode a texture or surface object's creation or destruction for the observer.
///
/// # Safety
/// As `cupti::on_call`: `c.params` points to the parameter struct of call `c.id`, valid
/// during the call; after a successful call, its output pointers were written.
pub(super) unsafe fn on_object_call(observer: &dyn Observer, c: &DriverCall) {
    let (id, p) = (c.id, c.params);
    let entering = c.result.is_none();
    let exit_ok = c.result == Some(0);
    // SAFETY: (for every cast below) the caller's contract.
    unsafe {
        match id {
            cbid::TEX_OBJECT_CREATE if exit_ok => {
                let q = &*(p as *const cs::cuTexObjectCreate_params);
                if q.pTexObject.is_null() || q.pResDesc.is_null() || q.pTexDesc.is_null() {
                    return;
                }
                observer.object_created(
                    *q.pTexObject,
                    CapturedObject {
                        kind: rr_format::objects::ObjectKind::Texture,
                        resource: crate::objects::capture_resource(q.pResDesc),
                        texture: Some(crate::objects::capture_texture(q.pTexDesc)),
                        view: crate::objects::capture_view(q.pResViewDesc),
                    },
                );
            }
            cbid::SURF_OBJECT_CREATE if exit_ok => {
                let q = &*(p as *const cs::cuSurfObjectCreate_params);
                if q.pSurfObject.is_null() || q.pResDesc.is_null() {
                    return;
                }
                observer.object_created(
                    *q.pSurfObject,
                    CapturedObject {
                        kind: rr_format::objects::ObjectKind::Surface,
                        resource: crate::objects::capture_resource(q.pResDesc),
                        texture: None,
                        view: None,
                    },
                );
            }
            cbid::TEX_OBJECT_DESTROY | cbid::SURF_OBJECT_DESTROY if entering => {
                // Both take the 64-bit handle.
                observer.object_destroyed(*(p as *const u64));
            }
            _ => {}
        }
    }
}
