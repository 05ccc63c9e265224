//! An A/B worker (`rr-tui job` handed an [`AbJob`] with a worker span; `ab --worker=FROM..TO`
//! on the command line, hidden): one candidate judged on a span of the selected
//! instances in one process, switching from one instance to the next with the memory kept on
//! the GPU ([`Session::switch_to`]); the instances of one kernel are rotated inside the timing
//! loop with the candidate kept loaded ([`rotation`]). Each instance's result is one line on
//! stdout, `{"ab_result": …}`, said as soon as it is final (in any order); before every step
//! that runs the candidate or switches, `{"ab_at": NAME}` says which instance it works on. The
//! session's own events (JSON lines too) are neither, and the parent skips them. A fault
//! poisons the CUDA context, so after one the worker ends (that instance's result said); the
//! parent judges the instances left in a fresh worker, and blames a crash or a hang on the
//! instance the worker said it was on.

use std::collections::HashMap;

use rr_engine::replay::candidate::{Candidate, CandidateFile, CandidateSpec};
use rr_engine::replay::leaderboard::InstanceResult;
use rr_engine::replay::rotation::{self, Member, Report};
use rr_engine::replay::trial::TrialOptions;
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

/// One line of a worker's output that says which instance it works on next (before every step
/// that runs the candidate or switches): the instance a crash or a hang ends the worker on,
/// which its parent blames, judging the others in a fresh worker.
#[derive(Debug, Serialize, Deserialize)]
pub struct AtLine {
    pub ab_at: String,
}

/// Say a result on stdout (each as soon as it is final: a worker that ends later loses none).
fn say_result(r: InstanceResult) {
    output::json_line(&json(&WorkerLine {
        ab_result: bounded(r),
    }));
}

/// The most of a reason or a note a result line carries: a record's strings (a kernel name of
/// MB, in an error that names it) must not make the line longer than the parent reads
/// (`MAX_LINE`), which would lose the result and blame a crash.
pub(super) const MAX_TEXT: usize = 16 * 1024;

/// `r` with its reason and notes cut to [`MAX_TEXT`] bytes each, saying how much was left out.
pub(super) fn bounded(mut r: InstanceResult) -> InstanceResult {
    let cut = |s: &mut String| {
        let len = s.len();
        if rr_format::text::cut_at_char(s, MAX_TEXT) {
            let more = len - s.len();
            s.push_str(&format!("… ({more} bytes more)"));
        }
    };
    if let Some(reason) = r.reason.as_mut() {
        cut(reason);
    }
    r.notes.iter_mut().for_each(cut);
    r
}

fn say_at(name: &str) {
    output::json_line(&json(&AtLine {
        ab_at: name.to_string(),
    }));
}

fn json<T: Serialize>(v: &T) -> String {
    // Plain data (strings, numbers, a NaN written as null): it always serialises.
    serde_json::to_string(v).expect("a result serialises")
}

pub fn run(a: &AbJob, WorkerSpan { from, to }: WorkerSpan) -> Result<i32> {
    let selected = select::instances(&a.dir, &a.kernels)?
        .ok_or_else(|| Error::invalid("the record directory holds no record"))?;
    let span: Vec<Selected> = selected
        .get(from..to.min(selected.len()))
        .ok_or_else(|| Error::invalid("--worker: the span lies beyond the selection"))?
        .iter()
        .enumerate()
        .filter(|(k, _)| !a.worker_skip.contains(&(from + k)))
        .map(|(_, s)| s.clone())
        .collect();
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
    let mut at = 0;
    while at < span.len() {
        let (taken, go_on) = worker.group(&span[at..]);
        at += taken;
        if !go_on {
            return Ok(1);
        }
    }
    Ok(0)
}

/// An instance loaded with its launch, ready to judge.
struct Loaded<'s> {
    selected: &'s Selected,
    inst: ReplayInstance,
    launch: launch::Launch,
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
    /// Load `s` and resolve its launch (an error is the instance's result: its message).
    fn load<'s>(&self, s: &'s Selected) -> std::result::Result<Loaded<'s>, String> {
        let fail = |e: rr_engine::Error| e.to_string();
        let inst = ReplayInstance::load(&s.json, &self.a.supplied).map_err(fail)?;
        let overrides = Overrides {
            device_id: self.a.device,
            ..Default::default()
        };
        let launch = inst.launch(&overrides).map_err(fail)?;
        Ok(Loaded {
            selected: s,
            inst,
            launch,
        })
    }

    /// Judge the candidate on the instances at the start of `rest` that rotate together (the
    /// same kernel: one candidate module; the span shares a memory layout), at least one, each
    /// result said as soon as it is final: how many instances it took, and whether this
    /// process may go on (not after a fault or a failed switch, which leave the session
    /// unusable; the instances of the group not said are then left to a fresh worker).
    fn group(&mut self, rest: &[Selected]) -> (usize, bool) {
        say_at(&rest[0].name);
        let first = match self.load(&rest[0]) {
            Ok(l) => l,
            Err(why) => {
                say_result(InstanceResult::error(&rest[0].name, why));
                return (1, true);
            }
        };
        let kernel = first.inst.descriptor.name.clone();
        let mut group = vec![first];
        // The next instance that loads and runs the same kernel joins; any other starts the
        // next group (and is loaded again there: loading is cheap beside judging).
        for s in &rest[1..] {
            match self.load(s) {
                Ok(l) if l.inst.descriptor.name == kernel => group.push(l),
                _ => break,
            }
        }
        let head = &group[0];
        if let Err(e) = self.bind(&head.inst, &head.launch) {
            self.session = None;
            say_result(InstanceResult::error(&head.selected.name, e.to_string()));
            return (1, false);
        }
        let notes = match self.load_candidate(&head.inst) {
            Ok(n) => n,
            // A candidate that does not build or bind for this kernel: the same for every
            // instance of it, and the session is sound.
            Err(e) => {
                let why = e.to_string();
                for l in &group {
                    say_result(InstanceResult::error(&l.selected.name, why.clone()));
                }
                return (group.len(), true);
            }
        };
        let members: Vec<Member> = group
            .iter()
            .map(|l| Member {
                inst: &l.inst,
                name: &l.selected.name,
                cfg: l.launch.config(),
            })
            .collect();
        let printer = Printer { json: true, run: 1 };
        let session = self.session.as_mut().expect("bound above");
        let go_on = rotation::judge_group(
            session,
            &members,
            &self.opts,
            &mut |e| printer.emit(e),
            &mut |said| match said {
                Report::At(k) => say_at(members[k].name),
                Report::Done(_, mut r) => {
                    r.notes.splice(0..0, notes.iter().cloned());
                    say_result(*r);
                }
            },
        );
        if !go_on {
            self.session = None;
        }
        (group.len(), go_on)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A reason of MB (a record's kernel name in it) is cut to what the parent reads, saying
    /// how much was left out; a short one is kept whole.
    #[test]
    fn long_reasons_are_cut_saying_how_much() {
        let long = format!("no kernel rr_{}", "é".repeat(2 << 20));
        let r = bounded(InstanceResult::error("1_2.json", long.clone()));
        let reason = r.reason.unwrap();
        assert!(reason.len() < MAX_TEXT + 64, "{}", reason.len());
        assert!(reason.starts_with("no kernel rr_é"));
        let kept = reason.split('…').next().unwrap().len();
        assert!(reason.ends_with(&format!("({} bytes more)", long.len() - kept)));
        let short = bounded(InstanceResult::error("1_2.json", "short"));
        assert_eq!(short.reason.as_deref(), Some("short"));
    }
}
