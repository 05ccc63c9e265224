//! LLVM's stable hashes (`llvm/ADT/StableHashing.h`): XXH3-64, seed 0.
//!
//! Instance files are named `<KernelHash>_<LaunchConfigHash>`, both as unsigned decimals. The
//! names are lookup keys only; we recompute them to check directories and to predict the name of
//! the `.replay_output` a replay with overridden geometry writes.

use xxhash_rust::xxh3::xxh3_64;

/// `get_stable_name`: the text after the last `.content.` if non-empty, else the name cut at the
/// last `.llvm.` and then at the last `.__uniq.`.
pub fn stable_name(name: &str) -> &str {
    if let Some(pos) = name.rfind(".content.") {
        let tail = &name[pos + ".content.".len()..];
        if !tail.is_empty() {
            return tail;
        }
    }
    let mut cut = name;
    if let Some(pos) = cut.rfind(".llvm.") {
        cut = &cut[..pos];
    }
    if let Some(pos) = cut.rfind(".__uniq.") {
        cut = &cut[..pos];
    }
    cut
}

/// `stable_hash_name(Name)`.
pub fn kernel_hash(name: &str) -> u64 {
    xxh3_64(stable_name(name).as_bytes())
}

/// `stable_hash_combine(A, B, ...)`: XXH3 of the little-endian u64 array.
pub fn combine(values: &[u64]) -> u64 {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    xxh3_64(&bytes)
}

/// LLVM's launch configuration hash: `combine(NumTeams, NumThreads, SharedMemorySize)`.
pub fn launch_config_hash(num_teams: u32, num_threads: u32, shared_mem: u32) -> u64 {
    combine(&[num_teams as u64, num_threads as u64, shared_mem as u64])
}

/// The file stem `<KernelHash>_<LaunchConfigHash>` LLVM uses for an instance.
///
/// ```
/// use rr_format::hash::instance_stem;
/// // The worked example of llvm-record-format.md §1.2.
/// assert_eq!(
///     instance_stem("__omp_offloading_10302_1e5d1a_main_l27", 256, 128, 0),
///     "595103817563120778_10610289158582298445"
/// );
/// ```
pub fn instance_stem(name: &str, num_teams: u32, num_threads: u32, shared_mem: u32) -> String {
    format!(
        "{}_{}",
        kernel_hash(name),
        launch_config_hash(num_teams, num_threads, shared_mem)
    )
}

/// rr-tui records key instances by full 3-D geometry and the launch's occurrence index, so two
/// launches that differ only in y/z (which LLVM cannot express) get distinct files.
pub fn rr_launch_config_hash(
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem: u32,
    occurrence: u64,
) -> u64 {
    let mut v: Vec<u64> = grid.iter().chain(block.iter()).map(|&x| x as u64).collect();
    v.push(shared_mem as u64);
    v.push(occurrence);
    combine(&v)
}

/// Parse a file stem of the form `<u64>_<u64>`.
pub fn parse_stem(stem: &str) -> Option<(u64, u64)> {
    let (a, b) = stem.split_once('_')?;
    if a.is_empty()
        || b.is_empty()
        || !a.bytes().all(|c| c.is_ascii_digit())
        || !b.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_examples_from_the_format_notes() {
        assert_eq!(
            kernel_hash("__omp_offloading_10302_1e5d1a_main_l27"),
            595103817563120778
        );
        assert_eq!(launch_config_hash(256, 128, 0), 10610289158582298445);
        assert_eq!(kernel_hash("foo.llvm.1234"), 12352915711150947722);
        assert_eq!(xxh3_64(b""), 0x2d06800538d394c2);
    }

    #[test]
    fn stable_name_rules() {
        assert_eq!(stable_name("a.content.b"), "b");
        assert_eq!(stable_name("a.content."), "a.content.");
        assert_eq!(stable_name("f.__uniq.123.llvm.9"), "f");
        assert_eq!(stable_name("plain"), "plain");
    }

    #[test]
    fn stems_parse_only_two_decimals() {
        assert_eq!(parse_stem("12_34"), Some((12, 34)));
        assert_eq!(parse_stem("12_"), None);
        assert_eq!(parse_stem("x_1"), None);
        assert_eq!(parse_stem("99999999999999999999_1"), None);
    }
}
