//! What only legacy descriptors have, and where their recorded region starts: types the
//! descriptor holds, below both it and the legacy parser.

use super::start::StartInference;

/// What only legacy descriptors have.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Legacy {
    /// `NumTeamsClause` as recorded: LLVM 16–17 the `num_teams` clause (0 = none), LLVM 18–22
    /// the number of blocks launched.
    pub num_teams_clause: u32,
    /// `ThreadLimitClause` as recorded: the `thread_limit` clause, or the threads launched.
    pub thread_limit_clause: u32,
    /// Bytes the bump allocator had handed out: the length of `.memory`.
    pub device_memory_size: u64,
    pub start: RegionStart,
    /// Why the layout was taken to be this generation, in words.
    pub evidence: String,
}

/// Where the recorded region starts, and how rr-tui knows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionStart {
    /// `BumpAllocVAStart` (LLVM 18–22).
    Recorded(u64),
    /// Not recorded (LLVM 16–17), inferred from the pointer arguments without ambiguity.
    Inferred {
        addr: u64,
        inference: StartInference,
    },
    /// Not recorded and not inferable: no pointer argument, or several starts fit.
    Unknown(StartInference),
    /// Given on the command line (`--base-address`), with what looks wrong about it.
    Given { addr: u64, doubts: Vec<String> },
}

impl RegionStart {
    pub fn addr(&self) -> Option<u64> {
        match self {
            RegionStart::Recorded(a)
            | RegionStart::Inferred { addr: a, .. }
            | RegionStart::Given { addr: a, .. } => Some(*a),
            RegionStart::Unknown(_) => None,
        }
    }

    /// One sentence: the start and how it is known, or why it is not and what to pass.
    pub fn describe(&self, region_size: u64) -> String {
        let hexes = |v: &[u64]| {
            v.iter()
                .map(|a| format!("{a:#x}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            RegionStart::Recorded(a) => format!("{a:#x} (BumpAllocVAStart)"),
            RegionStart::Given { addr, doubts } if doubts.is_empty() => {
                format!("{addr:#x} (--base-address)")
            }
            RegionStart::Given { addr, doubts } => {
                format!(
                    "{addr:#x} (--base-address; doubtful: {})",
                    doubts.join("; ")
                )
            }
            RegionStart::Inferred { addr, inference } => {
                let (_, how) = inference.start().expect("inferred implies a start");
                let assumption = if how.alignment == super::start::CUDA_ALLOC_ALIGN {
                    "the only 2 MiB-aligned start (cuMemAlloc's alignment)".to_string()
                } else {
                    format!(
                        "the only {} MiB-aligned start (an observed driver alignment, not a guarantee: \
                         {} 2 MiB-aligned starts fit)",
                        how.alignment >> 20,
                        inference.rule.candidate_count
                    )
                };
                // The pointers are `ArgPtrs` as the file holds them: each mapped section's
                // begin, which is what lies in the region. The kernel got `ArgPtrs + ArgOffsets`
                // (the addresses the arguments list shows), so a value here may differ from the
                // argument's by its offset: said, or the two look like a contradiction.
                format!(
                    "{addr:#x}, inferred: {assumption} whose {} region holds the {} pointer argument(s) {} \
                     (raw ArgPtrs as recorded, each the start of a mapped section, before ArgOffsets \
                     are added; the arguments the kernel got are ArgPtrs + ArgOffsets)",
                    crate::text::human(region_size),
                    how.inside,
                    hexes(&pointers_inside(&how.pointers, *addr, region_size))
                )
            }
            RegionStart::Unknown(inference) => {
                let rule = &inference.rule;
                if rule.inside == 0 {
                    "unknown: LLVM 16–17 did not record it, and no argument looks like a pointer into the \
                     region (16-byte aligned, between 4 GiB and 256 TiB); replay needs --base-address ADDR"
                        .to_string()
                } else {
                    let more = if rule.candidate_count > rule.candidates.len() as u64 {
                        ", …"
                    } else {
                        ""
                    };
                    format!(
                        "unknown: LLVM 16–17 did not record it, and {} 2 MiB-aligned starts hold the {} pointer \
                         argument(s) equally well ({}{more}); most likely {:#x} (right when the first \
                         allocation is an argument); replay needs --base-address ADDR",
                        rule.candidate_count,
                        rule.inside,
                        hexes(&rule.candidates),
                        rule.likely.unwrap_or(0)
                    )
                }
            }
        }
    }
}

fn pointers_inside(pointers: &[u64], start: u64, size: u64) -> Vec<u64> {
    let end = start as u128 + size as u128;
    pointers
        .iter()
        .copied()
        .filter(|&v| v >= start && (v as u128) < end)
        .collect()
}
