//! What a sweep shows: one line per configuration as it completes and a summary (text), or
//! protocol events for the explorer's tuning screen (`--events`).

use rr_engine::replay::energy::joules_text;
use rr_engine::replay::protocol::{Event, Tagged};
use rr_engine::replay::session::SWITCH_REFUSED;
use rr_engine::replay::timing::TimingPolicy;
use rr_format::demangle;
use rr_tune::defines::Defines;
use rr_tune::space::dim;
use rr_tune::trial::{CompileStats, DeviceInfo};
use rr_tune::{Objective, Status, StrategyKind, Trial, TuneReport};

use rr_tune::shard::Shard;
use rr_tune::sweep::{Carried, Plan, SweepOutput};
use rr_tune::Space;

use crate::output;

/// How many of the best configurations the summary lists.
const TOP: usize = 5;
/// How many configurations of the Pareto front it lists.
const PARETO_SHOWN: usize = 10;

/// Said on stderr (text only) when no axis was given: a bare `tune X.json` is valid (the recorded
/// configuration's timing, verified) but rarely what was meant, and nothing else in its output
/// says why the space holds one configuration.
pub const NO_AXIS_NOTE: &str = "rr-tui: note: no axis given: only the recorded configuration is \
measured; e.g. --block 32..1024*2 --grid cover";

/// No axis (grid, block, shared memory, registers) and a space of the recorded configuration
/// alone: not a `--source` sweep, whose one variant is not the recorded image.
fn only_the_recorded(r: &TuneReport, plan: &Plan) -> bool {
    let a = &r.axes;
    let no_axis =
        a.grid.is_none() && a.block.is_none() && a.shared_mem.is_none() && a.registers.is_none();
    no_axis && r.space_size == 1 && plan.recorded_in_space
}

/// The words a sweep's text uses for what it did. A simulated sweep measures and verifies
/// nothing: it answers from another sweep's report, and says so wherever a measured one says
/// "measured" or "verified".
struct Words {
    measuring: &'static str,
    measured: &'static str,
    verified: &'static str,
    failed_to_verify: &'static str,
}

impl Words {
    fn of(r: &TuneReport) -> Words {
        match r.simulated_from {
            None => Words {
                measuring: "measuring",
                measured: "measured",
                verified: "verified",
                failed_to_verify: "failed to verify",
            },
            Some(_) => Words {
                measuring: "simulating",
                measured: "simulated",
                verified: "simulated as verified",
                failed_to_verify: "simulated as failing to verify",
            },
        }
    }
}

pub struct Printer {
    events: bool,
    /// The run id every event carries (`--run-id`: the explorer's id of this sweep).
    run: u64,
}

impl Printer {
    pub fn new(events: bool, run: u64) -> Printer {
        Printer { events, run }
    }

    fn emit(&self, event: Event) {
        output::json_line(
            &Tagged {
                run: self.run,
                event,
            }
            .to_line(),
        );
    }
}

impl SweepOutput for Printer {
    fn start(&self, r: &TuneReport, plan: &Plan) {
        if self.events {
            let strategy = r.strategy;
            self.emit(Event::Sweep {
                configs: r.space_size,
                planned: plan.planned,
                devices: plan.devices.to_vec(),
                strategy: strategy.name().into(),
                seed: Some(r.seed),
                recorded: Some(r.recorded),
                defines: r.defines.clone(),
            });
            return;
        }
        if only_the_recorded(r, plan) {
            // Once a process: `tune DIR` starts a sweep per instance with the same flags.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| output::error_line(NO_AXIS_NOTE));
        }
        if let Some(s) = r.shard {
            output::line(&format!(
                "  shard {}/{}: the configurations whose index is {} modulo {}{} (`rr-tui tune merge` joins the parts)",
                s.k,
                s.n,
                s.k - 1,
                s.n,
                if s.k == 1 { ", and the recorded one" } else { "" }
            ));
        }
        let t = &r.timing;
        let timing = timing_text(t);
        output::line(&format!("Tuning {}", demangle(&r.kernel)));
        print_space(r, plan);
        if let Some((n, why)) = plan.skipped.as_ref().filter(|(n, _)| *n > 0) {
            output::line(&format!(
                "  {n} of them break a limit and will be skipped (first: {why}; --list shows all)"
            ));
        }
        let devices = plan
            .devices
            .iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let temperature = if t.cold {
            "cold (L2 flushed before each sample)"
        } else {
            "hot"
        };
        output::line(&match (&r.simulated_from, plan.hub) {
            (Some(from), _) => format!(
                "  simulated from {from}, no GPU: its timing, {temperature}, {timing}; its verification, {}",
                r.verify
            ),
            (None, Some(hub)) => format!(
                "  timing: {temperature}, {timing}; verification: {}; {} engine(s) through the hub {}",
                r.verify,
                plan.devices.len(),
                rr_format::text::visible_path(hub)
            ),
            (None, None) => format!(
                "  timing: {temperature}, {timing}; verification: {}; GPU(s) {devices}",
                r.verify
            ),
        });
        match (&r.energy, &r.simulated_from) {
            (Some(_), Some(from)) => output::line(&format!(
                "  energy: simulated from {from}; objective: {}",
                r.objective.name()
            )),
            (Some(e), None) => output::line(&format!(
                "  energy: each verified configuration run back to back for at least {} s (NVML's energy counter, read only); objective: {}",
                e.min_seconds,
                r.objective.name()
            )),
            _ => {}
        }
        if plan.resumed > 0 {
            output::line(&format!(
                "  resumed: {} configuration(s) already measured",
                plan.resumed
            ));
        }
    }

    /// A GPU (or a hub's engine, `unit`) is ready; `carried` says whether the last instance's
    /// engine went on to this one (`tune DIR`).
    fn device(&self, d: &DeviceInfo, unit: &str, carried: Option<&Carried>) {
        let carried = carried.map(|c| match c {
            Carried::Kept(s) => (
                "switched",
                format!("engine kept from the last instance: {s}"),
            ),
            Carried::Refused(why) => (
                "warning",
                format!(
                    "a new engine: {}",
                    why.strip_prefix(SWITCH_REFUSED).unwrap_or(why)
                ),
            ),
        });
        if self.events {
            self.emit(Event::Device {
                name: d.name.clone(),
                sm: d.sm,
                ordinal: d.ordinal,
                rated_clock_mhz: Some(d.rated_clock_mhz),
            });
            if let Some((name, s)) = carried {
                self.emit(Event::Phase {
                    name: name.into(),
                    detail: format!("{unit} {}: {s}", d.ordinal),
                });
            }
        } else {
            output::line(&format!(
                "  {unit} {}: {} (sm_{}), rated SM clock {:.0} MHz",
                d.ordinal, d.name, d.sm, d.rated_clock_mhz
            ));
            if let Some((_, s)) = carried {
                output::line(&format!("    {s}"));
            }
        }
    }

    fn warning(&self, message: &str) {
        if self.events {
            self.emit(Event::Phase {
                name: "warning".into(),
                detail: message.into(),
            });
        } else {
            output::error_line(&format!("rr-tui: warning: {message}"));
        }
    }

    /// A configuration's result, as the `done`th of `planned` in `r`'s sweep.
    fn trial(&self, t: &Trial, r: &TuneReport, done: usize, planned: u64) {
        if self.events {
            self.emit(Event::Trial(Box::new(t.clone())));
            return;
        }
        let width = planned.max(done as u64).to_string().len();
        output::line(&format!(
            "[{done:>width$}/{}] {}",
            planned.max(done as u64),
            describe(t, &r.defines, r.simulated_from.is_some())
        ));
    }

    /// The end of a sweep; `notes` (what was exported) come last.
    fn summary(
        &self,
        r: &TuneReport,
        measured: u64,
        elapsed: f64,
        interrupted: bool,
        notes: &[String],
    ) {
        if self.events {
            for n in notes {
                self.emit(Event::Phase {
                    name: "note".into(),
                    detail: n.clone(),
                });
            }
            self.emit(Event::Done {
                ok: r.best.is_some(),
            });
            return;
        }
        let words = Words::of(r);
        output::line("");
        match (interrupted, &r.simulated_from) {
            // A simulated sweep is never resumed: it is run again, in seconds.
            (true, Some(_)) => output::line("Interrupted: the results so far are kept."),
            (true, None) => {
                output::line("Interrupted: the results so far are kept (--resume continues).")
            }
            (false, _) => {}
        }
        print_totals(r, &words, measured, elapsed);
        if let Some(c) = &r.compile {
            print_compile(c);
        }
        let best = r.ranking(TOP);
        let simulated = r.simulated_from.is_some();
        if best.is_empty() {
            output::line(&format!("No configuration {}.", words.verified));
            return;
        }
        print_ranking(r, &best, simulated);
        if !r.pareto.is_empty() {
            print_pareto(r, simulated);
        }
        print_best(r);
        for n in notes {
            output::line(n);
        }
    }

    fn list(&self, space: &Space, shard: Option<Shard>, simulated: bool) {
        super::list::print(space, shard, simulated)
    }
}

/// How many configurations were measured, how fast, and what each came to.
fn print_totals(r: &TuneReport, words: &Words, measured: u64, elapsed: f64) {
    let count = |s: Status| r.trials.iter().filter(|t| t.status == s).count();
    output::line(&format!(
        "{measured} configuration(s) {} in {elapsed:.2} s ({:.1} per second, after {:.2} s of engine start); {} {}, {} {}, {} invalid, {} fault(s), {} skipped",
        words.measured,
        r.configs_per_s,
        r.engine_start_s,
        count(Status::Ok),
        words.verified,
        count(Status::VerifyFailed),
        words.failed_to_verify,
        count(Status::Invalid),
        count(Status::Fault),
        count(Status::Skipped)
    ));
}

/// How compiling `--source`'s variants went, and how long the GPU waited for them.
fn print_compile(c: &CompileStats) {
    output::line(&format!(
        "Compiled {} of {} variant(s) for {} on {} thread(s) in {:.2} s ({:.1} per second; {} from the cache, {} failed to compile); the GPU waited {:.2} s for compilations ({:.1} % of its time)",
        c.compiled,
        c.variants,
        c.arch,
        c.threads,
        c.seconds,
        c.per_s,
        c.cached,
        c.failed,
        c.gpu_wait_s,
        c.gpu_idle_fraction * 100.0
    ));
}

/// The `best` configurations by the objective, best first, and whether energy's noise can
/// tell the first two apart.
fn print_ranking(r: &TuneReport, best: &[&Trial], simulated: bool) {
    output::line(&format!(
        "{} {}:",
        match r.objective {
            Objective::Time => "Fastest",
            Objective::Energy => "Most frugal",
            Objective::Edp => "Lowest energy-delay product",
        },
        best.len()
    ));
    for (i, t) in best.iter().enumerate() {
        output::line(&format!(
            "  {}. {}",
            i + 1,
            describe(t, &r.defines, simulated)
        ));
    }
    if let Some(note) = within_energy_noise(r.objective, best, simulated) {
        output::line(&note);
    }
}

/// The first [`PARETO_SHOWN`] configurations of the Pareto front, fastest first.
fn print_pareto(r: &TuneReport, simulated: bool) {
    output::line(&format!(
        "Pareto front of time against energy ({} configuration(s), fastest first):",
        r.pareto.len()
    ));
    for &i in r.pareto.iter().take(PARETO_SHOWN) {
        output::line(&format!(
            "  {}",
            describe(&r.trials[i], &r.defines, simulated)
        ));
    }
    if r.pareto.len() > PARETO_SHOWN {
        output::line(&format!(
            "  … and {} more (--csv and --json-out mark them all)",
            r.pareto.len() - PARETO_SHOWN
        ));
    }
}

/// The best configuration against the recorded one: its speed-up, and its energy when
/// measured.
fn print_best(r: &TuneReport) {
    let recorded = r.trials.iter().find(|t| t.recorded);
    let energy = match (r.best.as_ref().and_then(Trial::joules), r.energy_ratio) {
        (Some(j), Some(ratio)) if ratio > 0.0 => format!(
            "; {} per execution, {:.3}x the recorded configuration's energy",
            joules_text(j),
            1.0 / ratio
        ),
        (Some(j), _) => format!("; {} per execution", joules_text(j)),
        _ => String::new(),
    };
    let energy = match (r.objective, r.best.as_ref().and_then(|b| r.objective.of(b))) {
        (Objective::Edp, Some(v)) => format!("{energy}; EDP {}", Objective::Edp.describe(v)),
        _ => energy,
    };
    match (r.best.as_ref(), recorded.and_then(|t| t.cost()), r.speedup) {
        (Some(b), Some(rec), Some(s)) => output::line(&format!(
            "Best{}: {} at {}: {s:.3}x the recorded configuration's speed ({}){energy}",
            match r.objective {
                Objective::Time => String::new(),
                o => format!(" by {}", o.name()),
            },
            b.config.describe(&r.defines),
            ns(b.cost().unwrap_or(0.0)),
            ns(rec)
        )),
        (Some(b), _, _) => output::line(&format!(
            "Best: {} at {} ({})",
            b.config.describe(&r.defines),
            ns(b.cost().unwrap_or(0.0)),
            match r.shard {
                Some(s) if s.k != 1 => {
                    "the recorded configuration is part 1's: `tune merge` gives the speed-up"
                }
                _ => "the recorded configuration did not verify",
            }
        )),
        _ => {}
    }
}

/// How long each configuration is sampled: to a noise target, or a number of samples.
fn timing_text(t: &TimingPolicy) -> String {
    if let Some(noise) = t.target.max_noise {
        format!(
            "until noise < {} % (at least {} samples, at most {} s)",
            noise * 100.0,
            t.target.min_samples,
            t.target.timeout
        )
    } else {
        rr_engine::diff::text::plural(u64::from(t.max_samples), "sample", "samples")
    }
}

/// The header's space line: its size, how much of it is measured, by which strategy and seed,
/// for how long.
fn print_space(r: &TuneReport, plan: &Plan) {
    let (strategy, seed) = (r.strategy, r.seed);
    let words = Words::of(r);
    output::line(&format!(
        "  space: {} configuration(s){}; {} up to {} with the {} strategy{}{}",
        r.space_size,
        if plan.recorded_in_space {
            ""
        } else {
            " + the recorded one"
        },
        words.measuring,
        plan.planned,
        strategy.name(),
        match strategy {
            StrategyKind::Exhaustive => String::new(),
            _ if plan.seed_chosen => format!(" (seed {seed}; --seed {seed} repeats it)"),
            _ => format!(" (seed {seed})"),
        },
        r.time_limit_s
            .map(|t| format!(", for at most {t} s"))
            .unwrap_or_default()
    ));
}

/// By energy (or EDP), the best and the runner-up may differ by less than their energy's noise:
/// then the ranking is not to be trusted, and the line says so (and what would tell them apart:
/// measuring longer, which a simulated sweep cannot).
fn within_energy_noise(objective: Objective, best: &[&Trial], simulated: bool) -> Option<String> {
    let [first, second, ..] = best else {
        return None;
    };
    let (a, b) = (objective.of(first)?, objective.of(second)?);
    let noise = first.energy?.noise.max(second.energy?.noise);
    let apart = (b - a).abs() / a.abs().max(f64::MIN_POSITIVE);
    let remedy = match simulated {
        true => "the simulated sweep cannot tell them apart",
        false => "measure longer (--energy-seconds) to tell them apart",
    };
    (objective.needs_energy() && apart < noise).then(|| {
        format!(
            "Note: 1. and 2. differ by {:.2} %, less than their energy's noise ({:.1} %): {remedy}.",
            apart * 100.0,
            noise * 100.0
        )
    })
}

/// One configuration as a line: defines, geometry, time, noise, samples, clock, outcome (of a
/// `simulated` sweep: said to be simulated, as no GPU measured or verified it).
pub fn describe(t: &Trial, defines: &Defines, simulated: bool) -> String {
    let c = &t.config;
    let mut s = String::new();
    match c.variant {
        Some(v) if (v as usize) < defines.variants() && !defines.is_empty() => {
            s.push_str(&format!("{} ", defines.describe(v as usize)))
        }
        Some(_) => s.push_str("(source) "),
        None if !defines.is_empty() => s.push_str("(recorded image) "),
        None => {}
    }
    s.push_str(&format!(
        "grid {:<14} block {:<12} smem {:<6}",
        dim(c.grid),
        dim(c.block),
        c.shared_mem
    ));
    if let Some(r) = c.max_registers {
        s.push_str(&format!(" regs {r:<3}"));
    }
    if let Some(k) = t.kernel_ns.filter(|k| k.count > 0) {
        s.push_str(&format!(
            " {:>10} ±{:.2}% n={}",
            ns(k.median),
            t.noise().unwrap_or(0.0) * 100.0,
            k.count
        ));
        if let Some(clock) = t.clock_mhz {
            s.push_str(&format!(" {:.0} MHz", clock.median));
        }
        if t.discarded > 0 {
            s.push_str(&format!(" ({} throttled)", t.discarded));
        }
    }
    if let Some(e) = &t.energy {
        s.push_str(&format!(
            " {} {:.0} W ±{:.1}%",
            joules_text(e.joules),
            e.power_w,
            e.noise * 100.0
        ));
    }
    match (simulated, t.status) {
        (true, Status::Ok | Status::VerifyFailed) => {
            s.push_str(&format!("  simulated {}", t.status.label()))
        }
        _ => s.push_str(&format!("  {}", t.status.label())),
    }
    if t.recorded {
        s.push_str(" (recorded)");
    }
    if t.pareto {
        s.push_str(" (Pareto)");
    }
    if let Some(m) = &t.message {
        s.push_str(&format!(": {m}"));
    }
    s
}

pub use rr_engine::replay::stats::ns_text as ns;

#[cfg(test)]
mod tests {
    use super::*;
    use rr_engine::replay::stats::Stats;
    use rr_tune::trial::TrialEnergy;
    use rr_tune::Config;

    fn trial(joules: f64, noise: f64) -> Trial {
        let mut t = Trial::new(
            Config {
                grid: [1, 1, 1],
                block: [64, 1, 1],
                shared_mem: 0,
                max_registers: None,
                variant: None,
            },
            Status::Ok,
        );
        t.kernel_ns = Some(Stats::of(&[1000.0]));
        t.energy = Some(TrialEnergy {
            joules,
            power_w: 400.0,
            noise,
            windows: 8,
        });
        t
    }

    #[test]
    fn a_ranking_inside_the_energy_noise_is_called_so() {
        let (a, b, far) = (
            trial(0.2480, 0.012),
            trial(0.2482, 0.010),
            trial(0.30, 0.01),
        );
        assert!(within_energy_noise(Objective::Energy, &[&a, &b], false)
            .is_some_and(|n| n.contains("0.08 %") && n.contains("1.2 %")));
        // A simulated sweep cannot measure longer: it says so rather than advise a flag.
        assert!(within_energy_noise(Objective::Energy, &[&a, &b], true)
            .is_some_and(|n| n.contains("simulated") && !n.contains("--energy-seconds")));
        assert_eq!(
            within_energy_noise(Objective::Energy, &[&a, &far], false),
            None
        );
        assert_eq!(within_energy_noise(Objective::Time, &[&a, &b], false), None);
        assert_eq!(within_energy_noise(Objective::Energy, &[&a], false), None);
    }
}
