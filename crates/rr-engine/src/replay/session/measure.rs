//! Launching and timing: a configuration prepared (its shared memory, a candidate's block size),
//! the recorded input restored, the kernel launched once behind a blocking kernel and timed with
//! CUDA events; sampled until a timing policy is satisfied, repeated, or queued back to back.

use std::time::Instant;

use rr_cuda::timing::Probes;
use rr_cuda::{nvtx, Event as CudaEvent, LaunchConfig, Stream};

use super::{classify, refused, RunError, Sample, Session};
use crate::error::Error;
use crate::replay::timing::{Measurement, TimingPolicy};

impl Session {
    /// Apply what a configuration needs before launching (the dynamic shared memory limit);
    /// a candidate whose kernel cannot take the block is refused here, before it runs.
    fn prepare(&mut self, cfg: &LaunchConfig) -> std::result::Result<(), RunError> {
        if self.kernels.candidate_bound {
            let threads = rr_format::limits::block_threads(cfg.block);
            let limit = self
                .kernels
                .kernel
                .function
                .max_threads_per_block()
                .map_err(classify)?;
            if threads > limit as u64 {
                return Err(RunError::Other(Error::invalid(format!(
                    "the candidate's kernel takes at most {limit} threads per block (its registers \
                     or __launch_bounds__); the recorded launch has {threads}: refused, never a pass"
                ))));
            }
        }
        if cfg.shared_mem > self.kernels.shared_allowed {
            self.kernels
                .kernel
                .function
                .allow_dynamic_shared(cfg.shared_mem)
                .map_err(refused)?;
            self.kernels.shared_allowed = cfg.shared_mem;
        }
        Ok(())
    }

    /// Restore (and flush the L2 cache when `cold`), launch once, wait; the kernel's
    /// CUDA-event time, host time and the SM clock. The kernel is queued behind a blocking
    /// kernel with its timing events, then released: no launch latency in the timed interval.
    pub fn launch(
        &mut self,
        cfg: &LaunchConfig,
        label: &str,
        cold: bool,
    ) -> std::result::Result<Sample, RunError> {
        self.prepare(cfg)?;
        let t = Instant::now();
        self.restore()?;
        if let (true, Some(p)) = (cold, &self.timer.probes) {
            p.flush_l2(&self.stream).map_err(classify)?;
        }
        self.stream.synchronize().map_err(classify)?;
        let restore_ns = t.elapsed().as_nanos() as f64;
        let _range = nvtx::range(label);
        let held = Held::new(self.timer.probes.as_ref(), &self.stream).map_err(classify)?;
        self.timer.start.record(&self.stream).map_err(classify)?;
        if let Err(e) = rr_cuda::launch::launch(
            &self.kernels.kernel.function,
            cfg,
            &self.stream,
            &mut self.instance.params,
        ) {
            drop(held);
            if e.is_sticky() {
                return Err(RunError::Fault(e));
            }
            // The kernel did not start; prove the context survived before saying so.
            self.context.synchronize().map_err(classify)?;
            return Err(if e.is_launch_config() {
                RunError::InvalidLaunch(e)
            } else {
                RunError::Other(Error::Cuda(e))
            });
        }
        self.input.dirty = true;
        self.timer.end.record(&self.stream).map_err(classify)?;
        if let Some(p) = &self.timer.probes {
            p.probe_clock(&self.stream).map_err(classify)?;
        }
        drop(held);
        let t0 = Instant::now();
        let stream = &self.stream;
        match &self.watchdog {
            Some(w) => w.watch(|| stream.synchronize()),
            None => stream.synchronize(),
        }
        .map_err(classify)?;
        let mut host_ns = t0.elapsed().as_nanos() as f64;
        let ms = self
            .timer
            .start
            .elapsed_ms(&self.timer.end)
            .map_err(classify)?;
        let clock_mhz = match self.timer.probes.as_mut() {
            Some(p) => {
                let mhz = p.clock_mhz().map_err(classify)?;
                host_ns = (host_ns - p.last_probe_ns() as f64).max(0.0);
                Some(mhz)
            }
            None => None,
        };
        Ok(Sample {
            kernel_ns: ms as f64 * 1e6,
            host_ns,
            restore_ns,
            clock_mhz,
        })
    }

    /// Sample one configuration until the policy is satisfied (see [`TimingPolicy`]); each
    /// sample goes to `on_sample` with whether it was kept. Samples taken while the SM clock was
    /// below the policy's share of the device's rated clock are discarded, as nvbench does.
    pub fn measure(
        &mut self,
        cfg: &LaunchConfig,
        policy: &TimingPolicy,
        on_sample: &mut dyn FnMut(&Sample, bool),
    ) -> std::result::Result<Measurement, RunError> {
        let started = Instant::now();
        let mut m = Measurement::default();
        loop {
            let label = format!("rr-tui sample {}", m.samples.len() + m.throttled.len() + 1);
            let s = self.launch(cfg, &label, policy.cold)?;
            let throttled = policy.throttled(s.clock_mhz, self.timer.reference_clock_mhz);
            on_sample(&s, !throttled);
            if throttled {
                m.throttled.push(s);
            } else {
                m.keep(s);
            }
            if let Some(stop) = policy.stop(&m, started.elapsed().as_secs_f64()) {
                m.stop = stop;
                break;
            }
        }
        if m.samples.is_empty() {
            // Every sample throttled until the timeout: keep them, and say so.
            for s in std::mem::take(&mut m.throttled) {
                m.keep(s);
            }
            m.all_throttled = true;
        }
        Ok(m)
    }

    /// `warmup` untimed launches, then `repetitions` measured ones, each reported to `on_rep`
    /// (1-based index) as it completes.
    pub fn run(
        &mut self,
        cfg: &LaunchConfig,
        repetitions: u32,
        warmup: u32,
        cold: bool,
        on_rep: &mut dyn FnMut(u32, Sample),
    ) -> std::result::Result<Vec<Sample>, RunError> {
        // Grown as samples come: a huge count must not reserve memory up front.
        let mut samples = Vec::with_capacity(repetitions.min(1 << 16) as usize);
        for w in 0..warmup {
            self.launch(cfg, &format!("rr-tui warmup {}", w + 1), cold)?;
        }
        for rep in 1..=repetitions {
            let s = self.launch(cfg, &format!("rr-tui rep {rep}"), cold)?;
            on_rep(rep, s);
            samples.push(s);
        }
        Ok(samples)
    }

    /// Launch `cfg` `count` times back to back, with no restore between the launches, and
    /// record an event after them; returns once they are queued. Memory drifts from the
    /// recorded input: the next [`Session::launch`] restores it.
    pub fn enqueue(
        &mut self,
        cfg: &LaunchConfig,
        count: u32,
    ) -> std::result::Result<CudaEvent, RunError> {
        self.prepare(cfg)?;
        for _ in 0..count {
            self.input.dirty = true;
            rr_cuda::launch::launch(
                &self.kernels.kernel.function,
                cfg,
                &self.stream,
                &mut self.instance.params,
            )
            .map_err(|e| match e.is_launch_config() {
                true => refused(e),
                false => classify(e),
            })?;
        }
        let mark = CudaEvent::new().map_err(classify)?;
        mark.record(&self.stream).map_err(classify)?;
        Ok(mark)
    }
}

/// The blocking kernel holding the stream: released when dropped, on every path (a held
/// stream would otherwise wait for the kernel's timeout).
struct Held<'a>(Option<&'a Probes>);

impl<'a> Held<'a> {
    fn new(probes: Option<&'a Probes>, stream: &Stream) -> rr_cuda::Result<Held<'a>> {
        if let Some(p) = probes {
            p.hold(stream)?;
        }
        Ok(Held(probes))
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.0 {
            p.release();
        }
    }
}
