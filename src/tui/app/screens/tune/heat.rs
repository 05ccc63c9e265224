//! The heatmap of a sweep: rows of one axis × columns of another (grid × block unless `a` picks
//! others), each cell the best value of its configurations by the sweep's objective (median
//! time, energy or energy-delay product). The scale is a shade *and* a colour (fast ░ ▒ ▓ █ slow), so it reads in the
//! monochrome theme too; cells wide enough also show the time. Failures have marks of their
//! own; ◆ marks the recorded configuration, ★ the best. Too many columns: cells drop the time,
//! then the map scrolls (h/l, PgUp/PgDn), and the legend says which part is on screen.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::heatmap::{HeatCell, LEVELS};
use super::layout::{corner, HeatGeometry};
use crate::settings::theme::Theme;
use crate::tui::app::TuneRun;
use crate::tui::format::duration_ns;
use crate::tui::layout::fit;
use rr_tune::{Objective, Status};

/// Fastest to slowest.
pub const SHADES: [char; LEVELS] = ['░', '▒', '▓', '█'];

/// A failure's mark and word.
fn failure_mark(s: Status) -> (char, &'static str) {
    match s {
        Status::VerifyFailed => ('≠', "verify"),
        Status::Invalid => ('⊘', "invalid"),
        Status::Fault => ('!', "fault"),
        Status::Skipped | Status::Ok => ('·', "skipped"),
    }
}

fn failure_style(s: Status, theme: &Theme) -> Style {
    match s {
        Status::VerifyFailed | Status::Fault => theme.error,
        Status::Invalid => theme.warn,
        Status::Skipped | Status::Ok => theme.dim,
    }
}

/// A cell's value in at most seven columns: a time (`950ns`, `1.02µs`, `10.2ms`), joules
/// (`4.20mJ`) or an energy-delay product (`1.2e-9`).
fn compact(v: f64, objective: Objective) -> String {
    match objective {
        Objective::Time => duration_ns(v).replace(' ', ""),
        Objective::Energy => {
            let (x, unit) = if v >= 1.0 {
                (v, "J")
            } else if v >= 1e-3 {
                (v * 1e3, "mJ")
            } else {
                (v * 1e6, "µJ")
            };
            // Three significant digits.
            let digits = if x >= 100.0 {
                0
            } else if x >= 10.0 {
                1
            } else {
                2
            };
            format!("{x:.digits$}{unit}")
        }
        Objective::Edp => format!("{v:.1e}"),
    }
}

/// A cell's value in full, for the legend.
fn full(v: f64, objective: Objective) -> String {
    match objective {
        Objective::Time => duration_ns(v),
        o => o.describe(v),
    }
}

/// The ends of the scale in words.
fn scale_words(objective: Objective) -> (&'static str, &'static str) {
    match objective {
        Objective::Time => ("fast", "slow"),
        Objective::Energy => ("frugal", "costly"),
        Objective::Edp => ("low EDP", "high"),
    }
}

pub fn draw(run: &TuneRun, scroll: (usize, usize), theme: &Theme, f: &mut Frame, area: Rect) {
    if area.height == 0 {
        return;
    }
    let heat = &run.heat;
    if heat.rows.is_empty() {
        let (r, c) = heat.axis_names();
        f.render_widget(
            Paragraph::new(Span::styled(
                format!("heatmap ({r} × {c}): waiting for the first configuration"),
                theme.dim,
            )),
            area,
        );
        return;
    }
    let g = HeatGeometry::of(heat, area);
    // The same window clicks are found in (`HeatGeometry::cell_at`).
    let (row_range, col_range) = g.window(heat, scroll);
    let (r0, c0) = (row_range.start, col_range.start);
    let rows = &heat.rows[row_range];
    let cols = &heat.cols[col_range];
    let best = run.report.best.as_ref().map(|t| heat.place(&t.config));
    let content_w = g.cell_w - 1;

    let mut lines = Vec::with_capacity(rows.len() + 2);
    let mut header = vec![Span::styled(
        format!("{:<w$}", fit(&corner(heat), g.label_w), w = g.label_w),
        theme.header,
    )];
    for col in cols {
        header.push(Span::styled(
            format!(" {:>content_w$}", fit(&col.label, content_w)),
            theme.header,
        ));
    }
    lines.push(Line::from(header));
    for row in rows {
        let mut spans = vec![Span::styled(
            format!("{:>w$}", fit(&row.label, g.label_w), w = g.label_w),
            theme.header,
        )];
        for col in cols {
            spans.push(Span::raw(" "));
            let is_best = best.as_ref().is_some_and(|(r, c)| r == row && c == col);
            spans.extend(cell_spans(
                run,
                heat.cell(row, col),
                is_best,
                g.wide,
                content_w,
                theme,
            ));
        }
        lines.push(Line::from(spans));
    }
    lines.push(legend(run, (r0, c0), &g, area.width as usize, theme));
    f.render_widget(Paragraph::new(lines), area);
}

/// One cell, `w` columns: its mark (◆ recorded, ★ best), then its shade and time, or its
/// failure, or nothing yet.
fn cell_spans<'a>(
    run: &TuneRun,
    cell: Option<&HeatCell>,
    is_best: bool,
    wide: bool,
    w: usize,
    theme: &Theme,
) -> Vec<Span<'a>> {
    let Some(c) = cell else {
        return vec![Span::raw(" ".repeat(w))];
    };
    let mark = if c.recorded {
        "◆"
    } else if is_best {
        "★"
    } else {
        " "
    };
    let rest = w.saturating_sub(1);
    let body = match (c.best, c.failure) {
        (Some(t), _) => {
            let level = run.heat.level(t);
            let shade = SHADES[level];
            // The shade fills what the time leaves: the map reads as a map, times and all.
            let time = if wide {
                compact(t, run.heat.objective)
            } else {
                String::new()
            };
            let fill = rest.saturating_sub(time.chars().count()).max(1);
            let text = format!("{}{time}", shade.to_string().repeat(fill));
            Span::styled(text, theme.heat[level])
        }
        (None, Some(s)) => {
            let (symbol, word) = failure_mark(s);
            let text = if wide {
                format!("{symbol} {word}")
            } else {
                symbol.to_string()
            };
            Span::styled(
                format!("{:<rest$}", fit(&text, rest)),
                failure_style(s, theme),
            )
        }
        (None, None) => Span::raw(" ".repeat(rest)),
    };
    vec![Span::styled(mark, theme.accent), body]
}

/// Which part is on screen (when not all of it), the scale with its ends, and the marks.
fn legend<'a>(
    run: &TuneRun,
    (r0, c0): (usize, usize),
    g: &HeatGeometry,
    width: usize,
    theme: &Theme,
) -> Line<'a> {
    let heat = &run.heat;
    let long = width >= 120;
    let mut spans = Vec::new();
    let mut used = 0;
    let mut push = |spans: &mut Vec<Span<'a>>, text: String, style: Style| {
        let text = fit(&text, width.saturating_sub(used));
        used += text.chars().count();
        spans.push(Span::styled(text, style));
    };
    let (rows, cols) = (heat.rows.len(), heat.cols.len());
    let mut place = Vec::new();
    if rows > g.rows {
        place.push(format!(
            "rows {}–{}/{rows} PgUp/PgDn",
            r0 + 1,
            (r0 + g.rows).min(rows)
        ));
    }
    if cols > g.cols {
        place.push(format!(
            "cols {}–{}/{cols} h/l",
            c0 + 1,
            (c0 + g.cols).min(cols)
        ));
    }
    if !place.is_empty() {
        push(
            &mut spans,
            format!("{} · ", place.join(" · ")),
            theme.accent,
        );
    }
    if let Some((lo, hi)) = heat.range() {
        let o = heat.objective;
        let (good, bad) = scale_words(o);
        push(
            &mut spans,
            if long {
                format!("{good} ")
            } else {
                String::new()
            },
            theme.dim,
        );
        for (level, shade) in SHADES.iter().enumerate() {
            push(&mut spans, shade.to_string(), theme.heat[level]);
        }
        let ends = if long {
            format!(" {bad} ({} – {}) ", full(lo, o), full(hi, o))
        } else {
            format!(" {}–{} ", compact(lo, o), compact(hi, o))
        };
        push(&mut spans, ends, theme.dim);
    }
    let marks: &[(&str, &str, Style)] = &[
        ("≠", "verify failed", theme.error),
        ("⊘", "invalid", theme.warn),
        ("!", "fault", theme.error),
        ("·", "skipped", theme.dim),
        ("◆", "recorded", theme.accent),
        ("★", "best", theme.accent),
    ];
    for (symbol, word, style) in marks {
        push(&mut spans, format!(" {symbol}"), *style);
        let word = if long {
            word
        } else {
            word.split(' ').next().unwrap_or(word)
        };
        push(&mut spans, word.to_string(), theme.dim);
    }
    Line::from(spans)
}
