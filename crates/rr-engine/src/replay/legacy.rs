//! Making a legacy record (LLVM 16–22) replayable: refuse what cannot be replayed (19–22: the
//! argument values are lost), settle the region start of a 16–17 record (given, or inferred
//! when unambiguous), find its image (none was recorded: `--image`), derive its geometry and
//! read the count-less globals. Everything assumed is returned as notes the replay prints.

use std::path::PathBuf;

use rr_format::ext::EXT_IMAGE;
use rr_format::globals::Globals;
use rr_format::legacy::{self, geometry, RegionStart};
use rr_format::{Descriptor, InstanceFiles, RecordFormat};

use super::request::Supplied;
use crate::error::{Error, Result};

/// A legacy record ready for [`super::ReplayInstance`].
#[derive(Debug)]
pub struct Prepared {
    /// With its region start and launch geometry settled.
    pub descriptor: Descriptor,
    pub image: PathBuf,
    pub globals: Globals,
    /// What was inferred or assumed, one sentence each.
    pub notes: Vec<String>,
}

/// Why an LLVM 16–17 record without its image cannot be replayed; each surface adds how to
/// supply one (`--image FILE` on the command line, `I` in the explorer).
pub const NO_IMAGE: &str = "missing: LLVM 16–17 never saved the device image";

/// The device image file an LLVM 16–17 record lacks (none was recorded and none was put beside
/// it), if it lacks one: unless an image is supplied, its replay is refused with [`NO_IMAGE`].
/// `replay`, `tune` and the explorer all ask this, so they refuse the same records.
pub fn missing_image(d: &Descriptor, files: &InstanceFiles) -> Option<PathBuf> {
    if d.format != RecordFormat::LegacyLlvm16 {
        return None;
    }
    let image = files.file(EXT_IMAGE);
    rr_format::fsio::regular_len(&image)
        .is_err_and(|e| e.is_not_found())
        .then_some(image)
}

pub fn prepare(d: Descriptor, files: &InstanceFiles, supplied: &Supplied) -> Result<Prepared> {
    if let Some(why) = legacy::refusal(&d, supplied.assume_llvm18) {
        return Err(Error::format(files.json(), why));
    }
    let llvm16 = d.format == RecordFormat::LegacyLlvm16;
    let image = match &supplied.image {
        Some(p) => p.clone(),
        None => files.file(EXT_IMAGE),
    };
    let image_missing = supplied.image.is_none() && missing_image(&d, files).is_some();
    let no_image = || {
        Error::format(
            &image,
            format!(
                "{NO_IMAGE}; pass --image FILE (the kernel's cubin, \
                 e.g. unpacked from the application with clang-offload-packager)"
            ),
        )
    };
    let mut notes = Vec::new();
    // Both missing pieces in one message, not one per attempt.
    let mut d = settle_start(d, supplied.base_address, &mut notes).map_err(|e| {
        if image_missing {
            Error::invalid(format!("{e}; and {}", no_image()))
        } else {
            e
        }
    })?;
    if llvm16 {
        if image_missing {
            return Err(no_image());
        }
        let (bytes, _) = rr_format::image::read(&image)?;
        let ((teams, threads), note) = geometry::for_record(&d, Some(&bytes));
        (d.num_teams, d.num_threads) = (teams, threads);
        notes.extend(note);
    }
    let globals = match Globals::read_legacy(&files.globals()) {
        Ok(g) => g,
        Err(e) if e.is_not_found() && llvm16 => {
            notes.push(
                "LLVM 16–17 did not record module globals: the image's initial values are used"
                    .into(),
            );
            Globals::default()
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Prepared {
        descriptor: d,
        image,
        globals,
        notes,
    })
}

/// The region start: LLVM 18–22 recorded it; an LLVM 16–17 record takes `--base-address`, or
/// the inferred start when there is exactly one.
fn settle_start(
    d: Descriptor,
    base_address: Option<u64>,
    notes: &mut Vec<String>,
) -> Result<Descriptor> {
    let Some(l) = d.legacy.clone() else {
        return Ok(d);
    };
    let size = l.device_memory_size;
    match (base_address, &l.start) {
        (Some(_), RegionStart::Recorded(s)) => Err(Error::invalid(format!(
            "--base-address is for LLVM 16–17 records, which did not store where their memory was; this record \
             was recorded at {s:#x} (BumpAllocVAStart) and replays there"
        ))),
        (Some(addr), _) => {
            let d = d.with_region_start(addr);
            if let Some(given) = &d.legacy {
                notes.push(format!("region start {}", given.start.describe(size)));
            }
            Ok(d)
        }
        (None, RegionStart::Unknown(_)) => Err(Error::invalid(format!(
            "the region start of this LLVM 16–17 record is {}",
            l.start.describe(size)
        ))),
        (None, RegionStart::Inferred { .. }) => {
            notes.push(format!(
                "region start {} (--base-address ADDR overrides it)",
                l.start.describe(size)
            ));
            Ok(d)
        }
        (None, _) => Ok(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(dir: &str) -> (Descriptor, InstanceFiles) {
        let json = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../record-fixtures")
            .join(dir)
            .join("rr_saxpy.json");
        (
            Descriptor::read(&json).unwrap(),
            InstanceFiles::from_descriptor_path(&json),
        )
    }

    fn cubin() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin")
    }

    #[test]
    fn llvm16_needs_an_image_and_says_what_it_inferred() {
        let (d, files) = fixture("llvm16-saxpy");
        let e = prepare(d.clone(), &files, &Supplied::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("pass --image FILE"), "{e}");
        let supplied = Supplied {
            image: Some(cubin()),
            ..Supplied::default()
        };
        let p = prepare(d.clone(), &files, &supplied).unwrap();
        assert_eq!(p.descriptor.valloc_addr, 0x7fe7_aa00_0000);
        assert!(p.notes[0].starts_with("region start 0x7fe7aa000000, inferred"));
        assert!(p.notes.iter().any(|n| n.contains("initial values")));
        assert!(p.globals.entries.is_empty());
        let given = Supplied {
            base_address: Some(0x7f00_0000_0000),
            ..supplied
        };
        let p = prepare(d, &files, &given).unwrap();
        assert_eq!(p.descriptor.valloc_addr, 0x7f00_0000_0000);
        assert!(
            p.notes[0].contains("(--base-address; doubtful: the region"),
            "{}",
            p.notes[0]
        );
    }

    #[test]
    fn llvm18_replays_where_it_was_recorded_with_its_globals() {
        let (d, files) = fixture("llvm18-two-kernels");
        let p = prepare(d.clone(), &files, &Supplied::default()).unwrap();
        assert_eq!(p.globals.entries.len(), 2);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.image, files.file("image"));
        let e = prepare(
            d,
            &files,
            &Supplied {
                base_address: Some(1 << 40),
                ..Supplied::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("BumpAllocVAStart"), "{e}");
    }

    #[test]
    fn llvm19_is_refused_with_the_reason() {
        let (d, files) = fixture("llvm19-saxpy");
        let e = prepare(d, &files, &Supplied::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("host addresses of the argument slots"), "{e}");
    }
}
