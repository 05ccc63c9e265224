//! Drawing: a pure function of the `App` state (no I/O beyond the visible window of the
//! memory-mapped snapshots).

mod descriptor;
pub mod format;
mod heatmap;
mod help;
mod instances;
mod leaderboard;
mod picker;
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

pub use instances::list_rows as instance_rows;
pub use picker::list_rows as picker_rows;

/// The frame's four areas at this size: the tab bar, the screen, the status line, the hint
/// bar. The mouse's hit-testing (`app::mouse`) asks this same function where things are.
pub fn frame_areas(app: &App, size: Rect) -> [Rect; 4] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(statusbar::height(app, size.width, size.height)),
        Constraint::Length(crate::tui::keymap::hint_line_count(app.scope(), size.width)),
    ])
    .areas(size)
}

pub fn draw(app: &App, theme: &Theme, f: &mut Frame) {
    let [tabs, main, status, hints] = frame_areas(app, f.area());
    match app.picker.as_ref().filter(|_| app.picking) {
        Some(p) => {
            draw_picker_bar(app, theme, f, tabs);
            picker::draw(p, theme, f, main);
        }
        // A sweep file still being read on a worker: said at once, whatever its size.
        None if app.opening_sweep.is_some() => {
            draw_picker_bar(app, theme, f, tabs);
            let shown = app.opening_sweep.as_ref().map_or("", |o| o.shown.as_str());
            let block = ratatui::widgets::Block::default()
                .borders(ratatui::widgets::Borders::TOP)
                .title(Span::styled(" Sweep ", theme.header));
            empty_list(format!("reading {shown}…"), block, theme, f, main);
        }
        None => draw_screen(app, theme, f, tabs, main),
    }
    statusbar::draw_status(app, theme, f, status);
    statusbar::draw_hints(app, theme, f, hints);
    if app.help {
        help::draw(app, theme, f);
    }
}

/// The tab bar and the screen of the record that is open.
fn draw_screen(app: &App, theme: &Theme, f: &mut Frame, tabs: Rect, main: Rect) {
    draw_tabs(app, theme, f, tabs);
    match app.screen {
        Screen::Instances => instances::draw(app, theme, f, main),
        Screen::Descriptor => descriptor::draw(app, theme, f, main),
        Screen::Snapshots => snapshots::draw(app, theme, f, main),
        Screen::Replay => replay::draw(app, theme, f, main),
        Screen::Tune => tuning::draw(app, theme, f, main),
        Screen::Profile => profile::draw(app, theme, f, main),
    }
}

/// The picker's top line: no tabs, the directory given (not the record last opened from it).
fn draw_picker_bar(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let given = app.picker.as_ref().map_or(&app.dir, |p| &p.dir);
    let dir = rr_format::text::visible_path(given);
    let room = (area.width as usize).saturating_sub(BRAND.len() + 1);
    let spans = vec![
        Span::styled(BRAND, theme.accent),
        Span::styled(format!(" {}", fit_path(&dir, room)), theme.dim),
    ];
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

const BRAND: &str = " rr-tui ";

/// The tabs as drawn at `width` columns: each screen's text, the gap after each, and the
/// columns left for the directory's name.
struct TabBar {
    tabs: Vec<(Screen, String)>,
    gap: usize,
    room: usize,
}

/// The open record's directory as the tab bar names it: relative to the picker's directory
/// when it was opened from the picker (`rrtui-stencil3d` below `record-fixtures`), else as
/// given.
fn shown_dir(app: &App) -> String {
    let below = app
        .picker
        .as_ref()
        .and_then(|p| app.dir.strip_prefix(&p.dir).ok())
        .filter(|rel| !rel.as_os_str().is_empty());
    rr_format::text::visible_path(below.unwrap_or(&app.dir))
}

fn tab_bar(app: &App, width: usize) -> TabBar {
    let dir = shown_dir(app);
    let name_len = dir
        .rsplit('/')
        .find(|c| !c.is_empty())
        .map_or(0, |n| n.chars().count());
    let tabs = |short: bool| -> Vec<(Screen, String)> {
        Screen::ALL
            .iter()
            .enumerate()
            .map(|(i, &s)| match short && s != app.screen {
                true => (s, format!(" {} {} ", i + 1, s.short_title())),
                false => (s, format!(" {} {} ", i + 1, s.title())),
            })
            .collect()
    };
    let tabs_width = |tabs: &[(Screen, String)], gap: usize| -> usize {
        tabs.iter().map(|(_, t)| t.chars().count() + gap).sum()
    };
    // Full titles with gaps, then without, then short titles (the active one stays whole):
    // the first that leaves the directory's name whole (80 columns: the short ones).
    let (short, gap) = [(false, 1), (false, 0), (true, 1), (true, 0)]
        .into_iter()
        .find(|&(short, gap)| BRAND.len() + tabs_width(&tabs(short), gap) + 1 + name_len <= width)
        .unwrap_or((true, 0));
    let tabs = tabs(short);
    let room = width.saturating_sub(BRAND.len() + tabs_width(&tabs, gap) + 1);
    TabBar { tabs, gap, room }
}

/// Where each tab is drawn in the tab bar `area` (for clicks on them); none on the picker.
pub fn tab_places(app: &App, area: Rect) -> Vec<(Screen, Rect)> {
    if app.picking {
        return vec![];
    }
    let bar = tab_bar(app, area.width as usize);
    let mut x = area.x as usize + BRAND.len();
    let mut places = Vec::with_capacity(bar.tabs.len());
    for (s, text) in &bar.tabs {
        let w = text.chars().count();
        places.push((
            *s,
            Rect::new(x as u16, area.y, w as u16, 1).intersection(area),
        ));
        x += w + bar.gap;
    }
    places
}

fn draw_tabs(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let dir = shown_dir(app);
    let bar = tab_bar(app, area.width as usize);
    let mut spans = vec![Span::styled(BRAND, theme.accent)];
    for (s, text) in bar.tabs {
        let style = if s == app.screen {
            theme.tab_active
        } else {
            theme.dim
        };
        spans.push(Span::styled(text, style));
        spans.push(Span::raw(" ".repeat(bar.gap)));
    }
    spans.push(Span::styled(
        format!(" {}", fit_path(&dir, bar.room)),
        theme.dim,
    ));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// A path in `w` columns: its last component whole, the middle of what leads to it cut
/// (`/home/…/llvm-two-kernels`); a name longer than `w` keeps both its ends.
pub(crate) fn fit_path(path: &str, w: usize) -> String {
    let n = path.chars().count();
    if n <= w {
        return path.to_string();
    }
    let trimmed = path.trim_end_matches('/');
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    let name_len = name.chars().count();
    if name_len + 2 > w {
        return fit_middle(name, w);
    }
    // A head of a character or two (`r…/name`) says nothing of where the name is: none then.
    let head: String = match w - name_len - 2 {
        keep if keep < 3 => String::new(),
        keep => path.chars().take(keep).collect(),
    };
    format!("{head}…/{name}")
}

/// A screen's frame: a top rule titled ` {title} ` (cut to the width); returns the area inside.
pub(crate) fn titled(title: &str, theme: &Theme, f: &mut Frame, area: Rect) -> Rect {
    let block = ratatui::widgets::Block::default()
        .borders(ratatui::widgets::Borders::TOP)
        .title(ratatui::text::Span::styled(
            fit(&format!(" {title} "), area.width as usize),
            theme.header,
        ));
    f.render_widget(block, area);
    titled_inner(area)
}

/// The area inside a screen's frame ([`titled`]): below its top rule.
pub fn titled_inner(area: Rect) -> Rect {
    ratatui::widgets::Block::default()
        .borders(ratatui::widgets::Borders::TOP)
        .inner(area)
}

/// A list's place when it has nothing to show: `text`, dimmed and wrapped, inside `block`.
pub(crate) fn empty_list(
    text: String,
    block: ratatui::widgets::Block,
    theme: &Theme,
    f: &mut Frame,
    area: Rect,
) {
    f.render_widget(
        ratatui::widgets::Paragraph::new(text)
            .wrap(ratatui::widgets::Wrap { trim: true })
            .style(theme.dim)
            .block(block),
        area,
    );
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
