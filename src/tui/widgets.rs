//! Drawing helpers shared by the frame (`ui`) and the screens' components (`app::screens`):
//! a screen's titled top rule and an empty list's message. They read nothing of the explorer's
//! state, so both sides use them without depending on each other.

use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use super::layout::{fit, titled_inner};
use crate::settings::theme::Theme;

/// A screen's frame: a top rule titled ` {title} ` (cut to the width); returns the area inside.
pub(crate) fn titled(title: &str, theme: &Theme, f: &mut Frame, area: Rect) -> Rect {
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        fit(&format!(" {title} "), area.width as usize),
        theme.header,
    ));
    f.render_widget(block, area);
    titled_inner(area)
}

/// A list's place when it has nothing to show: `text`, dimmed and wrapped, inside `block`.
pub(crate) fn empty_list(text: String, block: Block, theme: &Theme, f: &mut Frame, area: Rect) {
    f.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: true })
            .style(theme.dim)
            .block(block),
        area,
    );
}
