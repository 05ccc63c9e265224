//! What kernel a session runs: the recorded one recompiled under a register limit, a compiled
//! variant of compile-time tuning (kept loaded for the sweep to come back to), or an A/B
//! candidate swapped in for the runs that measure it.

use std::path::Path;

use rr_cuda::{LaunchConfig, Module};

use super::kernel::{own_globals, Kernel};
use super::switch::{as_loaded, LoadedCandidate};
use super::{refused, RunError, Session, DEFAULT_DYNAMIC_SHARED, MAX_PARKED};
use crate::error::{Error, Result};
use crate::replay::candidate::Candidate;

impl Session {
    /// Whether a register limit can be applied (the record holds PTX).
    pub fn has_ptx(&self) -> bool {
        self.kernels.ptx.is_some()
    }

    /// Limit the registers per thread (`CU_JIT_MAX_REGISTERS`) by recompiling the PTX image;
    /// `None` removes the limit. Records holding a cubin cannot: their registers are fixed.
    pub fn set_max_registers(&mut self, limit: Option<u32>) -> std::result::Result<(), RunError> {
        if limit == self.kernels.max_registers {
            return Ok(());
        }
        let Some(ptx) = &self.kernels.ptx else {
            return Err(RunError::Other(Error::invalid(
                "a register limit needs a PTX image; this record holds compiled machine code (a cubin)",
            )));
        };
        let module = match limit {
            Some(r) => Module::load_with_max_registers(ptx, r),
            None => Module::load(ptx),
        }
        .map_err(refused)?;
        self.kernels.kernel = Kernel::rebind(
            &module,
            &self.kernels.kernel_name,
            &self.instance.params,
            &self.kernels.recorded_globals,
        )?;
        self.kernels.shared_allowed = DEFAULT_DYNAMIC_SHARED;
        self.kernels.max_registers = limit;
        Ok(())
    }

    /// The kernel's registers per thread as compiled now.
    pub fn registers(&self) -> Option<u32> {
        self.kernels.kernel.function.registers().ok()
    }

    /// Resident blocks per SM for `cfg` as compiled now (None when the driver cannot say).
    pub fn blocks_per_sm(&self, cfg: &LaunchConfig) -> Option<u32> {
        let threads = rr_format::limits::block_threads(cfg.block);
        let threads = u32::try_from(threads).ok()?;
        self.kernels
            .kernel
            .function
            .blocks_per_sm(threads, cfg.shared_mem)
            .ok()
    }

    /// Bind the kernel `name` of the compiled variant at `path` (None: the recorded image) for
    /// the launches that follow. Loaded variants are kept (up to [`MAX_PARKED`]), so a sweep
    /// going back to one does not load it again.
    pub fn select_variant(
        &mut self,
        variant: Option<(&Path, &str)>,
    ) -> std::result::Result<(), RunError> {
        let want = variant.map(|(p, _)| p.to_path_buf());
        if want == self.kernels.active_variant {
            return Ok(());
        }
        let mut next = match (self.kernels.parked.remove(&want), variant) {
            (Some(k), _) => k,
            (None, Some((path, name))) => (self.load_variant(path, name)?, DEFAULT_DYNAMIC_SHARED),
            (None, None) => {
                return Err(RunError::Other(Error::invalid(
                    "the recorded kernel was not kept",
                )))
            }
        };
        self.swap_kernel(&mut next);
        let previous = std::mem::replace(&mut self.kernels.active_variant, want);
        if self.kernels.parked.len() >= MAX_PARKED {
            // Any variant but the recorded image goes: it can be loaded again.
            if let Some(k) = self.kernels.parked.keys().find(|k| k.is_some()).cloned() {
                self.kernels.parked.remove(&k);
            }
        }
        self.kernels.parked.insert(previous, next);
        Ok(())
    }

    /// Load a compiled variant's image and bind its kernel as a candidate is bound.
    fn load_variant(&self, path: &Path, name: &str) -> std::result::Result<Kernel, RunError> {
        let bytes = rr_format::fsio::read_limited(
            path,
            rr_format::fsio::MAX_IMAGE_BYTES,
            "compiled variant",
        )
        .map_err(|e| RunError::Other(e.into()))?;
        let module = Module::load(&bytes).map_err(refused)?;
        self.bind_other(&module, name, &mut Vec::new())
            .map_err(RunError::Other)
    }

    /// Bind kernel `name` of another image (a candidate, a variant): its parameters as the
    /// recorded kernel's, the recorded globals where it has them (the rest said in `notes`).
    fn bind_other(&self, module: &Module, name: &str, notes: &mut Vec<String>) -> Result<Kernel> {
        Kernel::bind_candidate(
            module,
            name,
            &self.kernels.kernel.layout,
            &self.kernels.recorded_globals,
            notes,
        )
    }

    /// Load an A/B candidate beside the recorded kernel (see [`crate::replay::ab`]); what differs in its
    /// globals comes back as notes.
    pub fn load_candidate(&mut self, c: &Candidate) -> Result<Vec<String>> {
        let module = Module::load(&c.image)
            .map_err(|e| e.context("loading the candidate (is it built for this GPU?)"))?;
        let mut notes = Vec::new();
        let mut kernel = self.bind_other(&module, &c.kernel, &mut notes)?;
        own_globals(
            &module,
            &c.image,
            &self.kernels.recorded_globals,
            &mut kernel,
            &mut notes,
        )?;
        let as_loaded = as_loaded(&module, &c.image, &self.kernels.recorded_globals, &kernel)?;
        self.kernels.candidate = Some((kernel, DEFAULT_DYNAMIC_SHARED));
        self.kernels.candidate_module = Some(LoadedCandidate {
            module,
            kernel: c.kernel.clone(),
            as_loaded,
        });
        Ok(notes)
    }

    /// Run `f` with the candidate's kernel bound in place of the recorded one (restored after,
    /// on every path).
    pub fn with_candidate<T>(
        &mut self,
        f: impl FnOnce(&mut Session) -> std::result::Result<T, RunError>,
    ) -> std::result::Result<T, RunError> {
        let Some(mut other) = self.kernels.candidate.take() else {
            return Err(RunError::Other(Error::invalid("no candidate is loaded")));
        };
        self.swap_kernel(&mut other);
        self.kernels.candidate_bound = true;
        let out = f(self);
        self.kernels.candidate_bound = false;
        self.swap_kernel(&mut other);
        self.kernels.candidate = Some(other);
        out
    }

    fn swap_kernel(&mut self, other: &mut (Kernel, u32)) {
        std::mem::swap(&mut self.kernels.kernel, &mut other.0);
        std::mem::swap(&mut self.kernels.shared_allowed, &mut other.1);
    }
}
