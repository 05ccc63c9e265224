//! Kernel launches through interposed entry points: the storm's path, kept to a thread-local
//! lookup and a count for launches the observer already knows it will not select.

use super::{watching, Watch, NOT_FOUND};
use crate::cupti::{self, LaunchCall, LaunchKind};

/// The launch functions: `symbol = wrapper / symbol_ptsz = wrapper, kind (C arguments);` (each
/// with its per-thread default stream form, same arguments), calling `$m!` with the whole list,
/// one `symbol = wrapper, kind (C arguments);` per symbol (the recorder exports the same
/// symbols). `kind` says how the wrapper reads the launch: `plain` (cuLaunchKernel's arguments),
/// `coop` (the same without `extra`), `ex` (cuLaunchKernelEx's configuration).
#[macro_export]
macro_rules! launch_calls {
    ($m:ident) => {
        $crate::launch_calls! { @flat $m []
            cuLaunchKernel = launch / cuLaunchKernel_ptsz = launch_ptsz, plain
                (f: $crate::interpose::ds::CUfunction, gx: ::core::ffi::c_uint,
                 gy: ::core::ffi::c_uint, gz: ::core::ffi::c_uint, bx: ::core::ffi::c_uint,
                 by: ::core::ffi::c_uint, bz: ::core::ffi::c_uint, shared: ::core::ffi::c_uint,
                 stream: $crate::interpose::ds::CUstream, params: *mut *mut ::core::ffi::c_void,
                 extra: *mut *mut ::core::ffi::c_void);
            cuLaunchKernelEx = launch_ex / cuLaunchKernelEx_ptsz = launch_ex_ptsz, ex
                (config: *const $crate::interpose::ds::CUlaunchConfig,
                 f: $crate::interpose::ds::CUfunction, params: *mut *mut ::core::ffi::c_void,
                 extra: *mut *mut ::core::ffi::c_void);
            cuLaunchCooperativeKernel = launch_coop
                / cuLaunchCooperativeKernel_ptsz = launch_coop_ptsz, coop
                (f: $crate::interpose::ds::CUfunction, gx: ::core::ffi::c_uint,
                 gy: ::core::ffi::c_uint, gz: ::core::ffi::c_uint, bx: ::core::ffi::c_uint,
                 by: ::core::ffi::c_uint, bz: ::core::ffi::c_uint, shared: ::core::ffi::c_uint,
                 stream: $crate::interpose::ds::CUstream, params: *mut *mut ::core::ffi::c_void);
        }
    };
    (@flat $m:ident [$($done:tt)*]
     $a:ident = $wa:ident / $b:ident = $wb:ident, $kind:ident $args:tt; $($rest:tt)*) => {
        $crate::launch_calls! { @flat $m [$($done)* $a = $wa, $kind $args; $b = $wb, $kind $args;]
                                $($rest)* }
    };
    (@flat $m:ident [$($done:tt)*]) => {
        $m! { $($done)* }
    };
}

/// What a launch wrapper reads of its arguments, by kind.
macro_rules! launch_call {
    (plain, $corr:ident, $f:ident, $gx:ident, $gy:ident, $gz:ident, $bx:ident, $by:ident,
     $bz:ident, $shared:ident, $stream:ident, $params:ident, $extra:ident) => {
        launch_call!(@grid Plain, $corr, $f, [$gx, $gy, $gz], [$bx, $by, $bz], $shared, $stream,
                     $params, $extra)
    };
    (coop, $corr:ident, $f:ident, $gx:ident, $gy:ident, $gz:ident, $bx:ident, $by:ident,
     $bz:ident, $shared:ident, $stream:ident, $params:ident) => {
        launch_call!(@grid Cooperative, $corr, $f, [$gx, $gy, $gz], [$bx, $by, $bz], $shared,
                     $stream, $params, std::ptr::null_mut())
    };
    (@grid $kind:ident, $corr:ident, $f:ident, $grid:expr, $block:expr, $shared:ident,
     $stream:ident, $params:ident, $extra:expr) => {
        Some(LaunchCall::new(
            LaunchKind::$kind, $f, $grid, $block, $shared, $stream, $params, $extra, &mut $corr,
        ))
    };
    (ex, $corr:ident, $config:ident, $f:ident, $params:ident, $extra:ident) => {
        if $config.is_null() {
            None
        } else {
            // SAFETY: the caller's launch configuration and its attributes, valid for the call.
            Some(unsafe { LaunchCall::from_config(&*$config, $f, $params, $extra, &mut $corr) })
        }
    };
}

macro_rules! define_launches {
    ($($name:ident = $wrapper:ident, $kind:ident ($($arg:ident : $ty:ty),* $(,)?);)*) => {
        super::wrapper_table!(LAUNCHES, $($name => $wrapper),*);

        $(
            /// A launch function the observer sees.
            ///
            /// # Safety
            /// The driver's contract for the function of this name.
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C" fn $wrapper($($arg: $ty),*) -> u32 {
                type Real = unsafe extern "C" fn($($ty),*) -> u32;
                // SAFETY: the slot holds the driver's function of this name, whose C signature
                // this is.
                let Some(real) = (unsafe { LAUNCHES.real_as::<Real>(Slot::$name as usize) }) else {
                    return NOT_FOUND;
                };
                // SAFETY: the caller's arguments, passed on unchanged.
                let pass = || unsafe { real($($arg),*) };
                let mut correlation = 0u64;
                match launch_call!($kind, correlation, $($arg),*) {
                    Some(mut call) => {
                        call.per_thread = stringify!($name).ends_with("_ptsz");
                        observed(call, pass)
                    }
                    None => pass(),
                }
            }
        )*
    };
}

launch_calls!(define_launches);

/// The launch function `cuGetProcAddress` returns for `name` (one version of each).
pub(super) fn proc_index(name: &[u8], ptds: bool) -> Option<usize> {
    let i = LAUNCHES.index(name)?;
    if !ptds {
        return Some(i);
    }
    let mut ptsz = name.to_vec();
    ptsz.extend_from_slice(b"_ptsz");
    LAUNCHES.index(&ptsz).or(Some(i))
}

/// One launch through the observer: enter, the real launch, exit when the enter asked for it.
fn observed(mut call: LaunchCall, real: impl FnOnce() -> u32) -> u32 {
    if !watching(Watch::Launches) {
        return real();
    }
    let Some(obs) = cupti::observer() else {
        return real();
    };
    // Most launches of a storm end here: one thread-local lookup and the counts.
    if obs.launch_settled(&call) {
        return real();
    }
    if cupti::observe(|| obs.launch_enter(&mut call)).is_none() {
        return real(); // our own launch, from inside an observer method
    }
    let result = real();
    if *call.correlation != 0 {
        call.result = Some(result);
        cupti::observe(|| obs.launch_exit(&mut call));
    }
    result
}
