//! The decoding of the driver calls on CUDA graphs, for `cupti::on_call`: an executable
//! graph's instantiation, destruction and launch, and the changes made to it afterwards.

use cudarc::cupti::sys as cs;
use cudarc::driver::sys as ds;

use super::cbid;
use super::driver_call::DriverCall;
use super::graph;
use super::launch;
use super::observer::{GraphChange, Observer};

/// Decode an executable graph's instantiation, destruction or launch for the observer (a
/// launch the observer runs itself is given the empty graph).
///
/// # Safety
/// As `cupti::on_call`: `c.params` points to the parameter struct of call `c.id`, valid
/// during the call; after a successful call, its output pointers were written.
pub(super) unsafe fn on_graph_lifecycle_call(observer: &dyn Observer, c: &DriverCall) {
    let (id, p, context) = (c.id, c.params, c.context);
    let entering = c.result.is_none();
    let exit_ok = c.result == Some(0);
    // SAFETY: (for every cast below) the caller's contract.
    unsafe {
        match id {
            cbid::GRAPH_INSTANTIATE
            | cbid::GRAPH_INSTANTIATE_V2
            | cbid::GRAPH_INSTANTIATE_WITH_FLAGS
            | cbid::GRAPH_INSTANTIATE_WITH_PARAMS
            | cbid::GRAPH_INSTANTIATE_WITH_PARAMS_PTSZ
                if exit_ok =>
            {
                // Every instantiate params struct starts with `CUgraphExec *phGraphExec;
                // CUgraph hGraph;`; the flags differ in place.
                let exec = **(p as *const *const ds::CUgraphExec) as u64;
                let graph = *(p as *const ds::CUgraph).add(1);
                let flags = match id {
                    cbid::GRAPH_INSTANTIATE_WITH_FLAGS => {
                        (*(p as *const cs::cuGraphInstantiateWithFlags_params)).flags
                    }
                    cbid::GRAPH_INSTANTIATE_WITH_PARAMS
                    | cbid::GRAPH_INSTANTIATE_WITH_PARAMS_PTSZ => {
                        let q = &*(p as *const cs::cuGraphInstantiateWithParams_params);
                        if q.instantiateParams.is_null() {
                            0
                        } else {
                            (*q.instantiateParams).flags
                        }
                    }
                    _ => 0,
                };
                let template = graph::walk(graph as u64).map(|mut t| {
                    t.device_launch = flags & graph::FLAG_DEVICE_LAUNCH != 0;
                    t
                });
                observer.graph_instantiated(exec, template);
            }
            cbid::GRAPH_EXEC_DESTROY if entering => {
                observer.graph_destroyed(
                    (*(p as *const cs::cuGraphExecDestroy_params)).hGraphExec as u64,
                );
            }
            cbid::GRAPH_LAUNCH | cbid::GRAPH_LAUNCH_PTSZ if entering => {
                let q = p as *mut cs::cuGraphLaunch_params;
                let per_thread = id == cbid::GRAPH_LAUNCH_PTSZ;
                let exec = (*q).hGraph as u64;
                let stream = launch::effective_stream((*q).hStream as u64, per_thread);
                if observer.graph_launch(exec, stream, context) {
                    // The observer checked the swap works and ran the nodes: the application's
                    // launch runs the empty graph (cached by the check, so this cannot fail).
                    if let Ok(empty) = graph::empty_exec() {
                        (*q).hGraph = empty as ds::CUgraphExec;
                    }
                }
            }
            _ => {}
        }
    }
}

/// Decode a change to an executable graph after its instantiation for the observer.
///
/// # Safety
/// As `cupti::on_call`: `c.params` points to the parameter struct of call `c.id`, valid
/// during the call; after a successful call, its output pointers were written.
pub(super) unsafe fn on_graph_change_call(observer: &dyn Observer, c: &DriverCall) {
    let (id, p) = (c.id, c.params);
    let exit_ok = c.result == Some(0);
    // SAFETY: (for every cast below) the caller's contract.
    unsafe {
        match id {
            cbid::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS
            | cbid::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS_V2
                if exit_ok =>
            {
                let q = &*(p as *const cs::cuGraphExecKernelNodeSetParams_v2_params);
                if q.nodeParams.is_null() {
                    return;
                }
                // The v1 struct is a prefix of v2 (without `kern` and `ctx`).
                let mut k: ds::CUDA_KERNEL_NODE_PARAMS_v2 = std::mem::zeroed();
                let n = if id == cbid::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS {
                    std::mem::size_of::<ds::CUDA_KERNEL_NODE_PARAMS_v1>()
                } else {
                    std::mem::size_of::<ds::CUDA_KERNEL_NODE_PARAMS_v2>()
                };
                std::ptr::copy_nonoverlapping(
                    q.nodeParams as *const u8,
                    &mut k as *mut ds::CUDA_KERNEL_NODE_PARAMS_v2 as *mut u8,
                    n,
                );
                observer.graph_changed(
                    q.hGraphExec as u64,
                    GraphChange::Kernel {
                        node: q.hNode as u64,
                        kernel: graph::kernel_from_params(&k),
                    },
                );
            }
            cbid::GRAPH_EXEC_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecNodeSetParams_params);
                if q.nodeParams.is_null() {
                    return;
                }
                // CUgraphNodeParams: `type` (an enum, read as u32), 3 reserved ints, then the
                // union, whose kernel member has CUDA_KERNEL_NODE_PARAMS_v2's layout.
                let kind = *(q.nodeParams as *const u32);
                let change = if kind == 0 {
                    let k = &*((q.nodeParams as *const u8).add(16)
                        as *const ds::CUDA_KERNEL_NODE_PARAMS_v2);
                    GraphChange::Kernel {
                        node: q.hNode as u64,
                        kernel: graph::kernel_from_params(k),
                    }
                } else {
                    GraphChange::Untracked("cuGraphExecNodeSetParams on a node other than a kernel")
                };
                observer.graph_changed(q.hGraphExec as u64, change);
            }
            cbid::GRAPH_EXEC_UPDATE | cbid::GRAPH_EXEC_UPDATE_V2 if exit_ok => {
                // Both params structs start with `CUgraphExec hGraphExec; CUgraph hGraph;`.
                let exec = *(p as *const ds::CUgraphExec) as u64;
                let graph = *(p as *const ds::CUgraph).add(1) as u64;
                observer.graph_changed(exec, GraphChange::Updated(graph::walk(graph)));
            }
            cbid::GRAPH_EXEC_MEMSET_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecMemsetNodeSetParams_params);
                if !q.memsetParams.is_null() {
                    let memset = graph::memset_of(&*q.memsetParams);
                    let node = q.hNode as u64;
                    observer
                        .graph_changed(q.hGraphExec as u64, GraphChange::Memset { node, memset });
                }
            }
            cbid::GRAPH_EXEC_MEMCPY_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecMemcpyNodeSetParams_params);
                if !q.copyParams.is_null() {
                    let copy = graph::memcpy_of(q.copyParams);
                    let node = q.hNode as u64;
                    observer.graph_changed(q.hGraphExec as u64, GraphChange::Memcpy { node, copy });
                }
            }
            cbid::GRAPH_EXEC_HOST_NODE_SET_PARAMS if exit_ok => {
                let q = &*(p as *const cs::cuGraphExecHostNodeSetParams_params);
                if !q.nodeParams.is_null() {
                    let host = graph::host_of(&*q.nodeParams);
                    let node = q.hNode as u64;
                    observer.graph_changed(q.hGraphExec as u64, GraphChange::Host { node, host });
                }
            }
            cbid::GRAPH_EXEC_EVENT_RECORD_NODE_SET_EVENT
            | cbid::GRAPH_EXEC_EVENT_WAIT_NODE_SET_EVENT
                if exit_ok =>
            {
                // Both: `hGraphExec, hNode, event`.
                let q = &*(p as *const cs::cuGraphExecEventRecordNodeSetEvent_params);
                let (node, event) = (q.hNode as u64, q.event as u64);
                observer.graph_changed(q.hGraphExec as u64, GraphChange::Event { node, event });
            }
            cbid::GRAPH_NODE_SET_ENABLED if exit_ok => {
                let q = &*(p as *const cs::cuGraphNodeSetEnabled_params);
                let (node, enabled) = (q.hNode as u64, q.isEnabled != 0);
                observer.graph_changed(q.hGraphExec as u64, GraphChange::Enabled { node, enabled });
            }
            cbid::GRAPH_EXEC_CHILD_GRAPH_NODE_SET_PARAMS if exit_ok => {
                let exec = *(p as *const ds::CUgraphExec) as u64;
                observer.graph_changed(
                    exec,
                    GraphChange::Untracked("cuGraphExecChildGraphNodeSetParams"),
                );
            }
            _ => {}
        }
    }
}
