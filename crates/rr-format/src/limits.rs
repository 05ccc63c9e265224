//! The limits every reader of descriptors applies, in one place: values past them are corrupt
//! or hostile files, not big recordings.

/// No GPU has a terabyte of memory; larger sizes are corrupt descriptors, not big recordings.
pub const MAX_REGION_BYTES: u64 = 1 << 40;
/// The largest kernel parameter buffer CUDA accepts (32 764 bytes on Volta+, CUDA ≥ 12.1).
pub const MAX_PARAM_BYTES: usize = 32 * 1024;
/// In version 2, segment offsets in the (virtual) snapshot are multiples of this, so each
/// segment's blob can be memory-mapped in place.
pub const SEGMENT_ALIGN: u64 = 4096;
