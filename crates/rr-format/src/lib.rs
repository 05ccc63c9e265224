//! rr-tui's record directories: LLVM offload records (read unchanged) and rr-tui's own CUDA
//! records, which extend the same layout (FORMAT.md). Read *and* write: the recorder writes
//! through this crate. Nothing here knows about GPUs, signals or terminals, and nothing here is
//! `unsafe`: it is the part of rr-tui that reads files from anyone (see [`fsio`]).

#![forbid(unsafe_code)]

pub mod cache;
pub mod check;
pub mod codec;
pub mod descriptor;
pub mod dir;
pub mod error;
pub mod ext;
pub mod fsio;
pub mod globals;
pub mod hash;
pub mod image;
pub mod image_extent;
pub mod inspect;
pub mod instance;
pub mod legacy;
pub mod limits;
pub mod memory;
pub mod objects;
pub mod record_config;
pub mod report;
pub mod search;
pub mod sparse_hash;
pub mod store;
pub mod text;
pub mod verified;

pub use descriptor::{Descriptor, RecordFormat, Segment};
pub use dir::{InstanceEntry, RecordDir};
pub use error::{Error, Result};
pub use instance::InstanceFiles;

/// A byte count with an optional binary suffix: `512M`, `4G`, `100000` (recording budgets).
///
/// ```
/// assert_eq!(rr_format::parse_bytes("2G"), Some(2 << 30));
/// assert_eq!(rr_format::parse_bytes("lots"), None);
/// ```
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, shift) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 10),
        (i, 'm' | 'M') => (&s[..i], 20),
        (i, 'g' | 'G') => (&s[..i], 30),
        (i, 't' | 'T') => (&s[..i], 40),
        _ => (s, 0),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// Readable form of a (possibly Itanium-mangled) kernel name; the raw name when not mangled.
pub fn demangle(name: &str) -> String {
    if name.starts_with("_Z") {
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            if let Ok(s) = sym.demangle() {
                return s;
            }
        }
    }
    name.to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn demangles_cuda_names() {
        assert_eq!(
            super::demangle("_Z6vecAddPKfS0_Pfi"),
            "vecAdd(float const*, float const*, float*, int)"
        );
        assert_eq!(
            super::demangle("__omp_offloading_10302_1e5d1a_main_l27"),
            "__omp_offloading_10302_1e5d1a_main_l27"
        );
    }
}
