//! `rr-tui completions SHELL` and `rr-tui man`: the shell completion scripts and the manual
//! pages, made by clap's own generators from the definitions the command line is parsed with, so
//! neither can fall behind a flag.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};
use crate::error::{Error, Result};
use crate::output;

/// The command line's definitions as the generators need them: built (every subcommand knows
/// its full name, `rr-tui tune merge`), without clap's `help` subcommand.
fn definitions() -> clap::Command {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    root
}

/// `command` without what it hides (the engine process, internal flags), which clap's completion
/// scripts would offer otherwise.
fn visible(command: &clap::Command) -> clap::Command {
    let mut copy = clap::Command::new(command.get_name().to_string())
        .args(
            command
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .cloned(),
        )
        .subcommands(
            command
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(visible),
        );
    if let Some(about) = command.get_about() {
        copy = copy.about(about.clone());
    }
    if let Some(version) = command.get_version() {
        copy = copy.version(version.to_string());
    }
    copy
}

/// The program's name, as completion scripts register it.
const BIN: &str = "rr-tui";
/// The name bash's script is generated for: clap_complete's bash generator spells a hyphenated
/// program's subcommands one way where it sets them (`rr__tui__subcmd__tune`) and another in the
/// labels it matches them with (`rr__subcmd__tui__subcmd__tune`), so nothing past the first word
/// completed (clap-rs/clap#6421). Without the hyphen both agree; only the `complete` lines then
/// need the real name.
const BASH_BIN: &str = "rrtui";

/// `rr-tui completions SHELL`: the script on standard output.
pub fn completions(shell: clap_complete::Shell) -> Result<i32> {
    let script = match shell {
        clap_complete::Shell::Bash => bash_script(),
        _ => script_for(shell, BIN),
    };
    output::own_text(&script);
    Ok(0)
}

fn script_for(shell: clap_complete::Shell, bin: &'static str) -> String {
    let mut root = visible(&Cli::command().name(bin)).disable_help_subcommand(true);
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut root, bin, &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// Bash's script, generated for [`BASH_BIN`] and registered for `rr-tui`.
fn bash_script() -> String {
    script_for(clap_complete::Shell::Bash, BASH_BIN)
        .lines()
        .map(|line| match line.trim_start().starts_with("complete -F ") {
            true => match line.strip_suffix(&format!(" {BASH_BIN}")) {
                Some(head) => format!("{head} {BIN}\n"),
                None => format!("{line}\n"),
            },
            false => format!("{line}\n"),
        })
        .collect()
}

/// Every page: rr-tui's, then each visible command's, depth first (`tune`, then `tune merge`),
/// with the words that name it.
fn pages(command: &clap::Command, words: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
    out.push((words.clone(), command.clone()));
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut path = words.clone();
        path.push(sub.get_name().to_string());
        pages(sub, path, out);
    }
}

fn render(command: clap::Command) -> Result<(String, Vec<u8>)> {
    // Every page names the version and commit (a subcommand has no version of its own).
    let page = clap_mangen::Man::new(command).source(format!("rr-tui {}", crate::cli::VERSION));
    let mut roff = Vec::new();
    page.render(&mut roff)
        .map_err(|e| Error::Failed(format!("cannot render a manual page: {e}")))?;
    Ok((page.get_filename(), with_exit_status(examples_headed(roff))))
}

/// The EXIT STATUS section every page has, from the one policy text ([`crate::EXIT_STATUS`]),
/// before the VERSION section (or at the end).
fn with_exit_status(roff: Vec<u8>) -> Vec<u8> {
    let text = crate::EXIT_STATUS.replace('\\', "\\e");
    // A line that starts with . or ' would be a request: the text is one line, starting "Exit".
    let section = format!(".SH \"EXIT STATUS\"\n{text}\n");
    let page = String::from_utf8_lossy(&roff).into_owned();
    match page.find("\n.SH VERSION") {
        Some(at) => format!("{}\n{section}{}", &page[..at], &page[at + 1..]).into_bytes(),
        None => format!("{page}{section}").into_bytes(),
    }
}

/// clap_mangen heads what follows a command's help "EXTRA"; ours is only ever its examples
/// (`after_long_help`), so the page calls them that, as manual pages do (and drops a bare
/// "Examples:" line that would only repeat the heading).
fn examples_headed(roff: Vec<u8>) -> Vec<u8> {
    let mut page = String::with_capacity(roff.len());
    let mut after_heading = false;
    for line in String::from_utf8_lossy(&roff).lines() {
        match (line, after_heading) {
            (".SH EXTRA", _) => page.push_str(".SH EXAMPLES\n"),
            ("Examples:", true) => {}
            (line, _) => {
                page.push_str(line);
                page.push('\n');
            }
        }
        after_heading = line == ".SH EXTRA";
    }
    page.into_bytes()
}

/// `rr-tui man [COMMAND…]` (one page on standard output) and `rr-tui man --dir DIR` (all).
pub fn run(args: &ManArgs) -> Result<i32> {
    let mut all = Vec::new();
    pages(&definitions(), Vec::new(), &mut all);
    match &args.dir {
        Some(dir) => write_all(dir, all),
        None => {
            let Some((_, command)) = all.into_iter().find(|(words, _)| *words == args.command)
            else {
                return Err(Error::invalid(format!(
                    "no manual page for `rr-tui {}`: `rr-tui --help` lists the commands",
                    args.command.join(" ")
                )));
            };
            let (_, roff) = render(command)?;
            output::own_text(&String::from_utf8_lossy(&roff));
            Ok(0)
        }
    }
}

/// Every page into `dir` (created if missing), each written whole under its name and never
/// through a link; the names written are printed, one a line.
fn write_all(dir: &Path, all: Vec<(Vec<String>, clap::Command)>) -> Result<i32> {
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::invalid(format!(
            "--dir {}: exists and is not a directory (the pages go into a directory, created \
             when missing)",
            rr_format::text::visible_path(dir)
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut written = Vec::new();
    for (_, command) in all {
        let (name, roff) = render(command)?;
        let path = dir.join(&name);
        rr_format::fsio::write_atomic(&path, &roff)?;
        written.push(path.display().to_string());
    }
    output::lines(written);
    Ok(0)
}
