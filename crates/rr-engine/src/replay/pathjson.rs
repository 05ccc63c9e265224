//! Paths in replay jobs, without loss: a path that is UTF-8 is a JSON string, any other (a
//! record directory named in other bytes, which the explorer lists and replays) is the array of
//! its bytes. serde's own `PathBuf` refuses such a path, and `display()` would change it.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A path as it travels: text when it is text, its bytes otherwise.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    Text(String),
    Bytes(Vec<u8>),
}

fn to_wire(p: &Path) -> Wire {
    match p.to_str() {
        Some(s) => Wire::Text(s.to_string()),
        None => Wire::Bytes(p.as_os_str().as_bytes().to_vec()),
    }
}

fn from_wire(w: Wire) -> PathBuf {
    match w {
        Wire::Text(s) => PathBuf::from(s),
        Wire::Bytes(b) => PathBuf::from(OsString::from_vec(b)),
    }
}

pub fn serialize<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    to_wire(p).serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    Wire::deserialize(d).map(from_wire)
}

/// The same for an optional path (`null` when absent).
pub mod option {
    use super::*;

    pub fn serialize<S: Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
        p.as_deref().map(to_wire).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
        Option::<Wire>::deserialize(d).map(|w| w.map(from_wire))
    }
}
