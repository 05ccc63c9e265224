//! Stream-ordered snapshots: a recorded launch's memory is snapshot by work the recorder
//! enqueues on the launch's own stream, before and after the kernel, and the launch returns to
//! the application at once. Hashing, deduplication and writing happen on the recorder's own
//! thread ([`drain`]), which waits for events the application never sees. The application's
//! thread never waits for a kernel it did not wait for itself.
//!
//! - [`plan`]: a snapshot on paper (chunks, what is already held of each, metadata layout, and
//!   what became of each chunk once the kernels ran). Pure.
//! - [`arena`], [`ring`]: the recorder's own space (metadata and uploads; the staging ring's
//!   tail). Pure.
//! - [`staging`]: one context's snapshot resources and the enqueueing of a snapshot.
//! - [`drain`]: the queue of recorded launches the recorder's thread takes in order.
//! - [`writer`]: the recorder's thread: waits, reads back, stores, writes instances.

pub mod arena;
pub mod drain;
pub mod plan;
pub mod ring;
pub mod staging;
pub mod writer;
