//! Every style the explorer uses, in one place. The styles are data: the built-in themes are
//! `assets/themes/{dark,light,mono}.toml`, embedded in the binary and parsed at start-up (so the
//! files are the only place they are written, and nothing is read at run time). A user's theme
//! file replaces the styles it sets and keeps the chosen theme's others. `NO_COLOR` forces mono.
//! Differences are marked with background *and* bold/reverse so they survive any palette.

use std::path::Path;

use ratatui::style::{Color, Modifier, Style};

use super::tomlfile;
use crate::cli::Theme as ThemeName;
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
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

/// The built-in themes' files, embedded: the binary needs nothing beside it.
const DARK: &str = include_str!("../../assets/themes/dark.toml");
const LIGHT: &str = include_str!("../../assets/themes/light.toml");
const MONO: &str = include_str!("../../assets/themes/mono.toml");

/// The text of a built-in theme's file.
pub fn built_in_text(name: ThemeName) -> &'static str {
    match name {
        ThemeName::Dark => DARK,
        ThemeName::Light => LIGHT,
        ThemeName::Mono => MONO,
    }
}

/// Whether `NO_COLOR` asks for no colours (set and not empty, as no-color.org says).
pub fn no_color_requested() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

impl Theme {
    /// Every style with its key in a theme file, in the files' order: the one list of keys.
    fn slots(&mut self) -> [(&'static str, &mut Style); 21] {
        let [heat_fastest, heat_fast, heat_slow, heat_slowest] = &mut self.heat;
        [
            ("text", &mut self.text),
            ("dim", &mut self.dim),
            ("accent", &mut self.accent),
            ("header", &mut self.header),
            ("selected", &mut self.selected),
            ("tab_active", &mut self.tab_active),
            ("diff_a", &mut self.diff_a),
            ("diff_b", &mut self.diff_b),
            ("added", &mut self.added),
            ("removed", &mut self.removed),
            ("ok", &mut self.ok),
            ("warn", &mut self.warn),
            ("error", &mut self.error),
            ("chart", &mut self.chart),
            ("byte_zero", &mut self.byte_zero),
            ("byte_printable", &mut self.byte_printable),
            ("byte_other", &mut self.byte_other),
            ("heat_fastest", heat_fastest),
            ("heat_fast", heat_fast),
            ("heat_slow", heat_slow),
            ("heat_slowest", heat_slowest),
        ]
    }

    /// The keys a theme file may set.
    pub fn keys() -> Vec<&'static str> {
        Theme::default().slots().map(|(k, _)| k).to_vec()
    }

    /// A built-in theme; `NO_COLOR` (set, not empty) forces mono.
    pub fn new(name: ThemeName) -> Theme {
        Theme::choose(name, None, no_color_requested())
    }

    /// A built-in theme as its file says. The files are tested to parse and to set every style,
    /// so this cannot fail in a built binary.
    pub fn built_in(name: ThemeName) -> Theme {
        let styles = ThemeFile::parse(built_in_text(name))
            .unwrap_or_else(|e| panic!("the built-in {name:?} theme: {e}"));
        let mut theme = Theme::default();
        styles.apply(&mut theme);
        theme
    }

    /// The built-in theme `name` with `file`'s styles over it; mono, untouched, when `no_color`.
    pub fn choose(name: ThemeName, file: Option<&ThemeFile>, no_color: bool) -> Theme {
        if no_color {
            return Theme::built_in(ThemeName::Mono);
        }
        let mut theme = Theme::built_in(name);
        if let Some(f) = file {
            f.apply(&mut theme);
        }
        theme
    }

    /// The explorer's theme: built-in `name`, the user's theme file `path` over it. The file is
    /// read and checked even when `NO_COLOR` makes it unused, so a broken one is said at once.
    pub fn load(name: ThemeName, path: Option<&Path>) -> Result<Theme> {
        let file = path.map(ThemeFile::read).transpose()?;
        Ok(Theme::choose(name, file.as_ref(), no_color_requested()))
    }
}

/// The styles one theme file sets, by key.
#[derive(Debug, Clone, PartialEq)]
pub struct ThemeFile {
    styles: Vec<(&'static str, Style)>,
}

impl ThemeFile {
    /// Read and check a user's theme file; every problem is one line naming the file and the key.
    pub fn read(path: &Path) -> Result<ThemeFile> {
        let text = tomlfile::read_text(path, "theme file")?;
        ThemeFile::parse(&text).map_err(|e| tomlfile::file_error(path, e))
    }

    /// Parse a theme file's text: only known styles, each a table of `fg`, `bg`, `modifiers`.
    pub fn parse(text: &str) -> std::result::Result<ThemeFile, String> {
        let table = tomlfile::parse_table(text)?;
        let keys = Theme::keys();
        let mut styles = Vec::with_capacity(table.len());
        for (key, value) in &table {
            let Some(known) = keys.iter().find(|k| *k == key) else {
                return Err(tomlfile::unknown_key(key, &keys));
            };
            styles.push((*known, parse_style(known, value)?));
        }
        Ok(ThemeFile { styles })
    }

    /// The styles this file leaves unset (a built-in theme must set them all).
    pub fn missing(&self) -> Vec<&'static str> {
        Theme::keys()
            .into_iter()
            .filter(|k| !self.styles.iter().any(|(s, _)| s == k))
            .collect()
    }

    fn apply(&self, theme: &mut Theme) {
        for (key, style) in &self.styles {
            for (slot_key, slot) in theme.slots() {
                if slot_key == *key {
                    *slot = *style;
                }
            }
        }
    }
}

/// One style: `{ fg = "…", bg = "…", modifiers = ["bold", …] }`, every key optional.
fn parse_style(key: &str, value: &toml::Value) -> std::result::Result<Style, String> {
    let Some(table) = value.as_table() else {
        return Err(format!(
            "`{key}`: expected a table such as {{ fg = \"cyan\", modifiers = [\"bold\"] }}, not {}",
            value.type_str()
        ));
    };
    let mut style = Style::default();
    for (field, v) in table {
        let name = format!("{key}.{field}");
        match field.as_str() {
            "fg" => style.fg = Some(parse_color(&name, v)?),
            "bg" => style.bg = Some(parse_color(&name, v)?),
            "modifiers" => style = style.add_modifier(parse_modifiers(&name, v)?),
            _ => return Err(tomlfile::unknown_key(&name, &["fg", "bg", "modifiers"])),
        }
    }
    Ok(style)
}

/// The colour names a theme file may use (`#rrggbb` besides).
const COLORS: [(&str, Color); 17] = [
    ("reset", Color::Reset),
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("darkgray", Color::DarkGray),
    ("lightred", Color::LightRed),
    ("lightgreen", Color::LightGreen),
    ("lightyellow", Color::LightYellow),
    ("lightblue", Color::LightBlue),
    ("lightmagenta", Color::LightMagenta),
    ("lightcyan", Color::LightCyan),
    ("white", Color::White),
];

fn parse_color(key: &str, value: &toml::Value) -> std::result::Result<Color, String> {
    let text = value.as_str().unwrap_or_default();
    if let Some((_, c)) = COLORS.iter().find(|(n, _)| *n == text) {
        return Ok(*c);
    }
    let hex = text
        .strip_prefix('#')
        .filter(|h| h.len() == 6 && h.chars().all(|c| c.is_ascii_hexdigit()));
    if let Some(h) = hex {
        let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or(0);
        return Ok(Color::Rgb(byte(0), byte(2), byte(4)));
    }
    let names: Vec<&str> = COLORS.iter().map(|(n, _)| *n).collect();
    Err(format!(
        "`{key}`: {} is not a colour (expected {} or #rrggbb)",
        tomlfile::shown(value),
        names.join(", ")
    ))
}

/// The modifier names a theme file may use.
const MODIFIERS: [(&str, Modifier); 9] = [
    ("bold", Modifier::BOLD),
    ("dim", Modifier::DIM),
    ("italic", Modifier::ITALIC),
    ("underlined", Modifier::UNDERLINED),
    ("slow_blink", Modifier::SLOW_BLINK),
    ("rapid_blink", Modifier::RAPID_BLINK),
    ("reversed", Modifier::REVERSED),
    ("hidden", Modifier::HIDDEN),
    ("crossed_out", Modifier::CROSSED_OUT),
];

fn parse_modifiers(key: &str, value: &toml::Value) -> std::result::Result<Modifier, String> {
    let names: Vec<&str> = MODIFIERS.iter().map(|(n, _)| *n).collect();
    let bad = |v: &toml::Value| {
        format!(
            "`{key}`: {} is not a list of modifiers (each one of {})",
            tomlfile::shown(v),
            names.join(", ")
        )
    };
    let list = value.as_array().ok_or_else(|| bad(value))?;
    let mut all = Modifier::empty();
    for item in list {
        let found = MODIFIERS
            .iter()
            .find(|(n, _)| Some(*n) == item.as_str())
            .ok_or_else(|| bad(item))?;
        all |= found.1;
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ThemeName; 3] = [ThemeName::Dark, ThemeName::Light, ThemeName::Mono];

    #[test]
    fn each_built_in_theme_file_parses_and_sets_every_style() {
        for name in ALL {
            let file = ThemeFile::parse(built_in_text(name)).unwrap();
            assert_eq!(file.missing(), Vec::<&str>::new(), "{name:?}");
        }
        // The check has teeth: a file without one style is caught.
        let without_accent: String = DARK
            .lines()
            .filter(|l| !l.starts_with("accent ="))
            .map(|l| format!("{l}\n"))
            .collect();
        let file = ThemeFile::parse(&without_accent).unwrap();
        assert_eq!(file.missing(), ["accent"]);
    }

    #[test]
    fn the_built_in_themes_differ_where_they_should() {
        let (dark, light, mono) = (
            Theme::built_in(ThemeName::Dark),
            Theme::built_in(ThemeName::Light),
            Theme::built_in(ThemeName::Mono),
        );
        assert_eq!(
            dark.selected,
            Style::default()
                .bg(Color::Rgb(50, 60, 90))
                .add_modifier(Modifier::BOLD)
        );
        assert_eq!(light.byte_other.fg, Some(Color::Magenta));
        assert_eq!(
            mono.header,
            Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        );
        // Mono has no colour anywhere.
        let mut m = mono;
        for (key, style) in m.slots() {
            assert_eq!((style.fg, style.bg), (None, None), "{key}");
        }
    }

    #[test]
    fn no_color_wins_over_the_theme_and_the_users_file() {
        let red = ThemeFile::parse("text = { fg = \"red\" }").unwrap();
        let mono = Theme::built_in(ThemeName::Mono);
        for name in ALL {
            assert_eq!(Theme::choose(name, Some(&red), true), mono, "{name:?}");
        }
        // Without NO_COLOR the file applies, even over mono (asked for by name).
        let light = Theme::choose(ThemeName::Light, Some(&red), false);
        assert_eq!(light.text, Style::default().fg(Color::Red));
        assert_eq!(
            Theme::choose(ThemeName::Mono, Some(&red), false).text.fg,
            Some(Color::Red)
        );
    }

    #[test]
    fn a_users_file_keeps_the_chosen_themes_other_styles() {
        let file = ThemeFile::parse(
            "# mine\naccent = { fg = \"#ff8000\", modifiers = [\"underlined\", \"italic\"] }\n",
        )
        .unwrap();
        let mine = Theme::choose(ThemeName::Light, Some(&file), false);
        let light = Theme::built_in(ThemeName::Light);
        assert_eq!(
            mine.accent,
            Style::default()
                .fg(Color::Rgb(255, 128, 0))
                .add_modifier(Modifier::UNDERLINED | Modifier::ITALIC)
        );
        assert_eq!(
            Theme {
                accent: light.accent,
                ..mine
            },
            light
        );
    }

    #[test]
    fn bad_keys_and_values_are_named() {
        for (text, want) in [
            ("accnt = {}", "`accnt`: unknown key (expected one of: text, dim, accent"),
            ("accent = { colour = \"red\" }", "`accent.colour`: unknown key (expected one of: fg, bg, modifiers)"),
            ("accent = { fg = \"cyn\" }", "`accent.fg`: \"cyn\" is not a colour (expected reset, black,"),
            ("accent = { bg = \"#12345\" }", "`accent.bg`: \"#12345\" is not a colour"),
            ("accent = { fg = 3 }", "`accent.fg`: 3 is not a colour"),
            ("accent = { modifiers = [\"blod\"] }", "`accent.modifiers`: \"blod\" is not a list of modifiers (each one of bold, dim,"),
            ("accent = { modifiers = \"bold\" }", "`accent.modifiers`: \"bold\" is not a list of modifiers"),
            ("accent = \"red\"", "`accent`: expected a table such as { fg = \"cyan\", modifiers = [\"bold\"] }, not string"),
            ("accent = {", "line 1: "),
        ] {
            let e = ThemeFile::parse(text).unwrap_err();
            assert!(e.starts_with(want), "{text}: {e}");
            assert!(!e.contains('\n'), "{text}: {e}");
        }
    }
}
