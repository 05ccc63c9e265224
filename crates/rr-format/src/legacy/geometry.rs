//! The launch geometry of a legacy record. LLVM 18–22 wrote the blocks and threads they launched
//! under the clause key names; LLVM 16–17 wrote the `num_teams` / `thread_limit` clause values
//! (0 = no clause) and let the plugin choose (`GenericKernelTy::getNumThreads` /
//! `getNumBlocks`, 16.0.6 and 17.0.6), which this module repeats with NVPTX's grid values.
//!
//! What is not repeated: 17's reduction of threads for loops with few iterations (it needs the
//! device's minimum-threads setting). A derived geometry is therefore a guess that replay says
//! it made; OpenMP results rarely depend on it, and `--num-teams` / `--num-threads` override it.

use crate::descriptor::{Descriptor, RecordFormat};

/// `GV_Default_WG_Size` for NVPTX: threads when there is no `thread_limit` clause.
pub const DEFAULT_THREADS: u32 = 128;
/// `GV_Default_Num_Teams` for NVPTX: the most blocks chosen without a `num_teams` clause.
pub const DEFAULT_TEAMS: u32 = 3200;
/// `GV_Max_WG_Size`, also every NVIDIA GPU's block limit.
pub const MAX_THREADS: u32 = 1024;
/// Generic-mode kernels get one extra warp for the main thread's state machine.
pub const WARP: u32 = 32;
/// CUDA's grid x limit (`getBlockLimit`).
pub const MAX_BLOCKS: u32 = i32::MAX as u32;

/// A kernel's OpenMP execution mode: the image's `<Name>_exec_mode` global (`OMP_TGT_EXEC_MODE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ExecMode {
    Generic,
    Spmd,
    GenericSpmd,
}

impl ExecMode {
    /// From the global's byte; the plugin assumes SPMD when the global is absent.
    pub fn from_flag(flag: u8) -> Option<ExecMode> {
        match flag {
            1 => Some(ExecMode::Generic),
            2 => Some(ExecMode::Spmd),
            3 => Some(ExecMode::GenericSpmd),
            _ => None,
        }
    }

    /// The mode of `kernel` as its device image declares it, if it does.
    pub fn of_kernel(image: &[u8], kernel: &str) -> Option<ExecMode> {
        let bytes = crate::image::global_initial_bytes(image, &format!("{kernel}_exec_mode"))?;
        ExecMode::from_flag(*bytes.first()?)
    }

    pub fn label(self) -> &'static str {
        match self {
            ExecMode::Generic => "generic",
            ExecMode::Spmd => "SPMD",
            ExecMode::GenericSpmd => "generic-SPMD",
        }
    }
}

/// `(blocks, threads)` of the launch a legacy record describes.
pub fn launched(
    format: RecordFormat,
    teams_clause: u32,
    threads_clause: u32,
    trip_count: u64,
    mode: ExecMode,
) -> (u32, u32) {
    let recorded_as_launched = format != RecordFormat::LegacyLlvm16;
    if recorded_as_launched && teams_clause > 0 && threads_clause > 0 {
        return (teams_clause, threads_clause);
    }
    let threads = if threads_clause > 0 {
        let extra = if mode == ExecMode::Generic && !recorded_as_launched {
            WARP
        } else {
            0
        };
        threads_clause.saturating_add(extra).min(MAX_THREADS)
    } else {
        DEFAULT_THREADS
    };
    let blocks = if teams_clause > 0 {
        teams_clause.min(MAX_BLOCKS)
    } else if trip_count > 0 {
        let by_trip_count = match mode {
            ExecMode::Spmd => trip_count.div_ceil(threads as u64),
            ExecMode::Generic | ExecMode::GenericSpmd => trip_count,
        };
        by_trip_count.min(DEFAULT_TEAMS as u64) as u32
    } else {
        DEFAULT_TEAMS
    };
    (blocks, threads)
}

/// Whether the plugin chose part of the geometry (no clause recorded): replay says it guessed.
pub fn is_derived(format: RecordFormat, teams_clause: u32, threads_clause: u32) -> bool {
    format == RecordFormat::LegacyLlvm16 && (teams_clause == 0 || threads_clause == 0)
}

/// The `(blocks, threads)` an LLVM 16–17 record launched, using the kernel's execution mode
/// from its image when there is one, and what was assumed or derived, in words (`None` when
/// the record says it all: every LLVM 18–22 record, and 16–17 clauses of an SPMD kernel).
pub fn for_record(d: &Descriptor, image: Option<&[u8]>) -> ((u32, u32), Option<String>) {
    let Some(l) = d
        .legacy
        .as_ref()
        .filter(|_| d.format == RecordFormat::LegacyLlvm16)
    else {
        return ((d.num_teams, d.num_threads), None);
    };
    let found = image.and_then(|bytes| ExecMode::of_kernel(bytes, &d.name));
    let mode = found.unwrap_or(ExecMode::Spmd);
    let (teams, threads) = (l.num_teams_clause, l.thread_limit_clause);
    let launched = launched(d.format, teams, threads, d.loop_trip_count, mode);
    let mode_text = match (found, image) {
        (Some(m), _) => format!("{} mode, from the image's {}_exec_mode", m.label(), d.name),
        (None, Some(_)) => "SPMD mode: the image declares no execution mode".into(),
        (None, None) => "SPMD mode assumed: no image to read the execution mode from".into(),
    };
    let note = if is_derived(d.format, teams, threads) {
        Some(format!(
            "no num_teams/thread_limit clause recorded ({teams}/{threads}): the LLVM 16–17 plugin chose the launch; \
             derived {} × {} from LoopTripCount {} ({mode_text}), a guess that --num-teams/--num-threads override",
            launched.0, launched.1, d.loop_trip_count
        ))
    } else if mode == ExecMode::Generic {
        Some(format!(
            "thread_limit {threads} + one warp: the plugin launches generic-mode kernels with {} threads ({mode_text})",
            launched.1
        ))
    } else {
        None
    };
    (launched, note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use RecordFormat::{LegacyLlvm16 as L16, LegacyLlvm18 as L18};

    #[test]
    fn llvm16_clauses_pass_through_and_generic_kernels_get_a_warp() {
        assert_eq!(launched(L16, 16, 64, 1024, ExecMode::Spmd), (16, 64));
        assert_eq!(launched(L16, 16, 64, 1024, ExecMode::Generic), (16, 96));
        assert_eq!(launched(L16, 16, 1024, 0, ExecMode::Generic), (16, 1024));
    }

    #[test]
    fn llvm16_without_clauses_derives_from_the_trip_count() {
        // record-fixtures/llvm16-saxpy's rr_scale_global: no clauses, 1024 iterations.
        assert_eq!(launched(L16, 0, 0, 1024, ExecMode::Spmd), (8, 128));
        assert_eq!(launched(L16, 0, 0, 1 << 40, ExecMode::Spmd), (3200, 128));
        assert_eq!(launched(L16, 0, 0, 100, ExecMode::Generic), (100, 128));
        assert_eq!(launched(L16, 0, 0, 0, ExecMode::Spmd), (3200, 128));
        assert_eq!(launched(L16, 0, 256, 1024, ExecMode::Spmd), (4, 256));
        assert!(is_derived(L16, 0, 64));
        assert!(!is_derived(L16, 16, 64));
    }

    #[test]
    fn llvm18_records_hold_the_launched_geometry() {
        assert_eq!(launched(L18, 4, 256, 1024, ExecMode::Generic), (4, 256));
        assert!(!is_derived(L18, 4, 256));
        // Never zero, whatever a damaged record says.
        assert_eq!(launched(L18, 0, 0, 0, ExecMode::Spmd), (3200, 128));
    }

    #[test]
    fn exec_mode_flags() {
        assert_eq!(ExecMode::from_flag(1), Some(ExecMode::Generic));
        assert_eq!(ExecMode::from_flag(3), Some(ExecMode::GenericSpmd));
        assert_eq!(ExecMode::from_flag(0), None);
    }
}
