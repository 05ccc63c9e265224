//! `rr-tui diff`'s flags and its long help, and the tolerance flags every comparing command
//! shares (`CompareArgs`).

use clap::Args;
use std::path::PathBuf;

use super::{
    any_element_type, deprecated, element_type_names, flags, parse_max, parse_tolerance, Listed,
};

pub(super) const DIFF_ABOUT: &str = "\
Compare memory snapshots at equal offsets (a snapshot's layout is fixed: nothing is inserted or \
deleted), byte for byte, or as typed values with tolerances.

  diff A B            two snapshot files
  diff X.json         one instance: input → output, output → .replay_output
  diff X.json Y.json  two instances: descriptors, globals, descriptor text, then snapshots

Legacy LLVM 16–22 records: .memory against .original.output (and the old tool's .replay.output).

One instance's snapshots are compared per kernel argument (and the segment bytes around the \
arguments): recorded input against recorded output, and recorded output against .replay_output \
when a replay saved one. Two instances are compared field by field (geometry, limits, each \
argument and where it points, segments, launch attributes, globals by name), then as a line \
diff of their decoded descriptors (the text `inspect` prints, without the file paths; unified, \
3 lines of context, the changed words of changed lines in reverse video when stdout is a \
terminal and NO_COLOR is unset; in --json, `descriptor_text`: hunks of numbered `equal`, \
`delete` and `insert` lines), then input with input and output with output, labelled by X's \
arguments. The line diff is for reading: the fields decide the verdict. It compares at most \
20 000 lines of 1 KiB a side, and stops refining after a quarter of a second for the lines and \
another for the words (the blocks it shows are then coarser).

Counting. Each differing byte counts once (nearby differences are merged into ranges for \
listing only). Bytes present in one file only are missing, never equal. With --tolerance, an element \
passes when its bits are equal, or |a-b| <= atol + rtol*|b|, or (floats) its ULP distance <= ulp. \
Elements whose bits differ but pass are counted as within tolerance, and so are +0 against -0 and \
two NaNs with different payloads; NaN never matches a number, an infinity only itself. Largest \
distances are over finite elements; NaN and infinity mismatches are counted apart. Bytes after \
the last whole element are compared byte for byte.

Exit status, as cmp: 0 when everything compared is equal (within tolerance), 1 when something \
differs beyond tolerance or is missing, 2 on trouble (unreadable files, bad flags). For X.json \
that includes input → output, which differ whenever the kernel writes memory: the last line \
names the pairs that differ, and --json gives each pair's `equal`.";

#[derive(Debug, Args, Clone)]
pub struct DiffArgs {
    /// First snapshot, or a descriptor (.json).
    pub a: PathBuf,
    /// Second snapshot, or a second descriptor (omit to compare one instance's snapshots).
    pub b: Option<PathBuf>,
    #[command(flatten)]
    pub compare: CompareArgs,
    /// How many differing ranges / mismatching elements to list.
    #[arg(long, default_value_t = 10, value_parser = parse_max, allow_negative_numbers = true)]
    pub max: usize,
    /// Machine-readable output (JSON).
    #[arg(long)]
    pub json: bool,
    /// Write the differing ranges of two snapshot files to this new CSV file.
    ///
    /// One row per range: offset, length. Only a comparison of two snapshot files has them,
    /// not one of descriptors. An existing file (or link) there is refused.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct CompareArgs {
    // One text for the flag in every command that takes it (`flags`).
    #[arg(long, value_name = "SPEC", value_parser = parse_tolerance, help = flags::TOLERANCE, long_help = flags::TOLERANCE_LONG_DIFF)]
    pub tolerance: Option<rr_engine::diff::Comparison>,
    // The old spellings of --tolerance's parts, taken for a release with a note (one spelling
    // of a tolerance in every command: issue 36, point 12). Each names its conflict with
    // --tolerance itself: the completion scripts drop hidden flags, and a visible flag's
    // reference to one would then name a flag that is not there.
    #[arg(long = "type", value_name = "TYPE", hide = true, conflicts_with = "tolerance", value_parser = deprecated::OldSpelling::new("--type", "--tolerance TYPE", Listed::new(any_element_type, element_type_names)))]
    pub dtype: Option<String>,
    #[arg(long, hide = true, conflicts_with = "tolerance", value_parser = deprecated::OldSpelling::new("--endian", "--tolerance TYPE:endian=little|big", clap::builder::PossibleValuesParser::new(["little", "big"])))]
    pub endian: Option<String>,
    // Negative numbers reach our check, which says what is allowed (clap would only say
    // "use '-- -1'").
    #[arg(long, value_name = "X", hide = true, conflicts_with = "tolerance", allow_negative_numbers = true, value_parser = deprecated::OldSpelling::new("--atol", "--tolerance TYPE:atol=X", <f64 as std::str::FromStr>::from_str))]
    pub atol: Option<f64>,
    #[arg(long, value_name = "X", hide = true, conflicts_with = "tolerance", allow_negative_numbers = true, value_parser = deprecated::OldSpelling::new("--rtol", "--tolerance TYPE:rtol=X", <f64 as std::str::FromStr>::from_str))]
    pub rtol: Option<f64>,
    #[arg(long, value_name = "N", hide = true, conflicts_with = "tolerance", value_parser = deprecated::OldSpelling::new("--ulp", "--tolerance TYPE:ulp=N", <u64 as std::str::FromStr>::from_str))]
    pub ulp: Option<u64>,
}
