//! The `.globals` file: module globals captured by name (llvm-record-format.md §3).
//!
//! ```text
//! u32 NumGlobals
//! NumGlobals × { u32 NameLength (incl. NUL); u64 Size; u8 Name[NameLength]; u8 Data[Size] }
//! ```
//! Little-endian, no padding. rr-tui writes the same layout for its own records.

use std::path::Path;

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Global {
    pub name: String,
    pub size: u64,
    /// Offset of the data in the `.globals` file.
    #[serde(skip)]
    pub data_offset: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Globals {
    pub entries: Vec<Global>,
    bytes: Vec<u8>,
}

impl Globals {
    pub fn parse(bytes: Vec<u8>, path: &Path) -> Result<Globals> {
        let err = |p: String| Error::format(path, p);
        let mut pos = 0usize;
        let take = |pos: &mut usize, n: usize, what: &str| -> Result<std::ops::Range<usize>> {
            let end = pos
                .checked_add(n)
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| {
                    err(format!(
                        "truncated: {what} at offset {} needs {n} bytes, file has {}",
                        *pos,
                        bytes.len()
                    ))
                })?;
            let r = *pos..end;
            *pos = end;
            Ok(r)
        };
        let count = u32::from_le_bytes(
            bytes[take(&mut pos, 4, "NumGlobals")?]
                .try_into()
                .expect("4 bytes"),
        );
        let mut entries = Vec::new();
        for i in 0..count {
            let name_len = u32::from_le_bytes(
                bytes[take(&mut pos, 4, "NameLength")?]
                    .try_into()
                    .expect("4 bytes"),
            ) as usize;
            let size = u64::from_le_bytes(
                bytes[take(&mut pos, 8, "Size")?]
                    .try_into()
                    .expect("8 bytes"),
            );
            if name_len == 0 {
                return Err(err(format!("global #{i} has an empty name (NameLength 0)")));
            }
            let name_bytes = &bytes[take(&mut pos, name_len, "Name")?];
            if name_bytes[name_len - 1] != 0 || name_bytes[..name_len - 1].contains(&0) {
                return Err(err(format!("global #{i}: name is not NUL-terminated")));
            }
            let name = String::from_utf8_lossy(&name_bytes[..name_len - 1]).into_owned();
            let size_usize = usize::try_from(size)
                .map_err(|_| err(format!("global {name}: size {size} is impossible")))?;
            let data = take(&mut pos, size_usize, &format!("data of global {name}"))?;
            entries.push(Global {
                name,
                size,
                data_offset: data.start,
            });
        }
        if pos != bytes.len() {
            return Err(err(format!(
                "{} unexpected bytes after the last of {count} globals",
                bytes.len() - pos
            )));
        }
        Ok(Globals { entries, bytes })
    }

    pub fn read(path: &Path) -> Result<Globals> {
        let bytes =
            crate::fsio::read_limited(path, crate::fsio::MAX_GLOBALS_BYTES, "globals file")?;
        Globals::parse(bytes, path)
    }

    pub fn data(&self, g: &Global) -> &[u8] {
        &self.bytes[g.data_offset..g.data_offset + g.size as usize]
    }

    pub fn encode(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = (entries.len() as u32).to_le_bytes().to_vec();
        for (name, data) in entries {
            out.extend_from_slice(&(name.len() as u32 + 1).to_le_bytes());
            out.extend_from_slice(&(data.len() as u64).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.push(0);
            out.extend_from_slice(data);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip() {
        let bytes = Globals::encode(&[
            ("__omp_rtl_device_environment", &[1, 2, 3, 4]),
            ("scale", &[0; 8]),
        ]);
        let g = Globals::parse(bytes, Path::new("g")).unwrap();
        assert_eq!(g.entries.len(), 2);
        assert_eq!(g.entries[0].name, "__omp_rtl_device_environment");
        assert_eq!(g.data(&g.entries[0]), &[1, 2, 3, 4]);
        assert_eq!(g.entries[1].size, 8);
    }

    #[test]
    fn truncation_is_reported() {
        let mut bytes = Globals::encode(&[("a", &[1, 2, 3, 4])]);
        bytes.pop();
        let e = Globals::parse(bytes, Path::new("x.globals"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("x.globals: truncated: data of global a"),
            "{e}"
        );
        let e = Globals::parse(vec![1, 0], Path::new("x.globals"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("NumGlobals"), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = Globals::parse(bytes, Path::new("p"));
        }

        #[test]
        fn huge_sizes_never_panic(count in 0u32..4, name_len in any::<u32>(), size in any::<u64>()) {
            let mut b = count.to_le_bytes().to_vec();
            b.extend_from_slice(&name_len.to_le_bytes());
            b.extend_from_slice(&size.to_le_bytes());
            b.extend_from_slice(b"ab\0");
            let _ = Globals::parse(b, Path::new("p"));
        }
    }
}
