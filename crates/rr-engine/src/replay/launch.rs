//! The launch a replay performs: geometry after overrides, LLVM's limit checks with its exact
//! messages, and the kernel parameter buffer. Pure: tested without a GPU.

use rr_format::Descriptor;

use super::request::Overrides;
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    pub device_id: i32,
    pub cluster_dim: Option<[u32; 3]>,
    pub cooperative: bool,
}

/// Resolve the launch of a replay: recorded values, then overrides, then the limit checks.
pub fn resolve(d: &Descriptor, a: &Overrides) -> Result<Launch> {
    let mut grid = a.grid.unwrap_or(d.grid());
    let mut block = a.block.unwrap_or(d.block());
    if grid.contains(&0) || block.contains(&0) {
        return Err(Error::invalid(format!(
            "grid {}×{}×{} and block {}×{}×{} must be positive in every dimension",
            grid[0], grid[1], grid[2], block[0], block[1], block[2]
        )));
    }
    // LLVM's tool treats 0 as "use the recorded value".
    if let Some(t) = a.num_teams.filter(|&t| t > 0) {
        grid[0] = t;
    }
    if let Some(t) = a.num_threads.filter(|&t| t > 0) {
        block[0] = t;
    }
    check_limits(
        d.teams_limits,
        d.threads_limits,
        grid[0],
        block[0],
        a.ignore_limits,
    )?;
    if let Some(why) = rr_format::limits::geometry_problem(grid, block) {
        return Err(Error::invalid(why));
    }
    Ok(Launch {
        grid,
        block,
        shared_mem: a.shared_mem.unwrap_or(d.shared_memory_size),
        device_id: a.device_id.unwrap_or(d.device_id),
        cluster_dim: d.cuda.as_ref().and_then(|c| c.cluster_dim),
        cooperative: d.cuda.as_ref().is_some_and(|c| c.cooperative),
    })
}

/// `llvm-omp-kernel-replay`'s checks on the final values (recorded ones too), against the
/// recorded `[min, max]` TeamsLimits and ThreadsLimits (0 = none).
pub fn check_limits(
    teams_limits: [u32; 2],
    threads_limits: [u32; 2],
    teams: u32,
    threads: u32,
    ignore: bool,
) -> Result<()> {
    let [tmin, tmax] = teams_limits;
    let [hmin, hmax] = threads_limits;
    if (tmin != 0) != (tmax != 0) {
        return Err(Error::invalid("TeamsLimits min and max are inconsistent"));
    }
    if (hmin != 0) != (hmax != 0) {
        return Err(Error::invalid("ThreadsLimits min and max are inconsistent"));
    }
    if ignore {
        return Ok(());
    }
    if tmin > 0 && (teams < tmin || teams > tmax) {
        return Err(Error::invalid(format!(
            "number of teams ({teams}) is out of the allowed limits (min,max: {tmin},{tmax})"
        )));
    }
    if hmin > 0 && (threads < hmin || threads > hmax) {
        return Err(Error::invalid(format!(
            "number of threads ({threads}) is out of the allowed limits (min,max: {hmin},{hmax})"
        )));
    }
    Ok(())
}

/// The kernel parameter buffer and, for each parameter, its `(offset, size)` in it. LLVM
/// records pass `NumArgs` 8-byte values `ArgPtrs[i] + ArgOffsets[i]` (the dyn_ptr slot already
/// included); rr-tui records pass the recorded buffer with its recorded layout.
pub fn parameters(d: &Descriptor) -> (Vec<u8>, Vec<(usize, usize)>) {
    match &d.cuda {
        Some(c) => (
            c.param_buffer.clone(),
            c.param_layout
                .iter()
                .map(|s| (s.offset as usize, s.size as usize))
                .collect(),
        ),
        None => {
            let mut buf = Vec::with_capacity(d.arg_ptrs.len() * 8);
            for (p, o) in d.arg_ptrs.iter().zip(&d.arg_offsets) {
                buf.extend_from_slice(&p.wrapping_add(*o as u64).to_le_bytes());
            }
            let slots = (0..d.arg_ptrs.len()).map(|i| (i * 8, 8)).collect();
            (buf, slots)
        }
    }
}

impl Launch {
    /// The driver-level launch configuration.
    pub fn config(&self) -> rr_cuda::LaunchConfig {
        rr_cuda::LaunchConfig {
            grid: self.grid,
            block: self.block,
            shared_mem: self.shared_mem,
            cluster: self.cluster_dim,
            cooperative: self.cooperative,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn desc(teams: &str, threads: &str) -> Descriptor {
        let s = format!(
            r#"{{"ArgOffsets":[0,8],"ArgPtrs":[4096,-1],"DeviceId":0,"LoopTripCount":0,"Name":"k","NumArgs":2,"NumTeams":1,"NumThreads":128,"SharedMemorySize":0,"TeamsLimits":{teams},"ThreadsLimits":{threads},"VAllocAddr":4096,"VAllocSize":4096}}"#
        );
        Descriptor::parse(s.as_bytes(), Path::new("x")).unwrap()
    }

    fn args() -> Overrides {
        Overrides::default()
    }

    #[test]
    fn llvm_limit_messages() {
        let d = desc("[1,1]", "[1,128]");
        let e = resolve(
            &d,
            &Overrides {
                num_threads: Some(129),
                ..args()
            },
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "number of threads (129) is out of the allowed limits (min,max: 1,128)"
        );
        let e = resolve(
            &d,
            &Overrides {
                num_teams: Some(2),
                ..args()
            },
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "number of teams (2) is out of the allowed limits (min,max: 1,1)"
        );
        assert!(resolve(
            &d,
            &Overrides {
                num_teams: Some(2),
                ignore_limits: true,
                ..args()
            }
        )
        .is_ok());
        let e = resolve(&desc("[0,4]", "[1,128]"), &args())
            .unwrap_err()
            .to_string();
        assert_eq!(e, "TeamsLimits min and max are inconsistent");
    }

    #[test]
    fn overrides_and_3d() {
        let d = desc("[0,0]", "[0,0]");
        let l = resolve(
            &d,
            &Overrides {
                grid: Some([4, 2, 1]),
                block: Some([32, 4, 1]),
                shared_mem: Some(65536),
                ..args()
            },
        )
        .unwrap();
        assert_eq!(
            (l.grid, l.block, l.shared_mem),
            ([4, 2, 1], [32, 4, 1], 65536)
        );
        let l = resolve(
            &d,
            &Overrides {
                num_teams: Some(0),
                ..args()
            },
        )
        .unwrap();
        assert_eq!(l.grid, [1, 1, 1]);
        assert!(resolve(
            &d,
            &Overrides {
                block: Some([64, 32, 1]),
                ..args()
            }
        )
        .unwrap_err()
        .to_string()
        .contains("1024"));
        assert!(resolve(
            &d,
            &Overrides {
                grid: Some([0, 1, 1]),
                ..args()
            }
        )
        .is_err());
    }

    #[test]
    fn llvm_parameters_are_values_plus_offsets() {
        let (buf, offs) = parameters(&desc("[0,0]", "[0,0]"));
        assert_eq!(offs, vec![(0, 8), (8, 8)]);
        assert_eq!(u64::from_le_bytes(buf[0..8].try_into().unwrap()), 4096);
        assert_eq!(u64::from_le_bytes(buf[8..16].try_into().unwrap()), 7);
    }
}
