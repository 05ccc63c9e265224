//! The profile screen: Nsight Compute's summary of the selected instance as a compact table —
//! the recorded configuration's, and beside it a sweep's best with the change of every metric
//! (changes of 5 % or more, and differing words, are marked) — then the text roofline of each,
//! the kernel's point on it.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::runs::{ProfileRun, Profiles};
use crate::settings::theme::Theme;
use crate::tui::app::{App, Phase, ReplayBlocker};
use crate::tui::format::duration_ns;
use crate::tui::layout::fit;
use rr_engine::profile::{roofline_chart, Profile};

/// A change this large (relative) is marked.
const MARKED_CHANGE: f64 = 0.05;

pub fn draw(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let Some(cur) = app.current() else { return };
    let inner = crate::tui::widgets::titled(
        &format!("Profile · {}", app.rows[cur].demangled),
        theme,
        f,
        area,
    );
    let w = inner.width as usize;
    let Some(p) = app
        .profile
        .by_instance
        .get(&cur)
        .filter(|p| p.recorded.is_some() || p.tuned.is_some())
    else {
        let mut lines: Vec<Line> = Vec::new();
        if let Some(b) = app.replay_blocker(cur) {
            let text = match b {
                ReplayBlocker::Record(why) => {
                    format!("This instance cannot be replayed, nor profiled: {why}")
                }
                // The machine's reason speaks of replaying and tuning: say what profiling
                // needs beside it (where the profile job looks for ncu: rr_cuda's find_cuda_tool).
                ReplayBlocker::Machine(why) => format!(
                    "Profiling needs an NVIDIA GPU with its driver and Nsight Compute's ncu (on PATH, or in a CUDA or Nsight Compute installation); it is unavailable here: {why}"
                ),
            };
            lines.push(Line::from(Span::styled(text, theme.warn)));
        }
        let intro = [
            "No profile of this instance in this session.",
            "P profiles it with Nsight Compute (ncu): one repetition of the replay, in the background; \
             c cancels. On the tuning screen, P profiles the sweep's best (or the row [ and ] pick), \
             shown here beside the recorded one with every change marked. The full report is kept \
             for ncu-ui.",
        ];
        lines.extend(
            intro
                .iter()
                .map(|l| Line::from(Span::styled(*l, theme.dim))),
        );
        // Wrapped, never cut: at 80 columns the intro takes more lines than it has sentences.
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
        return;
    };
    let runs: Vec<&ProfileRun> = [p.recorded.as_ref(), p.tuned.as_ref()]
        .into_iter()
        .flatten()
        .collect();
    let [status, table, charts] = Layout::vertical([
        Constraint::Length(runs.len() as u16),
        Constraint::Length(table_height(p)),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let lines: Vec<Line> = runs.iter().map(|r| status_line(r, w, theme)).collect();
    f.render_widget(Paragraph::new(lines), status);
    draw_table(p, theme, f, table);
    draw_charts(p, theme, f, charts);
}

fn status_line<'a>(r: &ProfileRun, w: usize, theme: &Theme) -> Line<'a> {
    let (text, style) = match (&r.phase, &r.result) {
        (Phase::Running, _) => (
            format!(
                "{}: profiling… {} pass line(s){}",
                r.label,
                r.passes,
                r.progress
                    .as_ref()
                    .map(|p| format!(" · {p}"))
                    .unwrap_or_default()
            ),
            theme.accent,
        ),
        (Phase::Failed(m), _) => (format!("{}: failed: {m}", r.label), theme.error),
        (Phase::Cancelled, _) => (format!("{}: cancelled", r.label), theme.dim),
        (Phase::Done, Some(res)) => {
            // The path's middle gives way first: its file name is what tells reports apart.
            let head = format!("{}: done; ncu-ui opens ", r.label);
            let room = w.saturating_sub(head.chars().count());
            (
                format!(
                    "{head}{}",
                    crate::tui::layout::fit_middle(&res.report, room)
                ),
                theme.dim,
            )
        }
        (Phase::Done, None) => (format!("{}: no result", r.label), theme.error),
    };
    Line::from(Span::styled(fit(&text, w), style))
}

/// A row of the table: a number (compared) or a word.
enum Value {
    Number(Option<f64>),
    Word(Option<String>),
}

/// A row of the table: its label, the value, how a number reads.
type Metric = (&'static str, Value, fn(f64) -> String);

/// The metrics the table shows, in the order an engineer reads them.
fn metrics(p: &Profile) -> Vec<Metric> {
    let pct = |v: f64| format!("{v:.1} %");
    let count = |v: f64| format!("{v:.0}");
    let bytes = |v: f64| humansize::format_size(v.max(0.0) as u64, humansize::DECIMAL);
    let r = p.roofline.as_ref();
    let mut rows: Vec<Metric> = vec![
        ("duration", Value::Number(p.duration_ns), duration_ns),
        ("SM throughput", Value::Number(p.sm_throughput_pct), pct),
        (
            "memory throughput",
            Value::Number(p.memory_throughput_pct),
            pct,
        ),
        ("DRAM throughput", Value::Number(p.dram_throughput_pct), pct),
        (
            "achieved occupancy",
            Value::Number(p.achieved_occupancy_pct),
            pct,
        ),
        (
            "theoretical occupancy",
            Value::Number(p.theoretical_occupancy_pct),
            pct,
        ),
        (
            "occupancy limiter",
            Value::Word(p.occupancy_limiter.clone()),
            count,
        ),
        (
            "registers / thread",
            Value::Number(p.registers_per_thread),
            count,
        ),
        ("waves / SM", Value::Number(p.waves_per_sm), |v| {
            format!("{v:.2}")
        }),
        ("DRAM read", Value::Number(p.dram_read_bytes), bytes),
        ("DRAM written", Value::Number(p.dram_write_bytes), bytes),
        ("L1 hit rate", Value::Number(p.l1_hit_pct), pct),
        ("L2 hit rate", Value::Number(p.l2_hit_pct), pct),
        (
            "FLOP / DRAM byte",
            Value::Number(r.map(|r| r.intensity)),
            |v| format!("{v:.3}"),
        ),
        (
            "GFLOP/s",
            Value::Number(r.map(|r| r.achieved_gflops)),
            |v| format!("{v:.1}"),
        ),
        ("bound by", Value::Word(r.map(|r| r.bound.clone())), count),
        (
            "of the roof",
            Value::Number(r.map(|r| r.of_roof * 100.0)),
            pct,
        ),
    ];
    for (i, (reason, v)) in p.stalls.iter().take(3).enumerate() {
        let label = ["top stall", "2nd stall", "3rd stall"][i];
        rows.push((label, Value::Word(Some(format!("{reason} {v:.1}"))), count));
    }
    rows
}

fn table_height(p: &Profiles) -> u16 {
    let n = [p.recorded.as_ref(), p.tuned.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|r| r.result.as_ref())
        .map(|r| metrics(&r.profile).len())
        .max()
        .unwrap_or(0);
    if n == 0 {
        0
    } else {
        n as u16 + 2
    }
}

fn text(v: &Value, format: fn(f64) -> String) -> String {
    match v {
        Value::Number(Some(x)) => format(*x),
        Value::Word(Some(w)) => w.clone(),
        _ => "–".into(),
    }
}

/// The change from `a` to `b`, and whether it is marked.
fn change(a: &Value, b: &Value) -> (String, bool) {
    match (a, b) {
        (Value::Number(Some(a)), Value::Number(Some(b))) if *a != 0.0 => {
            let d = (b - a) / a.abs();
            (format!("{:+.1} %", d * 100.0), d.abs() >= MARKED_CHANGE)
        }
        (Value::Word(Some(a)), Value::Word(Some(b))) if a != b => ("≠".into(), true),
        _ => (String::new(), false),
    }
}

fn draw_table(p: &Profiles, theme: &Theme, f: &mut Frame, area: Rect) {
    if area.height == 0 {
        return;
    }
    let a = p.recorded.as_ref().and_then(|r| r.result.as_deref());
    let b = p.tuned.as_ref().and_then(|r| r.result.as_deref());
    let right = |s: String, style: Style| Cell::from(Text::from(s).right_aligned()).style(style);
    let (rows, header, widths): (Vec<Row>, Vec<&str>, Vec<Constraint>) = match (a, b) {
        (Some(a), Some(b)) => {
            let (ma, mb) = (metrics(&a.profile), metrics(&b.profile));
            let rows = ma
                .iter()
                .zip(mb.iter())
                .map(|((label, va, fa), (_, vb, fb))| {
                    let (delta, marked) = change(va, vb);
                    let style = if marked { theme.accent } else { theme.text };
                    Row::new(vec![
                        Cell::from(format!("{}{label}", if marked { "▸ " } else { "  " }))
                            .style(style),
                        right(text(va, *fa), theme.text),
                        right(text(vb, *fb), style),
                        right(delta, style),
                    ])
                })
                .collect();
            // The second column says what it is: "best", "#2", "front #1", "candidate".
            let second = p
                .tuned
                .as_ref()
                .and_then(|r| r.label.split(':').next())
                .unwrap_or("tuned");
            (
                rows,
                vec!["  metric", "recorded", second, "change"],
                vec![
                    Constraint::Length(24),
                    Constraint::Length(22),
                    Constraint::Length(22),
                    Constraint::Length(9),
                ],
            )
        }
        (one, other) => {
            let (Some(r), label) = (
                one.or(other),
                if one.is_some() { "recorded" } else { "tuned" },
            ) else {
                return;
            };
            let rows = metrics(&r.profile)
                .iter()
                .map(|(l, v, fmt)| {
                    Row::new(vec![
                        Cell::from(format!("  {l}")),
                        right(text(v, *fmt), theme.text),
                    ])
                })
                .collect();
            (
                rows,
                vec!["  metric", label],
                vec![Constraint::Length(24), Constraint::Length(30)],
            )
        }
    };
    let header = Row::new(header.into_iter().enumerate().map(|(i, h)| {
        if i == 0 {
            Cell::from(h.to_string())
        } else {
            Cell::from(Text::from(h.to_string()).right_aligned())
        }
    }))
    .style(theme.header);
    f.render_widget(Table::new(rows, widths).header(header), area);
}

/// The roofline of each profile, side by side.
fn draw_charts(p: &Profiles, theme: &Theme, f: &mut Frame, area: Rect) {
    let with_roof: Vec<(&str, &rr_engine::profile::Roofline)> =
        [p.recorded.as_ref(), p.tuned.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|r| {
                let res = r.result.as_ref()?;
                Some((r.label.as_str(), res.profile.roofline.as_ref()?))
            })
            .collect();
    if with_roof.is_empty() || area.height < 8 || area.width < 24 {
        return;
    }
    let cols = Layout::horizontal(vec![Constraint::Fill(1); with_roof.len()]).split(area);
    for ((label, roof), col) in with_roof.into_iter().zip(cols.iter()) {
        let w = (col.width as usize).saturating_sub(2);
        let h = (col.height as usize).saturating_sub(1);
        let mut lines = vec![Line::from(Span::styled(
            fit(
                &format!(
                    "roofline ({}), {label}: {}-bound, {:.1} % of the roof",
                    roof.precision,
                    roof.bound,
                    roof.of_roof * 100.0
                ),
                w,
            ),
            theme.dim,
        ))];
        lines.extend(
            roofline_chart(roof, w.saturating_sub(10), h.saturating_sub(3))
                .into_iter()
                .map(|l| Line::from(Span::styled(fit(&l, w), theme.chart))),
        );
        f.render_widget(Paragraph::new(lines), *col);
    }
}
