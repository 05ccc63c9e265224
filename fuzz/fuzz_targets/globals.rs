//! `.globals` in both layouts (counted, and LLVM 18–22's count-less one).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = rr_format::globals::Globals::parse(data.to_vec(), Path::new("fuzz.globals"));
    let _ = rr_format::globals::Globals::parse_legacy(data.to_vec(), Path::new("fuzz.globals"));
});
