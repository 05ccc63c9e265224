//! Which virtual address ranges to reserve and which to back with physical memory.
//!
//! Measured on the GPU machine (cuda-notes.md §7): `cuMemAddressReserve` ignores the address hint
//! for small reservations (2 MiB) and honours it for ≥ 64 MiB at a free, 32 MiB-aligned address.
//! So reservations are at least 64 MiB and start 32 MiB-aligned at or below the recorded start;
//! physical memory is mapped in 2 MiB granules only where recorded bytes lie. LLVM records
//! reserve their whole `VAllocSize` at `VAllocAddr`, as libomptarget does. Legacy records
//! (LLVM 16–22) name only the bytes used, whose start a `cuMemAlloc` chose: they are planned
//! like rr-tui segments.

use rr_cuda::Range;
use rr_format::{Descriptor, Segment};

pub const GRANULE: u64 = 2 << 20;
pub const RESERVE_ALIGN: u64 = 32 << 20;
pub const MIN_RESERVATION: u64 = 64 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub reservations: Vec<Range>,
    pub mappings: Vec<Range>,
}

impl Plan {
    pub fn mapped_bytes(&self) -> u64 {
        self.mappings.iter().map(|m| m.size).sum()
    }
}

fn align_down(v: u64, a: u64) -> u64 {
    v / a * a
}
/// Saturating: the descriptor parser bounds every address and size, and a hostile one that
/// slipped through must give an impossible reservation (refused by the driver), not a panic.
fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a).saturating_mul(a)
}

/// Merge ranges that overlap or touch (input in any order).
pub(crate) fn merge(mut v: Vec<Range>) -> Vec<Range> {
    v.sort_by_key(|r| r.addr);
    let mut out: Vec<Range> = Vec::new();
    for r in v {
        match out.last_mut() {
            Some(last) if r.addr <= last.end() => last.size = last.size.max(r.end() - last.addr),
            _ => out.push(r),
        }
    }
    out
}

/// Plan the device memory of `segments`; `avoid`: ranges the reservations must stay off (the
/// recorded host memory, mapped at its own addresses).
pub fn plan(d: &Descriptor, segments: &[Segment], avoid: &[Range]) -> Plan {
    let mappings = merge(
        segments
            .iter()
            .filter(|s| s.size > 0)
            .map(|s| {
                let a = align_down(s.addr, GRANULE);
                Range {
                    addr: a,
                    size: align_up(s.end(), GRANULE) - a,
                }
            })
            .collect(),
    );
    let reservations = if d.cuda.is_none() && d.legacy.is_none() {
        let size = align_up(
            d.valloc_size.max(
                mappings
                    .last()
                    .map(|m| m.end() - d.valloc_addr)
                    .unwrap_or(0),
            ),
            GRANULE,
        );
        vec![Range {
            addr: d.valloc_addr,
            size: size.max(GRANULE),
        }]
    } else {
        merge(mappings.iter().map(|m| reservation(m, avoid)).collect())
    };
    Plan {
        reservations,
        mappings,
    }
}

/// The reservation for mapping `m`: at least 64 MiB from a 32 MiB-aligned start at or below
/// it, off every `avoid` range. A program's pinned host memory can lie within 64 MiB of its
/// device memory (measured with JAX), so when the first choice would cover some, the start moves
/// down (up to 64 MiB); failing that the reservation is only the mapping itself, which the
/// driver may place elsewhere (then the replay says the address is in use).
fn reservation(m: &Range, avoid: &[Range]) -> Range {
    let clear = |r: &Range| !avoid.iter().any(|h| h.addr < r.end() && r.addr < h.end());
    let base = align_down(m.addr, RESERVE_ALIGN);
    for shift in 0..=2u64 {
        let Some(start) = base.checked_sub(shift * RESERVE_ALIGN) else {
            break;
        };
        let end = align_up(m.end(), RESERVE_ALIGN).max(start.saturating_add(MIN_RESERVATION));
        let r = Range {
            addr: start,
            size: end - start,
        };
        if clear(&r) {
            return r;
        }
    }
    *m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rr(segments: Vec<Segment>) -> Descriptor {
        Descriptor::rr_for_tests(segments)
    }

    #[test]
    fn scattered_segments_share_granules_and_reservations() {
        let segs = vec![
            Segment::device(0x7f61_1c80_0000, 0x4000, 0),
            Segment::device(0x7f61_1c80_4000, 0x4000, 0x4000),
            Segment::device(0x7f61_2000_0000, 3 << 20, 0x8000),
        ];
        let p = plan(&rr(segs.clone()), &segs, &[]);
        assert_eq!(
            p.mappings,
            vec![
                Range {
                    addr: 0x7f61_1c80_0000,
                    size: GRANULE
                },
                Range {
                    addr: 0x7f61_2000_0000,
                    size: 4 << 20
                }
            ]
        );
        for r in &p.reservations {
            assert_eq!(r.addr % RESERVE_ALIGN, 0);
            assert!(r.size >= MIN_RESERVATION);
        }
        for m in &p.mappings {
            assert!(
                p.reservations
                    .iter()
                    .any(|r| r.addr <= m.addr && m.end() <= r.end()),
                "{m:?} not covered"
            );
        }
        // 0x7f611c000000 + 64 MiB covers both granules: one reservation.
        assert_eq!(p.reservations.len(), 1);
    }

    #[test]
    fn reservations_keep_off_recorded_host_memory() {
        // JAX's layout: device memory at 0x7f8e14000000, pinned host memory 38 MiB above it.
        let segs = vec![Segment::device(0x7f8e_1400_0000, 0x20_0000, 0)];
        let host = Range {
            addr: 0x7f8e_1660_0000,
            size: 0x20_0000,
        };
        let p = plan(&rr(segs.clone()), &segs, &[host]);
        let r = p.reservations[0];
        assert!(
            r.size >= MIN_RESERVATION && r.addr.is_multiple_of(RESERVE_ALIGN),
            "{r:?}"
        );
        assert!(r.addr <= 0x7f8e_1400_0000 && r.end() >= 0x7f8e_1420_0000);
        assert!(
            r.end() <= host.addr || r.addr >= host.end(),
            "{r:?} covers {host:?}"
        );
        // Boxed in on both sides: only the mapping itself.
        let below = Range {
            addr: 0x7f8e_1200_0000,
            size: 0x20_0000,
        };
        let p = plan(&rr(segs.clone()), &segs, &[host, below]);
        assert_eq!(p.reservations, p.mappings);
    }

    #[test]
    fn llvm_reserves_the_whole_region() {
        let s = r#"{"ArgOffsets":[],"ArgPtrs":[],"DeviceId":0,"LoopTripCount":0,"Name":"k","NumArgs":0,"NumTeams":1,"NumThreads":1,"SharedMemorySize":0,"TeamsLimits":[0,0],"ThreadsLimits":[0,0],"VAllocAddr":23335631060992,"VAllocSize":268435456}"#;
        let d = Descriptor::parse(s.as_bytes(), std::path::Path::new("x")).unwrap();
        let p = plan(&d, &d.segments(49152), &[]);
        assert_eq!(
            p.reservations,
            vec![Range {
                addr: 0x153940000000,
                size: 256 << 20
            }]
        );
        assert_eq!(
            p.mappings,
            vec![Range {
                addr: 0x153940000000,
                size: GRANULE
            }]
        );
        assert_eq!(plan(&d, &d.segments(0), &[]).mappings, vec![]);
    }

    #[test]
    fn legacy_regions_get_a_large_aligned_reservation() {
        // BumpAllocVAStart 0x7fd7f6000000 (32 MiB-aligned), 8 KiB used.
        let s = r#"{"ArgOffsets":[],"ArgPtrs":[],"BumpAllocVAStart":140565521891328,"DeviceId":0,"DeviceMemorySize":8192,"LoopTripCount":0,"Name":"k","NumArgs":0,"NumTeamsClause":1,"ThreadLimitClause":1}"#;
        let d = Descriptor::parse(s.as_bytes(), std::path::Path::new("k.json")).unwrap();
        let p = plan(&d, &d.segments(8192), &[]);
        assert_eq!(
            p.mappings,
            vec![Range {
                addr: 0x7fd7_f600_0000,
                size: GRANULE
            }]
        );
        assert_eq!(
            p.reservations,
            vec![Range {
                addr: 0x7fd7_f600_0000,
                size: MIN_RESERVATION
            }]
        );
    }
}
