//! Every style the explorer uses, in one place: dark, light and monochrome (`NO_COLOR`).
//! Differences are marked with background *and* bold/reverse so they survive any palette.

use ratatui::style::{Color, Modifier, Style};

use crate::cli::Theme as ThemeName;

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub text: Style,
    pub dim: Style,
    pub accent: Style,
    pub header: Style,
    pub selected: Style,
    pub tab_active: Style,
    pub diff_a: Style,
    pub diff_b: Style,
    pub added: Style,
    pub removed: Style,
    pub ok: Style,
    pub warn: Style,
    pub error: Style,
    pub chart: Style,
    /// Byte categories in the hex view and its ASCII column (hexyl's colours): zero bytes,
    /// printable ASCII, everything else.
    pub byte_zero: Style,
    pub byte_printable: Style,
    pub byte_other: Style,
    /// The heatmap's scale, fastest first (the shades ░▒▓█ carry it without colour).
    pub heat: [Style; 4],
}

impl Theme {
    pub fn new(name: ThemeName) -> Theme {
        let mono =
            name == ThemeName::Mono || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        if mono {
            let plain = Style::default();
            return Theme {
                text: plain,
                dim: plain,
                accent: plain.add_modifier(Modifier::BOLD),
                header: plain.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                selected: plain.add_modifier(Modifier::REVERSED),
                tab_active: plain.add_modifier(Modifier::REVERSED),
                diff_a: plain.add_modifier(Modifier::REVERSED),
                diff_b: plain.add_modifier(Modifier::REVERSED | Modifier::BOLD),
                added: plain.add_modifier(Modifier::BOLD),
                removed: plain.add_modifier(Modifier::CROSSED_OUT),
                ok: plain.add_modifier(Modifier::BOLD),
                warn: plain.add_modifier(Modifier::BOLD),
                error: plain.add_modifier(Modifier::BOLD | Modifier::REVERSED),
                chart: plain,
                byte_zero: plain,
                byte_printable: plain,
                byte_other: plain,
                heat: [plain; 4],
            };
        }
        let (fg, dim, accent, sel_bg) = match name {
            ThemeName::Light => (
                Color::Black,
                Color::DarkGray,
                Color::Blue,
                Color::Rgb(210, 220, 240),
            ),
            _ => (
                Color::Reset,
                Color::DarkGray,
                Color::Cyan,
                Color::Rgb(50, 60, 90),
            ),
        };
        // Yellow is unreadable on white: the light theme marks other bytes in magenta.
        let (printable, other) = match name {
            ThemeName::Light => (Color::Blue, Color::Magenta),
            _ => (Color::Cyan, Color::Yellow),
        };
        let heat = match name {
            ThemeName::Light => [Color::Green, Color::Blue, Color::Magenta, Color::Red],
            _ => [Color::Green, Color::Yellow, Color::LightRed, Color::Red],
        };
        Theme {
            text: Style::default().fg(fg),
            dim: Style::default().fg(dim),
            accent: Style::default().fg(accent).add_modifier(Modifier::BOLD),
            header: Style::default().fg(accent).add_modifier(Modifier::BOLD),
            selected: Style::default().bg(sel_bg).add_modifier(Modifier::BOLD),
            tab_active: Style::default()
                .fg(Color::Black)
                .bg(accent)
                .add_modifier(Modifier::BOLD),
            diff_a: Style::default()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD),
            diff_b: Style::default()
                .fg(Color::Black)
                .bg(Color::Green)
                .add_modifier(Modifier::BOLD),
            added: Style::default().fg(Color::Green),
            removed: Style::default().fg(Color::Red),
            ok: Style::default()
                .fg(Color::Green)
                .add_modifier(Modifier::BOLD),
            warn: Style::default().fg(Color::Yellow),
            error: Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
            chart: Style::default().fg(accent),
            byte_zero: Style::default().fg(dim),
            byte_printable: Style::default().fg(printable),
            byte_other: Style::default().fg(other),
            heat: heat.map(|c| Style::default().fg(c)),
        }
    }
}
