//! How one snapshot row is laid out at a terminal width: how many bytes it shows (16, 8 or 4),
//! whether the argument label and the ASCII column fit, and how wide a typed cell is.
//!
//! The view keeps the chosen bytes per row (recomputed on resize and on a type change) so that
//! scrolling, `n`/`N` and goto move by the rows the screen shows; its drawing (`draw.rs`) uses
//! the same function, so both sides of a row always show the same bytes.

use rr_engine::diff::DType;

/// Bytes per row, widest first.
const ROW_CHOICES: [u64; 3] = [16, 8, 4];
/// Width of the margin label (`arg0+0x1a0`), without the space after it.
pub const LABEL_WIDTH: usize = 11;
/// Between the two sides: `" │ "`.
pub const SEPARATOR_WIDTH: usize = 3;
/// Between the offset and the first side.
const OFFSET_GAP: usize = 2;
/// Between a side's hex cells and its ASCII column.
pub const ASCII_GAP: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowLayout {
    pub bytes: u64,
    /// The argument / segment label in the margin.
    pub label: bool,
    /// The ASCII column after each side's hex cells (hex view only).
    pub ascii: bool,
    /// Columns of one side.
    pub side: usize,
    /// Columns of one typed cell (the hex view: 2).
    pub cell: usize,
}

impl RowLayout {
    /// Elements per side in this row.
    pub fn cells(&self, dtype: Option<DType>) -> usize {
        self.bytes as usize / dtype.map_or(1, DType::size)
    }
}

/// Columns a typed cell needs at least (every value of the type fits, floats with fewer digits)
/// and at most (every value in its shortest round-trip form).
fn cell_widths(dtype: Option<DType>) -> (usize, usize) {
    match dtype {
        None => (2, 2),
        Some(DType::U8) => (3, 3),
        Some(DType::I8) => (4, 4),
        Some(DType::U16) => (5, 5),
        Some(DType::I16) => (6, 6),
        Some(DType::U32) => (10, 10),
        Some(DType::I32) => (11, 11),
        Some(DType::U64 | DType::I64) => (20, 20),
        // -6.104e-5 and -3.39e38: the longest shortest forms of f16 and bf16.
        Some(DType::F16 | DType::BF16) => (7, 10),
        Some(DType::F32) => (9, 15),
        Some(DType::F64) => (10, 24),
    }
}

fn side_width(cells: usize, cell: usize) -> usize {
    (cells * (cell + 1)).saturating_sub(1)
}

/// The layout of `bytes`-wide rows at `width` columns, if it fits (with or without the label).
fn fit(
    width: usize,
    bytes: u64,
    label: bool,
    dtype: Option<DType>,
    offset_digits: usize,
) -> Option<RowLayout> {
    let element = dtype.map_or(1, DType::size) as u64;
    if bytes < element {
        return None;
    }
    let cells = (bytes / element) as usize;
    let fixed = offset_digits + OFFSET_GAP + if label { LABEL_WIDTH + 1 } else { 0 };
    let available = width.checked_sub(fixed + SEPARATOR_WIDTH)? / 2;
    let (least, most) = cell_widths(dtype);
    if side_width(cells, least) > available {
        return None;
    }
    let layout = match dtype {
        None => {
            let hex = side_width(cells, 2);
            let with_ascii = hex + ASCII_GAP + cells;
            let ascii = with_ascii <= available;
            RowLayout {
                bytes,
                label,
                ascii,
                side: if ascii { with_ascii } else { hex },
                cell: 2,
            }
        }
        Some(_) => {
            let cell = ((available + 1) / cells).saturating_sub(1).min(most);
            RowLayout {
                bytes,
                label,
                ascii: false,
                side: side_width(cells, cell),
                cell,
            }
        }
    };
    Some(layout)
}

/// The widest row that fits `width` columns with its argument label; without the label only
/// when even the narrowest row cannot have one (the label says what the bytes are: a view of
/// u8 or f16 cells without it was unreadable).
pub fn plan(width: u16, dtype: Option<DType>, offset_digits: usize) -> RowLayout {
    [true, false]
        .iter()
        .flat_map(|&label| ROW_CHOICES.iter().map(move |&bytes| (bytes, label)))
        .find_map(|(bytes, label)| fit(width as usize, bytes, label, dtype, offset_digits))
        .unwrap_or_else(|| narrowest(dtype))
}

/// The layout of rows of a given width (kept by `App`) at `width` columns: clipped on the right
/// when even that does not fit a very narrow terminal.
pub fn for_row(width: u16, bytes: u64, dtype: Option<DType>, offset_digits: usize) -> RowLayout {
    fit(width as usize, bytes, true, dtype, offset_digits)
        .or_else(|| fit(width as usize, bytes, false, dtype, offset_digits))
        .unwrap_or_else(|| {
            let (least, _) = cell_widths(dtype);
            let cells = bytes as usize / dtype.map_or(1, DType::size).max(1);
            RowLayout {
                bytes,
                label: false,
                ascii: false,
                side: side_width(cells.max(1), least),
                cell: least,
            }
        })
}

fn narrowest(dtype: Option<DType>) -> RowLayout {
    let bytes = ROW_CHOICES
        .iter()
        .rev()
        .copied()
        .find(|&b| b >= dtype.map_or(1, DType::size) as u64)
        .unwrap_or(16);
    let (least, _) = cell_widths(dtype);
    let cells = bytes as usize / dtype.map_or(1, DType::size);
    RowLayout {
        bytes,
        label: false,
        ascii: false,
        side: side_width(cells, least),
        cell: least,
    }
}

/// Hex digits of the offset column for a snapshot of `len` bytes: 8, more past 4 GiB.
pub fn offset_digits(len: u64) -> usize {
    let bits = 64 - len.max(1).leading_zeros() as usize;
    bits.div_ceil(4).max(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns a row takes on screen with this layout.
    fn total(l: &RowLayout) -> usize {
        8 + OFFSET_GAP + if l.label { LABEL_WIDTH + 1 } else { 0 } + 2 * l.side + SEPARATOR_WIDTH
    }

    #[test]
    fn hex_rows_narrow_with_the_terminal_and_always_fit() {
        let at = |w| plan(w, None, 8);
        assert_eq!((at(80).bytes, at(80).label, at(80).ascii), (8, true, false));
        assert_eq!((at(120).bytes, at(120).label), (16, true));
        assert!(!at(120).ascii);
        assert!(at(200).ascii && at(200).bytes == 16);
        assert_eq!(at(40).bytes, 4);
        assert!(total(&at(40)) <= 40);
        // From 60 columns every type fits (at 40 only hex rows do).
        for w in [60u16, 80, 100, 120, 160, 200, 250] {
            for d in [None].into_iter().chain(DType::ALL.into_iter().map(Some)) {
                let l = plan(w, d, 8);
                assert!(total(&l) <= w as usize, "{w} {d:?}: {l:?}");
                assert_eq!(l.bytes % d.map_or(1, DType::size) as u64, 0);
            }
        }
    }

    #[test]
    fn typed_cells_get_the_room_there_is() {
        let f32_80 = plan(80, Some(DType::F32), 8);
        assert_eq!(f32_80.bytes, 8);
        assert!(f32_80.cell >= 12, "{f32_80:?}");
        assert_eq!(plan(200, Some(DType::F64), 8).cell, 24);
        assert_eq!(plan(80, Some(DType::U64), 8).bytes, 8);
        // u8 needs 3 columns a cell: at 80 columns rows narrow to keep the label.
        for d in [DType::U8, DType::F16, DType::BF16] {
            let l = plan(80, Some(d), 8);
            assert_eq!((l.bytes, l.label), (4, true), "{d:?}");
        }
    }

    #[test]
    fn a_kept_row_width_is_laid_out_even_when_too_wide() {
        let l = for_row(30, 16, None, 8);
        assert_eq!(l.bytes, 16);
        assert!(!l.label && !l.ascii);
    }
}
