//! What the decoder tells a recorder: the [`Observer`] trait and the plain values its methods
//! take (allocations, changes to executable graphs).

use super::graph::{GraphTemplate, HostCall, KernelNode, Memcpy3d, Memset};
use super::launch::LaunchCall;
use crate::error::Result;
use crate::objects::CapturedObject;

/// What a recorder is told. Every method runs on the application thread that made the call,
/// possibly concurrently with others; none may block on a lock held across a driver call.
pub trait Observer: Send + Sync {
    /// The launch storm's path, before anything else: count `call` and return `true` when the
    /// observer already knows that no launch of its kernel and configuration can be selected.
    /// Runs outside `cupti::observe` (no depth bookkeeping, no unwinding guard), so it must not
    /// panic, lock, allocate or call the driver; `false` sends the launch down the full path.
    fn launch_settled(&self, _call: &LaunchCall) -> bool {
        false
    }
    /// A kernel launch is about to be issued (the kernel has not run).
    fn launch_enter(&self, call: &mut LaunchCall);
    /// The launch call returned (the kernel may still be running). Called only for launches
    /// whose `launch_enter` set [`LaunchCall::correlation`] (the others cost nothing more).
    fn launch_exit(&self, call: &mut LaunchCall);
    /// Memory became usable by kernels at `[addr, addr + size)`.
    fn allocated(&self, a: Allocation);
    /// The allocation starting at `addr` (or VMM mapping) was released.
    fn freed(&self, context: u64, addr: u64);
    /// The driver loaded a module; `image` is the device image it loaded (valid only now).
    fn module_loaded(&self, module_id: u32, image: &[u8]);
    /// A `cuModuleLoad*` call returned `module`; these module ids were loaded during it.
    fn module_handle(&self, module: u64, loaded: &[u32]);
    /// A `cuLibraryLoad*` call returned `library`; these module ids were loaded during it (seen
    /// through interposed entry points only: the library's modules are asked for by handle
    /// when one of its kernels is recorded).
    fn library_loaded(&self, library: u64, loaded: &[u32]);
    /// `cuLibraryUnload` is about to unload `library`.
    fn library_unloaded(&self, library: u64);
    /// An executable graph was instantiated: what it runs, or why that could not be read.
    fn graph_instantiated(&self, exec: u64, graph: Result<GraphTemplate>);
    /// Something an executable graph runs changed after instantiation.
    fn graph_changed(&self, exec: u64, change: GraphChange);
    fn graph_destroyed(&self, exec: u64);
    /// A graph launch is about to be issued on `stream`. Returns `true` when the observer ran
    /// the graph's nodes itself (in stream order, on `stream`): the launch then runs the empty
    /// graph instead, so every node runs once. Only return `true` after
    /// [`super::graph::swap_supported`] said so.
    fn graph_launch(&self, exec: u64, stream: u64, context: u64) -> bool;
    /// A texture or surface object was created.
    fn object_created(&self, handle: u64, object: CapturedObject);
    fn object_destroyed(&self, handle: u64);
    /// The program is about to destroy stream `stream` (its handle may be reused after).
    fn stream_destroyed(&self, _stream: u64) {}
    /// A context is about to be destroyed (`context`), or the primary context of `device` may
    /// be (reset, or released for the last time): what is pending there must be done now.
    fn context_ending(&self, _context: Option<u64>, _device: Option<i32>) {}
    /// The context is gone (named as in `context_ending`): its handle may come back for a new
    /// one.
    fn context_gone(&self, _context: Option<u64>, _device: Option<i32>) {}
}

/// A change to an executable graph after instantiation; nodes are named by their handle in the
/// graph it was instantiated (or last updated) from.
#[derive(Debug)]
pub enum GraphChange {
    /// `cuGraphExecKernelNodeSetParams`, `cuGraphExecNodeSetParams` on a kernel node.
    Kernel {
        node: u64,
        kernel: Result<KernelNode>,
    },
    Memset {
        node: u64,
        memset: Memset,
    },
    Memcpy {
        node: u64,
        copy: Memcpy3d,
    },
    Host {
        node: u64,
        host: HostCall,
    },
    Event {
        node: u64,
        event: u64,
    },
    /// `cuGraphNodeSetEnabled`.
    Enabled {
        node: u64,
        enabled: bool,
    },
    /// `cuGraphExecUpdate`: the executable now runs this graph.
    Updated(Result<GraphTemplate>),
    /// A change rr-tui does not follow (which call).
    Untracked(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    Device,
    Pitched,
    Managed,
    /// Stream-ordered (`cuMemAllocAsync`, pools).
    StreamOrdered,
    /// A virtual-memory mapping (`cuMemMap`).
    Mapped,
    /// Page-locked host memory mapped into the device address space (`cuMemHostAlloc`,
    /// `cuMemAllocHost`, `cuMemHostRegister`), at its device address.
    Host,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub context: u64,
    pub addr: u64,
    pub size: u64,
    pub kind: AllocKind,
}
