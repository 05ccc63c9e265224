//! How many bytes a device image handed to the driver by pointer occupies. `cuModuleLoadData`
//! and `cuLibraryLoadData` take an image without its length: the driver reads it by its kind
//! (an ELF cubin, a fatbin or cudart's wrapper around one, NUL-terminated PTX text). A recorder
//! that sees the call through its own entry point must find the same length to keep the image.
//!
//! The parsing works on a `read(offset, len)` callback, so that the caller decides how memory is
//! reached (the program's memory in the recorder, a slice in tests); every offset is checked
//! arithmetic, and nothing longer than [`crate::fsio::MAX_IMAGE_BYTES`] is accepted.

use crate::fsio::MAX_IMAGE_BYTES;

/// The fatbin container's magic (`__cudaFatMAGIC2`).
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// cudart's `__fatBinC_Wrapper_t` magic: `{ magic, version, const fatbin *data, … }`.
pub const FATBIN_WRAPPER_MAGIC: u32 = 0x4662_43B1;
/// ELF section type of sections that occupy no bytes in the file (`.bss`).
const SHT_NOBITS: u32 = 8;

/// Where an image handed over by pointer lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// The image is the first `len` bytes.
    Bytes(u64),
    /// PTX text: up to its terminating NUL (the caller measures it).
    Text,
    /// cudart's wrapper: the image is the fatbin at this address.
    Wrapped(u64),
}

/// The extent of the image whose bytes `read(offset, len)` returns (`None` where they cannot be
/// read). `None` when the kind is unknown or the length implausible.
pub fn extent(read: &dyn Fn(u64, usize) -> Option<Vec<u8>>) -> Option<Extent> {
    let head = read(0, 4)?;
    let magic = u32::from_le_bytes(head.get(..4)?.try_into().ok()?);
    if head.starts_with(b"\x7fELF") {
        return elf_len(read).map(Extent::Bytes);
    }
    match magic {
        FATBIN_MAGIC => {
            let h = read(0, 16)?;
            let header = u64::from(u16::from_le_bytes([*h.get(6)?, *h.get(7)?]));
            let body = u64::from_le_bytes(h.get(8..16)?.try_into().ok()?);
            plausible(header.checked_add(body)?).map(Extent::Bytes)
        }
        FATBIN_WRAPPER_MAGIC => {
            let h = read(0, 16)?;
            let data = u64::from_le_bytes(h.get(8..16)?.try_into().ok()?);
            (data != 0).then_some(Extent::Wrapped(data))
        }
        // PTX starts with text: a comment, a directive or white space.
        _ if head
            .iter()
            .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace()) =>
        {
            Some(Extent::Text)
        }
        _ => None,
    }
}

fn plausible(len: u64) -> Option<u64> {
    (len > 0 && len <= MAX_IMAGE_BYTES).then_some(len)
}

/// An ELF64 image's length: the furthest end of its header tables and of the sections and
/// segments that occupy file bytes.
fn elf_len(read: &dyn Fn(u64, usize) -> Option<Vec<u8>>) -> Option<u64> {
    let h = read(0, 64)?;
    let u16_at =
        |b: &[u8], o: usize| Some(u64::from(u16::from_le_bytes([*b.get(o)?, *b.get(o + 1)?])));
    let u32_at = |b: &[u8], o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |b: &[u8], o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
    if h.get(4) != Some(&2) {
        return None; // not ELFCLASS64
    }
    let (phoff, shoff) = (u64_at(&h, 32)?, u64_at(&h, 40)?);
    let (phentsize, mut phnum) = (u16_at(&h, 54)?, u16_at(&h, 56)?);
    let (shentsize, mut shnum) = (u16_at(&h, 58)?, u16_at(&h, 60)?);
    // Extended numbering: past 0xff00 sections (or 0xffff segments) the counts live in the
    // first section header (sh_size, sh_info).
    if (shnum == 0 || phnum == 0xffff) && shoff != 0 && shentsize >= 48 {
        let first = read(shoff, 48)?;
        if shnum == 0 {
            shnum = u64_at(&first, 32)?;
        }
        if phnum == 0xffff {
            phnum = u64::from(u32_at(&first, 44)?);
        }
    }
    let table_end = |off: u64, size: u64, n: u64| off.checked_add(size.checked_mul(n)?);
    let mut len = 64u64
        .max(table_end(phoff, phentsize, phnum)?)
        .max(table_end(shoff, shentsize, shnum)?);
    plausible(len)?;
    // Section headers: sh_type at 4, sh_offset at 24, sh_size at 32 (64 bytes each).
    if shnum > 0 && shentsize >= 40 {
        let table = read(shoff, usize::try_from(shentsize.checked_mul(shnum)?).ok()?)?;
        for s in table.chunks_exact(usize::try_from(shentsize).ok()?) {
            if u32_at(s, 4)? != SHT_NOBITS {
                len = len.max(u64_at(s, 24)?.checked_add(u64_at(s, 32)?)?);
            }
        }
    }
    // Program headers: p_offset at 8, p_filesz at 32.
    if phnum > 0 && phentsize >= 40 {
        let table = read(phoff, usize::try_from(phentsize.checked_mul(phnum)?).ok()?)?;
        for p in table.chunks_exact(usize::try_from(phentsize).ok()?) {
            len = len.max(u64_at(p, 8)?.checked_add(u64_at(p, 32)?)?);
        }
    }
    plausible(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(bytes: &[u8]) -> impl Fn(u64, usize) -> Option<Vec<u8>> + '_ {
        move |off, len| {
            let start = usize::try_from(off).ok()?;
            bytes
                .get(start..start.checked_add(len)?)
                .map(<[u8]>::to_vec)
        }
    }

    #[test]
    fn a_cubin_is_exactly_as_long_as_its_file() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cubin =
            std::fs::read(root.join("record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin"))
                .unwrap();
        let mut padded = cubin.clone();
        padded.extend_from_slice(&[0xAB; 4096]); // what follows in memory is not the image
        assert_eq!(
            extent(&over(&padded)),
            Some(Extent::Bytes(cubin.len() as u64))
        );
        // Cut short, its tables cannot be read: no length rather than a wrong one.
        assert_eq!(extent(&over(&cubin[..cubin.len() / 2])), None);
    }

    #[test]
    fn fatbins_wrappers_and_ptx_are_told_apart() {
        let mut fatbin = FATBIN_MAGIC.to_le_bytes().to_vec();
        fatbin.extend_from_slice(&1u16.to_le_bytes()); // version
        fatbin.extend_from_slice(&16u16.to_le_bytes()); // header size
        fatbin.extend_from_slice(&100u64.to_le_bytes()); // body size
        assert_eq!(extent(&over(&fatbin)), Some(Extent::Bytes(116)));

        let mut wrapper = FATBIN_WRAPPER_MAGIC.to_le_bytes().to_vec();
        wrapper.extend_from_slice(&1u32.to_le_bytes());
        wrapper.extend_from_slice(&0x7000_1000u64.to_le_bytes());
        assert_eq!(extent(&over(&wrapper)), Some(Extent::Wrapped(0x7000_1000)));

        assert_eq!(
            extent(&over(b"//\n// Generated by NVIDIA\n.version 8.0")),
            Some(Extent::Text)
        );
        assert_eq!(extent(&over(&[0, 1, 2, 3, 4])), None);
        assert_eq!(extent(&over(b"ab")), None, "too short to tell");
    }

    #[test]
    fn extended_section_numbering_counts_the_sections_from_the_first_header() {
        let mut elf = vec![0u8; 400];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[40..48].copy_from_slice(&64u64.to_le_bytes()); // e_shoff
        elf[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize; e_shnum stays 0
        elf[64 + 32..64 + 40].copy_from_slice(&2u64.to_le_bytes()); // section 0: the count
        let second = 128;
        elf[second + 4] = 1; // PROGBITS
        elf[second + 24..second + 32].copy_from_slice(&300u64.to_le_bytes());
        elf[second + 32..second + 40].copy_from_slice(&50u64.to_le_bytes());
        assert_eq!(extent(&over(&elf)), Some(Extent::Bytes(350)));
    }

    #[test]
    fn hostile_headers_give_no_length() {
        // A fatbin claiming more than the image limit.
        let mut huge = FATBIN_MAGIC.to_le_bytes().to_vec();
        huge.extend_from_slice(&[1, 0, 16, 0]);
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(extent(&over(&huge)), None);
        // An ELF whose section table lies beyond any plausible image.
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        elf[58..60].copy_from_slice(&64u16.to_le_bytes());
        elf[60..62].copy_from_slice(&3u16.to_le_bytes());
        assert_eq!(extent(&over(&elf)), None);
        // A 32-bit ELF is not a device image.
        elf[4] = 1;
        assert_eq!(extent(&over(&elf)), None);
    }
}
