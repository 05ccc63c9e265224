//! What `record` checks of the paths it is given before the program starts: the program (as
//! `execvp` will look for it) and the library to preload, so that each message names the
//! option and says what is wrong.

use rr_format::text::io_reason;
use std::path::Path;

use crate::error::{Error, Result};

/// Why `path` is no ELF shared library ld.so can preload (`Err`, the words after the path:
/// "is not a shared library (no ELF header)"), the one rule `record` (the library given or
/// found beside rr-tui) and `doctor` apply. A library is a 64-bit little-endian ELF file of
/// `e_type` ET_DYN without an interpreter (a position-independent executable is ET_DYN too,
/// with PT_INTERP). Only the header and the program headers are read, whatever the file's size.
pub(crate) fn shared_object_problem(path: &Path) -> std::result::Result<(), String> {
    use std::io::{Read, Seek, SeekFrom};
    let not_one = |why: &str| Err(format!("is not a shared library ({why})"));
    let mut f = rr_format::fsio::open_regular(path)
        .map_err(|e| format!("cannot be read: {}", e.problem()))?;
    let mut h = Vec::with_capacity(64);
    if let Err(e) = f.by_ref().take(64).read_to_end(&mut h) {
        return Err(format!("cannot be read: {}", io_reason(&e)));
    }
    const MAGIC: &[u8] = b"\x7fELF";
    if !MAGIC.starts_with(&h[..h.len().min(4)]) {
        return not_one("no ELF header");
    }
    if h.len() < 64 {
        return not_one("shorter than an ELF header");
    }
    if !h.starts_with(b"\x7fELF\x02\x01") {
        return not_one("not a 64-bit little-endian ELF file");
    }
    let u16_at = |o: usize| u16::from_le_bytes([h[o], h[o + 1]]);
    let (phoff, phentsize, phnum) = (
        u64::from_le_bytes(h[32..40].try_into().unwrap_or_default()),
        u16_at(54) as usize,
        u16_at(56).min(512) as usize,
    );
    if u16_at(16) != 3 {
        return not_one("an ELF file of another type");
    }
    let mut table = vec![0u8; phentsize * phnum];
    if phentsize < 4 || f.seek(SeekFrom::Start(phoff)).is_err() || f.read_exact(&mut table).is_err()
    {
        return not_one("its program headers cannot be read");
    }
    const PT_INTERP: u32 = 3;
    let interpreted = table
        .chunks(phentsize)
        .any(|e| u32::from_le_bytes([e[0], e[1], e[2], e[3]]) == PT_INTERP);
    match interpreted {
        true => not_one("an executable"),
        false => Ok(()),
    }
}

/// The program to run, as `execvp` will find it: a name without a slash is looked up in PATH.
pub(super) fn find_program(program: &std::ffi::OsStr) -> Result<()> {
    let shown = rr_format::text::visible(&program.to_string_lossy()).into_owned();
    if program.as_encoded_bytes().contains(&b'/') {
        use std::os::unix::fs::PermissionsExt;
        return match std::fs::metadata(program) {
            Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => Ok(()),
            Ok(m) if m.is_file() => Err(Error::invalid(format!(
                "{shown}: not executable (chmod +x, or run it through its interpreter)"
            ))),
            Ok(_) => Err(Error::invalid(format!(
                "{shown}: not a program (not a regular file)"
            ))),
            Err(e) => Err(Error::invalid(format!("{shown}: {}", io_reason(&e)))),
        };
    }
    // Everything from the first word record does not know is the program's (clap takes the
    // rest as it comes): a mistyped or another command's option lands here, not a program.
    if program.as_encoded_bytes().starts_with(b"-") {
        return Err(Error::invalid(format!(
            "{shown}: not an option of rr-tui record (rr-tui record -h lists them; one device \
             is --device N); the program comes after them, and one named so is given by its \
             path, ./{shown}"
        )));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|d| d.join(program).is_file());
    if found {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{shown}: no such program in PATH (give its path, e.g. ./{shown})"
        )))
    }
}
