//! The application's live device allocations, per context, from the allocation callbacks; and
//! which of them an instance keeps. Pure: tested without a GPU.

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

    /// The allocations of a context as `(addr, size)`, in address order.
    pub fn live(&self, context: u64) -> Vec<(u64, u64)> {
        self.by_context
            .get(&context)
            .map(|m| m.iter().map(|(&a, &(s, _))| (a, s)).collect())
            .unwrap_or_default()
    }

    /// The allocation containing `addr`, if any.
    pub fn containing(&self, context: u64, addr: u64) -> Option<(u64, u64)> {
        let m = self.by_context.get(&context)?;
        let (&start, &(size, _)) = m.range(..=addr).next_back()?;
        (addr < start.saturating_add(size)).then_some((start, size))
    }
}

/// The allocations that 8-byte-aligned words of the parameter buffer point into (the `args`
/// snapshot mode): pointers passed directly, and inside structs passed by value.
pub fn pointed_to(allocs: &Allocations, context: u64, params: &[u8]) -> Vec<(u64, u64)> {
    let mut found: Vec<(u64, u64)> = params
        .chunks_exact(8)
        .filter_map(|w| {
            let v = u64::from_le_bytes(w.try_into().ok()?);
            allocs.containing(context, v)
        })
        .collect();
    found.sort_unstable();
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
        assert_eq!(a.live(1), vec![(0x1000, 0x100), (0x4000, 0x1000)]);
        assert_eq!(a.containing(1, 0x4fff), Some((0x4000, 0x1000)));
        assert_eq!(a.containing(1, 0x5000), None);
        let mut params = 0x4010u64.to_le_bytes().to_vec();
        params.extend_from_slice(&7u64.to_le_bytes());
        params.extend_from_slice(&0x1000u64.to_le_bytes());
        assert_eq!(
            pointed_to(&a, 1, &params),
            vec![(0x1000, 0x100), (0x4000, 0x1000)]
        );
        a.remove(0, 0x1000);
        assert_eq!(
            a.live(1),
            vec![(0x4000, 0x1000)],
            "a free without a context is found"
        );
    }
}
