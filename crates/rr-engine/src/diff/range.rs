//! One stretch of two snapshots compared: a kernel argument's buffer, a segment, a whole file.
//! Bytes present on one side only are *missing*, never equal; bytes after the last whole
//! element are compared byte for byte, never dropped.

use serde::{Deserialize, Serialize};

use super::elements::TypedStats;
use super::source::Source;
use super::sweep::{compare_elements, Sweep};
use crate::error::Result;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RangeReport {
    /// The element type compared (`u8`: bytes).
    pub dtype: String,
    /// The length of the stretch.
    pub bytes: u64,
    /// Bytes of the stretch past the end of A, and of B: present on one side only (or neither).
    pub missing_a: u64,
    pub missing_b: u64,
    /// Bytes present on both sides that differ (exact).
    pub differing_bytes: u64,
    /// Bytes after the last whole element present on both sides, compared byte for byte; the
    /// ones that differ are counted in `differing_bytes` too.
    pub tail_bytes: u64,
    pub tail_differing_bytes: u64,
    /// The whole elements present on both sides.
    pub elements: TypedStats,
}

impl RangeReport {
    /// Bytes absent from at least one side.
    pub fn missing(&self) -> u64 {
        self.missing_a.max(self.missing_b)
    }
    /// Bytes present on both sides.
    pub fn present(&self) -> u64 {
        self.bytes - self.missing()
    }
    /// Nothing missing, no element beyond tolerance, an equal tail: elements within tolerance
    /// are allowed.
    pub fn equal(&self) -> bool {
        self.missing() == 0 && self.elements.beyond_tolerance == 0 && self.tail_differing_bytes == 0
    }
    /// Equal and no byte differs either.
    pub fn identical(&self) -> bool {
        self.missing() == 0 && self.differing_bytes == 0
    }
}

/// Compare `[start, end)` of `a` and `b`, which may be shorter than `end` (or than `start`).
pub fn compare_range<A, B>(
    a: &A,
    b: &B,
    start: u64,
    end: u64,
    sweep: &Sweep,
    progress: &mut dyn FnMut(u64),
) -> Result<RangeReport>
where
    A: Source + ?Sized,
    B: Source + ?Sized,
{
    let size = sweep.cmp.dtype.size() as u64;
    let end = end.max(start); // a hostile map's empty region stays empty
    let inside = |len: u64| len.clamp(start, end);
    let present_end = inside(a.size().min(b.size()));
    let whole_end = start + (present_end - start) / size * size;
    let elements = compare_elements(a, b, start, whole_end, sweep, progress)?;
    let tail_len = (present_end - whole_end) as usize;
    let tail_differing_bytes = a
        .window(whole_end, tail_len)
        .iter()
        .zip(b.window(whole_end, tail_len))
        .filter(|(x, y)| x != y)
        .count() as u64;
    Ok(RangeReport {
        dtype: sweep.cmp.dtype.name().to_string(),
        bytes: end - start,
        missing_a: end - inside(a.size()),
        missing_b: end - inside(b.size()),
        differing_bytes: elements.differing_bytes + tail_differing_bytes,
        tail_bytes: present_end - whole_end,
        tail_differing_bytes,
        elements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::rules::{Comparison, Tolerance};
    use crate::diff::typed::DType;

    fn run(a: &[u8], b: &[u8], start: u64, end: u64, cmp: &Comparison) -> RangeReport {
        compare_range(a, b, start, end, &Sweep::new(cmp, 4), &mut |_| {}).unwrap()
    }

    #[test]
    fn bytes_on_one_side_only_are_missing_never_equal() {
        let a = [7u8; 100];
        let r = run(&a, &a[..40], 0, 100, &Comparison::bytes());
        assert_eq!((r.missing_a, r.missing_b, r.present()), (0, 60, 40));
        assert!(!r.equal(), "60 bytes of B are missing");
        let beyond = run(&a, &a[..40], 50, 100, &Comparison::bytes());
        assert_eq!(
            (beyond.missing(), beyond.present(), beyond.elements.compared),
            (50, 0, 0)
        );
        assert!(run(&a, &a, 0, 100, &Comparison::bytes()).identical());
    }

    #[test]
    fn within_tolerance_is_equal_but_not_identical() {
        let one = 1.0f32.to_le_bytes();
        let next = f32::from_bits(1.0f32.to_bits() + 1).to_le_bytes();
        let cmp = Comparison {
            dtype: DType::F32,
            big_endian: false,
            tolerance: Tolerance {
                ulp: 1,
                ..Default::default()
            },
        };
        let r = run(&one, &next, 0, 4, &cmp);
        assert_eq!(
            (r.elements.within_tolerance, r.elements.beyond_tolerance),
            (1, 0)
        );
        assert_eq!(r.differing_bytes, 1);
        assert!(r.equal() && !r.identical());
    }

    #[test]
    fn a_partial_last_element_is_compared_as_bytes() {
        let a = [0u8; 10];
        let mut b = a;
        b[9] = 1;
        let cmp = Comparison {
            dtype: DType::F32,
            ..Comparison::bytes()
        };
        let r = run(&a, &b, 0, 10, &cmp);
        assert_eq!(
            (r.elements.compared, r.tail_bytes, r.tail_differing_bytes),
            (2, 2, 1)
        );
        assert_eq!(r.differing_bytes, 1);
        assert!(!r.equal());
    }
}
