//! The descriptor screen: one instance as `inspect` shows it, or, with a marked instance, the
//! decoded fields of both side by side (geometry, limits, each argument by segment and offset,
//! globals by name with their values), changed fields highlighted.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::{fit, fit_middle};
use crate::tui::app::descriptors::{self, FieldRow};
use crate::tui::app::App;
use crate::tui::theme::Theme;
use rr_format::inspect::Inspection;

/// The field-name column never takes more than this.
const MAX_NAME: usize = 22;

fn inspection(app: &App, i: usize) -> Result<Option<&Inspection>, &str> {
    match app.inspections.get(&i) {
        Some(Ok(ins)) => Ok(Some(ins)),
        Some(Err(e)) => Err(e),
        None => Ok(None),
    }
}

pub fn draw(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(cur) = app.current() else { return };
    if let Some(mark) = app.mark.filter(|&m| m != cur) {
        return draw_diff(app, theme, f, area, mark, cur);
    }
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        fit(
            &format!(" Descriptor · {} ", app.rows[cur].json_file),
            area.width as usize,
        ),
        theme.header,
    ));
    let mut lines: Vec<Line> = match inspection(app, cur) {
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
        Paragraph::new(lines).block(block).scroll((scroll(app), 0)),
        area,
    );
}

fn scroll(app: &App) -> u16 {
    app.descriptor_scroll.min(u16::MAX as usize) as u16
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

fn draw_diff(app: &App, theme: &Theme, f: &mut Frame, area: Rect, left: usize, right: usize) {
    let compared = match (inspection(app, left), inspection(app, right)) {
        (Ok(Some(a)), Ok(Some(b))) => Ok(app
            .compared
            .get((left, right), || descriptors::compare(a, b))),
        (Err(e), _) | (_, Err(e)) => Err(Span::styled(e.to_string(), theme.error)),
        _ => Err(Span::styled("loading…", theme.dim)),
    };
    let title = match &compared {
        Ok(c) => format!(" Descriptors · {} ", c.summary()),
        Err(_) => " Descriptors ".to_string(),
    };
    let rows: Result<Vec<FieldRow>, _> = compared.map(|c| {
        c.rows()
            .skip(app.descriptor_scroll)
            .take(area.height as usize)
            .collect()
    });
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

fn field_row(r: &FieldRow, name_w: usize, value_w: usize, theme: &Theme) -> Line<'static> {
    let changed = r.changed;
    let value = |v: &String, mark| {
        Span::styled(
            format!("{:<value_w$}", fit(v, value_w)),
            if changed { mark } else { theme.text },
        )
    };
    Line::from(vec![
        Span::styled(
            format!("{:<name_w$}  ", fit(&r.name, name_w)),
            if changed { theme.accent } else { theme.dim },
        ),
        value(&r.left, theme.diff_a),
        Span::styled(" │ ", theme.dim),
        value(&r.right, theme.diff_b),
    ])
}
