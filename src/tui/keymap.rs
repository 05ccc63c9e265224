//! The one key map: dispatch, the help overlay and the hint bar all read this table.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Quit,
    Help,
    Back,
    ScreenInstances,
    ScreenDescriptor,
    ScreenSnapshots,
    ScreenReplay,
    NextScreen,
    PrevScreen,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Filter,
    Sort,
    ReverseSort,
    RawNames,
    Mark,
    NextDiff,
    PrevDiff,
    Goto,
    CyclePair,
    CycleType,
    Endian,
    Squeeze,
    Replay,
    Verify,
    Cancel,
    EditRepetitions,
    EditGrid,
    EditBlock,
    EditTolerance,
    Freeze,
    Export,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Instances,
    Descriptor,
    Snapshots,
    Replay,
}

pub struct Binding {
    pub scope: Scope,
    pub keys: &'static [(KeyCode, KeyModifiers)],
    pub label: &'static str,
    pub action: Action,
    pub description: &'static str,
    /// Shown in the hint bar.
    pub hint: bool,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

macro_rules! b {
    ($scope:ident, [$($k:expr),+], $label:expr, $action:ident, $desc:expr, $hint:expr) => {
        Binding { scope: Scope::$scope, keys: &[$($k),+], label: $label, action: Action::$action, description: $desc, hint: $hint }
    };
}

pub static BINDINGS: &[Binding] = &[
    b!(
        Global,
        [(KeyCode::Char('q'), NONE), (KeyCode::Char('c'), CTRL)],
        "q",
        Quit,
        "quit (Ctrl-c always)",
        true
    ),
    b!(
        Global,
        [(KeyCode::Char('?'), NONE), (KeyCode::F(1), NONE)],
        "?",
        Help,
        "this help",
        true
    ),
    b!(
        Global,
        [(KeyCode::Esc, NONE)],
        "Esc",
        Back,
        "close popup, clear filter, go back",
        false
    ),
    b!(
        Global,
        [(KeyCode::Char('1'), NONE)],
        "1",
        ScreenInstances,
        "instances",
        false
    ),
    b!(
        Global,
        [(KeyCode::Char('2'), NONE)],
        "2",
        ScreenDescriptor,
        "descriptor",
        false
    ),
    b!(
        Global,
        [(KeyCode::Char('3'), NONE)],
        "3",
        ScreenSnapshots,
        "snapshots",
        false
    ),
    b!(
        Global,
        [(KeyCode::Char('4'), NONE)],
        "4",
        ScreenReplay,
        "replay",
        false
    ),
    b!(
        Global,
        [(KeyCode::Tab, NONE)],
        "Tab",
        NextScreen,
        "next screen",
        true
    ),
    b!(
        Global,
        [(KeyCode::BackTab, SHIFT), (KeyCode::BackTab, NONE)],
        "S-Tab",
        PrevScreen,
        "previous screen",
        false
    ),
    b!(
        Global,
        [(KeyCode::Char('j'), NONE), (KeyCode::Down, NONE)],
        "j/↓",
        Down,
        "down",
        false
    ),
    b!(
        Global,
        [(KeyCode::Char('k'), NONE), (KeyCode::Up, NONE)],
        "k/↑",
        Up,
        "up",
        false
    ),
    b!(
        Global,
        [(KeyCode::PageDown, NONE), (KeyCode::Char('d'), CTRL)],
        "PgDn",
        PageDown,
        "page down",
        false
    ),
    b!(
        Global,
        [(KeyCode::PageUp, NONE), (KeyCode::Char('u'), CTRL)],
        "PgUp",
        PageUp,
        "page up",
        false
    ),
    b!(
        Global,
        [(KeyCode::Home, NONE), (KeyCode::Char('g'), NONE)],
        "g/Home",
        Top,
        "top",
        false
    ),
    b!(
        Global,
        [
            (KeyCode::End, NONE),
            (KeyCode::Char('G'), SHIFT),
            (KeyCode::Char('G'), NONE)
        ],
        "G/End",
        Bottom,
        "bottom",
        false
    ),
    b!(
        Global,
        [(KeyCode::Char('r'), NONE)],
        "r",
        Replay,
        "replay the selected instance",
        true
    ),
    b!(
        Global,
        [(KeyCode::Char('v'), NONE)],
        "v",
        Verify,
        "replay and verify against .record_output",
        true
    ),
    b!(
        Global,
        [(KeyCode::Char('c'), NONE)],
        "c",
        Cancel,
        "cancel the running replay",
        false
    ),
    b!(
        Instances,
        [(KeyCode::Enter, NONE)],
        "Enter",
        Open,
        "open the snapshot diff",
        true
    ),
    b!(
        Instances,
        [(KeyCode::Char('/'), NONE)],
        "/",
        Filter,
        "filter by kernel or file",
        true
    ),
    b!(
        Instances,
        [(KeyCode::Char('s'), NONE)],
        "s",
        Sort,
        "sort by next column",
        true
    ),
    b!(
        Instances,
        [(KeyCode::Char('S'), SHIFT), (KeyCode::Char('S'), NONE)],
        "S",
        ReverseSort,
        "reverse the sort",
        false
    ),
    b!(
        Instances,
        [(KeyCode::Char('R'), SHIFT), (KeyCode::Char('R'), NONE)],
        "R",
        RawNames,
        "raw (mangled) kernel names",
        false
    ),
    b!(
        Instances,
        [(KeyCode::Char('m'), NONE)],
        "m",
        Mark,
        "mark for a descriptor diff",
        false
    ),
    b!(
        Descriptor,
        [(KeyCode::Char('m'), NONE)],
        "m",
        Mark,
        "mark / unmark for a side-by-side diff",
        true
    ),
    b!(
        Descriptor,
        [(KeyCode::Char('R'), SHIFT), (KeyCode::Char('R'), NONE)],
        "R",
        RawNames,
        "raw kernel names",
        false
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('n'), NONE)],
        "n",
        NextDiff,
        "next difference",
        true
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('N'), SHIFT), (KeyCode::Char('N'), NONE)],
        "N",
        PrevDiff,
        "previous difference",
        true
    ),
    b!(
        Snapshots,
        [(KeyCode::Char(':'), NONE), (KeyCode::Char('g'), CTRL)],
        ":",
        Goto,
        "go to offset, 0xADDRESS or argN",
        true
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('p'), NONE)],
        "p",
        CyclePair,
        "input/output/replay pair",
        true
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('t'), NONE)],
        "t",
        CycleType,
        "typed view: hex, u8 … f64",
        true
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('e'), NONE)],
        "e",
        Endian,
        "toggle endianness",
        false
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('z'), NONE)],
        "z",
        Squeeze,
        "squeeze equal rows",
        true
    ),
    b!(
        Replay,
        [(KeyCode::Char('n'), NONE)],
        "n",
        EditRepetitions,
        "number of repetitions",
        true
    ),
    b!(
        Replay,
        [(KeyCode::Char('G'), SHIFT), (KeyCode::Char('G'), NONE)],
        "G",
        EditGrid,
        "grid override X,Y,Z",
        false
    ),
    b!(
        Replay,
        [(KeyCode::Char('B'), SHIFT), (KeyCode::Char('B'), NONE)],
        "B",
        EditBlock,
        "block override X,Y,Z",
        false
    ),
    b!(
        Replay,
        [(KeyCode::Char('T'), SHIFT), (KeyCode::Char('T'), NONE)],
        "T",
        EditTolerance,
        "tolerance, e.g. f32:rtol=1e-5",
        false
    ),
    b!(
        Replay,
        [(KeyCode::Char('f'), NONE)],
        "f",
        Freeze,
        "freeze the chart",
        false
    ),
    b!(
        Replay,
        [(KeyCode::Char('x'), NONE)],
        "x",
        Export,
        "export timings (CSV + JSON)",
        true
    ),
];

/// The action for a key in a scope: scope bindings first, then global ones.
pub fn lookup(scope: Scope, key: &KeyEvent) -> Option<Action> {
    let matches = |b: &&Binding| {
        b.keys.iter().any(|(c, m)| {
            *c == key.code
                && (*m == key.modifiers
                    || (*m == NONE && key.modifiers == SHIFT && matches!(c, KeyCode::Char(_))))
        })
    };
    BINDINGS
        .iter()
        .filter(|b| b.scope == scope)
        .find(matches)
        .or_else(|| {
            BINDINGS
                .iter()
                .filter(|b| b.scope == Scope::Global)
                .find(matches)
        })
        .map(|b| b.action)
}

/// Hint bar entries for a scope.
pub fn hints(scope: Scope) -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<_> = BINDINGS
        .iter()
        .filter(|b| b.hint && b.scope == scope)
        .map(|b| (b.label, b.description))
        .collect();
    v.extend(
        BINDINGS
            .iter()
            .filter(|b| b.hint && b.scope == Scope::Global)
            .map(|b| (b.label, short(b.description))),
    );
    v
}

fn short(d: &'static str) -> &'static str {
    match d {
        "replay the selected instance" => "replay",
        "replay and verify against .record_output" => "verify",
        "quit (Ctrl-c always)" => "quit",
        "this help" => "help",
        "next screen" => "screen",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(c, m)
    }

    #[test]
    fn scoped_keys_win_over_global_ones() {
        assert_eq!(
            lookup(Scope::Snapshots, &key(KeyCode::Char('n'), NONE)),
            Some(Action::NextDiff)
        );
        assert_eq!(
            lookup(Scope::Replay, &key(KeyCode::Char('n'), NONE)),
            Some(Action::EditRepetitions)
        );
        assert_eq!(
            lookup(Scope::Instances, &key(KeyCode::Char('n'), NONE)),
            None
        );
        assert_eq!(
            lookup(Scope::Instances, &key(KeyCode::Char('c'), CTRL)),
            Some(Action::Quit)
        );
        assert_eq!(
            lookup(Scope::Instances, &key(KeyCode::Char('S'), SHIFT)),
            Some(Action::ReverseSort)
        );
        assert_eq!(
            lookup(Scope::Snapshots, &key(KeyCode::Char('?'), SHIFT)),
            Some(Action::Help)
        );
    }

    #[test]
    fn no_key_is_bound_twice_in_one_scope() {
        for s in [
            Scope::Global,
            Scope::Instances,
            Scope::Descriptor,
            Scope::Snapshots,
            Scope::Replay,
        ] {
            let mut seen = std::collections::HashSet::new();
            for b in BINDINGS.iter().filter(|b| b.scope == s) {
                for k in b.keys {
                    assert!(seen.insert(*k), "{k:?} bound twice in {s:?}");
                }
            }
        }
    }
}
