//! The device's primary context, retained and current on the calling thread.

use cudarc::driver::{result, sys};
use std::marker::PhantomData;

use crate::driver::Device;
use crate::error::{teardown, Call, Result};

pub struct Context {
    device: sys::CUdevice,
    /// Contexts are current per thread: keep the handle on the thread that made it.
    _not_send: PhantomData<*const ()>,
}

impl Context {
    /// Retain `device`'s primary context and make it current on this thread.
    pub fn retain(device: &Device) -> Result<Context> {
        // SAFETY: `handle` came from cuDeviceGet; the retained context is released in Drop.
        let ctx = unsafe { result::primary_ctx::retain(device.handle) }
            .call("cuDevicePrimaryCtxRetain")?;
        let c = Context {
            device: device.handle,
            _not_send: PhantomData,
        };
        // SAFETY: `ctx` is the live primary context retained above.
        unsafe { result::ctx::set_current(ctx) }.call("cuCtxSetCurrent")?;
        Ok(c)
    }

    /// Wait for all work of the context; the error of any earlier asynchronous fault shows here.
    pub fn synchronize(&self) -> Result<()> {
        result::ctx::synchronize().call("cuCtxSynchronize")
    }

    /// `(free, total)` device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        result::mem_get_info().call("cuMemGetInfo")
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        teardown(
            // SAFETY: releases the retain made in `retain`, once.
            unsafe { result::primary_ctx::release(self.device) }.call("cuDevicePrimaryCtxRelease"),
        );
    }
}
