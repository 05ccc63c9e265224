//! The explorer's settings, read and checked without a terminal or the explorer's state: the
//! config file ([`config`]), the theme file ([`theme`]), the TOML reading both share
//! ([`tomlfile`]) and the tuning form's fields that the config's `[tune]` keys set ([`tune`]).
//! The explorer (`tui`) starts from them, and `rr-tui config` and `doctor` check the same files
//! with the same code, so neither command imports the explorer.

pub mod config;
pub mod theme;
pub mod tomlfile;
pub mod tune;
