//! `check` for legacy records (FORMAT.md, "Legacy LLVM records"): the files each generation
//! wrote, their sizes against `DeviceMemorySize`, the count-less globals, the image, and what
//! makes a record unreplayable (warnings: the files are as their recorder wrote them). What a
//! generation never wrote (16–17: image, globals) is not a finding, except the image, whose
//! absence replay needs to be told about.

use super::files::{image_findings, note_outside_links, recorded_len};
use super::finding::{finding, from_error, Finding, Severity};
use crate::descriptor::{Descriptor, RecordFormat};
use crate::globals::Globals;
use crate::image;
use crate::instance::{InstanceFiles, Side};

use crate::legacy::{Legacy, RegionStart};

/// Append the findings about a legacy instance's files to `out`: the descriptor, links out of
/// the directory, the snapshots, then the globals and the image.
pub fn files(files: &InstanceFiles, d: &Descriptor, out: &mut Vec<Finding>) {
    let Some(legacy) = &d.legacy else {
        return;
    };
    descriptor_findings(files, d, legacy, out);
    note_outside_links(
        &files.dir,
        &[
            files.json(),
            files.snapshot_file(d, Side::Input),
            files.snapshot_file(d, Side::Output),
            files.globals(),
            files.image(d),
        ],
        out,
    );
    snapshot_findings(files, d, legacy.device_memory_size, out);
    globals_and_image_findings(files, d, out);
}

/// The descriptor's name, what makes it unreplayable, its region start and `DeviceMemorySize`.
fn descriptor_findings(
    files: &InstanceFiles,
    d: &Descriptor,
    legacy: &Legacy,
    out: &mut Vec<Finding>,
) {
    let json = files.json();
    if files.stem != d.name {
        out.push(finding(
            Severity::Warning,
            &json,
            format!(
                "is not named after its kernel ({}.json, as the legacy recorder named it); rr-tui reads its \
                 files by this name",
                d.name
            ),
        ));
    }
    if let Some(why) = crate::legacy::refusal(d, false) {
        out.push(finding(Severity::Warning, &json, why));
    }
    if let RegionStart::Unknown(_) = legacy.start {
        out.push(finding(
            Severity::Warning,
            &json,
            format!(
                "region start {}",
                legacy.start.describe(legacy.device_memory_size)
            ),
        ));
    }
    let size = legacy.device_memory_size;
    if !size.is_multiple_of(16) {
        out.push(finding(
            Severity::Warning,
            &json,
            format!("DeviceMemorySize {size} is not a multiple of 16 (the bump allocator's unit)"),
        ));
    }
}

/// The memory before the kernel against `DeviceMemorySize` (`size`), the memory after it and an
/// old replay's output against the memory before.
fn snapshot_findings(files: &InstanceFiles, d: &Descriptor, size: u64, out: &mut Vec<Finding>) {
    let input = files.snapshot_file(d, Side::Input);
    let output = files.snapshot_file(d, Side::Output);
    let input_len = match recorded_len(files, d, Side::Input) {
        Err(f) => {
            out.push(f);
            None
        }
        Ok(None) => {
            out.push(finding(
                Severity::Error,
                &input,
                "missing (the recorded device memory before the kernel)",
            ));
            None
        }
        Ok(Some(len)) => {
            if len != size {
                out.push(finding(
                    Severity::Error,
                    &input,
                    format!("is {len} bytes but DeviceMemorySize is {size}"),
                ));
            }
            Some(len)
        }
    };
    match (recorded_len(files, d, Side::Output), input_len) {
        (Err(f), _) => out.push(f),
        (Ok(None), _) => out.push(finding(
            Severity::Warning,
            &output,
            "missing: verification is impossible (recorded without LIBOMPTARGET_RR_SAVE_OUTPUT)",
        )),
        (Ok(Some(o)), Some(i)) if o != i => out.push(finding(
            Severity::Warning,
            &output,
            format!("is {o} bytes but .memory is {i}: only the common part can be compared"),
        )),
        _ => {}
    }
    let old_replay = files.legacy_replay_output();
    if let (Ok(r), Some(i)) = (crate::fsio::regular_len(&old_replay), input_len) {
        if r != i {
            out.push(finding(
                Severity::Warning,
                &old_replay,
                format!("is {r} bytes but .memory is {i}"),
            ));
        }
    }
}

/// The count-less globals and the image, which LLVM 16–17 never wrote and 18–22 always did.
fn globals_and_image_findings(files: &InstanceFiles, d: &Descriptor, out: &mut Vec<Finding>) {
    let globals_path = files.globals();
    let image_path = files.image(d);
    let llvm16 = d.format == RecordFormat::LegacyLlvm16;
    let globals = match Globals::read_legacy(&globals_path) {
        Ok(g) => Some(g),
        // LLVM 16–17 recorded no globals; 18–22 always wrote the file (maybe empty).
        Err(e) if e.is_not_found() && llvm16 => None,
        Err(e) if e.is_not_found() => {
            out.push(finding(
                Severity::Error,
                &globals_path,
                "missing (LLVM 18–22 always wrote the module globals)",
            ));
            None
        }
        Err(e) => {
            out.push(from_error(e));
            None
        }
    };
    match image::read(&image_path) {
        Err(e) if e.is_not_found() && llvm16 => out.push(finding(
            Severity::Warning,
            &image_path,
            "missing: LLVM 16–17 never saved the device image; replay needs --image FILE (the kernel's cubin, \
             e.g. unpacked from the application with clang-offload-packager)",
        )),
        Err(e) if e.is_not_found() => out.push(finding(
            Severity::Error,
            &image_path,
            "missing (LLVM 18–22 always saved the device image)",
        )),
        Err(e) => out.push(from_error(e)),
        Ok((_, info)) => image_findings(
            d,
            &info,
            &image_path,
            globals.as_ref(),
            &globals_path,
            out,
        ),
    }
}
