//! The tuning screen: the form, what it would sweep, the sweep's progress, warnings and error,
//! the heatmap (`heat`) and the best configurations.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::heat;
use super::heatmap::dims_label;
use super::layout;
use crate::settings::theme::Theme;
use crate::tui::app::replays::Phase;
use crate::tui::app::{App, Field, ReplayBlocker, TuneForm, TuneRun};
use crate::tui::format::duration_ns;
use crate::tui::layout::fit;
use crate::tui::wrap::wrap;
use rr_engine::replay::energy::joules_text;
use rr_format::text::visible;
use rr_tune::Status;

/// The label column of the form.
const LABEL_W: usize = 12;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(cur) = app.current() else { return };
    let inner = crate::tui::widgets::titled(
        &format!("Tune · {}", app.rows[cur].demangled),
        theme,
        f,
        area,
    );
    let run = app.tune.runs.get(&cur);
    let l = layout::layout(inner, run);
    if l.collapsed {
        draw_form_line(&app.tune.form, theme, f, l.form);
    } else {
        draw_form(&app.tune.form, theme, f, l.form);
    }
    let Some(run) = run else {
        // Without a sweep the info line and the help below it share the area and wrap.
        draw_intro(app, theme, f, l.info.union(l.intro));
        return;
    };
    let (info, style) = info_text(&app.tune.form, theme);
    f.render_widget(
        Paragraph::new(Span::styled(fit(&info, l.info.width as usize), style)),
        l.info,
    );
    draw_progress(run, theme, f, l.progress);
    draw_notes(run, theme, f, l.notes);
    heat::draw(run, app.tune.heat_scroll, theme, f, l.heat);
    draw_best(run, app.tune.show_front, app.tune.pick, theme, f, l.table);
}

/// Two columns of fields: the axes, then how to search and measure. The field under the
/// cursor is highlighted (and marked `›`, for terminals without colour).
fn draw_form(form: &TuneForm, theme: &Theme, f: &mut Frame, area: Rect) {
    let rows = layout::FORM_ROWS as usize;
    // Clicks find a field by the same columns (`layout::form_field_at`).
    let col_w = layout::form_column_width(area) as usize;
    let mut lines = vec![Vec::<Span>::new(); rows];
    for (i, _) in Field::ALL.into_iter().enumerate() {
        let (row, col) = (i % rows, i / rows);
        let mut spans = field_spans(form, i, theme, col_w);
        if col == 0 {
            let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
            spans.push(Span::raw(" ".repeat(col_w.saturating_sub(used))));
        }
        lines[row].extend(spans);
    }
    f.render_widget(
        Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>()),
        area,
    );
}

/// The form collapsed to one line (`layout::layout`: a sweep's heatmap needs its lines):
/// the field under the cursor, edited there as in the whole form, and how to reach the others.
fn draw_form_line(form: &TuneForm, theme: &Theme, f: &mut Frame, area: Rect) {
    let width = area.width as usize;
    let more = format!(
        "  · field {} of {}, j/k for the others",
        form.cursor.min(Field::ALL.len() - 1) + 1,
        Field::ALL.len()
    );
    let room = width.saturating_sub(more.chars().count()).max(width / 2);
    let mut spans = field_spans(form, form.cursor.min(Field::ALL.len() - 1), theme, room);
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    if used + more.chars().count() <= width {
        spans.push(Span::raw(" ".repeat(room.saturating_sub(used))));
        spans.push(Span::styled(more, theme.dim));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The label and value of the form's field `i` in a column `col_w` wide.
fn field_spans<'a>(form: &TuneForm, i: usize, theme: &Theme, col_w: usize) -> Vec<Span<'a>> {
    let field = Field::ALL[i];
    {
        let selected = form.cursor == i;
        let editing = form.editing.as_ref().filter(|e| e.field == field);
        let base = if selected { theme.selected } else { theme.text };
        let mut spans = vec![Span::styled(
            format!(
                "{}{:<w$}",
                if selected { '›' } else { ' ' },
                field.label(),
                w = LABEL_W - 1
            ),
            if selected {
                theme.selected
            } else {
                theme.accent
            },
        )];
        let room = col_w.saturating_sub(LABEL_W + 1);
        match editing {
            Some(e) => {
                let style = if e.check.is_err() {
                    theme.error
                } else {
                    theme.text
                };
                spans.extend(editor_spans(&e.editor, style, room));
            }
            None => {
                let (text, given) = form.settings.shown(field);
                let summary = form.settings.summary(field).filter(|_| given);
                let value = fit(&rr_format::text::visible(&text), room);
                let left = room.saturating_sub(value.chars().count());
                let style = if given { base } else { base.patch(theme.dim) };
                spans.push(Span::styled(value, style));
                if let Some(s) = summary.filter(|s| s.chars().count() + 3 <= left) {
                    spans.push(Span::styled(format!("  ({s})"), theme.dim));
                }
            }
        }
        spans
    }
}

/// The text being typed, the character under the cursor reversed; it scrolls sideways to
/// keep the cursor on screen.
fn editor_spans<'a>(e: &crate::tui::app::LineEditor, style: Style, room: usize) -> Vec<Span<'a>> {
    let chars: Vec<char> = e.text().chars().collect();
    let room = room.max(1);
    let first = (e.cursor() + 1).saturating_sub(room);
    let shown: Vec<char> = chars.iter().skip(first).take(room).copied().collect();
    let at = e.cursor() - first;
    let before: String = shown[..at.min(shown.len())].iter().collect();
    let under = shown.get(at).map_or(" ".to_string(), char::to_string);
    let after: String = shown.iter().skip(at + 1).collect();
    let v = |s: &str| rr_format::text::visible(s).into_owned();
    vec![
        Span::styled(v(&before), style),
        Span::styled(v(&under), style.add_modifier(Modifier::REVERSED)),
        Span::styled(v(&after), style),
    ]
}

/// What the field being typed means so far, or why it does not parse (the parser's message);
/// otherwise the size of the space the form spans.
fn info_text(form: &TuneForm, theme: &Theme) -> (String, Style) {
    let set = &form.settings;
    match &form.editing {
        Some(e) => match &e.check {
            Ok(s) => (format!("{}: {s}", e.field.label()), theme.dim),
            Err(why) => (format!("✗ {}: {why}", e.field.label()), theme.error),
        },
        None => match set.space_size() {
            Ok(n) => (
                format!(
                    "{n} configuration(s) · {} · {} · {} samples · verify {}{}",
                    set.strategy.name(),
                    if set.cold { "cold" } else { "hot" },
                    set.shown(Field::Samples).0,
                    set.shown(Field::Verify).0,
                    match (set.objective, set.energy) {
                        (rr_tune::Objective::Time, false) => String::new(),
                        _ => format!(
                            " · objective {} (energy ~1 s a configuration)",
                            set.text(Field::Objective)
                        ),
                    }
                ),
                theme.dim,
            ),
            Err(why) => (format!("✗ {why}"), theme.error),
        },
    }
}

/// What the form screen says before a sweep: why tuning cannot start here (and, without a
/// GPU, how to try it anyway), the keys, the axes' syntax. At 80×24 it has ten lines: when the
/// wrapped text needs more, the blank line goes, then the syntax (the help popup has it too),
/// so no line is cut at the bottom.
fn draw_intro(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let (info, style) = info_text(&app.tune.form, theme);
    let mut head = vec![(info, style)];
    let devices = &app.tune.form.settings.devices;
    let simulated = devices.trim_start().starts_with("simulate");
    let blocker = app.current().and_then(|i| app.replay_blocker(i));
    match blocker {
        Some(ReplayBlocker::Record(why)) => head.push((
            format!("This instance cannot be replayed, nor tuned: {why}"),
            theme.warn,
        )),
        // A simulated sweep needs no GPU (the form's `simulate FILE` is checked as it is typed).
        Some(ReplayBlocker::Machine(_)) if simulated => {}
        Some(ReplayBlocker::Machine(why)) => head.push((
            format!("Tuning is unavailable here: {why}. To try it without a GPU, set GPUs to `simulate SWEEP.json`, a finished sweep of this kernel (tune --json-out; assets/sweeps/ has one of record-fixtures/rrtui-stencil3d)."),
            theme.warn,
        )),
        None => {}
    }
    let usage = "No sweep yet: j/k choose a field, Enter edits it (choices cycle), r starts it.";
    let syntax = "Axes: values, A..B:STEP, A..B*FACTOR, 3-D as XxYxZ; grid `cover` keeps the threads per block; empty: the recorded value. Defines: NAME=values, e.g. TILE=1,2,4 UNROLL=1..8*2. Samples: `adaptive` or N per configuration.";
    let height = |texts: &[&str]| -> usize {
        let width = usize::from(area.width.max(1));
        texts.iter().map(|t| wrap(t, width).len().max(1)).sum()
    };
    let heads: Vec<&str> = head.iter().map(|(t, _)| t.as_str()).collect();
    let room = usize::from(area.height);
    let tail = match height(&[&heads[..], &[usage, syntax]].concat()) <= room {
        true => syntax,
        false => "? lists the axes' syntax.",
    };
    let blank = height(&[&heads[..], &[usage, tail]].concat()) < room;
    let mut lines: Vec<Line> = Vec::new();
    for (i, (text, style)) in head.iter().enumerate() {
        lines.push(Line::from(Span::styled(text.clone(), *style)));
        if i == 0 && blank {
            lines.push(Line::default());
        }
    }
    lines.push(Line::from(Span::styled(usage, theme.dim)));
    lines.push(Line::from(Span::styled(tail, theme.dim)));
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}

/// `12 s`, `2 min 05 s`.
fn elapsed_text(secs: f64) -> String {
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else {
        let s = secs as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

fn draw_progress(run: &TuneRun, theme: &Theme, f: &mut Frame, area: Rect) {
    let done = run.report.trials.len() as u64;
    // Until the sweep says how many it plans, the bar stays empty rather than full.
    let planned = run.planned.map_or(0, |p| p.max(done));
    let (state, style) = match &run.phase {
        Phase::Running => ("running", theme.warn),
        Phase::Done => ("done", theme.ok),
        Phase::Cancelled => ("cancelled", theme.warn),
        Phase::Failed(_) => ("failed", theme.error),
    };
    // A bar of shades that reads without colour too.
    let bar_w = if area.width >= 120 { 20 } else { 10 };
    let filled = (done * bar_w).checked_div(planned).unwrap_or(0) as usize;
    let bar = format!(
        "{}{}",
        "█".repeat(filled),
        "░".repeat(bar_w as usize - filled)
    );
    let mut parts = vec![format!(
        "{done}/{}",
        run.planned.map_or("?".to_string(), |_| planned.to_string())
    )];
    if let Some(e) = run.clock.elapsed() {
        parts.push(elapsed_text(e.as_secs_f64()));
    }
    if let Some(r) = run.rate() {
        parts.push(format!("{r:.1}/s"));
    }
    let failed =
        run.count(Status::VerifyFailed) + run.count(Status::Invalid) + run.count(Status::Fault);
    parts.push(format!("{} ok", run.count(Status::Ok)));
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    let skipped = run.count(Status::Skipped);
    if skipped > 0 {
        parts.push(format!("{skipped} skipped"));
    }
    for d in &run.report.devices {
        parts.push(format!(
            "GPU {} {} (sm_{})",
            d.ordinal,
            visible(&d.name),
            d.sm
        ));
    }
    if run.report.strategy != rr_tune::StrategyKind::Exhaustive && run.planned.is_some() {
        parts.push(format!("seed {}", run.report.seed));
    }
    if let Some(file) = &run.opened_from {
        parts.push(format!("opened from {}", visible(file)));
    }
    let rest = format!(" {bar} {}", parts.join(" · "));
    let room = (area.width as usize).saturating_sub(state.len());
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(state, style),
            Span::styled(fit(&rest, room), theme.text),
        ])),
        area,
    );
}

/// The last warning (with how many there were) and how the sweep failed.
fn draw_notes(run: &TuneRun, theme: &Theme, f: &mut Frame, area: Rect) {
    let w = area.width as usize;
    let mut lines = Vec::new();
    if let Some(last) = run.warnings.last() {
        let count = match run.warnings.len() {
            1 => String::new(),
            n => format!(" ({n} warnings)"),
        };
        lines.push(Line::from(Span::styled(
            fit(&format!("warning{count}: {}", visible(last)), w),
            theme.warn,
        )));
    }
    match &run.phase {
        Phase::Failed(m) => lines.push(Line::from(Span::styled(
            fit(&format!("error: {}", visible(m)), w),
            theme.error,
        ))),
        Phase::Done if run.report.best.is_none() => lines.push(Line::from(Span::styled(
            fit("no configuration verified: nothing to recommend", w),
            theme.error,
        ))),
        _ => {}
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// The best verified configurations by the objective (or the Pareto front of time against
/// energy, `front`): time, noise, samples, clock — or energy and power when measured — and
/// speedup over the recorded configuration (◆ marks it, ⬦ the front).
fn draw_best(run: &TuneRun, front: bool, pick: usize, theme: &Theme, f: &mut Frame, area: Rect) {
    if area.height == 0 {
        return;
    }
    // Its rows where clicks find them (`layout::table_rows`): below the title and header.
    let n = layout::table_rows(area).height as usize;
    let [title, area] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let energy = run.report.energy.is_some();
    let front = front && energy;
    let listed = run.listed(front);
    // Scrolled to keep the picked row on screen (`layout::table_window`, as clicks are).
    let window = layout::table_window(pick, listed.len(), n);
    let top = window.start;
    let ranked = &listed[window];
    let text = best_title(run, front, energy);
    f.render_widget(
        Paragraph::new(Span::styled(fit(&text, title.width as usize), theme.dim)),
        title,
    );
    if ranked.is_empty() {
        return;
    }
    let columns = BestColumns::of(run);
    let picked = pick.min(listed.len().saturating_sub(1));
    let rows: Vec<Row> = ranked
        .iter()
        .enumerate()
        .map(|(i, t)| columns.row(t, top + i, picked, theme))
        .collect();
    let (header, widths) = columns.header(ranked, theme);
    f.render_widget(Table::new(rows, widths).header(header), area);
}

/// The line above the table of the best: what it lists, and how many were verified.
fn best_title(run: &TuneRun, front: bool, energy: bool) -> String {
    let verified = run.count(Status::Ok);
    let objective = run.report.objective;
    match (verified, &run.phase) {
        (0, Phase::Running) => "best configurations: none verified yet".to_string(),
        (0, _) => "best configurations: none verified".to_string(),
        (_, _) if front => format!(
            "Pareto front of time against energy: {} configuration(s), fastest first (p: the best)",
            run.front().len()
        ),
        (v, _) => format!(
            "best by {} ({v} verified of {}; speedup over the recorded one ◆{})",
            objective.name(),
            run.report.trials.len(),
            if energy {
                format!("; ⬦ Pareto front: {}, p lists it", run.front().len())
            } else {
                String::new()
            }
        ),
    }
}

/// A right-aligned cell (the table's numbers).
fn right<'a>(s: String) -> Cell<'a> {
    Cell::from(ratatui::text::Text::from(s).right_aligned())
}

/// The columns of the table of the best configurations, as this sweep has them.
struct BestColumns<'a> {
    run: &'a TuneRun,
    /// Energy measured: joules and watts take the place of the samples and the clock.
    energy: bool,
    /// Some configuration caps the registers: a column for the cap.
    regs: bool,
    /// Compile-time tuning: each configuration's define values (the recorded image: none).
    defines: &'a rr_tune::defines::Defines,
    /// The recorded configuration's cost, which speedups are over.
    recorded: Option<f64>,
}

impl<'a> BestColumns<'a> {
    fn of(run: &'a TuneRun) -> BestColumns<'a> {
        BestColumns {
            run,
            energy: run.report.energy.is_some(),
            regs: run
                .report
                .trials
                .iter()
                .any(|t| t.config.max_registers.is_some()),
            defines: &run.report.defines,
            recorded: run.recorded_cost(),
        }
    }

    fn variant(&self, t: &rr_tune::Trial) -> String {
        match t.config.variant {
            Some(v) if !self.defines.is_empty() => {
                visible(&self.defines.describe(v as usize)).into_owned()
            }
            _ => "recorded".to_string(),
        }
    }

    /// The row of trial `t`, `i`th of the list (from 0), `picked` the row `P` profiles.
    fn row(&self, t: &rr_tune::Trial, i: usize, picked: usize, theme: &Theme) -> Row<'a> {
        let k = t.kernel_ns.unwrap_or_default();
        let on_front = self.energy && self.run.front().iter().any(|p| p.config == t.config);
        let mut cells = vec![right(format!(
            "{}{}{}{}",
            if i == picked { "›" } else { "" },
            if t.recorded { "◆" } else { "" },
            if on_front { "⬦" } else { "" },
            i + 1
        ))];
        if !self.defines.is_empty() {
            cells.push(Cell::from(self.variant(t)));
        }
        cells.extend([
            Cell::from(dims_label(t.config.grid)),
            Cell::from(dims_label(t.config.block)),
            right(t.config.shared_mem.to_string()),
        ]);
        if self.regs {
            cells.push(right(
                t.config
                    .max_registers
                    .map_or("–".to_string(), |r| r.to_string()),
            ));
        }
        cells.extend([
            right(duration_ns(k.median)),
            right(
                t.noise()
                    .map_or("–".to_string(), |n| format!("{:.2}%", n * 100.0)),
            ),
        ]);
        if self.energy {
            cells.extend([
                right(t.joules().map_or("–".into(), joules_text)),
                right(t.energy.map_or("–".into(), |e| format!("{:.0}", e.power_w))),
            ]);
        } else {
            cells.extend([
                right(k.count.to_string()),
                right(
                    t.clock_mhz
                        .map_or("–".to_string(), |c| format!("{:.0}", c.median)),
                ),
            ]);
        }
        cells.extend([right(match (self.recorded, t.cost()) {
            (Some(r), Some(c)) if c > 0.0 => format!("{:.2}×", r / c),
            _ => "–".to_string(),
        })]);
        let row = Row::new(cells);
        if t.recorded {
            row.style(theme.accent)
        } else {
            row
        }
    }

    /// The header and the columns' widths, the grid's, block's and defines' as wide as the
    /// `ranked` rows on screen need.
    fn header(&self, ranked: &[rr_tune::Trial], theme: &Theme) -> (Row<'a>, Vec<Constraint>) {
        let widest =
            |text: &dyn Fn(&rr_tune::Trial) -> usize| ranked.iter().map(text).max().unwrap_or(0);
        let grid_w = widest(&|t| dims_label(t.config.grid).len()).max(4) as u16;
        let block_w = widest(&|t| dims_label(t.config.block).len()).max(5) as u16;
        let mut header = vec!["#"];
        let mut widths = vec![Constraint::Length(4)];
        if !self.defines.is_empty() {
            let w = widest(&|t| self.variant(t).len()).max(7);
            header.push("defines");
            widths.push(Constraint::Length(w.min(40) as u16));
        }
        header.extend(["grid", "block", "smem"]);
        widths.extend([
            Constraint::Length(grid_w),
            Constraint::Length(block_w),
            Constraint::Length(6),
        ]);
        if self.regs {
            header.push("regs");
            widths.push(Constraint::Length(4));
        }
        // Measuring energy, joules and watts take the place of the samples and the clock.
        let ((c3, w3), (c4, w4)) = if self.energy {
            (("energy", 9), ("W", 4))
        } else {
            (("n", 5), ("MHz", 5))
        };
        header.extend(["median", "noise", c3, c4, "speedup"]);
        widths.extend([8, 6, w3, w4, 7].map(Constraint::Length));
        let header = Row::new(header.into_iter().enumerate().map(|(i, h)| {
            if i < 3 {
                Cell::from(h)
            } else {
                right(h.to_string())
            }
        }))
        .style(theme.header);
        (header, widths)
    }
}
