//! Descriptors of every layout (LLVM, April 2026, rr-tui 1 and 2, legacy 16–22): parse never
//! panics, and whatever parses also maps its memory and writes back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = rr_format::Descriptor::parse(data, Path::new("fuzz.json")) {
        let _ = rr_format::memory::MemoryMap::new(&d, d.valloc_size.min(1 << 40));
        let _ = d.to_json();
    }
});
