//! Drawing: a pure function of the `App` state (no I/O beyond the visible window of the
//! memory-mapped snapshots).

mod descriptor;
mod help;
mod instances;
mod replay;
mod snapshots;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::{App, Screen};
use super::keymap::{self, Scope};
use super::theme::Theme;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame) {
    let [tabs, main, status, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    draw_tabs(app, theme, f, tabs);
    match app.screen {
        Screen::Instances => instances::draw(app, theme, f, main),
        Screen::Descriptor => descriptor::draw(app, theme, f, main),
        Screen::Snapshots => snapshots::draw(app, theme, f, main),
        Screen::Replay => replay::draw(app, theme, f, main),
    }
    draw_status(app, theme, f, status);
    draw_hints(app, theme, f, hints);
    if app.help {
        help::draw(app, theme, f);
    }
}

fn draw_tabs(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(" rr-tui ", theme.accent)];
    for (i, s) in Screen::ALL.iter().enumerate() {
        let style = if *s == app.screen {
            theme.tab_active
        } else {
            theme.dim
        };
        spans.push(Span::styled(format!(" {} {} ", i + 1, s.title()), style));
        spans.push(Span::raw(" "));
    }
    let dir = rr_format::text::visible_path(&app.dir);
    spans.push(Span::styled(format!(" {dir}"), theme.dim));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_status(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let line = if let Some(input) = &app.input {
        Line::from(vec![
            Span::styled(format!("{}: ", input.kind.prompt()), theme.accent),
            Span::raw(input.text.clone()),
            Span::styled("█", theme.dim),
        ])
    } else if let Some(s) = &app.status {
        Line::from(Span::styled(
            s.text.clone(),
            if s.error { theme.error } else { theme.text },
        ))
    } else {
        let running = app
            .running
            .map(|i| format!(" · replaying {}", app.rows[i].demangled))
            .unwrap_or_default();
        Line::from(Span::styled(
            format!(
                "{} of {} instance(s){running}",
                app.view.len(),
                app.rows.len()
            ),
            theme.dim,
        ))
    };
    f.render_widget(Paragraph::new(line), area);
}

fn scope_of(s: Screen) -> Scope {
    match s {
        Screen::Instances => Scope::Instances,
        Screen::Descriptor => Scope::Descriptor,
        Screen::Snapshots => Scope::Snapshots,
        Screen::Replay => Scope::Replay,
    }
}

fn draw_hints(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    for (key, desc) in keymap::hints(scope_of(app.screen)) {
        spans.push(Span::styled(format!(" {key}"), theme.accent));
        spans.push(Span::styled(format!(" {desc} "), theme.dim));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Truncate to `w` columns with an ellipsis.
pub(crate) fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else if w == 0 {
        String::new()
    } else {
        let mut t: String = s.chars().take(w - 1).collect();
        t.push('…');
        t
    }
}
