//! One engine process (`rr-tui engine`) on one GPU, seen from the tuner: start it, wait until
//! it is ready, send it `measure` commands and wait for the replies, with a watchdog for
//! kernels that never finish. A fault, a crash or a timeout ends the process; the caller starts
//! a new one.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use rr_engine::replay::energy::EnergyPolicy;
use rr_engine::replay::protocol::{Event, Tagged};
use rr_engine::replay::timing::TimingPolicy;
use rr_engine::tune::engine::{Command as EngineCommand, VariantImage};
use rr_engine::tune::trial::DeviceInfo;
use rr_engine::tune::{Config, Trial};

use crate::cli::EngineArgs;

/// How long an engine may take to open its session (driver start, reservation, restore).
const START_TIMEOUT: Duration = Duration::from_secs(300);
/// Stderr lines kept to explain a death.
const STDERR_LINES: usize = 4;

pub struct EngineChild {
    child: Child,
    stdin: ChildStdin,
    events: Receiver<Option<Tagged>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    pub info: DeviceInfo,
    /// The image is PTX: register limits can be applied.
    pub ptx: bool,
    next_id: u64,
}

/// What became of one configuration sent to an engine.
pub enum Reply {
    Trial(Box<Trial>),
    /// The engine ended (fault, crash, timeout): it must be replaced.
    Lost(String),
}

impl EngineChild {
    /// Start an engine for `args` and wait until it is ready.
    pub fn start(exe: &Path, args: &EngineArgs) -> Result<EngineChild, String> {
        let mut cmd = Command::new(exe);
        cmd.arg("engine").arg(&args.descriptor);
        if let Some(d) = args.device_id {
            cmd.args(["--device-id", &d.to_string()]);
        }
        if let Some(t) = &args.tolerance {
            cmd.args(["--tolerance", &t.to_spec()]);
        }
        if args.no_verify {
            cmd.arg("--no-verify");
        }
        if args.energy {
            cmd.arg("--energy");
        }
        cmd.args(["--kernel-timeout", &args.kernel_timeout.to_string()]);
        cmd.args(args.supplied.to_args());
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the engine {}: {e}", exe.display()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err("the engine's pipes could not be opened".into());
        };
        let (tx, events) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(t) = Tagged::parse(&line) {
                    if tx.send(Some(t)).is_err() {
                        return;
                    }
                }
            }
            let _ = tx.send(None);
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let keep = tail.clone();
        std::thread::spawn(move || {
            // Bounded lines: a flood of stderr cannot grow memory.
            let mut r = BufReader::new(stderr);
            // Bytes, decoded leniently: text that is not UTF-8 must not end the reader (the
            // engine would then die on a closed stderr).
            let mut line = Vec::new();
            while (&mut r)
                .take(4096)
                .read_until(b'\n', &mut line)
                .is_ok_and(|n| n > 0)
            {
                if let Ok(mut q) = keep.lock() {
                    if q.len() == STDERR_LINES {
                        q.pop_front();
                    }
                    q.push_back(String::from_utf8_lossy(&line).trim_end().to_string());
                }
                line.clear();
            }
        });
        let mut engine = EngineChild {
            child,
            stdin,
            events,
            stderr: tail,
            info: DeviceInfo {
                ordinal: args.device_id.unwrap_or(0),
                name: String::new(),
                sm: 0,
                rated_clock_mhz: 0.0,
            },
            ptx: false,
            next_id: 1,
        };
        engine.wait_ready()?;
        Ok(engine)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        loop {
            match self.events.recv_timeout(START_TIMEOUT) {
                Ok(Some(t)) => match t.event {
                    Event::Device {
                        name, sm, ordinal, ..
                    } => {
                        self.info.name = name;
                        self.info.sm = sm;
                        self.info.ordinal = ordinal;
                    }
                    Event::Ready {
                        rated_clock_mhz,
                        ptx,
                    } => {
                        self.info.rated_clock_mhz = rated_clock_mhz;
                        self.ptx = ptx;
                        return Ok(());
                    }
                    Event::Error { message, .. } => return Err(message),
                    _ => {}
                },
                Ok(None) => return Err(self.death("the engine ended before it was ready")),
                Err(_) => {
                    let _ = self.child.kill();
                    return Err(format!(
                        "the engine was not ready after {} s",
                        START_TIMEOUT.as_secs()
                    ));
                }
            }
        }
    }

    /// Measure one configuration; `watchdog` bounds the wait for the reply.
    pub fn measure(
        &mut self,
        config: Config,
        variant: Option<VariantImage>,
        policy: TimingPolicy,
        energy: Option<EnergyPolicy>,
        watchdog: Duration,
    ) -> Reply {
        let id = self.next_id;
        self.next_id += 1;
        let line = EngineCommand::Measure {
            id,
            config,
            policy,
            variant,
            energy,
        }
        .to_line();
        if self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .is_err()
        {
            return Reply::Lost(self.death("the engine stopped reading commands"));
        }
        loop {
            match self.events.recv_timeout(watchdog) {
                Ok(Some(t)) if t.run == id => match t.event {
                    Event::Trial(trial) => return Reply::Trial(trial),
                    Event::Error { message, .. } => {
                        let _ = self.child.wait();
                        return Reply::Lost(message);
                    }
                    _ => {}
                },
                Ok(Some(_)) => {}
                Ok(None) => return Reply::Lost(self.death("the engine ended")),
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Reply::Lost(format!(
                        "no result after {:.0} s (the kernel may never finish); the engine was stopped",
                        watchdog.as_secs_f64()
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Reply::Lost(self.death("the engine ended"))
                }
            }
        }
    }

    /// Why the process ended: its exit status and last stderr lines.
    fn death(&mut self, what: &str) -> String {
        let status = match self.child.wait() {
            Ok(s) if s.code().is_none() => "killed by a signal".to_string(),
            Ok(s) => format!("exit status {}", s.code().unwrap_or(-1)),
            Err(e) => format!("cannot be waited for: {e}"),
        };
        // The stderr thread may still be reading the last lines.
        std::thread::sleep(Duration::from_millis(20));
        let tail = self
            .stderr
            .lock()
            .map(|q| q.iter().cloned().collect::<Vec<_>>().join(" | "))
            .unwrap_or_default();
        if tail.is_empty() {
            format!("{what} ({status})")
        } else {
            format!("{what} ({status}): {tail}")
        }
    }
}

impl Drop for EngineChild {
    fn drop(&mut self) {
        let _ = self
            .stdin
            .write_all(EngineCommand::Quit.to_line().as_bytes());
        let _ = self.stdin.flush();
        // A clean quit releases the GPU promptly; a stuck engine is killed.
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
