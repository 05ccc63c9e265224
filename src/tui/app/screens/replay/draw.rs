//! The Replay screen's drawing: the instance and the settings a replay would use, the
//! leaderboard's section while there is one, then the last replay's state, its chart of times,
//! their statistics and its verdict.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph, Row, Sparkline, Table, Wrap,
};
use ratatui::Frame;

use super::{board, ReplayScreen};
use crate::settings::theme::Theme;
use crate::tui::app::screens::DrawContext;
use crate::tui::app::{dim3, App, CandidateRun, GpuWork, Phase, ReplayBlocker, ReplayRun};
use crate::tui::format::duration_ns;
use crate::tui::layout::fit;
use crate::tui::widgets::titled;
use rr_engine::replay::ab::Verdict;
use rr_engine::replay::stats::Stats;
use rr_engine::replay::verify;
use rr_engine::replay::VerifyOutcome;

/// Most points the chart draws; longer series are decimated by striding.
const MAX_CHART_POINTS: usize = 2000;

pub(super) fn draw(screen: &ReplayScreen, cx: &DrawContext, f: &mut Frame, area: Rect) {
    let (app, theme) = (cx.app, cx.theme);
    let Some(cur) = app.current() else { return };
    // The instance too: a model's recording holds many instances of one kernel.
    let row = &app.rows[cur];
    let stem = row
        .json_path
        .file_stem()
        .map(|s| rr_format::text::visible(&s.to_string_lossy()).into_owned())
        .unwrap_or_default();
    let inner = titled(
        &format!("Replay · {} · {stem}", row.demangled),
        theme,
        f,
        area,
    );
    let [settings_area, inner] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(
            fit(&settings_text(app), settings_area.width as usize),
            theme.dim,
        ))),
        settings_area,
    );
    // The leaderboard of several candidates (`C`), below the replay, while there is one.
    let inner = match &screen.leaderboard {
        Some(view) => {
            let h = board::height(view, inner.height);
            let [rest, section] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(h)]).areas(inner);
            board::draw(view, theme, f, section);
            rest
        }
        None => inner,
    };
    let Some(run) = screen.runs.get(&cur) else {
        draw_not_replayed(app, cur, theme, f, inner);
        return;
    };
    let verdict_lines = verdict(run, theme);
    // The verdict takes the lines it has (wrapped lines get one more each, up to 8); the chart
    // the rest.
    let verdict_height = (verdict_lines.len() as u16 + 1).min(8);
    let [head, charts, stats, verdict] = Layout::vertical([
        Constraint::Length(2 + u16::from(run.memory.is_some())),
        Constraint::Min(6),
        Constraint::Length(3),
        Constraint::Length(verdict_height),
    ])
    .areas(inner);
    draw_head(run, screen.frozen, theme, f, head);
    draw_times(run, screen.frozen, theme, f, [charts, stats]);
    f.render_widget(
        Paragraph::new(verdict_lines).wrap(Wrap { trim: false }),
        verdict,
    );
}

/// Instance `cur` has not been replayed in this session: why it cannot be, or how to.
fn draw_not_replayed(app: &App, cur: usize, theme: &Theme, f: &mut Frame, area: Rect) {
    let text = match app.replay_blocker(cur) {
        Some(ReplayBlocker::Record(why)) => vec![Line::from(Span::styled(format!("This instance cannot be replayed: {why}"), theme.warn))],
        Some(ReplayBlocker::Machine(why)) => vec![Line::from(Span::styled(format!("Replay is unavailable here: {why}"), theme.warn))],
        None => vec![Line::from(Span::styled("Not replayed in this session. r replays, v replays and verifies; n/D/B/T edit the settings above.", theme.dim))],
    };
    f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
}

/// The kernel's times: the chart of every repetition (the recorded kernel's and the
/// candidate's side by side in an A/B replay), the last repetitions' sparkline, and their
/// statistics; up to the repetition the chart is frozen at (`f`).
fn draw_times(
    run: &ReplayRun,
    frozen: Option<usize>,
    theme: &Theme,
    f: &mut Frame,
    [charts, stats]: [Rect; 2],
) {
    let shown = frozen
        .unwrap_or(run.kernel_ns.len())
        .min(run.kernel_ns.len());
    let data = &run.kernel_ns[..shown];
    let [chart_area, spark_area] =
        Layout::vertical([Constraint::Min(4), Constraint::Length(3)]).areas(charts);
    // An A/B replay: the two kernels' times side by side.
    let candidate = run.candidate.as_ref().map(|c| {
        let n = frozen.unwrap_or(c.kernel_ns.len()).min(c.kernel_ns.len());
        &c.kernel_ns[..n]
    });
    match candidate {
        Some(b) => {
            let [left, right] =
                Layout::horizontal([Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)])
                    .areas(chart_area);
            draw_chart(data, " recorded kernel (CUDA events) ", theme, f, left);
            draw_chart(b, " candidate (CUDA events) ", theme, f, right);
        }
        None => draw_chart(
            data,
            " kernel time per repetition (CUDA events) ",
            theme,
            f,
            chart_area,
        ),
    }
    let w = spark_area.width as usize;
    let tail: Vec<u64> = data[data.len().saturating_sub(w)..]
        .iter()
        .map(|&v| v as u64)
        .collect();
    f.render_widget(
        Sparkline::default().data(&tail).style(theme.chart).block(
            Block::default()
                .borders(Borders::TOP)
                .title(Span::styled(" last repetitions ", theme.dim)),
        ),
        spark_area,
    );
    let rows = match candidate {
        Some(b) => [
            ("recorded (events)", Stats::of(data)),
            ("candidate (events)", Stats::of(b)),
        ],
        None => [
            ("kernel (events)", Stats::of(data)),
            ("host launch→done", Stats::of(&run.host_ns[..shown])),
        ],
    };
    draw_stats(&rows, theme, f, stats);
}

/// What a replay started now would use (the settings `n`, `D`, `B` and `T` edit).
fn settings_text(app: &App) -> String {
    let s = &app.settings;
    let mut text = format!(
        "settings: repetitions {} · grid {} · block {} · tolerance {}",
        s.repetitions,
        s.grid.map(dim3).unwrap_or_else(|| "recorded".into()),
        s.block.map(dim3).unwrap_or_else(|| "recorded".into()),
        s.tolerance
            .map(|c| c.describe())
            .unwrap_or_else(|| "bytes".into())
    );
    // What `I` and `A` gave (a legacy record's image and start address).
    if let Some(image) = &s.supplied.image {
        text.push_str(&format!(
            " · image {}",
            rr_format::text::visible_path(image)
        ));
    }
    if let Some(addr) = s.supplied.base_address {
        text.push_str(&format!(" · start {addr:#x}"));
    }
    if let Some(c) = &s.candidate {
        text.push_str(&format!(
            " · A/B {}",
            rr_format::text::visible_path(&c.path)
        ));
    }
    if app.jobs.kept && app.jobs.of(GpuWork::Replay).is_none() {
        text.push_str(" · replay process kept (c frees its GPU memory)");
    }
    text
}

fn draw_head(run: &ReplayRun, frozen: Option<usize>, theme: &Theme, f: &mut Frame, area: Rect) {
    let (state, style) = match &run.phase {
        Phase::Running => (
            format!("running {}/{}", run.kernel_ns.len(), run.repetitions),
            theme.warn,
        ),
        Phase::Done => ("done".to_string(), theme.ok),
        Phase::Cancelled => ("cancelled".to_string(), theme.warn),
        Phase::Failed(_) => ("failed".to_string(), theme.error),
    };
    let frozen = if frozen.is_some() { " · FROZEN" } else { "" };
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!("{state}{frozen}"), style),
            Span::styled(
                format!(
                    " · {} · {}",
                    run.device.as_deref().unwrap_or("device not yet known"),
                    if run.verify {
                        "verify"
                    } else {
                        "no verification"
                    }
                ),
                theme.dim,
            ),
        ]),
        Line::from(Span::styled(run.detail.clone(), theme.dim)),
    ];
    if let Some(memory) = &run.memory {
        lines.push(Line::from(Span::styled(memory.clone(), theme.dim)));
    }
    f.render_widget(Paragraph::new(lines), area);
}

fn draw_chart(data: &[f64], title: &str, theme: &Theme, f: &mut Frame, area: Rect) {
    let stride = data.len().div_ceil(MAX_CHART_POINTS).max(1);
    let points: Vec<(f64, f64)> = data
        .iter()
        .enumerate()
        .step_by(stride)
        .map(|(i, &v)| ((i + 1) as f64, v))
        .collect();
    let (lo, hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.1), hi.max(p.1))
    });
    let (lo, hi) = if points.is_empty() {
        (0.0, 1.0)
    } else {
        (lo * 0.95, (hi * 1.05).max(lo * 0.95 + 1.0))
    };
    let n = data.len().max(1) as f64;
    let ds = Dataset::default()
        .name("kernel")
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(theme.chart)
        .data(&points);
    let chart = Chart::new(vec![ds])
        .block(Block::default().title(Span::styled(title.to_string(), theme.dim)))
        .x_axis(
            Axis::default()
                .bounds([1.0, n.max(2.0)])
                .labels(vec![Span::raw("1"), Span::raw(format!("{}", data.len()))])
                .style(theme.dim),
        )
        .y_axis(
            Axis::default()
                .bounds([lo, hi])
                .labels(vec![Span::raw(duration_ns(lo)), Span::raw(duration_ns(hi))])
                .style(theme.dim),
        );
    f.render_widget(chart, area);
}

fn draw_stats(rows: &[(&str, Stats)], theme: &Theme, f: &mut Frame, area: Rect) {
    let row = |name: &str, s: &Stats| {
        // No repetition yet: no statistics, rather than a row of zeros.
        let time = |v: f64| {
            if s.count == 0 {
                "–".to_string()
            } else {
                duration_ns(v)
            }
        };
        Row::new(vec![
            name.to_string(),
            s.count.to_string(),
            time(s.min),
            time(s.median),
            time(s.mean),
            time(s.stddev),
            time(s.max),
        ])
    };
    let t = Table::new(
        rows.iter().map(|(name, s)| row(name, s)),
        [
            Constraint::Length(18),
            Constraint::Length(6),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(9),
        ],
    )
    .header(
        Row::new(["time", "reps", "min", "median", "mean", "stddev", "max"]).style(theme.header),
    );
    f.render_widget(t, area);
}

/// Lines saying how the replay ended: its error, the verification and where the output is.
fn verdict(run: &ReplayRun, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Phase::Failed(m) = &run.phase {
        lines.push(Line::from(Span::styled(format!("error: {m}"), theme.error)));
    }
    match &run.verification {
        Some(v) if v.passed => lines.push(Line::from(Span::styled(
            format!(
                "device memory verified ({}{})",
                v.mode,
                if v.on_device {
                    ", by fingerprints on the GPU"
                } else {
                    ""
                }
            ),
            theme.ok,
        ))),
        Some(v) => failed(
            v,
            format!("verification failed ({})", v.mode),
            "  3 then p shows recorded output vs replay output",
            theme,
            &mut lines,
        ),
        None if run.verify && run.phase == Phase::Running => lines.push(Line::from(Span::styled(
            "verification after the last repetition",
            theme.dim,
        ))),
        None => {}
    }
    if let Some(c) = &run.candidate {
        candidate_lines(c, theme, &mut lines);
    }
    if let Some(p) = &run.saved {
        let what = if run.candidate.is_some() {
            "candidate's output"
        } else {
            "replay output"
        };
        lines.push(Line::from(Span::styled(format!("{what}: {p}"), theme.dim)));
    }
    lines
}

/// A failed verification: its headline, what differs, and where to look.
fn failed(
    v: &VerifyOutcome,
    headline: String,
    hint: &'static str,
    theme: &Theme,
    lines: &mut Vec<Line<'static>>,
) {
    lines.push(Line::from(Span::styled(headline, theme.error)));
    for l in verify::describe(v) {
        lines.push(Line::from(Span::styled(format!("  {l}"), theme.text)));
    }
    lines.push(Line::from(Span::styled(hint, theme.dim)));
}

/// An A/B replay's candidate: what it is, whether it verified, and the verdict.
fn candidate_lines(c: &CandidateRun, theme: &Theme, lines: &mut Vec<Line<'static>>) {
    lines.push(Line::from(Span::styled(
        format!("candidate {}", c.what),
        theme.text,
    )));
    match &c.verification {
        Some(v) if v.passed => lines.push(Line::from(Span::styled(
            format!("candidate verified ({})", v.mode),
            theme.ok,
        ))),
        Some(v) => failed(
            v,
            format!("the candidate's result differs ({})", v.mode),
            "  3 then p shows recorded output vs the candidate's",
            theme,
            lines,
        ),
        None => {}
    }
    if let Some(o) = &c.compare {
        let style = match o.verdict {
            Verdict::Faster => theme.ok,
            Verdict::Slower => theme.error,
            Verdict::Same | Verdict::Undecided => theme.warn,
        };
        lines.push(Line::from(Span::styled(o.describe(), style)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_engine::replay::protocol::{Event, VerifyOutcome};

    fn passed(on_device: bool) -> String {
        let mut run = ReplayRun::new(1, true, 1);
        run.apply(Event::Verify(VerifyOutcome {
            passed: true,
            mode: "bytes".into(),
            expected_len: 8,
            replayed_len: 8,
            missing_bytes: 0,
            differing_bytes: 0,
            differing_ranges: 0,
            first_ranges: vec![],
            regions: vec![],
            on_device,
            candidate: false,
        }));
        let theme = Theme::new(crate::cli::Theme::Mono);
        verdict(&run, &theme)
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_verdict_says_how_equality_was_shown() {
        assert_eq!(passed(false), "device memory verified (bytes)");
        assert_eq!(
            passed(true),
            "device memory verified (bytes, by fingerprints on the GPU)"
        );
    }
}
