//! Finding NVIDIA's libraries: whether libcuda can be loaded at all (below both the driver's
//! entry points and their errors: an error describes itself through the driver only when there
//! is one), and where a CUDA installation keeps the libraries the loader may not find by itself
//! (libcupti for the recorder, libnvrtc for compiling candidates).

use cudarc::driver::sys;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Whether libcuda can be loaded at all (checked once).
pub fn present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the candidate library names; calls nothing in them.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// The CUDA installations this machine seems to have, most specific first: `$CUDA_HOME`,
/// `$CUDA_PATH`, the one `nvcc` on `PATH` belongs to, then `/usr/local/cuda`.
fn cuda_homes() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("nvcc").is_file() {
                if let Some(home) = dir.parent() {
                    homes.push(home.to_path_buf());
                }
                break;
            }
        }
    }
    homes.push(PathBuf::from("/usr/local/cuda"));
    homes
}

/// Whether `path` is a file with an execute permission (a link to one counts), as a shell's
/// lookup asks before it runs a program.
pub fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    // Any execute bit, as `which` takes it: root may run a file with any of them set.
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` in each directory of `PATH`, in order.
fn path_candidates(name: &str) -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect())
        .unwrap_or_default()
}

/// The program `name` as the shell finds it: the first executable file of that name in a
/// directory of `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    path_candidates(name)
        .into_iter()
        .find(|p| is_executable_file(p))
}

/// A CUDA tool (`ncu`, …): on `PATH`, else in the `bin` of a CUDA installation
/// ([`cuda_homes`]), else in the newest `/opt/nvidia/nsight-compute/<version>`; an executable
/// file only (a file of that name without execute permission is passed over, as the shell
/// does: [`cuda_tool_not_executable`] names it).
pub fn find_cuda_tool(name: &str) -> Option<PathBuf> {
    cuda_tool_candidates(name)
        .into_iter()
        .find(|p| is_executable_file(p))
}

/// A file named like the CUDA tool where [`find_cuda_tool`] looks, that cannot be run (no
/// execute permission): what to name when the tool is not found.
pub fn cuda_tool_not_executable(name: &str) -> Option<PathBuf> {
    cuda_tool_candidates(name)
        .into_iter()
        .find(|p| p.is_file() && !is_executable_file(p))
}

/// Where [`find_cuda_tool`] looks, in order.
fn cuda_tool_candidates(name: &str) -> Vec<PathBuf> {
    let on_path = path_candidates(name);
    let in_homes = cuda_homes().into_iter().map(|h| h.join("bin").join(name));
    let nsight = std::fs::read_dir("/opt/nvidia/nsight-compute")
        .map(|d| {
            let mut v: Vec<PathBuf> = d.flatten().map(|e| e.path().join(name)).collect();
            v.sort();
            v.reverse();
            v
        })
        .unwrap_or_default();
    on_path.into_iter().chain(in_homes).chain(nsight).collect()
}

/// The library directories of the CUDA installations ([`cuda_homes`]), then the distribution's
/// own directory.
pub fn cuda_library_dirs() -> Vec<PathBuf> {
    let homes = cuda_homes();
    let mut dirs = Vec::new();
    for home in homes {
        for sub in [
            "lib64",
            "extras/CUPTI/lib64",
            "targets/x86_64-linux/lib",
            "targets/sbsa-linux/lib",
        ] {
            dirs.push(home.join(sub));
        }
    }
    dirs.push(PathBuf::from("/usr/lib/x86_64-linux-gnu"));
    dirs.push(PathBuf::from("/usr/lib/aarch64-linux-gnu"));
    dirs.dedup();
    dirs
}

/// `lib<stem>.so` in the CUDA installations ([`cuda_library_dirs`]), or, where only versioned
/// files exist (the unversioned name is a development symlink), the highest `lib<stem>.so.N`.
pub fn find_cuda_library(stem: &str) -> Option<PathBuf> {
    cuda_library_dirs()
        .iter()
        .find_map(|dir| versioned(dir, &format!("lib{stem}.so")))
}

/// `dir/name` when it exists, else the `dir/name.*` sorting last.
pub(crate) fn versioned(dir: &Path, name: &str) -> Option<PathBuf> {
    let plain = dir.join(name);
    if plain.exists() {
        return Some(plain);
    }
    let prefix = format!("{name}.");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|q| {
            q.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .max()
}
