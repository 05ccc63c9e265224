//! Device memory the recorder stored already, told on the GPU: before copying a segment to the
//! host, its fingerprint is computed where it lives (`rr_cuda::fingerprint`, at the GPU's
//! memory bandwidth) and looked up among the fingerprints of the segments stored so far. A
//! segment seen before needs no copy, no hash and no write: its blob id is known. Weights and
//! caches that stay the same from kernel to kernel cost a few milliseconds per instance instead
//! of a copy of all of them.
//!
//! Only device memory is fingerprinted (mapped host memory and CUDA arrays take the copying
//! path). When the kernel cannot be loaded (a driver too old for its PTX) or fails, recording
//! goes on without it, as before.

use std::collections::HashMap;

use rr_cuda::fingerprint::Fingerprinter;

use crate::pipeline::Source;

/// How many fingerprints are remembered (each about 100 bytes); past it the oldest are not
/// forgotten but new ones are not added, so memory stays bounded on very long recordings.
const MAX_REMEMBERED: usize = 1 << 20;
/// Snapshots in a row whose fingerprinting may fail before it is given up.
const MAX_FAILURES: u32 = 3;

#[derive(Default)]
pub(crate) struct Known {
    /// The fingerprinter and the context it was loaded into.
    gpu: Option<(u64, Fingerprinter)>,
    /// Why fingerprinting stopped, once it failed `MAX_FAILURES` times in a row (then it is
    /// not tried again).
    failed: Option<String>,
    /// Failures in a row so far.
    failures: u32,
    /// Blob id by (fingerprint, size) of every device segment stored.
    ids: HashMap<(u128, u64), String>,
}

/// What the GPU said of a snapshot's sources.
pub(crate) struct Looked {
    /// The blob id of each source already stored (`None`: copy it).
    pub ids: Vec<Option<String>>,
    /// The fingerprint of each device source, to remember once its blob is stored.
    pub prints: Vec<Option<u128>>,
}

impl Known {
    /// Never fingerprint (`--no-fingerprints`): every source is copied.
    pub fn disabled() -> Known {
        Known {
            failed: Some("turned off".into()),
            ..Known::default()
        }
    }

    /// Fingerprint the device sources (`device[i]`) in `context`. Failing, the sources are all
    /// copied; the note says, once, why fingerprinting stopped for good.
    pub fn look_up(
        &mut self,
        context: u64,
        sources: &[Source],
        device: &[bool],
    ) -> (Looked, Option<String>) {
        let none = || Looked {
            ids: vec![None; sources.len()],
            prints: vec![None; sources.len()],
        };
        if self.failed.is_some() {
            return (none(), None);
        }
        let ranges: Vec<(u64, u64)> = sources
            .iter()
            .zip(device)
            .map(|(s, &dev)| match (s, dev) {
                (Source::Memory { addr, size }, true) => (*addr, *size),
                // Not fingerprinted: an empty range costs nothing and gets no print.
                _ => (1, 0),
            })
            .collect();
        match self.fingerprints(context, &ranges) {
            Ok(prints) => {
                self.failures = 0;
                let prints: Vec<Option<u128>> = prints
                    .into_iter()
                    .zip(&ranges)
                    .map(|(p, r)| p.filter(|_| r.1 > 0))
                    .collect();
                let ids = prints
                    .iter()
                    .zip(sources)
                    .map(|(p, s)| p.and_then(|p| self.ids.get(&(p, s.size())).cloned()))
                    .collect();
                (Looked { ids, prints }, None)
            }
            Err(why) => {
                // This snapshot is copied; fingerprinting is given up after a few failures in
                // a row (a full GPU may refuse the small output buffer once, not for good).
                self.gpu = None;
                self.failures += 1;
                if self.failures < MAX_FAILURES {
                    return (none(), None);
                }
                let note = format!(
                    "device memory is copied to be compared with what is stored: fingerprinting it on the GPU failed {MAX_FAILURES} times in a row ({why})"
                );
                self.failed = Some(why);
                (none(), Some(note))
            }
        }
    }

    /// The fingerprints in `context`. A fingerprinter made earlier may have died with its
    /// context (a program that resets its device gets a new context, maybe at the same
    /// address): on failure it is made afresh once before giving up.
    fn fingerprints(
        &mut self,
        context: u64,
        ranges: &[(u64, u64)],
    ) -> Result<Vec<Option<u128>>, String> {
        if let Some((c, f)) = self.gpu.as_mut() {
            if *c == context {
                if let Ok(prints) = f.fingerprints(ranges) {
                    return Ok(prints);
                }
            }
        }
        self.gpu = None;
        let mut f = Fingerprinter::new().map_err(|e| e.to_string())?;
        let prints = f.fingerprints(ranges).map_err(|e| e.to_string())?;
        self.gpu = Some((context, f));
        Ok(prints)
    }

    /// Remember that the source with fingerprint `print` and `size` bytes is stored as `id`.
    pub fn remember(&mut self, print: u128, size: u64, id: &str) {
        if self.ids.len() < MAX_REMEMBERED {
            self.ids
                .entry((print, size))
                .or_insert_with(|| id.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_ids_are_found_by_fingerprint_and_size() {
        let mut k = Known::default();
        k.remember(7, 4096, "a");
        k.remember(7, 4096, "b");
        assert_eq!(k.ids.get(&(7, 4096)).map(String::as_str), Some("a"));
        assert!(
            !k.ids.contains_key(&(7, 8192)),
            "another size is another content"
        );
    }
}
