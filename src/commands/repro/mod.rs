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
mod sparse;

use std::path::Path;

use rr_engine::replay::ReplayInstance;
use rr_format::text::visible_path;

use crate::cli::ReproArgs;
use crate::error::{Error, Result};

pub fn run(args: &ReproArgs) -> Result<i32> {
    // The answer inspect, replay and profile give a directory (a record directory: `report`
    // lists its instances), not the file reader's bare "is a directory".
    if args.descriptor.is_dir() {
        return Err(crate::commands::not_a_record::directory_given(
            &args.descriptor,
            "repro",
        ));
    }
    let inst = ReplayInstance::load(&args.descriptor, &args.supplied.supplied())
        .map_err(|e| naming(e, &args.descriptor))?;
    let image_given = args.supplied.supplied().image.is_some();
    let repro = model::build(&inst, args.tolerance.as_ref(), image_given)?;
    // Format 2: a blob that no longer holds what its name says would make a reproducer that
    // fails for a reason that is not the kernel's.
    inst.verify_blobs()?;
    let out = args.out.as_path();
    // Everything is made before anything is written, so that the space it needs is known.
    let (program, source) = if args.python {
        ("repro.py", render::python(&repro, args.repetitions))
    } else {
        ("repro.cpp", render::cpp(&repro, args.repetitions))
    };
    let makefile = (!args.python).then(readme::makefile);
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
    let readme = readme::readme(&repro, &context);
    let plan = data::plan(out, &repro.data, args.pack)?;
    let texts = [
        source.len(),
        readme.len(),
        makefile.as_ref().map_or(0, String::len),
    ];
    let needed = plan.needed
        + texts
            .iter()
            .map(|&n| (n as u64).div_ceil(sparse::GRAIN) * sparse::GRAIN)
            .sum::<u64>();
    let at = data::existing_ancestor(out);
    sparse::check_space(&at, needed, sparse::free_space(&at))?;
    data::prepare_out(out, args.force)?;
    let placed = write(
        out,
        plan,
        args.pack,
        program,
        &source,
        makefile.as_deref(),
        &readme,
    )
    .map_err(sparse::environment)?;
    let written = match makefile {
        Some(_) => format!("{program}, Makefile, README.txt"),
        None => format!("{program}, README.txt"),
    };
    summary(out, &written, &repro, &placed, args.pack);
    Ok(0)
}

/// Write the data and the generated files into the prepared `out`.
fn write(
    out: &Path,
    plan: data::Plan,
    pack: bool,
    program: &str,
    source: &str,
    makefile: Option<&str>,
    readme: &str,
) -> Result<data::Placed> {
    let placed = match pack {
        true => data::pack(out, plan)?,
        false => data::place(out, plan)?,
    };
    data::write_file(out, program, source.as_bytes())?;
    if let Some(m) = makefile {
        data::write_file(out, "Makefile", m.as_bytes())?;
    }
    data::write_file(out, "README.txt", readme.as_bytes())?;
    Ok(placed)
}

/// A refusal that does not say which file it is about (replay's, for a record it cannot
/// replay: an LLVM 19–22 one) said of the descriptor, so the one line names the file.
fn naming(e: Error, descriptor: &Path) -> Error {
    match e {
        Error::Record(rr_format::Error::Invalid(m)) => Error::format(descriptor, m),
        e => e,
    }
}

/// What was written (`written`: every generated file's name, the data's said here), and the
/// next step.
fn summary(out: &Path, written: &str, r: &model::Repro, p: &data::Placed, packed: bool) {
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
            "wrote {}{}: {written}; data files {how} ({}, {} of it stored)",
            visible_path(out),
            resolved(out),
            rr_format::text::human(p.bytes),
            rr_format::text::human(p.stored)
        ),
        format!(
            "kernel {}: {} segment(s), {} global(s); build and run as README.txt says",
            rr_format::text::visible(&r.kernel),
            r.copies.len(),
            r.globals.len()
        ),
    ]);
}

/// Where `out` really is when a link on its way leads elsewhere (`--out scratch/r` with
/// `scratch -> /data/scratch`): ` (resolves to /data/scratch/r)`, so that a folder written
/// through a linked parent is never a surprise; nothing when the path is the real one.
fn resolved(out: &Path) -> String {
    let (Ok(real), Ok(given)) = (std::fs::canonicalize(out), std::path::absolute(out)) else {
        return String::new();
    };
    match real == given {
        true => String::new(),
        false => format!(" (resolves to {})", visible_path(&real)),
    }
}
