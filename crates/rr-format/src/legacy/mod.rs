//! Records of the libomptarget recorders before the 2026 rewrite (LLVM 16 to 22), read as they
//! were written (FORMAT.md, "Legacy LLVM records").
//!
//! Three layouts, told apart by the descriptor alone (files get renamed, so names only confirm):
//!
//! - **LLVM 16–17**: `<Name>.json` with `DeviceMemorySize` and `NumTeamsClause`, `<Name>.memory`,
//!   `<Name>.original.output`; no start address, no globals, no image;
//! - **LLVM 18**: adds `BumpAllocVAStart`, `<Name>.image` and a count-less `<Name>.globals`;
//!   `ArgPtrs` are the argument values;
//! - **LLVM 19–22**: the same files and keys, but `ArgPtrs` are the host addresses of the
//!   argument slots: the values are lost and the record cannot be replayed.
//!
//! 18 and 19–22 differ only in what `ArgPtrs` hold, so [`classify`] reads them: a value inside the
//! recorded region or the `~0` launch-environment sentinel can only be a value (under unified
//! virtual addressing host stack slots never lie in a device region), consecutive 8-byte
//! addresses can only be slots.

pub mod geometry;
pub mod region;
pub mod start;

use serde_json::{Map, Value};

use crate::descriptor::{Descriptor, Fields, RecordFormat};
use crate::error::Result;
use crate::limits::{MAX_PARAM_BYTES, MAX_REGION_BYTES};
pub use geometry::ExecMode;
pub use region::{Legacy, RegionStart};
pub use start::StartInference;

/// Whether a descriptor object is a legacy one: `DeviceMemorySize` (or `BumpAllocVAStart`) and
/// none of the keys of the 2026 format or rr-tui's (the April-2026 format also has
/// `NumTeamsClause`, but always with `VAllocAddr`).
pub(crate) fn is_legacy(obj: &Map<String, Value>) -> bool {
    legacy_keys(|k| obj.contains_key(k))
}

/// The rule of [`is_legacy`] over whatever says which keys a descriptor has.
fn legacy_keys(has: impl Fn(&str) -> bool) -> bool {
    (has("DeviceMemorySize") || has("BumpAllocVAStart"))
        && !["VAllocAddr", "NumTeams", "RrTuiFormat"]
            .iter()
            .any(|k| has(k))
}

/// Whether `path` is a legacy descriptor (a regular `.json` of plausible size whose keys are a
/// legacy layout's). Errors are `false`: the caller is only deciding what to list. Any `.json`
/// of a record directory comes here (`package.json`, a 64 MiB data file), so it is cheap:
/// a byte search for a legacy key first, then only the top-level keys (values are skipped, no
/// tree of the document is built).
pub fn is_legacy_file(path: &std::path::Path) -> bool {
    let Ok(bytes) =
        crate::fsio::read_limited(path, crate::fsio::MAX_DESCRIPTOR_BYTES, "descriptor")
    else {
        return false;
    };
    let names = |k: &str| memchr::memmem::find(&bytes, format!("\"{k}\"").as_bytes()).is_some();
    if !names("DeviceMemorySize") && !names("BumpAllocVAStart") {
        return false;
    }
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    serde::Deserializer::deserialize_map(&mut de, KeysOfInterest)
        .map(|seen| legacy_keys(|k| KEYS.iter().position(|&x| x == k).is_some_and(|i| seen[i])))
        .unwrap_or(false)
}

/// The top-level keys [`legacy_keys`] asks about.
const KEYS: [&str; 5] = [
    "DeviceMemorySize",
    "BumpAllocVAStart",
    "VAllocAddr",
    "NumTeams",
    "RrTuiFormat",
];

/// Which of [`KEYS`] an object has, in constant memory: keys are compared as they stream by
/// and every value is skipped.
struct KeysOfInterest;

impl<'de> serde::de::Visitor<'de> for KeysOfInterest {
    type Value = [bool; KEYS.len()];

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = [false; KEYS.len()];
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if let Some(i) = KEYS.iter().position(|&k| k == key) {
                seen[i] = true;
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(seen)
    }
}

/// Arguments at most this far apart, all outside the region, read as pointers into one host
/// parameter block (`-foffload-via-llvm` CUDA launches in LLVM 20–22 record the caller's own
/// `Ptrs`): no kernel has more parameter bytes than CUDA accepts.
const HOST_PARAM_SPAN: u64 = MAX_PARAM_BYTES as u64;

/// LLVM 18 or 19–22, from what `ArgPtrs` hold (FORMAT.md, "Legacy LLVM records", detection), with the evidence.
pub fn classify(arg_ptrs: &[u64], start: u64, size: u64) -> (RecordFormat, String) {
    let inside = |v: u64| v >= start && (v as u128) < start as u128 + size as u128;
    if arg_ptrs.is_empty() {
        return (
            RecordFormat::LegacyLlvm18To22,
            "no arguments: LLVM 18 and 19–22 records are indistinguishable, and nothing was lost"
                .into(),
        );
    }
    if let Some(i) = arg_ptrs.iter().position(|&v| v == u64::MAX) {
        return (
            RecordFormat::LegacyLlvm18,
            format!(
                "ArgPtrs[{i}] is ~0, the launch-environment sentinel: ArgPtrs are argument values"
            ),
        );
    }
    if let Some(i) = arg_ptrs.iter().position(|&v| inside(v)) {
        return (
            RecordFormat::LegacyLlvm18,
            format!("ArgPtrs[{i}] points into the recorded region: ArgPtrs are argument values"),
        );
    }
    let steps = || arg_ptrs.windows(2).map(|w| w[1].wrapping_sub(w[0]));
    if arg_ptrs.len() >= 2 && steps().all(|d| d == 8) {
        return (
            RecordFormat::LegacyLlvm19,
            "ArgPtrs are consecutive 8-byte host addresses: the argument slots, not their values"
                .into(),
        );
    }
    let span = arg_ptrs[arg_ptrs.len() - 1].wrapping_sub(arg_ptrs[0]);
    if arg_ptrs.len() >= 2
        && steps().all(|d| d > 0 && d <= HOST_PARAM_SPAN)
        && span <= HOST_PARAM_SPAN
        && arg_ptrs.iter().all(|&v| v >= 1 << 32)
    {
        return (
            RecordFormat::LegacyLlvm19,
            format!(
                "ArgPtrs are increasing host addresses within {span} bytes, none in the region: pointers to the \
                 caller's arguments (-foffload-via-llvm), not their values"
            ),
        );
    }
    (
        RecordFormat::LegacyLlvm18To22,
        "ArgPtrs neither point into the region nor look like argument slots: LLVM 18 (values) or 19–22 \
         (slot addresses) cannot be told apart"
            .into(),
    )
}

/// Parse a legacy descriptor (after [`is_legacy`]). Key names and messages are LLVM's.
pub(crate) fn parse(f: &Fields) -> Result<Descriptor> {
    let name = f.name()?;
    let num_args = f.num_args()?;
    let num_teams_clause = f.uint("NumTeamsClause", u32::MAX as u64)? as u32;
    let thread_limit_clause = f.uint("ThreadLimitClause", u32::MAX as u64)? as u32;
    let loop_trip_count = f.loop_trip_count()?;
    let device_memory_size = f.uint("DeviceMemorySize", u64::MAX)?;
    if device_memory_size > MAX_REGION_BYTES {
        return Err(f.err(format!(
            "DeviceMemorySize {device_memory_size} is larger than any GPU's memory (rr-tui accepts at most {MAX_REGION_BYTES} bytes)"
        )));
    }
    let device_id = f.device_id()?;
    let (arg_ptrs, arg_offsets) = f.arguments()?;
    if num_args as usize != arg_ptrs.len() {
        return Err(f.err(format!(
            "NumArgs is {num_args} but ArgPtrs lists {} arguments",
            arg_ptrs.len()
        )));
    }
    let (format, start, evidence) = if f.has("BumpAllocVAStart") {
        let s = f.int("BumpAllocVAStart")? as u64;
        if s.checked_add(device_memory_size).is_none() {
            return Err(
                f.err("BumpAllocVAStart + DeviceMemorySize overflows the address space".into())
            );
        }
        let (format, evidence) = classify(&arg_ptrs, s, device_memory_size);
        (format, RegionStart::Recorded(s), evidence)
    } else {
        let inference = StartInference::of(&arg_ptrs, device_memory_size);
        let start = match inference.start() {
            Some((addr, _)) => RegionStart::Inferred { addr, inference },
            None => RegionStart::Unknown(inference),
        };
        let evidence = "no BumpAllocVAStart: kernel-name files without a start address, as LLVM 16 and 17 wrote them".into();
        (RecordFormat::LegacyLlvm16, start, evidence)
    };
    let (num_teams, num_threads) = geometry::launched(
        format,
        num_teams_clause,
        thread_limit_clause,
        loop_trip_count,
        ExecMode::Spmd,
    );
    Ok(Descriptor {
        format,
        name,
        num_args,
        num_teams,
        num_threads,
        shared_memory_size: 0,
        loop_trip_count,
        device_id,
        valloc_addr: start.addr().unwrap_or(0),
        valloc_size: device_memory_size,
        teams_limits: [0, 0],
        threads_limits: [0, 0],
        arg_ptrs,
        arg_offsets,
        cuda: None,
        legacy: Some(Legacy {
            num_teams_clause,
            thread_limit_clause,
            device_memory_size,
            start,
            evidence,
        }),
    })
}

/// The descriptor as the legacy recorder wrote it: compact, keys sorted, no trailing newline.
pub(crate) fn to_json(d: &Descriptor, l: &Legacy) -> String {
    let mut m = Map::new();
    crate::descriptor::insert_common_keys(d, &mut m);
    m.insert("NumTeamsClause".into(), l.num_teams_clause.into());
    m.insert("ThreadLimitClause".into(), l.thread_limit_clause.into());
    m.insert("DeviceMemorySize".into(), l.device_memory_size.into());
    if let RegionStart::Recorded(s) = l.start {
        m.insert("BumpAllocVAStart".into(), (s as i64).into());
    }
    Value::Object(m).to_string()
}

/// Why this record cannot be replayed, if it cannot; `assume_llvm18` accepts records whose
/// generation is undetermined as LLVM 18.
pub fn refusal(d: &Descriptor, assume_llvm18: bool) -> Option<String> {
    match d.format {
        RecordFormat::LegacyLlvm19 => Some(
            "LLVM 19–22 recorded the host addresses of the argument slots (LaunchParams.Ptrs) instead of the \
             argument values; the kernel's arguments are unknown, so this record cannot be replayed \
             (inspect, check and diff still work). Record the kernel again with a current LLVM \
             (LIBOMPTARGET_RECORD=1), or with `rr-tui record` for CUDA programs"
                .into(),
        ),
        RecordFormat::LegacyLlvm18To22 if !d.arg_ptrs.is_empty() && !assume_llvm18 => Some(format!(
            "this LLVM 18–22 record's ArgPtrs may be argument values (LLVM 18) or host addresses of the \
             argument slots (LLVM 19–22): {}. Pass --assume-llvm18 if it was recorded by LLVM 18",
            d.legacy.as_ref().map(|l| l.evidence.as_str()).unwrap_or("")
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
