//! Device images: ELF cubins (section and symbol tables), fatbins, PTX, bitcode.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = rr_format::image::identify(data, Path::new("fuzz.image"));
});
