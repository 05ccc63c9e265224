//! What the recorder has stored already, so that memory seen before is neither copied to the
//! host nor hashed again:
//!
//! - by content: the fingerprint of a chunk (its leaf sums, computed on the GPU by the snapshot
//!   kernels, combined with its length) → its blob id. A staged chunk whose fingerprint is
//!   known is not copied from the staging ring at all.
//! - by place: the last content stored for each chunk of each context (its leaf sums and blob
//!   id). A later snapshot uploads these sums as what it expects; the hash kernel marks the
//!   chunks that differ, and only those are copied into the staging ring.
//! - zeros: the blob of each length of zeros (fresh allocations), stored once.
//!
//! A fingerprint is not cryptographic: equal fingerprints are taken as equal memory of the
//! program's own, never as a blob's name on disk (blob ids are the XXH3-128 of the bytes).
//! Pure: tested without a GPU.

use std::collections::HashMap;
use std::sync::Arc;

/// How many entries each map keeps (each about 100 bytes, plus sums by place: 16 bytes a MiB);
/// past it new ones are not added, so memory stays bounded on very long recordings.
const MAX_REMEMBERED: usize = 1 << 20;

/// A chunk's place: context, address, length.
pub type Place = (u64, u64, u64);

#[derive(Default)]
pub(crate) struct Known {
    /// `--no-fingerprints`: nothing is told apart on the GPU; every non-zero chunk is copied.
    disabled: bool,
    by_print: HashMap<(u128, u64), String>,
    by_place: HashMap<Place, (Arc<[u8]>, String)>,
    zeros: HashMap<u64, String>,
}

impl Known {
    /// Never tell memory apart by what the GPU computed (`--no-fingerprints`).
    pub fn disabled() -> Known {
        Known {
            disabled: true,
            ..Known::default()
        }
    }

    pub fn enabled(&self) -> bool {
        !self.disabled
    }

    /// The blob of a chunk of `len` bytes whose leaf sums are `sums`, if stored.
    pub fn by_content(&self, len: u64, sums: &[u8]) -> Option<String> {
        if self.disabled {
            return None;
        }
        self.by_print.get(&(fingerprint(len, sums), len)).cloned()
    }

    /// What was last stored at `place`: its sums and blob id.
    pub fn at_place(&self, place: Place) -> Option<(Arc<[u8]>, String)> {
        if self.disabled {
            return None;
        }
        self.by_place.get(&place).cloned()
    }

    /// `place` now holds blob `id`, whose leaf sums are `sums`.
    pub fn remember(&mut self, place: Place, sums: &[u8], id: &str) {
        let len = place.2;
        if self.by_print.len() < MAX_REMEMBERED {
            self.by_print
                .entry((fingerprint(len, sums), len))
                .or_insert_with(|| id.to_string());
        }
        if self.by_place.len() < MAX_REMEMBERED || self.by_place.contains_key(&place) {
            self.by_place.insert(place, (sums.into(), id.to_string()));
        }
    }

    /// The blob of `len` zero bytes, if stored.
    pub fn zeros(&self, len: u64) -> Option<String> {
        self.zeros.get(&len).cloned()
    }

    pub fn remember_zeros(&mut self, len: u64, id: &str) {
        if self.zeros.len() < MAX_REMEMBERED {
            self.zeros.insert(len, id.to_string());
        }
    }
}

/// A chunk's fingerprint from its length and leaf sums (as replay verification combines them).
pub fn fingerprint(len: u64, sums: &[u8]) -> u128 {
    rr_cuda::fingerprint::combine(len, sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_and_place_are_remembered_apart() {
        let mut k = Known::default();
        k.remember((1, 0x1000, 4096), &[7; 16], "a");
        k.remember((1, 0x9000, 4096), &[7; 16], "b");
        assert_eq!(
            k.by_content(4096, &[7; 16]).as_deref(),
            Some("a"),
            "first kept"
        );
        assert_eq!(
            k.by_content(8192, &[7; 16]),
            None,
            "another length is another content"
        );
        assert_eq!(k.at_place((1, 0x9000, 4096)).unwrap().1, "b");
        k.remember((1, 0x9000, 4096), &[8; 16], "c");
        assert_eq!(
            k.at_place((1, 0x9000, 4096)).unwrap().1,
            "c",
            "the latest content"
        );
        assert_eq!(k.at_place((2, 0x9000, 4096)), None, "another context");
        let off = Known::disabled();
        assert_eq!(off.by_content(4096, &[7; 16]), None);
        assert!(!off.enabled());
    }
}
