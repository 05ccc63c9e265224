use humansize::{format_size, BINARY};
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};
use ratatui::Frame;

use super::fit;
use crate::tui::app::App;
use crate::tui::theme::Theme;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let title = format!(
        " Instances · sorted by {}{}{} ",
        app.sort.label(),
        if app.descending { " ↓" } else { "" },
        if app.filter.is_empty() {
            String::new()
        } else {
            format!(" · filter \"{}\"", app.filter)
        }
    );
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.header));
    if app.rows.is_empty() {
        f.render_widget(
            Paragraph::new(
                "No instances here. Give rr-tui a record directory (LIBOMPTARGET_RECORD_DIR).",
            )
            .style(theme.dim)
            .block(block),
            area,
        );
        return;
    }
    let visible = (area.height as usize).saturating_sub(2).max(1);
    let start = if app.selected < visible {
        0
    } else {
        app.selected + 1 - visible
    };
    let kernel_w = (area.width as usize).saturating_sub(110).max(16);
    let rows: Vec<Row> = app.view[start..(start + visible).min(app.view.len())]
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let r = &app.rows[i];
            let name = if app.raw_names {
                r.raw_kernel()
            } else {
                r.demangled.clone()
            };
            let (badge, style) = match app.replays.get(&i).map(|x| x.badge().0) {
                Some(b @ "verified") => (b, theme.ok),
                Some(b @ ("failed" | "mismatch")) => (b, theme.error),
                Some(b) => (b, theme.warn),
                None if r.problem.is_some() => ("bad file", theme.error),
                None => ("", theme.dim),
            };
            let mark = if app.mark == Some(i) { "◆" } else { " " };
            let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
            let row = Row::new(vec![
                Cell::from(format!("{mark}{:>4}", i + 1)),
                Cell::from(fit(&name, kernel_w)),
                Cell::from(opt(r.time_ns.map(|t| t / 1000)).to_string()),
                Cell::from(opt(r.occurrences)),
                Cell::from(r.geometry()),
                Cell::from(
                    r.input_len
                        .map(|l| format_size(l, BINARY))
                        .unwrap_or_else(|| "missing".into()),
                ),
                Cell::from(Span::styled(badge, style)),
                Cell::from(Span::styled(fit(&r.json_file, 42), theme.dim)),
            ]);
            if start + k == app.selected {
                row.style(theme.selected)
            } else {
                row
            }
        })
        .collect();
    let header = Row::new([
        "     #",
        "kernel",
        "time µs",
        "occ",
        "grid · block",
        "snapshot",
        "status",
        "descriptor",
    ])
    .style(theme.header);
    let table = Table::new(
        rows,
        [
            Constraint::Length(6),
            Constraint::Min(16),
            Constraint::Length(8),
            Constraint::Length(5),
            Constraint::Length(22),
            Constraint::Length(10),
            Constraint::Length(9),
            Constraint::Length(42),
        ],
    )
    .header(header)
    .block(block);
    f.render_widget(table, area);
    if let Some(i) = app.current() {
        if let Some(p) = &app.rows[i].problem {
            let y = area.y + area.height.saturating_sub(1);
            f.render_widget(
                Paragraph::new(Line::from(Span::styled(
                    fit(p, area.width as usize),
                    theme.error,
                ))),
                Rect {
                    y,
                    height: 1,
                    ..area
                },
            );
        }
    }
}
