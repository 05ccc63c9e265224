//! An A/B worker (`rr-tui job` handed an [`AbJob`] with a worker span; `ab --worker=FROM..TO`
//! on the command line, hidden): one candidate judged on a span of the selected
//! instances in one process, switching from one instance to the next with the memory kept on
//! the GPU ([`Session::switch_to`]). Each instance's result is one line on stdout,
//! `{"ab_result": …}`; the session's own events (JSON lines too) are not results and the parent
//! skips them. A fault poisons the CUDA context, so after one the worker ends: the parent goes
//! on with the next instance in a fresh worker.

use std::collections::HashMap;

use rr_engine::replay::candidate::{Candidate, CandidateFile, CandidateSpec};
use rr_engine::replay::leaderboard::InstanceResult;
use rr_engine::replay::session::RunError;
use rr_engine::replay::trial::{self, TrialOptions};
use rr_engine::replay::{launch, Overrides, ReplayInstance, Session};
use serde::{Deserialize, Serialize};

use rr_engine::replay::ab_job::{AbJob, WorkerSpan};

use super::select::{self, Selected};
use crate::commands::replay::{open, printer::Printer};
use crate::error::{Error, Result};
use crate::output;

/// One line of a worker's output that is a result.
#[derive(Debug, Serialize, Deserialize)]
pub struct WorkerLine {
    pub ab_result: InstanceResult,
}

pub fn run(a: &AbJob, WorkerSpan { from, to }: WorkerSpan) -> Result<i32> {
    let selected = select::instances(&a.dir, &a.kernels)?
        .ok_or_else(|| Error::invalid("the record directory holds no record"))?;
    let span = selected
        .get(from..to.min(selected.len()))
        .ok_or_else(|| Error::invalid("--worker: the span lies beyond the selection"))?;
    let [spec] = a.candidates.as_slice() else {
        return Err(Error::invalid("--worker judges one candidate"));
    };
    let spec = spec.clone();
    let file = spec.preflight()?;
    let opts = TrialOptions {
        pairs: a.pairs,
        warmup: a.warmup,
        cold: false,
        verify: a.verify(),
    };
    let mut worker = Worker {
        a,
        spec,
        file,
        opts,
        session: None,
        compiled: HashMap::new(),
    };
    for s in span {
        let (result, go_on) = worker.one(s);
        let line = serde_json::to_string(&WorkerLine { ab_result: result })
            .map_err(|e| Error::invalid(format!("a result that is no JSON: {e}")))?;
        output::json_line(&line);
        if !go_on {
            return Ok(1);
        }
    }
    Ok(0)
}

struct Worker<'a> {
    a: &'a AbJob,
    spec: CandidateSpec,
    file: CandidateFile,
    opts: TrialOptions,
    session: Option<Session>,
    /// The candidate compiled (or checked) per recorded kernel name: a source compiles once.
    compiled: HashMap<String, Candidate>,
}

impl Worker<'_> {
    /// Judge the candidate on `s`: its result, and whether this process may go on (not after
    /// a fault or a failed switch, which leave the session unusable).
    fn one(&mut self, s: &Selected) -> (InstanceResult, bool) {
        let inst = match ReplayInstance::load(&s.json, &self.a.supplied) {
            Ok(i) => i,
            Err(e) => return (InstanceResult::error(&s.name, e.to_string()), true),
        };
        let overrides = Overrides {
            device_id: self.a.device,
            ..Default::default()
        };
        let l = match launch::resolve(&inst.descriptor, &overrides) {
            Ok(l) => l,
            Err(e) => return (InstanceResult::error(&s.name, e.to_string()), true),
        };
        if let Err(e) = self.bind(&inst, &l) {
            self.session = None;
            return (InstanceResult::error(&s.name, e.to_string()), false);
        }
        let notes = match self.load_candidate(&inst) {
            Ok(n) => n,
            // A candidate that does not build or bind for this kernel: the session is sound.
            Err(e) => return (InstanceResult::error(&s.name, e.to_string()), true),
        };
        let session = self.session.as_mut().expect("bound above");
        match trial::judge_candidate(session, &inst, &s.name, &l.config(), &self.opts) {
            Ok(mut r) => {
                r.notes.splice(0..0, notes);
                (r, true)
            }
            Err(e) => {
                let fatal = matches!(e, RunError::Fault(_));
                (InstanceResult::error(&s.name, e.to_string()), !fatal)
            }
        }
    }

    /// Open the session on `inst`, or switch the open one to it.
    fn bind(&mut self, inst: &ReplayInstance, l: &launch::Launch) -> Result<()> {
        // JSON events on stdout: the parent reads only result lines.
        let printer = Printer { json: true, run: 1 };
        match self.session.as_mut() {
            Some(s) => {
                s.switch_to(inst, &mut |e| printer.emit(e))?;
            }
            None => {
                let timeout = (self.a.kernel_timeout > 0.0)
                    .then(|| std::time::Duration::from_secs_f64(self.a.kernel_timeout));
                let mut session = open::session(inst, l, true, timeout, &printer)?;
                if self.a.events_only {
                    session.without_probes();
                }
                self.session = Some(session);
            }
        }
        Ok(())
    }

    /// Load the candidate for `inst`'s kernel into the session (a switch drops it); what to
    /// note about its globals.
    fn load_candidate(&mut self, inst: &ReplayInstance) -> Result<Vec<String>> {
        let session = self.session.as_mut().expect("bound first");
        let name = inst.descriptor.name.clone();
        if !self.compiled.contains_key(&name) {
            let c = self
                .spec
                .prepare(self.file.clone(), &name, session.device.sm)?;
            self.compiled.insert(name.clone(), c);
        }
        let c = &self.compiled[&name];
        session.load_candidate(c)
    }
}
