//! Sparse snapshots: a stretch that is a hole in both files is equal without reading a byte,
//! and a hole on one side is compared as zeros without faulting in its pages (a page fault on a
//! hole costs more than reading cached data: 0.2 GB/s against 10 GB/s on the development machine).

use super::source::Source;

/// Zeros standing in for a hole; one-sided holes are compared in pieces of this size.
const ZERO_BLOCK: usize = 64 * 1024;
static ZEROS: [u8; ZERO_BLOCK] = [0; ZERO_BLOCK];

/// A stretch of two sources starting at file offset `start`.
#[derive(Debug, PartialEq)]
pub enum Piece<'a> {
    /// Holes on both sides: equal.
    Holes { start: u64, len: u64 },
    /// Bytes to compare, equally long; a side that is a hole here is a slice of zeros.
    Bytes {
        start: u64,
        a: &'a [u8],
        b: &'a [u8],
    },
}

/// Where one side has data, remembered while the walk is inside the same run.
struct Side {
    has_data: bool,
    until: u64,
}

impl Side {
    /// The run holding `pos`, cut at `end`. Runs are widened to element boundaries (`align` from
    /// `base`): an element with any data is read whole (its hole bytes read as zeros through the
    /// mapping), so holes only ever shrink and a piece never splits an element.
    fn at<S: Source + ?Sized>(src: &S, pos: u64, end: u64, base: u64, align: u64) -> Side {
        let down = |x: u64| base + (x - base) / align * align;
        let data = src.next_data(pos).map_or(end, |d| d.clamp(pos, end));
        let data_element = down(data).max(pos);
        if data_element > pos {
            return Side {
                has_data: false,
                until: data_element,
            };
        }
        let hole = src.next_hole(data).clamp(data, end);
        let hole_element = down(hole) + if down(hole) < hole { align } else { 0 };
        Side {
            has_data: true,
            until: hole_element.max(pos + align).min(end),
        }
    }
}

/// Walk `[start, end)` of `a` and `b` (within both sizes, and small enough to be one window:
/// a chunk) in pieces, in file order. `start`, `end` and piece boundaries are element boundaries
/// (`align` bytes from `base`).
pub fn for_each_piece<'s, A, B>(
    a: &'s A,
    b: &'s B,
    start: u64,
    end: u64,
    base: u64,
    align: u64,
    mut f: impl FnMut(Piece<'s>),
) where
    A: Source + ?Sized,
    B: Source + ?Sized,
{
    if end - start <= ZERO_BLOCK as u64 {
        // Asking the file system where its holes are costs more than reading a few pages.
        let len = (end - start) as usize;
        if len > 0 {
            f(Piece::Bytes {
                start,
                a: a.window(start, len),
                b: b.window(start, len),
            });
        }
        return;
    }
    let mut pos = start;
    let mut side_a = Side::at(a, pos, end, base, align);
    let mut side_b = Side::at(b, pos, end, base, align);
    while pos < end {
        if side_a.until <= pos {
            side_a = Side::at(a, pos, end, base, align);
        }
        if side_b.until <= pos {
            side_b = Side::at(b, pos, end, base, align);
        }
        let stop = side_a.until.min(side_b.until);
        let len = (stop - pos) as usize;
        match (side_a.has_data, side_b.has_data) {
            (false, false) => f(Piece::Holes {
                start: pos,
                len: stop - pos,
            }),
            (true, true) => f(Piece::Bytes {
                start: pos,
                a: a.window(pos, len),
                b: b.window(pos, len),
            }),
            (a_has_data, _) => {
                // ZERO_BLOCK is a multiple of every element size, so pieces stay aligned.
                let mut at = pos;
                while at < stop {
                    let n = ((stop - at) as usize).min(ZERO_BLOCK);
                    let zeros = &ZEROS[..n];
                    let (pa, pb) = match a_has_data {
                        true => (a.window(at, n), zeros),
                        false => (zeros, b.window(at, n)),
                    };
                    f(Piece::Bytes {
                        start: at,
                        a: pa,
                        b: pb,
                    });
                    at += n as u64;
                }
            }
        }
        pos = stop;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file system's block in these tests: large enough that walks are not "small".
    const PAGE: usize = 32 * 1024;

    /// A source with holes where `data` says so (in 4 KiB pages, like a file system).
    struct Sparse {
        bytes: Vec<u8>,
        data_pages: Vec<bool>,
    }

    impl Source for Sparse {
        fn size(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn window(&self, offset: u64, len: usize) -> &[u8] {
            // Reading a hole is what the walk must avoid.
            let page = offset as usize / PAGE;
            let last = (offset as usize + len).div_ceil(PAGE);
            assert!(
                self.data_pages[page..last].iter().any(|&d| d),
                "read {len} bytes of holes at {offset}"
            );
            &self.bytes[offset as usize..offset as usize + len]
        }
        fn next_data(&self, offset: u64) -> Option<u64> {
            let p = offset as usize / PAGE;
            let q = (p..self.data_pages.len()).find(|&q| self.data_pages[q])?;
            Some(((q * PAGE) as u64).max(offset))
        }
        fn next_hole(&self, offset: u64) -> u64 {
            let p = offset as usize / PAGE;
            let q = (p..self.data_pages.len())
                .find(|&q| !self.data_pages[q])
                .unwrap_or(self.data_pages.len());
            ((q * PAGE) as u64).max(offset)
        }
    }

    fn sparse(pages: &[bool], fill: u8) -> Sparse {
        let mut bytes = vec![0u8; pages.len() * PAGE];
        for (p, &d) in pages.iter().enumerate() {
            if d {
                bytes[p * PAGE..(p + 1) * PAGE].fill(fill);
            }
        }
        Sparse {
            bytes,
            data_pages: pages.to_vec(),
        }
    }

    fn walk(a: &Sparse, b: &Sparse, base: u64, align: u64) -> (u64, u64, Vec<(u64, usize)>) {
        let (mut holes, mut zeros_compared) = (0, 0);
        let mut bytes = Vec::new();
        let end = base + (a.size() - base) / align * align;
        for_each_piece(a, b, base, end, base, align, |p| match p {
            Piece::Holes { len, .. } => holes += len,
            Piece::Bytes { start, a, b } => {
                assert_eq!(a.len(), b.len());
                assert_eq!((start - base) % align, 0, "pieces start on elements");
                if a.iter().all(|&x| x == 0) || b.iter().all(|&x| x == 0) {
                    zeros_compared += a.len() as u64;
                }
                bytes.push((start, a.len()));
            }
        });
        (holes, zeros_compared, bytes)
    }

    #[test]
    fn holes_in_both_are_skipped_and_one_sided_holes_read_as_zeros() {
        //          page: 0     1      2      3     4
        let a = sparse(&[true, false, false, true, false], 1);
        let b = sparse(&[true, false, true, false, false], 2);
        let (holes, zeros, bytes) = walk(&a, &b, 0, 1);
        assert_eq!(holes, 2 * PAGE as u64, "pages 1 and 4 and nothing else");
        assert_eq!(zeros, 2 * PAGE as u64, "pages 2 and 3: data against a hole");
        let page = PAGE as u64;
        assert_eq!(bytes, vec![(0, PAGE), (2 * page, PAGE), (3 * page, PAGE)]);
    }

    #[test]
    fn elements_that_straddle_a_hole_boundary_are_read_whole() {
        let a = sparse(&[true, false, false], 1);
        let b = sparse(&[true, false, false], 1);
        // f32 elements from offset 2: the element straddling the end of page 0 holds data, so it
        // is read whole.
        let (holes, _, bytes) = walk(&a, &b, 2, 4);
        assert_eq!(bytes, vec![(2, PAGE)]);
        let (page, last_element_end) = (PAGE as u64, 3 * PAGE as u64 - 2);
        assert_eq!(
            holes,
            last_element_end - (page + 2),
            "up to the last whole element"
        );
    }
}
