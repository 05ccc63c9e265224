//! The texture and surface objects the program created, and which of them a launch passes.
//!
//! Handles are small integers (1, 2, … in creation order, measured on the GPU machine), so an
//! 8-byte parameter word equal to a live handle is taken to be that object: the descriptor
//! says so and `inspect` shows it, and a replay recreates the object (creating objects in
//! handle order, so that a fresh process gets the same numbers where it can). Pure: tested
//! without a GPU.

use std::collections::HashMap;

use rr_cuda::cupti::CapturedObject;

#[derive(Debug, Default)]
pub struct Objects {
    live: HashMap<u64, CapturedObject>,
}

impl Objects {
    pub fn created(&mut self, handle: u64, object: CapturedObject) {
        if handle != 0 {
            self.live.insert(handle, object);
        }
    }

    pub fn destroyed(&mut self, handle: u64) {
        self.live.remove(&handle);
    }

    /// The objects among a launch's 8-byte parameter words `(byte offset, value)`.
    pub fn passed(&self, words: &[(u32, u64)]) -> Vec<(u32, u64, CapturedObject)> {
        if self.live.is_empty() {
            return vec![];
        }
        words
            .iter()
            .filter_map(|&(off, v)| self.live.get(&v).map(|o| (off, v, *o)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_cuda::cupti::CapturedResource;
    use rr_format::objects::ObjectKind;

    #[test]
    fn live_handles_among_parameter_words() {
        let mut o = Objects::default();
        let surf = CapturedObject {
            kind: ObjectKind::Surface,
            resource: CapturedResource::Array(0xabc),
            texture: None,
            view: None,
        };
        o.created(3, surf);
        o.created(4, surf);
        o.destroyed(4);
        let found = o.passed(&[(0, 3), (8, 4), (16, 1 << 40)]);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].0, found[0].1), (0, 3));
    }
}
