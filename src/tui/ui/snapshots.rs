use humansize::{format_size, BINARY};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::tui::app::snapview::{Line as ViewLine, SnapView, ROW};
use crate::tui::app::App;
use crate::tui::theme::Theme;
use rr_engine::diff::typed::{decode, Value};
use rr_engine::diff::DType;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(s) = &app.snap else {
        f.render_widget(
            Paragraph::new("No snapshots open: select an instance and press Enter.")
                .style(theme.dim)
                .block(Block::default().borders(Borders::TOP)),
            area,
        );
        return;
    };
    let mode = match s.dtype {
        None => "hex".to_string(),
        Some(d) => format!("{} {}", d.name(), if s.big_endian { "BE" } else { "LE" }),
    };
    let progress = if let Some(e) = &s.error {
        e.clone()
    } else if s.done {
        format!(
            "{} differing range(s), {} differ",
            s.index.ranges.len(),
            format_size(s.index.differing_bytes(), BINARY)
        )
    } else {
        format!(
            "indexing {:.0}% · {} range(s) so far",
            s.progress() * 100.0,
            s.index.ranges.len()
        )
    };
    let title = format!(
        " {} · {} · {mode}{} · {progress} ",
        app.rows[s.instance].json_file,
        s.pair.label(),
        if s.squeeze { " · squeezed" } else { "" }
    );
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.header));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let mut lines = vec![header(s, theme)];
    if s.a.len() != s.b.len() {
        lines.push(Line::from(Span::styled(
            format!(
                "lengths differ: {} vs {} bytes; bytes past the shorter file show as missing",
                s.a.len(),
                s.b.len()
            ),
            theme.warn,
        )));
    }
    let rows = (inner.height as usize).saturating_sub(lines.len());
    let view_lines = s.lines(rows);
    for &l in &view_lines {
        lines.push(match l {
            ViewLine::Squeezed { start, end } => Line::from(Span::styled(
                format!(
                    "{:>11} {start:0w$x}  ··· {} equal bytes ({} rows) up to {end:#x} ···",
                    "",
                    format_size(end - start, BINARY),
                    (end - start) / ROW,
                    w = offset_digits(s)
                ),
                theme.dim,
            )),
            ViewLine::Row(off) => row(s, theme, off),
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
            ViewLine::Row(o) => o + ROW,
            ViewLine::Squeezed { end, .. } => end,
        };
        s.a.release(start, end - start);
        s.b.release(start, end - start);
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn header(s: &SnapView, theme: &Theme) -> Line<'static> {
    let side = side_width(s);
    let name = |p: &std::path::Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let w = offset_digits(s);
    let text = format!(
        "{:>11} {:<w$}  {:<side$} │ {:<side$}",
        "label",
        "offset",
        crate::tui::ui::fit(&name(s.a.path()), side),
        crate::tui::ui::fit(&name(s.b.path()), side)
    );
    Line::from(Span::styled(text, theme.header))
}

/// Hex digits of the offset column: 8, more for snapshots past 4 GiB.
fn offset_digits(s: &SnapView) -> usize {
    let bits = 64 - s.len().max(1).leading_zeros() as usize;
    bits.div_ceil(4).max(8)
}

fn side_width(s: &SnapView) -> usize {
    match s.dtype {
        None => 47,
        Some(d) => (ROW as usize / d.size()) * (cell_width(d) + 1) - 1,
    }
}

fn cell_width(d: DType) -> usize {
    match d {
        DType::U8 | DType::I8 => 4,
        DType::U16 | DType::I16 | DType::F16 | DType::BF16 => 8,
        DType::U32 | DType::I32 => 11,
        DType::F32 => 11,
        DType::U64 | DType::I64 | DType::F64 => 21,
    }
}

fn row(s: &SnapView, theme: &Theme, off: u64) -> Line<'static> {
    let diffs = s.index.within(off, off + ROW);
    let different = |o: u64| diffs.iter().any(|r| r.contains(&o)) || o >= s.a.len().min(s.b.len());
    let any = !diffs.is_empty() || off + ROW > s.a.len().min(s.b.len());
    let mut spans = vec![
        Span::styled(
            format!("{:>11} ", crate::tui::ui::fit(&s.map.label(off), 11)),
            theme.dim,
        ),
        Span::styled(
            format!("{off:0w$x}", w = offset_digits(s)),
            if any { theme.accent } else { theme.dim },
        ),
        Span::raw("  "),
    ];
    for (side, snap) in [(0, &s.a), (1, &s.b)] {
        let bytes = snap.window(off, ROW as usize);
        let mark = if side == 0 {
            theme.diff_a
        } else {
            theme.diff_b
        };
        match s.dtype {
            None => {
                for k in 0..ROW as usize {
                    let text = bytes
                        .get(k)
                        .map(|b| format!("{b:02x}"))
                        .unwrap_or_else(|| "  ".into());
                    let style = if different(off + k as u64) && bytes.get(k).is_some() {
                        mark
                    } else if bytes.get(k) == Some(&0) {
                        theme.dim
                    } else {
                        theme.text
                    };
                    spans.push(Span::styled(text, style));
                    if k + 1 < ROW as usize {
                        spans.push(Span::raw(" "));
                    }
                }
            }
            Some(d) => {
                let n = d.size();
                let w = cell_width(d);
                for k in (0..ROW as usize).step_by(n) {
                    let text = if k + n <= bytes.len() {
                        fmt_value(decode(d, &bytes[k..], s.big_endian), w)
                    } else {
                        " ".repeat(w)
                    };
                    let style = if (0..n).any(|j| different(off + (k + j) as u64)) {
                        mark
                    } else {
                        theme.text
                    };
                    if k > 0 {
                        spans.push(Span::raw(" "));
                    }
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

fn fmt_value(v: Value, w: usize) -> String {
    let s = match v {
        Value::Int(i) => i.to_string(),
        Value::Float(x) if x == 0.0 || (x.abs() >= 1e-3 && x.abs() < 1e5) => format!("{x:.4}"),
        Value::Float(x) => format!("{x:.2e}"),
    };
    format!("{s:>w$}")
}
