//! `rr-tui ab DIR --kernels REGEX --candidate FILE [--candidate FILE]…`: each candidate judged
//! on every recorded instance of the kernels, then a leaderboard (text, or `--json` of schema
//! [`rr_engine::replay::leaderboard::SCHEMA`]).
//!
//! Everything that needs no GPU is checked first (the selection and every instance in it, each
//! candidate's file and flags, the same file given twice). Then each candidate runs in worker processes of its own ([`worker`]): a faulting
//! candidate poisons its CUDA context, and must take neither the others nor the remaining
//! instances with it. One worker runs a span of instances that share a memory layout, switching
//! from one to the next on the GPU; after a worker ends early, the instance it was on counts as
//! an error and a fresh worker judges the instances it left.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::Stdio;

use rr_engine::replay::ab_job::AbJob;
use rr_engine::replay::candidate::{self, CandidateSpec};
use rr_engine::replay::leaderboard::{CandidateRow, InstanceResult, Leaderboard};
use rr_format::text::visible_path;

use crate::error::{Error, Result};
use crate::output;

mod select;
pub mod text;
pub(crate) mod worker;

/// A worker's result line is at most this long (its own output; anything longer is not ours).
const MAX_LINE: u64 = 1 << 20;

/// Run the A/B job `a` (from the command line, or handed over to `rr-tui job`: the explorer's
/// leaderboard, and each worker).
pub fn run(a: &AbJob) -> Result<i32> {
    // The command line's limits, whoever built the job (a handed-over one was checked as read).
    a.check().map_err(Error::invalid)?;
    if let Some(span) = a.worker {
        return worker::run(a, span);
    }
    let Some(selected) = select::instances(&a.dir, &a.kernels)? else {
        return Ok(crate::commands::not_a_record::refuse(&a.dir, "ab", a.json));
    };
    // What the flags or the files get wrong is said before any GPU work: the candidates, then
    // the records (an instance no replay can run, as `replay` refuses it).
    check_candidates(a, &selected)?;
    note_ignored_flags(a);
    let keys = select::load_all(&selected, &a.supplied)?;
    rr_engine::replay::driver_usable()?;
    check_nvrtc(a)?;
    let spans = select::spans(&keys);
    let names: Vec<String> = selected.iter().map(|s| s.name.clone()).collect();
    let mut rows = Vec::with_capacity(a.candidates.len());
    for (i, spec) in a.candidates.iter().enumerate() {
        if !a.json {
            output::error_line(&format!(
                "[rr-tui] candidate {}/{}: {} on {} instance(s)",
                i + 1,
                a.candidates.len(),
                visible_path(&spec.path),
                names.len()
            ));
        }
        let results = run_candidate(a, spec, &names, &spans)?;
        rows.push(CandidateRow::of(&visible_path(&spec.path), results));
    }
    let board = Leaderboard::new(&visible_path(&a.dir), &a.kernels, names, rows);
    if a.json {
        crate::commands::print_json(&board);
    } else {
        output::lines(text::render(&board));
    }
    Ok(if board.passed { 0 } else { 1 })
}

/// Each candidate's file and build flags as `replay --candidate` checks them, a compiled one
/// holding every selected kernel where that can be seen without a GPU, and no file given
/// twice (the same file, by its device and inode: through a symbolic or a hard link too; the
/// build flags are the same for every one).
fn check_candidates(a: &AbJob, selected: &[select::Selected]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut kernels: Vec<&str> = selected.iter().map(|s| s.kernel.as_str()).collect();
    kernels.sort_unstable();
    kernels.dedup();
    let mut seen: HashMap<(u64, u64), &Path> = HashMap::new();
    for spec in &a.candidates {
        let file = spec.preflight()?;
        // A compiled candidate without a kernel it must run under is refused here, once, not
        // rejected on every instance after the GPU is open.
        spec.check_kernels(&file, kernels.iter().copied())?;
        let path = spec.path.as_path();
        let m = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if let Some(first) = seen.insert((m.dev(), m.ino()), path) {
            let which = match first == path {
                true => "given twice".to_string(),
                false => format!("the same file as --candidate {}", visible_path(first)),
            };
            return Err(Error::invalid(format!(
                "--candidate {}: {which}; each file is judged once (-D and --nvrtc-opt apply \
                 to every source candidate: a variant of other flags is a file of its own)",
                visible_path(path)
            )));
        }
    }
    Ok(())
}

/// `-D` and `--nvrtc-opt` go to the source candidates only (`AbArgs::job`): say that the
/// compiled ones ignore them, on standard error (the `--json` document stays on stdout).
fn note_ignored_flags(a: &AbJob) {
    let given = a
        .candidates
        .iter()
        .any(|c| !c.defines.is_empty() || !c.options.is_empty());
    let compiled: Vec<String> = a
        .candidates
        .iter()
        .filter(|c| !candidate::is_source(&c.path))
        .map(|c| visible_path(&c.path))
        .collect();
    if given && !compiled.is_empty() {
        output::error_line(&format!(
            "rr-tui: note: -D and --nvrtc-opt apply to the CUDA C++ source candidates; the \
             compiled {} ignore{} them",
            compiled.join(", "),
            if compiled.len() == 1 { "s" } else { "" }
        ));
    }
}

/// NVRTC loads when a candidate is a source: without it, every instance of that candidate
/// would be rejected one by one, when one line says why before any is run.
fn check_nvrtc(a: &AbJob) -> Result<()> {
    let Some(source) = a.candidates.iter().find(|c| candidate::is_source(&c.path)) else {
        return Ok(());
    };
    candidate::nvrtc_version()
        .map(drop)
        .map_err(|why| Error::invalid(format!("--candidate {}: {why}", visible_path(&source.path))))
}

/// The results of candidate `spec` on every instance, in order, from as many workers as it
/// takes. A worker says each result when it is final (in any order) and, before each step,
/// which instance it is on; one that ends with instances of its span left unsaid (a fault
/// ends it after saying that instance's error; a crash or a hang without) leaves them to a
/// fresh worker (which leaves out those judged), after blaming the instance it was on when
/// that one has no result. Each worker settles at least one instance: the one it said it was
/// on, else the first left.
fn run_candidate(
    a: &AbJob,
    spec: &CandidateSpec,
    names: &[String],
    spans: &[(usize, usize)],
) -> Result<Vec<InstanceResult>> {
    let mut results = Vec::with_capacity(names.len());
    for &(from, to) in spans {
        let mut slots: Vec<Option<InstanceResult>> = vec![None; to - from];
        while let Some(first_left) = slots.iter().position(Option::is_none) {
            // A fresh worker leaves out what is judged: the instances left rotate together.
            let mut job = a.worker_job(spec, from, to);
            job.worker_skip = (0..slots.len())
                .filter(|&k| slots[k].is_some())
                .map(|k| from + k)
                .collect();
            let ran = run_worker(&job, &names[from..to], &mut |k, r| {
                if !a.json {
                    output::error_line(&format!("[rr-tui]   {}", r.line()));
                }
                slots[k] = Some(r.clone());
            })?;
            let blamed = match ran.at.filter(|&k| slots[k].is_none()) {
                Some(k) => Some(k),
                None if ran.got == 0 => Some(first_left),
                None => None,
            };
            if let Some(k) = blamed {
                // Its last words, else how it ended (a crash says nothing: killed by SIGABRT).
                let why = last_line(&ran.stderr)
                    .map(str::to_string)
                    .unwrap_or_else(|| ended(ran.status));
                let r = InstanceResult::error(
                    &names[from + k],
                    format!("the candidate's process ended on this instance: {why}"),
                );
                if !a.json {
                    output::error_line(&format!("[rr-tui]   {}", r.line()));
                }
                slots[k] = Some(r);
            }
        }
        results.extend(slots.into_iter().flatten());
    }
    Ok(results)
}

/// What one worker did: how many results it said, the instance (of its span) it said it was
/// on last, and its standard error.
struct Ran {
    got: usize,
    at: Option<usize>,
    stderr: String,
    status: Option<std::process::ExitStatus>,
}

/// Run one worker on its job (`rr-tui job`, the job the line on its input: one candidate, a span
/// of instances); each result goes to `on_result` as it comes, with its place in `expected`
/// (a line naming an instance outside it, or one said before, ends the reading).
fn run_worker(
    job: &AbJob,
    expected: &[String],
    on_result: &mut dyn FnMut(usize, &InstanceResult),
) -> Result<Ran> {
    let exe = crate::this_binary().map_err(|e| Error::invalid(format!("rr-tui itself: {e}")))?;
    let mut child = rr_engine::job::spawn(
        rr_engine::job::command(&exe)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        job,
    )
    .map_err(|e| Error::invalid(format!("cannot start a worker process: {e}")))?;
    let mut err_pipe = child.stderr.take().expect("piped");
    // Read on a thread: a worker writing much to stderr must not block on a full pipe.
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = (&mut err_pipe).take(MAX_LINE).read_to_string(&mut s);
        s
    });
    let (mut got, mut at) = (0, None);
    let mut said = vec![false; expected.len()];
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut out).take(MAX_LINE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let place = |name: &String| expected.iter().position(|n| n == name);
        if let Ok(w) = serde_json::from_slice::<worker::AtLine>(&line) {
            at = place(&w.ab_at);
            continue;
        }
        let Ok(w) = serde_json::from_slice::<worker::WorkerLine>(&line) else {
            continue; // a replay event, not a result
        };
        match place(&w.ab_result.instance) {
            Some(k) if !said[k] => {
                said[k] = true;
                on_result(k, &w.ab_result);
                got += 1;
            }
            _ => break,
        }
    }
    drop(out);
    let status = child.wait().ok();
    Ok(Ran {
        got,
        at,
        stderr: stderr.join().unwrap_or_default(),
        status,
    })
}

/// How a worker that said nothing on standard error ended: its signal or exit status.
fn ended(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    let Some(status) = status else {
        return "no message".to_string();
    };
    match status.signal() {
        Some(n) => {
            // Linux's numbers (rr-tui runs on Linux only).
            let name = match n {
                6 => " (SIGABRT)",
                11 => " (SIGSEGV)",
                7 => " (SIGBUS)",
                4 => " (SIGILL)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL: out of memory?)",
                15 => " (SIGTERM)",
                _ => "",
            };
            format!("no message; killed by signal {n}{name}")
        }
        None => format!("no message; exit status {}", status.code().unwrap_or(-1)),
    }
}

/// The last non-empty line of a worker's standard error.
fn last_line(s: &str) -> Option<&str> {
    s.lines().rev().map(str::trim).find(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_line_round_trips_and_other_lines_are_not_results() {
        let r = InstanceResult::error("1_2.json", "the kernel failed");
        let line = serde_json::to_string(&worker::WorkerLine {
            ab_result: r.clone(),
        })
        .unwrap();
        let back: worker::WorkerLine = serde_json::from_str(&line).unwrap();
        assert_eq!(back.ab_result, r);
        // A replay event on the same stdout is skipped.
        assert!(
            serde_json::from_str::<worker::WorkerLine>(r#"{"run":1,"event":"device"}"#).is_err()
        );
        assert_eq!(last_line("a\n  b  \n\n"), Some("b"));
        assert_eq!(last_line(""), None);
    }
}
