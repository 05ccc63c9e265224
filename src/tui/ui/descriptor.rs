use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use similar::{ChangeTag, TextDiff};

use super::fit;
use crate::tui::app::App;
use crate::tui::theme::Theme;

fn pretty(app: &App, i: usize) -> String {
    match app.inspections.get(&i) {
        Some(Ok(ins)) => serde_json::from_str::<serde_json::Value>(&ins.descriptor.to_json())
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_default(),
        Some(Err(e)) => e.clone(),
        None => String::new(),
    }
}

pub fn draw(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(cur) = app.current() else { return };
    if let Some(mark) = app.mark.filter(|&m| m != cur) {
        return draw_diff(app, theme, f, area, mark, cur);
    }
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        format!(" Descriptor · {} ", app.rows[cur].json_file),
        theme.header,
    ));
    let lines: Vec<Line> = match app.inspections.get(&cur) {
        Some(Ok(ins)) => ins
            .lines()
            .into_iter()
            .map(|l| {
                // The first 13 columns are the field name; split on a character boundary (names
                // from the files may hold any character).
                let cut = l.char_indices().nth(13).map(|(i, _)| i).unwrap_or(l.len());
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
            })
            .collect(),
        Some(Err(e)) => vec![Line::from(Span::styled(e.clone(), theme.error))],
        None => vec![Line::from(Span::styled("loading…", theme.dim))],
    };
    let mut lines = lines;
    if app.raw_names {
        lines.insert(
            1,
            Line::from(Span::styled(
                format!("  raw name   {}", app.rows[cur].raw_kernel()),
                theme.dim,
            )),
        );
    }
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .scroll((app.descriptor_scroll, 0)),
        area,
    );
}

fn draw_diff(app: &App, theme: &Theme, f: &mut Frame, area: Rect, left: usize, right: usize) {
    let (a, b) = (pretty(app, left), pretty(app, right));
    let diff = TextDiff::from_lines(&a, &b);
    let [la, lb] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let w = la.width.saturating_sub(2) as usize;
    let (mut left_lines, mut right_lines) = (Vec::new(), Vec::new());
    for change in diff.iter_all_changes() {
        let text = fit(change.value().trim_end_matches('\n'), w);
        if change.tag() == ChangeTag::Equal {
            // Keep the two columns aligned after each changed hunk.
            let n = left_lines.len().max(right_lines.len());
            left_lines.resize(n, Line::default());
            right_lines.resize(n, Line::default());
        }
        match change.tag() {
            ChangeTag::Equal => {
                left_lines.push(Line::from(Span::styled(format!("  {text}"), theme.text)));
                right_lines.push(Line::from(Span::styled(format!("  {text}"), theme.text)));
            }
            ChangeTag::Delete => {
                left_lines.push(Line::from(Span::styled(format!("- {text}"), theme.removed)))
            }
            ChangeTag::Insert => {
                right_lines.push(Line::from(Span::styled(format!("+ {text}"), theme.added)))
            }
        }
    }
    let title = |i: usize, what: &str| {
        Span::styled(format!(" {what} {} ", app.rows[i].json_file), theme.header)
    };
    f.render_widget(
        Paragraph::new(left_lines)
            .block(
                Block::default()
                    .borders(Borders::TOP | Borders::RIGHT)
                    .title(title(left, "marked")),
            )
            .scroll((app.descriptor_scroll, 0)),
        la,
    );
    f.render_widget(
        Paragraph::new(right_lines)
            .block(
                Block::default()
                    .borders(Borders::TOP)
                    .title(title(right, "selected")),
            )
            .scroll((app.descriptor_scroll, 0)),
        lb,
    );
}
