//! The record-directory picker: the record directories below the directory given, each with
//! its instance count and layout; the selected one opens with Enter.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Cell, Row, Table};
use ratatui::Frame;

use crate::settings::theme::Theme;
use crate::tui::app::framelayout::picker_rows;
use crate::tui::app::picker::Picker;
use crate::tui::layout::fit_middle;

pub fn draw(picker: &Picker, theme: &Theme, f: &mut Frame, area: Rect) {
    if picker.searching {
        // The search runs on a worker: the frame is drawn before it ends (a slow disk, a
        // network file system), and the title says what is awaited.
        let title = format!(
            " Record directories below {} ",
            rr_format::text::visible_path(&picker.dir)
        );
        let block = Block::default()
            .borders(Borders::TOP)
            .title(Span::styled(title, theme.header));
        super::empty_list("searching…".to_string(), block, theme, f, area);
        return;
    }
    let found = &picker.below.found;
    let title = format!(
        " {} record director{} below {}{} ",
        found.len(),
        if found.len() == 1 { "y" } else { "ies" },
        rr_format::text::visible_path(&picker.dir),
        if picker.below.incomplete {
            " (the search did not see everything: there may be more)"
        } else {
            ""
        }
    );
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.header));
    let count_width = "instances".len();
    let layout_width = found
        .iter()
        .map(|d| d.layout.chars().count())
        .max()
        .unwrap_or(0)
        .max("layout".len());
    // Names take what they need (cut in the middle when the terminal is narrower).
    let longest_name = found
        .iter()
        .map(|d| d.name.chars().count())
        .max()
        .unwrap_or(0)
        .max("record directory".len());
    let name_width =
        longest_name.min((area.width as usize).saturating_sub(count_width + layout_width + 4));
    if found.is_empty() {
        let text = format!(
            "No record directory here or below. {}",
            rr_format::search::ACCEPTED_LAYOUTS
        );
        super::empty_list(text, block, theme, f, area);
        return;
    }
    let header = Row::new(["record directory", "instances", "layout"]).style(theme.header);
    // The selected row stays in view on any height (the rule and the header take two lines).
    let visible_rows = (picker_rows(area).height as usize).max(1);
    let start = crate::tui::app::first_row(picker.top, picker.selected, found.len(), visible_rows);
    let rows: Vec<Row> = found
        .iter()
        .enumerate()
        .skip(start)
        .take(visible_rows)
        .map(|(i, d)| {
            let row = Row::new([
                Cell::from(fit_middle(&d.name, name_width)),
                Cell::from(format!("{:>count_width$}", d.instances)),
                Cell::from(d.layout.clone()),
            ]);
            match i == picker.selected {
                true => row.style(theme.selected),
                false => row,
            }
        })
        .collect();
    let table = Table::new(
        rows,
        [
            Constraint::Length(name_width as u16),
            Constraint::Length(count_width as u16),
            Constraint::Length(layout_width as u16),
        ],
    )
    .header(header)
    .block(block);
    f.render_widget(table, area);
}
