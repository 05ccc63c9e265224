//! `rr-tui profile`: Nsight Compute on exactly one repetition of a replay, then the metrics an
//! engineer reads first (see `rr_engine::profile`).

use rr_format::text::io_reason;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use rr_engine::profile::{self, raw, Profile, ProfileJob, ProfileOutput, ProfileResult};
use rr_engine::replay::protocol::{Event, Tagged};
use rr_format::text::visible;

use crate::commands::child;
use crate::error::{Error, Result};
use crate::output;

/// The NVTX range of the one repetition profiled (`Session::run` names them `rr-tui rep N`).
const RANGE: &str = "regex:rr-tui.rep.1/";
/// An A/B replay's candidate's first repetition (`ab::run_pairs`: `rr-tui rep N candidate`):
/// the only launch inside that range, so no kernel name is needed (the candidate's may be
/// another).
const CANDIDATE_RANGE: &str = "regex:rr-tui.rep.1.candidate/";

/// Run the profile job `a` (from the command line, or handed over to `rr-tui job`).
pub fn run(a: &ProfileJob) -> Result<i32> {
    if a.output != ProfileOutput::Events {
        return profile(a, &|_| {}).map(|_| 0);
    }
    // The explorer's child: ncu's progress as events, then the profile or the error, then the
    // end of the run — never text.
    let emit = |event: Event| {
        output::json_line(
            &Tagged {
                run: a.run_id,
                event,
            }
            .to_line(),
        )
    };
    let progress = |line: &str| {
        emit(Event::Phase {
            name: "progress".into(),
            detail: line.to_string(),
        })
    };
    // The exit status as without --events: 2 for what the input or the flags get wrong.
    let code = match profile(a, &progress) {
        Ok(result) => {
            emit(Event::Profile(Box::new(result)));
            0
        }
        Err(e) => {
            emit(Event::Error {
                kind: rr_engine::replay::session::error_kind(&e),
                message: visible(&e.to_string()).into_owned(),
            });
            e.exit_status()
        }
    };
    emit(Event::Done { ok: code == 0 });
    Ok(code)
}

/// Profile as `a` says, printing (unless in events) as it goes; `progress` hears ncu's passes.
fn profile(a: &ProfileJob, progress: &dyn Fn(&str)) -> Result<ProfileResult> {
    child::watch_signals();
    // The command line's limits, whoever built the job (a handed-over one was checked as read).
    a.check().map_err(Error::invalid)?;
    let text = a.output == ProfileOutput::Text;
    let req = a.replay();
    if a.descriptor.is_dir() {
        return Err(super::not_a_record::directory_given(
            &a.descriptor,
            "profile",
        ));
    }
    // The replay's own checks first: nothing starts that `replay` would refuse.
    let checked = super::replay::preflight(&req)?;
    let given = given_ncu(a)?;
    let (inst, l) = (&checked.inst, &checked.launch);
    let mut report = inst.files.replay_output(
        &inst.descriptor,
        l.grid,
        l.block,
        l.shared_mem,
        a.output_dir.as_deref(),
    );
    // A candidate's report beside the recorded kernel's, not over it.
    report.set_extension(if a.candidate.is_some() {
        "candidate.ncu-rep"
    } else {
        "ncu-rep"
    });
    refuse_link(&report)?;
    // What the input gets wrong (exit 2) is said above; then the driver, the more basic cause
    // of the two the machine may lack: without it ncu is no use, so "no driver" comes before
    // "ncu not found".
    rr_engine::replay::driver_usable()?;
    let ncu = match given {
        Some(p) => p,
        None => found_ncu()?,
    };
    // A report left by an earlier run must not pass for this one's.
    let earlier = modified(&report);
    let exe = std::env::current_exe().map_err(|e| {
        Error::invalid(format!(
            "cannot find rr-tui's own executable: {}",
            io_reason(&e)
        ))
    })?;
    let mut cmd = Command::new(&ncu);
    ncu_args(&mut cmd, a, &inst.descriptor.name, &report);
    // ncu's target: `rr-tui job`, the replay job in its environment (ncu passes the
    // environment on to the program it profiles).
    cmd.arg(&exe)
        .arg("job")
        .env(rr_engine::job::JOB_ENV, replay_job(&req)?);
    if text {
        output::error_line(&format!(
            "[rr-tui] Profiling {} with {} (one repetition; ncu replays the kernel once per pass)…",
            rr_format::demangle(&inst.descriptor.name),
            ncu.display()
        ));
    }
    let limit =
        std::time::Duration::try_from_secs_f64(a.timeout).unwrap_or(std::time::Duration::MAX);
    let ran = run_ncu(cmd, limit, &|line: &str| {
        if text {
            output::error_line(&format!("[rr-tui] {line}"));
        }
        progress(line);
    })?;
    if ran.timed_out {
        return Err(Error::Failed(format!(
            "ncu did not finish within {} s (--timeout): it and the replay under it were stopped",
            a.timeout
        )));
    }
    if !report.is_file() || modified(&report) == earlier {
        return Err(Error::Failed(explain_failure(&ran)));
    }
    let page = import_raw(&ncu, &report, limit, &|line| {
        if text {
            output::error_line(&format!("[rr-tui] {line}"));
        }
        progress(line);
    })?;
    let k = first_kernel(&page, &report, &ran)?;
    let result = ProfileResult {
        descriptor: a.descriptor.display().to_string(),
        report: report.display().to_string(),
        ncu: ncu.display().to_string(),
        grid: l.grid,
        block: l.block,
        shared_mem: l.shared_mem,
        candidate: a
            .candidate
            .as_ref()
            .map(|c| visible(&c.path.display().to_string()).into_owned()),
        profile: Profile::from_raw(&k),
    };
    if a.output == ProfileOutput::Json {
        output::json(&result);
    } else if text {
        output::lines(describe(&result, &report));
    }
    Ok(result)
}

/// `--ncu`'s executable, checked; `None` when not given.
fn given_ncu(a: &ProfileJob) -> Result<Option<PathBuf>> {
    let Some(p) = &a.ncu else {
        return Ok(None);
    };
    let shown = visible(&p.display().to_string()).into_owned();
    if rr_engine::machine::is_executable_file(p) {
        return Ok(Some(p.clone()));
    }
    Err(Error::invalid(if p.is_file() {
        format!(
            "--ncu {shown}: not executable (make it so with chmod +x, or give the ncu executable)"
        )
    } else if p.exists() {
        format!("--ncu {shown}: not a file (give the ncu executable)")
    } else {
        format!("--ncu {shown}: no such file")
    }))
}

/// The ncu found on the machine.
fn found_ncu() -> Result<PathBuf> {
    profile::find_ncu().ok_or_else(|| {
        // A file named ncu that cannot run is passed over, as the shell does: named here.
        let passed_over = profile::ncu_not_executable()
            .map(|p| format!(" ({} is not executable)", visible(&p.display().to_string())))
            .unwrap_or_default();
        Error::Failed(format!(
            "Nsight Compute (ncu) was not found on PATH, in CUDA_HOME, /usr/local/cuda or \
             /opt/nvidia/nsight-compute{passed_over}: install it with the CUDA toolkit, or \
             name it with --ncu PATH"
        ))
    })
}

/// ncu's own arguments, up to the replay it runs: the one repetition of `kernel` (or the
/// candidate's), the sections and metrics, the report written to `report`.
fn ncu_args(cmd: &mut Command, a: &ProfileJob, kernel: &str, report: &Path) {
    if a.candidate.is_some() {
        cmd.args(["--nvtx", "--nvtx-include", CANDIDATE_RANGE]);
    } else {
        cmd.args(["--nvtx", "--nvtx-include", RANGE])
            .args(["--kernel-name-base", "mangled", "--kernel-name"])
            .arg(format!("regex:^{}$", regex_escape(kernel)));
    }
    cmd.args(["--launch-count", "1", "--clock-control", "none"]);
    if a.sections.is_empty() {
        cmd.args(["--set", a.set.name()]);
    }
    for s in a
        .sections
        .iter()
        .map(String::as_str)
        .chain(profile::SECTIONS)
    {
        cmd.args(["--section", s]);
    }
    cmd.arg("--metrics")
        .arg(profile::METRICS.join(","))
        .arg("-f")
        .arg("-o")
        .arg(report.with_extension(""));
}

/// The replay job ncu's target runs, as [`rr_engine::job::JOB_ENV`]'s value.
fn replay_job(req: &rr_engine::replay::ReplayRequest) -> Result<std::ffi::OsString> {
    rr_engine::job::env_value(req).map_err(|e| Error::invalid(format!("the replay under ncu: {e}")))
}

/// The kernel ncu profiled, from its raw page of `report`: ncu's own output that cannot be
/// read is ncu's failure, not the user's input.
fn first_kernel(page: &str, report: &Path, ran: &Ran) -> Result<raw::RawKernel> {
    let kernels =
        raw::parse(page).map_err(|e| Error::Failed(format!("{}: {e}", report.display())))?;
    kernels.into_iter().next().ok_or_else(|| {
        Error::Failed(format!(
            "{}: ncu profiled no kernel{}",
            report.display(),
            ran.replay_error
                .as_ref()
                .map(|e| format!(" (the replay failed: {e})"))
                .unwrap_or_default()
        ))
    })
}

/// When `path` was last written, if it exists.
fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// `report` must not be a link: ncu would write through it.
fn refuse_link(report: &Path) -> Result<()> {
    match std::fs::symlink_metadata(report) {
        Ok(m) if !m.file_type().is_file() => Err(Error::invalid(format!(
            "{}: exists and is not a regular file; not overwritten (use --output-dir)",
            report.display()
        ))),
        _ => Ok(()),
    }
}

/// ncu's `regex:` takes ECMAScript-like patterns: escape everything that is not a word
/// character.
fn regex_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len() * 2);
    for c in name.chars() {
        if !(c.is_ascii_alphanumeric() || c == '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// What a run of ncu said: its own `==ERROR==`/`==WARNING==` lines and the replay's error.
#[derive(Default)]
struct Ran {
    ncu_errors: Vec<String>,
    replay_error: Option<String>,
    status: Option<i32>,
    /// Stopped at the time limit.
    timed_out: bool,
}

/// Run ncu over the replay (bounded, drained, signals passed on: [`child`]); `progress` hears
/// each of ncu's passes, and what its processes do when it is silent.
fn run_ncu(cmd: Command, limit: Duration, progress: &dyn Fn(&str)) -> Result<Ran> {
    let mut ran = Ran::default();
    let lines = std::cell::RefCell::new(Vec::new());
    let finished = child::run(
        cmd,
        limit,
        0,
        &|line| {
            // ncu's passes, as they come: a large kernel's take a while.
            if line.starts_with("==PROF== Profiling") {
                progress(&visible(line));
            }
            lines.borrow_mut().push(line.to_string());
        },
        progress,
    )?;
    for line in lines
        .into_inner()
        .iter()
        .map(String::as_str)
        .chain(finished.stderr.lines())
    {
        take_line(&mut ran, line);
    }
    ran.status = finished.status;
    ran.timed_out = finished.timed_out;
    Ok(ran)
}

/// Skip to the end of the current line without holding it.
fn take_line(ran: &mut Ran, line: &str) {
    if line.starts_with("==ERROR==") || line.starts_with("==WARNING==") {
        ran.ncu_errors.push(visible(line).into_owned());
    } else if let Ok(Tagged {
        event: Event::Error { message, .. },
        ..
    }) = serde_json::from_str::<Tagged>(line)
    {
        ran.replay_error = Some(message);
    }
}

/// One line on why no report came.
fn explain_failure(ran: &Ran) -> String {
    if ran
        .ncu_errors
        .iter()
        .any(|l| l.contains("ERR_NVGPUCTRPERM"))
    {
        return "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): an \
                administrator must allow it (NVreg_RestrictProfilingToAdminUsers=0), or run as root"
            .into();
    }
    if let Some(e) = &ran.replay_error {
        return format!("the replay under ncu failed: {e}");
    }
    let said = ran
        .ncu_errors
        .iter()
        .find(|l| l.starts_with("==ERROR=="))
        .or(ran.ncu_errors.first());
    match said {
        Some(l) => format!("ncu wrote no report: {l}"),
        None => format!(
            "ncu wrote no report (exit status {}): the kernel was not launched in the first repetition's NVTX range",
            ran.status.map(|s| s.to_string()).unwrap_or_else(|| "unknown".into())
        ),
    }
}

/// The raw page of `report`, in base units, bounded by the same time limit as the profiling.
fn import_raw(
    ncu: &Path,
    report: &Path,
    limit: Duration,
    progress: &dyn Fn(&str),
) -> Result<String> {
    let mut cmd = Command::new(ncu);
    cmd.args(["--import"])
        .arg(report)
        .args(["--csv", "--page", "raw", "--print-units", "base"]);
    let finished = child::run(cmd, limit, raw::MAX_RAW_BYTES, &|_| {}, progress)
        .map_err(|e| Error::Failed(format!("ncu --import {}: {e}", report.display())))?;
    if finished.timed_out {
        return Err(Error::Failed(format!(
            "ncu --import {} did not finish within the time limit (--timeout): it was stopped",
            report.display()
        )));
    }
    if finished.stdout.len() > raw::MAX_RAW_BYTES {
        return Err(Error::invalid(format!(
            "{}: the raw page is over {} MiB",
            report.display(),
            raw::MAX_RAW_BYTES >> 20
        )));
    }
    Ok(String::from_utf8_lossy(&finished.stdout).into_owned())
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} %")).unwrap_or_else(|| "–".into())
}

fn bytes(v: Option<f64>) -> String {
    v.map(|v| humansize::format_size(v.max(0.0) as u64, humansize::DECIMAL))
        .unwrap_or_else(|| "–".into())
}

/// The text summary.
pub(crate) fn describe(r: &ProfileResult, report: &Path) -> Vec<String> {
    let p = &r.profile;
    let dims = |v: [u32; 3]| format!("{}×{}×{}", v[0], v[1], v[2]);
    let mut out = vec![
        format!(
            "Profile of {} (grid {}, block {}{}); the full report: {} (ncu-ui opens it)",
            rr_format::demangle(&p.kernel),
            dims(r.grid),
            dims(r.block),
            r.candidate
                .as_ref()
                .map(|c| format!("; the A/B candidate {c}"))
                .unwrap_or_default(),
            visible(&report.display().to_string())
        ),
        format!(
            "  duration          {}",
            p.duration_ns
                .map(rr_engine::replay::stats::ns_text)
                .unwrap_or_else(|| "–".into())
        ),
        format!(
            "  speed of light    compute (SM) {}, memory {}, DRAM {} of peak",
            pct(p.sm_throughput_pct),
            pct(p.memory_throughput_pct),
            pct(p.dram_throughput_pct)
        ),
        format!(
            "  occupancy         achieved {} of a theoretical {}{}",
            pct(p.achieved_occupancy_pct),
            pct(p.theoretical_occupancy_pct),
            match (&p.occupancy_limiter, p.blocks_per_sm_limit) {
                (Some(l), Some(n)) => format!(", limited by {l} ({n:.0} blocks per SM)"),
                _ => String::new(),
            }
        ),
        format!(
            "  registers         {} per thread; {} waves per SM",
            p.registers_per_thread
                .map(|r| format!("{r:.0}"))
                .unwrap_or_else(|| "–".into()),
            p.waves_per_sm
                .map(|w| format!("{w:.2}"))
                .unwrap_or_else(|| "–".into())
        ),
        format!(
            "  DRAM              {} read, {} written",
            bytes(p.dram_read_bytes),
            bytes(p.dram_write_bytes)
        ),
        format!(
            "  hit rates         L1 {}, L2 {}",
            pct(p.l1_hit_pct),
            pct(p.l2_hit_pct)
        ),
    ];
    if !p.stalls.is_empty() {
        let s: Vec<String> = p
            .stalls
            .iter()
            .map(|(r, v)| format!("{r} {v:.1}"))
            .collect();
        out.push(format!(
            "  warp stalls       {} (cycles per issued instruction)",
            s.join(", ")
        ));
    }
    match &p.roofline {
        Some(r) => {
            out.push(format!(
                "  roofline ({})    {:.3} FLOP/byte, {:.1} GFLOP/s: {}-bound (ridge at {:.1} FLOP/byte), {:.1} % of the roof (peaks {:.0} GFLOP/s, {:.0} GB/s)",
                r.precision,
                r.intensity,
                r.achieved_gflops,
                r.bound,
                r.ridge,
                r.of_roof * 100.0,
                r.peak_gflops,
                r.peak_gbytes_per_s
            ));
            out.extend(
                profile::roofline_chart(r, 60, 12)
                    .into_iter()
                    .map(|l| format!("    {l}")),
            );
        }
        None => out.push(
            "  roofline          – (no floating-point work or no DRAM traffic measured)".into(),
        ),
    }
    if !p.missing.is_empty() {
        out.push(format!(
            "  not reported by this ncu: {}",
            p.missing.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_escaped_for_ncus_regex() {
        assert_eq!(regex_escape("rr_saxpy"), "rr_saxpy");
        assert_eq!(regex_escape("_Z3fooPfi"), "_Z3fooPfi");
        assert_eq!(regex_escape("a.b(c)*"), "a\\.b\\(c\\)\\*");
    }

    #[test]
    fn failures_say_why() {
        let mut r = Ran::default();
        take_line(
            &mut r,
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission",
        );
        assert!(explain_failure(&r).contains("performance counters"));
        let mut r = Ran::default();
        take_line(
            &mut r,
            r#"{"run":1,"event":"error","kind":"fault","message":"boom"}"#,
        );
        assert!(
            explain_failure(&r).contains("boom"),
            "{}",
            explain_failure(&r)
        );
        assert!(explain_failure(&Ran::default()).contains("NVTX range"));
    }
}
