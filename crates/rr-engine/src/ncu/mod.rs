//! What Nsight Compute says about one replayed kernel, reduced to what an engineer reads first:
//! duration, Speed of Light, occupancy and its limiter, DRAM traffic, cache hit rates, the top
//! warp stalls, and the kernel's place on a roofline. `rr-tui profile` runs ncu; this module
//! finds it, names the metrics it asks for and reads them back ([`raw`]). It depends on nothing
//! of replay's, so the replay event stream can carry a [`ProfileResult`] while the profile job
//! (`profile/job.rs`) builds on replay requests without a cycle between the two folders.

pub mod raw;

use serde::{Deserialize, Serialize};

pub use raw::RawKernel;

/// Nsight Compute's command-line tool, where this machine has one.
pub fn find_ncu() -> Option<std::path::PathBuf> {
    rr_cuda::library::find_cuda_tool("ncu")
}

/// A file named `ncu` where [`find_ncu`] looks that cannot be run (no execute permission), to
/// name when no ncu is found.
pub fn ncu_not_executable() -> Option<std::path::PathBuf> {
    rr_cuda::library::cuda_tool_not_executable("ncu")
}

/// Sections always collected besides the chosen set: warp stalls and the roofline's peaks.
pub const SECTIONS: [&str; 2] = ["WarpStateStats", "SpeedOfLight_RooflineChart"];

/// The metrics asked for on top of the sections, so the summary never depends on what a set
/// holds (names as Nsight Compute 2025 spells them for sm_70 and newer). No `regex:` here: a
/// pattern that matches many metrics multiplies ncu's passes, each of which saves and restores
/// the replay's memory.
pub const METRICS: [&str; 28] = [
    DURATION,
    SM_THROUGHPUT,
    MEMORY_THROUGHPUT,
    DRAM_THROUGHPUT,
    ACHIEVED_OCCUPANCY,
    THEORETICAL_OCCUPANCY,
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "launch__registers_per_thread",
    "launch__waves_per_multiprocessor",
    DRAM_READ,
    DRAM_WRITE,
    L1_HIT,
    L2_HIT,
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    PEAK_FFMA,
    PEAK_DFMA,
    SM_CLOCK,
    PEAK_DRAM,
    DRAM_CLOCK,
    "smsp__inst_executed.sum",
];

const DURATION: &str = "gpu__time_duration.sum";
const SM_THROUGHPUT: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const MEMORY_THROUGHPUT: &str = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
const DRAM_THROUGHPUT: &str = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const ACHIEVED_OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
const THEORETICAL_OCCUPANCY: &str = "sm__maximum_warps_per_active_cycle_pct";
const DRAM_READ: &str = "dram__bytes_read.sum";
const DRAM_WRITE: &str = "dram__bytes_write.sum";
const L1_HIT: &str = "l1tex__t_sector_hit_rate.pct";
const L2_HIT: &str = "lts__t_sector_hit_rate.pct";
const PEAK_FFMA: &str = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained";
const PEAK_DFMA: &str = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained";
const SM_CLOCK: &str = "sm__cycles_elapsed.avg.per_second";
const PEAK_DRAM: &str = "dram__bytes.sum.peak_sustained";
const DRAM_CLOCK: &str = "dram__cycles_elapsed.avg.per_second";
const STALL_PREFIX: &str = "smsp__average_warps_issue_stalled_";
const STALL_SUFFIX: &str = "_per_issue_active.ratio";

/// The summary of one profiled kernel. A metric ncu did not give is `None`, and named in
/// `missing`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub kernel: String,
    pub duration_ns: Option<f64>,
    /// Speed of Light: compute (SM) and memory throughput as % of the peak.
    pub sm_throughput_pct: Option<f64>,
    pub memory_throughput_pct: Option<f64>,
    pub dram_throughput_pct: Option<f64>,
    pub achieved_occupancy_pct: Option<f64>,
    pub theoretical_occupancy_pct: Option<f64>,
    /// What limits the blocks per SM: registers, shared memory, warps or blocks (the smallest
    /// of the four limits), and that limit.
    pub occupancy_limiter: Option<String>,
    pub blocks_per_sm_limit: Option<f64>,
    pub registers_per_thread: Option<f64>,
    pub waves_per_sm: Option<f64>,
    pub dram_read_bytes: Option<f64>,
    pub dram_write_bytes: Option<f64>,
    pub l1_hit_pct: Option<f64>,
    pub l2_hit_pct: Option<f64>,
    /// The top warp-stall reasons: cycles per issued instruction a warp spends stalled there.
    pub stalls: Vec<(String, f64)>,
    pub roofline: Option<Roofline>,
    /// Metrics asked for and not reported (an older ncu, another architecture).
    pub missing: Vec<String>,
}

/// One profile as `profile --json` prints it and the explorer receives it (`Event::Profile`):
/// what was profiled, under which geometry, where the full report is, and the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileResult {
    pub descriptor: String,
    /// The ncu report kept for `ncu-ui`.
    pub report: String,
    pub ncu: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    /// The A/B candidate profiled instead of the recorded kernel (its file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    pub profile: Profile,
}

/// Where the kernel sits on the roofline of its precision (FP64 when it does more FP64 than
/// FP32 work).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roofline {
    /// "fp32" or "fp64".
    pub precision: String,
    /// Floating-point operations (FMA counts 2) and DRAM bytes of the kernel.
    pub flops: f64,
    pub dram_bytes: f64,
    /// FLOP per DRAM byte.
    pub intensity: f64,
    pub achieved_gflops: f64,
    pub peak_gflops: f64,
    pub peak_gbytes_per_s: f64,
    /// The intensity where the two roofs meet.
    pub ridge: f64,
    /// "memory" below the ridge, "compute" above.
    pub bound: String,
    /// Achieved over the roof at this intensity (1 = on the roof).
    pub of_roof: f64,
}

impl Profile {
    /// The summary of `k`.
    pub fn from_raw(k: &RawKernel) -> Profile {
        let mut missing = Vec::new();
        let mut get = |name: &str| {
            let v = k.metrics.get(name).copied();
            if v.is_none() {
                missing.push(name.to_string());
            }
            v
        };
        let limits = [
            ("registers", get("launch__occupancy_limit_registers")),
            ("shared memory", get("launch__occupancy_limit_shared_mem")),
            ("warps", get("launch__occupancy_limit_warps")),
            ("blocks", get("launch__occupancy_limit_blocks")),
        ];
        let limiter = limits
            .iter()
            .filter_map(|(n, v)| v.map(|v| (*n, v)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let mut p = Profile {
            kernel: k.kernel.clone(),
            duration_ns: get(DURATION).map(|s| s * 1e9),
            sm_throughput_pct: get(SM_THROUGHPUT),
            memory_throughput_pct: get(MEMORY_THROUGHPUT),
            dram_throughput_pct: get(DRAM_THROUGHPUT),
            achieved_occupancy_pct: get(ACHIEVED_OCCUPANCY),
            theoretical_occupancy_pct: get(THEORETICAL_OCCUPANCY),
            occupancy_limiter: limiter.map(|(n, _)| n.to_string()),
            blocks_per_sm_limit: limiter.map(|(_, v)| v),
            registers_per_thread: get("launch__registers_per_thread"),
            waves_per_sm: get("launch__waves_per_multiprocessor"),
            dram_read_bytes: get(DRAM_READ),
            dram_write_bytes: get(DRAM_WRITE),
            l1_hit_pct: get(L1_HIT),
            l2_hit_pct: get(L2_HIT),
            stalls: Vec::new(),
            roofline: None,
            missing: Vec::new(),
        };
        p.missing = missing;
        p.stalls = top_stalls(k, 5);
        if p.stalls.is_empty() {
            p.missing
                .push(format!("{STALL_PREFIX}*{STALL_SUFFIX} (WarpStateStats)"));
        }
        p.roofline = roofline(k, p.duration_ns);
        p
    }

    /// DRAM bytes read and written.
    pub fn dram_bytes(&self) -> Option<f64> {
        Some(self.dram_read_bytes? + self.dram_write_bytes?)
    }
}

/// The `n` stall reasons with the most cycles per issued instruction ("selected" is issuing,
/// not stalling).
fn top_stalls(k: &RawKernel, n: usize) -> Vec<(String, f64)> {
    let mut stalls: Vec<(String, f64)> = k
        .metrics
        .iter()
        .filter_map(|(name, v)| {
            let reason = name
                .strip_prefix(STALL_PREFIX)?
                .strip_suffix(STALL_SUFFIX)?;
            (reason != "selected" && !reason.ends_with("_not_issued") && *v > 0.0)
                .then(|| (reason.replace('_', " "), *v))
        })
        .collect();
    stalls.sort_by(|a, b| b.1.total_cmp(&a.1));
    stalls.truncate(n);
    stalls
}

fn roofline(k: &RawKernel, duration_ns: Option<f64>) -> Option<Roofline> {
    let m = |n: &str| k.metrics.get(n).copied().unwrap_or(0.0);
    let op = |kind: &str| {
        m(&format!(
            "smsp__sass_thread_inst_executed_op_{kind}_pred_on.sum"
        ))
    };
    let fp32 = 2.0 * op("ffma") + op("fadd") + op("fmul");
    let fp64 = 2.0 * op("dfma") + op("dadd") + op("dmul");
    let (precision, flops, peak_fma) = if fp64 > fp32 {
        ("fp64", fp64, m(PEAK_DFMA))
    } else {
        ("fp32", fp32, m(PEAK_FFMA))
    };
    let seconds = duration_ns? / 1e9;
    let dram_bytes = m(DRAM_READ) + m(DRAM_WRITE);
    let peak_flops = 2.0 * peak_fma * m(SM_CLOCK);
    let peak_bw = m(PEAK_DRAM) * m(DRAM_CLOCK);
    if seconds <= 0.0 || peak_flops <= 0.0 || peak_bw <= 0.0 || dram_bytes <= 0.0 {
        return None;
    }
    let intensity = flops / dram_bytes;
    let achieved = flops / seconds;
    let ridge = peak_flops / peak_bw;
    let roof = peak_flops.min(intensity * peak_bw);
    let of_roof = if roof > 0.0 { achieved / roof } else { 0.0 };
    // Tiny divisors of a damaged page: no roofline rather than infinities.
    if ![intensity, achieved, ridge, roof, of_roof]
        .iter()
        .all(|v| v.is_finite())
    {
        return None;
    }
    Some(Roofline {
        precision: precision.into(),
        flops,
        dram_bytes,
        intensity,
        achieved_gflops: achieved / 1e9,
        peak_gflops: peak_flops / 1e9,
        peak_gbytes_per_s: peak_bw / 1e9,
        ridge,
        bound: if intensity < ridge {
            "memory"
        } else {
            "compute"
        }
        .into(),
        of_roof,
    })
}

/// A text roofline: log-log axes of intensity (FLOP/byte) and GFLOP/s, the memory roof's slope,
/// the compute roof, and the kernel's point `●`. `width` × `height` characters.
pub fn roofline_chart(r: &Roofline, width: usize, height: usize) -> Vec<String> {
    let (width, height) = (width.max(20), height.max(6));
    // Decades around the ridge and the point.
    let lo_x = (r.intensity.min(r.ridge) / 10.0).log10().floor();
    let hi_x = (r.intensity.max(r.ridge) * 10.0).log10().ceil();
    let hi_y = (r.peak_gflops * 2.0).log10().ceil();
    let lo_y = (r
        .achieved_gflops
        .min(r.peak_gbytes_per_s * 10f64.powf(lo_x))
        / 2.0)
        .max(1e-3)
        .log10()
        .floor();
    let col = |x: f64| (((x.log10() - lo_x) / (hi_x - lo_x)) * (width - 1) as f64).round() as isize;
    let row = |y: f64| {
        (height - 1) as isize
            - (((y.max(1e-9).log10() - lo_y) / (hi_y - lo_y)) * (height - 1) as f64).round()
                as isize
    };
    let mut grid = vec![vec![' '; width]; height];
    // The roof at each column: the memory slope, then the compute ceiling.
    let roof = (0..width).map(|c| {
        let x = 10f64.powf(lo_x + (hi_x - lo_x) * c as f64 / (width - 1) as f64);
        r.peak_gflops.min(x * r.peak_gbytes_per_s)
    });
    for (c, y) in roof.enumerate() {
        let at = row(y);
        if (0..height as isize).contains(&at) {
            grid[at as usize][c] = if y < r.peak_gflops { '/' } else { '‾' };
        }
    }
    let (pc, pr) = (col(r.intensity), row(r.achieved_gflops));
    if (0..width as isize).contains(&pc) && (0..height as isize).contains(&pr) {
        grid[pr as usize][pc as usize] = '●';
    }
    let mut lines: Vec<String> = grid.into_iter().map(|l| l.into_iter().collect()).collect();
    lines.push(format!(
        "FLOP/byte 1e{lo_x:.0} … 1e{hi_x:.0} (log); GFLOP/s 1e{lo_y:.0} … 1e{hi_y:.0} (log); ridge at {:.1}",
        r.ridge
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(pairs: &[(&str, f64)]) -> RawKernel {
        RawKernel {
            kernel: "k".into(),
            metrics: pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        }
    }

    /// An H100-like device: 132 SMs × 128 FFMA per cycle at 1.98 GHz (66.9 TFLOP/s FP32) and
    /// 3.35 TB/s of DRAM.
    fn device() -> Vec<(&'static str, f64)> {
        vec![
            (PEAK_FFMA, 132.0 * 128.0),
            (PEAK_DFMA, 132.0 * 64.0),
            (SM_CLOCK, 1.98e9),
            (PEAK_DRAM, 1280.0),
            (DRAM_CLOCK, 2.619e9),
        ]
    }

    #[test]
    fn a_streaming_kernel_is_memory_bound() {
        // saxpy over 16 M floats: 2 flops and 12 bytes an element, in 80 µs (the roof: 60 µs).
        let n = 16.0 * 1024.0 * 1024.0;
        let mut m = device();
        m.extend([
            (DURATION, 80e-6),
            ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", n),
            (DRAM_READ, 8.0 * n),
            (DRAM_WRITE, 4.0 * n),
        ]);
        let r = Profile::from_raw(&kernel(&m)).roofline.unwrap();
        assert_eq!(r.bound, "memory");
        assert_eq!(r.precision, "fp32");
        assert!((r.intensity - 2.0 / 12.0).abs() < 1e-9);
        assert!(r.of_roof > 0.0 && r.of_roof <= 1.0, "{r:?}");
        let chart = roofline_chart(&r, 40, 10);
        assert_eq!(chart.len(), 11);
        assert!(chart.iter().any(|l| l.contains('●')), "{chart:#?}");
    }

    #[test]
    fn an_fma_chain_is_compute_bound() {
        let mut m = device();
        m.extend([
            (DURATION, 1e-3),
            ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2e10),
            (DRAM_READ, 4e6),
            (DRAM_WRITE, 4e6),
        ]);
        let r = Profile::from_raw(&kernel(&m)).roofline.unwrap();
        assert_eq!(r.bound, "compute");
        assert!((r.achieved_gflops - 40_000.0).abs() < 1.0, "{r:?}");
    }

    #[test]
    fn limiter_stalls_and_missing_metrics() {
        let p = Profile::from_raw(&kernel(&[
            ("launch__occupancy_limit_registers", 4.0),
            ("launch__occupancy_limit_shared_mem", 32.0),
            ("launch__occupancy_limit_warps", 8.0),
            ("launch__occupancy_limit_blocks", 32.0),
            (
                "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                12.5,
            ),
            (
                "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
                1.0,
            ),
            (
                "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
                2.0,
            ),
            (
                "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
                0.0,
            ),
        ]));
        assert_eq!(p.occupancy_limiter.as_deref(), Some("registers"));
        assert_eq!(p.blocks_per_sm_limit, Some(4.0));
        assert_eq!(
            p.stalls,
            vec![
                ("long scoreboard".to_string(), 12.5),
                ("wait".to_string(), 2.0)
            ]
        );
        assert!(p.missing.contains(&DURATION.to_string()));
        assert!(p.roofline.is_none());
    }
}
