//! The `.globals` file: module globals captured by name (llvm-record-format.md §3).
//!
//! ```text
//! u32 NumGlobals
//! NumGlobals × { u32 NameLength (incl. NUL); u64 Size; u8 Name[NameLength]; u8 Data[Size] }
//! ```
//! Little-endian, no padding. rr-tui writes the same layout for its own records.
//!
//! LLVM 18–22 (legacy records) wrote another layout, without a count, ended by the file's end
//! (`RecordReplayTy::dumpGlobals`; FORMAT.md, "Legacy LLVM records"):
//!
//! ```text
//! repeated { u8 Name[] (NUL-terminated); u32 Size; u8 Data[Size] }
//! ```

use std::path::Path;

use crate::error::{Error, Result};
use crate::limits::MAX_SYMBOL_NAME_BYTES;

/// A module with more globals than this is not plausible (large CUDA programs have hundreds):
/// a file of millions of one-byte entries would cost gigabytes to index and to report on.
pub const MAX_GLOBALS: usize = 1 << 16;

fn too_many(path: &Path) -> Error {
    Error::format(
        path,
        format!("holds more than {MAX_GLOBALS} globals: not a module's globals, so it is not read"),
    )
}

/// All the names of one module's globals together are at most this many bytes ([`MAX_GLOBALS`]
/// names of 256 bytes): every command copies each name into the lines that show it (escaped,
/// up to four times longer), so the names, not the data, decide what reading a file costs.
pub const MAX_GLOBAL_NAMES_BYTES: usize = 16 << 20;

/// The bounds on global names both layouts apply, entry by entry, before a name is copied.
struct NameBudget<'p> {
    path: &'p Path,
    total: usize,
}

impl<'p> NameBudget<'p> {
    fn new(path: &'p Path) -> Self {
        NameBudget { path, total: 0 }
    }

    /// Admit the name of global #`index` (`len` bytes, without its NUL) at `offset`.
    fn admit(&mut self, index: usize, offset: usize, len: usize) -> Result<()> {
        self.total = self.total.saturating_add(len);
        let problem = if len > MAX_SYMBOL_NAME_BYTES {
            format!(
                "the name of global #{index} at offset {offset} has {len} bytes; a symbol name has at most \
                 {MAX_SYMBOL_NAME_BYTES}: not a module's globals, so it is not read"
            )
        } else if self.total > MAX_GLOBAL_NAMES_BYTES {
            format!(
                "the names of its first {} globals have more than {MAX_GLOBAL_NAMES_BYTES} bytes: not a \
                 module's globals, so it is not read",
                index + 1
            )
        } else {
            return Ok(());
        };
        Err(Error::format(self.path, problem))
    }
}

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
        if count as usize > MAX_GLOBALS {
            return Err(too_many(path));
        }
        let mut names = NameBudget::new(path);
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
            names.admit(i as usize, pos, name_len - 1)?;
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

    /// Parse the count-less layout of LLVM 18–22: entries until the end of the file.
    pub fn parse_legacy(bytes: Vec<u8>, path: &Path) -> Result<Globals> {
        let err = |p: String| Error::format(path, p);
        let mut pos = 0usize;
        let mut names = NameBudget::new(path);
        let mut entries = Vec::new();
        while pos < bytes.len() {
            let i = entries.len();
            if i == MAX_GLOBALS {
                return Err(too_many(path));
            }
            let name_len = memchr::memchr(0, &bytes[pos..]).ok_or_else(|| {
                err(format!(
                    "truncated: the name of global #{i} at offset {pos} has no NUL terminator"
                ))
            })?;
            if name_len == 0 {
                return Err(err(format!(
                    "global #{i} at offset {pos} has an empty name"
                )));
            }
            names.admit(i, pos, name_len)?;
            let name = String::from_utf8_lossy(&bytes[pos..pos + name_len]).into_owned();
            pos += name_len + 1;
            let size_end = pos
                .checked_add(4)
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| {
                    err(format!(
                        "truncated: Size of global {name} at offset {pos} needs 4 bytes, file has {}",
                        bytes.len()
                    ))
                })?;
            let size = u32::from_le_bytes(bytes[pos..size_end].try_into().expect("4 bytes"));
            pos = size_end;
            let data_end = pos
                .checked_add(size as usize)
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| {
                    err(format!(
                        "truncated: data of global {name} at offset {pos} needs {size} bytes, file has {}",
                        bytes.len()
                    ))
                })?;
            entries.push(Global {
                name,
                size: size as u64,
                data_offset: pos,
            });
            pos = data_end;
        }
        Ok(Globals { entries, bytes })
    }

    /// Read the count-less layout of LLVM 18–22.
    pub fn read_legacy(path: &Path) -> Result<Globals> {
        let bytes =
            crate::fsio::read_limited(path, crate::fsio::MAX_GLOBALS_BYTES, "globals file")?;
        Globals::parse_legacy(bytes, path)
    }

    /// Read an instance's `.globals` in the layout its descriptor's format uses.
    pub fn read_for(d: &crate::Descriptor, path: &Path) -> Result<Globals> {
        if d.format.is_legacy() {
            Globals::read_legacy(path)
        } else {
            Globals::read(path)
        }
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

    /// The count-less LLVM 18–22 layout (for tests and fixtures).
    pub fn encode_legacy(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in entries {
            out.extend_from_slice(name.as_bytes());
            out.push(0);
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
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

    #[test]
    fn legacy_layout_as_llvm18_wrote_it() {
        // record-fixtures/llvm18-two-kernels/rr_saxpy.globals: g_scale = 2.5f, c_bias[8].
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../record-fixtures/llvm18-two-kernels/rr_saxpy.globals");
        let g = Globals::read_legacy(&path).unwrap();
        let names: Vec<_> = g
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.size))
            .collect();
        assert_eq!(names, vec![("g_scale", 4), ("c_bias", 32)]);
        assert_eq!(g.data(&g.entries[0]), 2.5f32.to_le_bytes());
        assert!(Globals::parse_legacy(vec![], Path::new("e"))
            .unwrap()
            .entries
            .is_empty());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            Globals::encode_legacy(&[
                ("g_scale", g.data(&g.entries[0])),
                ("c_bias", g.data(&g.entries[1]))
            ]),
            bytes
        );
    }

    #[test]
    fn legacy_damage_is_named() {
        let full = Globals::encode_legacy(&[("a", &[1, 2, 3, 4])]);
        let e = |b: &[u8]| {
            Globals::parse_legacy(b.to_vec(), Path::new("x.globals"))
                .unwrap_err()
                .to_string()
        };
        assert!(e(&full[..full.len() - 1]).contains("truncated: data of global a"));
        assert!(e(&full[..4]).contains("truncated: Size of global a"));
        assert!(e(b"abc").contains("no NUL terminator"));
        assert!(e(b"\0\0\0\0\0").contains("empty name"));
    }

    /// Both layouts bound each name and all names together by the same rule, before copying.
    #[test]
    fn names_are_bounded_alike_in_both_layouts() {
        type Parse = fn(Vec<u8>, &Path) -> Result<Globals>;
        type Encode = fn(&[(&str, &[u8])]) -> Vec<u8>;
        let layouts: [(Parse, Encode); 2] = [
            (Globals::parse, Globals::encode),
            (Globals::parse_legacy, Globals::encode_legacy),
        ];
        let longest = "n".repeat(MAX_SYMBOL_NAME_BYTES);
        let too_long = format!("{longest}n");
        // Distinct names at the longest allowed, as many as reach past the budget.
        let many: Vec<String> = (0..=MAX_GLOBAL_NAMES_BYTES / MAX_SYMBOL_NAME_BYTES)
            .map(|i| format!("{i:08}{}", &longest[8..]))
            .collect();
        for (parse, encode) in layouts {
            let g = parse(encode(&[(&longest, &[1])]), Path::new("x.globals")).unwrap();
            assert_eq!(g.entries[0].name.len(), MAX_SYMBOL_NAME_BYTES);
            let e = parse(
                encode(&[("a", &[1]), (&too_long, &[1])]),
                Path::new("x.globals"),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.starts_with("x.globals: the name of global #1 at offset")
                    && e.contains(&format!("has {} bytes", MAX_SYMBOL_NAME_BYTES + 1)),
                "{e}"
            );
            let entries: Vec<(&str, &[u8])> =
                many.iter().map(|n| (n.as_str(), &[1u8][..])).collect();
            let e = parse(encode(&entries), Path::new("x.globals"))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("x.globals: the names of its first")
                    && e.contains(&format!("more than {MAX_GLOBAL_NAMES_BYTES} bytes")),
                "{e}"
            );
            let fits = &entries[..entries.len() - 1];
            assert_eq!(
                parse(encode(fits), Path::new("x")).unwrap().entries.len(),
                fits.len()
            );
        }
    }

    proptest! {
        /// Hostile bytes never panic, and what parses lies inside the file.
        #[test]
        fn legacy_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            if let Ok(g) = Globals::parse_legacy(bytes.clone(), Path::new("p")) {
                for e in &g.entries {
                    prop_assert!(e.data_offset + e.size as usize <= bytes.len());
                    let _ = g.data(e);
                }
            }
        }

        /// Whatever is encoded parses back to the same names and data, to the byte.
        #[test]
        fn legacy_round_trips(
            entries in proptest::collection::vec(("[a-z_][a-z0-9_]{0,12}", proptest::collection::vec(any::<u8>(), 0..40)), 0..6)
        ) {
            let borrowed: Vec<(&str, &[u8])> = entries.iter().map(|(n, d)| (n.as_str(), d.as_slice())).collect();
            let g = Globals::parse_legacy(Globals::encode_legacy(&borrowed), Path::new("p")).unwrap();
            prop_assert_eq!(g.entries.len(), entries.len());
            for (e, (name, data)) in g.entries.iter().zip(&entries) {
                prop_assert_eq!(&e.name, name);
                prop_assert_eq!(g.data(e), data.as_slice());
            }
        }

        /// Huge sizes in an otherwise valid entry are truncation errors, not panics.
        #[test]
        fn legacy_huge_sizes_never_panic(size in any::<u32>(), tail in 0usize..16) {
            let mut b = b"g\0".to_vec();
            b.extend_from_slice(&size.to_le_bytes());
            b.resize(b.len() + tail, 7);
            let r = Globals::parse_legacy(b, Path::new("p"));
            prop_assert_eq!(r.is_ok(), size as usize == tail);
        }

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
