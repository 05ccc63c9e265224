//! Nsight Compute's raw page (`ncu --import R --csv --page raw --print-units base`): a header of
//! column names (identification columns, then one per metric), a row of units, then a row per
//! profiled kernel. Read into named values in base units (seconds, bytes, per second).

use std::collections::BTreeMap;

/// The longest raw page read (a `--set full` page of one kernel is ~100 KiB).
pub const MAX_RAW_BYTES: usize = 16 << 20;
/// Kernel rows read from a page (`profile` asks ncu for one).
const MAX_KERNELS: usize = 16;
/// The largest metric value taken, in base units.
const MAX_VALUE: f64 = 1e30;

/// One profiled kernel's metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawKernel {
    /// The kernel's name as ncu printed it.
    pub kernel: String,
    /// Numeric metrics in base units: times in seconds, sizes in bytes, rates per second,
    /// frequencies in hertz; percentages and counts as printed.
    pub metrics: BTreeMap<String, f64>,
}

/// The identification columns that precede the metrics.
const ID_COLUMNS: [&str; 11] = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

/// The factor from a unit as ncu prints it to the base unit (`None`: not a unit we scale,
/// the number is kept as printed).
fn scale(unit: &str) -> Option<f64> {
    // Nsight Compute 2025 prints times as ns/us/ms/s and rates as byte/s.
    match unit {
        "ns" => return Some(1e-9),
        "us" => return Some(1e-6),
        "ms" => return Some(1e-3),
        "s" => return Some(1.0),
        _ => {}
    }
    if let Some((num, den)) = unit.split_once('/') {
        return Some(scale(num).unwrap_or(1.0) / scale(den)?);
    }
    // Frequencies: `Mhz` is mega, whatever the case.
    if let Some(prefix) = unit.to_ascii_lowercase().strip_suffix("hz") {
        return match prefix {
            "" => Some(1.0),
            "k" => Some(1e3),
            "m" => Some(1e6),
            "g" => Some(1e9),
            _ => None,
        };
    }
    let base = ["second", "byte", "cycle", "inst"]
        .into_iter()
        .find(|b| unit.ends_with(b))?;
    match &unit[..unit.len() - base.len()] {
        "" => Some(1.0),
        "K" | "k" => Some(1e3),
        "M" => Some(1e6),
        "G" => Some(1e9),
        "T" => Some(1e12),
        "m" => Some(1e-3),
        "u" => Some(1e-6),
        "n" => Some(1e-9),
        _ => None,
    }
}

/// A printed number: `1,234.5`, `98.76`, `n/a` (none).
fn number(s: &str) -> Option<f64> {
    let t = s.trim().replace(',', "");
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parse a raw page. Lines ncu prints around the table (`==PROF==`, `==WARNING==`) are skipped.
pub fn parse(text: &str) -> Result<Vec<RawKernel>, String> {
    let table: String = text
        .lines()
        .filter(|l| !l.starts_with("==") && !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(table.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| format!("no CSV header: {e}"))?
        .iter()
        .map(str::to_string)
        .collect();
    let kernel_col = header
        .iter()
        .position(|h| h == "Kernel Name")
        .ok_or("the page has no \"Kernel Name\" column: not ncu's raw page")?;
    let mut rows = reader.records();
    let units = match rows.next() {
        Some(Ok(r)) => r,
        Some(Err(e)) => return Err(format!("the units row: {e}")),
        None => return Err("the page holds no units row".into()),
    };
    let mut kernels = Vec::new();
    for row in rows {
        let row = row.map_err(|e| format!("a kernel's row: {e}"))?;
        let mut k = RawKernel {
            kernel: row.get(kernel_col).unwrap_or_default().to_string(),
            ..Default::default()
        };
        for (i, name) in header.iter().enumerate() {
            if ID_COLUMNS.contains(&name.as_str()) {
                continue;
            }
            let Some(v) = row.get(i).and_then(number) else {
                continue;
            };
            let factor = scale(units.get(i).unwrap_or_default().trim()).unwrap_or(1.0);
            // No real metric comes near 1e30 in base units; beyond it (or overflowing when
            // scaled) a value would turn the summary's arithmetic into infinities.
            let v = v * factor;
            if v.is_finite() && v.abs() <= MAX_VALUE {
                k.metrics.insert(name.clone(), v);
            }
        }
        kernels.push(k);
        // One kernel is profiled; a page of thousands of rows (each holding every metric's
        // name) is not one of ours and must not cost memory.
        if kernels.len() == MAX_KERNELS {
            break;
        }
    }
    Ok(kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values that overflow when scaled, or beyond any real metric, are left out; a page of
    /// many kernel rows is read to its first few.
    #[test]
    fn hostile_pages_cost_neither_infinities_nor_memory() {
        let mut page = String::from("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"x\"\n\"\",\"\",\"Tbyte/nsecond\",\"\"\n");
        for i in 0..1000 {
            page.push_str(&format!("\"{i}\",\"k\",\"1e300\",\"1e31\"\n"));
        }
        let kernels = parse(&page).unwrap();
        assert_eq!(kernels.len(), MAX_KERNELS);
        assert!(kernels[0].metrics.is_empty(), "{:?}", kernels[0].metrics);
    }

    #[test]
    fn units_become_base_units() {
        assert_eq!(scale("nsecond"), Some(1e-9));
        assert_eq!(scale("ns"), Some(1e-9));
        assert_eq!(scale("byte/s"), Some(1.0));
        assert_eq!(scale("inst/cycle"), Some(1.0));
        assert_eq!(scale("hz"), Some(1.0));
        assert_eq!(scale("usecond"), Some(1e-6));
        assert_eq!(scale("byte"), Some(1.0));
        assert_eq!(scale("Mbyte"), Some(1e6));
        assert_eq!(scale("byte/second"), Some(1.0));
        assert_eq!(scale("Gbyte/second"), Some(1e9));
        assert!((scale("cycle/nsecond").unwrap() - 1e9).abs() < 1.0);
        assert_eq!(scale("Ghz"), Some(1e9));
        assert_eq!(scale("%"), None);
        assert_eq!(number("1,590,003,672"), Some(1_590_003_672.0));
        assert_eq!(number("n/a"), None);
    }

    #[test]
    fn a_page_with_prof_lines_and_two_kernels() {
        let page = "==PROF== Connected to process 1\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"nsecond\",\"Mbyte\",\"%\"\n\
\"0\",\"7\",\"rr-tui\",\"h\",\"rr_saxpy\",\"1\",\"13\",\"(64, 1, 1)\",\"(16, 1, 1)\",\"0\",\"9.0\",\"4,192\",\"12.5\",\"0.11\"\n\
\"1\",\"7\",\"rr-tui\",\"h\",\"other\",\"1\",\"13\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"n/a\",\"1\",\"2\"\n";
        let k = parse(page).unwrap();
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].kernel, "rr_saxpy");
        assert!((k[0].metrics["gpu__time_duration.sum"] - 4.192e-6).abs() < 1e-12);
        assert_eq!(k[0].metrics["dram__bytes_read.sum"], 12.5e6);
        assert_eq!(
            k[0].metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
            0.11
        );
        assert!(!k[1].metrics.contains_key("gpu__time_duration.sum"));
    }

    /// The raw page of an FMA-chain kernel on an H100 (ncu 2025.3.1, `--set basic --section
    /// WarpStateStats --section SpeedOfLight_RooflineChart`, `--print-units base`).
    #[test]
    fn a_real_page_of_ncu_2025() {
        let page = include_str!("../../tests/data/ncu-raw-fma-chain-h100.csv");
        let k = parse(page).unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(
            k[0].kernel,
            "rr_fma_chain(float *, const float *, long, int)"
        );
        let m = &k[0].metrics;
        assert!((m["gpu__time_duration.sum"] - 581_280e-9).abs() < 1e-12);
        assert!((m["sm__cycles_elapsed.avg.per_second"] - 1.977_741_468_15e9).abs() < 1.0);
        assert_eq!(
            m["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"],
            16_896.0
        );
        assert_eq!(m["dram__bytes.sum.peak_sustained"], 1280.0);
        let p = super::super::Profile::from_raw(&k[0]);
        assert_eq!(p.theoretical_occupancy_pct, Some(100.0));
        assert!((p.sm_throughput_pct.unwrap() - 94.23).abs() < 1e-9);
        assert!((p.duration_ns.unwrap() - 581_280.0).abs() < 1e-6);
    }

    #[test]
    fn not_a_raw_page() {
        assert!(parse("").is_err());
        assert!(parse("a,b\n1,2\n").is_err());
        assert!(parse("\"Kernel Name\"\n").is_err());
    }
}
