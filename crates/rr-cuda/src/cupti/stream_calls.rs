//! The decoding of the driver calls that begin or end a stream capture, destroy a stream, or
//! end a context (destroyed, or a device's primary context reset or released), for
//! `cupti::on_call`.

use cudarc::driver::sys as ds;

use super::cbid;
use super::driver_call::DriverCall;
use super::observer::Observer;
use crate::capture;

/// Whether device `dev`'s primary context is active (retained by someone).
fn primary_active(dev: i32) -> bool {
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: writes two integers for a device ordinal the program used.
    let r = unsafe { ds::cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active) };
    r != ds::CUresult::CUDA_SUCCESS || active != 0
}

/// Decode a stream capture's beginning or end, a stream's destruction, or a context's end for
/// the observer.
///
/// # Safety
/// As `cupti::on_call`: `c.params` points to the parameter struct of call `c.id`, valid
/// during the call; after a successful call, its output pointers were written.
pub(super) unsafe fn on_stream_call(observer: &dyn Observer, c: &DriverCall) {
    let (id, p) = (c.id, c.params);
    let entering = c.result.is_none();
    let exit_ok = c.result == Some(0);
    // SAFETY: (for every cast below) the caller's contract.
    unsafe {
        match id {
            cbid::STREAM_BEGIN_CAPTURE_V2
            | cbid::STREAM_BEGIN_CAPTURE_V2_PTSZ
            | cbid::STREAM_BEGIN_CAPTURE_TO_GRAPH
            | cbid::STREAM_BEGIN_CAPTURE_TO_GRAPH_PTSZ => {
                // Both structs start with the stream; the mode is the second field of one, the
                // sixth of the other (a CUstreamCaptureMode, read as the integer it is).
                let stream = *(p as *const u64);
                let mode = match id {
                    cbid::STREAM_BEGIN_CAPTURE_V2 | cbid::STREAM_BEGIN_CAPTURE_V2_PTSZ => {
                        *(p as *const u32).add(2)
                    }
                    _ => *(p as *const u32).add(10),
                };
                // Counted from the enter on: launches on other threads must not synchronise
                // while a capture starts.
                if entering {
                    capture::began(stream, mode);
                } else if !exit_ok {
                    capture::ended(stream);
                }
            }
            cbid::STREAM_DESTROY_V2 if entering => {
                observer.stream_destroyed(*(p as *const u64));
            }
            cbid::CTX_DESTROY_V2 => {
                let ctx = *(p as *const u64);
                if entering {
                    observer.context_ending(Some(ctx), None);
                } else if exit_ok {
                    observer.context_gone(Some(ctx), None);
                }
            }
            cbid::DEVICE_PRIMARY_CTX_RESET_V2 | cbid::DEVICE_PRIMARY_CTX_RELEASE_V2 => {
                let dev = *(p as *const i32);
                if entering {
                    observer.context_ending(None, Some(dev));
                } else if exit_ok
                    && (id == cbid::DEVICE_PRIMARY_CTX_RESET_V2 || !primary_active(dev))
                {
                    observer.context_gone(None, Some(dev));
                }
            }
            cbid::STREAM_END_CAPTURE | cbid::STREAM_END_CAPTURE_PTSZ if !entering => {
                capture::ended(*(p as *const u64));
            }
            _ => {}
        }
    }
}
