//! `rr-tui repro X.json --out DIR`: a standalone reproducer of one recorded instance, a C++
//! program on the CUDA driver API (or, with `--python`, a script on NVIDIA's cuda-python) that
//! replays the launch at its recorded addresses, verifies it byte for byte and times it, for
//! someone who has a GPU and a compiler but not rr-tui.
//!
//! [`model`] takes the launch from the instance as replay loads it; [`render`] fills the
//! templates beside this file; [`data`] places the recorded bytes; [`readme`] says what it is.

mod data;
mod model;
mod readme;
mod render;

use std::path::Path;

use rr_engine::replay::ReplayInstance;
use rr_format::text::visible_path;

use crate::cli::ReproArgs;
use crate::error::{Error, Result};

pub fn run(args: &ReproArgs) -> Result<i32> {
    let inst = ReplayInstance::load(&args.descriptor, &args.supplied.supplied())
        .map_err(|e| naming(e, &args.descriptor))?;
    let repro = model::build(&inst, args.tolerance.as_ref())?;
    // Format 2: a blob that no longer holds what its name says would make a reproducer that
    // fails for a reason that is not the kernel's.
    inst.verify_blobs()?;
    let out = args.out.as_path();
    data::prepare_out(out, args.force)?;
    let placed = if args.pack {
        data::pack(out, &repro.data)?
    } else {
        data::place(out, &repro.data)?
    };
    let (program, source) = if args.python {
        ("repro.py", render::python(&repro, args.repetitions))
    } else {
        ("repro.cpp", render::cpp(&repro, args.repetitions))
    };
    data::write_file(out, program, source.as_bytes())?;
    if !args.python {
        data::write_file(out, "Makefile", readme::makefile().as_bytes())?;
    }
    // Lossy: an argument that is not UTF-8 must not stop the README (std::env::args panics).
    let command = shell_words::join(std::env::args_os().map(|a| a.to_string_lossy().into_owned()));
    let context = readme::Context {
        version: crate::cli::VERSION,
        command: &command,
        descriptor: &visible_path(&args.descriptor),
        python: args.python,
        packed: args.pack,
        repetitions: args.repetitions,
    };
    data::write_file(
        out,
        "README.txt",
        readme::readme(&repro, &context).as_bytes(),
    )?;
    summary(out, program, &repro, &placed, args.pack);
    Ok(0)
}

/// A refusal that does not say which file it is about (replay's, for a record it cannot
/// replay: an LLVM 19–22 one) said of the descriptor, so the one line names the file.
fn naming(e: Error, descriptor: &Path) -> Error {
    match e {
        Error::Record(rr_format::Error::Invalid(m)) => Error::format(descriptor, m),
        e => e,
    }
}

/// What was written, and the next step.
fn summary(out: &Path, program: &str, r: &model::Repro, p: &data::Placed, packed: bool) {
    let how = if packed {
        format!("{} in {}", r.data.len(), data::PACK_FILE)
    } else {
        format!(
            "{} in {}/: {} hard-linked, {} copied, {} written",
            r.data.len(),
            data::DATA_DIR,
            p.linked,
            p.copied,
            p.written
        )
    };
    crate::output::lines([
        format!(
            "wrote {}: {program}, README.txt; data files {how} ({})",
            visible_path(out),
            rr_format::text::human(p.bytes)
        ),
        format!(
            "kernel {}: {} segment(s), {} global(s); build and run as README.txt says",
            rr_format::text::visible(&r.kernel),
            r.copies.len(),
            r.globals.len()
        ),
    ]);
}
