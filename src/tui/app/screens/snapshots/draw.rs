//! The side-by-side snapshot view's drawing. Rows are as wide as the screen chose for the
//! terminal (16, 8 or 4 bytes, see `rowlayout`), so both sides always show the same bytes; an
//! ASCII column appears when there is room; typed cells get the width there is.

use humansize::{format_size, BINARY};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::rowlayout::{self, RowLayout, ASCII_GAP, LABEL_WIDTH};
use super::view::{Line as ViewLine, Pair, SnapView};
use super::SnapshotsScreen;
use crate::settings::theme::Theme;
use crate::tui::app::App;
use crate::tui::format::{ascii_char, typed_cell, ByteCategory};
use crate::tui::layout::fit;

pub(super) fn draw(screen: &SnapshotsScreen, app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(s) = &screen.view else {
        // While a worker maps them, keys wait for them (`pending`): no call to press Enter.
        let text = match screen.opening {
            Some(_) => "Snapshots still loading…",
            None => "No snapshots open: select an instance and press Enter.",
        };
        f.render_widget(
            Paragraph::new(text)
                .style(theme.dim)
                .block(Block::default().borders(Borders::TOP)),
            area,
        );
        return;
    };
    // The title wraps (its second line under the rule) rather than hiding the count of
    // differing bytes at 80 columns.
    let json_file = &app.rows[s.instance].json_file;
    let titles = s.title_lines(json_file, area.width);
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(format!(" {} ", titles[0]), theme.header));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let digits = rowlayout::offset_digits(s.len());
    let layout = rowlayout::for_row(inner.width, s.row, s.dtype, digits);
    let mut lines: Vec<Line> = titles[1..]
        .iter()
        .map(|t| Line::from(Span::styled(format!(" {t}"), theme.header)))
        .collect();
    lines.push(header(s, &layout, digits, theme));
    if s.a.len() != s.b.len() {
        lines.push(Line::from(Span::styled(
            fit(
                &format!(
                    "lengths differ: {} vs {} bytes; bytes past the shorter file show as missing",
                    s.a.len(),
                    s.b.len()
                ),
                inner.width as usize,
            ),
            theme.warn,
        )));
    }
    let rows = (inner.height as usize).saturating_sub(lines.len());
    let view_lines = s.lines(rows);
    for &l in &view_lines {
        lines.push(match l {
            ViewLine::Squeezed { start, end } => {
                squeezed(s, &layout, digits, start, end, inner.width, theme)
            }
            ViewLine::Row(off) => row(s, &layout, digits, off, theme),
        });
    }
    // Give the drawn pages back to the kernel: a fault at the indexing frontier of a huge file
    // otherwise leaves read-around pages mapped (measured: 0.5 to 2.9 GiB resident while
    // viewing 8 GiB snapshots, 56 MiB with this). Redrawing faults the few visible pages again.
    if let (Some(&first), Some(&last)) = (view_lines.first(), view_lines.last()) {
        let start = match first {
            ViewLine::Row(o) | ViewLine::Squeezed { start: o, .. } => o,
        };
        let end = match last {
            ViewLine::Row(o) => o + s.row,
            ViewLine::Squeezed { end, .. } => end,
        };
        s.a.release(start, end - start);
        s.b.release(start, end - start);
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// What each side shows: the role first, so it survives when the file name is cut.
fn roles(pair: Pair) -> (&'static str, &'static str) {
    match pair {
        Pair::InputOutput => ("input", "output"),
        Pair::OutputReplay => ("output", "replay output"),
    }
}

fn margin(layout: &RowLayout, label: &str, digits: usize, offset: &str) -> String {
    if layout.label {
        format!(
            "{:>LABEL_WIDTH$} {offset:<digits$}  ",
            fit(label, LABEL_WIDTH)
        )
    } else {
        format!("{offset:<digits$}  ")
    }
}

fn header(s: &SnapView, layout: &RowLayout, digits: usize, theme: &Theme) -> Line<'static> {
    let name = |p: &std::path::Path| {
        p.file_name()
            .map(|n| rr_format::text::visible(&n.to_string_lossy()).into_owned())
            .unwrap_or_default()
    };
    let (left, right) = roles(s.pair);
    let side = layout.side;
    let pane = |role: &str, p: &std::path::Path| fit(&format!("{role} {}", name(p)), side);
    let text = format!(
        "{}{:<side$} │ {:<side$}",
        margin(layout, "label", digits, "offset"),
        pane(left, s.a.path()),
        pane(right, s.b.path()),
    );
    Line::from(Span::styled(text, theme.header))
}

fn squeezed(
    s: &SnapView,
    layout: &RowLayout,
    digits: usize,
    start: u64,
    end: u64,
    width: u16,
    theme: &Theme,
) -> Line<'static> {
    let text = format!(
        "{}··· {} equal ({} rows) up to {end:#x} ···",
        margin(layout, "", digits, &format!("{start:0digits$x}")),
        format_size(end - start, BINARY),
        (end - start) / s.row,
    );
    Line::from(Span::styled(fit(&text, width as usize), theme.dim))
}

fn category_style(theme: &Theme, b: u8) -> Style {
    match ByteCategory::of(b) {
        ByteCategory::Zero => theme.byte_zero,
        ByteCategory::Printable => theme.byte_printable,
        ByteCategory::Other => theme.byte_other,
    }
}

fn row(s: &SnapView, layout: &RowLayout, digits: usize, off: u64, theme: &Theme) -> Line<'static> {
    let n = s.row as usize;
    let (wa, wb) = (s.a.window(off, n), s.b.window(off, n));
    // Exact, byte by byte: the index merges nearby ranges for navigation, but only bytes that
    // differ (or exist on one side only) are marked.
    let different = |k: usize| match (wa.get(k), wb.get(k)) {
        (Some(x), Some(y)) => x != y,
        (None, None) => false,
        _ => true,
    };
    let any = (0..n).any(different);
    let label = if layout.label {
        s.map.label(off)
    } else {
        String::new()
    };
    let mut spans = vec![Span::styled(
        margin(layout, &label, digits, &format!("{off:0digits$x}")),
        if any { theme.accent } else { theme.dim },
    )];
    for (side, bytes) in [(0, wa), (1, wb)] {
        let mark = if side == 0 {
            theme.diff_a
        } else {
            theme.diff_b
        };
        let style_at = |k: usize| match bytes.get(k) {
            Some(_) if different(k) => mark,
            Some(&b) => category_style(theme, b),
            None => theme.dim,
        };
        match s.dtype {
            None => {
                for k in 0..n {
                    if k > 0 {
                        spans.push(Span::raw(" "));
                    }
                    let text = bytes.get(k).map_or("  ".into(), |b| format!("{b:02x}"));
                    spans.push(Span::styled(text, style_at(k)));
                }
                if layout.ascii {
                    spans.push(Span::raw(" ".repeat(ASCII_GAP)));
                    for k in 0..n {
                        let c = bytes.get(k).map_or(' ', |&b| ascii_char(b));
                        spans.push(Span::styled(c.to_string(), style_at(k)));
                    }
                }
            }
            Some(d) => {
                let size = d.size();
                for (j, k) in (0..n).step_by(size).enumerate() {
                    if j > 0 {
                        spans.push(Span::raw(" "));
                    }
                    let text = match bytes.get(k..k + size) {
                        Some(e) => typed_cell(d, e, s.big_endian, layout.cell),
                        None => " ".repeat(layout.cell),
                    };
                    let style = if (k..k + size).any(different) {
                        mark
                    } else {
                        theme.text
                    };
                    spans.push(Span::styled(text, style));
                }
            }
        }
        if side == 0 {
            spans.push(Span::styled(" │ ", theme.dim));
        }
    }
    Line::from(spans)
}
