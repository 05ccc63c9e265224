//! The generated programs: the templates beside this file (`repro.cpp`, `repro.py`: real
//! programs, readable and reviewable as such) with the record's tables in place of their
//! `@@RECORD@@` line. Only small things go into the source (addresses, geometry, parameter
//! bytes of at most 32 KiB, names); the recorded bytes stay in the data folder.

use std::fmt::Write;

use rr_engine::replay::timing::TIMING_PTX;

use super::model::Repro;

const CPP_TEMPLATE: &str = include_str!("repro.cpp");
const PY_TEMPLATE: &str = include_str!("repro.py");
/// The C++ and Python templates both hold this line where the tables go.
const MARK_CPP: &str = "// @@RECORD@@";
const MARK_PY: &str = "# @@RECORD@@";
/// And this one where replay's timing kernels go (`rr_engine::replay::timing::TIMING_PTX`).
const MARK_PTX_CPP: &str = "// @@TIMING_PTX@@";
const MARK_PTX_PY: &str = "# @@TIMING_PTX@@";

/// A C string literal of any bytes: printable ASCII as is, everything else as a 3-digit octal
/// escape (never hex: `\x41B` would swallow the `B`), so a hostile kernel name cannot end the
/// literal or the line.
pub fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' | b'\\' | b'?' => write!(out, "\\{:03o}", b).unwrap_or(()),
            0x20..=0x7e => out.push(b as char),
            _ => write!(out, "\\{:03o}", b).unwrap_or(()),
        }
    }
    out.push('"');
    out
}

/// A Python bytes literal of any bytes (`\xNN` takes exactly two digits in Python).
pub fn py_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &b in bytes {
        match b {
            b'"' | b'\\' => write!(out, "\\x{b:02x}").unwrap_or(()),
            0x20..=0x7e => out.push(b as char),
            _ => write!(out, "\\x{b:02x}").unwrap_or(()),
        }
    }
    out.push('"');
    out
}

/// C++ `repro.cpp`.
pub fn cpp(r: &Repro, repetitions: u32) -> String {
    let mut t = String::new();
    let w = &mut t;
    let line = |w: &mut String, s: String| {
        w.push_str(&s);
        w.push('\n');
    };
    line(
        w,
        format!("const char KERNEL_NAME[] = {};", c_string(&r.kernel)),
    );
    line(
        w,
        format!("const char IMAGE_FILE[] = {};", c_string(&r.image_file)),
    );
    line(
        w,
        format!(
            "const unsigned GRID[3] = {{{}, {}, {}}};",
            r.grid[0], r.grid[1], r.grid[2]
        ),
    );
    line(
        w,
        format!(
            "const unsigned BLOCK[3] = {{{}, {}, {}}};",
            r.block[0], r.block[1], r.block[2]
        ),
    );
    line(w, format!("const unsigned SHARED_MEM = {};", r.shared_mem));
    line(w, format!("const int RECORDED_DEVICE = {};", r.device));
    line(w, format!("const bool COOPERATIVE = {};", r.cooperative));
    line(
        w,
        format!("const unsigned DEFAULT_REPETITIONS = {repetitions};"),
    );
    // Element size 0: byte for byte. Tolerances as replay's --tolerance.
    let tol = r.tolerance;
    line(
        w,
        format!("const unsigned TOL_BYTES = {};", tol.map_or(0, |t| t.bytes)),
    );
    line(
        w,
        format!("const double TOL_ATOL = {:e};", tol.map_or(0.0, |t| t.atol)),
    );
    line(
        w,
        format!("const double TOL_RTOL = {:e};", tol.map_or(0.0, |t| t.rtol)),
    );
    line(
        w,
        format!(
            "const unsigned long long TOL_ULP = {}ull;",
            tol.map_or(0, |t| t.ulp)
        ),
    );
    // Arrays end with a placeholder entry: C++ has no empty arrays; the counts say what is real.
    let bytes: Vec<String> = r.params.iter().map(|b| format!("{b:#04x}")).collect();
    line(w, format!("const size_t PARAM_BYTES = {};", r.params.len()));
    line(
        w,
        format!(
            "const unsigned char PARAMS[] = {{{}0}};",
            joined(&bytes, ", ")
        ),
    );
    let slots: Vec<String> = r
        .slots
        .iter()
        .map(|(o, s)| format!("{{{o}, {s}}}"))
        .collect();
    table(w, "Slot", "SLOT", &slots, "{0, 0}");
    table(w, "Range", "RESERVE", &ranges(&r.reservations), "{0, 0}");
    table(w, "Range", "MAP", &ranges(&r.mappings), "{0, 0}");
    table(w, "Range", "HOST", &ranges(&r.host), "{0, 0}");
    let copies: Vec<String> = r
        .copies
        .iter()
        .map(|c| {
            format!(
                "{{{:#x}ull, {}ull, {}, {}, {}ull, {}, {}ull}}",
                c.addr,
                c.size,
                c.host,
                c_string(&c.input.file),
                c.input.offset,
                c_string(&c.output.file),
                c.output.offset
            )
        })
        .collect();
    table(
        w,
        "Copy",
        "COPY",
        &copies,
        "{0, 0, false, \"\", 0, \"\", 0}",
    );
    let globals: Vec<String> = r
        .globals
        .iter()
        .map(|(n, s, o)| format!("{{{}, {s}ull, {o}ull}}", c_string(n)))
        .collect();
    table(w, "GlobalVar", "GLOBAL", &globals, "{\"\", 0, 0}");
    let ptx = format!("const char TIMING_PTX[] = R\"ptx({TIMING_PTX})ptx\";");
    CPP_TEMPLATE
        .replacen(MARK_CPP, t.trim_end(), 1)
        .replacen(MARK_PTX_CPP, &ptx, 1)
}

/// `const Type NAME[] = {…, placeholder};` and its count `N_NAME`.
fn table(w: &mut String, ty: &str, name: &str, rows: &[String], placeholder: &str) {
    let _ = writeln!(w, "const size_t N_{name} = {};", rows.len());
    let _ = writeln!(w, "const {ty} {name}[] = {{");
    for row in rows {
        let _ = writeln!(w, "    {row},");
    }
    let _ = writeln!(w, "    {placeholder}}};");
}

fn ranges(v: &[(u64, u64)]) -> Vec<String> {
    v.iter()
        .map(|(a, s)| format!("{{{a:#x}ull, {s:#x}ull}}"))
        .collect()
}

/// `a, b, ` (each followed by the separator), or nothing.
fn joined(items: &[String], sep: &str) -> String {
    items.iter().map(|i| format!("{i}{sep}")).collect()
}

/// Python `repro.py`.
pub fn python(r: &Repro, repetitions: u32) -> String {
    let mut t = String::new();
    let w = &mut t;
    let _ = writeln!(w, "KERNEL_NAME = {}", py_bytes(r.kernel.as_bytes()));
    let _ = writeln!(
        w,
        "IMAGE_FILE = {}.decode()",
        py_bytes(r.image_file.as_bytes())
    );
    let _ = writeln!(w, "GRID = ({}, {}, {})", r.grid[0], r.grid[1], r.grid[2]);
    let _ = writeln!(
        w,
        "BLOCK = ({}, {}, {})",
        r.block[0], r.block[1], r.block[2]
    );
    let _ = writeln!(w, "SHARED_MEM = {}", r.shared_mem);
    let _ = writeln!(w, "RECORDED_DEVICE = {}", r.device);
    let _ = writeln!(
        w,
        "COOPERATIVE = {}",
        if r.cooperative { "True" } else { "False" }
    );
    let _ = writeln!(w, "DEFAULT_REPETITIONS = {repetitions}");
    let tol = r.tolerance;
    let _ = writeln!(w, "TOL_BYTES = {}", tol.map_or(0, |t| t.bytes));
    let _ = writeln!(w, "TOL_ATOL = {:e}", tol.map_or(0.0, |t| t.atol));
    let _ = writeln!(w, "TOL_RTOL = {:e}", tol.map_or(0.0, |t| t.rtol));
    let _ = writeln!(w, "TOL_ULP = {}", tol.map_or(0, |t| t.ulp));
    let _ = writeln!(w, "PARAMS = bytes.fromhex(\"{}\")", hex(&r.params));
    let slots: Vec<String> = r.slots.iter().map(|(o, s)| format!("({o}, {s})")).collect();
    py_list(w, "SLOT", &slots);
    let pairs = |v: &[(u64, u64)]| -> Vec<String> {
        v.iter().map(|(a, s)| format!("({a:#x}, {s:#x})")).collect()
    };
    py_list(w, "RESERVE", &pairs(&r.reservations));
    py_list(w, "MAP", &pairs(&r.mappings));
    py_list(w, "HOST", &pairs(&r.host));
    // (addr, size, host, input file, input offset, output file, output offset)
    let copies: Vec<String> = r
        .copies
        .iter()
        .map(|c| {
            format!(
                "({:#x}, {}, {}, {}.decode(), {}, {}.decode(), {})",
                c.addr,
                c.size,
                if c.host { "True" } else { "False" },
                py_bytes(c.input.file.as_bytes()),
                c.input.offset,
                py_bytes(c.output.file.as_bytes()),
                c.output.offset
            )
        })
        .collect();
    py_list(w, "COPY", &copies);
    let globals: Vec<String> = r
        .globals
        .iter()
        .map(|(n, s, o)| format!("({}, {s}, {o})", py_bytes(n.as_bytes())))
        .collect();
    py_list(w, "GLOBAL", &globals);
    // A NUL ends the image cuModuleLoadData reads.
    let ptx = format!(
        "TIMING_PTX = {}",
        py_bytes(format!("{TIMING_PTX}\0").as_bytes())
    );
    PY_TEMPLATE
        .replacen(MARK_PY, t.trim_end(), 1)
        .replacen(MARK_PTX_PY, &ptx, 1)
}

fn py_list(w: &mut String, name: &str, rows: &[String]) {
    let _ = writeln!(w, "{name} = [");
    for row in rows {
        let _ = writeln!(w, "    {row},");
    }
    let _ = writeln!(w, "]");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_stay_inside_their_literals() {
        assert_eq!(c_string("k\"; system(\"x"), "\"k\\042; system(\\042x\"");
        assert_eq!(c_string("a\nb\\"), "\"a\\012b\\134\"");
        // `??/` is a trigraph in old C++: `?` is escaped too.
        assert_eq!(c_string("??/"), "\"\\077\\077/\"");
        assert_eq!(py_bytes(b"a\"\n\\\xff"), "b\"a\\x22\\x0a\\x5c\\xff\"");
    }
}
