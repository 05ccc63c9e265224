//! What `rr-tui inspect` shows of one instance, as data (for `--json` and the explorer) and as
//! text lines. Reads the descriptor, the globals and the image; snapshots only by size.

use humansize::{format_size, BINARY};
use std::path::{Path, PathBuf};

use super::descriptor::{Descriptor, Segment};
use super::globals::{Global, Globals};
use super::image::{self, ImageInfo};
use super::instance::{InstanceFiles, Side};
use super::memory::MemoryMap;
use crate::error::Result;

#[derive(Debug, Clone, serde::Serialize)]
pub struct ArgInfo {
    pub index: usize,
    pub hex: String,
    pub meaning: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct SnapshotSizes {
    /// The size, or why it is unknown (missing, not a regular file).
    pub record_input: std::result::Result<u64, String>,
    pub record_output: std::result::Result<u64, String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Inspection {
    pub descriptor_path: PathBuf,
    pub descriptor: Descriptor,
    pub kernel_demangled: String,
    pub segments: Vec<Segment>,
    pub arguments: Vec<ArgInfo>,
    pub globals: std::result::Result<Vec<Global>, String>,
    pub image_path: PathBuf,
    pub image: std::result::Result<ImageInfo, String>,
    pub snapshots: SnapshotSizes,
}

fn size_of(r: crate::Result<u64>) -> std::result::Result<u64, String> {
    r.map_err(|e| match e {
        e if e.is_not_found() => "missing".to_string(),
        crate::Error::Format { problem, .. } => problem,
        e => e.to_string(),
    })
}

pub fn human(bytes: u64) -> String {
    format_size(bytes, BINARY)
}

impl Inspection {
    pub fn of(json: &Path) -> Result<Inspection> {
        let d = Descriptor::read(json)?;
        let files = InstanceFiles::from_descriptor_path(json);
        let snapshots = SnapshotSizes {
            record_input: size_of(files.recorded_len(&d, Side::Input)),
            record_output: size_of(files.recorded_len(&d, Side::Output)),
        };
        let map = MemoryMap::new(&d, *snapshots.record_input.as_ref().unwrap_or(&0));
        let all = d.arguments();
        let last = all.len().saturating_sub(1);
        let arguments = all
            .iter()
            .map(|a| {
                let hex = match a.word {
                    Some(w) => format!("{w:#018x}"),
                    None => super::descriptor::hex_encode(&a.bytes),
                };
                let meaning = match (a.word, map.arg_region(a.index)) {
                    (_, Some(r)) => {
                        let seg = map.segments[r.segment];
                        format!(
                            "→ segment {} + {:#x} ({} up to the next argument)",
                            r.segment,
                            r.addr - seg.addr,
                            human(r.file_end - r.file_start)
                        )
                    }
                    (Some(u64::MAX), None) if d.cuda.is_none() && a.index == last => {
                        "dyn_ptr sentinel (~0: no reduction buffer)".into()
                    }
                    (Some(w), None) if w >= d.valloc_addr && w - d.valloc_addr < d.valloc_size => {
                        format!(
                            "→ reserved region + {:#x}, beyond the recorded bytes",
                            w - d.valloc_addr
                        )
                    }
                    (Some(w), None) => {
                        format!("= {} (i64 {}, not a recorded address)", w, w as i64)
                    }
                    (None, None) if matches!(a.bytes.len(), 1 | 2 | 4) => {
                        let mut buf = [0u8; 4];
                        buf[..a.bytes.len()].copy_from_slice(&a.bytes);
                        format!(
                            "= {} ({} bytes by value)",
                            u32::from_le_bytes(buf),
                            a.bytes.len()
                        )
                    }
                    (None, None) => format!("{} bytes by value", a.bytes.len()),
                };
                ArgInfo {
                    index: a.index,
                    hex,
                    meaning,
                }
            })
            .collect();
        let globals = Globals::read(&files.globals())
            .map(|g| g.entries)
            .map_err(|e| e.to_string());
        let image_path = files.image(&d);
        let image = files
            .resolve_image(&d)
            .and_then(|p| image::read(&p))
            .map(|(_, i)| i)
            .map_err(|e| e.to_string());
        Ok(Inspection {
            descriptor_path: json.to_path_buf(),
            kernel_demangled: super::demangle(&d.name),
            segments: map.segments.clone(),
            descriptor: d,
            arguments,
            globals,
            image_path,
            image,
            snapshots,
        })
    }

    /// Whether something `inspect` needed could not be read (the descriptor was; the globals or
    /// the image were not): `inspect` still prints what it could, then exits non-zero.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = &self.globals {
            out.push(e.clone());
        }
        if let Err(e) = &self.image {
            out.push(e.clone());
        }
        out
    }

    /// Text lines: `inspect`'s output and the explorer's descriptor pane. Names from the files
    /// are shown with control characters made visible.
    pub fn lines(&self) -> Vec<String> {
        let d = &self.descriptor;
        let dims = |v: [u32; 3]| format!("{}×{}×{}", v[0], v[1], v[2]);
        let limits = |l: [u32; 2]| {
            if l == [0, 0] {
                "unrestricted".to_string()
            } else {
                format!("[{}, {}]", l[0], l[1])
            }
        };
        let opt = |v: &std::result::Result<u64, String>| match v {
            Ok(n) => human(*n),
            Err(why) => why.clone(),
        };
        let mut out = vec![
            format!(
                "Descriptor   {} ({})",
                self.descriptor_path.display(),
                d.format.label()
            ),
            format!("Kernel       {}", self.kernel_demangled),
        ];
        if self.kernel_demangled != d.name {
            out.push(format!("  raw name   {}", d.name));
        }
        out.push(format!(
            "Geometry     grid {}, block {}, dynamic shared memory {}",
            dims(d.grid()),
            dims(d.block()),
            human(d.shared_memory_size as u64)
        ));
        if let Some(c) = &d.cuda {
            let cluster = c.cluster_dim.map(dims).unwrap_or_else(|| "none".into());
            out.push(format!(
                "Launch       cluster {cluster}, cooperative {}, occurrence #{}",
                c.cooperative, c.occurrence
            ));
        }
        out.push(format!(
            "Limits       teams {}, threads {}",
            limits(d.teams_limits),
            limits(d.threads_limits)
        ));
        out.push(format!(
            "Trip count   {}    Device {}",
            d.loop_trip_count, d.device_id
        ));
        out.push(format!(
            "Region       {:#x} + {} reserved",
            d.valloc_addr,
            human(d.valloc_size)
        ));
        for (i, s) in self.segments.iter().enumerate() {
            out.push(format!(
                "  segment {i}  {:#x}..{:#x}  {}  (file offset {:#x})",
                s.addr,
                s.end(),
                human(s.size),
                s.offset
            ));
        }
        out.push(format!("Arguments    {}", self.arguments.len()));
        for a in &self.arguments {
            out.push(format!("  #{:<3} {}  {}", a.index, a.hex, a.meaning));
        }
        match &self.globals {
            Ok(g) => {
                out.push(format!("Globals      {}", g.len()));
                for e in g {
                    out.push(format!("  {}  {}", e.name, human(e.size)));
                }
            }
            Err(e) => out.push(format!("Globals      unreadable: {e}")),
        }
        match &self.image {
            Ok(i) => {
                out.push(format!(
                    "Image        {}: {}, {}, {} kernel(s)",
                    self.image_path.display(),
                    i.kind.describe(),
                    human(i.size),
                    i.kernels.len()
                ));
                for k in &i.kernels {
                    out.push(format!("  kernel     {}", super::demangle(k)));
                }
            }
            Err(e) => out.push(format!("Image        unreadable: {e}")),
        }
        out.push(format!(
            "Snapshots    input {}, output {}",
            opt(&self.snapshots.record_input),
            opt(&self.snapshots.record_output)
        ));
        out.into_iter()
            .map(|l| crate::text::visible(&l).into_owned())
            .collect()
    }
}
