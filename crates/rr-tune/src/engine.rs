//! The engine side of a sweep: the commands a tuner sends to an engine process (one JSON
//! object per line on its stdin) and the measurement of one configuration through the replay
//! session. Replies are protocol events tagged with the command's id: `trial` with the result,
//! or `error` with kind `fault`, after which the process ends (its CUDA context is unusable).

use std::time::Instant;

use rr_cuda::LaunchConfig;
use rr_format::memory::MemoryMap;
use rr_format::text::visible;
use serde::{Deserialize, Serialize};

use super::space::Config;
use rr_engine::diff::Comparison;
use rr_engine::replay::energy::{self, EnergyPolicy};
use rr_engine::replay::instance::ReplayInstance;
use rr_engine::replay::launch::Launch;
use rr_engine::replay::session::{RunError, Session};
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::replay::variant::trial::{Status, Trial, TrialEnergy};
use rr_engine::replay::verify;
use rr_engine::snapshot::Snapshot;

/// One line of an engine's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Measure `config` under `policy`, verify, reply `trial` tagged with `id`.
    Measure {
        id: u64,
        config: Config,
        policy: TimingPolicy,
        /// The compiled variant the configuration runs (None: the recorded image).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variant: Option<VariantImage>,
        /// Measure its energy per execution too, for this long (after verifying).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        energy: Option<EnergyPolicy>,
    },
    /// Become the engine of another instance of the same recording, keeping on the GPU what
    /// the two share (`tune DIR`); reply `ready` tagged with `id`, or `error` and exit when the
    /// instance cannot be switched to (the tuner then starts a fresh engine for it).
    Load {
        id: u64,
        descriptor: std::path::PathBuf,
    },
    /// Finish: release the GPU and exit 0 (end of input does the same).
    Quit,
}

impl Command {
    /// The command as one line; an error when it names a path that is not UTF-8 (JSON cannot
    /// carry it).
    pub fn to_line(&self) -> Result<String, String> {
        let mut s = serde_json::to_string(self).map_err(|_| {
            "a path that is not UTF-8 cannot be sent to an engine (rename it)".to_string()
        })?;
        s.push('\n');
        Ok(s)
    }

    pub fn parse(line: &str) -> Result<Command, String> {
        serde_json::from_str(line.trim()).map_err(|e| format!("bad engine command: {e}"))
    }
}

/// A compiled variant: its image file and the kernel to bind in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantImage {
    pub path: std::path::PathBuf,
    pub kernel: String,
}

/// The environment variable a tuner sets to its process id when it starts an engine, so that
/// an engine whose tuner died before the engine could look ends at once.
pub const TUNER_PID_ENV: &str = "RR_TUI_TUNER_PID";

/// End this process when the tuner that started it dies (even by SIGKILL): an engine left
/// behind would hold its GPU, and a hung kernel would hold it for ever. A thread watches for
/// the parent to change (the orphan is handed to another process) and kills the process, hung
/// kernel or not; a parent other than the tuner named in [`TUNER_PID_ENV`] means it is gone
/// already. Not a death signal (`PR_SET_PDEATHSIG`): that fires when the *thread* that
/// started the engine ends, and `tune DIR`'s worker threads end with each instance's sweep
/// while their engines go on to the next instance.
pub fn end_with_parent() {
    let named = std::env::var(TUNER_PID_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw);
    let parent = named.or_else(rustix::process::getppid);
    let watch = move || loop {
        if rustix::process::getppid() != parent {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::KILL,
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let _ = std::thread::Builder::new()
        .name("parent watch".into())
        .spawn(watch);
}

/// What verification compares against: the recorded output and how, and the instance (whose
/// blob ids let an equal result be shown on the GPU).
pub struct Expected<'a> {
    pub map: MemoryMap,
    pub output: Snapshot,
    pub typed: Option<Comparison>,
    pub instance: &'a ReplayInstance,
}

/// Measure one configuration in an open session (its energy too when `energy` holds NVML's
/// meter of the session's device and how long). Refused launches (too many resources, a
/// register limit on a cubin) come back as `invalid` trials and the session goes on; a fault
/// is an error, and the caller's process must end.
pub fn measure(
    session: &mut Session,
    recorded: &Launch,
    config: &Config,
    variant: Option<&VariantImage>,
    policy: &TimingPolicy,
    expected: Option<&Expected<'_>>,
    energy: Option<(&rr_cuda::nvml::Meter, &EnergyPolicy)>,
) -> Result<Trial, RunError> {
    let refused = |e: RunError| -> Result<Trial, RunError> {
        match e {
            RunError::Fault(_) => Err(e),
            other => Ok(Trial::refused(
                *config,
                Status::Invalid,
                visible(&other.to_string()).into_owned(),
            )),
        }
    };
    let started = Instant::now();
    if let Err(e) = session.select_variant(variant.map(|v| (v.path.as_path(), v.kernel.as_str()))) {
        return refused(e);
    }
    if let Err(e) = session.set_max_registers(config.max_registers) {
        return refused(e);
    }
    let cfg = LaunchConfig {
        grid: config.grid,
        block: config.block,
        shared_mem: config.shared_mem,
        cluster: recorded.cluster_dim,
        cooperative: recorded.cooperative,
    };
    let m = match session.measure(&cfg, policy, &mut |_, _| {}) {
        Ok(m) => m,
        Err(e) => return refused(e),
    };
    let mut trial = Trial::new(*config, Status::Ok);
    trial.kernel_ns = Some(m.kernel());
    let clock = m.clock();
    trial.clock_mhz = (clock.count > 0).then_some(clock);
    trial.discarded = m.throttled.len();
    trial.stop = Some(m.stop);
    trial.registers = session.registers();
    trial.blocks_per_sm = session.blocks_per_sm(&cfg);
    trial.device = Some(session.device.ordinal);
    if m.all_throttled {
        trial.message = Some("every sample ran throttled (below 75 % of the rated clock)".into());
    }
    if let Some(exp) = expected {
        let t = Instant::now();
        // Equal memory passes any comparison: shown by fingerprints on the GPU when it can be,
        // else read back; the detailed walk only runs on differences.
        let differing = session
            .differing_on_device(exp.instance)
            .map_err(RunError::Other)?;
        let want = exp.output.bytes();
        let outcome = match differing {
            Some(ranges) if ranges.is_empty() => None,
            // Only the chunks that differ come back, and only they are compared.
            Some(ranges) => {
                let replayed = session.read_back_differing()?;
                Some(verify::verify_within(
                    &exp.map,
                    want,
                    &replayed,
                    &ranges,
                    exp.typed.as_ref(),
                ))
            }
            None => {
                let replayed = session.read_back_pinned()?;
                (want != replayed)
                    .then(|| verify::verify(&exp.map, want, replayed, exp.typed.as_ref()))
            }
        };
        if let Some(outcome) = outcome.filter(|o| !o.passed) {
            trial.status = Status::VerifyFailed;
            trial.message = Some(verify::describe(&outcome).join("; "));
        }
        exp.output.check_intact().map_err(RunError::Other)?;
        trial.verify_ms = Some(t.elapsed().as_secs_f64() * 1e3);
    }
    // After verifying: the energy run launches back to back without restoring, and a
    // configuration that computes the wrong thing is worth no joules.
    if let (Some((meter, energy_policy)), Status::Ok) = (energy, trial.status) {
        match energy::measure(session, &cfg, meter, energy_policy) {
            Ok(e) => trial.energy = Some(TrialEnergy::of(&e)),
            Err(e @ RunError::Fault(_)) => return Err(e),
            Err(e) => trial.message = Some(format!("energy: {}", visible(&e.to_string()))),
        }
    }
    trial.engine_ms = Some(started.elapsed().as_secs_f64() * 1e3);
    Ok(trial)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_as_single_lines() {
        let c = Command::Measure {
            id: 9,
            config: Config {
                grid: [1, 2, 3],
                block: [32, 1, 1],
                shared_mem: 128,
                max_registers: Some(64),
                variant: Some(3),
            },
            policy: TimingPolicy::fixed(10, true),
            variant: Some(VariantImage {
                path: "/cache/ab.cubin".into(),
                kernel: "k".into(),
            }),
            energy: Some(EnergyPolicy::sweep(1.0)),
        };
        let line = c.to_line().unwrap();
        assert_eq!(line.matches('\n').count(), 1);
        assert_eq!(Command::parse(&line).unwrap(), c);
        assert_eq!(Command::parse("\"quit\"").unwrap(), Command::Quit);
        let load = Command::Load {
            id: 2,
            descriptor: "rec/k.json".into(),
        };
        assert_eq!(
            load.to_line().unwrap(),
            "{\"load\":{\"id\":2,\"descriptor\":\"rec/k.json\"}}\n",
            "externally tagged with its id first, as the engine hub reads run ids"
        );
        assert_eq!(Command::parse(&load.to_line().unwrap()).unwrap(), load);
        // A path JSON cannot carry is refused, not sent as something else.
        use std::os::unix::ffi::OsStrExt;
        let odd = Command::Load {
            id: 3,
            descriptor: std::ffi::OsStr::from_bytes(b"rec/\xff.json").into(),
        };
        assert!(odd.to_line().unwrap_err().contains("not UTF-8"));
        assert!(Command::parse("{\"measure\":{}}").is_err());
    }
}
