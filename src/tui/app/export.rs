//! Exports of session results (replays, sweeps): a CSV and a JSON file side by side, written
//! fresh, never over an existing file.

use std::path::Path;

use rr_format::fsio;

/// Exports of one instance and kind before the explorer gives up looking for a free name.
const MAX_EXPORTS: u32 = 999;

/// Write `csv` and `json` into `dir` as `<stem>.<kind>.csv` / `.json`, or `<stem>.<kind>-2.csv`,
/// … when either name is taken: an export never replaces a file (and `fsio::write_new` refuses
/// a name that appears meanwhile). Returns what was written.
pub fn write_pair(
    dir: &Path,
    stem: &str,
    kind: &str,
    csv: &[u8],
    json: &[u8],
) -> Result<String, rr_format::Error> {
    for n in 1..=MAX_EXPORTS {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let csv_path = dir.join(format!("{stem}.{kind}{suffix}.csv"));
        let json_path = dir.join(format!("{stem}.{kind}{suffix}.json"));
        if csv_path.symlink_metadata().is_ok() || json_path.symlink_metadata().is_ok() {
            continue;
        }
        fsio::write_new(&csv_path, csv)?;
        fsio::write_new(&json_path, json)?;
        return Ok(format!(
            "{} and {}",
            csv_path.display(),
            json_path.display()
        ));
    }
    Err(rr_format::Error::format(
        dir,
        format!("has {MAX_EXPORTS} {kind} exports of this instance already"),
    ))
}
