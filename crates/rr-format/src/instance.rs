//! The files of one instance: `<KernelHash>_<LaunchConfigHash>.<ext>` in the record directory,
//! or `<Name>.<ext>` for legacy records (LLVM 16–22), whose snapshots have other extensions.

use std::path::{Path, PathBuf};

use super::descriptor::Descriptor;
use super::ext::*;
use super::hash;

/// Which recorded snapshot of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Side {
    /// Device memory before the kernel (`.record_input`; legacy `.memory`).
    Input,
    /// Device memory after the kernel (`.record_output`; legacy `.original.output`).
    Output,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceFiles {
    pub dir: PathBuf,
    pub stem: String,
}

impl InstanceFiles {
    /// From the path of a descriptor (`dir/<stem>.json`).
    pub fn from_descriptor_path(json: &Path) -> InstanceFiles {
        let dir = json
            .parent()
            .map(Path::to_path_buf)
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."));
        let stem = json
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        InstanceFiles { dir, stem }
    }

    pub fn file(&self, ext: &str) -> PathBuf {
        self.dir.join(format!("{}.{ext}", self.stem))
    }
    pub fn json(&self) -> PathBuf {
        self.file(EXT_JSON)
    }
    /// The file holding a recorded snapshot, as the descriptor's format names it (format 2
    /// records keep blobs instead: see `store::layout`).
    pub fn snapshot_file(&self, d: &Descriptor, side: Side) -> PathBuf {
        self.file(match (d.format.is_legacy(), side) {
            (false, Side::Input) => EXT_INPUT,
            (false, Side::Output) => EXT_OUTPUT,
            (true, Side::Input) => EXT_LEGACY_INPUT,
            (true, Side::Output) => EXT_LEGACY_OUTPUT,
        })
    }

    /// The replay output of the legacy `llvm-omp-kernel-replay` (`<Name>.replay.output`).
    pub fn legacy_replay_output(&self) -> PathBuf {
        self.file(EXT_LEGACY_REPLAY)
    }

    pub fn globals(&self) -> PathBuf {
        self.file(EXT_GLOBALS)
    }
    /// The device image as named: the instance's own `.image` (LLVM) or the shared file rr-tui
    /// records name (for display; open it through [`InstanceFiles::resolve_image`]).
    pub fn image(&self, d: &Descriptor) -> PathBuf {
        match &d.cuda {
            Some(c) => self.dir.join(&c.image_file),
            None => self.file(EXT_IMAGE),
        }
    }

    /// The device image to open. A path taken from the descriptor's contents (`ImageFile`) must
    /// resolve inside the record directory after following links.
    pub fn resolve_image(&self, d: &Descriptor) -> crate::Result<PathBuf> {
        match &d.cuda {
            Some(c) => crate::fsio::resolve_inside(&self.dir, &c.image_file, &self.json()),
            None => Ok(self.file(EXT_IMAGE)),
        }
    }

    /// The `.replay_output` LLVM's tool writes for a replay with this geometry: the launch
    /// configuration hash of the *replay*, in `out_dir` (the descriptor's directory by default).
    /// Legacy records are named by kernel, so theirs is `<Name>.replay_output` (beside, never
    /// over, `.original.output`).
    pub fn replay_output(
        &self,
        d: &Descriptor,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem: u32,
        out_dir: Option<&Path>,
    ) -> PathBuf {
        let dir = out_dir.unwrap_or(&self.dir);
        let stem = match &d.cuda {
            Some(c) => format!(
                "{}_{}",
                hash::kernel_hash(&d.name),
                hash::rr_launch_config_hash(grid, block, shared_mem, c.occurrence)
            ),
            None if d.format.is_legacy() => self.stem.clone(),
            None => hash::instance_stem(&d.name, grid[0], block[0], shared_mem),
        };
        dir.join(format!("{stem}.{EXT_REPLAY}"))
    }

    /// The stem the descriptor's contents predict; differs from `self.stem` when renamed.
    /// Legacy records are named by their kernel.
    pub fn expected_stem(d: &Descriptor) -> String {
        if d.format.is_legacy() {
            return d.name.clone();
        }
        match &d.cuda {
            Some(c) => format!(
                "{}_{}",
                hash::kernel_hash(&d.name),
                hash::rr_launch_config_hash(c.grid, c.block, d.shared_memory_size, c.occurrence)
            ),
            None => hash::instance_stem(&d.name, d.num_teams, d.num_threads, d.shared_memory_size),
        }
    }
}
