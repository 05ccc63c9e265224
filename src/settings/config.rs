//! The explorer's config file: `$XDG_CONFIG_HOME/rr-tui/config.toml` (else
//! `~/.config/rr-tui/config.toml`) when it exists, `--config PATH`, or none with `--no-config`.
//! `assets/config.toml` is the documented default (a test holds it equal to [`Config::default`]).
//!
//! Precedence: flags > the file > the built-in defaults. Every value goes through the parser of
//! the flag or form field it stands for (`parse_repetitions`, the tolerance parser, the tuning
//! form's fields, which use `tune`'s own), so the explorer never starts with what the commands
//! refuse. An unknown key is an error (a typo must not be silently ignored), and so is a file
//! that is not a regular file or is too large (`tomlfile`): one line, exit status 2.

use std::path::{Path, PathBuf};

use rr_engine::diff::Comparison;

use super::tomlfile::{self, flag_text, unknown_key};
use super::tune::{Field, TuneSettings};
use crate::cli::{ConfigArgs, Theme as ThemeName};
use crate::error::Result;

/// Repetitions a replay from the explorer runs unless `n` or the config file's
/// `replay.repetitions` says otherwise.
pub const DEFAULT_REPETITIONS: u32 = 20;

/// The documented default config, as `rr-tui config --default` prints it.
pub const DEFAULT_CONFIG: &str = include_str!("../../assets/config.toml");

/// The tuning form's fields a config file sets, by key, in the order the file lists them.
const TUNE_KEYS: [(&str, Field); 11] = [
    ("grid", Field::Grid),
    ("block", Field::Block),
    ("shared_mem", Field::SharedMem),
    ("registers", Field::Registers),
    ("limits", Field::Limits),
    ("verify", Field::Verify),
    ("strategy", Field::Strategy),
    ("budget", Field::Budget),
    ("time_limit", Field::TimeLimit),
    ("samples", Field::Samples),
    ("cache", Field::Cache),
];

const TOP_KEYS: [&str; 5] = ["theme", "theme_file", "mouse", "replay", "tune"];
const REPLAY_KEYS: [&str; 2] = ["repetitions", "tolerance"];

/// The explorer's settings: the built-in defaults, a config file over them, flags over both.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub theme: ThemeName,
    /// A user's theme file over the theme (absolute, or relative to the working directory).
    pub theme_file: Option<PathBuf>,
    /// Capture the mouse (clicks and the wheel); off, the terminal keeps its own text selection
    /// without Shift.
    pub mouse: bool,
    /// Repetitions per replay (`n` on the replay screen).
    pub repetitions: u32,
    /// `v` verifies as typed values (`T`); `None`: byte for byte.
    pub tolerance: Option<Comparison>,
    /// The tuning form as it opens.
    pub tune: TuneSettings,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            theme: ThemeName::Dark,
            theme_file: None,
            mouse: true,
            repetitions: DEFAULT_REPETITIONS,
            tolerance: None,
            tune: TuneSettings::default(),
        }
    }
}

/// Where the settings came from, for `rr-tui config`.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Read from this file.
    File(PathBuf),
    /// Looked for here and not found: the built-in defaults.
    Absent(PathBuf),
    /// Neither `XDG_CONFIG_HOME` nor `HOME` is an absolute path: nowhere to look.
    Nowhere,
    /// `--no-config`.
    Ignored,
}

/// Where the config file is looked for without `--config`.
pub fn default_path() -> Option<PathBuf> {
    Some(rr_format::cache::xdg_base("XDG_CONFIG_HOME", ".config")?.join("rr-tui/config.toml"))
}

/// The config file the flags name, or the default one when it exists, read and checked.
pub fn load(args: &ConfigArgs) -> Result<(Config, Source)> {
    if args.no_config {
        return Ok((Config::default(), Source::Ignored));
    }
    let path = match (&args.config, default_path()) {
        (Some(p), _) => p.clone(),
        (None, None) => return Ok((Config::default(), Source::Nowhere)),
        (None, Some(p)) => match std::fs::metadata(&p) {
            // Absent (or a dangling link): the defaults. Anything else is read, and refused
            // with its reason when it cannot be (a FIFO, a directory, no permission).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Config::default(), Source::Absent(p)))
            }
            _ => p,
        },
    };
    let config = Config::read(&path)?;
    Ok((config, Source::File(path)))
}

impl Config {
    /// Read and check a config file; every problem is one line naming the file and the key.
    pub fn read(path: &Path) -> Result<Config> {
        let text = tomlfile::read_text(path, "config file")?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Config::parse(&text, dir).map_err(|e| tomlfile::file_error(path, e))
    }

    /// Parse a config file's text over the defaults; a relative `theme_file` is taken from `dir`.
    pub fn parse(text: &str, dir: &Path) -> std::result::Result<Config, String> {
        let table = tomlfile::parse_table(text)?;
        let mut config = Config::default();
        for (key, value) in &table {
            match key.as_str() {
                "theme" => {
                    let name = flag_text(key, value)?;
                    config.theme = <ThemeName as clap::ValueEnum>::from_str(&name, false)
                        .map_err(|_| format!("`theme`: {name:?}: expected dark, light or mono"))?;
                }
                "theme_file" => {
                    let file = flag_text(key, value)?;
                    config.theme_file = (!file.is_empty()).then(|| dir.join(file));
                }
                // A switch with no flag of its own: TOML's true or false.
                "mouse" => {
                    config.mouse = value.as_bool().ok_or_else(|| {
                        format!("`mouse`: expected true or false, not {}", value.type_str())
                    })?
                }
                "replay" => config.set_replay(section(key, value)?)?,
                "tune" => config.set_tune(section(key, value)?)?,
                _ => return Err(unknown_key(key, &TOP_KEYS)),
            }
        }
        Ok(config)
    }

    fn set_replay(&mut self, table: &toml::Table) -> std::result::Result<(), String> {
        for (key, value) in table {
            let name = format!("replay.{key}");
            let text = flag_text(&name, value)?;
            let named = |e: String| format!("`{name}`: {e}");
            match key.as_str() {
                // `replay --repetitions`' and `--tolerance`'s own parsers.
                "repetitions" => {
                    self.repetitions = crate::cli::parse_repetitions(&text).map_err(named)?
                }
                "tolerance" => {
                    self.tolerance = match text.trim() {
                        "" => None,
                        spec => Some(crate::cli::parse_tolerance(spec).map_err(named)?),
                    }
                }
                _ => return Err(unknown_key(&name, &REPLAY_KEYS)),
            }
        }
        Ok(())
    }

    fn set_tune(&mut self, table: &toml::Table) -> std::result::Result<(), String> {
        for (key, value) in table {
            let name = format!("tune.{key}");
            let Some((_, field)) = TUNE_KEYS.iter().find(|(k, _)| k == key) else {
                let known: Vec<&str> = TUNE_KEYS.iter().map(|(k, _)| *k).collect();
                return Err(unknown_key(&name, &known));
            };
            let text = flag_text(&name, value)?;
            self.tune
                .set_text(*field, &text)
                .map_err(|e| format!("`{name}`: {e}"))?;
        }
        Ok(())
    }

    /// Flags over the file: `--theme`, `--theme-file`.
    pub fn with_flags(mut self, theme: Option<ThemeName>, theme_file: Option<PathBuf>) -> Config {
        self.theme = theme.unwrap_or(self.theme);
        self.theme_file = theme_file.or(self.theme_file);
        self
    }

    /// The settings as a config file that reads back to them (`rr-tui config`).
    pub fn to_toml(&self) -> String {
        // JSON's string escapes are TOML's basic-string escapes.
        let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let theme = <ThemeName as clap::ValueEnum>::to_possible_value(&self.theme)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        let mut out = format!("theme = {}\n", quoted(&theme));
        match &self.theme_file {
            Some(p) => out += &format!("theme_file = {}\n", quoted(&p.to_string_lossy())),
            None => out += "# theme_file: none\n",
        }
        out += &format!("mouse = {}\n", self.mouse);
        let tolerance = self.tolerance.map(|c| c.to_spec()).unwrap_or_default();
        out += &format!(
            "\n[replay]\nrepetitions = {}\ntolerance = {}\n\n[tune]\n",
            self.repetitions,
            quoted(&tolerance)
        );
        for (key, field) in TUNE_KEYS {
            out += &format!("{key} = {}\n", quoted(&self.tune.text(field)));
        }
        out
    }
}

/// A section's table, or why the key is not one.
fn section<'a>(key: &str, value: &'a toml::Value) -> std::result::Result<&'a toml::Table, String> {
    value.as_table().ok_or_else(|| {
        format!(
            "`{key}`: expected a table ([{key}]), not {}",
            value.type_str()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<Config, String> {
        Config::parse(text, Path::new("/etc"))
    }

    #[test]
    fn the_documented_default_is_the_built_in_default() {
        assert_eq!(parse(DEFAULT_CONFIG), Ok(Config::default()));
        // Every key is there (commented out where its default is "none").
        let mut keys: Vec<String> = TOP_KEYS.iter().map(|k| k.to_string()).collect();
        keys.extend(REPLAY_KEYS.iter().map(|k| k.to_string()));
        keys.extend(TUNE_KEYS.iter().map(|(k, _)| k.to_string()));
        for key in keys
            .iter()
            .filter(|k| !["replay", "tune"].contains(&k.as_str()))
        {
            let set = format!("\n{key} = ");
            let commented = format!("\n# {key} = ");
            assert!(
                DEFAULT_CONFIG.contains(&set) || DEFAULT_CONFIG.contains(&commented),
                "assets/config.toml does not show `{key}`"
            );
        }
        assert!(DEFAULT_CONFIG.contains("\n[replay]\n") && DEFAULT_CONFIG.contains("\n[tune]\n"));
    }

    #[test]
    fn what_config_prints_reads_back() {
        let mut c = parse(
            "theme = \"light\"\ntheme_file = \"t.toml\"\n[replay]\nrepetitions = 1_000\ntolerance = \"f32:rtol=1e-5\"\n\
             [tune]\ngrid = \"1..64\"\nblock = \"128x1..8*2\"\nstrategy = \"tpe\"\nbudget = 50\ncache = \"hot\"\n\
             limits = \"ignored\"\nverify = \"off\"\nsamples = 10\ntime_limit = 2.5\n",
        )
        .unwrap();
        assert_eq!(c.theme, ThemeName::Light);
        assert_eq!(c.theme_file, Some(PathBuf::from("/etc/t.toml")));
        assert!(
            c.mouse,
            "mouse capture is on unless the file says otherwise"
        );
        c.mouse = false;
        assert_eq!(c.repetitions, 1000);
        assert_eq!((c.tune.budget.as_str(), c.tune.cold), ("50", false));
        assert_eq!(parse(&c.to_toml()), Ok(c.clone()));
        c.theme_file = None;
        assert_eq!(parse(&c.to_toml()), Ok(c));
        assert_eq!(parse(&Config::default().to_toml()), Ok(Config::default()));
    }

    #[test]
    fn unknown_keys_are_named_with_their_section() {
        for (text, want) in [
            (
                "colour = \"dark\"",
                "`colour`: unknown key (expected one of: theme, theme_file, mouse, replay, tune)",
            ),
            (
                "[tune]\ngird = \"cover\"",
                "`tune.gird`: unknown key (expected one of: grid, block,",
            ),
            (
                "[replay]\nrepetition = 3",
                "`replay.repetition`: unknown key (expected one of: repetitions, tolerance)",
            ),
            (
                "replay = 3",
                "`replay`: expected a table ([replay]), not integer",
            ),
            (
                "theme = \"blue\"",
                "`theme`: \"blue\": expected dark, light or mono",
            ),
            (
                "theme = true",
                "`theme`: expected a string or a number, not boolean",
            ),
            (
                "mouse = \"off\"",
                "`mouse`: expected true or false, not string",
            ),
            (
                "[tune]\nobjective = \"time\"",
                "`tune.objective`: unknown key",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(want), "{text}: {e}");
        }
    }

    /// One rule, one place: a value is refused with the message the flag's parser gives.
    #[test]
    fn values_are_checked_by_the_flags_own_parsers() {
        let cases: [(&str, &str, String); 6] = [
            (
                "[replay]\nrepetitions = 0",
                "replay.repetitions",
                crate::cli::parse_repetitions("0").unwrap_err(),
            ),
            (
                "[replay]\nrepetitions = 10000001",
                "replay.repetitions",
                crate::cli::parse_repetitions("10000001").unwrap_err(),
            ),
            (
                "[replay]\ntolerance = \"f33\"",
                "replay.tolerance",
                crate::cli::parse_tolerance("f33").unwrap_err(),
            ),
            (
                "[tune]\ngrid = \"64..1\"",
                "tune.grid",
                Field::Grid.check("64..1").unwrap_err(),
            ),
            (
                "[tune]\nstrategy = \"greedy\"",
                "tune.strategy",
                crate::cli::parse_strategy("greedy").unwrap_err(),
            ),
            (
                "[tune]\nbudget = 0",
                "tune.budget",
                crate::cli::parse_budget("0").unwrap_err(),
            ),
        ];
        for (text, key, message) in cases {
            assert_eq!(parse(text), Err(format!("`{key}`: {message}")), "{text}");
        }
        assert!(parse("[tune]\ncache = \"warm\"")
            .unwrap_err()
            .contains("expected cold or hot"));
        assert!(parse("[tune]\nsamples = \"many\"").is_err());
    }

    #[test]
    fn flags_win_over_the_file_which_wins_over_the_defaults() {
        let file = parse("theme = \"light\"\ntheme_file = \"/a.toml\"").unwrap();
        assert_eq!(Config::default().theme, ThemeName::Dark);
        let from_file = file.clone().with_flags(None, None);
        assert_eq!(
            (from_file.theme, from_file.theme_file),
            (ThemeName::Light, Some(PathBuf::from("/a.toml")))
        );
        let flagged = file.with_flags(Some(ThemeName::Mono), Some(PathBuf::from("b.toml")));
        assert_eq!(
            (flagged.theme, flagged.theme_file),
            (ThemeName::Mono, Some(PathBuf::from("b.toml")))
        );
        let defaults = Config::default().with_flags(None, None);
        assert_eq!(
            (defaults.theme, defaults.theme_file),
            (ThemeName::Dark, None)
        );
    }
}
