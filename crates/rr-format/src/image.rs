//! Device images: what `.image` (LLVM) or `ImageFile` (rr-tui) holds.
//!
//! libomptarget stores the loaded image, on NVIDIA an ELF cubin (`e_machine == EM_CUDA`). We also
//! accept a fatbin (what `cudaMalloc`-era programs load) and PTX text (what JIT paths load).

use object::read::elf::{ElfFile64, FileHeader};
use object::{Endianness, Object, ObjectSymbol, SymbolKind};
use std::path::Path;

use crate::error::{Error, Result};
use crate::image_extent::FATBIN_MAGIC;

pub const EM_CUDA: u16 = 190;
/// LLVM bitcode (`BC\xC0\xDE`): what LLVM 18–19 saved as `.image` for JIT-compiled kernels.
const BITCODE_MAGIC: &[u8] = b"BC\xC0\xDE";
/// `STO_CUDA_ENTRY` in `st_other`: the function is a kernel entry point.
const STO_CUDA_ENTRY: u8 = 0x10;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum ImageKind {
    /// An ELF cubin for one SM architecture (e.g. 90 for sm_90).
    Cubin {
        sm: u32,
        abi_version: u8,
    },
    Fatbin,
    Ptx {
        target: Option<String>,
    },
}

impl ImageKind {
    pub fn describe(&self) -> String {
        match self {
            ImageKind::Cubin { sm, .. } => format!("CUDA ELF cubin, sm_{sm}"),
            ImageKind::Fatbin => "CUDA fatbin".into(),
            ImageKind::Ptx { target: Some(t) } => format!("PTX text, target {t}"),
            ImageKind::Ptx { target: None } => "PTX text".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageSymbol {
    pub name: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageInfo {
    pub kind: ImageKind,
    pub size: u64,
    /// Kernel entry points (a cubin's symbols; a PTX text's `.entry` lines).
    pub kernels: Vec<String>,
    /// Whether `kernels` lists every kernel: a cubin's always, a PTX text's when all of it
    /// was read as text (not when only its head is UTF-8), a fatbin's never.
    #[serde(skip)]
    pub kernels_complete: bool,
    /// Global variables with their sizes (cubin only).
    pub globals: Vec<ImageSymbol>,
}

impl ImageInfo {
    pub fn has_kernel(&self, name: &str) -> Option<bool> {
        match self.kind {
            ImageKind::Cubin { .. } => Some(self.kernels.iter().any(|k| k == name)),
            ImageKind::Ptx { .. } if self.kernels_complete => {
                Some(self.kernels.iter().any(|k| k == name))
            }
            ImageKind::Ptx { .. } | ImageKind::Fatbin => None,
        }
    }
}

/// Identify an image and list its symbols. `path` is used in messages only.
pub fn identify(bytes: &[u8], path: &Path) -> Result<ImageInfo> {
    let err = |p: String| Error::format(path, p);
    let size = bytes.len() as u64;
    if bytes.starts_with(b"\x7fELF") {
        if bytes.len() < 20 {
            return Err(err("truncated ELF header".into()));
        }
        let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
        if machine != EM_CUDA {
            return Err(err(format!(
                "not a device image: ELF for machine {machine}{}, not CUDA ({EM_CUDA})",
                if machine == 62 {
                    " (x86-64 host code)"
                } else {
                    ""
                }
            )));
        }
        let elf = ElfFile64::<Endianness>::parse(bytes)
            .map_err(|e| err(format!("malformed CUDA ELF: {e}")))?;
        let header = elf.elf_header();
        let flags = header.e_flags(elf.endian());
        let abi_version = header.e_ident().abi_version;
        // CUDA ABI v2 (EI_ABIVERSION 8, CUDA ≥ 12.8 toolchains) moved the SM to bits 8..16.
        let sm = if abi_version >= 8 {
            (flags >> 8) & 0xff
        } else {
            flags & 0xff
        };
        let mut kernels = Vec::new();
        let mut globals = Vec::new();
        for sym in elf.symbols() {
            let Ok(name) = sym.name() else { continue };
            if name.is_empty() {
                continue;
            }
            let other = match sym.flags() {
                object::SymbolFlags::Elf { st_other, .. } => st_other,
                _ => 0,
            };
            match sym.kind() {
                SymbolKind::Text if other & STO_CUDA_ENTRY != 0 => kernels.push(name.to_owned()),
                SymbolKind::Data if !name.starts_with('$') && !name.starts_with(".") => globals
                    .push(ImageSymbol {
                        name: name.to_owned(),
                        size: sym.size(),
                    }),
                _ => {}
            }
        }
        return Ok(ImageInfo {
            kind: ImageKind::Cubin { sm, abi_version },
            size,
            kernels,
            kernels_complete: true,
            globals,
        });
    }
    if bytes.starts_with(BITCODE_MAGIC) {
        return Err(err(
            "LLVM bitcode, not a device image: the record was JIT-compiled from IR (LLVM 18–19 saved the \
             bitcode); rr-tui cannot JIT it: give the compiled cubin"
                .into(),
        ));
    }
    if bytes.len() >= 4
        && u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) == FATBIN_MAGIC
    {
        return Ok(ImageInfo {
            kind: ImageKind::Fatbin,
            size,
            kernels: vec![],
            kernels_complete: false,
            globals: vec![],
        });
    }
    let head = &bytes[..bytes.len().min(64 * 1024)];
    if let Ok(text) = std::str::from_utf8(head) {
        if text.contains(".version") && text.contains(".target") {
            let target = text
                .lines()
                .find_map(|l| l.trim().strip_prefix(".target"))
                .map(|t| t.trim().split(',').next().unwrap_or("").trim().to_owned());
            // Every `.entry` of the text when all of it is text (the kernels a name is
            // checked against), else those of its head.
            let whole = std::str::from_utf8(bytes).ok();
            let kernels = whole
                .unwrap_or(text)
                .lines()
                .filter_map(|l| {
                    l.trim()
                        .strip_prefix(".visible .entry")
                        .or_else(|| l.trim().strip_prefix(".entry"))
                })
                .map(|rest| {
                    rest.trim()
                        .split(['(', ' '])
                        .next()
                        .unwrap_or("")
                        .to_owned()
                })
                .filter(|n| !n.is_empty())
                .collect();
            return Ok(ImageInfo {
                kind: ImageKind::Ptx { target },
                size,
                kernels,
                kernels_complete: whole.is_some(),
                globals: vec![],
            });
        }
    }
    Err(err(
        "not a device image: neither a CUDA ELF cubin, a fatbin nor PTX text".into(),
    ))
}

/// The initial bytes of a global variable a cubin defines (`None` when it is not a cubin, has
/// no such symbol, or the symbol lies outside its section's data, as `.bss` symbols do).
pub fn global_initial_bytes(bytes: &[u8], name: &str) -> Option<Vec<u8>> {
    use object::ObjectSection;
    if !bytes.starts_with(b"\x7fELF") {
        return None;
    }
    let elf = ElfFile64::<Endianness>::parse(bytes).ok()?;
    let sym = elf.symbols().find(|s| s.name() == Ok(name))?;
    let section = elf.section_by_index(sym.section_index()?).ok()?;
    let data = section.data().ok()?;
    // Relocatable cubins give symbol values relative to their section.
    let start = usize::try_from(sym.address().checked_sub(section.address())?).ok()?;
    let end = start.checked_add(usize::try_from(sym.size()).ok()?)?;
    data.get(start..end).map(<[u8]>::to_vec)
}

pub fn read(path: &Path) -> Result<(Vec<u8>, ImageInfo)> {
    use std::io::Read;
    let (mut file, len) =
        crate::fsio::open_limited(path, crate::fsio::MAX_IMAGE_BYTES, "device image")?;
    // The first bytes tell an image from anything else: a large file that is none is refused
    // before it is read.
    let mut bytes = Vec::with_capacity((len as usize).min(4096));
    Read::by_ref(&mut file)
        .take(4096)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    let binary = bytes.starts_with(b"\x7fELF")
        || bytes.starts_with(&FATBIN_MAGIC.to_le_bytes())
        || bytes.starts_with(BITCODE_MAGIC);
    if !binary && bytes.contains(&0) {
        // Not text either (PTX is text): identify says what it is not.
        identify(&bytes, path)?;
    }
    bytes.reserve((len as usize).saturating_sub(bytes.len()));
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > crate::fsio::MAX_IMAGE_BYTES {
        return Err(Error::format(path, "grew while being read"));
    }
    let info = identify(&bytes, path)?;
    Ok((bytes, info))
}

/// The device's SM (major*10+minor) can run a cubin built for `image_sm` when the major versions
/// match and the device's minor is not older (the plugin's `isELFCompatible`).
pub fn sm_compatible(image_sm: u32, device_sm: u32) -> bool {
    image_sm / 10 == device_sm / 10 && device_sm % 10 >= image_sm % 10
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ptx_and_garbage() {
        let ptx = b"//\n.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry _Z3addPf(\n";
        let i = identify(ptx, Path::new("a")).unwrap();
        assert_eq!(
            i.kind,
            ImageKind::Ptx {
                target: Some("sm_90".into())
            }
        );
        assert_eq!(i.kernels, vec!["_Z3addPf".to_string()]);
        assert_eq!(i.has_kernel("_Z3addPf"), Some(true));
        assert_eq!(i.has_kernel("other"), Some(false));
        // An entry past the head counts; a text whose tail is not UTF-8 gives no verdict.
        let mut long = ptx.to_vec();
        long.extend(b"// padding\n".repeat(8000));
        long.extend_from_slice(b".visible .entry late(\n");
        assert_eq!(
            identify(&long, Path::new("a")).unwrap().has_kernel("late"),
            Some(true)
        );
        long.extend_from_slice(b"\xff\n");
        assert_eq!(
            identify(&long, Path::new("a")).unwrap().has_kernel("late"),
            None
        );
        let e = identify(b"hello", Path::new("a.image"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("a.image: not a device image"), "{e}");
        let mut host = b"\x7fELF".to_vec();
        host.resize(64, 0);
        host[18] = 62;
        assert!(identify(&host, Path::new("h"))
            .unwrap_err()
            .to_string()
            .contains("x86-64"));
        let e = identify(b"BC\xC0\xDE\x35\x14", Path::new("k.image"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("LLVM bitcode"), "{e}");
        assert_eq!(global_initial_bytes(b"BC\xC0\xDE", "x"), None);
        assert_eq!(
            identify(&0xBA55_ED50u32.to_le_bytes(), Path::new("f"))
                .unwrap()
                .kind,
            ImageKind::Fatbin
        );
    }

    #[test]
    fn initial_values_of_globals_come_from_the_cubin() {
        let cubin = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin"),
        )
        .unwrap();
        // tests/gpu/kernels.cu: `__device__ float g_scale = 1.0f;`
        assert_eq!(
            global_initial_bytes(&cubin, "g_scale"),
            Some(1.0f32.to_le_bytes().to_vec())
        );
        assert_eq!(global_initial_bytes(&cubin, "rr_saxpy_exec_mode"), None);
        assert_eq!(crate::legacy::ExecMode::of_kernel(&cubin, "rr_saxpy"), None);
    }

    #[test]
    fn compatibility() {
        assert!(sm_compatible(90, 90));
        assert!(sm_compatible(80, 86));
        assert!(!sm_compatible(86, 80));
        assert!(!sm_compatible(80, 90));
    }

    proptest! {
        #[test]
        fn never_panics(mut bytes in proptest::collection::vec(any::<u8>(), 0..512), elf in any::<bool>()) {
            if elf && bytes.len() >= 20 {
                bytes[..4].copy_from_slice(b"\x7fELF");
                bytes[4] = 2;
                bytes[5] = 1;
                bytes[18] = 190;
                bytes[19] = 0;
            }
            let _ = identify(&bytes, Path::new("p"));
            let _ = global_initial_bytes(&bytes, "k_exec_mode");
        }
    }
}
