//! Space the recorder hands out itself, inside an area it allocated once (snapshot metadata on
//! the device, uploads in page-locked host memory): first fit, 256-byte aligned pieces, freed
//! pieces merged with their neighbours. Pure: tested without a GPU.

use std::collections::BTreeMap;

/// Pieces start and end on this many bytes (the alignment the kernels and copies want).
pub const ALIGN: u64 = 256;

#[derive(Debug)]
pub struct Arena {
    len: u64,
    /// Free pieces: start → length, disjoint and never adjacent (merged).
    free: BTreeMap<u64, u64>,
}

impl Arena {
    pub fn new(len: u64) -> Arena {
        let len = len / ALIGN * ALIGN;
        let mut free = BTreeMap::new();
        if len > 0 {
            free.insert(0, len);
        }
        Arena { len, free }
    }

    /// A piece of at least `size` bytes (rounded up to [`ALIGN`]): its offset, or `None` when
    /// no free piece is that large.
    pub fn take(&mut self, size: u64) -> Option<u64> {
        let size = size.max(1).checked_next_multiple_of(ALIGN)?;
        let (&at, &len) = self.free.iter().find(|(_, &len)| len >= size)?;
        self.free.remove(&at);
        if len > size {
            self.free.insert(at + size, len - size);
        }
        Some(at)
    }

    /// Give back the piece `take(size)` returned at `at`.
    pub fn give_back(&mut self, at: u64, size: u64) {
        let Some(size) = size.max(1).checked_next_multiple_of(ALIGN) else {
            return;
        };
        let (mut start, mut end) = (at, at.saturating_add(size).min(self.len));
        if start >= end {
            return;
        }
        if let Some((&p, &plen)) = self.free.range(..start).next_back() {
            if p + plen == start {
                self.free.remove(&p);
                start = p;
            }
        }
        if let Some(&nlen) = self.free.get(&end) {
            self.free.remove(&end);
            end += nlen;
        }
        self.free.insert(start, end - start);
    }

    pub fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }

    pub fn len(&self) -> u64 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_aligned_disjoint_and_merged_when_given_back() {
        let mut a = Arena::new(4096);
        let x = a.take(10).unwrap();
        let y = a.take(300).unwrap();
        let z = a.take(256).unwrap();
        assert_eq!((x, y, z), (0, 256, 768));
        assert_eq!(a.free_bytes(), 4096 - 1024);
        assert_eq!(a.take(4096), None, "too large for what is free");
        a.give_back(y, 300);
        assert_eq!(a.take(512), Some(256), "the freed piece is reused first");
        a.give_back(256, 512);
        a.give_back(x, 10);
        a.give_back(z, 256);
        assert_eq!(a.free_bytes(), 4096);
        assert_eq!(
            a.take(4096),
            Some(0),
            "everything merged back into one piece"
        );
        assert_eq!(
            Arena::new(100).take(1),
            None,
            "smaller than one aligned piece"
        );
    }
}
