//! The Replay screen's leaderboard section: the candidates `C` named, ranked on every instance
//! of the kernel (`rr-tui ab`), or one candidate's per-instance results (Enter).

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::settings::theme::Theme;
use crate::tui::app::leaderboard::{LeaderboardState, LeaderboardView};
use crate::tui::layout::fit;
use rr_engine::replay::leaderboard::{CandidateRow, Overall, Status};
use rr_format::text::visible;

/// Rows the section takes of `available`: its lines and a border, at most half.
pub fn height(view: &LeaderboardView, available: u16) -> u16 {
    let lines = match &view.state {
        LeaderboardState::Done(b) => match view.detail {
            Some(k) => b.candidates.get(k).map_or(1, |c| c.instances.len() + 1),
            None => b.candidates.len() + 1,
        },
        _ => 1,
    };
    (lines as u16 + 1).min(available / 2).max(2)
}

pub fn draw(view: &LeaderboardView, theme: &Theme, f: &mut Frame, area: Rect) {
    let width = area.width as usize;
    let title = match &view.state {
        LeaderboardState::Done(b) => format!(
            " Leaderboard · {} candidate(s) on {} instance(s) · Enter: per instance ",
            b.candidates.len(),
            b.instances.len()
        ),
        _ => " Leaderboard ".into(),
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(fit(&title, width), theme.dim));
    let line = |text: String, style: Style| Line::from(Span::styled(fit(&text, width), style));
    let lines: Vec<Line> = match &view.state {
        LeaderboardState::Running => vec![line(
            format!(
                "ranking {} candidate(s) on every instance of {}… (rr-tui ab)",
                view.candidates.len(),
                view.kernel
            ),
            theme.dim,
        )],
        LeaderboardState::Failed(why) => vec![line(visible(why).into_owned(), theme.warn)],
        LeaderboardState::Done(b) => {
            match view.detail.and_then(|k| Some((k, b.candidates.get(k)?))) {
                Some((k, c)) => {
                    let mut v = vec![line(
                        format!(
                            "#{} {}: {} of {} verified, {}",
                            k + 1,
                            visible(&c.candidate),
                            c.verified,
                            c.total,
                            c.verdict.describe()
                        ),
                        theme.header,
                    )];
                    v.extend(c.instances.iter().map(|r| {
                        let style = match r.status {
                            Status::Verified => theme.ok,
                            _ => theme.warn,
                        };
                        line(format!("  {}", r.line()), style)
                    }));
                    v
                }
                None => {
                    let mut v = vec![line(
                        format!(
                            "{:>3}  {:<24} {:>8}  {:<24} {}",
                            "#", "candidate", "verified", "speed-up (95 % CI)", "verdict · worst"
                        ),
                        theme.dim,
                    )];
                    v.extend(
                        b.candidates
                            .iter()
                            .enumerate()
                            .map(|(i, c)| line(row(i + 1, c), verdict_style(c, theme))),
                    );
                    v
                }
            }
        }
    };
    f.render_widget(Paragraph::new(lines).block(block), area);
}

fn verdict_style(c: &CandidateRow, theme: &Theme) -> Style {
    match c.verdict {
        Overall::Rejected | Overall::Implausible => theme.warn,
        Overall::Faster => theme.ok,
        _ => Style::default(),
    }
}

fn row(rank: usize, c: &CandidateRow) -> String {
    let speed = match (c.geomean_speedup, c.geomean_ci) {
        (Some(g), Some(ci)) => format!("{g:.3}× [{:.3}–{:.3}]", ci[0], ci[1]),
        _ => "—".into(),
    };
    let worst = c
        .worst
        .as_ref()
        .map(|w| format!(" · worst {:.3}× {}", w.speedup, visible(&w.instance)))
        .unwrap_or_default();
    let name = std::path::Path::new(&c.candidate)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| c.candidate.clone());
    format!(
        "{rank:>3}  {:<24} {:>8}  {:<24} {}{worst}",
        visible(&name),
        format!("{}/{}", c.verified, c.total),
        speed,
        c.verdict.describe()
    )
}
