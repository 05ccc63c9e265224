//! A kernel that never ends must not hang a replay. A kernel may wait on memory another thread
//! of the recorded program wrote while it ran (XLA's `DelayKernel` spins on a semaphore in host
//! memory): the recording finished because that thread wrote, a replay has no such thread. The
//! watchdog watches every synchronisation of the session; one that lasts past the limit is
//! reported (by the handler the command installed: text, or the JSON events) and the process
//! ends at once (the driver tears the context down, which ends the kernel).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

type Handler = Box<dyn Fn(&str) + Send + Sync>;
static HANDLER: OnceLock<Handler> = OnceLock::new();

/// How the command reports a hung kernel before the process ends (set once).
pub fn on_hang(report: Handler) {
    let _ = HANDLER.set(report);
}

pub struct Watchdog {
    /// Milliseconds since `epoch` when the current wait began, plus one (0: not waiting).
    waiting_since: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    epoch: Instant,
}

impl Watchdog {
    /// Watch waits of at most `limit` for `kernel`; `what` ends the message (what the kernel
    /// may wait on).
    pub fn start(limit: Duration, kernel: String, what: String) -> Watchdog {
        let epoch = Instant::now();
        let waiting_since = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (since, stopped) = (waiting_since.clone(), stop.clone());
        let tick = (limit / 20).clamp(Duration::from_millis(10), Duration::from_millis(250));
        std::thread::Builder::new()
            .name("rr-tui watchdog".into())
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    let s = since.load(Ordering::Relaxed);
                    if s == 0 {
                        continue;
                    }
                    let waited = epoch.elapsed().saturating_sub(Duration::from_millis(s - 1));
                    if waited >= limit {
                        let message = format!(
                            "kernel {kernel} has not finished after {:.0} s{what}; this replay stops here (--kernel-timeout sets the limit)",
                            limit.as_secs_f64()
                        );
                        match HANDLER.get() {
                            Some(h) => h(&message),
                            None => eprintln!("rr-tui: error: {message}"),
                        }
                        rr_cuda::driver::exit_now(1);
                    }
                }
            })
            .ok();
        Watchdog {
            waiting_since,
            stop,
            epoch,
        }
    }

    /// Run `wait` (a synchronisation) under the watchdog.
    pub fn watch<T>(&self, wait: impl FnOnce() -> T) -> T {
        let now = self.epoch.elapsed().as_millis() as u64 + 1;
        self.waiting_since.store(now, Ordering::Relaxed);
        let r = wait();
        self.waiting_since.store(0, Ordering::Relaxed);
        r
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
