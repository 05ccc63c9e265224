//! The one key map: dispatch, the help overlay and the hint bar all read one table
//! (`keytable`, re-exported here), laid out here for each of them.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub use super::keytable::{Action, Binding, Scope, BINDINGS};

/// The action for a key in a scope: scope bindings first, then global ones.
pub fn lookup(scope: Scope, key: &KeyEvent) -> Option<Action> {
    let matches = |b: &&Binding| {
        b.keys.iter().any(|(c, m)| {
            *c == key.code
                && (*m == key.modifiers
                    || (*m == KeyModifiers::NONE
                        && key.modifiers == KeyModifiers::SHIFT
                        && matches!(c, KeyCode::Char(_))))
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

/// Hint bar entries for a screen: its own keys first, then the global ones (help and quit
/// last: the hint bar keeps help on screen whatever the width). A global key the screen binds
/// to something else is left out (on the tuning screen `r` starts a sweep, not a replay).
pub fn hints(scope: Scope) -> Vec<(&'static str, &'static str)> {
    let scoped = BINDINGS.iter().filter(|b| b.scope == scope);
    let shadowed = |g: &Binding| {
        BINDINGS
            .iter()
            .filter(|b| b.scope == scope && b.action != g.action)
            .any(|b| b.keys.iter().any(|k| g.keys.contains(k)))
    };
    // The picker has no record open yet: of the global keys only movement, help and quit.
    let global = BINDINGS.iter().filter(|b| {
        b.scope == Scope::Global
            && !matches!(b.action, Action::Quit | Action::Help)
            && (scope == Scope::Global || !shadowed(b))
            && scope != Scope::Picker
    });
    let last = BINDINGS
        .iter()
        .filter(|b| b.scope == Scope::Global && matches!(b.action, Action::Quit | Action::Help));
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for b in scoped.chain(global).chain(last) {
        if let Some(h) = b.hint {
            if !seen.contains(&b.action) {
                seen.push(b.action);
                out.push((b.label, h));
            }
        }
    }
    out
}

/// The most lines the hint bar takes: at 80 columns every screen's keys fit in three (most
/// screens need two, the snapshot screen three).
pub const MAX_HINT_LINES: usize = 3;

/// Columns a hint bar entry takes: ` key word `.
fn hint_cost((key, word): &(&str, &str)) -> usize {
    key.chars().count() + word.chars().count() + 3
}

/// `entries` in lines of at most `width` columns, in order, at most [`MAX_HINT_LINES`]: every
/// key is shown when they fit; on a terminal too narrow even for that, the last line keeps
/// the last entry (help) and drops those before it that do not fit.
pub fn hint_lines<'a>(
    entries: &[(&'a str, &'a str)],
    width: usize,
) -> Vec<Vec<(&'a str, &'a str)>> {
    let final_cost = entries.last().map_or(0, hint_cost);
    let mut lines: Vec<Vec<(&str, &str)>> = vec![vec![]];
    let mut used = 0;
    for (i, e) in entries.iter().enumerate() {
        let is_final = i + 1 == entries.len();
        if used > 0 && used + hint_cost(e) > width && lines.len() < MAX_HINT_LINES {
            lines.push(vec![]);
            used = 0;
        }
        // The last line always keeps room for the final entry (help).
        let reserve = if is_final { 0 } else { final_cost };
        if lines.len() == MAX_HINT_LINES && used + hint_cost(e) + reserve > width && !is_final {
            continue;
        }
        used += hint_cost(e);
        lines.last_mut().expect("one line at least").push(*e);
    }
    lines
}

/// Lines of the hint bar of a screen `width` columns wide.
pub fn hint_line_count(scope: Scope, width: u16) -> u16 {
    hint_lines(&hints(scope), width as usize).len() as u16
}

/// Keys of every prompt (the line editor), for the help popup.
const PROMPT_KEYS: &[(&str, &str)] = &[
    (
        "Enter",
        "apply (a value that does not parse keeps the prompt open)",
    ),
    ("Esc", "cancel"),
    ("←/→", "move (also Ctrl-B / Ctrl-F)"),
    ("Home/End", "start / end of the line (also Ctrl-A / Ctrl-E)"),
    (
        "Ctrl-U",
        "delete to the start of the line (Ctrl-K: to the end)",
    ),
    ("Ctrl-W", "delete the word before the cursor"),
    ("Bksp/Del", "delete before / at the cursor"),
];

/// How the tuning screen uses the global movement keys (the help lists those once, under
/// Everywhere).
const TUNE_NOTES: &[&str] = &[
    "j/k choose a field (typed like a prompt); PgUp/PgDn scroll the heatmap's rows.",
    "Axes: values, A..B:STEP, A..B*FACTOR, 3-D as XxYxZ; grid `cover`.",
];

/// How the picker comes and goes, for the help popup.
const PICKER_NOTE: &str = "The list of a directory that holds record directories but no instance of its own; j/k move, q quits.";

/// One line of the help popup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpLine {
    Section(&'static str),
    Key(&'static str, String),
    Note(&'static str),
}

/// The screens' sections of the help, in order: the scope, its title, and its title when it
/// is the screen the help was opened on (listed first).
const SECTIONS: [(Scope, &str, &str); 7] = [
    (Scope::Instances, "Instances", "Instances (this screen)"),
    (Scope::Descriptor, "Descriptor", "Descriptor (this screen)"),
    (Scope::Snapshots, "Snapshots", "Snapshots (this screen)"),
    (Scope::Replay, "Replay", "Replay (this screen)"),
    (Scope::Tune, "Tune", "Tune (this screen)"),
    (Scope::Profile, "Profile", "Profile (this screen)"),
    (
        Scope::Picker,
        "Record directories",
        "Record directories (this list)",
    ),
];

/// Whether a screen's binding only repeats a global one (the same action on keys the global
/// one has: the Replay screen's r, v, c), so its section need not list it again.
fn repeats_global(b: &Binding) -> bool {
    BINDINGS.iter().any(|g| {
        g.scope == Scope::Global
            && g.action == b.action
            && b.keys.iter().all(|k| g.keys.contains(k))
    })
}

/// Whether `scope` binds a key of `g` itself (to the same action or another).
fn binds_a_key_of(scope: Scope, g: &Binding) -> bool {
    BINDINGS
        .iter()
        .any(|b| b.scope == scope && b.keys.iter().any(|k| g.keys.contains(k)))
}

/// The keys of a screen, as its section of the help lists them: its own bindings, less those
/// that only repeat a global one (listed once, under Everywhere). The hint bar shows every one.
pub fn screen_bindings(scope: Scope) -> impl Iterator<Item = &'static Binding> {
    BINDINGS
        .iter()
        .filter(move |b| b.scope == scope && (scope == Scope::Global || !repeats_global(b)))
}

/// What the picker does with a global key: it moves, quits and helps (`app::picker`).
fn works_in_picker(a: Action) -> bool {
    use Action::*;
    matches!(
        a,
        Quit | Help | Up | Down | PageUp | PageDown | Top | Bottom
    )
}

/// A global binding as the help opened on `scope` lists it, or None where that screen binds
/// its key itself (its section, above, says what the key does there). The screens that give
/// its key another meaning are named: on the tuning screen `r` starts a sweep, not a replay.
fn global_line(scope: Scope, g: &Binding) -> Option<HelpLine> {
    if binds_a_key_of(scope, g) || (scope == Scope::Picker && !works_in_picker(g.action)) {
        return None;
    }
    let elsewhere: Vec<&str> = SECTIONS
        .iter()
        .filter(|(s, ..)| *s != scope && *s != Scope::Picker)
        .filter(|(s, ..)| {
            BINDINGS.iter().any(|b| {
                b.scope == *s && b.action != g.action && b.keys.iter().any(|k| g.keys.contains(k))
            })
        })
        .map(|(_, title, _)| *title)
        .collect();
    let description = match elsewhere.as_slice() {
        [] => g.description.to_string(),
        [one] => format!("{} · on {one}, {} is its own key", g.description, g.label),
        [first @ .., last] => format!(
            "{} · on {} and {last}, {} is their own key",
            g.description,
            first.join(", "),
            g.label
        ),
    };
    Some(HelpLine::Key(g.label, description))
}

/// A screen's notes after its keys.
fn notes(scope: Scope) -> Vec<HelpLine> {
    match scope {
        Scope::Picker => vec![HelpLine::Note(PICKER_NOTE)],
        Scope::Tune => TUNE_NOTES.iter().map(|&n| HelpLine::Note(n)).collect(),
        _ => vec![],
    }
}

/// The help popup's lines as opened on `scope`: that screen's keys first (every one, its
/// copies of global keys included), then the global keys that work there, then the other
/// screens' keys, the prompt keys and the mouse. Each key is listed with what it does on the
/// screen its section names, so the popup is true on every screen.
pub fn help_lines(scope: Scope) -> Vec<HelpLine> {
    let mut lines = Vec::new();
    let key = |b: &Binding| HelpLine::Key(b.label, b.description.to_string());
    if let Some((_, _, title)) = SECTIONS.iter().find(|(s, ..)| *s == scope) {
        lines.push(HelpLine::Section(title));
        lines.extend(BINDINGS.iter().filter(|b| b.scope == scope).map(key));
        lines.extend(notes(scope));
    }
    lines.push(HelpLine::Section("Everywhere"));
    lines.extend(
        BINDINGS
            .iter()
            .filter(|g| g.scope == Scope::Global)
            .filter_map(|g| global_line(scope, g)),
    );
    // A screen's copy of a global key is listed under it where Everywhere left the key out
    // (on the tuning screen, the Replay section's r says what r does on the Replay screen).
    let in_everywhere = |b: &Binding| {
        BINDINGS.iter().any(|g| {
            g.scope == Scope::Global && g.action == b.action && global_line(scope, g).is_some()
        })
    };
    for (s, title, _) in SECTIONS.iter().filter(|(s, ..)| *s != scope) {
        lines.push(HelpLine::Section(title));
        lines.extend(
            BINDINGS
                .iter()
                .filter(|b| b.scope == *s && !(repeats_global(b) && in_everywhere(b)))
                .map(key),
        );
        lines.extend(notes(*s));
    }
    lines.push(HelpLine::Section("Prompts"));
    lines.extend(
        PROMPT_KEYS
            .iter()
            .map(|&(k, d)| HelpLine::Key(k, d.to_string())),
    );
    lines.push(HelpLine::Section("Mouse"));
    lines.extend(
        MOUSE_KEYS
            .iter()
            .map(|&(k, d)| HelpLine::Key(k, d.to_string())),
    );
    lines.push(HelpLine::Note(MOUSE_NOTE));
    lines.push(HelpLine::Note(
        "j/k, PgUp/PgDn, g/G and the wheel scroll this help; Esc, ? or q (or a click) closes it.",
    ));
    lines
}

/// What the mouse does (`app::mouse`), for the help popup.
const MOUSE_KEYS: &[(&str, &str)] = &[
    (
        "click",
        "a tab: its screen; a row: selects it (instances, record directories, the tuning form's fields, the table of the best); a heatmap cell: picks its best configuration in the table (P profiles it)",
    ),
    (
        "wheel",
        "scrolls the pane under the pointer, not the one the keys move: a list, the descriptor, the snapshots, the form, the heatmap's rows (with Shift, or sideways, its columns), the table's pick",
    ),
];

/// When the mouse does nothing, and how to give it back to the terminal.
const MOUSE_NOTE: &str = "The mouse does nothing while a prompt or a field is being typed. While the explorer has the mouse, most terminals select text with Shift held; `mouse = false` in the config file leaves the mouse to the terminal.";

/// Height of the help popup on a terminal of `height` lines: all of it when it fits, else the
/// screen less the tab bar and the hint bar (the popup then scrolls).
pub fn help_popup_height(scope: Scope, height: u16, width: u16) -> u16 {
    let lines = help_rows(scope, help_popup_width(width)).len();
    (lines.min(u16::MAX as usize - 2) as u16 + 2).min(height.saturating_sub(2))
}

/// The widest the help popup gets; narrower terminals get all their width.
const HELP_MAX_WIDTH: u16 = 100;
/// Columns of the key names in the help popup.
pub const HELP_KEY_COLUMN: usize = 10;

/// The help popup's width on a terminal `width` columns wide.
pub fn help_popup_width(width: u16) -> u16 {
    HELP_MAX_WIDTH.min(width)
}

/// One line of the help popup as drawn in a popup `width` columns wide (borders included):
/// descriptions wrap at spaces under their column rather than being cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpRow {
    Section(&'static str),
    /// A key (on the first line of its description) and a line of the description.
    Key(Option<&'static str>, String),
    Note(String),
}

/// Every help line as opened on `scope`, wrapped for a popup `width` columns wide.
pub fn help_rows(scope: Scope, width: u16) -> Vec<HelpRow> {
    let text = (width as usize).saturating_sub(2);
    let described = text.saturating_sub(HELP_KEY_COLUMN + 2).max(8);
    let mut out = Vec::new();
    for line in help_lines(scope) {
        match line {
            HelpLine::Section(t) => out.push(HelpRow::Section(t)),
            HelpLine::Key(key, what) => {
                for (i, part) in super::wrap::wrap(&what, described).into_iter().enumerate() {
                    out.push(HelpRow::Key((i == 0).then_some(key), part));
                }
            }
            HelpLine::Note(n) => out.extend(
                super::wrap::wrap(n, text.max(8))
                    .into_iter()
                    .map(HelpRow::Note),
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keytable::{CTRL, NONE, SHIFT};

    /// Help text wraps at spaces under its column: nothing is cut, at any width.
    #[test]
    fn help_descriptions_wrap_instead_of_being_cut() {
        for (width, scope) in [40u16, 80, 120, 200].into_iter().zip(SCREENS) {
            let rows = help_rows(scope, help_popup_width(width));
            let text = |r: &HelpRow| match r {
                HelpRow::Key(_, t) | HelpRow::Note(t) => t.clone(),
                HelpRow::Section(s) => s.to_string(),
            };
            let room = (help_popup_width(width) as usize).saturating_sub(2);
            for r in &rows {
                let used = match r {
                    HelpRow::Key(..) => HELP_KEY_COLUMN + 2 + text(r).chars().count(),
                    _ => text(r).chars().count(),
                };
                assert!(used <= room.max(HELP_KEY_COLUMN + 10), "{width}: {r:?}");
                assert!(!text(r).ends_with('…'), "{width}: cut: {r:?}");
            }
            let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
            let all: Vec<String> = rows.iter().flat_map(|r| words(&text(r))).collect();
            let want: Vec<String> = help_lines(scope)
                .iter()
                .flat_map(|l| match l {
                    HelpLine::Section(t) | HelpLine::Note(t) => words(t),
                    HelpLine::Key(_, t) => words(t),
                })
                .collect();
            assert_eq!(all, want, "{width}: every word, in order");
        }
    }

    /// Every screen the help can be opened on.
    const SCREENS: [Scope; 7] = [
        Scope::Picker,
        Scope::Instances,
        Scope::Descriptor,
        Scope::Snapshots,
        Scope::Replay,
        Scope::Tune,
        Scope::Profile,
    ];

    /// The keys the help lists under `title` as opened on `scope`.
    fn section(scope: Scope, title: &str) -> Vec<(&'static str, String)> {
        help_lines(scope)
            .into_iter()
            .skip_while(|l| !matches!(l, HelpLine::Section(t) if *t == title))
            .skip(1)
            .take_while(|l| !matches!(l, HelpLine::Section(_)))
            .filter_map(|l| match l {
                HelpLine::Key(k, d) => Some((k, d)),
                _ => None,
            })
            .collect()
    }

    /// The help is true on every screen: a key listed for the screen it was opened on (its own
    /// section, or Everywhere) does there what it says, as dispatch resolves it.
    #[test]
    fn the_help_says_what_each_key_does_on_its_screen() {
        for scope in SCREENS {
            let (_, _, title) = SECTIONS.iter().find(|(s, ..)| *s == scope).unwrap();
            let mut shown = section(scope, title);
            shown.extend(section(scope, "Everywhere"));
            for (label, description) in shown {
                let b = BINDINGS
                    .iter()
                    .find(|b| {
                        b.label == label
                            && (b.scope == scope || b.scope == Scope::Global)
                            && description.starts_with(b.description)
                    })
                    .unwrap_or_else(|| panic!("{scope:?}: {label} {description}"));
                for (c, m) in b.keys {
                    assert_eq!(
                        lookup(scope, &key(*c, *m)),
                        Some(b.action),
                        "{scope:?}: {label} ({description}) does something else there"
                    );
                }
            }
        }
        // The newcomer's case: on Tune and Profile, r is theirs; Profile lists r/P.
        for scope in [Scope::Tune, Scope::Profile] {
            let everywhere = section(scope, "Everywhere");
            assert!(!everywhere.iter().any(|(k, _)| *k == "r"), "{scope:?}");
        }
        let profile = section(Scope::Profile, "Profile (this screen)");
        let labels: Vec<&str> = profile.iter().map(|(k, _)| *k).collect();
        assert_eq!(labels, ["r/P", "c", "b"]);
        assert!(section(Scope::Instances, "Profile")
            .iter()
            .any(|(k, _)| *k == "r/P"));
        // Opened elsewhere, the global r names the screens where r is another key.
        let r = section(Scope::Instances, "Everywhere")
            .into_iter()
            .find(|(k, _)| *k == "r")
            .unwrap();
        assert_eq!(
            r.1,
            "replay the selected instance · on Tune and Profile, r is their own key"
        );
        // The picker's Everywhere lists only what the picker does with a global key.
        let picker: Vec<&str> = section(Scope::Picker, "Everywhere")
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert!(
            picker.contains(&"q") && picker.contains(&"j/↓"),
            "{picker:?}"
        );
        assert!(
            !picker.contains(&"r") && !picker.contains(&"Tab"),
            "{picker:?}"
        );
    }

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
    fn every_screen_lists_its_own_keys_first_and_help_last() {
        for scope in SCREENS {
            let h = hints(scope);
            let own = BINDINGS
                .iter()
                .filter(|b| b.scope == scope && b.hint.is_some())
                .count();
            assert!(own > 0, "{scope:?} has hints");
            for (label, _) in &h[..own] {
                assert!(
                    BINDINGS
                        .iter()
                        .any(|b| b.scope == scope && b.label == *label),
                    "{scope:?}: {label} is not the screen's own"
                );
            }
            assert_eq!(h.last(), Some(&("?", "help")));
        }
        assert_eq!(
            hints(Scope::Replay)[..3],
            [("r", "replay"), ("v", "verify"), ("c", "cancel")]
        );
        // On the tuning screen r starts a sweep: the global r (replay) is not offered there.
        let tune = hints(Scope::Tune);
        assert_eq!(
            tune[..4],
            [
                ("Enter", "edit"),
                ("r", "start"),
                ("R", "marked"),
                ("c", "cancel")
            ]
        );
        assert!(!tune.contains(&("r", "replay")));
        assert!(tune.contains(&("v", "verify")));
    }

    /// At 80 columns the hint bar shows every key of every screen, each key its help lists
    /// (on up to three lines); narrower, it still ends with help.
    #[test]
    fn the_hint_bar_shows_every_key_at_80_columns() {
        for scope in [
            Scope::Picker,
            Scope::Instances,
            Scope::Descriptor,
            Scope::Snapshots,
            Scope::Replay,
            Scope::Tune,
            Scope::Profile,
        ] {
            let all = hints(scope);
            let lines = hint_lines(&all, 80);
            assert!(lines.len() <= MAX_HINT_LINES, "{scope:?}");
            for l in &lines {
                assert!(
                    l.iter().map(hint_cost).sum::<usize>() <= 80,
                    "{scope:?}: {l:?}"
                );
            }
            assert_eq!(lines.concat(), all, "{scope:?}: every key, in order");
            // Every key the help lists for this screen, not only those given a hint word.
            for b in screen_bindings(scope) {
                assert!(
                    all.iter().any(|(key, _)| *key == b.label),
                    "{scope:?}: {} ({}) is in the help but not the hint bar",
                    b.label,
                    b.description
                );
            }
            let narrow = hint_lines(&all, 30).concat();
            assert_eq!(narrow.last(), Some(&("?", "help")), "{scope:?}");
        }
        assert!(hints(Scope::Instances).contains(&("q", "quit")));
        for key in ["C", "x", "f"] {
            assert!(hints(Scope::Replay).iter().any(|(k, _)| *k == key), "{key}");
        }
    }

    /// A screen's own keys never take a key that means movement everywhere (`G` is bottom on
    /// every screen; the replay screen's grid override is `D`).
    #[test]
    fn no_screen_rebinds_a_movement_key() {
        let movement = [
            Action::Up,
            Action::Down,
            Action::PageUp,
            Action::PageDown,
            Action::Top,
            Action::Bottom,
        ];
        for g in BINDINGS
            .iter()
            .filter(|b| b.scope == Scope::Global && movement.contains(&b.action))
        {
            for b in BINDINGS.iter().filter(|b| b.scope != Scope::Global) {
                for k in b.keys {
                    assert!(
                        !g.keys.contains(k),
                        "{:?} rebinds {k:?} ({:?})",
                        b.scope,
                        g.action
                    );
                }
            }
        }
    }

    /// The picker offers what it can do (open, help, quit), not the keys of a record it has
    /// not opened yet; it has its own section in the help.
    #[test]
    fn the_picker_hints_only_its_own_keys() {
        assert_eq!(
            hints(Scope::Picker),
            [("Enter", "open"), ("q", "quit"), ("?", "help")]
        );
        assert_eq!(
            lookup(Scope::Picker, &key(KeyCode::Enter, NONE)),
            Some(Action::Open)
        );
        assert!(help_lines(Scope::Instances).contains(&HelpLine::Section("Record directories")));
    }

    #[test]
    fn help_lists_each_key_once_and_fits_any_height() {
        for scope in SCREENS {
            let lines = help_lines(scope);
            let replays = lines
                .iter()
                .filter(|l| matches!(l, HelpLine::Key("r", d) if d.starts_with("replay the selected instance")))
                .count();
            assert_eq!(replays, 1, "{scope:?}");
            assert!(lines.contains(&HelpLine::Key("r", "start the sweep".into())));
            assert!(lines.contains(&HelpLine::Key(
                "Ctrl-W",
                "delete the word before the cursor".into()
            )));
            assert_eq!(help_popup_height(scope, 24, 80), 22);
            let wrapped = help_rows(scope, help_popup_width(200)).len();
            assert_eq!(help_popup_height(scope, 500, 200), wrapped as u16 + 2);
        }
    }

    #[test]
    fn no_key_is_bound_twice_in_one_scope() {
        for s in [
            Scope::Global,
            Scope::Picker,
            Scope::Instances,
            Scope::Descriptor,
            Scope::Snapshots,
            Scope::Replay,
            Scope::Tune,
            Scope::Profile,
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
