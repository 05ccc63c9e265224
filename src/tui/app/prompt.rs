//! One-line prompts (filter, go to, replay settings): a line editor with the readline keys people
//! type without thinking, and what each prompt is for.
//!
//! A prompt whose text does not parse stays open with the reason shown, so a typo is fixed in
//! place rather than retyped (every prompt behaves this way).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Filter,
    Goto,
    Repetitions,
    Grid,
    Block,
    Tolerance,
    /// A legacy LLVM 16–17 record's device image (`--image`).
    Image,
    /// A legacy LLVM 16–17 record's region start (`--base-address`).
    BaseAddress,
    /// An A/B replay's candidate (`--candidate`).
    Candidate,
    /// The snapshot view's element type, by name.
    Type,
    /// A value or bytes to search the snapshots for.
    Search,
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::Filter => "filter",
            PromptKind::Goto => "go to (offset, 0xADDRESS, argN)",
            PromptKind::Repetitions => "repetitions",
            PromptKind::Grid => "grid XxYxZ (empty: recorded)",
            PromptKind::Block => "block XxYxZ (empty: recorded)",
            PromptKind::Tolerance => "tolerance TYPE[:atol=,rtol=,ulp=] (empty: bytes)",
            PromptKind::Image => "device image FILE for legacy records (empty: recorded)",
            PromptKind::BaseAddress => "region start 0xADDRESS for LLVM 16–17 (empty: inferred)",
            PromptKind::Search => {
                "search (a value of the view's type; bytes: hex view, or x:de ad be ef)"
            }
            PromptKind::Type => {
                "type: hex u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64 (empty: hex)"
            }
            PromptKind::Candidate => {
                "A/B candidate FILE [-D N=V] [--nvrtc-opt=O] [--candidate-kernel K] (empty: no A/B)"
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub editor: LineEditor,
    /// Why the last Enter was refused.
    pub error: Option<String>,
}

impl Prompt {
    pub fn new(kind: PromptKind, text: String) -> Prompt {
        Prompt {
            kind,
            editor: LineEditor::new(text),
            error: None,
        }
    }
    pub fn text(&self) -> String {
        self.editor.text()
    }
}

/// What a key did to the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The text changed.
    Changed,
    /// Only the cursor moved (or nothing could change: Backspace at the start).
    Moved,
    /// Not an editing key.
    Ignored,
}

/// A single line of text and a cursor (counted in characters, so any UTF-8 is safe).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineEditor {
    chars: Vec<char>,
    cursor: usize,
}

/// Ctrl-W stops at these as well as at spaces: prompts hold lists like `8,1,1` and
/// `f32:rtol=1e-5,ulp=4`, where deleting the last item is the useful unit.
fn separates_words(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | ':' | '=')
}

impl LineEditor {
    /// A line holding `text`, the cursor at its end.
    pub fn new(text: impl Into<String>) -> LineEditor {
        let chars: Vec<char> = text.into().chars().collect();
        LineEditor {
            cursor: chars.len(),
            chars,
        }
    }

    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// The cursor position in characters from the start.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Apply a key: printable characters insert at the cursor; Backspace / Delete remove around
    /// it; Left / Right, Home / End, Ctrl-A / Ctrl-E, Ctrl-B / Ctrl-F move it; Ctrl-U deletes
    /// to the start, Ctrl-K to the end, Ctrl-W the word before the cursor.
    pub fn handle(&mut self, key: &KeyEvent) -> Edit {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let before = (self.chars.len(), self.cursor);
        match (key.code, ctrl) {
            (KeyCode::Char('a'), true) | (KeyCode::Home, _) => self.cursor = 0,
            (KeyCode::Char('e'), true) | (KeyCode::End, _) => self.cursor = self.chars.len(),
            (KeyCode::Char('b'), true) | (KeyCode::Left, _) => {
                self.cursor = self.cursor.saturating_sub(1)
            }
            (KeyCode::Char('f'), true) | (KeyCode::Right, _) => {
                self.cursor = (self.cursor + 1).min(self.chars.len())
            }
            (KeyCode::Char('u'), true) => {
                self.chars.drain(..self.cursor);
                self.cursor = 0;
            }
            (KeyCode::Char('k'), true) => self.chars.truncate(self.cursor),
            (KeyCode::Char('w'), true) => {
                let mut start = self.cursor;
                while start > 0 && separates_words(self.chars[start - 1]) {
                    start -= 1;
                }
                while start > 0 && !separates_words(self.chars[start - 1]) {
                    start -= 1;
                }
                self.chars.drain(start..self.cursor);
                self.cursor = start;
            }
            (KeyCode::Char('h'), true) | (KeyCode::Backspace, _) => {
                if self.cursor > 0 {
                    self.cursor -= 1;
                    self.chars.remove(self.cursor);
                }
            }
            (KeyCode::Char('d'), true) | (KeyCode::Delete, _) => {
                if self.cursor < self.chars.len() {
                    self.chars.remove(self.cursor);
                }
            }
            (KeyCode::Char(c), false) if !key.modifiers.contains(KeyModifiers::ALT) => {
                self.chars.insert(self.cursor, c);
                self.cursor += 1;
            }
            _ => return Edit::Ignored,
        }
        if self.chars.len() != before.0 {
            Edit::Changed
        } else {
            Edit::Moved
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(e: &mut LineEditor, code: KeyCode, ctrl: bool) -> Edit {
        let m = if ctrl {
            KeyModifiers::CONTROL
        } else {
            KeyModifiers::NONE
        };
        e.handle(&KeyEvent::new(code, m))
    }

    fn typed(e: &mut LineEditor, s: &str) {
        for c in s.chars() {
            press(e, KeyCode::Char(c), false);
        }
    }

    #[test]
    fn readline_keys_edit_at_the_cursor() {
        let mut e = LineEditor::new("8,1,1");
        press(&mut e, KeyCode::Char('w'), true);
        assert_eq!((e.text().as_str(), e.cursor()), ("8,1,", 4));
        press(&mut e, KeyCode::Char('w'), true);
        assert_eq!(e.text(), "8,");
        typed(&mut e, "2,3");
        press(&mut e, KeyCode::Char('a'), true);
        typed(&mut e, "1");
        assert_eq!((e.text().as_str(), e.cursor()), ("18,2,3", 1));
        press(&mut e, KeyCode::Right, false);
        press(&mut e, KeyCode::Backspace, false);
        assert_eq!(e.text(), "1,2,3");
        press(&mut e, KeyCode::Delete, false);
        assert_eq!(e.text(), "12,3");
        press(&mut e, KeyCode::End, false);
        press(&mut e, KeyCode::Left, false);
        press(&mut e, KeyCode::Char('u'), true);
        assert_eq!((e.text().as_str(), e.cursor()), ("3", 0));
        press(&mut e, KeyCode::Char('e'), true);
        assert_eq!(e.cursor(), 1);
        press(&mut e, KeyCode::Home, false);
        press(&mut e, KeyCode::Char('k'), true);
        assert_eq!(e.text(), "");
    }

    #[test]
    fn edges_and_wide_characters_are_safe() {
        let mut e = LineEditor::new("");
        assert_eq!(press(&mut e, KeyCode::Backspace, false), Edit::Moved);
        assert_eq!(press(&mut e, KeyCode::Delete, false), Edit::Moved);
        assert_eq!(press(&mut e, KeyCode::Left, false), Edit::Moved);
        assert_eq!(press(&mut e, KeyCode::Char('w'), true), Edit::Moved);
        typed(&mut e, "µs λ");
        press(&mut e, KeyCode::Left, false);
        press(&mut e, KeyCode::Backspace, false);
        assert_eq!(e.text(), "µsλ");
        assert_eq!(press(&mut e, KeyCode::F(2), false), Edit::Ignored);
        assert_eq!(press(&mut e, KeyCode::Enter, false), Edit::Ignored);
    }
}
