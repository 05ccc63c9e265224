//! The JSON reader of the object descriptors: every message names where the value is
//! (`Objects[0].Resource.Width`), so a hostile record's problem is found without a debugger.

use serde_json::{Map, Value};

/// A JSON object read with messages that name where it is (`Objects[0].Resource`).
pub(super) struct Obj<'a> {
    map: &'a Map<String, Value>,
    at: &'a str,
}

impl<'a> Obj<'a> {
    pub(super) fn new(v: &'a Value, at: &'a str) -> Result<Obj<'a>, String> {
        v.as_object()
            .map(|map| Obj { map, at })
            .ok_or_else(|| format!("{at} must be an object"))
    }
    pub(super) fn opt(&self, k: &str) -> Option<&'a Value> {
        self.map.get(k)
    }
    pub(super) fn get(&self, k: &str) -> Result<&'a Value, String> {
        self.map
            .get(k)
            .ok_or_else(|| format!("{}.{k} is missing", self.at))
    }
    pub(super) fn uint(&self, k: &str, max: u64) -> Result<u64, String> {
        let v = self
            .get(k)?
            .as_u64()
            .ok_or_else(|| format!("{}.{k} must be a non-negative integer", self.at))?;
        if v > max {
            return Err(format!("{}.{k} is {v}, more than {max}", self.at));
        }
        Ok(v)
    }
    /// An address, written as LLVM writes addresses (signed 64-bit).
    pub(super) fn addr(&self, k: &str) -> Result<u64, String> {
        let v = self.get(k)?;
        v.as_i64()
            .map(|a| a as u64)
            .or_else(|| v.as_u64())
            .ok_or_else(|| format!("{}.{k} must be an integer address", self.at))
    }
    pub(super) fn string(&self, k: &str) -> Result<&'a str, String> {
        self.get(k)?
            .as_str()
            .ok_or_else(|| format!("{}.{k} must be a string", self.at))
    }
    /// A 64-bit number written as a decimal string (JSON readers lose integers above 2^53).
    pub(super) fn decimal(&self, k: &str) -> Result<u64, String> {
        self.get(k)?
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| {
                format!(
                    "{}.{k} must be a decimal 64-bit number in a string",
                    self.at
                )
            })
    }
    pub(super) fn u32_array<const N: usize>(&self, k: &str) -> Result<[u32; N], String> {
        let a = self
            .get(k)?
            .as_array()
            .filter(|a| a.len() == N)
            .ok_or_else(|| format!("{}.{k} must be an array of {N} integers", self.at))?;
        let mut out = [0u32; N];
        for (o, v) in out.iter_mut().zip(a) {
            *o = v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("{}.{k} must hold 32-bit unsigned integers", self.at))?;
        }
        Ok(out)
    }
}
