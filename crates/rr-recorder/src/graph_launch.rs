//! Graph launches the recorder runs itself: which kernel nodes the selection rules pick, the
//! graph's nodes enqueued in order on the launch stream with the snapshots around the selected
//! kernels, and the race checks of a graph launched while snapshots are in flight. Called from
//! the recorder's `Observer::graph_launch`.

use rr_cuda::cupti::{self, GraphTemplate, NodeOp};

use crate::launch::LaunchSpec;
use crate::locks::lock;
use crate::races;
use crate::recorder::Recorder;
use crate::select::{Decision, LaunchKey};
use crate::settled::{count_settled, remember_settled, FastKey};
use crate::stats::Reason;

/// A graph launch the recorder runs itself: the graph, and its selected kernel nodes (index,
/// occurrence).
pub(crate) type GraphPlan = (GraphTemplate, Vec<(usize, u64)>);

impl Recorder {
    /// A graph launched while snapshots are in flight: its kernels, as launches (the race
    /// checks of [`Races::launched`]).
    pub(crate) fn graph_races(&self, exec: u64, stream: u64, context: u64) {
        let mut st = lock(&self.state);
        let st = &mut *st;
        let Some(Ok(t)) = st.graphs.get(exec).map(|e| e.template.as_ref()) else {
            return;
        };
        let stream = races::key(stream);
        for n in t.nodes.iter().filter(|n| n.enabled) {
            if let NodeOp::Kernel(k) = &n.op {
                let words = rr_format::memory::words_of(
                    &k.params,
                    k.layout.iter().map(|&(o, s)| (o as u32, s as u32)),
                );
                st.races.launched(&k.name, context, stream, &words);
            }
        }
    }

    /// A graph launch: which of its kernels the selection rules pick, and whether the recorder
    /// can run the graph itself. Returns the nodes to run and the selected ones, or `None` when
    /// the launch goes through untouched.
    pub(crate) fn plan_graph(&self, exec: u64, stream: u64) -> Result<Option<GraphPlan>, String> {
        if cupti::any_capture_active() && stream_capturing(stream)? {
            return Ok(None); // captured into another graph: it runs with that one
        }
        let mut guard = lock(&self.state);
        let st = &mut *guard;
        let Some(e) = st.graphs.get(exec) else {
            st.stats.not_recorded(Reason::GraphUnknown, 1);
            return Ok(None);
        };
        let t = match &e.template {
            Ok(t) => t,
            Err(why) => {
                let why = why.clone();
                st.stats.not_recorded(Reason::GraphUnreadable(why), 1);
                return Ok(None);
            }
        };
        let Some(selector) = st.selector.as_mut() else {
            return Ok(None);
        };
        let mut selected = Vec::new();
        for (i, n) in t.nodes.iter().enumerate() {
            let (true, NodeOp::Kernel(k)) = (n.enabled, &n.op) else {
                continue;
            };
            let fast: FastKey = (k.function, k.grid, k.block, k.shared_mem);
            if count_settled(&fast) {
                continue;
            }
            match selector.observe(&k.name, (k.grid, k.block, k.shared_mem)) {
                Decision::Record { occurrence } => selected.push((i, occurrence)),
                Decision::Skip(Some(settled)) => remember_settled(fast, settled),
                Decision::Skip(None) => {}
            }
        }
        if selected.is_empty() {
            return Ok(None);
        }
        st.stats.selected += selected.len() as u64;
        if let Some(why) = e.refusal() {
            st.stats.not_recorded(why, selected.len() as u64);
            return Ok(None);
        }
        let template = t.clone();
        drop(guard);
        if !cupti::graph::swap_supported() {
            lock(&self.state)
                .stats
                .not_recorded(Reason::GraphSwapUnsupported, selected.len() as u64);
            return Ok(None);
        }
        Ok(Some((template, selected)))
    }

    /// Enqueue a graph's nodes in order on `stream`, with the snapshots of the selected
    /// kernels around them. Nothing waits: every node and snapshot is stream-ordered.
    pub(crate) fn run_graph(
        &self,
        t: &GraphTemplate,
        selected: &[(usize, u64)],
        stream: u64,
        context: u64,
    ) {
        for (i, node) in t.nodes.iter().enumerate() {
            if !node.enabled {
                continue;
            }
            let chosen = selected.iter().find(|s| s.0 == i).map(|s| s.1);
            let (NodeOp::Kernel(k), Some(occurrence), true) = (&node.op, chosen, self.active())
            else {
                if let Err(e) = cupti::graph::run_node(&node.op, stream) {
                    eprintln!("rr-tui record: a graph node failed: {e}");
                }
                continue;
            };
            let spec = LaunchSpec {
                key: LaunchKey {
                    kernel: k.name.clone(),
                    grid: k.grid,
                    block: k.block,
                    shared_mem: k.shared_mem,
                },
                occurrence,
                function: k.kernel_function(),
                loaded_now: vec![],
                params: k.params.clone(),
                layout: k.layout.clone(),
                cluster: k.cluster,
                cooperative: k.cooperative,
                context,
                stream,
                stream_key: races::key(stream),
                from_graph: true,
            };
            let pending = match self.record_before(spec) {
                Ok(Ok(p)) => Some(p),
                Ok(Err(why)) => {
                    self.not_recorded(why);
                    None
                }
                Err(e) => {
                    self.stop(&e);
                    None
                }
            };
            let launched = cupti::graph::launch_kernel(k, stream);
            if let Err(e) = &launched {
                eprintln!("rr-tui record: a graph kernel node failed to launch: {e}");
            }
            if let Some((p, slot)) = pending {
                if let Err(e) = self.record_after(p, &slot, launched.is_ok()) {
                    self.stop(&e);
                }
            }
        }
    }
}

fn stream_capturing(stream: u64) -> Result<bool, String> {
    rr_cuda::cupti::stream_is_capturing(stream).map_err(|e| e.to_string())
}
