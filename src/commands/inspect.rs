use std::path::Path;

use crate::error::Result;
use rr_format::inspect::Inspection;

pub fn run(descriptor: &Path, json: bool) -> Result<i32> {
    let inspection = Inspection::of(descriptor)?;
    if json {
        super::print_json(&inspection);
    } else {
        for line in inspection.lines() {
            println!("{line}");
        }
    }
    Ok(0)
}
