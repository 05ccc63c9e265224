//! README.txt and the Makefile: what the reproducer is, where it came from (rr-tui's version
//! and commit, the exact command), and how to build, run and change it.

use std::fmt::Write;

use super::data::{DATA_DIR, PACK_FILE};
use super::model::Repro;
// Every string of the record (kernel name, notes, paths) reaches README.txt through this: no
// control character of a record can forge a line or reach a terminal that shows the file.
use rr_format::text::visible;

/// The one build line (also the Makefile's rule). The driver is linked through the stubs
/// library so the program builds on a machine without a GPU; it runs against the real one.
pub const BUILD_LINE: &str = "g++ -O2 -std=c++17 repro.cpp -I$(CUDA_HOME)/include -L$(CUDA_HOME)/lib64/stubs -lcuda -o repro";

pub fn makefile() -> String {
    format!(
        "# Build the reproducer (README.txt). CUDA_HOME: the CUDA toolkit (only cuda.h and the\n\
         # libcuda stub are used).\n\
         CUDA_HOME ?= /usr/local/cuda\n\n\
         repro: repro.cpp\n\t{BUILD_LINE}\n\n\
         clean:\n\trm -f repro\n"
    )
}

/// What README.txt says besides the facts of the record.
pub struct Context<'a> {
    pub version: &'a str,
    pub command: &'a str,
    pub descriptor: &'a str,
    pub python: bool,
    pub packed: bool,
    pub repetitions: u32,
}

pub fn readme(r: &Repro, c: &Context) -> String {
    let mut t = String::new();
    let w = &mut t;
    let _ = writeln!(
        w,
        "Reproducer of one recorded launch of kernel {}",
        visible(&r.kernel)
    );
    let _ = writeln!(w, "{}\n", "=".repeat(40));
    let _ = writeln!(
        w,
        "Written by rr-tui {} with:\n  {}\n",
        c.version,
        visible(c.command)
    );
    let _ = writeln!(
        w,
        "Recorded instance: {} ({} record)",
        c.descriptor, r.format
    );
    let _ = writeln!(
        w,
        "Recorded on: the record does not name the GPU; its device image is a {} (device {} when recorded)",
        visible(&r.image_kind),
        r.device
    );
    let [gx, gy, gz] = r.grid;
    let [bx, by, bz] = r.block;
    let _ = writeln!(
        w,
        "Launch: grid {gx}x{gy}x{gz}, block {bx}x{by}x{bz}, {} bytes of dynamic shared memory, {} parameter bytes in {} parameters{}",
        r.shared_mem,
        r.params.len(),
        r.slots.len(),
        if r.cooperative { ", cooperative" } else { "" }
    );
    let device_bytes: u64 = r.copies.iter().filter(|c| !c.host).map(|c| c.size).sum();
    let _ = writeln!(
        w,
        "Memory: {} segment(s), {} bytes, restored at their recorded addresses; {} module global(s)",
        r.copies.len(),
        device_bytes + r.copies.iter().filter(|c| c.host).map(|c| c.size).sum::<u64>(),
        r.globals.len()
    );
    let _ = match r.tolerance {
        Some(t) => writeln!(
            w,
            "Verification: {} elements from each segment's start within atol={}, rtol={}, ulp={} \
             (rr-tui replay --tolerance's rules), the rest byte for byte",
            t.spec, t.atol, t.rtol, t.ulp
        ),
        None => writeln!(w, "Verification: byte for byte"),
    };
    for note in &r.notes {
        let _ = writeln!(w, "Note: {}", visible(note));
    }
    let _ = writeln!(w, "\n{}", steps(r, c));
    t
}

fn steps(r: &Repro, c: &Context) -> String {
    let unpack = if c.packed {
        format!("First unpack the data: tar xf {PACK_FILE}   (it makes {DATA_DIR}/)\n\n")
    } else {
        String::new()
    };
    let (build, run) = if c.python {
        (
            "Needs NVIDIA's cuda-python bindings: pip install cuda-python".to_string(),
            "python3 repro.py",
        )
    } else {
        (
            format!(
                "Build (needs only cuda.h and the CUDA driver; `make` does the same):\n  {}",
                BUILD_LINE.replace("$(CUDA_HOME)", "$CUDA_HOME")
            ),
            "./repro",
        )
    };
    format!(
        "{unpack}{build}\n\n\
         Run:\n  {run} [--repetitions N] [--device N] [--data DIR] [--image FILE]\n\n\
         It reserves the recorded virtual addresses (cuMemAddressReserve at the recorded address,\n\
         cuMemCreate/cuMemMap/cuMemSetAccess), loads {DATA_DIR}/{image} with cuModuleLoadData, sets\n\
         the module globals, restores the recorded input, launches with the recorded geometry and\n\
         parameter bytes, and compares every recorded byte with the recorded output. It prints\n\
         `verified` or `FAILED`, then the minimum and median kernel time (CUDA events) over N\n\
         repetitions (default {reps}), each from the restored input. Exit status: 0 verified,\n\
         1 the result differs, 2 trouble (bad arguments, {no_bindings}no driver, an address in use,\n\
         a file missing): one line on stderr, no verdict.\n\n\
         Another image: {run} --image other.cubin (a cubin, fatbin or PTX that defines the same\n\
         kernel with the same parameters and globals).\n\
         Another source: compile it to a cubin for this GPU, then pass that:\n  \
         nvcc -cubin -arch=native -o other.cubin kernel.cu && {run} --image other.cubin\n\
         (declare the kernel extern \"C\", or keep its mangled name: the program looks up\n  \
         {kernel})\n\n\
         The data ({DATA_DIR}/): the image, globals.bin (the globals' recorded values), and the\n\
         recorded input and output bytes (input.bin/output.bin, or one file per segment named by\n\
         the XXH3-128 of its contents). The program reads them at run time. {whence}\n",
        no_bindings = if c.python { "no cuda-python, " } else { "" },
        whence = match c.packed {
            true => format!(
                "They were written\n\
                 into {PACK_FILE} by rr-tui repro --pack: what tar unpacks are copies of the\n\
                 record's files, free to change."
            ),
            false => "Recorded files are\n\
                 hard links to the record's own files when written on its file system: copy one before\n\
                 changing it."
                .to_string(),
        },
        image = r.image_file,
        reps = c.repetitions,
        kernel = rr_format::text::visible(&r.kernel),
    )
}
