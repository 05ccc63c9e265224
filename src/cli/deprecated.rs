//! Old spellings of flags, accepted for a release with a note on stderr (issue 36, point 12:
//! one spelling for each concept). Notes go to stderr only, so `--json` output on stdout stays
//! JSON.

use std::collections::BTreeSet;
use std::sync::Mutex;

/// `rr-tui: note: OLD is deprecated; use NEW`, on stderr, once per old spelling in a process,
/// when the command line has parsed ([`say_notes`]): a line that does not parse (an old
/// spelling given with its new one) gets clap's error alone, not a note about a flag it then
/// refuses.
pub fn note_deprecated(old: &str, new: &str) {
    static NOTED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let first_time = NOTED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(old.to_string());
    if first_time {
        pending().push(format!("rr-tui: note: {old} is deprecated; use {new}"));
    }
}

/// The notes of the parse under way, said by [`say_notes`] once it has succeeded.
fn pending() -> std::sync::MutexGuard<'static, Vec<String>> {
    static PENDING: Mutex<Vec<String>> = Mutex::new(Vec::new());
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Say the deprecation notes of a command line that parsed (main calls it once the parse has
/// succeeded; a failed parse's notes are dropped with it).
pub fn say_notes() {
    for line in pending().drain(..) {
        crate::output::error_line(&line);
    }
}

/// The value parser of a flag's old spelling: parses as the new spelling does, and notes that
/// the old one is deprecated.
#[derive(Clone)]
pub(crate) struct OldSpelling<P> {
    old: &'static str,
    new: &'static str,
    parser: P,
}

impl<P> OldSpelling<P> {
    pub(crate) fn new(old: &'static str, new: &'static str, parser: P) -> Self {
        OldSpelling { old, new, parser }
    }
}

impl<P> clap::builder::TypedValueParser for OldSpelling<P>
where
    P: clap::builder::TypedValueParser,
{
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        note_deprecated(self.old, self.new);
        self.parser.parse_ref(cmd, arg, value)
    }
}

/// A launch dimension triple of a flag (`--grid`, `--block`): `XxYxZ` ([`super::parse_dim3`]);
/// the old `X,Y,Z` is taken with a note, since in `tune` a comma separates values of a list.
#[derive(Clone)]
pub(crate) struct Dim3Flag;

impl clap::builder::TypedValueParser for Dim3Flag {
    type Value = [u32; 3];

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<[u32; 3], clap::Error> {
        let parsed = super::parse_dim3.parse_ref(cmd, arg, value)?;
        if value.to_string_lossy().contains(',') {
            let flag = arg.and_then(|a| a.get_long()).unwrap_or("grid");
            note_deprecated(&format!("--{flag} X,Y,Z"), &format!("--{flag} XxYxZ"));
        }
        Ok(parsed)
    }
}
