//! The two bottom lines: the status line (a prompt, the last message, or the selected
//! instance's problem on the left; the instance count always on the right) and the hint bar
//! (the keys of the screen, the prompt or the help popup).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::settings::theme::Theme;
use crate::tui::app::framelayout::{
    count_text, message, message_lines, prompt_label_lines, COUNT_RULE,
};
use crate::tui::app::{App, Prompt, Screen};
use crate::tui::keymap;
use crate::tui::layout::fit;

pub fn draw_status(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let count = count_text(app, area.width as usize / 2);
    let [left, rule, right] = Layout::horizontal([
        Constraint::Min(10),
        Constraint::Length(COUNT_RULE.chars().count() as u16),
        Constraint::Length(count.chars().count() as u16),
    ])
    .areas(area);
    let lines: Vec<Line> = if let Some(prompt) = &app.prompt {
        let labels = prompt_label_lines(prompt, left.width as usize);
        let mut lines: Vec<Line> = labels
            .iter()
            .map(|l| Line::from(Span::styled(l.clone(), theme.accent)))
            .collect();
        lines.push(prompt_line(
            prompt,
            labels.is_empty(),
            theme,
            left.width as usize,
        ));
        lines
    } else {
        let style = match message(app) {
            Some((_, false)) => theme.text,
            _ => theme.error,
        };
        message_lines(app, area.width, f.area().height)
            .into_iter()
            .map(|l| Line::from(Span::styled(l, style)))
            .collect()
    };
    let rule_lines = (0..rule.height).map(|_| Line::from(Span::styled(COUNT_RULE, theme.dim)));
    f.render_widget(Paragraph::new(lines), left);
    f.render_widget(Paragraph::new(rule_lines.collect::<Vec<_>>()), rule);
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(count, theme.dim))).right_aligned(),
        Rect { height: 1, ..right },
    );
}

/// `label: text` (the text alone when the label has lines of its own) with the character
/// under the cursor reversed; the text scrolls sideways to keep the cursor on screen.
fn prompt_line<'a>(prompt: &Prompt, with_label: bool, theme: &Theme, width: usize) -> Line<'a> {
    let label = match with_label {
        true => format!("{}: ", prompt.kind.label()),
        false => String::new(),
    };
    let room = width.saturating_sub(label.chars().count() + 1).max(1);
    let chars: Vec<char> = prompt.text().chars().collect();
    let cursor = prompt.editor.cursor();
    let first = (cursor + 1).saturating_sub(room);
    let shown: Vec<char> = chars.iter().skip(first).take(room).copied().collect();
    let at = cursor - first;
    let before: String = shown[..at.min(shown.len())].iter().collect();
    let under = shown.get(at).map_or(" ".to_string(), char::to_string);
    let after: String = shown.iter().skip(at + 1).collect();
    let text = if prompt.error.is_some() {
        theme.error
    } else {
        theme.text
    };
    Line::from(vec![
        Span::styled(label, theme.accent),
        Span::styled(rr_format::text::visible(&before).into_owned(), text),
        Span::styled(
            rr_format::text::visible(&under).into_owned(),
            text.add_modifier(Modifier::REVERSED),
        ),
        Span::styled(rr_format::text::visible(&after).into_owned(), text),
    ])
}

const PROMPT_HINTS: &[(&str, &str)] = &[
    ("Enter", "apply"),
    ("Esc", "cancel"),
    ("Ctrl-U", "clear"),
    ("Ctrl-W", "word"),
    ("←/→", "move"),
];
const HELP_HINTS: &[(&str, &str)] = &[
    ("j/k", "scroll"),
    ("PgUp/PgDn", "page"),
    ("g/G", "top/bottom"),
    ("Esc", "close"),
];

pub fn draw_hints(app: &App, theme: &Theme, f: &mut Frame, area: Rect) {
    let field = app.tune.form.editing.as_ref();
    let refused = app.prompt.as_ref().and_then(|p| p.error.as_deref());
    if let Some(why) = refused.or(field.and_then(|e| e.check.as_ref().err().map(String::as_str))) {
        let text = format!("✗ {why}  (fix and press Enter, or Esc)");
        // Wrapped over the hint bar's lines; cut only past them.
        let room = (area.width as usize).saturating_sub(1).max(8);
        let mut lines = crate::tui::wrap::wrap(&text, room);
        let most = (area.height as usize).max(1);
        if lines.len() > most {
            let rest = lines.split_off(most - 1).join(" ");
            lines.push(fit(&rest, room));
        }
        let lines: Vec<Line> = lines
            .into_iter()
            .map(|l| Line::from(Span::styled(format!(" {l}"), theme.error)))
            .collect();
        f.render_widget(Paragraph::new(lines), area);
        return;
    }
    let entries = if app.prompt.is_some() || field.is_some() {
        PROMPT_HINTS.to_vec()
    } else if app.help {
        HELP_HINTS.to_vec()
    } else {
        let mut hints = keymap::hints(app.scope());
        // A record opened from the picker: Esc on its instance list goes back to the picker
        // (the key's binding is the global "go back", which the bar does not list).
        let from_picker = app.picker.is_some() && !app.picking;
        if from_picker && app.screen == Screen::Instances && app.instances.filter.is_empty() {
            let at = hints
                .iter()
                .position(|&(k, _)| k == "q")
                .unwrap_or(hints.len());
            hints.insert(at, ("Esc", "records"));
        }
        hints
    };
    let lines: Vec<Line> = keymap::hint_lines(&entries, area.width as usize)
        .into_iter()
        .map(|entries| Line::from(hint_spans(&entries, theme)))
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

fn hint_spans<'a>(entries: &[(&str, &str)], theme: &Theme) -> Vec<Span<'a>> {
    entries
        .iter()
        .flat_map(|(k, d)| {
            [
                Span::styled(format!(" {k}"), theme.accent),
                Span::styled(format!(" {d} "), theme.dim),
            ]
        })
        .collect()
}
