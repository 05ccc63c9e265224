//! Drawing: a pure function of the `App` state (no I/O beyond the visible window of the
//! memory-mapped snapshots).

mod descriptor;
pub mod format;
mod heatmap;
mod help;
mod instances;
mod profile;
mod replay;
mod snapshots;
mod statusbar;
mod tuning;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::{App, Screen};
use super::theme::Theme;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame) {
    let size = f.area();
    let [tabs, main, status, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(statusbar::height(app, size.width, size.height)),
        Constraint::Length(1),
    ])
    .areas(f.area());
    draw_tabs(app, theme, f, tabs);
    match app.screen {
        Screen::Instances => instances::draw(app, theme, f, main),
        Screen::Descriptor => descriptor::draw(app, theme, f, main),
        Screen::Snapshots => snapshots::draw(app, theme, f, main),
        Screen::Replay => replay::draw(app, theme, f, main),
        Screen::Tune => tuning::draw(app, theme, f, main),
        Screen::Profile => profile::draw(app, theme, f, main),
    }
    statusbar::draw_status(app, theme, f, status);
    statusbar::draw_hints(app, theme, f, hints);
    if app.help {
        help::draw(app, theme, f);
    }
}

fn draw_tabs(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(" rr-tui ", theme.accent)];
    let mut used = 8;
    // Every tab with a gap after it, unless that does not fit (80 columns): then without.
    let tabs_w: usize = Screen::ALL.iter().map(|s| s.title().len() + 5).sum();
    let gap = if used + tabs_w < area.width as usize {
        " "
    } else {
        ""
    };
    for (i, s) in Screen::ALL.iter().enumerate() {
        let style = if *s == app.screen {
            theme.tab_active
        } else {
            theme.dim
        };
        let tab = format!(" {} {} ", i + 1, s.title());
        used += tab.chars().count() + gap.len();
        spans.push(Span::styled(tab, style));
        spans.push(Span::raw(gap));
    }
    let dir = rr_format::text::visible_path(&app.dir);
    let room = (area.width as usize).saturating_sub(used + 1);
    spans.push(Span::styled(
        format!(" {}", fit_start(&dir, room)),
        theme.dim,
    ));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// A screen's frame: a top rule titled ` {title} ` (cut to the width); returns the area inside.
pub(crate) fn titled(title: &str, theme: &Theme, f: &mut Frame, area: Rect) -> Rect {
    let block = ratatui::widgets::Block::default()
        .borders(ratatui::widgets::Borders::TOP)
        .title(ratatui::text::Span::styled(
            fit(&format!(" {title} "), area.width as usize),
            theme.header,
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    inner
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

/// Truncate to `w` columns keeping both ends (`8683979…_13526365`): names that share a long
/// prefix (hash-named descriptors) stay told apart.
pub(crate) fn fit_middle(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    if w < 3 {
        return fit(s, w);
    }
    let tail = (w - 1) / 2;
    let head = w - 1 - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// Truncate to `w` columns keeping the end (paths: the last components say most).
pub(crate) fn fit_start(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w {
        s.to_string()
    } else if w == 0 {
        String::new()
    } else {
        let tail: String = s.chars().skip(n - (w - 1)).collect();
        format!("…{tail}")
    }
}
