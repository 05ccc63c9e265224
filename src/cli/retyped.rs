//! The command line the user typed, again, with one argument replaced: an error that suggests
//! another directory (`pass one of them, e.g. …`) suggests the user's own command with it, every
//! other flag kept, rather than a bare `rr-tui ab DIR` that drops `--kernels` and the
//! candidates. Which word is the argument is found as clap finds it (a flag's value is no
//! positional argument), from the definitions of the flags themselves.

use std::ffi::OsString;
use std::path::Path;

use clap::CommandFactory;
use rr_format::text::{visible, visible_path};

/// This process's command line (`rr-tui SUBCOMMAND …`) with the positional argument `was`
/// replaced by `now`, quoted for a shell (control characters shown escaped, as every path in
/// rr-tui's text); `None` when the line is not `subcommand`'s with `was` as a positional
/// argument (the explorer's `rr-tui job`, say).
pub fn with_argument(subcommand: &str, was: &Path, now: &Path) -> Option<String> {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    replaced(&args, subcommand, was, now)
}

fn replaced(args: &[OsString], subcommand: &str, was: &Path, now: &Path) -> Option<String> {
    let mut cli = super::Cli::command();
    // Built, so that the subcommands hold the global flags they inherit.
    cli.build();
    let at = *positionals(&cli, args).first()?;
    if args[at] != subcommand {
        return None;
    }
    let sub = cli.find_subcommand(subcommand)?;
    let rest = &args[at + 1..];
    let i = at
        + 1
        + positionals(sub, rest)
            .into_iter()
            .find(|&i| rest[i] == *was)?;
    let words = args.iter().enumerate().map(|(k, a)| match k == i {
        true => visible_path(now),
        false => visible(&a.to_string_lossy()).into_owned(),
    });
    Some(format!("rr-tui {}", shell_words::join(words)))
}

/// The indices of `args` that `cmd` takes as positional arguments: not a flag, not a flag's
/// value (`--kernels X`, `-D X`; `--kernels=X` and `-DX` are one word), everything after `--`.
fn positionals(cmd: &clap::Command, args: &[OsString]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut only_positionals = false;
    while i < args.len() {
        let word = args[i].to_string_lossy();
        if only_positionals || word == "-" || !word.starts_with('-') {
            out.push(i);
        } else if word == "--" {
            only_positionals = true;
        } else if let Some(long) = word.strip_prefix("--") {
            if !long.contains('=') && takes_next(cmd, Flag::Long(long)) {
                i += 1;
            }
        } else {
            let mut chars = word.chars().skip(1);
            if let (Some(short), None) = (chars.next(), chars.next()) {
                if takes_next(cmd, Flag::Short(short)) {
                    i += 1;
                }
            }
        }
        i += 1;
    }
    out
}

/// A flag as typed: `--name` or `-c`.
enum Flag<'a> {
    Long(&'a str),
    Short(char),
}

/// Whether `cmd`'s flag `flag` takes the next word as its value.
fn takes_next(cmd: &clap::Command, flag: Flag) -> bool {
    cmd.get_arguments()
        .find(|a| match flag {
            Flag::Long(name) => a
                .get_long_and_visible_aliases()
                .is_some_and(|n| n.contains(&name)),
            Flag::Short(c) => a
                .get_short_and_visible_aliases()
                .is_some_and(|n| n.contains(&c)),
        })
        .is_some_and(|a| {
            a.get_action().takes_values() && a.get_num_args().is_none_or(|n| n.min_values() > 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<OsString> {
        s.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_directory_is_replaced_and_every_other_flag_kept() {
        let args = words(&[
            "ab",
            "--kernels",
            "recs",
            "recs",
            "--candidate",
            "my file.cu",
            "-D",
            "ILP=4",
        ]);
        let now = Path::new("recs/llvm two");
        assert_eq!(
            replaced(&args, "ab", Path::new("recs"), now).unwrap(),
            "rr-tui ab --kernels recs 'recs/llvm two' --candidate 'my file.cu' -D 'ILP=4'"
        );
        // A flag's value equal to the directory is left alone; `--` ends the flags.
        let args = words(&["tune", "--list", "--kernels=x", "--", "recs"]);
        assert_eq!(
            replaced(&args, "tune", Path::new("recs"), Path::new("recs/a")).unwrap(),
            "rr-tui tune --list '--kernels=x' -- recs/a"
        );
        // Another command (the explorer's `job`), or no such argument: nothing to suggest.
        assert!(replaced(&words(&["job", "x"]), "ab", Path::new("x"), now).is_none());
        assert!(replaced(
            &words(&["ab", "--kernels", "recs"]),
            "ab",
            Path::new("recs"),
            now
        )
        .is_none());
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        let args = words(&["ab", "r", "--kernels", "a\u{1b}[2J"]);
        let s = replaced(&args, "ab", Path::new("r"), Path::new("r/x")).unwrap();
        assert!(!s.contains('\u{1b}'), "{s}");
        assert!(s.contains("\\x1b"), "{s}");
    }
}
