//! One answer from `report`, `check` and `tune` (`--list` too) when the directory given holds no
//! record at all (no instance, its own or in `pid-N/`/`rank-N/`, and no report): exit status 2,
//! a usage error, as for any other argument that names the wrong thing. Not 0: a script that
//! reads 0 as "here is the report" would go on with nothing; not 1: that means "the record has
//! problems", and there is no record. The record directories below it are listed (the bundled
//! `record-fixtures/`, a `~/records/` of runs) so the user can pass one; with none, the message
//! names every layout rr-tui reads. Text goes to stderr (stdout stays empty, so `report DIR >
//! file` writes no empty report); `--json` puts the same on stdout as one document.

use std::path::Path;

use rr_format::search::{self, RecordDirsBelow};
use rr_format::text::visible_path;

use crate::output;

/// The exit status of a command given a directory that holds no record.
pub const EXIT_NOT_A_RECORD_DIR: i32 = 2;

/// Say that `dir` is no record directory, with what is below it; returns the exit status.
/// `command`: the subcommand as typed, for the example line (`report`, `check`, `tune --list`).
pub fn refuse(dir: &Path, command: &str, json: bool) -> i32 {
    let below = search::record_dirs_below(dir);
    if json {
        // The `error` object every command's --json error is (event, kind, message), with
        // what is below; `error` stays, as the first readers of this answer read it.
        #[derive(serde::Serialize)]
        struct Out<'a> {
            event: &'static str,
            kind: rr_engine::replay::protocol::ErrorKind,
            message: String,
            directory: String,
            error: &'static str,
            record_directories: &'a RecordDirsBelow,
            accepted_layouts: &'static str,
        }
        super::print_json(&Out {
            event: "error",
            kind: rr_engine::replay::protocol::ErrorKind::Input,
            message: format!("{}: not a record directory", visible_path(dir)),
            directory: visible_path(dir),
            error: "not a record directory",
            record_directories: &below,
            accepted_layouts: search::ACCEPTED_LAYOUTS,
        });
    } else {
        for line in message(dir, command, &below) {
            output::error_line(&line);
        }
    }
    EXIT_NOT_A_RECORD_DIR
}

/// The lines said on stderr ([`output::ERROR_PREFIX`] first, as every error of the binary).
fn message(dir: &Path, command: &str, below: &RecordDirsBelow) -> Vec<String> {
    let shown = visible_path(dir);
    let Some(first) = below.found.first() else {
        // A search that stopped early (a bound, a directory it could not read) proves nothing.
        let found_none = match below.incomplete {
            false => format!(
                "none is below it (searched {} levels deep)",
                search::MAX_DEPTH
            ),
            true => format!(
                "none was found below it, but {}: pass a record directory itself",
                search::did_not_see_everything()
            ),
        };
        return vec![format!(
            "{}{shown}: not a record directory, and {found_none}; {}",
            output::ERROR_PREFIX,
            search::ACCEPTED_LAYOUTS
        )];
    };
    let mut lines = vec![format!(
        "{}{shown}: not a record directory; the record directories below it:",
        output::ERROR_PREFIX
    )];
    let width = below.found.iter().map(|f| f.name.chars().count()).max();
    for found in &below.found {
        lines.push(format!(
            "  {:width$}  {:>5} instance(s)  {}",
            found.name,
            found.instances,
            found.layout,
            width = width.unwrap_or(0)
        ));
    }
    if below.incomplete {
        lines.push(format!(
            "  … the search did not see everything (a directory could not be read, or it \
             reached its bound of {} directories or {} entries): there may be more",
            search::MAX_LISTED,
            search::MAX_ENTRIES_READ
        ));
    }
    // The user's own command line with the first of them for `dir` (every other flag kept:
    // `ab` without its candidates is no example), quoted as a shell needs it, so that it runs
    // when pasted (a path with a space); the bare command where that line is not at hand.
    let subcommand = command.split(' ').next().unwrap_or(command);
    let example =
        crate::cli::retyped::with_argument(subcommand, dir, &first.path).unwrap_or_else(|| {
            format!(
                "rr-tui {command} {}",
                shell_words::quote(&visible_path(&first.path))
            )
        });
    lines.push(format!("pass one of them, e.g. `{example}`"));
    lines
}

/// The error of a command that takes one instance's descriptor given a directory (the engine's,
/// which `replay`'s checks give too).
pub use rr_engine::replay::instance::directory_given;
