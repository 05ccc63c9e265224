//! NVTX ranges around repetitions, visible in Nsight tools.
//!
//! NVTX 3 is header-only: there is no library to load. A tool (Nsight Compute, Nsight Systems)
//! starts the application with `NVTX_INJECTION64_PATH` naming its injection library; the
//! application's NVTX code loads it, calls its `InitializeInjectionNvtx2(getExportTable)`, and
//! the tool writes its own functions into the application's function tables through the
//! export table. This module is that application side, written against the ABI of
//! `nvtxDetail/nvtxTypes.h` (module and slot numbers, export-table layouts), so rr-tui needs
//! neither libclang at build time nor `libnvToolsExt` (NVTX 2, which CUDA 13 no longer ships;
//! cudarc's `nvtx` feature loads that library and finds nothing on the GPU machine). Without a
//! tool, ranges cost one relaxed load.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_void, CString};
use std::sync::OnceLock;

/// NVTX's generic, uncallable function pointer (`NvtxFunctionPointer`).
type FnPtr = Option<unsafe extern "C" fn()>;

/// Slots per callback module, indexed by module id (`NVTX_CBID_*_SIZE`): CORE, CUDA, OPENCL,
/// CUDART, CORE2, SYNC. Slot 0 of each is the invalid id.
const MODULE_SIZES: [usize; 7] = [0, 16, 9, 15, 7, 16, 7];
const MODULE_CORE: usize = 1;
const CORE_RANGE_PUSH_A: usize = 9;
const CORE_RANGE_POP: usize = 11;
const ETID_CALLBACKS: u32 = 1;
const ETID_VERSIONINFO: u32 = 3;
const NVTX_VERSION: u32 = 3;

/// The slots a tool writes its functions into, and per module the table of pointers to them
/// (one null past the end, as NVTX has, so a tool reading too far crashes instead of
/// corrupting memory). Leaked once: the tool keeps the addresses for the life of the process.
struct Tables {
    slots: Vec<Box<[UnsafeCell<FnPtr>]>>,
    tables: Vec<Box<[*mut FnPtr]>>,
}

// SAFETY: the slots are written only by the tool inside `InitializeInjectionNvtx2`, which runs
// inside `OnceLock::get_or_init`; every later read happens after that initialisation completed.
unsafe impl Sync for Tables {}
// SAFETY: as above; the raw pointers point into the leaked slots.
unsafe impl Send for Tables {}

#[repr(C)]
struct ExportCallbacks {
    struct_size: usize,
    get_module_function_table: unsafe extern "C" fn(
        module: u32,
        out_table: *mut *mut *mut FnPtr,
        out_size: *mut u32,
    ) -> i32,
}

#[repr(C)]
struct ExportVersionInfo {
    struct_size: usize,
    version: u32,
    reserved0: u32,
    set_injection_nvtx_version: unsafe extern "C" fn(version: u32),
}

static CALLBACKS: ExportCallbacks = ExportCallbacks {
    struct_size: std::mem::size_of::<ExportCallbacks>(),
    get_module_function_table,
};

static VERSION_INFO: ExportVersionInfo = ExportVersionInfo {
    struct_size: std::mem::size_of::<ExportVersionInfo>(),
    version: NVTX_VERSION,
    reserved0: 0,
    set_injection_nvtx_version,
};

/// `None` until initialised; `Some(None)` when no tool attached.
static STATE: OnceLock<Option<&'static Tables>> = OnceLock::new();
/// The tables handed out while the tool initialises (before STATE is set).
static BUILDING: OnceLock<&'static Tables> = OnceLock::new();

unsafe extern "C" fn get_module_function_table(
    module: u32,
    out_table: *mut *mut *mut FnPtr,
    out_size: *mut u32,
) -> i32 {
    let Some(t) = BUILDING.get() else { return 0 };
    let m = module as usize;
    if m == 0 || m >= MODULE_SIZES.len() {
        return 0;
    }
    if !out_size.is_null() {
        // SAFETY: the tool passes a valid out-pointer or null (checked).
        unsafe { *out_size = MODULE_SIZES[m] as u32 };
    }
    if !out_table.is_null() {
        // SAFETY: as above; the table is leaked and lives for the process.
        unsafe { *out_table = t.tables[m].as_ptr() as *mut *mut FnPtr };
    }
    1
}

unsafe extern "C" fn set_injection_nvtx_version(_version: u32) {}

unsafe extern "C" fn get_export_table(id: u32) -> *const c_void {
    match id {
        ETID_CALLBACKS => &CALLBACKS as *const ExportCallbacks as *const c_void,
        ETID_VERSIONINFO => &VERSION_INFO as *const ExportVersionInfo as *const c_void,
        _ => std::ptr::null(),
    }
}

fn build_tables() -> &'static Tables {
    let slots: Vec<Box<[UnsafeCell<FnPtr>]>> = MODULE_SIZES
        .iter()
        .map(|&n| (0..n).map(|_| UnsafeCell::new(None)).collect())
        .collect();
    let tables = slots
        .iter()
        .map(|s| {
            let mut t: Vec<*mut FnPtr> = s.iter().map(|c| c.get()).collect();
            if let Some(first) = t.first_mut() {
                *first = std::ptr::null_mut(); // slot 0: the invalid id
            }
            t.push(std::ptr::null_mut());
            t.into_boxed_slice()
        })
        .collect();
    Box::leak(Box::new(Tables { slots, tables }))
}

type InitFn =
    unsafe extern "C" fn(get_export_table: unsafe extern "C" fn(u32) -> *const c_void) -> i32;

/// Load the tool named by `NVTX_INJECTION64_PATH` and let it fill the tables.
fn attach() -> Option<&'static Tables> {
    let path = std::env::var_os("NVTX_INJECTION64_PATH")?;
    let path = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())).ok()?;
    let tables = *BUILDING.get_or_init(build_tables);
    // SAFETY: dlopen of a NUL-terminated path named by the tool; the handle is kept for the
    // life of the process (the tool's functions are called until exit).
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: dlsym on a live handle with a NUL-terminated name.
    let sym = unsafe { libc::dlsym(handle, c"InitializeInjectionNvtx2".as_ptr()) };
    if sym.is_null() {
        return None;
    }
    // SAFETY: NVTX's contract: the symbol has the `NvtxInitializeInjectionNvtxFunc_t` type.
    let init: InitFn = unsafe { std::mem::transmute::<*mut c_void, InitFn>(sym) };
    // SAFETY: the tool writes its functions into our leaked slots through the export table.
    let ok = unsafe { init(get_export_table) } != 0;
    ok.then_some(tables)
}

fn core_slot(t: &Tables, id: usize) -> FnPtr {
    // SAFETY: slots are written only during `attach`, which completed before STATE was set.
    unsafe { *t.slots[MODULE_CORE][id].get() }
}

/// Whether a tool attached (checked once, at the first range).
pub fn available() -> bool {
    STATE.get_or_init(attach).is_some()
}

/// An NVTX range, closed on drop.
pub struct Range {
    open: bool,
}

/// Open a thread range named `label` (a no-op without a tool).
pub fn range(label: &str) -> Range {
    let Some(t) = *STATE.get_or_init(attach) else {
        return Range { open: false };
    };
    let (Some(push), Ok(msg)) = (core_slot(t, CORE_RANGE_PUSH_A), CString::new(label)) else {
        return Range { open: false };
    };
    // SAFETY: the tool stored its `nvtxRangePushA` (`int (*)(const char*)`) in this slot.
    let push: unsafe extern "C" fn(*const c_char) -> i32 =
        unsafe { std::mem::transmute::<unsafe extern "C" fn(), _>(push) };
    // SAFETY: `msg` is NUL-terminated and outlives the call.
    unsafe { push(msg.as_ptr()) };
    Range { open: true }
}

impl Drop for Range {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        if let Some(Some(t)) = STATE.get() {
            if let Some(pop) = core_slot(t, CORE_RANGE_POP) {
                // SAFETY: the tool stored its `nvtxRangePop` (`int (*)(void)`) in this slot.
                let pop: unsafe extern "C" fn() -> i32 =
                    unsafe { std::mem::transmute::<unsafe extern "C" fn(), _>(pop) };
                // SAFETY: pops the range this value pushed.
                unsafe { pop() };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_nvtx_sizes_and_null_ends() {
        let t = build_tables();
        for (m, &n) in MODULE_SIZES.iter().enumerate() {
            assert_eq!(t.tables[m].len(), n + 1);
            assert!(t.tables[m].last().unwrap().is_null());
        }
        assert!(!t.tables[MODULE_CORE][CORE_RANGE_PUSH_A].is_null());
        // Without a tool, ranges are no-ops.
        if std::env::var_os("NVTX_INJECTION64_PATH").is_none() {
            drop(range("x"));
            assert!(!available());
        }
    }
}
