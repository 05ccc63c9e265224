use ratatui::layout::{Constraint, Flex, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::tui::app::App;
use crate::tui::keymap::{Scope, BINDINGS};
use crate::tui::theme::Theme;

pub fn draw(_app: &App, theme: &Theme, f: &mut Frame) {
    let mut lines = Vec::new();
    for (scope, title) in [
        (Scope::Global, "Everywhere"),
        (Scope::Instances, "Instances"),
        (Scope::Descriptor, "Descriptor"),
        (Scope::Snapshots, "Snapshots"),
        (Scope::Replay, "Replay"),
    ] {
        lines.push(Line::from(Span::styled(title, theme.header)));
        for b in BINDINGS.iter().filter(|b| b.scope == scope) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<8}", b.label), theme.accent),
                Span::styled(b.description, theme.text),
            ]));
        }
    }
    lines.push(Line::from(Span::styled(
        "Mouse wheel scrolls. Esc, ? or q closes this help.",
        theme.dim,
    )));
    let height = (lines.len() as u16 + 2).min(f.area().height);
    let [area] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(f.area());
    let [area] = Layout::horizontal([Constraint::Length(64)])
        .flex(Flex::Center)
        .areas(area);
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(" Keys ", theme.header)),
        ),
        area,
    );
}
