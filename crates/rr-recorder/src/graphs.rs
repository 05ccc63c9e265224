//! The executable graphs of the program: what each runs, kept up to date with the changes the
//! program makes after instantiation, and whether the recorder can run it itself. Pure: tested
//! without a GPU.

use std::collections::HashMap;

use rr_cuda::cupti::{GraphChange, GraphTemplate, NodeOp};

use crate::stats::Reason;

#[derive(Debug)]
pub struct Exec {
    /// `Err(why)`: the graph could not be read when instantiated.
    pub template: Result<GraphTemplate, String>,
    /// A change after instantiation rr-tui does not follow (which call).
    pub untracked: Option<&'static str>,
}

impl Exec {
    /// Why the recorder cannot run this executable's nodes itself, if it cannot.
    pub fn refusal(&self) -> Option<Reason> {
        let t = match &self.template {
            Ok(t) => t,
            Err(why) => return Some(Reason::GraphUnreadable(why.clone())),
        };
        if let Some(what) = self.untracked {
            return Some(Reason::GraphUntracked(what));
        }
        if t.device_launch {
            return Some(Reason::GraphDeviceLaunch);
        }
        t.unsupported().first().map(|k| Reason::GraphNodeKind(k))
    }
}

#[derive(Debug, Default)]
pub struct Graphs {
    execs: HashMap<u64, Exec>,
}

impl Graphs {
    pub fn instantiated(&mut self, exec: u64, template: Result<GraphTemplate, String>) {
        self.execs.insert(
            exec,
            Exec {
                template,
                untracked: None,
            },
        );
    }

    pub fn destroyed(&mut self, exec: u64) {
        self.execs.remove(&exec);
    }

    pub fn get(&self, exec: u64) -> Option<&Exec> {
        self.execs.get(&exec)
    }

    /// Apply a change the program made to an executable.
    pub fn changed(&mut self, exec: u64, change: GraphChange) {
        let Some(e) = self.execs.get_mut(&exec) else {
            return;
        };
        let Ok(t) = e.template.as_mut() else {
            return;
        };
        let untracked = |e: &mut Option<&'static str>, what| {
            e.get_or_insert(what);
        };
        let node_of = |t: &GraphTemplate, h: u64| t.position(h);
        match change {
            GraphChange::Updated(Ok(mut new)) => {
                // cuGraphExecUpdate pairs the nodes of the new graph with the executable's in
                // order; the application may go on naming them by either graph's handles.
                let same_shape = new.nodes.len() == t.nodes.len()
                    && new.nodes.iter().zip(&t.nodes).all(|(a, b)| {
                        std::mem::discriminant(&a.op) == std::mem::discriminant(&b.op)
                    });
                if same_shape {
                    for (n, old) in new.nodes.iter_mut().zip(&t.nodes) {
                        n.alias = Some(old.handle);
                        n.enabled = old.enabled;
                    }
                    new.device_launch = t.device_launch;
                    *t = new;
                } else {
                    untracked(
                        &mut e.untracked,
                        "cuGraphExecUpdate with a graph of another shape",
                    );
                }
            }
            GraphChange::Updated(Err(why)) => e.template = Err(why.to_string()),
            GraphChange::Untracked(what) => untracked(&mut e.untracked, what),
            GraphChange::Enabled { node, enabled } => match node_of(t, node) {
                Some(i) => t.nodes[i].enabled = enabled,
                None => untracked(&mut e.untracked, "cuGraphNodeSetEnabled on an unknown node"),
            },
            GraphChange::Kernel { node, kernel } => match (node_of(t, node), kernel) {
                (Some(i), Ok(k)) if matches!(t.nodes[i].op, NodeOp::Kernel(_)) => {
                    t.nodes[i].op = NodeOp::Kernel(k)
                }
                _ => untracked(&mut e.untracked, "cuGraphExecKernelNodeSetParams"),
            },
            GraphChange::Memset { node, memset } => match node_of(t, node) {
                Some(i) => t.nodes[i].op = NodeOp::Memset(memset),
                None => untracked(&mut e.untracked, "cuGraphExecMemsetNodeSetParams"),
            },
            GraphChange::Memcpy { node, copy } => match node_of(t, node) {
                Some(i) => t.nodes[i].op = NodeOp::Memcpy(copy),
                None => untracked(&mut e.untracked, "cuGraphExecMemcpyNodeSetParams"),
            },
            GraphChange::Host { node, host } => match node_of(t, node) {
                Some(i) => t.nodes[i].op = NodeOp::Host(host),
                None => untracked(&mut e.untracked, "cuGraphExecHostNodeSetParams"),
            },
            GraphChange::Event { node, event } => match node_of(t, node) {
                Some(i) => {
                    t.nodes[i].op = match t.nodes[i].op {
                        NodeOp::EventWait(_) => NodeOp::EventWait(event),
                        _ => NodeOp::EventRecord(event),
                    }
                }
                None => untracked(&mut e.untracked, "cuGraphExecEventRecordNodeSetEvent"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_cuda::cupti::{KernelNode, Node};

    fn kernel(name: &str) -> NodeOp {
        NodeOp::Kernel(KernelNode {
            function: 1,
            name: name.into(),
            grid: [1; 3],
            block: [32, 1, 1],
            shared_mem: 0,
            params: vec![0; 8],
            layout: vec![(0, 8)],
            cluster: None,
            cooperative: false,
        })
    }

    fn node(handle: u64, op: NodeOp) -> Node {
        Node {
            handle,
            alias: None,
            deps: vec![],
            op,
            enabled: true,
        }
    }

    fn template(nodes: Vec<Node>) -> GraphTemplate {
        GraphTemplate {
            nodes,
            device_launch: false,
        }
    }

    fn name_of(g: &Graphs, exec: u64, i: usize) -> String {
        match &g.get(exec).unwrap().template.as_ref().unwrap().nodes[i].op {
            NodeOp::Kernel(k) => k.name.clone(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn updates_follow_nodes_by_either_handle() {
        let mut g = Graphs::default();
        g.instantiated(
            7,
            Ok(template(vec![
                node(10, kernel("a")),
                node(11, NodeOp::Empty),
            ])),
        );
        assert!(g.get(7).unwrap().refusal().is_none());
        let new_kernel = match kernel("b") {
            NodeOp::Kernel(k) => k,
            _ => unreachable!(),
        };
        g.changed(
            7,
            GraphChange::Kernel {
                node: 10,
                kernel: Ok(new_kernel),
            },
        );
        assert_eq!(name_of(&g, 7, 0), "b");
        // A whole-graph update from a graph of the same shape: new handles, old ones kept.
        g.changed(
            7,
            GraphChange::Enabled {
                node: 11,
                enabled: false,
            },
        );
        g.changed(
            7,
            GraphChange::Updated(Ok(template(vec![
                node(20, kernel("c")),
                node(21, NodeOp::Empty),
            ]))),
        );
        assert_eq!(name_of(&g, 7, 0), "c");
        let t = g.get(7).unwrap().template.as_ref().unwrap();
        assert_eq!((t.position(10), t.position(20)), (Some(0), Some(0)));
        assert!(!t.nodes[1].enabled, "an update keeps what was disabled");
        // Another shape, or an unknown node: the executable is left to the driver from now on.
        g.changed(
            7,
            GraphChange::Updated(Ok(template(vec![node(30, kernel("d"))]))),
        );
        assert_eq!(
            g.get(7).unwrap().refusal(),
            Some(Reason::GraphUntracked(
                "cuGraphExecUpdate with a graph of another shape"
            ))
        );
        g.destroyed(7);
        assert!(g.get(7).is_none());
    }

    #[test]
    fn unsupported_nodes_and_unreadable_graphs_are_refused_with_the_reason() {
        let mut g = Graphs::default();
        g.instantiated(
            1,
            Ok(template(vec![
                node(1, kernel("a")),
                node(2, NodeOp::Unsupported("conditional")),
            ])),
        );
        assert_eq!(
            g.get(1).unwrap().refusal(),
            Some(Reason::GraphNodeKind("conditional"))
        );
        g.instantiated(2, Err("cuGraphGetEdges: lossy".into()));
        assert_eq!(
            g.get(2).unwrap().refusal(),
            Some(Reason::GraphUnreadable("cuGraphGetEdges: lossy".into()))
        );
        let mut t = template(vec![node(1, kernel("a"))]);
        t.device_launch = true;
        g.instantiated(3, Ok(t));
        assert_eq!(g.get(3).unwrap().refusal(), Some(Reason::GraphDeviceLaunch));
    }
}
