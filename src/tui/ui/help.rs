//! The help popup: every key from the key map, scrolled when the terminal is short.

use ratatui::layout::{Constraint, Flex, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::settings::theme::Theme;
use crate::tui::app::App;
use crate::tui::keymap::{self, HelpRow, HELP_KEY_COLUMN as KEY_COLUMN};
use crate::tui::layout::fit;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame) {
    let width = keymap::help_popup_width(f.area().width);
    let all = keymap::help_rows(app.scope(), width);
    let height = keymap::help_popup_height(app.scope(), f.area().height, f.area().width);
    let [area] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(f.area());
    let [area] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(area);
    let rows = height.saturating_sub(2) as usize;
    let text_width = width.saturating_sub(2) as usize;
    let first = app.help_scroll.min(all.len().saturating_sub(rows));
    let lines: Vec<Line> = all
        .iter()
        .skip(first)
        .take(rows)
        .map(|l| match l {
            HelpRow::Section(title) => Line::from(Span::styled(*title, theme.header)),
            HelpRow::Key(key, what) => Line::from(vec![
                Span::styled(
                    format!("  {:<KEY_COLUMN$}", key.unwrap_or("")),
                    theme.accent,
                ),
                Span::styled(what.clone(), theme.text),
            ]),
            // Wrapped to the width already; `fit` only guards a terminal narrower than a word.
            HelpRow::Note(note) => Line::from(Span::styled(fit(note, text_width), theme.dim)),
        })
        .collect();
    let below = all.len().saturating_sub(first + rows);
    let position = if below > 0 || first > 0 {
        format!(
            " {}–{} of {} · j/k scroll ",
            first + 1,
            first + lines.len(),
            all.len()
        )
    } else {
        String::new()
    };
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(" Keys ", theme.header))
                .title_bottom(Line::from(Span::styled(position, theme.dim)).right_aligned()),
        ),
        area,
    );
}
