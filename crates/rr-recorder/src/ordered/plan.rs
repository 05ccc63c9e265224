//! One stream-ordered snapshot on paper: the chunks the kernels read (with what the recorder
//! already holds of each), where each piece of the snapshot's metadata goes, the bytes
//! uploaded before the kernels run, and — once they have run — what became of each chunk.
//! Pure: tested without a GPU (`rr_cuda::ordered` runs it).

use std::sync::{Arc, OnceLock};

use rr_cuda::ordered::{ChunkDesc, CHANGED, LEAF, NONZERO, NOT_COPIED};

/// What the recorder already holds of a chunk's content: an unchanged chunk is then neither
/// copied nor hashed.
#[derive(Clone)]
pub enum Expect {
    None,
    /// Stored as blob `id`; `sums` are its leaf sums (16 bytes a leaf), uploaded with the
    /// snapshot for the hash kernel to compare with.
    Held {
        sums: Arc<[u8]>,
        id: String,
    },
    /// What an earlier snapshot on the same stream saw of the same chunk: its sums are on the
    /// device (it ran before this one, in stream order), its blob id known once it is drained
    /// (before this one: snapshots are drained in the order they were enqueued).
    Earlier {
        snap: Arc<SnapShared>,
        chunk: usize,
    },
}

/// A chunk of memory the kernels read.
#[derive(Clone)]
pub struct Chunk {
    pub src: u64,
    pub len: u64,
    pub expect: Expect,
    /// Copied whatever its content (a module's globals, whose bytes the record keeps).
    pub always: bool,
}

/// What other snapshots may need of one: where its leaf sums are on the device, and the blob
/// ids of its chunks once drained. `region` frees the metadata when the last user is gone.
pub struct SnapShared {
    pub sums_addr: u64,
    pub first_leaf: Vec<u64>,
    pub lens: Vec<u64>,
    pub ids: OnceLock<Vec<Option<String>>>,
    /// Held for its `Drop`, which gives the metadata back.
    #[allow(dead_code)]
    pub region: Box<dyn Send + Sync>,
}

impl SnapShared {
    /// The device address of chunk `i`'s sums, if it has `len` bytes (another length is another
    /// leaf layout, never comparable).
    fn sums_of(&self, i: usize, len: u64) -> Option<u64> {
        (self.lens.get(i) == Some(&len)).then(|| self.sums_addr + self.first_leaf[i] * 16)
    }

    fn id_of(&self, i: usize) -> Option<String> {
        self.ids.get()?.get(i)?.clone()
    }
}

/// Where the pieces of a snapshot's metadata lie, as offsets in its region (a piece of the
/// metadata area): the chunk table, the expected sums of held chunks and the zeroed flags are
/// uploaded together; flags, sums, offsets and status are read back together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub table: u64,
    pub expected: u64,
    pub flags: u64,
    pub sums: u64,
    pub offsets: u64,
    pub status: u64,
    /// Where each CUDA array's contents are copied.
    pub arrays: Vec<u64>,
    pub len: u64,
    pub leaves: u64,
    pub first_leaf: Vec<u64>,
    /// Where each held chunk's expected sums are.
    pub held_at: Vec<Option<u64>>,
}

const STATUS_BYTES: u64 = 32;

fn align(v: u64, to: u64) -> Option<u64> {
    v.checked_next_multiple_of(to)
}

fn leaves_of(len: u64) -> u64 {
    len.div_ceil(LEAF)
}

/// The layout of a snapshot of `chunks` and of arrays of `arrays` bytes each; `None` when the
/// sizes overflow.
pub fn layout(chunks: &[Chunk], arrays: &[u64]) -> Option<Layout> {
    let n = chunks.len() as u64;
    let mut first_leaf = Vec::with_capacity(chunks.len());
    let mut leaves = 0u64;
    for c in chunks {
        first_leaf.push(leaves);
        leaves = leaves.checked_add(leaves_of(c.len))?;
    }
    let table = 0;
    let expected = align(n.checked_mul(ChunkDesc::BYTES as u64)?, 16)?;
    let mut at = expected;
    let mut held_at = Vec::with_capacity(chunks.len());
    for c in chunks {
        held_at.push(match &c.expect {
            Expect::Held { .. } => {
                let here = at;
                at = at.checked_add(leaves_of(c.len).checked_mul(16)?)?;
                Some(here)
            }
            _ => None,
        });
    }
    let flags = at;
    let sums = align(flags.checked_add(n.checked_mul(4)?)?, 16)?;
    let offsets = sums.checked_add(leaves.checked_mul(16)?)?;
    let status = offsets.checked_add(n.checked_mul(8)?)?;
    let mut at = align(status.checked_add(STATUS_BYTES)?, 256)?;
    let mut array_at = Vec::with_capacity(arrays.len());
    for &a in arrays {
        array_at.push(at);
        at = align(at.checked_add(a)?, 256)?;
    }
    Some(Layout {
        table,
        expected,
        flags,
        sums,
        offsets,
        status,
        arrays: array_at,
        len: at,
        leaves,
        first_leaf,
        held_at,
    })
}

impl Layout {
    /// Bytes uploaded from the start of the region: the table, held sums and zeroed flags.
    pub fn upload_len(&self) -> u64 {
        self.sums
    }

    /// The bytes read back after the kernels: `[flags, status end)`.
    pub fn readback(&self) -> (u64, u64) {
        (self.flags, self.status + STATUS_BYTES - self.flags)
    }
}

/// The upload: the chunk table (with device addresses of expected sums, the region being at
/// `base`), the held chunks' sums and zeroed flags.
pub fn upload(chunks: &[Chunk], l: &Layout, base: u64) -> Vec<u8> {
    let mut out = vec![0u8; l.upload_len() as usize];
    for (i, c) in chunks.iter().enumerate() {
        let expected = match (&c.expect, l.held_at[i]) {
            (Expect::Held { sums, .. }, Some(at)) => {
                let at = at as usize;
                let n = sums.len().min(leaves_of(c.len) as usize * 16);
                out[at..at + n].copy_from_slice(&sums[..n]);
                // Sums of another length are not this chunk's: compare with nothing.
                if n as u64 == leaves_of(c.len) * 16 {
                    base + at as u64
                } else {
                    0
                }
            }
            (Expect::Earlier { snap, chunk }, _) => snap.sums_of(*chunk, c.len).unwrap_or(0),
            _ => 0,
        };
        let d = ChunkDesc {
            src: c.src,
            len: c.len,
            expected,
            first_leaf: l.first_leaf[i],
            always: c.always as u64,
        };
        let at = (l.table as usize) + i * ChunkDesc::BYTES;
        out[at..at + ChunkDesc::BYTES].copy_from_slice(&d.to_bytes());
    }
    out
}

/// What the plan kernel reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Status {
    /// The region taken from the ring, in its running count (given back when drained).
    pub taken_at: u64,
    pub length: u64,
    /// Bytes the chunks to copy needed, and whether they did not fit.
    pub needed: u64,
    pub overflow: bool,
}

/// What became of one chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// All zeros: the zero blob of its length.
    Zero,
    /// As the recorder held it: this blob.
    Same(String),
    /// Copied to byte `at` of the ring.
    Staged { at: u64 },
    /// Not kept, and why.
    Lost(&'static str),
}

/// Read the kernels' results (`back`: the readback range of [`Layout::readback`]): what became
/// of each chunk, with its leaf sums, and the plan kernel's status.
#[allow(clippy::type_complexity)]
pub fn outcomes(
    chunks: &[Chunk],
    l: &Layout,
    back: &[u8],
) -> Option<(Vec<(Outcome, Vec<u8>)>, Status)> {
    let (start, len) = l.readback();
    if back.len() as u64 != len {
        return None;
    }
    let at = |off: u64| (off - start) as usize;
    let word = |off: u64| -> u64 {
        let i = at(off);
        u64::from_le_bytes(back[i..i + 8].try_into().unwrap_or_default())
    };
    let s = l.status;
    let status = Status {
        taken_at: word(s),
        length: word(s + 8),
        needed: word(s + 16),
        overflow: word(s + 24) != 0,
    };
    let mut out = Vec::with_capacity(chunks.len());
    for (i, c) in chunks.iter().enumerate() {
        let f = at(l.flags) + 4 * i;
        let flags = u32::from_le_bytes(back[f..f + 4].try_into().ok()?);
        let offset = word(l.offsets + 8 * i as u64);
        let first = at(l.sums) + 16 * l.first_leaf[i] as usize;
        let sums = back[first..first + 16 * leaves_of(c.len) as usize].to_vec();
        let outcome = if offset != NOT_COPIED {
            Outcome::Staged { at: offset }
        } else if c.always || (flags & NONZERO != 0 && flags & CHANGED != 0) {
            Outcome::Lost("staging full")
        } else if flags & NONZERO == 0 {
            Outcome::Zero
        } else {
            match &c.expect {
                Expect::Held { id, .. } => Outcome::Same(id.clone()),
                Expect::Earlier { snap, chunk } => match snap.id_of(*chunk) {
                    Some(id) => Outcome::Same(id),
                    None => Outcome::Lost("an earlier snapshot it depends on was not kept"),
                },
                // The kernel marks every chunk without an expectation changed.
                Expect::None => Outcome::Lost("the snapshot kernels disagree with the plan"),
            }
        };
        out.push((outcome, sums));
    }
    Some((out, status))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(src: u64, len: u64, expect: Expect) -> Chunk {
        Chunk {
            src,
            len,
            expect,
            always: false,
        }
    }

    /// What the kernels would write for these flags, offsets and sums, in readback order.
    fn results(l: &Layout, flags: &[u32], offsets: &[u64], status: [u64; 4]) -> Vec<u8> {
        let (start, len) = l.readback();
        let mut b = vec![0u8; len as usize];
        for (i, f) in flags.iter().enumerate() {
            let at = (l.flags - start) as usize + 4 * i;
            b[at..at + 4].copy_from_slice(&f.to_le_bytes());
        }
        for leaf in 0..l.leaves {
            let at = (l.sums - start + 16 * leaf) as usize;
            b[at] = leaf as u8 + 1;
        }
        for (i, o) in offsets.iter().enumerate() {
            let at = (l.offsets - start) as usize + 8 * i;
            b[at..at + 8].copy_from_slice(&o.to_le_bytes());
        }
        for (i, w) in status.iter().enumerate() {
            let at = (l.status - start) as usize + 8 * i;
            b[at..at + 8].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    #[test]
    fn the_layout_packs_upload_then_readback_then_arrays() {
        let held = Expect::Held {
            sums: vec![7u8; 32].into(),
            id: "a".into(),
        };
        let chunks = [
            chunk(0x1000, 2 * LEAF, held),
            chunk(0x9000, 10, Expect::None),
        ];
        let l = layout(&chunks, &[100]).unwrap();
        assert_eq!(l.first_leaf, [0, 2]);
        assert_eq!(l.leaves, 3);
        assert_eq!((l.table, l.expected), (0, 80));
        assert_eq!(l.held_at, [Some(80), None]);
        assert_eq!(l.flags, 112);
        assert_eq!(l.sums, 128, "flags padded to 16");
        assert_eq!((l.offsets, l.status), (176, 192));
        assert_eq!(l.arrays, [256]);
        assert_eq!(l.len, 512);
        let up = upload(&chunks, &l, 0x5000);
        assert_eq!(up.len(), 128);
        let d0 = &up[0..40];
        assert_eq!(
            u64::from_le_bytes(d0[16..24].try_into().unwrap()),
            0x5000 + 80
        );
        assert_eq!(&up[80..112], &[7u8; 32][..]);
        assert!(up[112..].iter().all(|&b| b == 0), "flags start cleared");
        // The largest lengths are laid out without overflowing (the kernels' grid then refuses
        // them: more than 2^31 leaves); arrays too large to add up are refused.
        let huge = chunk(0, u64::MAX, Expect::None);
        assert!(layout(&[huge.clone(), huge], &[]).is_some());
        assert!(layout(&[], &[u64::MAX]).is_none());
    }

    #[test]
    fn each_chunk_is_zero_held_staged_or_lost() {
        let earlier = Arc::new(SnapShared {
            sums_addr: 0x7000,
            first_leaf: vec![0],
            lens: vec![LEAF],
            ids: OnceLock::new(),
            region: Box::new(()),
        });
        let chunks = [
            chunk(0x1000, LEAF, Expect::None),
            chunk(
                0x2000,
                LEAF,
                Expect::Held {
                    sums: vec![0u8; 16].into(),
                    id: "held".into(),
                },
            ),
            chunk(
                0x3000,
                LEAF,
                Expect::Earlier {
                    snap: earlier.clone(),
                    chunk: 0,
                },
            ),
            chunk(0x4000, LEAF, Expect::None),
            chunk(0x5000, LEAF, Expect::None),
        ];
        let l = layout(&chunks, &[]).unwrap();
        let up = upload(&chunks, &l, 0);
        let d2 = &up[2 * 40..3 * 40];
        assert_eq!(u64::from_le_bytes(d2[16..24].try_into().unwrap()), 0x7000);
        let flags = [0, NONZERO, NONZERO, NONZERO | CHANGED, NONZERO | CHANGED];
        let offsets = [NOT_COPIED, NOT_COPIED, NOT_COPIED, 4096, NOT_COPIED];
        let back = results(&l, &flags, &offsets, [10, 20, 30, 1]);
        let (got, status) = outcomes(&chunks, &l, &back).unwrap();
        assert_eq!(
            status,
            Status {
                taken_at: 10,
                length: 20,
                needed: 30,
                overflow: true
            }
        );
        assert_eq!(got[0].0, Outcome::Zero);
        assert_eq!(got[1].0, Outcome::Same("held".into()));
        assert_eq!(
            got[2].0,
            Outcome::Lost("an earlier snapshot it depends on was not kept"),
            "the earlier snapshot is not drained yet"
        );
        assert_eq!(got[3].0, Outcome::Staged { at: 4096 });
        let mut sums = vec![0u8; 16];
        sums[0] = 4;
        assert_eq!(got[3].1, sums, "each chunk comes with its own leaf sums");
        assert_eq!(got[4].0, Outcome::Lost("staging full"));
        earlier.ids.set(vec![Some("before".into())]).unwrap();
        let (got, _) = outcomes(&chunks, &l, &back).unwrap();
        assert_eq!(got[2].0, Outcome::Same("before".into()));
        assert!(
            outcomes(&chunks, &l, &back[1..]).is_none(),
            "a short readback"
        );
    }
}
