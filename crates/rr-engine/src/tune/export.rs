//! `tune --export`: the best configuration handed back to the application, per kernel, problem
//! signature and GPU architecture, as JSON (merged with what the file holds: another sweep adds
//! to it) and as a C header of `#define`s a build can include.
//!
//! A signature is what tells launches of one kernel apart without their addresses: the
//! recorded grid, block and dynamic shared memory, and each argument as the size of the
//! recorded buffer it points into, or its bytes when it points into none (a scalar such as `n`).
//! Keyed by name alone, a value tuned for one problem size would be applied to another.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::space::{dim, Config};
use super::trial::TuneReport;
use rr_format::descriptor::Segment;
use rr_format::Descriptor;

/// An export file larger than this is not one of ours.
pub const MAX_EXPORT_BYTES: u64 = 16 << 20;
/// Entries one file holds at most.
pub const MAX_ENTRIES: usize = 10_000;
/// Parameters a signature lists at most (a kernel's parameters fit in 32 KiB).
const MAX_ARGS: usize = 32 * 1024;
/// Defines an entry lists at most.
const MAX_DEFINES: usize = super::defines::MAX_DEFINE_AXES;
const FORMAT: &str = "rr-tui tuned configurations v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    /// `buffer N` (bytes of the recorded buffer it points into) or the bytes in hex.
    #[serde(deserialize_with = "super::bounded::at_most::<_, _, MAX_ARGS>")]
    pub args: Vec<String>,
}

impl Signature {
    pub fn of(d: &Descriptor, segments: &[Segment]) -> Signature {
        let args = d
            .arguments()
            .iter()
            .map(|a| {
                let inside = a.word.and_then(|w| {
                    segments
                        .iter()
                        .find(|s| s.addr <= w && w < s.addr.saturating_add(s.size))
                });
                match inside {
                    Some(s) => format!("buffer {}", s.size),
                    None => a.bytes.iter().map(|b| format!("{b:02x}")).collect(),
                }
            })
            .collect();
        Signature {
            grid: d.grid(),
            block: d.block(),
            shared_mem: d.shared_memory_size,
            args,
        }
    }

    /// A short stable id (16 hex digits of XXH3 over the signature).
    pub fn id(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        rr_format::store::blob_id(text.as_bytes())[..16].to_string()
    }
}

/// The best configuration of one (kernel, signature, architecture).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub kernel: String,
    pub arch: String,
    pub signature_id: String,
    pub signature: Signature,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_registers: Option<u32>,
    /// The define values of the best variant (compile-time tuning), in axis order.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "super::bounded::at_most::<_, _, MAX_DEFINES>"
    )]
    pub defines: Vec<(String, String)>,
    pub median_ns: f64,
    /// Recorded median / best median, when the recorded configuration verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    pub verify: String,
    pub descriptor: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportFile {
    pub format: String,
    #[serde(deserialize_with = "super::bounded::at_most::<_, _, MAX_ENTRIES>")]
    pub entries: Vec<Entry>,
}

impl Default for ExportFile {
    fn default() -> Self {
        ExportFile {
            format: FORMAT.into(),
            entries: Vec::new(),
        }
    }
}

impl ExportFile {
    /// Parse what an export file holds (`what` names it in messages).
    pub fn parse(bytes: &[u8]) -> Result<ExportFile, String> {
        let f: ExportFile = serde_json::from_slice(bytes)
            .map_err(|e| format!("not an rr-tui export file ({e}); choose another file"))?;
        if f.format != FORMAT {
            let mut shown = rr_format::text::visible(&f.format).into_owned();
            rr_format::text::cut_at_char(&mut shown, 80);
            return Err(format!(
                "holds {shown:?}, not {FORMAT:?}; choose another file"
            ));
        }
        // The id is ours (16 hex digits of the signature's hash): it goes into macro names.
        if let Some(e) = f.entries.iter().find(|e| {
            e.signature_id.len() != 16 || !e.signature_id.bytes().all(|b| b.is_ascii_hexdigit())
        }) {
            return Err(format!(
                "an entry's signature_id {:?} is not 16 hex digits",
                rr_format::text::visible(&e.signature_id)
            ));
        }
        Ok(f)
    }

    /// Add `e`, replacing the entry of the same kernel, signature and architecture; refused
    /// when the file holds [`MAX_ENTRIES`] others already.
    pub fn upsert(&mut self, e: Entry) -> Result<(), String> {
        let same = |x: &Entry| {
            x.kernel == e.kernel && x.signature_id == e.signature_id && x.arch == e.arch
        };
        let full = self.entries.len() >= MAX_ENTRIES;
        match self.entries.iter_mut().find(|x| same(x)) {
            Some(x) => *x = e,
            None if full => {
                return Err(format!(
                    "holds {MAX_ENTRIES} entries already; export to another file"
                ))
            }
            None => self.entries.push(e),
        }
        Ok(())
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).unwrap_or_default();
        v.push(b'\n');
        v
    }

    /// The C header: per entry, `RR_<KERNEL>_<ARCH>_<SIG>_<FIELD>` macros, and where a kernel
    /// has one signature on an architecture, the same without the signature
    /// (`RR_AB_SCALE_SM90_TILE`).
    pub fn to_header(&self) -> String {
        let mut out = String::from(
            "// Generated by `rr-tui tune --export`: the best launch configuration (and defines) per\n\
             // kernel, problem signature and GPU architecture. Regenerated from the JSON beside it.\n\
             #pragma once\n",
        );
        // Kernels whose macro names collide (overloads, templates) get a part of their name's
        // hash; a kernel's short alias exists only when it has one entry on its architecture.
        let mut kernels_of: HashMap<String, HashSet<&str>> = HashMap::new();
        for e in &self.entries {
            kernels_of
                .entry(macro_name(&e.kernel))
                .or_default()
                .insert(e.kernel.as_str());
        }
        let kernel_macro = |k: &str| {
            let m = macro_name(k);
            if kernels_of.get(&m).is_some_and(|s| s.len() > 1) {
                let hash = rr_format::store::blob_id(k.as_bytes());
                format!("{m}_{}", hash[..6].to_uppercase())
            } else {
                m
            }
        };
        let bases: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                format!(
                    "RR_{}_{}",
                    kernel_macro(&e.kernel),
                    macro_name(&e.arch.replace('_', ""))
                )
            })
            .collect();
        let mut per_base: HashMap<&str, usize> = HashMap::new();
        for b in &bases {
            *per_base.entry(b.as_str()).or_default() += 1;
        }
        for (e, base) in self.entries.iter().zip(&bases) {
            // `parse` holds ids to 16 hex digits; only those reach a macro name in any case.
            let sig: String = e
                .signature_id
                .chars()
                .filter(char::is_ascii_hexdigit)
                .take(8)
                .collect::<String>()
                .to_uppercase();
            let unique = per_base.get(base.as_str()) == Some(&1);
            out.push_str(&format!(
                "\n// {} on {}, recorded grid {} block {} smem {} (signature {}): {:.0} ns{}\n",
                rr_format::text::visible(&rr_format::demangle(&e.kernel)),
                rr_format::text::visible(&e.arch),
                dim(e.signature.grid),
                dim(e.signature.block),
                e.signature.shared_mem,
                rr_format::text::visible(&e.signature_id),
                e.median_ns,
                e.speedup
                    .map(|s| format!(", {s:.3}x the recorded"))
                    .unwrap_or_default()
            ));
            let mut fields: Vec<(String, String)> = vec![
                ("GRID_X".into(), e.grid[0].to_string()),
                ("GRID_Y".into(), e.grid[1].to_string()),
                ("GRID_Z".into(), e.grid[2].to_string()),
                ("BLOCK_X".into(), e.block[0].to_string()),
                ("BLOCK_Y".into(), e.block[1].to_string()),
                ("BLOCK_Z".into(), e.block[2].to_string()),
                ("SHARED_MEM".into(), e.shared_mem.to_string()),
            ];
            if let Some(r) = e.max_registers {
                fields.push(("MAX_REGISTERS".into(), r.to_string()));
            }
            for (name, value) in &e.defines {
                // Values were checked as words and numbers when given; a file edited by hand
                // gets its value as a comment instead.
                let plain = !value.is_empty()
                    && value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
                let value = if plain {
                    value.clone()
                } else {
                    format!("/* {} */", macro_name(value))
                };
                fields.push((macro_name(name), value));
            }
            for (field, value) in &fields {
                out.push_str(&format!("#define {base}_{sig}_{field} {value}\n"));
                if unique {
                    out.push_str(&format!("#define {base}_{field} {value}\n"));
                }
            }
        }
        out
    }
}

/// The entry a finished sweep exports, when something verified.
pub fn entry(
    report: &TuneReport,
    d: &Descriptor,
    segments: &[Segment],
    arch: &str,
) -> Option<Entry> {
    let best = report.best.as_ref()?;
    let median_ns = best.cost()?;
    let c: &Config = &best.config;
    let signature = Signature::of(d, segments);
    let defines = match c.variant {
        Some(v) if !report.defines.is_empty() => report
            .defines
            .values(v as usize)
            .into_iter()
            .map(|(n, x)| (n.to_string(), x.to_string()))
            .collect(),
        _ => Vec::new(),
    };
    Some(Entry {
        kernel: report.kernel.clone(),
        arch: arch.to_string(),
        signature_id: signature.id(),
        signature,
        grid: c.grid,
        block: c.block,
        shared_mem: c.shared_mem,
        max_registers: c.max_registers,
        defines,
        median_ns,
        speedup: report.speedup,
        verify: report.verify.clone(),
        descriptor: report.descriptor.clone(),
    })
}

/// An identifier for macros: the demangled name up to its parameters, its return type left
/// out, letters and digits kept (upper case), anything else `_` (runs of it once), at most 48
/// characters.
pub fn macro_name(s: &str) -> String {
    let plain = rr_format::demangle(s);
    let base = plain.split('(').next().unwrap_or(&plain).trim();
    let base = base.strip_prefix("void ").unwrap_or(base);
    let mut out: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let mut out: String = out.trim_matches('_').chars().take(48).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kernel: &str, sig: &str, arch: &str, tile: &str) -> Entry {
        Entry {
            kernel: kernel.into(),
            arch: arch.into(),
            signature_id: sig.into(),
            signature: Signature {
                grid: [16384, 1, 1],
                block: [256, 1, 1],
                shared_mem: 0,
                args: vec!["buffer 67108864".into(), "00000001".into()],
            },
            grid: [8192, 1, 1],
            block: [256, 1, 1],
            shared_mem: 0,
            max_registers: None,
            defines: vec![("TILE".into(), tile.into())],
            median_ns: 58000.0,
            speedup: Some(1.3),
            verify: "bytes".into(),
            descriptor: "x.json".into(),
        }
    }

    #[test]
    fn another_sweep_adds_and_the_same_key_replaces() {
        let mut f = ExportFile::default();
        for (sig, arch, tile) in [
            ("aaaaaaaaaaaaaaaa", "sm_90", "4"),
            ("bbbbbbbbbbbbbbbb", "sm_90", "8"),
            ("aaaaaaaaaaaaaaaa", "sm_80", "2"),
            ("aaaaaaaaaaaaaaaa", "sm_90", "16"),
        ] {
            f.upsert(entry("ab_scale", sig, arch, tile)).unwrap();
        }
        assert_eq!(f.entries.len(), 3);
        assert_eq!(f.entries[0].defines[0].1, "16");
        let back = ExportFile::parse(&f.to_json()).unwrap();
        assert_eq!(back, f);
        let h = f.to_header();
        assert!(
            h.contains("#define RR_AB_SCALE_SM90_AAAAAAAA_TILE 16\n"),
            "{h}"
        );
        assert!(
            h.contains("#define RR_AB_SCALE_SM80_TILE 2\n"),
            "one signature: {h}"
        );
        assert!(
            !h.contains("#define RR_AB_SCALE_SM90_TILE "),
            "two signatures: {h}"
        );
        assert!(h.contains("#define RR_AB_SCALE_SM80_GRID_X 8192\n"));
    }

    #[test]
    fn foreign_and_hostile_files_are_refused_or_neutralised() {
        assert!(ExportFile::parse(b"{}").is_err());
        assert!(ExportFile::parse(br#"{"format":"x","entries":[]}"#)
            .unwrap_err()
            .contains("choose another file"));
        let mut f = ExportFile::default();
        let mut e = entry(
            "k\n#include </etc/passwd>",
            "0123456789abcdef",
            "sm_90\n",
            "1\n#define X",
        );
        e.defines.push(("A B".into(), "*/ evil".into()));
        f.upsert(e).unwrap();
        // Ids that are not ours are refused when read.
        let mut bad = f.clone();
        bad.entries[0].signature_id = "a\n}//abcdef".into();
        assert!(ExportFile::parse(&bad.to_json())
            .unwrap_err()
            .contains("16 hex digits"));
        let h = f.to_header();
        assert!(
            h.lines().all(|l| l.is_empty()
                || l.starts_with("//")
                || l.starts_with("#define ")
                || l == "#pragma once"),
            "{h}"
        );
        assert!(!h.lines().any(|l| l.starts_with("#include")), "{h}");
    }

    #[test]
    fn macro_names_come_from_the_demangled_name() {
        assert_eq!(macro_name("ab_scale"), "AB_SCALE");
        assert_eq!(macro_name("_Z6kernelPfi"), "KERNEL");
        assert_eq!(macro_name("sm_90"), "SM_90");
        assert_eq!(macro_name("9x"), "_9X");
        assert_eq!(
            macro_name("void scale<unsigned int, 4>(float*)"),
            "SCALE_UNSIGNED_INT_4"
        );
    }

    #[test]
    fn colliding_kernel_macros_are_told_apart_and_the_file_is_bounded() {
        let mut f = ExportFile::default();
        f.upsert(entry("_Z1kPf", "aaaaaaaaaaaaaaaa", "sm_90", "4"))
            .unwrap();
        f.upsert(entry("_Z1kPi", "aaaaaaaaaaaaaaaa", "sm_90", "8"))
            .unwrap();
        let h = f.to_header();
        let defines: Vec<&str> = h.lines().filter(|l| l.starts_with("#define")).collect();
        let names: HashSet<&str> = defines
            .iter()
            .map(|l| l.split(' ').nth(1).unwrap())
            .collect();
        assert_eq!(names.len(), defines.len(), "no macro defined twice: {h}");
        let mut full = ExportFile::default();
        for i in 0..MAX_ENTRIES {
            full.entries
                .push(entry("k", &format!("{i:016x}"), "sm_90", "1"));
        }
        assert!(full
            .upsert(entry("k", "ffffffffffffffff", "sm_90", "1"))
            .is_err());
        assert!(full
            .upsert(entry("k", &format!("{:016x}", 5), "sm_90", "2"))
            .is_ok());
    }
}
