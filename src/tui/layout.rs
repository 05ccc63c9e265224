//! Text and areas cut to the room they get: pure helpers that depend on nothing of the
//! explorer's state or drawing, shared by both (`app` lays out what it scrolls and clicks with
//! them, `ui` draws with them).

use ratatui::layout::Rect;

/// Truncate to `w` columns with an ellipsis.
pub(crate) fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else if w == 0 {
        String::new()
    } else {
        let mut t: String = s.chars().take(w - 1).collect();
        t.push('…');
        t
    }
}

/// Truncate to `w` columns keeping both ends (`8683979…_13526365`): names that share a long
/// prefix (hash-named descriptors) stay told apart.
pub(crate) fn fit_middle(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    if w < 3 {
        return fit(s, w);
    }
    let tail = (w - 1) / 2;
    let head = w - 1 - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// A path in `w` columns: its last component whole, the middle of what leads to it cut
/// (`/home/…/llvm-two-kernels`); a name longer than `w` keeps both its ends.
pub(crate) fn fit_path(path: &str, w: usize) -> String {
    let n = path.chars().count();
    if n <= w {
        return path.to_string();
    }
    let trimmed = path.trim_end_matches('/');
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    let name_len = name.chars().count();
    if name_len + 2 > w {
        return fit_middle(name, w);
    }
    // A head of a character or two (`r…/name`) says nothing of where the name is: none then.
    let head: String = match w - name_len - 2 {
        keep if keep < 3 => String::new(),
        keep => path.chars().take(keep).collect(),
    };
    format!("{head}…/{name}")
}

/// The area inside a screen's frame (`ui::titled`): below its top rule.
pub fn titled_inner(area: Rect) -> Rect {
    ratatui::widgets::Block::default()
        .borders(ratatui::widgets::Borders::TOP)
        .inner(area)
}
