//! The tuning form's settings: the axes, the search and the timing of a sweep, as text and
//! choices. Every text field is checked by the parser `rr-tui tune` itself uses (the engine's
//! axis parsers, the tolerance parser), so the explorer's form and the config file's `[tune]`
//! keys accept exactly what the command accepts; the settings make the sweep's [`TuneJob`]
//! directly ([`TuneSettings::job`]). No terminal here: the explorer's form
//! (`tui::app::screens::tune::form`) adds the cursor and the field being edited.

use std::path::PathBuf;

use rr_engine::diff::Comparison;
use rr_engine::replay::timing::NoiseTarget;
use rr_engine::replay::Verify;
use rr_tune::defines::{DefineAxis, Defines, GeometryExpr};
use rr_tune::job::{SweepTiming, TuneJob, SAMPLES};
use rr_tune::space::{self, GridChoice, MAX_CONFIGS};
use rr_tune::{Objective, StrategyKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Compile-time tuning: the kernel's CUDA C++ source (`--source`).
    Source,
    /// Its define axes, `TILE=1,2,4; UNROLL=1..8*2` (`--define` each).
    Defines,
    Grid,
    Block,
    SharedMem,
    Registers,
    Strategy,
    Budget,
    Samples,
    Cache,
    Verify,
    Limits,
    Devices,
    TimeLimit,
    Seed,
    /// What the sweep minimises, and whether energy is measured (`--objective`, `--energy`).
    Objective,
}

impl Field {
    /// In the order the form shows them (the axes, then how to search and measure).
    pub const ALL: [Field; 16] = [
        Field::Grid,
        Field::Block,
        Field::SharedMem,
        Field::Registers,
        Field::Limits,
        Field::Devices,
        Field::Verify,
        Field::Strategy,
        Field::Objective,
        Field::Budget,
        Field::TimeLimit,
        Field::Seed,
        Field::Samples,
        Field::Cache,
        Field::Source,
        Field::Defines,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Field::Grid => "grid",
            Field::Block => "block",
            Field::SharedMem => "shared mem",
            Field::Registers => "registers",
            Field::Strategy => "strategy",
            Field::Budget => "budget",
            Field::Samples => "samples",
            Field::Cache => "cache",
            Field::Verify => "verify",
            Field::Limits => "limits",
            Field::Devices => "GPUs",
            Field::TimeLimit => "time limit",
            Field::Seed => "seed",
            Field::Source => "source",
            Field::Defines => "defines",
            Field::Objective => "objective",
        }
    }

    /// The flags of `rr-tui tune` the field sets: a refusal naming one is the field's.
    fn flags(self) -> &'static [&'static str] {
        match self {
            Field::Grid => &["--grid"],
            Field::Block => &["--block"],
            Field::SharedMem => &["--shared-mem"],
            Field::Registers => &["--registers"],
            Field::Strategy => &["--strategy"],
            Field::Budget => &["--budget"],
            Field::Samples => &["--samples"],
            Field::Cache => &["--cold", "--hot"],
            Field::Verify => &["--tolerance", "--no-verify"],
            Field::Limits => &["--ignore-limits"],
            Field::Devices => &["--devices", "--simulate"],
            Field::TimeLimit => &["--time-limit"],
            Field::Seed => &["--seed"],
            Field::Source => &["--source"],
            Field::Defines => &["--define"],
            Field::Objective => &["--objective", "--energy"],
        }
    }

    /// Choices cycle on Enter; the other fields are typed.
    pub fn is_choice(self) -> bool {
        matches!(
            self,
            Field::Strategy | Field::Cache | Field::Limits | Field::Objective
        )
    }

    /// What the field holds when it is empty.
    fn empty_means(self) -> &'static str {
        match self {
            Field::Grid | Field::Block | Field::SharedMem => "recorded",
            Field::Registers => "as compiled",
            Field::Budget => "all",
            Field::Samples => "adaptive",
            Field::Verify => "bytes",
            Field::Devices => "recorded",
            Field::TimeLimit => "none",
            Field::Seed => "random",
            Field::Source => "the recorded image",
            Field::Defines => "none (e.g. TILE=1,2,4)",
            Field::Strategy | Field::Cache | Field::Limits | Field::Objective => "",
        }
    }

    /// Check `text` as this field's value: a short description of what it means, or why it
    /// cannot be used (the parsers' own messages).
    pub fn check(self, text: &str) -> Result<String, String> {
        let text = text.trim();
        let values = |n: usize| format!("{n} value{}", if n == 1 { "" } else { "s" });
        if text.is_empty() {
            return Ok(self.empty_means().to_string());
        }
        match self {
            Field::Grid | Field::Block if GeometryExpr::is_expression(text) => {
                GeometryExpr::parse(text).map(|_| "in terms of the defines, per variant".into())
            }
            Field::Grid => match space::parse_grid(text)?.as_slice() {
                [GridChoice::Cover] => Ok("the recorded threads for each block".into()),
                v => Ok(values(v.len())),
            },
            Field::Block => Ok(values(space::parse_dims(text)?.len())),
            Field::SharedMem => Ok(values(space::parse_scalars(text, true)?.len())),
            Field::Registers => Ok(values(space::parse_registers(text)?.len())),
            // `tune --budget`'s own parser: the same range and message.
            Field::Budget => crate::cli::parse_budget(&text.replace('_', ""))
                .map(|n| format!("at most {n} configuration(s)")),
            Field::Samples => match parse_samples(text)? {
                None => {
                    let t = NoiseTarget::default();
                    Ok(format!(
                        "until noise < {} %, {}+ samples, ≤ {} s",
                        t.max_noise.unwrap_or(0.0) * 100.0,
                        t.min_samples,
                        t.timeout
                    ))
                }
                Some(n) => Ok(format!("{n} per configuration")),
            },
            Field::Verify => match parse_verify(text)? {
                None => Ok("not verified".into()),
                Some(None) => Ok("byte for byte".into()),
                Some(Some(c)) => Ok(c.describe()),
            },
            // `tune`'s own parsers: the same ranges and messages. `simulate FILE` answers from a
            // finished sweep instead of GPUs (`tune --simulate`): a regular file here, and
            // `tune`'s own checks of it on a worker when the sweep starts.
            Field::Devices => match simulate_path(text)? {
                Some(p) => rr_format::fsio::regular_metadata(std::path::Path::new(p))
                    .map(|_| {
                        "no GPU: every answer from that finished sweep (tune --simulate)".into()
                    })
                    .map_err(|e| e.to_string()),
                None => crate::cli::parse_devices(text).map(|d| {
                    let list: Vec<String> = d.0.iter().map(|g| format!("GPU {g}")).collect();
                    list.join(", ")
                }),
            },
            Field::TimeLimit => {
                crate::cli::positive_f64(text).map(|t| format!("no new configuration after {t} s"))
            }
            Field::Seed => text
                .parse::<u64>()
                .map(|n| format!("seed {n}"))
                .map_err(|_| {
                    format!(
                        "{}: expected a number from 0 to {}",
                        rr_format::text::quoted(text),
                        u64::MAX
                    )
                }),
            // A regular file; `tune`'s own checks read it (on a worker) when the sweep starts.
            Field::Source => rr_format::fsio::regular_metadata(std::path::Path::new(text))
                .map(|_| "variants compiled with NVRTC".into())
                .map_err(|e| e.to_string()),
            Field::Defines => {
                let d = parse_defines(text)?;
                Ok(format!("{} variant(s)", d.variants()))
            }
            Field::Strategy | Field::Cache | Field::Limits | Field::Objective => Ok(String::new()),
        }
    }
}

/// The GPUs field's `simulate FILE` (the file), None for a list of GPUs.
fn simulate_path(text: &str) -> Result<Option<&str>, String> {
    let Some(rest) = text.trim().strip_prefix("simulate") else {
        return Ok(None);
    };
    match rest.trim() {
        "" => Err("simulate FILE: name a finished sweep's --json-out file".into()),
        _ if !rest.starts_with(char::is_whitespace) => Ok(None),
        path => Ok(Some(path)),
    }
}

/// The form's define axes: `tune --define`'s syntax, axes separated by `;` or spaces.
fn parse_defines(text: &str) -> Result<Defines, String> {
    let axes = text
        .split(|c: char| c == ';' || c.is_whitespace())
        .filter(|a| !a.is_empty())
        .map(DefineAxis::parse)
        .collect::<Result<Vec<_>, _>>()?;
    Defines::new(axes)
}

/// A positive count (`1000` or `1_000`).
fn parse_count(text: &str) -> Option<u64> {
    text.replace('_', "").parse::<u64>().ok().filter(|&n| n > 0)
}

/// `adaptive` (None) or a fixed number of samples.
fn parse_samples(text: &str) -> Result<Option<u32>, String> {
    if text.is_empty() || text.eq_ignore_ascii_case("adaptive") {
        return Ok(None);
    }
    // The command line's limit, so the form never builds a job `tune` refuses.
    parse_count(text)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| SAMPLES.contains(n))
        .map(Some)
        .ok_or_else(|| {
            format!(
                "{}: expected `adaptive` or a number of samples from {} to {}",
                rr_format::text::quoted(text),
                SAMPLES.start(),
                SAMPLES.end()
            )
        })
}

/// `off` (None), `bytes` (Some(None)) or a typed comparison.
fn parse_verify(text: &str) -> Result<Option<Option<Comparison>>, String> {
    match text {
        "" | "bytes" => Ok(Some(None)),
        "off" => Ok(None),
        spec => Comparison::parse_spec(spec)
            .map(|c| Some(Some(c)))
            .map_err(|e| format!("{e} (or `bytes`, `off`)")),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TuneSettings {
    pub grid: String,
    pub block: String,
    pub shared_mem: String,
    pub registers: String,
    pub strategy: StrategyKind,
    pub budget: String,
    pub samples: String,
    pub cold: bool,
    pub verify: String,
    /// Configurations outside the recorded limits are tried too (`--ignore-limits`).
    pub ignore_limits: bool,
    pub devices: String,
    pub time_limit: String,
    pub seed: String,
    pub source: String,
    pub defines: String,
    /// What the sweep minimises, and whether energy is measured beside time.
    pub objective: Objective,
    pub energy: bool,
}

impl Default for TuneSettings {
    /// What `tune` itself recommends first: powers of two of the block, the grid covering the
    /// recorded threads, every configuration, cold adaptive sampling, verified byte for byte.
    fn default() -> TuneSettings {
        TuneSettings {
            grid: "cover".into(),
            block: "32..1024*2".into(),
            shared_mem: String::new(),
            registers: String::new(),
            strategy: StrategyKind::Exhaustive,
            budget: String::new(),
            samples: "adaptive".into(),
            cold: true,
            verify: "bytes".into(),
            ignore_limits: false,
            devices: String::new(),
            time_limit: String::new(),
            seed: String::new(),
            source: String::new(),
            defines: String::new(),
            objective: Objective::Time,
            energy: false,
        }
    }
}

impl TuneSettings {
    /// The field's text (choices: their name).
    pub fn text(&self, f: Field) -> String {
        match f {
            Field::Grid => self.grid.clone(),
            Field::Block => self.block.clone(),
            Field::SharedMem => self.shared_mem.clone(),
            Field::Registers => self.registers.clone(),
            Field::Strategy => self.strategy.name().into(),
            Field::Budget => self.budget.clone(),
            Field::Samples => self.samples.clone(),
            Field::Cache => if self.cold { "cold" } else { "hot" }.into(),
            Field::Verify => self.verify.clone(),
            Field::Limits => if self.ignore_limits {
                "ignored"
            } else {
                "recorded"
            }
            .into(),
            Field::Devices => self.devices.clone(),
            Field::TimeLimit => self.time_limit.clone(),
            Field::Seed => self.seed.clone(),
            Field::Source => self.source.clone(),
            Field::Defines => self.defines.clone(),
            Field::Objective => match (self.objective, self.energy) {
                (Objective::Time, true) => "time (+ energy)".into(),
                (o, _) => o.name().into(),
            },
        }
    }

    /// What the form shows for the field: its text, or what an empty one means.
    pub fn shown(&self, f: Field) -> (String, bool) {
        let t = self.text(f);
        if t.trim().is_empty() {
            (f.empty_means().to_string(), false)
        } else {
            (t, true)
        }
    }

    pub(crate) fn set(&mut self, f: Field, text: String) {
        match f {
            Field::Grid => self.grid = text,
            Field::Block => self.block = text,
            Field::SharedMem => self.shared_mem = text,
            Field::Registers => self.registers = text,
            Field::Budget => self.budget = text,
            Field::Samples => self.samples = text,
            Field::Verify => self.verify = text,
            Field::Devices => self.devices = text,
            Field::TimeLimit => self.time_limit = text,
            Field::Seed => self.seed = text,
            Field::Source => self.source = text,
            Field::Defines => self.defines = text,
            Field::Strategy | Field::Cache | Field::Limits | Field::Objective => {}
        }
    }

    /// Set a field from its text as the form shows it ([`TuneForm::text`]): a typed field
    /// checked by its parser (the one the form's editing and `rr-tui tune` use), a choice by its
    /// name. The config file's `[tune]` keys come through here, so they accept exactly what the
    /// form and the command accept.
    pub fn set_text(&mut self, f: Field, text: &str) -> Result<(), String> {
        let text = text.trim();
        let expected = |names: &str| format!("{}: expected {names}", rr_format::text::quoted(text));
        match f {
            Field::Strategy => self.strategy = crate::cli::parse_strategy(text)?,
            Field::Cache => {
                self.cold = match text {
                    "cold" => true,
                    "hot" => false,
                    _ => return Err(expected("cold or hot")),
                }
            }
            Field::Limits => {
                self.ignore_limits = match text {
                    "recorded" => false,
                    "ignored" => true,
                    _ => return Err(expected("recorded or ignored")),
                }
            }
            // Its text joins two settings (objective and energy): chosen on the form only.
            Field::Objective => return Err("the objective is chosen on the form".into()),
            _ => {
                f.check(text)?;
                self.set(f, text.to_string());
            }
        }
        Ok(())
    }

    /// Defines without a source (the rule `rr-tui tune` applies to `--define`): why the sweep
    /// would be refused, if it would.
    fn source_problem(&self) -> Result<(), String> {
        self.defines_problem(&self.defines)
    }

    /// Why these `defines` would refuse the sweep with this form's source, if they would.
    fn defines_problem(&self, defines: &str) -> Result<(), String> {
        rr_tune::job::source_flags_problem(
            !self.source.trim().is_empty(),
            &[("--define", !defines.trim().is_empty())],
        )
    }

    /// What `text` means as `field` of this form ([`Field::check`]). Defines without a source
    /// are never counted as variants: what is said is why the sweep would refuse them (typed
    /// values are still taken, as the source may be given next).
    pub fn check(&self, field: Field, text: &str) -> Result<String, String> {
        let meaning = field.check(text)?;
        match field {
            Field::Defines => Ok(self.defines_problem(text).err().unwrap_or(meaning)),
            _ => Ok(meaning),
        }
    }

    /// The short meaning a field's row shows beside its value, if any: none beside defines the
    /// sweep would refuse (the info line says why).
    pub fn summary(&self, field: Field) -> Option<String> {
        let text = self.text(field);
        let refused = field == Field::Defines && self.defines_problem(&text).is_err();
        field
            .check(&text)
            .ok()
            .filter(|s| !refused && !s.is_empty() && !field.is_choice())
    }

    /// How many configurations the axes span, or why the sweep would be refused.
    pub fn space_size(&self) -> Result<u64, String> {
        self.source_problem()?;
        let count = |t: &str, parse: &dyn Fn(&str) -> Result<usize, String>| match t.trim() {
            "" => Ok(1),
            // Geometry in terms of the defines: one value per variant.
            t if GeometryExpr::is_expression(t) => Ok(1),
            t => parse(t),
        };
        let grid = count(&self.grid, &|t| space::parse_grid(t).map(|v| v.len()))?;
        let block = count(&self.block, &|t| space::parse_dims(t).map(|v| v.len()))?;
        let variants = parse_defines(&self.defines)?.variants();
        let shared = count(&self.shared_mem, &|t| {
            space::parse_scalars(t, true).map(|v| v.len())
        })?;
        let registers = count(&self.registers, &|t| {
            space::parse_registers(t).map(|v| v.len())
        })?;
        let n = [variants, grid, block, shared, registers]
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n as u64))
            .filter(|&n| n <= MAX_CONFIGS);
        n.ok_or_else(|| {
            format!(
                "the axes span more than {MAX_CONFIGS} configurations; narrow them or sample with the random strategy and a budget"
            )
        })
    }

    /// The sweep of `descriptor` the form describes, or the first field that does not parse
    /// and why. Checked as `rr-tui tune` checks its flags ([`TuneJob::check`]): the form never
    /// sends what the command refuses.
    pub fn job(&self, descriptor: PathBuf, run_id: u64) -> Result<TuneJob, (Field, String)> {
        for f in Field::ALL {
            f.check(&self.text(f)).map_err(|e| (f, e))?;
        }
        self.source_problem().map_err(|e| (Field::Defines, e))?;
        self.space_size().map_err(|e| (Field::Block, e))?;
        let axis = |t: &str| Some(t.trim().to_string()).filter(|t| !t.is_empty());
        let verify = parse_verify(self.verify.trim()).map_err(|e| (Field::Verify, e))?;
        let simulate = simulate_path(&self.devices)
            .ok()
            .flatten()
            .map(PathBuf::from);
        let simulated = simulate.is_some();
        let job = TuneJob {
            grid: axis(&self.grid),
            block: axis(&self.block),
            shared_mem: axis(&self.shared_mem),
            registers: axis(&self.registers),
            ignore_limits: self.ignore_limits,
            strategy: self.strategy,
            budget: crate::cli::parse_budget(&self.budget.trim().replace('_', "")).ok(),
            time_limit: crate::cli::positive_f64(self.time_limit.trim()).ok(),
            seed: self.seed.trim().parse().ok(),
            devices: crate::cli::parse_devices(self.devices.trim())
                .ok()
                .map(|d| d.0),
            simulate,
            samples: parse_samples(self.samples.trim()).map_err(|e| (Field::Samples, e))?,
            // A simulated sweep measures nothing and `tune --simulate` warns of every timing flag
            // given: cold, `tune`'s own default, is then left unsaid, so that only a choice the
            // user made (hot) is said to have no effect.
            timing: SweepTiming {
                cold: match (self.cold, simulated) {
                    (false, _) => Some(false),
                    (true, false) => Some(true),
                    (true, true) => None,
                },
                ..SweepTiming::default()
            },
            verify: match verify {
                None => Verify::No,
                Some(None) => Verify::Bytes,
                Some(Some(c)) => Verify::Typed(c),
            },
            // A legacy record's missing pieces come from the replay screen (I, A): `start_tune`.
            events: true,
            run_id,
            source: axis(&self.source).map(PathBuf::from),
            defines: parse_defines(&self.defines)
                .map_err(|e| (Field::Defines, e))?
                .axes,
            objective: self.objective,
            energy: self.energy,
            ..TuneJob::new(descriptor)
        };
        job.check().map_err(|e| (Field::of_refusal(&e), e))?;
        Ok(job)
    }
}

impl Field {
    /// The field whose flag a refusal of the sweep names first (the grid when none).
    fn of_refusal(message: &str) -> Field {
        Field::ALL
            .into_iter()
            .filter_map(|f| {
                f.flags()
                    .iter()
                    .filter_map(|flag| message.find(flag))
                    .min()
                    .map(|at| (at, f))
            })
            .min_by_key(|&(at, _)| at)
            .map_or(Field::Grid, |(_, f)| f)
    }
}

#[cfg(test)]
#[path = "tune_tests.rs"]
mod tests;
