//! `/` on the snapshot screen: a value of the view's type (its bytes in the view's byte order,
//! at element offsets) or a byte pattern, searched on both sides from the cursor on; `>`/`<`
//! go to the next and previous match. The search runs on a worker thread
//! (`rr_engine::diff::search`) a window at a time, so multi-GiB snapshots never block the UI;
//! a new search cancels the one before.

use rr_engine::diff::search::{Found, Query, SearchEvent};
use rr_engine::diff::typed::encode;
use rr_engine::diff::DType;

use super::{SnapshotsScreen, NO_SNAPSHOTS};
use crate::tui::app::{App, Cmd};

/// The search of the open snapshot view (kept for `>`/`<`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchState {
    /// What was typed, as the status line repeats it.
    pub text: String,
    pub pattern: Vec<u8>,
    /// Matches start at multiples of this: the element size of a typed value, 1 for bytes.
    pub align: u64,
    /// The job whose answer is awaited, if one runs.
    pub job: Option<u64>,
    pub forward: bool,
}

/// The bytes a search text stands for: `x:` and hex digits (or any text in the hex view) are
/// bytes; otherwise a value of the view's type. Returns the pattern and its alignment.
pub fn pattern(text: &str, dtype: Option<DType>, big: bool) -> Result<(Vec<u8>, u64), String> {
    let t = text.trim();
    match (t.strip_prefix("x:"), dtype) {
        (Some(hex), _) => hex_bytes(hex).map(|b| (b, 1)),
        (None, None) => hex_bytes(t).map(|b| (b, 1)),
        (None, Some(d)) => encode(d, t, big).map(|b| (b, d.size() as u64)),
    }
}

/// `de ad be ef`, `deadbeef` or `0xdeadbeef` as bytes, in the order written.
fn hex_bytes(text: &str) -> Result<Vec<u8>, String> {
    let digits: String = text
        .trim()
        .trim_start_matches("0x")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if digits.is_empty() || digits.len() % 2 == 1 {
        return Err(format!(
            "{text:?}: bytes are pairs of hex digits (de ad be ef); a value needs a typed view (t)"
        ));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16)
                .map_err(|_| format!("{text:?}: {} is not a hex byte", &digits[i..i + 2]))
        })
        .collect()
}

impl SnapshotsScreen {
    /// The search prompt's text applied: kept as the view's search (`search_again` then
    /// starts it from the cursor on), or why it is no value or bytes.
    pub(super) fn set_search(app: &mut App, text: &str) -> Result<String, String> {
        let s = app.snapshots.view.as_mut().ok_or(NO_SNAPSHOTS)?;
        if text.trim().is_empty() {
            return Err("type a value of the view's type, or bytes (x:de ad be ef)".into());
        }
        let (pattern, align) = pattern(text, s.dtype, s.big_endian)?;
        s.search = Some(SearchState {
            text: text.trim().to_string(),
            pattern,
            align,
            job: None,
            forward: true,
        });
        Ok(format!("searching for {}…", text.trim()))
    }

    /// The next (or previous) match of the view's search, from the cursor.
    pub(super) fn search_again(app: &mut App, forward: bool) -> Vec<Cmd> {
        let screen = &mut app.snapshots;
        let Some(s) = screen.view.as_mut() else {
            app.set_status(NO_SNAPSHOTS, true);
            return vec![];
        };
        let Some(search) = s.search.as_mut() else {
            app.set_status("no search yet: / searches", true);
            return vec![];
        };
        screen.next_job += 1;
        let job = screen.next_job;
        search.job = Some(job);
        search.forward = forward;
        let here = s.cursor.filter(|&c| s.top <= c && c < s.top + s.row);
        let from = match (forward, here) {
            (true, Some(c)) => c + 1,
            (true, None) => s.top,
            (false, Some(c)) => c,
            (false, None) => s.top,
        };
        let query = Query {
            pattern: search.pattern.clone(),
            align: search.align,
            from,
            forward,
        };
        let (a, b) = (s.a.clone(), s.b.clone());
        let text = search.text.clone();
        app.set_status(format!("searching for {text}…"), false);
        vec![Cmd::StartSearch { job, a, b, query }]
    }

    /// An event of the running search: progress, or where it ended.
    pub fn on_search_event(app: &mut App, job: u64, event: SearchEvent) {
        let Some(s) = app.snapshots.view.as_mut() else {
            return;
        };
        let Some(search) = s.search.as_mut().filter(|x| x.job == Some(job)) else {
            return; // a search replaced since, or another view
        };
        let text = search.text.clone();
        let forward = search.forward;
        let message = match event {
            SearchEvent::Progress { searched, total } => {
                let pct = searched as f64 * 100.0 / total.max(1) as f64;
                app.set_status(format!("searching for {text}… {pct:.0}%"), false);
                return;
            }
            SearchEvent::Done(Ok(Some(Found { offset, in_a, in_b }))) => {
                search.job = None;
                s.cursor = Some(offset);
                s.top = offset / s.row * s.row;
                let sides = match (in_a, in_b) {
                    (true, true) => "both sides",
                    (true, false) => "the left side only",
                    _ => "the right side only",
                };
                (
                    format!("{text} at offset {offset:#x}, on {sides} (> next, < previous)"),
                    false,
                )
            }
            SearchEvent::Done(Ok(None)) => {
                search.job = None;
                let way = if forward { "after" } else { "before" };
                (format!("no {text} {way} this point"), true)
            }
            SearchEvent::Done(Err(e)) => {
                search.job = None;
                (e, true)
            }
        };
        app.set_status(message.0, message.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_texts_are_bytes_or_values_of_the_views_type() {
        assert_eq!(
            pattern("de ad be ef", None, false).unwrap(),
            (vec![0xde, 0xad, 0xbe, 0xef], 1)
        );
        assert_eq!(
            pattern("x:0x0102", Some(DType::F32), false).unwrap(),
            (vec![1, 2], 1)
        );
        assert_eq!(
            pattern("1.5", Some(DType::F32), false).unwrap(),
            (1.5f32.to_le_bytes().to_vec(), 4)
        );
        assert_eq!(
            pattern("258", Some(DType::U16), true).unwrap(),
            (vec![1, 2], 2)
        );
        assert!(
            pattern("1.5", None, false).is_err(),
            "a value needs a typed view"
        );
        assert!(pattern("abc", None, false).is_err());
        assert!(pattern("zz", None, false).is_err());
    }
}
