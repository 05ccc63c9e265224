//! A launch on its way to becoming an instance: what the selection rules picked, and what was
//! enqueued around its kernel. The recorder keeps these between a launch's enter and exit
//! ([`crate::recorder`]); the drain turns them into instances ([`crate::ordered::drain`]).

use std::sync::{Arc, Mutex};

use rr_cuda::cupti::KernelFunction;
use rr_cuda::ordered::StreamEvent;
use rr_format::objects::{ObjectArg, OutsideWord, SegmentKind};

use crate::images::Image;
use crate::ordered::staging::Snap;
use crate::pipeline::Source;
use crate::races::InFlight;
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
    /// The stream the kernel runs on (the per-thread default stream by its own handle).
    pub stream: u64,
    /// The stream as the recorder tells streams apart (`races::key`: each thread's per-thread
    /// default stream its own).
    pub stream_key: u64,
    pub from_graph: bool,
}

/// A launch whose input snapshot is enqueued before its kernel (and, once sealed, its output
/// snapshot after it).
pub struct Pending {
    /// The recorder's id of the launch (its race checks go by it).
    pub(crate) id: u64,
    pub(crate) spec: LaunchSpec,
    pub(crate) device: i32,
    /// The instance's segments: memory first (`memory` of them), then arrays.
    pub(crate) sources: Vec<Source>,
    pub(crate) memory: usize,
    pub(crate) kinds: Vec<SegmentKind>,
    /// Whether each source continues the allocation of the one before (a chunk after the first).
    pub(crate) continues: Vec<bool>,
    /// The module's globals, by name: their bytes are the input snapshot's chunks after the
    /// memory ones.
    pub(crate) globals: Vec<String>,
    pub(crate) image: Arc<Image>,
    pub(crate) objects: Vec<ObjectArg>,
    pub(crate) outside: Vec<OutsideWord>,
    pub(crate) unreplayable: Option<String>,
    pub(crate) input: Snap,
    pub(crate) output: Option<Snap>,
    /// On the stream: after the input snapshot (the kernel's start), after the kernel, after
    /// the output snapshot.
    pub(crate) started: StreamEvent,
    pub(crate) ended: Option<StreamEvent>,
    pub(crate) done: Option<Arc<StreamEvent>>,
    /// Its snapshots among those in flight (for the race checks of other streams' launches).
    pub(crate) flight: Arc<InFlight>,
    /// Why a snapshot may have raced with work on another stream (said in the instance).
    pub(crate) raced: Arc<Mutex<Vec<String>>>,
}

impl Pending {
    /// The last event enqueued for this launch: when it is done, so is everything of it.
    pub fn last_event(&self) -> &StreamEvent {
        self.done
            .as_deref()
            .or(self.ended.as_ref())
            .unwrap_or(&self.started)
    }
}

/// The cost of snapshots: time, bytes snapshot, bytes copied to the host (the others were
/// known by their fingerprint on the GPU, or zeros) and bytes written (new contents).
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
