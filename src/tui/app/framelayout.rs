//! Where the frame's parts go at the terminal's size: the tab bar (and where each tab is), the
//! screen, the status line (as tall as its message or prompt needs), the hint bar, and the rows
//! of the two lists. The drawing (`ui`) draws there and the mouse's hit-testing (`mouse`) asks
//! the same functions where things are, so the two cannot disagree; this is state's side of
//! the layout, and `ui` depends on it, never the other way.

use ratatui::layout::{Constraint, Layout, Rect};

use super::{App, GpuWork, Prompt, Screen};
use crate::tui::keymap;
use crate::tui::layout::fit;

/// The frame's four areas at this size: the tab bar, the screen, the status line, the hint
/// bar. The mouse's hit-testing (`app::mouse`) asks this same function where things are.
pub fn frame_areas(app: &App, size: Rect) -> [Rect; 4] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(status_height(app, size.width, size.height)),
        Constraint::Length(keymap::hint_line_count(app.scope(), size.width)),
    ])
    .areas(size)
}

/// The fewest lines a long message may take on a terminal of 20 lines or more (a shorter one
/// gives it one, cut with an ellipsis); a taller one gives it a third of its height, so that a
/// refusal (an LLVM 19–22 record's reason takes seven lines at 80×24) is read whole.
const MIN_STATUS_LINES: usize = 3;

/// The most lines a message takes on a terminal `height` lines tall.
fn max_status_lines(height: u16) -> usize {
    match height {
        0..20 => 1,
        _ => MIN_STATUS_LINES.max(height as usize / 3),
    }
}

/// The message of the status line and whether it is an error: the last message, or the
/// selected instance's problem (a prompt is drawn instead of either).
pub fn message(app: &App) -> Option<(&str, bool)> {
    if let Some(s) = &app.status {
        return Some((&s.text, s.error));
    }
    app.current()
        .and_then(|i| app.rows[i].problem.as_deref())
        .map(|p| (p, true))
}

/// The message in lines of the room left of the instance count: wrapped at spaces, at most
/// [`max_status_lines`] (the last cut with an ellipsis).
pub fn message_lines(app: &App, width: u16, height: u16) -> Vec<String> {
    let Some((text, _)) = message(app).filter(|_| app.prompt.is_none()) else {
        return vec![];
    };
    let room = message_room(app, width);
    let most = max_status_lines(height);
    let mut lines = crate::tui::wrap::wrap(text, room);
    if lines.len() > most {
        let rest = lines.split_off(most - 1).join(" ");
        lines.push(fit(&rest, room));
    }
    lines
}

/// Columns left of the instance count and the rule that sets it apart.
fn message_room(app: &App, width: u16) -> usize {
    let count = count_text(app, width as usize / 2).chars().count() + COUNT_RULE.len();
    (width as usize).saturating_sub(count).max(10)
}

/// Between the message and the instance count: a wrapped message never reads into the count.
pub const COUNT_RULE: &str = " │ ";

/// The fewest columns a prompt leaves for typing beside its label; a longer label goes on
/// lines of its own above the text.
const MIN_PROMPT_INPUT: usize = 24;

/// The prompt's label in lines, when it is too long to share its line with the text (the A/B
/// candidate's): wrapped, never cut.
pub fn prompt_label_lines(prompt: &Prompt, room: usize) -> Vec<String> {
    let label = format!("{}:", prompt.kind.label());
    if label.chars().count() + 1 + MIN_PROMPT_INPUT <= room {
        return vec![];
    }
    crate::tui::wrap::wrap(&label, room)
}

/// Rows the status line needs at this size (a message longer than the line wraps, and so
/// does a long prompt label).
pub fn status_height(app: &App, width: u16, screen_height: u16) -> u16 {
    if let Some(prompt) = &app.prompt {
        let room = message_room(app, width);
        return prompt_label_lines(prompt, room).len() as u16 + 1;
    }
    message_lines(app, width, screen_height).len().max(1) as u16
}

/// `[replaying K · ][tuning K · ]N of M instance(s)`, at most `max` columns.
/// On the picker: `N record directories` (or that the search is still running).
pub fn count_text(app: &App, max: usize) -> String {
    if let Some(p) = app.picker.as_ref().filter(|_| app.picking) {
        if p.searching {
            return "searching for record directories…".to_string();
        }
        // A count, as the instance list's is (the picker has no filter: all of them).
        return match p.below.found.len() {
            1 => "1 record directory".to_string(),
            n => format!("{n} record directories"),
        };
    }
    let count = format!("{} of {} instance(s)", app.view.len(), app.rows.len());
    let busy = [
        ("replaying", app.jobs.of(GpuWork::Replay)),
        ("tuning", app.jobs.of(GpuWork::Sweep)),
    ];
    let Some((what, i)) = busy.iter().find_map(|&(w, i)| Some((w, i?))) else {
        return count;
    };
    let room = max.saturating_sub(count.chars().count() + what.len() + 4);
    format!(
        "{what} {} · {count}",
        fit(&app.rows[i].demangled, room.max(4))
    )
}

/// The explorer's name, first on the tab bar and on the picker's top line.
pub const BRAND: &str = " rr-tui ";

/// The tabs as drawn at `width` columns: each screen's text, the gap after each, and the
/// columns left for the directory's name.
pub struct TabBar {
    pub tabs: Vec<(Screen, String)>,
    pub gap: usize,
    pub room: usize,
}

/// The open record's directory as the tab bar names it: relative to the picker's directory
/// when it was opened from the picker (`rrtui-stencil3d` below `record-fixtures`), else as
/// given.
pub fn shown_dir(app: &App) -> String {
    let below = app
        .picker
        .as_ref()
        .and_then(|p| app.dir.strip_prefix(&p.dir).ok())
        .filter(|rel| !rel.as_os_str().is_empty());
    rr_format::text::visible_path(below.unwrap_or(&app.dir))
}

pub fn tab_bar(app: &App, width: usize) -> TabBar {
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

/// The table's area in the screen's `area`: below the recorder's line, when there is one.
pub fn instance_table_area(app: &App, area: Rect) -> Rect {
    match app.recorder {
        Some(_) if area.height > 4 => Rect {
            y: area.y + 1,
            height: area.height - 1,
            ..area
        },
        _ => area,
    }
}

/// Where the table's rows are drawn in the screen's `area` (below its title rule and its
/// header), one line each from the first on screen: clicks find their row by this.
pub fn instance_rows(app: &App, area: Rect) -> Rect {
    let table = instance_table_area(app, area);
    Rect {
        y: table.y.saturating_add(2),
        height: table.height.saturating_sub(2),
        ..table
    }
}

/// Where the picker's rows are drawn in its `area` (below its title rule and its header), one
/// line each from the first on screen: clicks find their row by this.
pub fn picker_rows(area: Rect) -> Rect {
    Rect {
        y: area.y.saturating_add(2),
        height: area.height.saturating_sub(2),
        ..area
    }
}

/// The first of `len` rows on screen when `visible` fit: where it was (`top`) while the
/// selection stays in view, so that a click never moves the row under the pointer; else moved
/// as little as brings the selection into view. Lists draw from it and clicks count from it.
pub fn first_row(top: usize, selected: usize, len: usize, visible: usize) -> usize {
    let visible = visible.max(1);
    top.min(len.saturating_sub(visible))
        .min(selected)
        .max((selected + 1).saturating_sub(visible))
}

#[cfg(test)]
mod tests {
    use super::first_row;

    #[test]
    fn the_first_row_stays_while_the_selection_is_in_view() {
        // 100 rows, 10 on screen, the list showing 40–49.
        assert_eq!(
            first_row(40, 45, 100, 10),
            40,
            "a row in view: nothing moves"
        );
        assert_eq!(first_row(40, 39, 100, 10), 39, "one above: one line up");
        assert_eq!(
            first_row(40, 55, 100, 10),
            46,
            "below: it comes in at the bottom"
        );
        assert_eq!(first_row(95, 99, 100, 10), 90, "never past the end");
        assert_eq!(first_row(5, 2, 4, 10), 0, "a short list shows from its top");
        assert_eq!(first_row(0, 3, 4, 0), 3, "no room: the selection alone");
    }
}
