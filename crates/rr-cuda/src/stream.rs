//! Streams and timing events.

use cudarc::driver::{result, sys};

use crate::error::{teardown, Call, Result};

/// `CU_STREAM_PER_THREAD`: the per-thread default stream, named explicitly.
pub const STREAM_PER_THREAD: u64 = 0x2;

/// A non-blocking stream of the current context.
pub struct Stream {
    pub(crate) raw: sys::CUstream,
}

impl Stream {
    pub fn new() -> Result<Stream> {
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
            .call("cuStreamCreate")?;
        Ok(Stream { raw })
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: `raw` is a live stream we created.
        unsafe { result::stream::synchronize(self.raw) }.call("cuStreamSynchronize")
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: destroys the stream created in `new`, once.
        teardown(unsafe { result::stream::destroy(self.raw) }.call("cuStreamDestroy"));
    }
}

/// A timing event (`CU_EVENT_DEFAULT`: timing enabled, unlike cudarc's `new_event(None)`).
pub struct Event {
    raw: sys::CUevent,
}

impl Event {
    pub fn new() -> Result<Event> {
        let raw =
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).call("cuEventCreate")?;
        Ok(Event { raw })
    }

    pub fn record(&self, stream: &Stream) -> Result<()> {
        // SAFETY: both handles are live and belong to the current context.
        unsafe { result::event::record(self.raw, stream.raw) }.call("cuEventRecord")
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: `raw` is a live event.
        unsafe { result::event::synchronize(self.raw) }.call("cuEventSynchronize")
    }

    /// Milliseconds from `self` to `end`; both must have completed.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        // SAFETY: both events are live timing events of this context.
        unsafe { result::event::elapsed(self.raw, end.raw) }.call("cuEventElapsedTime")
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: destroys the event created in `new`, once.
        teardown(unsafe { result::event::destroy(self.raw) }.call("cuEventDestroy"));
    }
}
