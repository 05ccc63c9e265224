use std::path::Path;

use rr_format::inspect::Inspection;

use crate::error::Result;
use crate::output;

/// Print what can be read; exit 1 when the globals or the image needed could not be (the
/// descriptor itself unreadable is an error before anything is printed).
pub fn run(descriptor: &Path, json: bool) -> Result<i32> {
    if descriptor.is_dir() {
        return Err(super::not_a_record::directory_given(descriptor, "inspect"));
    }
    let inspection = Inspection::of(descriptor)?;
    if json {
        super::print_json(&inspection);
    } else {
        output::lines(inspection.lines());
    }
    let problems = inspection.problems();
    for p in &problems {
        output::error(&p.to_string());
    }
    Ok(if problems.is_empty() { 0 } else { 1 })
}
