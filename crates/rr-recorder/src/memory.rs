//! The application's live allocations, per context, from the allocation callbacks (device
//! memory, and page-locked host memory mapped into the device address space); and which of them
//! an instance keeps. Pure: tested without a GPU.

use std::collections::{BTreeMap, HashMap};

use rr_cuda::cupti::{AllocKind, Allocation};

#[derive(Default)]
pub struct Allocations {
    /// Per context: start address → (size, kind).
    by_context: HashMap<u64, BTreeMap<u64, (u64, AllocKind)>>,
}

impl Allocations {
    pub fn add(&mut self, a: Allocation) {
        if a.size == 0 {
            return;
        }
        self.by_context
            .entry(a.context)
            .or_default()
            .insert(a.addr, (a.size, a.kind));
    }

    /// Forget the allocation starting at `addr` (a free, an unmap). Contexts can be null in a
    /// free callback (no current context): then every context is searched.
    pub fn remove(&mut self, context: u64, addr: u64) {
        if let Some(m) = self.by_context.get_mut(&context) {
            if m.remove(&addr).is_some() {
                return;
            }
        }
        for m in self.by_context.values_mut() {
            if m.remove(&addr).is_some() {
                return;
            }
        }
    }

    /// Forget everything of `context` (it was destroyed: its memory is freed).
    pub fn forget_context(&mut self, context: u64) {
        self.by_context.remove(&context);
    }

    /// What a kernel of `context` can reach: the context's device allocations and the mapped
    /// host memory of every context (page-locked host memory is portable under unified
    /// addressing), in address order.
    pub fn live(&self, context: u64) -> Vec<Live> {
        let mut out: Vec<Live> = Vec::new();
        for (&ctx, m) in &self.by_context {
            for (&addr, &(size, kind)) in m {
                let host = kind == AllocKind::Host;
                if ctx == context || host {
                    out.push(Live { addr, size, host });
                }
            }
        }
        out.sort_unstable_by_key(|l| l.addr);
        out.dedup_by_key(|l| l.addr);
        // Overlapping entries (a stale allocation whose free was not seen) would make a record
        // with overlapping segments: keep the first of each overlap.
        let mut kept: Vec<Live> = Vec::with_capacity(out.len());
        for l in out {
            if kept
                .last()
                .is_none_or(|k| k.addr.saturating_add(k.size) <= l.addr)
            {
                kept.push(l);
            }
        }
        kept
    }

    /// The allocation containing `addr`, if any (the context's, or mapped host memory).
    pub fn containing(&self, context: u64, addr: u64) -> Option<Live> {
        self.live(context)
            .into_iter()
            .find(|l| addr >= l.addr && addr < l.addr.saturating_add(l.size))
    }
}

/// A live allocation: `size` bytes at `addr`, host memory or device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    pub addr: u64,
    pub size: u64,
    pub host: bool,
}

/// The allocations that 8-byte words of the parameter buffer point into (the `args` snapshot
/// mode): pointers passed directly, and inside structs passed by value — at any byte offset,
/// since a packed struct may hold one unaligned (a word that only looks like a pointer costs
/// an allocation more in the snapshot, never a wrong replay).
pub fn pointed_to(allocs: &Allocations, context: u64, params: &[u8]) -> Vec<Live> {
    let live = allocs.live(context);
    let mut found: Vec<Live> = params
        .windows(8)
        .filter_map(|w| {
            let v = u64::from_le_bytes(w.try_into().ok()?);
            let k = live.partition_point(|l| l.addr <= v).checked_sub(1)?;
            let l = live[k];
            (v < l.addr.saturating_add(l.size)).then_some(l)
        })
        .collect();
    found.sort_unstable_by_key(|l| l.addr);
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(addr: u64, size: u64) -> Allocation {
        Allocation {
            context: 1,
            addr,
            size,
            kind: AllocKind::Device,
        }
    }

    #[test]
    fn tracks_and_finds_allocations() {
        let mut a = Allocations::default();
        a.add(alloc(0x1000, 0x100));
        a.add(alloc(0x4000, 0x1000));
        a.add(alloc(0x9000, 0x10));
        a.remove(1, 0x9000);
        let dev = |addr, size| Live {
            addr,
            size,
            host: false,
        };
        assert_eq!(a.live(1), vec![dev(0x1000, 0x100), dev(0x4000, 0x1000)]);
        assert_eq!(a.containing(1, 0x4fff), Some(dev(0x4000, 0x1000)));
        assert_eq!(a.containing(1, 0x5000), None);
        let mut params = 0x4010u64.to_le_bytes().to_vec();
        params.extend_from_slice(&7u64.to_le_bytes());
        params.extend_from_slice(&0x1000u64.to_le_bytes());
        assert_eq!(
            pointed_to(&a, 1, &params),
            vec![dev(0x1000, 0x100), dev(0x4000, 0x1000)]
        );
        // A pointer at an odd offset of a packed struct is found too.
        let mut packed = vec![0u8; 3];
        packed.extend_from_slice(&0x4020u64.to_le_bytes());
        assert_eq!(pointed_to(&a, 1, &packed), vec![dev(0x4000, 0x1000)]);
        a.remove(0, 0x1000);
        assert_eq!(
            a.live(1),
            vec![dev(0x4000, 0x1000)],
            "a free without a context is found"
        );
        // Mapped host memory of another context is reachable; its device memory is not.
        a.add(Allocation {
            context: 2,
            addr: 0x9000,
            size: 0x10,
            kind: AllocKind::Host,
        });
        a.add(alloc(0x20000, 0x10).with_context(2));
        assert_eq!(
            a.live(1),
            vec![
                dev(0x4000, 0x1000),
                Live {
                    addr: 0x9000,
                    size: 0x10,
                    host: true
                }
            ]
        );
        // A stale entry overlapping a newer one is not kept twice.
        a.add(alloc(0x4800, 0x100));
        assert_eq!(a.live(1).len(), 2);
    }

    trait WithContext {
        fn with_context(self, c: u64) -> Self;
    }
    impl WithContext for Allocation {
        fn with_context(mut self, c: u64) -> Self {
            self.context = c;
            self
        }
    }
}
