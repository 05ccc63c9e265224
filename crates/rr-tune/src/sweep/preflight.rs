//! What `tune` checks of its arguments and the instance before it looks for a GPU, and the
//! report a sweep starts from. The explorer's tuning form runs the same checks (`preflight`,
//! `preflight_simulate`) before it starts a sweep, so it never accepts what the command refuses.

use std::path::Path;

use crate::space::{Rules, MAX_MEASURED};
use crate::trial::SourceInfo;
use crate::{Space, TuneReport};
use rr_engine::replay::candidate::{CandidateFile, CandidateSpec};
use rr_engine::replay::ReplayInstance;

use super::simulate;
use crate::job::TuneJob;
use rr_engine::{Error, Result};

/// Everything `tune` refuses before it looks for a GPU: compile-time flags without a source,
/// the instance's files, the axes against the record and the limits, verification, registers
/// without PTX, arguments outside the recorded memory under `--strict`. The explorer's tuning form runs the same checks before it
/// starts a sweep, so it never accepts what the command refuses.
pub fn preflight(a: &TuneJob) -> Result<(ReplayInstance, Space)> {
    a.check_source_flags().map_err(Error::invalid)?;
    let inst = ReplayInstance::load(a.descriptor(), &a.supplied)?;
    let space = build_space(a, &inst.descriptor)?;
    if let Some(spec) = a.source_spec() {
        if !rr_engine::replay::candidate::is_source(&spec.path) {
            return Err(Error::invalid(format!(
                "--source {}: takes CUDA C++ source to compile variants from (*.cu, *.cuh, *.cpp); \
                 a compiled image is an A/B candidate (replay --candidate)",
                rr_format::text::visible_path(&spec.path)
            )));
        }
        spec.preflight()?;
    }
    // `--list` shows what the sweep would run: it refuses what the sweep refuses.
    if let Some(s) = a.shard() {
        use crate::StrategyKind;
        if !matches!(a.strategy, StrategyKind::Exhaustive | StrategyKind::Random)
            || a.budget.is_some()
        {
            return Err(Error::invalid(format!(
                "--shard {}/{} splits exhaustive and random sweeps without --budget (an adaptive strategy needs every result: run it unsharded, or over GPUs with --devices)",
                s.k, s.n
            )));
        }
    }
    if space.len() > MAX_MEASURED && a.budget.is_none() {
        return Err(Error::invalid(format!(
            "the axes span {} configurations and a sweep measures at most {MAX_MEASURED}: add --budget N (with --strategy random, annealing or tpe), or narrow the axes",
            space.len()
        )));
    }
    inst.check_verifiable(&a.verify).map_err(|e| {
        Error::invalid(format!(
            "{e}; every configuration is verified against it: add --no-verify to sweep without"
        ))
    })?;
    if a.registers.is_some() {
        if a.source.is_some() {
            return Err(Error::invalid(
                "--registers recompiles the recorded PTX; with --source, limit registers per variant with --nvrtc-opt=-maxrregcount=N or a define used in __launch_bounds__",
            ));
        }
        check_ptx(&inst)?;
    }
    let outside = rr_format::memory::outside_words(&inst.descriptor);
    if let (true, Some(first)) = (a.strict, outside.first()) {
        return Err(Error::invalid(format!(
            "{} kernel argument(s) point outside the recorded memory ({}); --strict refuses to sweep",
            outside.len(),
            rr_format::memory::describe_outside(&inst.descriptor, first)
        )));
    }
    Ok((inst, space))
}

/// The source `a` compiles variants from (`--source`), and its text.
pub(super) fn source_text(a: &TuneJob) -> Result<Option<(CandidateSpec, String)>> {
    Ok(match a.source_spec() {
        Some(spec) => match spec.preflight()? {
            CandidateFile::Source(text) => Some((spec, text)),
            // Refused by `preflight` already (not named as source).
            CandidateFile::Image(..) => None,
        },
        None => None,
    })
}

/// The report a sweep of `a` starts with: what a sweep to resume or simulate from is checked
/// against (the same instance, variants and objective).
pub(super) fn start_report(
    a: &TuneJob,
    d: &rr_format::Descriptor,
    space: &Space,
    seed: u64,
    source: Option<&(CandidateSpec, String)>,
) -> TuneReport {
    let mut report = a.report(&d.name, space.rules.recorded, space.len(), seed);
    if let Some((spec, text)) = source {
        report.source = Some(SourceInfo {
            path: spec.path.display().to_string(),
            hash: rr_format::store::blob_id(text.as_bytes()),
            options: spec.options.clone(),
        });
        report.defines = space.defines.clone();
    }
    report
}

/// `--simulate FILE`'s checks of the sweep it answers from, against the sweep `a` asks for
/// (after [`preflight`]): the file `run` would refuse, refused. The explorer's tuning form runs
/// them before it starts a sweep, so it never starts one the command refuses.
pub fn preflight_simulate(a: &TuneJob, inst: &ReplayInstance, space: &Space) -> Result<()> {
    let Some(path) = a.simulate.as_deref() else {
        return Ok(());
    };
    let source = source_text(a)?;
    let report = start_report(a, &inst.descriptor, space, 0, source.as_ref());
    simulate::Table::load(path, &report, space).map(|_| ())
}

/// `--engine-hub`: a socket that is there (a hub that is not listening is said by the first
/// engine that tries it).
pub fn check_hub(hub: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let shown = rr_format::text::visible_path(hub);
    match std::fs::metadata(hub) {
        Ok(m) if m.file_type().is_socket() => Ok(()),
        Ok(_) => Err(Error::invalid(format!(
            "--engine-hub {shown}: not a socket (the hub, e.g. python -m rr_tui.ray, makes one and passes it)"
        ))),
        Err(e) => Err(Error::invalid(format!(
            "--engine-hub {shown}: {e} (is the hub running?)"
        ))),
    }
}

fn build_space(a: &TuneJob, d: &rr_format::Descriptor) -> Result<Space> {
    let defines = a.source.is_some().then(|| a.defines.clone());
    Space::of_axes(Rules::of(d, a.ignore_limits), &a.axes(), defines).map_err(Error::invalid)
}

/// `--registers` recompiles the image: only PTX can be.
fn check_ptx(inst: &ReplayInstance) -> Result<()> {
    let (_, info) = rr_format::image::read(&inst.image)?;
    if matches!(info.kind, rr_format::image::ImageKind::Ptx { .. }) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "--registers needs a record holding PTX; {} is {} (compiled machine code, whose registers are fixed)",
        rr_format::text::visible_path(&inst.image),
        info.kind.describe()
    )))
}
