//! Sweeps split over Slurm array tasks: `--shard K/N` measures the configurations whose index
//! is `K-1` modulo `N` (the recorded one in shard 1), and `tune merge` puts the shards' reports
//! together into the report one unsharded exhaustive sweep writes: the same rows in the same
//! order, the same best and speed-up.

use std::collections::HashSet;

use super::limits::{plausible_time, MAX_TRIALS, MIN_KERNEL_NS};
use super::space::{Rules, Space};
use super::trial::TuneReport;
use rr_engine::replay::variant::trial::Trial;

pub use super::part::{Shard, MAX_SHARDS};

/// The report one unsharded run writes, from the reports of parts `1/N` … `N/N` of one sweep
/// (each with the name it is shown by in messages), and how many configurations of the sweep no
/// part holds: refused unless `allow_missing`.
pub fn merge(
    shards: Vec<(String, TuneReport)>,
    allow_missing: bool,
) -> Result<(TuneReport, u64), String> {
    let Some((first_name, first)) = shards.first() else {
        return Err("no reports to merge".into());
    };
    let Some(n) = first.shard.map(|s| s.n) else {
        return Err(format!(
            "{first_name}: no shard of a sweep (made without --shard)"
        ));
    };
    // Read from files: held to what `--shard` accepts before anything is sized by them.
    for (name, r) in &shards {
        if let Some(s) = r
            .shard
            .filter(|s| s.k == 0 || s.k > s.n || s.n > MAX_SHARDS)
        {
            return Err(format!(
                "{name}: says it is shard {}/{}, which no run makes",
                s.k, s.n
            ));
        }
    }
    let space = sweep_space(first_name, first)?;
    let mut seen = vec![false; n as usize];
    // Each part's name, shard and skips counted beyond its rows: what it lacks is said by name.
    let mut parts = Vec::with_capacity(shards.len());
    for (name, r) in &shards {
        let s = same_sweep(name, r, first_name, first, n)?;
        if std::mem::replace(&mut seen[(s.k - 1) as usize], true) {
            return Err(format!("{name}: shard {}/{n} is given twice", s.k));
        }
        if r.energy.is_some_and(|e| !e.is_plausible()) {
            return Err(format!("{name}: its energy settings are implausible"));
        }
        check_rows(name, r, s, &space)?;
        parts.push((name.clone(), s, r.skipped_unlisted));
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(format!("shard {}/{n} is missing", k + 1));
    }
    let out = join(shards)?;
    let missing = unmeasured(&out, &space, &parts, allow_missing)?;
    Ok((out, missing))
}

/// The space the parts' sweep spanned, rebuilt from its axes as `tune` built it: every row is
/// checked against it.
fn sweep_space(name: &str, r: &TuneReport) -> Result<Space, String> {
    let defines = r.source.is_some().then(|| r.defines.axes.clone());
    let space = Space::of_axes(Rules::hardware_only(r.recorded), &r.axes, defines)
        .map_err(|e| format!("{name}: its axes are no sweep's ({e})"))?;
    if space.len() != r.space_size {
        return Err(format!(
            "{name}: its axes span {} configurations, and it says {}",
            space.len(),
            r.space_size
        ));
    }
    Ok(space)
}

/// The shard of `r` (read from `name`) when it is a part of the same split and sweep as
/// `first`.
fn same_sweep(
    name: &str,
    r: &TuneReport,
    first_name: &str,
    first: &TuneReport,
    n: u32,
) -> Result<Shard, String> {
    let Some(s) = r.shard.filter(|s| s.n == n) else {
        return Err(format!(
            "{name}: a shard of another split ({}; {first_name} is one of {n})",
            r.shard
                .map(|s| format!("one of {}", s.n))
                .unwrap_or_else(|| "unsharded".into())
        ));
    };
    let same = r.kernel == first.kernel
        && r.descriptor == first.descriptor
        && r.recorded == first.recorded
        && r.axes == first.axes
        && r.verify == first.verify
        && r.timing == first.timing
        && r.strategy == first.strategy
        && r.objective == first.objective
        && r.energy == first.energy
        && r.space_size == first.space_size
        && r.source == first.source
        && r.defines == first.defines
        && r.simulated_from.is_some() == first.simulated_from.is_some();
    if !same {
        return Err(format!(
            "{name}: shard {}/{n} of another sweep than {first_name} (instance, axes, verification, timing, strategy, objective, energy or variants differ)",
            s.k
        ));
    }
    Ok(s)
}

/// The check `tune merge` makes of each part's rows, for a whole report read back (the
/// explorer opening a sweep, `tune --simulate` answering from one): every row is a
/// configuration of the space its axes span, at its own index (or the recorded one), of its
/// part when the report is one. Refused naming the file (`name`, as shown) and the row. Times
/// are not checked here: readers that leave implausible rows out count them instead.
pub fn check_report_rows(name: &str, r: &TuneReport) -> Result<(), String> {
    let space = sweep_space(name, r)?;
    let s = r.shard.unwrap_or(Shard { k: 1, n: 1 });
    check_rows_of(name, r, s, &space, false)
}

/// What a run of part `s` can have written, row by row: the configuration at the row's index
/// in the sweep, an index of its own (or the recorded configuration, in part 1), plausible
/// times. A row that is not is refused by its file and number.
fn check_rows(name: &str, r: &TuneReport, s: Shard, space: &Space) -> Result<(), String> {
    check_rows_of(name, r, s, space, true)
}

fn check_rows_of(
    name: &str,
    r: &TuneReport,
    s: Shard,
    space: &Space,
    times: bool,
) -> Result<(), String> {
    let len = space.len();
    for (row, t) in r.trials.iter().enumerate() {
        let refuse = |why: String| format!("{name}: row {} ({}) {why}", row + 1, t.config);
        let not_own = || refuse(format!("is not a configuration of part {}/{}", s.k, s.n));
        if t.recorded && s.k != 1 {
            return Err(not_own());
        }
        if t.recorded && t.config != r.recorded {
            return Err(refuse(format!(
                "is marked as the recorded configuration, which is {}",
                r.recorded
            )));
        }
        match t.index {
            // The recorded configuration outside the space.
            None if t.recorded => {}
            None => return Err(not_own()),
            Some(i) if i >= len => {
                return Err(refuse(format!(
                    "is at index {i}, and the sweep has {len} configurations"
                )))
            }
            Some(i) if !s.owns(i) && !t.recorded => return Err(not_own()),
            Some(i) => {
                let at = space.config(i);
                if at != t.config {
                    return Err(refuse(format!(
                        "is not configuration {i} of the sweep, which is {at}"
                    )));
                }
            }
        }
        if times && t.kernel_ns.as_ref().is_some_and(|k| !plausible_time(k))
            || t.energy.is_some_and(|e| !e.is_plausible())
        {
            return Err(refuse(format!(
                "has implausible times (finite, ordered, none under {MIN_KERNEL_NS} ns: no launch takes less)"
            )));
        }
    }
    Ok(())
}

/// The parts' rows in the unsharded order, with the run's totals; each configuration once.
fn join(mut shards: Vec<(String, TuneReport)>) -> Result<TuneReport, String> {
    let (_, mut out) = shards.swap_remove(0);
    let mut devices: HashSet<(i32, String)> = out
        .devices
        .iter()
        .map(|d| (d.ordinal, d.name.clone()))
        .collect();
    for (name, r) in shards {
        out.elapsed_s = out.elapsed_s.max(r.elapsed_s);
        out.engine_start_s = out.engine_start_s.max(r.engine_start_s);
        out.configs_per_s += r.configs_per_s;
        out.skipped_unlisted = out
            .skipped_unlisted
            .checked_add(r.skipped_unlisted)
            .ok_or_else(|| format!("{name}: skipped_unlisted is implausible"))?;
        for d in r.devices {
            if devices.insert((d.ordinal, d.name.clone())) {
                out.devices.push(d);
            }
        }
        if out.trials.len() + r.trials.len() > MAX_TRIALS {
            return Err(format!("{name}: more than {MAX_TRIALS} trials in all"));
        }
        out.trials.extend(r.trials);
    }
    if !out.configs_per_s.is_finite() {
        out.configs_per_s = 0.0;
    }
    // The unsharded order: the recorded configuration first, then by index.
    out.trials
        .sort_by_key(|t: &Trial| (!t.recorded, t.index.unwrap_or(u64::MAX)));
    if out.trials.iter().filter(|t| t.recorded).count() > 1 {
        return Err("more than one part holds the recorded configuration".into());
    }
    let mut configs = HashSet::new();
    let mut indices = HashSet::new();
    for t in &out.trials {
        if !configs.insert(t.config) || t.index.is_some_and(|i| !indices.insert(i)) {
            return Err(format!("{} was measured by two parts", t.config));
        }
    }
    out.shard = None;
    out.summarise();
    Ok(out)
}

/// How many configurations of `space` no part holds, as a row or as a skip counted beyond the
/// rows (a part cut short by --time-limit or a signal, or a part file emptied): refused unless
/// `allow_missing`, naming the parts that lack them. `out`'s indices are distinct and each
/// part's own (the recorded configuration's, in part 1, counts for the part that owns it).
fn unmeasured(
    out: &TuneReport,
    space: &Space,
    parts: &[(String, Shard, u64)],
    allow_missing: bool,
) -> Result<u64, String> {
    let n = parts.first().map_or(1, |(_, s, _)| s.n);
    let mut rows = vec![0u64; n as usize];
    for i in out.trials.iter().filter_map(|t| t.index) {
        rows[(i % u64::from(n)) as usize] += 1;
    }
    let mut missing = 0u64;
    let mut short = Vec::new();
    for (name, s, skipped) in parts {
        let owned = s.count(space.len());
        let listed = rows[(s.k - 1) as usize];
        let held = listed
            .checked_add(*skipped)
            .filter(|&h| h <= owned)
            .ok_or_else(|| {
                format!(
                    "{name}: says it skipped {skipped} configurations beyond its rows, and part {}/{n} has {owned} in all ({listed} in rows)",
                    s.k
                )
            })?;
        if held < owned {
            missing += owned - held;
            short.push(format!("{name} lacks {} of its {owned}", owned - held));
        }
    }
    if missing > 0 && !allow_missing {
        const SHOWN: usize = 5;
        let mut which = short[..short.len().min(SHOWN)].join("; ");
        if short.len() > SHOWN {
            which.push_str(&format!("; {} more parts", short.len() - SHOWN));
        }
        return Err(format!(
            "{missing} of the sweep's {} configurations are in no part ({which}): run those parts again, or merge what there is with --allow-missing",
            space.len()
        ));
    }
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_with_impossible_shards_are_refused() {
        use crate::Config;
        use rr_engine::replay::timing::TimingPolicy;
        let c = Config {
            grid: [1; 3],
            block: [1; 3],
            shared_mem: 0,
            max_registers: None,
            variant: None,
        };
        for (k, n) in [(0, 3), (4, 3), (1, u32::MAX)] {
            let mut r = TuneReport::new("d".into(), "k".into(), c, TimingPolicy::fixed(1, true));
            r.shard = Some(Shard { k, n });
            assert!(merge(vec![("p.json".into(), r)], false)
                .unwrap_err()
                .contains("p.json: says it is shard"));
        }
    }
}
