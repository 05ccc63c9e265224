//! What `tune` reads from users: axis specifications and `--resume` reports.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rr_tune::space;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = space::parse_dims(text);
        let _ = space::parse_grid(text);
        let _ = space::parse_scalars(text, true);
    }
    if let Ok(r) = serde_json::from_slice::<rr_tune::TuneReport>(data) {
        let _ = r.to_csv();
        let mut r = r;
        r.summarise();
        let _ = r.ranking(5);
    }
});
