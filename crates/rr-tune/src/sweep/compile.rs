//! Compile-time tuning's compiler: every variant of `--source` compiled with NVRTC on all CPU
//! cores, in variant order (the order an exhaustive sweep needs them), ahead of the GPU. A GPU
//! worker asking for a variant not compiled yet moves it to the front and waits; the waits are
//! counted (the GPU's idle time). Images are cached on disk by content: the source text, every
//! compiler option (architecture and defines included), NVRTC's version, and the names, sizes
//! and times of the headers beside the source (what it most likely includes).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::defines::Defines;
use crate::trial::CompileStats;
use rr_engine::replay::candidate::{self, CandidateSpec};
use rr_format::image;

/// What every variant shares.
pub struct Job {
    pub spec: CandidateSpec,
    pub text: String,
    pub defines: Defines,
    /// The GPU's architecture (`90` for sm_90).
    pub sm: u32,
    /// The kernel each variant must hold.
    pub kernel: String,
}

#[derive(Default)]
struct State {
    queue: VecDeque<usize>,
    done: HashMap<usize, Result<PathBuf, String>>,
    first: Option<Instant>,
    last: Option<Instant>,
    compiled: usize,
    cached: usize,
    failed: usize,
    waited: Duration,
}

pub struct Compiler {
    job: Job,
    /// Where images go: the user's cache, or this run's own directory when that is unusable.
    dir: PathBuf,
    _scratch: Option<tempfile::TempDir>,
    nvrtc: String,
    /// The files beside the source that it may include, as names, sizes and times.
    includes: String,
    threads: usize,
    state: Mutex<State>,
    ready: Condvar,
}

impl Compiler {
    /// Start compiling every variant of `job` on up to `threads` threads.
    pub fn start(job: Job, threads: usize) -> Result<Arc<Compiler>, String> {
        let (major, minor) = candidate::nvrtc_version()?;
        let (dir, scratch) = match rr_format::cache::path("nvrtc") {
            Some(d) if rr_format::cache::private_dir(&d) => (d, None),
            _ => {
                let t = tempfile::tempdir()
                    .map_err(|e| format!("a directory for compiled variants: {e}"))?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        let variants = job.defines.variants();
        let threads = threads.clamp(1, variants.max(1));
        let includes = includes_stamp(&job.spec.path);
        let c = Arc::new(Compiler {
            job,
            dir,
            _scratch: scratch,
            nvrtc: format!("{major}.{minor}"),
            includes,
            threads,
            state: Mutex::new(State {
                queue: (0..variants).collect(),
                ..State::default()
            }),
            ready: Condvar::new(),
        });
        for _ in 0..threads {
            let c = c.clone();
            std::thread::spawn(move || c.work());
        }
        Ok(c)
    }

    fn work(&self) {
        loop {
            let v = {
                let Ok(mut s) = self.state.lock() else { return };
                let Some(v) = s.queue.pop_front() else { return };
                s.first.get_or_insert_with(Instant::now);
                v
            };
            let (result, fresh) = self.compile(v);
            let Ok(mut s) = self.state.lock() else { return };
            match (&result, fresh) {
                (Err(_), _) => s.failed += 1,
                (Ok(_), true) => s.compiled += 1,
                (Ok(_), false) => s.cached += 1,
            }
            s.last = Some(Instant::now());
            s.done.insert(v, result);
            self.ready.notify_all();
        }
    }

    /// The image of variant `v` (whether it was compiled now rather than found cached), or
    /// the compiler's first error.
    fn compile(&self, v: usize) -> (Result<PathBuf, String>, bool) {
        let mut options = self.job.spec.compile_options(self.job.sm);
        options.extend(self.job.defines.options(v));
        let mut key = Vec::with_capacity(self.job.text.len() + 256);
        key.extend_from_slice(self.job.text.as_bytes());
        for o in options.iter().chain([&self.nvrtc, &self.includes]) {
            key.push(0);
            key.extend_from_slice(o.as_bytes());
        }
        let path = self
            .dir
            .join(format!("{}.image", rr_format::store::blob_id(&key)));
        if self.usable(&path) {
            return (Ok(path), false);
        }
        let source = &self.job.spec.path;
        let out = candidate::compile(source, &self.job.text, &options)
            .and_then(|c| {
                candidate::check_image(
                    &c.image,
                    source,
                    "the compiled variant",
                    &self.job.kernel,
                    self.job.sm,
                    "--source-kernel",
                )?;
                rr_format::fsio::write_atomic(&path, &c.image)?;
                Ok(path)
            })
            .map_err(|e| match e {
                rr_engine::Error::Record(r) => r.problem(),
                other => other.to_string(),
            });
        (out, true)
    }

    /// A cached image: ours alone, and one the loader knows.
    fn usable(&self, path: &Path) -> bool {
        rr_format::cache::private(path, false) && image::read(path).is_ok()
    }

    /// The kernel every variant holds.
    pub fn kernel(&self) -> &str {
        &self.job.kernel
    }

    /// Variant `v`'s image, waiting (and moving it to the front) when it is not compiled yet.
    pub fn get(&self, v: usize) -> Result<PathBuf, String> {
        let Ok(mut s) = self.state.lock() else {
            return Err("the compiler stopped".into());
        };
        if !s.done.contains_key(&v) {
            let t = Instant::now();
            if let Some(at) = s.queue.iter().position(|&x| x == v) {
                s.queue.remove(at);
                s.queue.push_front(v);
            }
            while !s.done.contains_key(&v) {
                s = match self.ready.wait(s) {
                    Ok(s) => s,
                    Err(_) => return Err("the compiler stopped".into()),
                };
            }
            s.waited += t.elapsed();
        }
        s.done
            .get(&v)
            .cloned()
            .unwrap_or_else(|| Err("the compiler stopped".into()))
    }

    /// How compiling went so far; `gpu_seconds` is the GPU time the sweep had (workers ×
    /// its wall time), against which the waits count.
    pub fn stats(&self, gpu_seconds: f64) -> CompileStats {
        let Ok(s) = self.state.lock() else {
            return CompileStats::default();
        };
        let seconds = match (s.first, s.last) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        let waited = s.waited.as_secs_f64();
        CompileStats {
            arch: format!("sm_{}", self.job.sm),
            variants: self.job.defines.variants(),
            compiled: s.compiled,
            cached: s.cached,
            failed: s.failed,
            threads: self.threads,
            seconds,
            per_s: if seconds > 0.0 {
                (s.compiled + s.failed) as f64 / seconds
            } else {
                0.0
            },
            gpu_wait_s: waited,
            gpu_idle_fraction: if gpu_seconds > 0.0 {
                (waited / gpu_seconds).min(1.0)
            } else {
                0.0
            },
        }
    }
}

/// Header-like files in the source's directory (at most 1 000), each as name, size and
/// modification time: an edited header is another compilation.
fn includes_stamp(source: &Path) -> String {
    const ENDINGS: &[&str] = &["h", "hh", "hpp", "cuh", "inc", "cu"];
    let dir = match source.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let mut stamps: Vec<String> = entries
        .take(1000)
        .flatten()
        .filter(|e| {
            e.path()
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| ENDINGS.contains(&x))
        })
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            let t = m
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            Some(format!(
                "{}:{}:{}",
                e.file_name().to_string_lossy(),
                m.len(),
                t.as_nanos()
            ))
        })
        .collect();
    stamps.sort();
    stamps.join("\n")
}
