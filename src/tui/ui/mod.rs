//! Drawing: a pure function of the `App` state (no I/O beyond the visible window of the
//! memory-mapped snapshots). This is the frame (the tab bar, the status line, the hint bar,
//! the help popup, the picker); every screen is a component (`app::screens`) and draws itself
//! in it.

mod help;
mod picker;
mod statusbar;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::framelayout::{frame_areas, shown_dir, tab_bar, BRAND};
use super::app::screens::{Component, DrawContext};
use super::app::{App, Screen};
use super::layout::fit_path;
/// The picker draws with it too.
pub(crate) use super::widgets::empty_list;
use crate::settings::theme::Theme;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame) {
    let [tabs, main, status, hints] = frame_areas(app, f.area());
    match app.picker.as_ref().filter(|_| app.picking) {
        Some(p) => {
            draw_picker_bar(app, theme, f, tabs);
            picker::draw(p, theme, f, main);
        }
        // A sweep file still being read on a worker: said at once, whatever its size.
        None if app.tune.opening.is_some() => {
            draw_picker_bar(app, theme, f, tabs);
            let shown = app.tune.opening.as_ref().map_or("", |o| o.shown.as_str());
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
    let cx = DrawContext { app, theme };
    match app.screen {
        Screen::Instances => app.instances.draw(&cx, f, main),
        Screen::Descriptor => app.descriptor.draw(&cx, f, main),
        Screen::Snapshots => app.snapshots.draw(&cx, f, main),
        Screen::Replay => app.replay.draw(&cx, f, main),
        Screen::Tune => app.tune.draw(&cx, f, main),
        Screen::Profile => app.profile.draw(&cx, f, main),
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
