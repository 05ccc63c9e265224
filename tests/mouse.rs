//! The mouse, as the runtime delivers it (`Msg::Mouse`): clicks on tabs, rows and heatmap
//! cells, and the wheel over the pane under the pointer. Where to click is found in the frame
//! the explorer draws (a TestBackend), never computed here: a click and the drawing must agree.

mod common;

use common::*;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::Terminal;
use rr_engine::replay::{Event, Tagged};
use rr_tui::settings::theme::Theme;
use rr_tui::tui::app::{App, Cmd, Msg, Screen, NO_INSTANCES};
use rr_tune::{Config, Status, Trial};

fn app(name: &str, w: u16, h: u16) -> App {
    let mut a = rr_tui::tui::load_app(fixture(name), Ok(()), std::env::temp_dir()).unwrap();
    a.update(Msg::Resize(w, h));
    a
}

fn key(a: &mut App, c: KeyCode) -> Vec<Cmd> {
    a.update_inline(Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)))
}

fn mouse(a: &mut App, kind: MouseEventKind, (column, row): (u16, u16)) -> Vec<Cmd> {
    a.update_inline(Msg::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }))
}

fn click(a: &mut App, at: (u16, u16)) -> Vec<Cmd> {
    mouse(a, MouseEventKind::Down(MouseButton::Left), at)
}

/// The frame the explorer draws now, a line of cell symbols per row.
fn frame(a: &App) -> Vec<Vec<String>> {
    let mut t = Terminal::new(TestBackend::new(a.width, a.height)).unwrap();
    let theme = Theme::new(rr_tui::cli::Theme::Dark);
    t.draw(|f| rr_tui::tui::ui::draw(a, &theme, f)).unwrap();
    let buf = t.backend().buffer().clone();
    (0..a.height)
        .map(|y| {
            (0..a.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect()
        })
        .collect()
}

fn line(frame: &[Vec<String>], y: u16) -> String {
    frame[y as usize].concat()
}

/// Where `text` is first drawn (its first character), searching lines from `from_line`.
fn find_from(a: &App, text: &str, from_line: u16) -> (u16, u16) {
    let f = frame(a);
    let want: Vec<String> = text.chars().map(String::from).collect();
    for (y, cells) in f.iter().enumerate().skip(from_line as usize) {
        for x in 0..cells.len().saturating_sub(want.len() - 1) {
            if cells[x..x + want.len()] == want[..] {
                return (x as u16, y as u16);
            }
        }
    }
    let screen: Vec<String> = (0..a.height).map(|y| line(&f, y)).collect();
    panic!("{text:?} is not on screen:\n{}", screen.join("\n"));
}

fn find(a: &App, text: &str) -> (u16, u16) {
    find_from(a, text, 0)
}

#[test]
fn clicking_a_tab_switches_to_its_screen() {
    let mut a = app("llvm-two-kernels", 120, 30);
    let at = find(&a, "5 Tune");
    click(&mut a, at);
    assert_eq!(a.screen, Screen::Tune);
    // The descriptor tab asks for the inspection its digit key asks for (done inline here).
    let (x, y) = find(&a, "2 Descriptor");
    click(&mut a, (x + 4, y));
    assert_eq!(a.screen, Screen::Descriptor);
    assert!(a.descriptor.inspections.contains_key(&a.current().unwrap()));
    // The brand and the directory's name are no tabs.
    click(&mut a, (1, 0));
    click(&mut a, (119, 0));
    assert_eq!(a.screen, Screen::Descriptor);
}

/// The `#` column of the instance row drawn on line `y`: the instance's number.
fn number_on(a: &App, y: u16) -> usize {
    let text = line(&frame(a), y);
    let digits: String = text
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no row on line {y}: {text}"))
}

#[test]
fn clicking_a_row_selects_it_and_the_list_stays_where_it_was() {
    // Two rows of the four fit: the end of the list is on screen.
    let mut a = app("llvm-two-kernels", 80, 8);
    key(&mut a, KeyCode::Char('G'));
    let (_, header) = find(&a, "grid · block");
    let (top, bottom) = (header + 1, header + 2);
    let shown = (number_on(&a, top), number_on(&a, bottom));
    assert_eq!(a.current(), Some(shown.1 - 1));
    click(&mut a, (30, top));
    assert_eq!(
        a.current(),
        Some(shown.0 - 1),
        "the row clicked is selected"
    );
    assert_eq!(
        (number_on(&a, top), number_on(&a, bottom)),
        shown,
        "the list moved under the pointer"
    );
    // Below the last row, the header and the status line select nothing.
    let before = a.selected;
    click(&mut a, (30, header));
    let bottom_line = a.height - 1;
    click(&mut a, (30, bottom_line));
    assert_eq!(a.selected, before);
}

#[test]
fn the_wheel_moves_the_list_under_the_pointer_and_nothing_elsewhere() {
    let mut a = app("llvm-two-kernels", 120, 30);
    let (_, header) = find(&a, "grid · block");
    mouse(&mut a, MouseEventKind::ScrollDown, (10, header + 1));
    assert_eq!(a.selected, 3, "one notch: three rows");
    mouse(&mut a, MouseEventKind::ScrollUp, (10, header + 1));
    assert_eq!(a.selected, 0);
    // Over the hint bar: not a pane.
    let hints = a.height - 1;
    mouse(&mut a, MouseEventKind::ScrollDown, (10, hints));
    assert_eq!(a.selected, 0);
}

/// A sweep's trial of grid × block taking `median` ns (a fault when `None`).
fn trial(run: u64, grid: u32, block: u32, median: Option<f64>) -> Msg {
    let status = if median.is_some() {
        Status::Ok
    } else {
        Status::Fault
    };
    let mut t = Trial::new(
        Config {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            shared_mem: 0,
            max_registers: None,
            variant: None,
        },
        status,
    );
    t.kernel_ns = median.map(|m| rr_engine::replay::stats::Stats::of(&[m * 0.99, m, m * 1.01]));
    Msg::Tune(Tagged {
        run,
        event: Event::Trial(Box::new(t)),
    })
}

/// The tuning screen with a sweep started (as `u` then `r` do); returns its run id.
fn tune_app(w: u16, h: u16) -> (App, u64) {
    let mut a = app("llvm-two-kernels", w, h);
    key(&mut a, KeyCode::Char('u'));
    let run = match key(&mut a, KeyCode::Char('r')).into_iter().next() {
        Some(Cmd::StartTune { run, .. }) => run,
        _ => panic!("no sweep started: {:?}", a.status),
    };
    (a, run)
}

fn said(a: &App) -> String {
    a.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

#[test]
fn clicking_a_heatmap_cell_picks_its_configuration() {
    let (mut a, run) = tune_app(120, 40);
    for (grid, block, median) in [
        (8, 32, Some(1000.0)),
        (8, 256, Some(2000.0)),
        (64, 32, Some(3000.0)),
        (64, 256, None),
    ] {
        a.update(trial(run, grid, block, median));
    }
    assert_eq!(a.tune.pick, 0, "the best is picked to start with");
    // The cell of grid 64 × block 32 shows its time, the third best: the table's row 3.
    let (x, y) = find(&a, "3.00µs");
    click(&mut a, (x, y));
    assert_eq!(a.tune.pick, 2, "{}", said(&a));
    assert!(
        said(&a).starts_with("row 3 picked (grid 64 × block 32"),
        "{}",
        said(&a)
    );
    // A cell where nothing verified says so and keeps the pick.
    let at = find(&a, "! fault");
    click(&mut a, at);
    assert_eq!(a.tune.pick, 2);
    assert!(
        said(&a).contains("no verified configuration"),
        "{}",
        said(&a)
    );
    // A row of the table is picked by a click too: the second best (block 256, 2.00 µs).
    let (_, heat_end) = find(&a, "fast ");
    let (x, y) = find_from(&a, "2.00 µs", heat_end + 1);
    click(&mut a, (x, y));
    assert_eq!(a.tune.pick, 1, "{}", said(&a));
    // And a field of the form: `budget` heads the second column.
    let at = find(&a, "budget");
    click(&mut a, at);
    assert_eq!(
        rr_tui::tui::app::Field::ALL[a.tune.form.cursor].label(),
        "budget"
    );
}

#[test]
fn the_wheel_scrolls_the_tuning_pane_under_the_pointer() {
    let (mut a, run) = tune_app(120, 40);
    // Thirty grid values: more heatmap rows than fit.
    for g in 1..=30 {
        a.update(trial(run, g, 32, Some(1000.0 + g as f64)));
    }
    a.update(trial(run, 1, 64, Some(900.0)));
    let cursor = a.tune.form.cursor;
    let (_, corner) = find(&a, "grid╲block");
    mouse(&mut a, MouseEventKind::ScrollDown, (2, corner + 2));
    assert_eq!(a.tune.heat_scroll.0, 3, "the heatmap scrolls by lines");
    assert_eq!(
        a.tune.form.cursor, cursor,
        "the form (with the keys) kept still"
    );
    // Sideways (Shift and the wheel): the heatmap has two columns, both on screen.
    a.update(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 2,
        row: corner + 2,
        modifiers: KeyModifiers::SHIFT,
    }));
    assert_eq!(a.tune.heat_scroll, (3, 0));
    // Over the form (collapsed to the line of its field under the cursor: thirty heatmap rows
    // need the room): its fields; the heatmap stays.
    let at = find(&a, "j/k for the others");
    mouse(&mut a, MouseEventKind::ScrollDown, at);
    assert_eq!(a.tune.form.cursor, cursor + 3);
    assert_eq!(a.tune.heat_scroll.0, 3);
    // Over the table: the pick, a row a notch.
    let (_, title) = find(&a, "best by time");
    mouse(&mut a, MouseEventKind::ScrollDown, (5, title + 2));
    assert_eq!(a.tune.pick, 1, "{}", said(&a));
    assert_eq!(a.tune.heat_scroll.0, 3);
}

#[test]
fn the_help_popup_takes_the_wheel_and_a_click_closes_it() {
    let mut a = app("llvm-two-kernels", 80, 24);
    key(&mut a, KeyCode::Char('?'));
    mouse(&mut a, MouseEventKind::ScrollDown, (0, 0));
    assert_eq!((a.help_scroll, a.selected), (3, 0));
    let at = find(&a, "5 Tune");
    click(&mut a, at);
    assert!(!a.help, "a click closes the popup");
    assert_eq!(a.screen, Screen::Instances, "and does nothing under it");
}

#[test]
fn a_prompt_being_typed_takes_no_clicks() {
    let mut a = app("llvm-two-kernels", 120, 30);
    key(&mut a, KeyCode::Char('/'));
    let at = find(&a, "5 Tune");
    click(&mut a, at);
    let (_, header) = find(&a, "grid · block");
    mouse(&mut a, MouseEventKind::ScrollDown, (10, header + 1));
    assert_eq!((a.screen, a.selected), (Screen::Instances, 0));
    assert!(a.prompt.is_some());
}

/// A directory of record directories, `names` copies of one fixture.
fn records(names: &[&str]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for n in names {
        copy_dir(&fixture("llvm-no-report"), &t.path().join(n));
    }
    t
}

/// The picker searches on a worker after the first frame: that frame says "searching…", and
/// a record directory made after the explorer loaded is in the list the search brings.
#[test]
fn the_picker_searches_after_the_first_frame_and_rows_are_clicked() {
    let t = records(&["a-run", "b-run"]);
    let mut a =
        rr_tui::tui::load_app(t.path().to_path_buf(), Ok(()), std::env::temp_dir()).unwrap();
    a.update(Msg::Resize(100, 24));
    assert!(a.picking && a.picker.as_ref().unwrap().searching);
    find(&a, "searching…");
    copy_dir(&fixture("llvm-no-report"), &t.path().join("c-run"));
    let cmds = a.update(Msg::FirstFrameDrawn);
    let work = cmds
        .into_iter()
        .find_map(|c| match c {
            Cmd::Work(w) => Some(w),
            _ => None,
        })
        .expect("the search, on a worker");
    // Keys while it runs: Enter says it is still searching.
    key(&mut a, KeyCode::Enter);
    assert!(
        a.picking && said(&a).contains("still searching"),
        "{}",
        said(&a)
    );
    a.update_inline((work.0)());
    let found: Vec<&str> = a
        .picker
        .as_ref()
        .unwrap()
        .below
        .found
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(found, ["a-run", "b-run", "c-run"]);
    let (_, header) = find(&a, "record directory");
    let (x, y) = find_from(&a, "c-run", header);
    click(&mut a, (x, y));
    assert_eq!(a.picker.as_ref().unwrap().selected, 2);
    key(&mut a, KeyCode::Enter);
    assert!(!a.picking && a.dir.ends_with("c-run"), "{:?}", a.dir);
}

#[test]
fn a_search_that_finds_nothing_leaves_an_empty_record() {
    let empty = tempfile::tempdir().unwrap();
    let mut a =
        rr_tui::tui::load_app(empty.path().to_path_buf(), Ok(()), std::env::temp_dir()).unwrap();
    a.update_inline(Msg::FirstFrameDrawn);
    assert!(!a.picking && a.picker.is_none() && a.rows.is_empty());
    assert_eq!(said(&a), NO_INSTANCES);
}
