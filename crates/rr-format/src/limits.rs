//! The limits every reader of descriptors applies, in one place: values past them are corrupt
//! or hostile files, not big recordings.

/// No GPU has a terabyte of memory; larger sizes are corrupt descriptors, not big recordings.
pub const MAX_REGION_BYTES: u64 = 1 << 40;
/// The largest kernel parameter buffer CUDA accepts (32 764 bytes on Volta+, CUDA ≥ 12.1).
pub const MAX_PARAM_BYTES: usize = 32 * 1024;
/// A symbol's name (a kernel's, a module global's) is at most this many bytes: the longest
/// mangled template instantiations are a few KiB. Longer names are corrupt or hostile files;
/// every reader applies this bound, since a name is copied into each line that shows it.
pub const MAX_SYMBOL_NAME_BYTES: usize = 16 << 10;
/// In version 2, segment offsets in the (virtual) snapshot are multiples of this, so each
/// segment's blob can be memory-mapped in place.
pub const SEGMENT_ALIGN: u64 = 4096;

/// Mapped addresses of a 64-bit Linux process end here (48-bit virtual addresses): a recorded
/// range past it (or wrapping) cannot be reserved by any process.
pub const MAPPABLE_END: u64 = 1 << 48;

/// Why the recorded range `addr`+`size` cannot be mapped by a replay, if it cannot.
pub fn unmappable_range(addr: u64, size: u64) -> Option<String> {
    let fits = addr.checked_add(size).is_some_and(|e| e <= MAPPABLE_END);
    (!fits).then(|| {
        format!(
            "the recorded range {addr:#x}+{size:#x} lies beyond the 48-bit user address space: no process can map it"
        )
    })
}

/// The threads of a block of these dimensions (saturating: three hostile dimensions multiply
/// past u64, and a saturated count is refused as more than any limit).
pub fn block_threads(block: [u32; 3]) -> u64 {
    block
        .iter()
        .fold(1u64, |threads, &v| threads.saturating_mul(u64::from(v)))
}

/// Why a launch of this geometry is refused by every CUDA GPU, if it is: the hardware limits
/// `replay`, `tune` and `check` apply alike (1024 threads a block, block z ≤ 64, grid x below
/// 2^31, grid y and z ≤ 65535).
pub fn geometry_problem(grid: [u32; 3], block: [u32; 3]) -> Option<String> {
    let d = |v: [u32; 3]| format!("{}×{}×{}", v[0], v[1], v[2]);
    if grid.contains(&0) || block.contains(&0) {
        Some(format!(
            "grid {} and block {} must be positive in every dimension",
            d(grid),
            d(block)
        ))
    } else if block_threads(block) > 1024 {
        Some(format!("block {} has more than 1024 threads", d(block)))
    } else if block[2] > 64 {
        Some(format!("block z {} is above 64", block[2]))
    } else if grid[0] > i32::MAX as u32 {
        Some(format!("grid {} is above 2147483647 in x", d(grid)))
    } else if grid[1] > 65535 || grid[2] > 65535 {
        Some(format!("grid {} is above 65535 in y or z", d(grid)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three hostile block dimensions multiply past u64: refused, never an overflow.
    #[test]
    fn a_block_whose_threads_overflow_is_refused() {
        assert_eq!(block_threads([u32::MAX; 3]), u64::MAX);
        assert_eq!(block_threads([32, 4, 2]), 256);
        let why = geometry_problem([1, 1, 1], [u32::MAX; 3]).unwrap();
        assert!(why.contains("more than 1024 threads"), "{why}");
        // 2^31 × 2^31 × 4 is 2^64, which wrapped to 0 threads in a release build.
        let why = geometry_problem([1, 1, 1], [1 << 31, 1 << 31, 4]).unwrap();
        assert!(why.contains("more than 1024 threads"), "{why}");
    }
}
