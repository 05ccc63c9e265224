//! A launch on its way to becoming an instance: what the selection rules picked, and what was
//! captured before its kernel. The recorder keeps these between a launch's enter and exit
//! ([`crate::recorder`]); capturing fills them in (`capture`).

use std::sync::Arc;
use std::time::Instant;

use rr_cuda::cupti::KernelFunction;
use rr_format::objects::{ObjectArg, OutsideWord, SegmentKind};

use crate::images::Image;
use crate::pipeline::Source;
use crate::select::LaunchKey;

/// What is known of a launch the selection rules picked.
pub struct LaunchSpec {
    pub key: LaunchKey,
    pub occurrence: u64,
    pub function: KernelFunction,
    /// Modules loaded while the kernel was resolved (see `Images::resolve`).
    pub loaded_now: Vec<u32>,
    pub params: Vec<u8>,
    pub layout: Vec<(usize, usize)>,
    pub cluster: Option<[u32; 3]>,
    pub cooperative: bool,
    pub context: u64,
    pub from_graph: bool,
}

/// A launch recorded up to its kernel, waiting for the kernel's end.
pub struct Pending {
    pub(crate) spec: LaunchSpec,
    pub(crate) device: i32,
    pub(crate) sources: Vec<Source>,
    pub(crate) kinds: Vec<SegmentKind>,
    /// Whether each source continues the allocation of the one before (a chunk after the first).
    pub(crate) continues: Vec<bool>,
    pub(crate) inputs: Vec<String>,
    /// What the input snapshot cost.
    pub(crate) cost: Cost,
    pub(crate) image: Arc<Image>,
    pub(crate) globals: Vec<(String, Vec<u8>)>,
    pub(crate) objects: Vec<ObjectArg>,
    pub(crate) outside: Vec<OutsideWord>,
    pub(crate) unreplayable: Option<String>,
    pub(crate) started: Instant,
}

/// A snapshot's blob ids, and what taking it cost.
pub struct Stored {
    pub ids: Vec<String>,
    pub cost: Cost,
}

/// The cost of snapshots: time, bytes snapshot, bytes copied to the host (the others were
/// known by their fingerprint on the GPU) and bytes written (new contents).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    pub seconds: f64,
    pub bytes: u64,
    pub copied: u64,
    pub written: u64,
}

impl Cost {
    pub fn add(self, o: Cost) -> Cost {
        Cost {
            seconds: self.seconds + o.seconds,
            bytes: self.bytes.saturating_add(o.bytes),
            copied: self.copied.saturating_add(o.copied),
            written: self.written.saturating_add(o.written),
        }
    }
}
