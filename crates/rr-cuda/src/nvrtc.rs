//! NVRTC: CUDA C++ compiled at run time into a cubin for the GPU at hand (A/B candidates given
//! as source, compile-time tuning variants).
//!
//! libnvrtc is opened at first use, like libcuda: found by the loader, or in a CUDA
//! installation ([`crate::library::find_cuda_library`]). cudarc looks the library up by its
//! names and *panics* when none loads, so [`load`] opens it by path first (kept open for the
//! process's life: cudarc's later lookup by soname then finds this one) and refuses with a
//! message when there is none. NVRTC compiles different programs on different threads at once.

use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

use cudarc::nvrtc::sys;

/// Why a source did not become an image.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileError {
    /// No libnvrtc here.
    #[error("{0}")]
    Unavailable(String),
    /// The compiler refused the source: its log says why.
    #[error("the source does not compile: {log}")]
    Rejected { log: String },
    /// Anything else NVRTC reported.
    #[error("NVRTC: {0}")]
    Failed(String),
}

/// What a compilation produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// A cubin for the requested architecture, or PTX when the options asked for a virtual
    /// architecture (`-arch=compute_XX`).
    pub image: Vec<u8>,
    pub cubin: bool,
    /// The compiler's warnings (empty when it had nothing to say).
    pub log: String,
}

/// The NVRTC version, `(major, minor)`, once the library is loaded.
pub fn load() -> Result<(i32, i32), CompileError> {
    static LOADED: OnceLock<Result<(i32, i32), CompileError>> = OnceLock::new();
    LOADED.get_or_init(open).clone()
}

fn open() -> Result<(i32, i32), CompileError> {
    let found = crate::library::find_cuda_library("nvrtc");
    if let Some(path) = &found {
        preload(path);
        // The builtins library sits beside it; NVRTC opens it by name when compiling.
        if let Some(dir) = path.parent() {
            if let Some(b) = crate::library::versioned(dir, "libnvrtc-builtins.so") {
                preload(&b);
            }
        }
    }
    // SAFETY: only tries to dlopen the candidate names; calls nothing in them.
    if !unsafe { sys::is_culib_present() } {
        return Err(CompileError::Unavailable(format!(
            "NVRTC (libnvrtc.so) was not found{}: compiling CUDA C++ needs the CUDA toolkit's \
             runtime compiler; set CUDA_HOME to the installation, add its lib64 to LD_LIBRARY_PATH, \
             or give a compiled cubin, fatbin or PTX instead",
            found
                .map(|p| format!(" ({} did not load)", p.display()))
                .unwrap_or_default()
        )));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two integers; the library is loaded (checked above).
    check(unsafe { sys::nvrtcVersion(&mut major, &mut minor) })?;
    Ok((major, minor))
}

fn preload(path: &std::path::Path) {
    if let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) {
        // SAFETY: dlopen of a NUL-terminated path; the handle is never closed, so the library
        // stays loaded and cudarc's later lookup by soname finds it.
        unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    }
}

fn check(r: sys::nvrtcResult) -> Result<(), CompileError> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: returns a pointer to a static NUL-terminated string for any result code.
    let s = unsafe { sys::nvrtcGetErrorString(r) };
    let text = if s.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: non-null, static and NUL-terminated (above).
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    };
    Err(CompileError::Failed(text))
}

/// A program, destroyed on every path.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program came from nvrtcCreateProgram and is destroyed once, here.
        unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

impl Program {
    /// `nvrtcGet<X>Size` then `nvrtcGet<X>`.
    fn output(
        &self,
        size: unsafe fn(sys::nvrtcProgram, *mut usize) -> sys::nvrtcResult,
        get: unsafe fn(sys::nvrtcProgram, *mut c_char) -> sys::nvrtcResult,
    ) -> Result<Vec<u8>, CompileError> {
        let mut n = 0usize;
        // SAFETY: writes one size for a live program.
        check(unsafe { size(self.0, &mut n) })?;
        let mut buf = vec![0u8; n];
        if n > 0 {
            // SAFETY: `buf` holds exactly the size NVRTC reported for this output.
            check(unsafe { get(self.0, buf.as_mut_ptr().cast()) })?;
        }
        Ok(buf)
    }

    fn log(&self) -> String {
        let log = self
            .output(sys::nvrtcGetProgramLogSize, sys::nvrtcGetProgramLog)
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&log);
        text.trim_end_matches(['\0', '\n', ' ']).to_string()
    }
}

/// Compile `source` (named `name` in messages) with `options` (`-arch=sm_90`, `-DTILE=16`, …).
/// A cubin when the options name a real architecture, PTX for a virtual one.
pub fn compile(source: &str, name: &str, options: &[String]) -> Result<Compiled, CompileError> {
    load()?;
    let nul = |what: &str| CompileError::Failed(format!("{what} contains a NUL byte"));
    let src = CString::new(source).map_err(|_| nul("the source"))?;
    let cname = CString::new(name).map_err(|_| nul("the source's name"))?;
    let opts: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()).map_err(|_| nul("an option")))
        .collect::<Result<_, _>>()?;
    let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: `src` and `cname` are NUL-terminated and outlive the program (both are dropped
    // after `program`); no headers are passed.
    check(unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    })?;
    let program = Program(raw);
    let count = i32::try_from(ptrs.len())
        .map_err(|_| CompileError::Failed("too many compiler options".into()))?;
    // SAFETY: a live program; `ptrs` holds `count` NUL-terminated options alive for the call.
    let r = unsafe { sys::nvrtcCompileProgram(program.0, count, ptrs.as_ptr()) };
    if r == sys::nvrtcResult::NVRTC_ERROR_COMPILATION {
        return Err(CompileError::Rejected { log: program.log() });
    }
    check(r)?;
    let cubin = program.output(sys::nvrtcGetCUBINSize, sys::nvrtcGetCUBIN)?;
    let (image, is_cubin) = if cubin.len() > 1 {
        (cubin, true)
    } else {
        let mut ptx = program.output(sys::nvrtcGetPTXSize, sys::nvrtcGetPTX)?;
        // PTX comes NUL-terminated; the module loader appends its own.
        while ptx.last() == Some(&0) {
            ptx.pop();
        }
        (ptx, false)
    };
    Ok(Compiled {
        image,
        cubin: is_cubin,
        log: program.log(),
    })
}

/// The include directory of the CUDA installation NVRTC came from (for headers beyond the ones
/// NVRTC bundles), when there is one.
pub fn cuda_include_dir() -> Option<PathBuf> {
    // Looked up once: every variant of a sweep asks.
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        crate::library::find_cuda_library("nvrtc")
            .and_then(|lib| lib.parent()?.parent().map(|home| home.join("include")))
            .filter(|dir| dir.join("cuda_runtime.h").is_file())
    })
    .clone()
}
