//! The descriptor screen's drawing: one instance as `inspect` shows it, or, with a marked instance, the
//! decoded fields of both side by side (geometry, limits, each argument by segment and offset,
//! globals by name with their values), the words that changed within a changed field
//! highlighted; or (`d`) the two decoded descriptors line by line, as
//! `rr-tui diff A.json B.json` prints them, changed words highlighted within changed lines.
//! Both marks come from one word diff (`rr_engine::diff::lines`).

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::content::{self as descriptors, Compared, FieldRow};
use super::DescriptorScreen;
use crate::settings::theme::Theme;
use crate::tui::app::App;
use crate::tui::layout::{fit, fit_middle};
use rr_engine::diff::lines::{self as line_diff, Part, Row, Tag};
use rr_format::inspect::Inspection;

/// The field-name column never takes more than this.
const MAX_NAME: usize = 22;

fn inspection(d: &DescriptorScreen, i: usize) -> Result<Option<&Inspection>, &str> {
    match d.inspections.get(&i) {
        Some(Ok(ins)) => Ok(Some(ins)),
        Some(Err(e)) => Err(e),
        None => Ok(None),
    }
}

pub(super) fn draw(d: &DescriptorScreen, app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(cur) = app.current() else { return };
    if let Some(mark) = app.mark.filter(|&m| m != cur) {
        return draw_diff(d, app, theme, f, area, (mark, cur));
    }
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        fit(
            &format!(" Descriptor · {} ", app.rows[cur].json_file),
            area.width as usize,
        ),
        theme.header,
    ));
    let mut lines: Vec<Line> = match inspection(d, cur) {
        Ok(Some(ins)) => descriptors::inspect_lines(ins, area.width as usize)
            .into_iter()
            .map(|l| field_line(fit(&l, area.width as usize), theme))
            .collect(),
        Err(e) => vec![Line::from(Span::styled(e.to_string(), theme.error))],
        Ok(None) => vec![Line::from(Span::styled("loading…", theme.dim))],
    };
    if app.raw_names {
        lines.insert(
            1.min(lines.len()),
            Line::from(Span::styled(
                format!("  raw name   {}", app.rows[cur].raw_kernel()),
                theme.dim,
            )),
        );
    }
    f.render_widget(
        Paragraph::new(lines).block(block).scroll((scroll(d), 0)),
        area,
    );
}

fn scroll(d: &DescriptorScreen) -> u16 {
    d.scroll.min(u16::MAX as usize) as u16
}

/// An `inspect` line: the first 13 columns name the field.
fn field_line(l: String, theme: &Theme) -> Line<'static> {
    // Split on a character boundary: names from the files may hold any character.
    let cut = l
        .char_indices()
        .nth(descriptors::FIELD_COLUMN)
        .map(|(i, _)| i)
        .unwrap_or(l.len());
    let (head, tail) = l.split_at(cut);
    let head_style = if head.starts_with(' ') {
        theme.dim
    } else {
        theme.accent
    };
    Line::from(vec![
        Span::styled(head.to_string(), head_style),
        Span::styled(tail.to_string(), theme.text),
    ])
}

fn draw_diff(
    d: &DescriptorScreen,
    app: &App,
    theme: &Theme,
    f: &mut Frame,
    area: Rect,
    (left, right): (usize, usize),
) {
    let compared = match (inspection(d, left), inspection(d, right)) {
        (Ok(Some(a)), Ok(Some(b))) => {
            Ok(d.compared.get((left, right), || descriptors::compare(a, b)))
        }
        (Err(e), _) | (_, Err(e)) => Err(Span::styled(e.to_string(), theme.error)),
        _ => Err(Span::styled("loading…", theme.dim)),
    };
    if d.text_diff {
        if let Ok(c) = &compared {
            return draw_lines(d, app, theme, f, area, (left, right), c);
        }
    }
    let title = match &compared {
        Ok(c) => format!(" Descriptors · {} ", c.summary()),
        Err(_) => " Descriptors ".to_string(),
    };
    let rows: Result<Vec<FieldRow>, _> =
        compared.map(|c| c.rows().skip(d.scroll).take(area.height as usize).collect());
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(fit(&title, area.width as usize), theme.header));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let rows = match rows {
        Ok(rows) => rows,
        Err(why) => return f.render_widget(Paragraph::new(Line::from(why)), inner),
    };
    let width = inner.width as usize;
    let name_w = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(MAX_NAME);
    let value_w = width.saturating_sub(name_w + 2 + 3) / 2;
    let file = |role: &str, i: usize| {
        let room = value_w.saturating_sub(role.len() + 1);
        fit(
            &format!("{role} {}", fit_middle(&app.rows[i].json_file, room)),
            value_w,
        )
    };
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{:name_w$}  {:<value_w$} │ {}",
            "field",
            file("marked", left),
            file("selected", right)
        ),
        theme.header,
    ))];
    lines.extend(
        rows.iter()
            .take((inner.height as usize).saturating_sub(1))
            .map(|r| field_row(r, name_w, value_w, theme)),
    );
    f.render_widget(Paragraph::new(lines), inner);
}

/// A row of the field table: a changed field's values with the words that changed marked
/// (the word diff of the line view; a value with no word in common marked whole).
fn field_row(r: &FieldRow, name_w: usize, value_w: usize, theme: &Theme) -> Line<'static> {
    let (left, right) = match r.changed {
        true => line_diff::inline(&r.left, &r.right),
        false => (plain(&r.left), plain(&r.right)),
    };
    let mut spans = vec![Span::styled(
        format!("{:<name_w$}  ", fit(&r.name, name_w)),
        if r.changed { theme.accent } else { theme.dim },
    )];
    spans.extend(fit_parts(&left, value_w, true, theme.text, theme.diff_a));
    spans.push(Span::styled(" │ ", theme.dim));
    spans.extend(fit_parts(&right, value_w, true, theme.text, theme.diff_b));
    Line::from(spans)
}

fn plain(text: &str) -> Vec<Part> {
    vec![Part {
        emphasized: false,
        text: text.to_string(),
    }]
}

/// Pieces of a line as spans in `w` columns (cut with `…`; padded to `w` when `pad`): plain
/// pieces in `style`, emphasized ones in `mark`.
fn fit_parts(parts: &[Part], w: usize, pad: bool, style: Style, mark: Style) -> Vec<Span<'static>> {
    let total: usize = parts.iter().map(|p| p.text.chars().count()).sum();
    let cut = total > w;
    // Room for the pieces: all of it, or all but the ellipsis.
    let mut room = if cut { w.saturating_sub(1) } else { w };
    let mut shown = 0;
    let mut spans = Vec::new();
    for p in parts {
        if room == 0 {
            break;
        }
        let text: String = p.text.chars().take(room).collect();
        let n = text.chars().count();
        (room, shown) = (room - n, shown + n);
        spans.push(Span::styled(text, if p.emphasized { mark } else { style }));
    }
    if cut && w > 0 {
        spans.push(Span::styled("…", style));
        shown += 1;
    }
    if pad && shown < w {
        spans.push(Span::styled(" ".repeat(w - shown), style));
    }
    spans
}

/// The line view: the files, the notes on what bounded the comparison, then each hunk as
/// `diff -u` writes it, removed lines in `removed`, added in `added`, the changed words in
/// `diff_a` / `diff_b`.
fn draw_lines(
    d: &DescriptorScreen,
    app: &App,
    theme: &Theme,
    f: &mut Frame,
    area: Rect,
    (left, right): (usize, usize),
    c: &Compared,
) {
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        fit(
            &format!(" Descriptors · lines · {} ", c.lines_summary()),
            area.width as usize,
        ),
        theme.header,
    ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let half = width.saturating_sub(2) / 2;
    let file = |sign: &str, role: &str, i: usize| {
        let room = half.saturating_sub(sign.len() + role.len() + 2);
        fit(
            &format!("{sign} {role} {}", fit_middle(&app.rows[i].json_file, room)),
            half,
        )
    };
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{:<half$}  {}",
            file("---", "marked", left),
            file("+++", "selected", right)
        ),
        theme.header,
    ))];
    let mut notes: Vec<Line> = c
        .lines
        .notes
        .iter()
        .map(|n| Line::from(Span::styled(fit(&format!("note: {n}"), width), theme.warn)))
        .collect();
    if c.lines.is_equal() {
        notes.push(Line::from(Span::styled(
            fit("the decoded descriptors read the same", width),
            theme.dim,
        )));
    }
    // Only the rows on screen are drawn (a hostile descriptor may have thousands).
    let scroll = d.scroll;
    let skipped_rows = scroll.saturating_sub(notes.len());
    lines.extend(
        notes
            .into_iter()
            .skip(scroll)
            .chain(
                c.lines
                    .rows()
                    .skip(skipped_rows)
                    .map(|row| diff_row(row, width, theme)),
            )
            .take((inner.height as usize).saturating_sub(1)),
    );
    f.render_widget(Paragraph::new(lines), inner);
}

fn diff_row(row: Row, width: usize, theme: &Theme) -> Line<'static> {
    let l = match row {
        Row::Hunk(h) => return Line::from(Span::styled(fit(&h.header(), width), theme.accent)),
        Row::Line(l) => l,
    };
    let (style, mark) = match l.tag {
        Tag::Equal => (theme.text, theme.text),
        Tag::Delete => (theme.removed, theme.diff_a),
        Tag::Insert => (theme.added, theme.diff_b),
    };
    let mut spans = vec![Span::styled(l.tag.sign().to_string(), style)];
    spans.extend(fit_parts(
        &l.parts,
        width.saturating_sub(1),
        false,
        style,
        mark,
    ));
    Line::from(spans)
}
