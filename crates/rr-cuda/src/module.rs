//! Device images loaded into the current context, their kernels and their globals.

use cudarc::driver::{result, sys};
use std::ffi::CString;
use std::rc::Rc;

use crate::error::{check, teardown, Call, CudaError, Result};
use crate::stream::Stream;

struct Loaded(sys::CUmodule);

impl Drop for Loaded {
    fn drop(&mut self) {
        // SAFETY: unloads the module loaded in `Module::load`, once (the last handle goes).
        teardown(unsafe { result::module::unload(self.0) }.call("cuModuleUnload"));
    }
}

/// A loaded device image (cubin, fatbin or PTX). Functions keep it loaded.
#[derive(Clone)]
pub struct Module {
    loaded: Rc<Loaded>,
}

fn c_name(name: &str, call: &'static str) -> Result<CString> {
    CString::new(name).map_err(|_| {
        CudaError::new(call, sys::CUresult::CUDA_ERROR_INVALID_VALUE)
            .context(format!("the name {name:?} contains a NUL byte"))
    })
}

impl Module {
    /// Load an image. The bytes are copied with a NUL appended, so PTX text needs none.
    pub fn load(image: &[u8]) -> Result<Module> {
        let mut bytes = Vec::with_capacity(image.len() + 1);
        bytes.extend_from_slice(image);
        bytes.push(0);
        // SAFETY: `bytes` is a complete image (the driver reads an ELF or fatbin by its headers
        // and PTX up to the NUL appended above) that outlives the call.
        let m =
            unsafe { result::module::load_data(bytes.as_ptr().cast()) }.call("cuModuleLoadData")?;
        Ok(Module {
            loaded: Rc::new(Loaded(m)),
        })
    }

    /// Load an image limiting the registers per thread (`CU_JIT_MAX_REGISTERS`); the limit
    /// takes effect only when the driver compiles the image (PTX).
    pub fn load_with_max_registers(image: &[u8], max_registers: u32) -> Result<Module> {
        let mut bytes = Vec::with_capacity(image.len() + 1);
        bytes.extend_from_slice(image);
        bytes.push(0);
        let mut options = [sys::CUjit_option::CU_JIT_MAX_REGISTERS];
        // The option's value is passed in the pointer itself, as the driver API documents.
        let mut values = [max_registers as usize as *mut std::ffi::c_void];
        let mut m: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `bytes` is a complete, NUL-terminated image that outlives the call; one JIT
        // option with its value in the option array, as cuModuleLoadDataEx expects.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut m,
                bytes.as_ptr().cast(),
                1,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        check(r, "cuModuleLoadDataEx")?;
        Ok(Module {
            loaded: Rc::new(Loaded(m)),
        })
    }

    pub fn function(&self, name: &str) -> Result<Function> {
        let c = c_name(name, "cuModuleGetFunction")?;
        // SAFETY: the module is loaded; `c` is NUL-terminated.
        let f = unsafe { result::module::get_function(self.loaded.0, c) }
            .call("cuModuleGetFunction")?;
        Ok(Function {
            raw: f,
            _module: self.clone(),
        })
    }

    pub fn global(&self, name: &str) -> Result<Global> {
        let c = c_name(name, "cuModuleGetGlobal")?;
        let (ptr, size) =
            // SAFETY: the module is loaded; `c` is NUL-terminated.
            unsafe { result::module::get_global(self.loaded.0, c) }.call("cuModuleGetGlobal")?;
        Ok(Global {
            ptr,
            size,
            _module: self.clone(),
        })
    }
}

/// A kernel of a loaded module.
pub struct Function {
    pub(crate) raw: sys::CUfunction,
    _module: Module,
}

impl Function {
    pub fn attribute(&self, attr: sys::CUfunction_attribute) -> Result<i32> {
        // SAFETY: `raw` is a function of a module we keep loaded.
        unsafe { result::function::get_function_attribute(self.raw, attr) }
            .call("cuFuncGetAttribute")
    }

    /// Allow `bytes` of dynamic shared memory (needed above 48 KiB).
    pub fn allow_dynamic_shared(&self, bytes: u32) -> Result<()> {
        // SAFETY: `raw` is a function of a module we keep loaded.
        unsafe {
            result::function::set_function_attribute(
                self.raw,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        }
        .call("cuFuncSetAttribute")
        .map_err(|e| {
            e.context(format!(
                "raising the dynamic shared memory limit to {bytes} bytes"
            ))
        })
    }

    pub fn registers(&self) -> Result<u32> {
        Ok(self.attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)? as u32)
    }

    /// Blocks of `block_threads` threads with `dynamic_shared` bytes that reside on one SM at
    /// once (the driver's occupancy calculator; 0 when the block cannot launch at all).
    pub fn blocks_per_sm(&self, block_threads: u32, dynamic_shared: u32) -> Result<u32> {
        let threads = i32::try_from(block_threads).unwrap_or(i32::MAX);
        // SAFETY: `raw` is a function of a module we keep loaded; the call only reads it.
        let n = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.raw,
                threads,
                dynamic_shared as usize,
            )
        }
        .call("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
        Ok(n.max(0) as u32)
    }

    pub fn max_threads_per_block(&self) -> Result<u32> {
        Ok(
            self.attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?
                as u32,
        )
    }

    /// The kernel's parameters as `(offset, size)` in the parameter buffer, from the image.
    pub fn param_layout(&self) -> Result<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        // Driver 580 (CUDA 13.0) has no cuFuncGetParamCount: ask until the index is refused.
        // 4096 parameters of at least one byte exceed the 32 764-byte limit.
        for i in 0..4096 {
            let (mut off, mut size) = (0usize, 0usize);
            // SAFETY: `raw` is live; the driver writes two integers.
            let r = unsafe { sys::cuFuncGetParamInfo(self.raw, i, &mut off, &mut size) };
            match check(r, "cuFuncGetParamInfo") {
                Ok(()) => out.push((off, size)),
                Err(e) if e.number() == 1 => return Ok(out),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// A module global: its device address and size.
pub struct Global {
    pub ptr: u64,
    pub size: usize,
    _module: Module,
}

impl Global {
    /// Write several globals with one wait at the end.
    pub fn upload_all(stream: &Stream, items: &[(&Global, &[u8])]) -> Result<()> {
        let mut copies = Vec::with_capacity(items.len());
        for (g, bytes) in items {
            if bytes.len() != g.size {
                return Err(CudaError::new(
                    "cuMemcpyHtoDAsync",
                    sys::CUresult::CUDA_ERROR_INVALID_VALUE,
                )
                .context(format!(
                    "{} bytes for a {}-byte global",
                    bytes.len(),
                    g.size
                )));
            }
            copies.push((g.ptr, *bytes));
        }
        crate::memory::upload_unchecked(stream, &copies)
    }

    /// Read the global's current value.
    pub fn download(&self) -> Result<Vec<u8>> {
        let mut v = vec![0u8; self.size];
        crate::memory::download_unchecked(self.ptr, &mut v)?;
        Ok(v)
    }
}
