//! CUDA graphs, for recording the kernels they run.
//!
//! A graph launch raises no launch callbacks for its kernels, and an executable graph cannot be
//! looked into. So a graph is read when it is instantiated ([`walk`]: its nodes, child graphs
//! flattened, in an order that respects every dependency) and its changes are followed
//! ([`super::GraphChange`]). When a launch holds a kernel the recorder wants, the recorder runs the
//! graph's nodes itself, in that order, on the launch stream ([`run_node`]), snapshotting around
//! the kernels it records, and the application's launch is given an empty executable instead
//! ([`swap_supported`], [`empty_exec`]): every node runs exactly once.
//!
//! Measured on the GPU machine (driver 580, tests/gpu/probes): PyTorch destroys a graph right
//! after instantiating it, after which its node handles no longer address the executable's nodes
//! (`cuGraphNodeSetEnabled` fails), so nodes cannot be disabled for one launch; replacing the
//! executable in the launch's enter callback works, and is checked once per process before use.

use cudarc::driver::sys as ds;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use super::launch::{copy_params, function_name, resolve_function};
use super::state::SWAP_TO;
use crate::error::{check, CudaError, Result};

/// `CUgraphNodeType` values.
mod kind {
    pub const KERNEL: u32 = 0;
    pub const MEMCPY: u32 = 1;
    pub const MEMSET: u32 = 2;
    pub const HOST: u32 = 3;
    pub const GRAPH: u32 = 4;
    pub const EMPTY: u32 = 5;
    pub const WAIT_EVENT: u32 = 6;
    pub const EVENT_RECORD: u32 = 7;
    pub const EXT_SEMAS_SIGNAL: u32 = 8;
    pub const EXT_SEMAS_WAIT: u32 = 9;
    pub const MEM_ALLOC: u32 = 10;
    pub const MEM_FREE: u32 = 11;
    pub const BATCH_MEM_OP: u32 = 12;
    pub const CONDITIONAL: u32 = 13;
}

// Attribute values are read as 64 bytes (see `node_attributes`), edge data as 8 (`graph_edges`).
const _: () = assert!(std::mem::size_of::<ds::CUlaunchAttributeValue>() == 64);
const _: () = assert!(std::mem::size_of::<ds::CUgraphEdgeData>() == 8);

/// `CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH`.
pub(crate) const FLAG_DEVICE_LAUNCH: u64 = 4;
/// Graphs nest child graphs at most this deep, and hold at most this many nodes in all, here.
const MAX_DEPTH: usize = 16;
const MAX_NODES: usize = 1 << 20;

/// A graph as rr-tui runs it: its nodes, child graphs inlined, each after its dependencies.
#[derive(Debug, Default, Clone)]
pub struct GraphTemplate {
    pub nodes: Vec<Node>,
    /// Instantiated for device-side launch: it may also run where no callback sees it.
    pub device_launch: bool,
}

impl GraphTemplate {
    /// The node kinds rr-tui cannot run itself, each once, in order of appearance.
    pub fn unsupported(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for n in &self.nodes {
            if let NodeOp::Unsupported(k) = n.op {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
        out
    }

    /// The node whose handle (in the graph it was read from) is `handle`.
    pub fn position(&self, handle: u64) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.handle == handle || n.alias == Some(handle))
    }
}

#[derive(Debug, Clone)]
pub struct Node {
    /// The node's handle in the graph it was read from (0 for the entry and exit markers of an
    /// inlined child graph): exec-level updates name nodes by it.
    pub handle: u64,
    /// The handle of the same node in an earlier graph of the executable, when
    /// `cuGraphExecUpdate` replaced it (the application may go on naming it so).
    pub alias: Option<u64>,
    /// Indices of earlier nodes this one waits for.
    pub deps: Vec<u32>,
    pub op: NodeOp,
    /// Disabled nodes (`cuGraphNodeSetEnabled`) do nothing.
    pub enabled: bool,
}

#[derive(Debug, Clone)]
pub enum NodeOp {
    Kernel(KernelNode),
    Memset(Memset),
    Memcpy(Memcpy3d),
    Host(HostCall),
    EventRecord(u64),
    EventWait(u64),
    Empty,
    /// A kind rr-tui does not run itself (named for the report).
    Unsupported(&'static str),
}

/// A kernel node's launch, with its parameters copied when the node was read.
#[derive(Debug, Clone)]
pub struct KernelNode {
    /// A loaded `CUfunction` of the node's context.
    pub function: u64,
    /// The mangled name.
    pub name: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    pub params: Vec<u8>,
    pub layout: Vec<(usize, usize)>,
    pub cluster: Option<[u32; 3]>,
    pub cooperative: bool,
}

impl KernelNode {
    /// The kernel as a function of the current context (for its module and attributes).
    pub fn kernel_function(&self) -> super::launch::KernelFunction {
        super::launch::KernelFunction {
            raw: self.function as ds::CUfunction,
        }
    }
}

/// `CUDA_MEMSET_NODE_PARAMS`.
#[derive(Debug, Clone, Copy)]
pub struct Memset {
    pub dst: u64,
    pub pitch: usize,
    pub value: u32,
    pub element_size: u32,
    pub width: usize,
    pub height: usize,
}

/// A `CUDA_MEMCPY3D` kept as the driver gave it (never interpreted here: its memory-type enums
/// may hold values the bindings do not know), passed back unchanged.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub struct Memcpy3d([u8; std::mem::size_of::<ds::CUDA_MEMCPY3D>()]);

impl std::fmt::Debug for Memcpy3d {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memcpy3d")
    }
}

/// A host node's function and argument.
#[derive(Debug, Clone, Copy)]
pub struct HostCall {
    func: usize,
    data: usize,
}

// SAFETY: plain driver handles and addresses, only ever passed back to the driver (from
// whichever thread launches the graph, as the application itself may do).
unsafe impl Send for Memcpy3d {}
// SAFETY: a function and an argument of the application's, only ever passed back to the driver.
unsafe impl Send for HostCall {}
// SAFETY: bytes never interpreted or written after they were read.
unsafe impl Sync for Memcpy3d {}

/// Read a graph: every node (child graphs inlined between an entry and an exit marker), in
/// dependency order.
pub fn walk(graph: u64) -> Result<GraphTemplate> {
    let mut nodes = Vec::new();
    flatten(graph as ds::CUgraph, &mut nodes, 0, None)?;
    Ok(GraphTemplate {
        nodes: topological(nodes)?,
        device_launch: false,
    })
}

/// Append `graph`'s nodes to `out`; `entry`: the marker every node of an inlined child graph
/// waits for. Returns the indices of the nodes appended.
fn flatten(
    graph: ds::CUgraph,
    out: &mut Vec<Node>,
    depth: usize,
    entry: Option<u32>,
) -> Result<Vec<u32>> {
    if depth > MAX_DEPTH {
        return Err(CudaError::new(
            "cuGraphChildGraphNodeGetGraph",
            ds::CUresult::CUDA_ERROR_NOT_SUPPORTED,
        )
        .context(format!("child graphs nested deeper than {MAX_DEPTH}")));
    }
    let handles = graph_nodes(graph)?;
    // Where each of this graph's nodes starts (what its dependencies point at) and ends (what
    // its dependents wait for): the same node, or a child graph's entry and exit markers.
    let mut start = HashMap::with_capacity(handles.len());
    let mut end = HashMap::with_capacity(handles.len());
    let mut mine = Vec::new();
    for &h in &handles {
        if out.len() >= MAX_NODES {
            return Err(
                CudaError::new("cuGraphGetNodes", ds::CUresult::CUDA_ERROR_NOT_SUPPORTED)
                    .context(format!("graphs of more than {MAX_NODES} nodes")),
            );
        }
        let idx = out.len() as u32;
        let deps = entry.into_iter().collect();
        if node_type(h)? == kind::GRAPH {
            let mut child: ds::CUgraph = std::ptr::null_mut();
            check(
                // SAFETY: `h` is a child-graph node of a live graph; the driver writes one handle
                // (owned by the node).
                unsafe { ds::cuGraphChildGraphNodeGetGraph(h, &mut child) },
                "cuGraphChildGraphNodeGetGraph",
            )?;
            out.push(marker(h as u64, deps));
            let inner = flatten(child, out, depth + 1, Some(idx))?;
            let exit = out.len() as u32;
            out.push(marker(0, inner.clone()));
            mine.push(idx);
            mine.extend(inner);
            mine.push(exit);
            start.insert(h as u64, idx);
            end.insert(h as u64, exit);
        } else {
            out.push(Node {
                handle: h as u64,
                alias: None,
                deps,
                op: read_node(h)?,
                enabled: true,
            });
            mine.push(idx);
            start.insert(h as u64, idx);
            end.insert(h as u64, idx);
        }
    }
    for (from, to) in graph_edges(graph)? {
        if let (Some(&f), Some(&t)) = (end.get(&from), start.get(&to)) {
            out[t as usize].deps.push(f);
        }
    }
    Ok(mine)
}

fn marker(handle: u64, deps: Vec<u32>) -> Node {
    Node {
        handle,
        alias: None,
        deps,
        op: NodeOp::Empty,
        enabled: true,
    }
}

/// Order nodes so that each comes after its dependencies (Kahn's algorithm), renumbering them.
fn topological(nodes: Vec<Node>) -> Result<Vec<Node>> {
    let n = nodes.len();
    let mut waiting: Vec<usize> = nodes.iter().map(|x| x.deps.len()).collect();
    let mut dependents: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, x) in nodes.iter().enumerate() {
        for &d in &x.deps {
            dependents[d as usize].push(i as u32);
        }
    }
    let mut ready: Vec<u32> = (0..n as u32)
        .filter(|&i| waiting[i as usize] == 0)
        .collect();
    ready.reverse();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &d in dependents[i as usize].iter().rev() {
            waiting[d as usize] -= 1;
            if waiting[d as usize] == 0 {
                ready.push(d);
            }
        }
    }
    if order.len() != n {
        return Err(
            CudaError::new("cuGraphGetEdges", ds::CUresult::CUDA_ERROR_INVALID_VALUE)
                .context("the graph has a cycle"),
        );
    }
    let mut new_index = vec![0u32; n];
    for (pos, &old) in order.iter().enumerate() {
        new_index[old as usize] = pos as u32;
    }
    let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    Ok(order
        .iter()
        .map(|&old| {
            let mut x = slots[old as usize]
                .take()
                .unwrap_or_else(|| marker(0, vec![]));
            x.deps = x.deps.iter().map(|&d| new_index[d as usize]).collect();
            x
        })
        .collect())
}

fn graph_nodes(graph: ds::CUgraph) -> Result<Vec<ds::CUgraphNode>> {
    let mut n = 0usize;
    check(
        // SAFETY: a live graph; with a null array the driver writes the count only.
        unsafe { ds::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut n) },
        "cuGraphGetNodes",
    )?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut v: Vec<ds::CUgraphNode> = vec![std::ptr::null_mut(); n.min(MAX_NODES)];
    let mut got = v.len();
    check(
        // SAFETY: `v` holds `got` slots; the driver writes at most that many handles.
        unsafe { ds::cuGraphGetNodes(graph, v.as_mut_ptr(), &mut got) },
        "cuGraphGetNodes",
    )?;
    v.truncate(got.min(v.len()));
    Ok(v)
}

fn graph_edges(graph: ds::CUgraph) -> Result<Vec<(u64, u64)>> {
    let mut n = 0usize;
    check(
        // SAFETY: a live graph; with null arrays the driver writes the count only.
        unsafe {
            ds::cuGraphGetEdges_v2(
                graph,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut n,
            )
        },
        "cuGraphGetEdges",
    )?;
    if n == 0 {
        // A graph without edges (one node, or independent ones) is the commonest graph of all;
        // asked again with arrays for no edge, the driver answers CUDA_ERROR_INVALID_VALUE.
        return Ok(Vec::new());
    }
    let n = n.min(MAX_NODES * 4);
    let mut from: Vec<ds::CUgraphNode> = vec![std::ptr::null_mut(); n];
    let mut to: Vec<ds::CUgraphNode> = vec![std::ptr::null_mut(); n];
    // Edge data is asked for too: without it the driver refuses graphs whose edges carry any
    // (CUDA_ERROR_LOSSY_QUERY; XLA's programmatic dependencies). Running the nodes one after
    // the other on one stream satisfies every kind of dependency, so the data is not used.
    let mut data: Vec<[u8; 8]> = vec![[0; 8]; n];
    let mut got = n;
    check(
        // SAFETY: the three arrays hold `got` slots each (an edge's data is 8 bytes); the driver
        // writes at most that many edges.
        unsafe {
            ds::cuGraphGetEdges_v2(
                graph,
                from.as_mut_ptr(),
                to.as_mut_ptr(),
                data.as_mut_ptr() as *mut ds::CUgraphEdgeData,
                &mut got,
            )
        },
        "cuGraphGetEdges",
    )?;
    let got = got.min(n);
    Ok((0..got).map(|i| (from[i] as u64, to[i] as u64)).collect())
}

fn node_type(node: ds::CUgraphNode) -> Result<u32> {
    let mut t = u32::MAX;
    check(
        // SAFETY: a node of a live graph; the driver writes one enum value, received as a u32.
        unsafe { ds::cuGraphNodeGetType(node, &mut t as *mut u32 as *mut ds::CUgraphNodeType) },
        "cuGraphNodeGetType",
    )?;
    Ok(t)
}

fn read_node(node: ds::CUgraphNode) -> Result<NodeOp> {
    Ok(match node_type(node)? {
        kind::KERNEL => {
            // SAFETY: zeroed is a valid value of this plain C struct (pointers and integers).
            let mut p: ds::CUDA_KERNEL_NODE_PARAMS_v2 = unsafe { std::mem::zeroed() };
            check(
                // SAFETY: a kernel node of a live graph; the driver fills `p`, whose parameter
                // arrays it owns until the node changes or is destroyed (we copy them now).
                unsafe { ds::cuGraphKernelNodeGetParams_v2(node, &mut p) },
                "cuGraphKernelNodeGetParams",
            )?;
            // SAFETY: as returned by the driver for this node, valid now.
            let mut k = unsafe { kernel_from_params(&p) }?;
            (k.cluster, k.cooperative) = node_attributes(node);
            NodeOp::Kernel(k)
        }
        kind::MEMSET => {
            // SAFETY: zeroed is valid for this plain struct; the driver fills it.
            let mut p: ds::CUDA_MEMSET_NODE_PARAMS = unsafe { std::mem::zeroed() };
            check(
                // SAFETY: a memset node of a live graph.
                unsafe { ds::cuGraphMemsetNodeGetParams(node, &mut p) },
                "cuGraphMemsetNodeGetParams",
            )?;
            NodeOp::Memset(memset_of(&p))
        }
        kind::MEMCPY => {
            let mut raw = Memcpy3d([0; std::mem::size_of::<ds::CUDA_MEMCPY3D>()]);
            check(
                // SAFETY: a memcpy node of a live graph; `raw` is a suitably aligned buffer of
                // the struct's size, filled by the driver and never read as the Rust struct.
                unsafe {
                    ds::cuGraphMemcpyNodeGetParams(
                        node,
                        raw.0.as_mut_ptr() as *mut ds::CUDA_MEMCPY3D,
                    )
                },
                "cuGraphMemcpyNodeGetParams",
            )?;
            NodeOp::Memcpy(raw)
        }
        kind::HOST => {
            // SAFETY: zeroed is valid (a null function pointer option and a pointer).
            let mut p: ds::CUDA_HOST_NODE_PARAMS = unsafe { std::mem::zeroed() };
            check(
                // SAFETY: a host node of a live graph.
                unsafe { ds::cuGraphHostNodeGetParams(node, &mut p) },
                "cuGraphHostNodeGetParams",
            )?;
            NodeOp::Host(host_of(&p))
        }
        kind::EVENT_RECORD => {
            let mut e: ds::CUevent = std::ptr::null_mut();
            check(
                // SAFETY: an event-record node of a live graph; writes one handle.
                unsafe { ds::cuGraphEventRecordNodeGetEvent(node, &mut e) },
                "cuGraphEventRecordNodeGetEvent",
            )?;
            NodeOp::EventRecord(e as u64)
        }
        kind::WAIT_EVENT => {
            let mut e: ds::CUevent = std::ptr::null_mut();
            check(
                // SAFETY: an event-wait node of a live graph; writes one handle.
                unsafe { ds::cuGraphEventWaitNodeGetEvent(node, &mut e) },
                "cuGraphEventWaitNodeGetEvent",
            )?;
            NodeOp::EventWait(e as u64)
        }
        kind::EMPTY => NodeOp::Empty,
        kind::EXT_SEMAS_SIGNAL | kind::EXT_SEMAS_WAIT => NodeOp::Unsupported("external semaphore"),
        kind::MEM_ALLOC => NodeOp::Unsupported("memory allocation"),
        kind::MEM_FREE => NodeOp::Unsupported("memory free"),
        kind::BATCH_MEM_OP => NodeOp::Unsupported("batch memory operation"),
        kind::CONDITIONAL => NodeOp::Unsupported("conditional"),
        _ => NodeOp::Unsupported("unknown"),
    })
}

pub(crate) fn memset_of(p: &ds::CUDA_MEMSET_NODE_PARAMS) -> Memset {
    Memset {
        dst: p.dst,
        pitch: p.pitch,
        value: p.value,
        element_size: p.elementSize,
        width: p.width,
        height: p.height,
    }
}

pub(crate) fn host_of(p: &ds::CUDA_HOST_NODE_PARAMS) -> HostCall {
    HostCall {
        func: p.fn_.map(|f| f as usize).unwrap_or(0),
        data: p.userData as usize,
    }
}

/// A memcpy node's parameters as the application passed them (an exec-level update).
///
/// # Safety
/// `p` points to a `CUDA_MEMCPY3D` valid for the call.
pub(crate) unsafe fn memcpy_of(p: *const ds::CUDA_MEMCPY3D) -> Memcpy3d {
    let mut raw = Memcpy3d([0; std::mem::size_of::<ds::CUDA_MEMCPY3D>()]);
    // SAFETY: the caller's contract: `p` holds the struct's bytes.
    unsafe { std::ptr::copy_nonoverlapping(p as *const u8, raw.0.as_mut_ptr(), raw.0.len()) };
    raw
}

/// Cluster dimensions and cooperative launch of a kernel node.
fn node_attributes(node: ds::CUgraphNode) -> (Option<[u32; 3]>, bool) {
    use ds::CUlaunchAttributeID as Id;
    let attribute = |id: Id| -> Option<[u32; 16]> {
        let mut v = [0u32; 16];
        // SAFETY: a kernel node; the driver writes one CUlaunchAttributeValue (64 bytes, here a
        // u32 array of that size, so no union member is read as a Rust type it may not be).
        let r = unsafe {
            ds::cuGraphKernelNodeGetAttribute(
                node,
                id,
                v.as_mut_ptr() as *mut ds::CUkernelNodeAttrValue,
            )
        };
        (r == ds::CUresult::CUDA_SUCCESS).then_some(v)
    };
    let cluster = attribute(Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
        .map(|v| [v[0], v[1], v[2]])
        .filter(|c| c.iter().all(|&d| d > 0) && *c != [1, 1, 1]);
    let cooperative = attribute(Id::CU_LAUNCH_ATTRIBUTE_COOPERATIVE).is_some_and(|v| v[0] != 0);
    (cluster, cooperative)
}

/// A kernel node from its parameters (read from the node, or passed to an exec-level update).
///
/// # Safety
/// `p`'s `kernelParams`/`extra` are valid for the call and describe the function's parameters.
pub(crate) unsafe fn kernel_from_params(p: &ds::CUDA_KERNEL_NODE_PARAMS_v2) -> Result<KernelNode> {
    let handle = if !p.func.is_null() {
        p.func
    } else {
        p.kern as ds::CUfunction
    };
    let (function, _) = resolve_function(handle)?;
    let layout = function.param_layout()?;
    // SAFETY: the caller's contract.
    let params = unsafe { copy_params(p.kernelParams, p.extra, &layout) }?;
    Ok(KernelNode {
        function: function.raw as u64,
        name: function_name(function.raw)?,
        grid: [p.gridDimX, p.gridDimY, p.gridDimZ],
        block: [p.blockDimX, p.blockDimY, p.blockDimZ],
        shared_mem: p.sharedMemBytes,
        params,
        layout,
        cluster: None,
        cooperative: false,
    })
}

/// Queue one node on `stream` (the recorder runs a graph's nodes in order on the launch stream).
pub fn run_node(op: &NodeOp, stream: u64) -> Result<()> {
    let s = stream as ds::CUstream;
    match op {
        NodeOp::Kernel(k) => launch_kernel(k, stream),
        NodeOp::Memset(m) => {
            // SAFETY: the node's own destination and shape, as the application gave them.
            let r = unsafe {
                match (m.element_size, m.height > 1) {
                    (1, false) => ds::cuMemsetD8Async(m.dst, m.value as u8, m.width, s),
                    (2, false) => ds::cuMemsetD16Async(m.dst, m.value as u16, m.width, s),
                    (4, false) => ds::cuMemsetD32Async(m.dst, m.value, m.width, s),
                    (1, true) => {
                        ds::cuMemsetD2D8Async(m.dst, m.pitch, m.value as u8, m.width, m.height, s)
                    }
                    (2, true) => {
                        ds::cuMemsetD2D16Async(m.dst, m.pitch, m.value as u16, m.width, m.height, s)
                    }
                    _ => ds::cuMemsetD2D32Async(m.dst, m.pitch, m.value, m.width, m.height, s),
                }
            };
            check(r, "cuMemsetAsync")
        }
        NodeOp::Memcpy(c) => {
            // SAFETY: the node's own copy description, unchanged, as the driver gave it.
            let r = unsafe { ds::cuMemcpy3DAsync_v2(c.0.as_ptr() as *const ds::CUDA_MEMCPY3D, s) };
            check(r, "cuMemcpy3DAsync")
        }
        NodeOp::Host(h) => {
            if h.func == 0 {
                return Ok(());
            }
            // SAFETY: the application's host function and argument, as its node holds them;
            // the driver calls it once, in stream order, as the graph would have.
            let r = unsafe {
                let f: unsafe extern "C" fn(*mut c_void) = std::mem::transmute(h.func);
                ds::cuLaunchHostFunc(s, Some(f), h.data as *mut c_void)
            };
            check(r, "cuLaunchHostFunc")
        }
        NodeOp::EventRecord(e) => check(
            // SAFETY: the application's event and stream handles.
            unsafe { ds::cuEventRecord(*e as ds::CUevent, s) },
            "cuEventRecord",
        ),
        NodeOp::EventWait(e) => check(
            // SAFETY: the application's event and stream handles.
            unsafe { ds::cuStreamWaitEvent(s, *e as ds::CUevent, 0) },
            "cuStreamWaitEvent",
        ),
        NodeOp::Empty => Ok(()),
        NodeOp::Unsupported(k) => Err(CudaError::new(
            "cuGraphLaunch",
            ds::CUresult::CUDA_ERROR_NOT_SUPPORTED,
        )
        .context(format!("a {k} node"))),
    }
}

/// Launch a kernel node's kernel on `stream` with its recorded parameters and attributes.
pub fn launch_kernel(k: &KernelNode, stream: u64) -> Result<()> {
    let mut params = k.params.clone();
    let mut ptrs: Vec<*mut c_void> = k
        .layout
        .iter()
        // SAFETY: offsets from the kernel's own layout lie inside `params`.
        .map(|&(off, _)| unsafe { params.as_mut_ptr().add(off) } as *mut c_void)
        .collect();
    let mut attrs = crate::launch::launch_attributes(k.cluster, k.cooperative);
    let config = ds::CUlaunchConfig {
        gridDimX: k.grid[0],
        gridDimY: k.grid[1],
        gridDimZ: k.grid[2],
        blockDimX: k.block[0],
        blockDimY: k.block[1],
        blockDimZ: k.block[2],
        sharedMemBytes: k.shared_mem,
        hStream: stream as ds::CUstream,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    };
    // SAFETY: a loaded function with the parameter pointers its own layout describes, into a
    // buffer that outlives the call (the driver copies parameters before returning).
    let r = unsafe {
        ds::cuLaunchKernelEx(
            &config,
            k.function as ds::CUfunction,
            ptrs.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    drop(params);
    check(r, "cuLaunchKernelEx")
}

/// Per context: an executable of the empty graph, launched instead of a graph whose nodes the
/// recorder ran itself (it keeps the launch's place in stream order and costs nothing).
static EMPTY: OnceLock<Mutex<HashMap<u64, u64>>> = OnceLock::new();

/// The empty executable of the current context.
pub fn empty_exec() -> Result<u64> {
    let mut ctx: ds::CUcontext = std::ptr::null_mut();
    // SAFETY: writes the current context handle.
    check(unsafe { ds::cuCtxGetCurrent(&mut ctx) }, "cuCtxGetCurrent")?;
    let map = EMPTY.get_or_init(Default::default);
    if let Some(&e) = map
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&(ctx as u64))
    {
        return Ok(e);
    }
    let mut g: ds::CUgraph = std::ptr::null_mut();
    // SAFETY: creates an empty graph; flags must be 0.
    check(unsafe { ds::cuGraphCreate(&mut g, 0) }, "cuGraphCreate")?;
    let mut e: ds::CUgraphExec = std::ptr::null_mut();
    // SAFETY: instantiates the graph just created (kept for the process's life).
    let r = unsafe { ds::cuGraphInstantiateWithFlags(&mut e, g, 0) };
    // SAFETY: the executable no longer needs its source graph.
    unsafe { ds::cuGraphDestroy(g) };
    check(r, "cuGraphInstantiateWithFlags")?;
    map.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(ctx as u64, e as u64);
    Ok(e as u64)
}

static SWAP_WORKS: OnceLock<bool> = OnceLock::new();

/// Whether giving a graph launch another executable in its enter callback changes what runs
/// (checked once per process, on the first call: a one-node graph that sets 4 bytes is launched
/// with the empty executable swapped in, and the bytes must stay unset). The answer is what a
/// recorder needs before it runs a graph's nodes itself: if the swap did nothing, every node
/// would run twice.
pub fn swap_supported() -> bool {
    *SWAP_WORKS.get_or_init(|| probe_swap().unwrap_or(false))
}

fn probe_swap() -> Result<bool> {
    let empty = empty_exec()?;
    let buf = crate::DeviceBuffer::new(4)?;
    check(
        // SAFETY: zeroes the 4 bytes just allocated, synchronously.
        unsafe { ds::cuMemsetD32_v2(buf.ptr(), 0, 1) },
        "cuMemsetD32",
    )?;
    let mut g: ds::CUgraph = std::ptr::null_mut();
    // SAFETY: creates an empty graph.
    check(unsafe { ds::cuGraphCreate(&mut g, 0) }, "cuGraphCreate")?;
    let p = ds::CUDA_MEMSET_NODE_PARAMS {
        dst: buf.ptr(),
        pitch: 0,
        value: 1,
        elementSize: 4,
        width: 1,
        height: 1,
    };
    let mut ctx: ds::CUcontext = std::ptr::null_mut();
    let mut node: ds::CUgraphNode = std::ptr::null_mut();
    let mut exec: ds::CUgraphExec = std::ptr::null_mut();
    // SAFETY: a memset node of 4 bytes into our own buffer, in the current context; the graph
    // is instantiated, launched on the legacy stream with the swap armed for this thread only,
    // and destroyed.
    let result = unsafe {
        check(ds::cuCtxGetCurrent(&mut ctx), "cuCtxGetCurrent")
            .and_then(|_| {
                check(
                    ds::cuGraphAddMemsetNode(&mut node, g, std::ptr::null(), 0, &p, ctx),
                    "cuGraphAddMemsetNode",
                )
            })
            .and_then(|_| {
                check(
                    ds::cuGraphInstantiateWithFlags(&mut exec, g, 0),
                    "cuGraphInstantiateWithFlags",
                )
            })
            .and_then(|_| {
                SWAP_TO.with(|s| s.set(empty));
                let r = ds::cuGraphLaunch(exec, std::ptr::null_mut());
                SWAP_TO.with(|s| s.set(0));
                check(r, "cuGraphLaunch")
            })
            .and_then(|_| {
                check(
                    ds::cuStreamSynchronize(std::ptr::null_mut()),
                    "cuStreamSynchronize",
                )
            })
    };
    // SAFETY: destroys what was created above (null handles are skipped).
    unsafe {
        if !exec.is_null() {
            ds::cuGraphExecDestroy(exec);
        }
        ds::cuGraphDestroy(g);
    }
    result?;
    let mut v = [0u8; 4];
    buf.download(0, &mut v)?;
    Ok(v == [0; 4])
}
