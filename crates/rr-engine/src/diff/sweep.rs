//! Typed comparison of a stretch of two sources on all cores. The stretch is cut into 8 MiB
//! chunks; each worker compares one chunk of a batch, and a batch's results are merged in file
//! order (so the `first` mismatches are the first in the file) before its pages are released,
//! which keeps resident memory at a batch of chunks whatever the file size.

use super::elements::{self, TypedStats};
use super::pieces::{for_each_piece, Piece};
use super::rules::Comparison;
use super::source::Source;
use super::CHUNK;
use crate::error::Result;

/// How to compare: the rules, how many failing elements to keep, on how many threads.
#[derive(Debug, Clone, Copy)]
pub struct Sweep<'a> {
    pub cmp: &'a Comparison,
    pub keep: usize,
    pub workers: usize,
}

impl<'a> Sweep<'a> {
    /// On every core this process may use.
    pub fn new(cmp: &'a Comparison, keep: usize) -> Sweep<'a> {
        Sweep {
            cmp,
            keep,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Compare the elements in `[start, end)` (a whole number of elements, inside both sources).
/// `progress(done)` is called after every batch with the bytes done so far.
pub fn compare_elements<A, B>(
    a: &A,
    b: &B,
    start: u64,
    end: u64,
    sweep: &Sweep,
    progress: &mut dyn FnMut(u64),
) -> Result<TypedStats>
where
    A: Source + ?Sized,
    B: Source + ?Sized,
{
    let size = sweep.cmp.dtype.size() as u64;
    let chunk = CHUNK / size * size;
    let mut stats = TypedStats::default();
    if end - start >= CHUNK {
        // Worth a system call only for long reads (a record may have 300 000 small regions).
        a.advise_sequential();
        b.advise_sequential();
    }
    let mut off = start;
    while off < end {
        let batch: Vec<(u64, u64)> = (0..sweep.workers.max(1) as u64)
            .map(|k| off + k * chunk)
            .take_while(|&o| o < end)
            .map(|o| (o, chunk.min(end - o)))
            .collect();
        let parts = compare_batch(a, b, start, &batch, sweep);
        for (&(o, len), part) in batch.iter().zip(parts) {
            a.intact()?;
            b.intact()?;
            stats.merge(part, sweep.keep);
            a.release(o, len);
            b.release(o, len);
        }
        off = batch.last().map_or(end, |&(o, len)| o + len);
        progress(off - start);
    }
    Ok(stats)
}

/// One chunk per worker; this thread takes the first.
fn compare_batch<A, B>(
    a: &A,
    b: &B,
    base: u64,
    batch: &[(u64, u64)],
    sweep: &Sweep,
) -> Vec<TypedStats>
where
    A: Source + ?Sized,
    B: Source + ?Sized,
{
    let one = |&(off, len): &(u64, u64)| compare_chunk(a, b, off, len, base, sweep);
    match batch {
        [] => vec![],
        [only] => vec![one(only)],
        [first, rest @ ..] => std::thread::scope(|s| {
            let handles: Vec<_> = rest.iter().map(|c| s.spawn(move || one(c))).collect();
            let mut out = vec![one(first)];
            for h in handles {
                out.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            out
        }),
    }
}

/// `base` is where element 0 starts.
fn compare_chunk<A, B>(a: &A, b: &B, off: u64, len: u64, base: u64, sweep: &Sweep) -> TypedStats
where
    A: Source + ?Sized,
    B: Source + ?Sized,
{
    let size = sweep.cmp.dtype.size() as u64;
    let mut stats = TypedStats::default();
    for_each_piece(a, b, off, off + len, base, size, |p| {
        if let Piece::Bytes { start, a, b } = p {
            let first_index = (start - base) / size;
            let part = elements::compare(sweep.cmp, a, b, start, first_index, sweep.keep);
            stats.merge(part, sweep.keep);
        }
    });
    // Holes in both files are equal elements: count them as compared too.
    stats.compared = len / size;
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::typed::DType;

    #[test]
    fn all_cores_find_what_one_finds_in_file_order() {
        let n = 3 * CHUNK as usize + 1000; // several batches, a short last chunk
        let a: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        let mut b = a.clone();
        for i in (0..n).step_by(1 << 20) {
            b[i] ^= 0x40;
        }
        let cmp = Comparison {
            dtype: DType::F32,
            ..Comparison::bytes()
        };
        let end = (n / 4 * 4) as u64;
        let run = |workers| {
            let sweep = Sweep {
                cmp: &cmp,
                keep: 6,
                workers,
            };
            let mut calls = 0;
            let st = compare_elements(&a[..], &b[..], 0, end, &sweep, &mut |_| calls += 1);
            (st.unwrap(), calls)
        };
        let (one, one_calls) = run(1);
        let (four, four_calls) = run(4);
        assert_eq!(format!("{one:?}"), format!("{four:?}"));
        assert_eq!(one.compared, end / 4);
        assert_eq!(one.differing_bytes, (n as u64).div_ceil(1 << 20));
        let firsts: Vec<u64> = one.first.iter().map(|m| m.offset).collect();
        assert_eq!(firsts, (0..6).map(|k| k << 20).collect::<Vec<_>>());
        assert_eq!((one_calls, four_calls), (4, 1));
    }
}
