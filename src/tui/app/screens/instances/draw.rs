//! The instance table's drawing. Fixed columns take the width their contents need; the columns
//! that get cut (kernel, descriptor file) share what is left, the kernel first.

use humansize::{format_size, BINARY};
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Span, Text};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};
use ratatui::Frame;

use crate::settings::theme::Theme;
use crate::tui::app::framelayout::{first_row, instance_rows, instance_table_area};
use crate::tui::app::{App, Row as InstanceRow};
use crate::tui::format::duration_ns;
use crate::tui::layout::{fit, fit_middle};
use crate::tui::widgets::empty_list;

/// The descriptor column is dropped rather than shown narrower than this.
const MIN_DESCRIPTOR: usize = 12;
/// The kernel column keeps at least this much before the descriptor column gets any.
const MIN_KERNEL: usize = 16;
const COLUMNS: usize = 8;

fn time_text(r: &InstanceRow) -> String {
    r.time_ns
        .map(|t| duration_ns(t as f64))
        .unwrap_or_else(|| "?".into())
}

fn size_text(r: &InstanceRow) -> String {
    r.input_len
        .map(|l| format_size(l, BINARY))
        .unwrap_or_else(|| "missing".into())
}

fn name_of(app: &App, r: &InstanceRow) -> String {
    if app.raw_names {
        r.raw_kernel()
    } else {
        r.demangled.clone()
    }
}

fn badge(app: &App, theme: &Theme, i: usize) -> (&'static str, ratatui::style::Style) {
    match app.replay.runs.get(&i).map(|x| x.badge().0) {
        Some(b @ "verified") => (b, theme.ok),
        Some(b @ ("failed" | "mismatch")) => (b, theme.error),
        Some(b) => (b, theme.warn),
        None if app.rows[i].problem.is_some() => ("bad file", theme.error),
        None if app.rows[i].unreplayable.is_some() => ("no replay", theme.warn),
        None => ("", theme.dim),
    }
}

fn title(app: &App) -> String {
    let mut t = format!(
        " Instances · sorted by {}{}",
        app.instances.sort.label(),
        if app.instances.descending { " ↓" } else { "" }
    );
    if !app.instances.filter.is_empty() {
        t.push_str(&format!(" · filter \"{}\"", app.instances.filter));
    }
    match app.checked {
        Some(n) if n < app.rows.len() => t.push_str(&format!(" · checking {n}/{}", app.rows.len())),
        Some(_) => {
            let broken = app.rows.iter().filter(|r| r.problem.is_some()).count();
            if broken > 0 {
                t.push_str(&format!(" · {broken} broken"));
            }
        }
        None => {}
    }
    t.push(' ');
    t
}

/// Widths of the kernel and descriptor columns from the width left over (descriptor 0: hidden).
fn share(free: usize, kernel_want: usize, descriptor_want: usize) -> (usize, usize) {
    if free >= kernel_want + 1 + descriptor_want {
        // Nothing is cut: the columns keep their natural widths.
        return (kernel_want, descriptor_want);
    }
    let kernel = kernel_want.min(free.saturating_sub(MIN_DESCRIPTOR + 1));
    let kernel = kernel.max(MIN_KERNEL.min(kernel_want)).min(free);
    let descriptor = free.saturating_sub(kernel + 1);
    if descriptor < MIN_DESCRIPTOR {
        // The empty descriptor column still has a gap before it.
        (free.saturating_sub(1), 0)
    } else {
        (kernel, descriptor)
    }
}

pub fn draw(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    // An rr-tui recording says what it did not record, above the table.
    let table = instance_table_area(app, area);
    if table != area {
        draw_recorder_line(app, theme, f, area);
    }
    let visible = (instance_rows(app, area).height as usize).max(1);
    let area = table;
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title(app), theme.header));
    if app.rows.is_empty() {
        let text = format!(
            "No instances here. Give rr-tui a record directory (LIBOMPTARGET_RECORD_DIR): {}.",
            rr_format::search::ACCEPTED_LAYOUTS
        );
        empty_list(text, block, theme, f, area);
        return;
    }
    if app.view.is_empty() {
        let text = format!(
            "No instance matches the filter \"{}\" (kernel names and files are searched). Esc clears it; / changes it.",
            rr_format::text::visible(&app.instances.filter)
        );
        empty_list(text, block, theme, f, area);
        return;
    }
    let start = first_row(
        app.instances.list_top,
        app.selected,
        app.view.len(),
        visible,
    );
    let widths = Widths::of(app, theme, area.width as usize);
    let rows: Vec<Row> = app.view[start..(start + visible).min(app.view.len())]
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let row = table_row(app, theme, &widths, i);
            if start + k == app.selected {
                row.style(theme.selected)
            } else {
                row
            }
        })
        .collect();
    let header = Row::new(vec![
        right("#".into()),
        Cell::from("kernel"),
        right("time".into()),
        right("occ".into()),
        Cell::from("grid · block"),
        right("input".into()),
        Cell::from("status"),
        Cell::from(if widths.descriptor > 0 {
            "descriptor"
        } else {
            ""
        }),
    ])
    .style(theme.header);
    f.render_widget(
        Table::new(rows, widths.constraints())
            .header(header)
            .block(block),
        area,
    );
}

/// The recorder's account of what it did not record, on the screen's first line (a warning
/// when it left out more than what was not selected).
fn draw_recorder_line(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(sum) = app.recorder.as_ref() else {
        return;
    };
    let style = if sum
        .not_recorded
        .iter()
        .any(|(_, why)| !why.starts_with("not selected"))
    {
        theme.warn
    } else {
        theme.dim
    };
    let text = format!(" Recorder: {}", sum.headline());
    f.render_widget(
        Paragraph::new(fit(&rr_format::text::visible(&text), area.width as usize)).style(style),
        Rect { height: 1, ..area },
    );
}

/// A right-aligned cell.
fn right<'a>(s: String) -> Cell<'a> {
    Cell::from(Text::from(s).alignment(Alignment::Right))
}

/// The columns' widths: each fixed column as wide as its widest text over every row (not
/// only those on screen, so that scrolling does not move them), the kernel and descriptor
/// columns sharing what is left ([`share`]).
struct Widths {
    number: usize,
    kernel: usize,
    time: usize,
    occurrences: usize,
    geometry: usize,
    size: usize,
    status: usize,
    descriptor: usize,
}

impl Widths {
    fn of(app: &App, theme: &Theme, width: usize) -> Widths {
        let digits = app.rows.len().to_string().len().max(1);
        let widest = |header: &str, text: &dyn Fn(&InstanceRow) -> String| {
            app.rows
                .iter()
                .map(|r| text(r).chars().count())
                .chain([header.chars().count()])
                .max()
                .unwrap_or(0)
        };
        let number = digits + 2;
        let time = widest("time", &time_text);
        let occurrences = widest("occ", &|r| {
            r.occurrences.map_or("?".into(), |o| o.to_string())
        });
        let geometry = widest("grid · block", &InstanceRow::geometry);
        let size = widest("input", &size_text);
        let status = (0..app.rows.len())
            .map(|i| badge(app, theme, i).0.len())
            .chain(["status".len()])
            .max()
            .unwrap_or(6);
        let fixed = number + time + occurrences + geometry + size + status + (COLUMNS - 2);
        let kernel_want = widest("kernel", &|r| name_of(app, r));
        let descriptor_want = widest("descriptor", &|r| r.json_file.clone());
        let (kernel, descriptor) = share(width.saturating_sub(fixed), kernel_want, descriptor_want);
        Widths {
            number,
            kernel,
            time,
            occurrences,
            geometry,
            size,
            status,
            descriptor,
        }
    }

    fn constraints(&self) -> [Constraint; COLUMNS] {
        [
            self.number,
            self.kernel,
            self.time,
            self.occurrences,
            self.geometry,
            self.size,
            self.status,
            self.descriptor,
        ]
        .map(|w| Constraint::Length(w as u16))
    }
}

/// The row of instance `i`: ◆ marks the instance compared on the descriptor screen, ● one
/// marked for a sweep.
fn table_row<'a>(app: &App, theme: &Theme, widths: &Widths, i: usize) -> Row<'a> {
    let r = &app.rows[i];
    let (badge, style) = badge(app, theme, i);
    let mark = if app.mark == Some(i) {
        "◆"
    } else if app.tune.marks.contains(&i) {
        "●"
    } else {
        " "
    };
    Row::new(vec![
        Cell::from(format!("{mark}{:>w$}", i + 1, w = widths.number - 1)),
        Cell::from(fit(&name_of(app, r), widths.kernel)),
        right(time_text(r)),
        right(r.occurrences.map_or("?".into(), |o| o.to_string())),
        Cell::from(r.geometry()),
        right(size_text(r)),
        Cell::from(Span::styled(badge, style)),
        Cell::from(Span::styled(
            fit_middle(&r.json_file, widths.descriptor),
            theme.dim,
        )),
    ])
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn free_width_goes_to_the_cut_columns_kernel_first() {
        assert_eq!(share(100, 20, 45), (20, 45));
        assert_eq!(share(40, 20, 45), (20, 19));
        assert_eq!(share(30, 20, 45), (17, 12));
        assert_eq!(
            share(25, 20, 45),
            (24, 0),
            "too narrow for both: the kernel takes all"
        );
    }
}
