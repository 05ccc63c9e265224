//! The staging ring's tail: the plan kernel takes regions from the ring's head, on the device,
//! in the order the application's streams reach it; the recorder's thread gives them back in
//! the order it drains them, which may differ. The tail only moves past regions given back
//! without a gap, so the device never reuses memory still being drained. Regions are in the
//! ring's running count (bytes ever taken), as the plan kernel reports them. Pure: tested
//! without a GPU.

use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct RingTail {
    tail: u64,
    /// Regions given back beyond the tail: start → length.
    returned: BTreeMap<u64, u64>,
}

impl RingTail {
    /// Give back `len` bytes taken at `start`; returns the new tail when it moved.
    pub fn give_back(&mut self, start: u64, len: u64) -> Option<u64> {
        if len == 0 || start < self.tail {
            return None;
        }
        self.returned.insert(start, len);
        let before = self.tail;
        while let Some(len) = self.returned.remove(&self.tail) {
            self.tail += len;
        }
        (self.tail != before).then_some(self.tail)
    }

    #[cfg(test)]
    pub fn tail(&self) -> u64 {
        self.tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_moves_only_over_regions_given_back_without_a_gap() {
        let mut t = RingTail::default();
        // Taken on the device: [0, 100), [100, 350), [350, 400).
        assert_eq!(t.give_back(100, 250), None, "the first region is still out");
        assert_eq!(t.give_back(350, 50), None);
        assert_eq!(t.give_back(0, 100), Some(400), "now everything is back");
        assert_eq!(t.give_back(400, 0), None, "an empty region changes nothing");
        assert_eq!(t.give_back(10, 5), None, "behind the tail: ignored");
        assert_eq!(t.tail(), 400);
    }
}
