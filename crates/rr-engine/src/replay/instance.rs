//! One instance made ready for replay: descriptor read, input snapshot measured against the
//! descriptor, device image located, globals read, memory planned (legacy records completed by
//! [`super::legacy`]). Everything that can be wrong with the files is found here, before a
//! driver is loaded or a kernel runs.

use std::path::{Path, PathBuf};

use rr_cuda::Range;
use rr_format::globals::Globals;
use rr_format::instance::Side;
use rr_format::objects::{ArrayDesc, SegmentKind};
use rr_format::{Descriptor, InstanceFiles, Segment};

use super::launch::{self, Launch};
use super::plan::{self, Plan};
use super::request::{Overrides, Supplied, Verify};
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct ReplayInstance {
    pub files: InstanceFiles,
    pub descriptor: Descriptor,
    pub input_len: u64,
    pub segments: Vec<Segment>,
    /// Device memory to reserve and map.
    pub plan: Plan,
    /// Page-locked host memory to map at its recorded addresses (page-aligned, disjoint).
    pub host: Vec<Range>,
    /// The host segments are replayed in device memory at their addresses (they lie among the
    /// device memory, where no reservation can leave them out).
    pub host_as_device: bool,
    /// The device image to load (resolved inside the record directory, or `--image`).
    pub image: PathBuf,
    /// The module globals to restore before every launch (none for LLVM 16–17 records).
    pub globals: Globals,
    /// What the replay of a legacy record inferred or assumed, one sentence each.
    pub notes: Vec<String>,
}

/// Host memory is mapped in pages.
const PAGE: u64 = 4096;

/// The error of a command that takes one instance's descriptor (`inspect`, `replay`, `profile`)
/// given a directory: what the directory is and a command that works on it — `rr-tui report
/// DIR` for a record directory (it lists the instances), one of the record directories below it
/// for a directory of runs, and what rr-tui reads when it holds none.
pub fn directory_given(dir: &Path, command: &str) -> Error {
    use rr_format::search;
    use rr_format::text::visible_path;
    let shown = visible_path(dir);
    let quoted = |p: &Path| shell_words::quote(&visible_path(p)).into_owned();
    let takes = format!("{command} takes one instance's descriptor (X.json)");
    let holds_record = rr_format::RecordDir::open(dir).is_ok_and(|rd| !rd.holds_nothing());
    let message = if holds_record {
        format!(
            "{shown}: a record directory; {takes}: `rr-tui report {}` lists them",
            quoted(dir)
        )
    } else {
        let below = search::record_dirs_below(dir);
        match below.found.first() {
            Some(first) => format!(
                "{shown}: not a record directory, and {takes}; the {} record director{} below it \
                 list{} theirs, e.g. `rr-tui report {}`",
                below.found.len(),
                if below.found.len() == 1 { "y" } else { "ies" },
                if below.found.len() == 1 { "s" } else { "" },
                quoted(&first.path)
            ),
            None => format!(
                "{shown}: a directory that holds no record; {takes} ({})",
                search::ACCEPTED_LAYOUTS
            ),
        }
    };
    Error::invalid(message)
}

impl ReplayInstance {
    /// Format 2: every blob restored or compared against must hold what its name says (a
    /// blob overwritten after recording would be replayed as if recorded). Reads every byte of
    /// them, so the command that restores does it once (`replay`, `tune`), not every loader
    /// (the explorer's checks, each tuning engine).
    /// Hash every blob of the instance against its name, several at a time (a model-sized
    /// instance holds tens of GiB; one thread hashes about 6 GB/s out of the page cache). The
    /// error is always the first bad blob in the descriptor's order: after a failure, blobs
    /// after it are skipped and those before it still checked.
    pub fn verify_blobs(&self) -> Result<()> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let blobs: Vec<_> = rr_format::store::blobs_of(&self.files, &self.descriptor)
            .into_iter()
            .filter(|(_, path)| rr_format::fsio::regular_len(path).is_ok())
            .collect();
        let next = AtomicUsize::new(0);
        // The lowest index that failed so far (usize::MAX: none).
        let first_bad = AtomicUsize::new(usize::MAX);
        let failed = std::sync::Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..super::load_threads::threads().min(blobs.len()) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= first_bad.load(Ordering::Relaxed) {
                        break;
                    }
                    let Some((id, path)) = blobs.get(i) else {
                        break;
                    };
                    if let Err(e) = rr_format::store::verify_blob_once(path, id, &mut |_| true) {
                        first_bad.fetch_min(i, Ordering::Relaxed);
                        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
                        if f.as_ref().is_none_or(|(at, _)| i < *at) {
                            *f = Some((i, e));
                        }
                    }
                });
            }
        });
        match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some((_, e)) => Err(e.into()),
            None => Ok(()),
        }
    }

    pub fn load(json: &Path, supplied: &Supplied) -> Result<ReplayInstance> {
        let descriptor = Descriptor::read(json)?;
        // A file the user names is checked before anything looks for a GPU (an input error,
        // exit status 2, in every command that takes --image).
        if let Some(image) = &supplied.image {
            check_image_flag(image)?;
        }
        let files = InstanceFiles::from_descriptor_path(json);
        check_replayable(json, &descriptor)?;
        let (descriptor, image, globals, mut notes) = complete(descriptor, &files, supplied)?;
        let input = files.snapshot_file(&descriptor, Side::Input);
        let input_len = rr_format::store::recorded_len(&files, &descriptor, Side::Input)?;
        let segments = descriptor.segments(input_len);
        check_input_len(&descriptor, &input, input_len)?;
        // Recorded addresses are user-space addresses of the recording process.
        if let Some(why) = rr_format::memory::unmappable(&descriptor, &segments) {
            return Err(Error::format(json, why));
        }
        let (plan, host, host_as_device) = plan_memory(&descriptor, &segments, &mut notes);
        check_host_apart(json, &host, &plan)?;
        // Texture and surface objects must read recorded memory: a replay creates them over it.
        if let Some(why) = rr_format::memory::object_problem(&descriptor, &segments) {
            return Err(Error::format(json, why));
        }
        Ok(ReplayInstance {
            files,
            descriptor,
            input_len,
            segments,
            plan,
            host,
            host_as_device,
            image,
            globals,
            notes,
        })
    }

    /// The launch to replay: the recorded one with `overrides`. One that no GPU can run because
    /// of the recorded geometry itself (no grid or block override in effect: a block of 2^31
    /// threads) is the record's fault and names its descriptor, as every refusal of a record
    /// does; one an override makes impossible is the user's, said without.
    pub fn launch(&self, overrides: &Overrides) -> Result<Launch> {
        let recorded = overrides.grid.is_none()
            && overrides.block.is_none()
            && overrides.num_teams.unwrap_or(0) == 0
            && overrides.num_threads.unwrap_or(0) == 0;
        launch::resolve(&self.descriptor, overrides).map_err(|e| match e {
            Error::Record(rr_format::Error::Invalid(why)) if recorded => Error::format(
                self.files.json(),
                format!("the recorded launch cannot run on any CUDA GPU: {why}"),
            ),
            e => e,
        })
    }

    /// Refuse verification up front when there is nothing to verify against, naming the file
    /// and the recording option (so no kernel runs for a verification that cannot happen).
    pub fn check_verifiable(&self, verify: &Verify) -> Result<()> {
        if !verify.is_on() {
            return Ok(());
        }
        let out = self.files.snapshot_file(&self.descriptor, Side::Output);
        let option = if self.descriptor.format.is_legacy() {
            "without LIBOMPTARGET_RR_SAVE_OUTPUT"
        } else {
            "without its output (LIBOMPTARGET_RECORD_OUTPUT=false, or rr-tui record --no-output)"
        };
        match self.recorded_output_len()? {
            Some(_) => Ok(()),
            None => Err(Error::format(
                &out,
                format!(
                    "missing, so there is nothing to verify against: the instance was recorded {option}; \
                     replay without --verify"
                ),
            )),
        }
    }

    /// The recorded output's length, `None` when it was not recorded. One that is not the
    /// recorded input's length (a truncated or damaged snapshot) is refused naming it: every
    /// verification against it would fail on its missing bytes, blaming the kernel (or a
    /// candidate) for the record's damage.
    pub fn recorded_output_len(&self) -> Result<Option<u64>> {
        let len = match rr_format::store::recorded_len(&self.files, &self.descriptor, Side::Output)
        {
            Ok(len) => len,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if len != self.input_len {
            return Err(Error::format(
                self.files.snapshot_file(&self.descriptor, Side::Output),
                format!(
                    "is {len} bytes but the recorded input is {}: the recorded output is \
                     truncated or damaged, so nothing can be verified against it",
                    self.input_len
                ),
            ));
        }
        Ok(Some(len))
    }

    /// `(device address, offset in the snapshot, length)` of every segment in device memory.
    pub fn copies(&self) -> Vec<(u64, usize, usize)> {
        let as_device = self.host_as_device;
        self.of_kind(|k| *k == SegmentKind::Device || (as_device && *k == SegmentKind::Host))
            .map(|s| (s.addr, s.offset as usize, s.size as usize))
            .collect()
    }

    /// For each range of [`ReplayInstance::copies`], whether the recorded output is the same
    /// blob as the recorded input (the kernel left it as it was); `None` when the record does
    /// not say (no blob ids, or no output recorded).
    pub fn unchanged_copies(&self) -> Option<Vec<bool>> {
        self.copy_contents()?
            .into_iter()
            .map(|c| c.output.as_ref().map(|out| *out == c.input))
            .collect()
    }

    /// The input blob id of each range of [`ReplayInstance::copies`] (`None`: no blob ids).
    pub fn copy_inputs(&self) -> Option<Vec<&str>> {
        Some(
            self.copy_contents()?
                .into_iter()
                .map(|c| c.input.as_str())
                .collect(),
        )
    }

    /// The blob ids of each range of [`ReplayInstance::copies`], in the same order.
    fn copy_contents(&self) -> Option<Vec<&rr_format::descriptor::SegmentContent>> {
        let content = self.descriptor.cuda.as_ref()?.content.as_ref()?;
        if content.len() != self.segments.len() {
            return None;
        }
        let as_device = self.host_as_device;
        Some(
            self.segments
                .iter()
                .zip(content)
                .filter(|(s, _)| {
                    s.kind == SegmentKind::Device || (as_device && s.kind == SegmentKind::Host)
                })
                .map(|(_, c)| c)
                .collect(),
        )
    }

    /// `(host address, offset in the snapshot, length)` of every segment in host memory.
    pub fn host_copies(&self) -> Vec<(u64, usize, usize)> {
        if self.host_as_device {
            return vec![];
        }
        self.of_kind(|k| *k == SegmentKind::Host)
            .map(|s| (s.addr, s.offset as usize, s.size as usize))
            .collect()
    }

    /// `(segment index, shape, offset in the snapshot, length)` of every CUDA array.
    pub fn arrays(&self) -> Vec<(usize, ArrayDesc, usize, usize)> {
        self.segments
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s.kind {
                SegmentKind::Array(a) => Some((i, a, s.offset as usize, s.size as usize)),
                _ => None,
            })
            .collect()
    }

    fn of_kind(&self, want: impl Fn(&SegmentKind) -> bool) -> impl Iterator<Item = &Segment> {
        self.segments.iter().filter(move |s| want(&s.kind))
    }
}

/// Refuse an instance the recorder marked as one that cannot be replayed (saying why).
fn check_replayable(json: &Path, descriptor: &Descriptor) -> Result<()> {
    if let Some(why) = descriptor
        .cuda
        .as_ref()
        .and_then(|c| c.unreplayable.as_ref())
    {
        return Err(Error::format(
            json,
            format!(
                "this instance cannot be replayed: {}",
                rr_format::text::visible(why)
            ),
        ));
    }
    Ok(())
}

/// The descriptor, image, globals and notes of a replay: a legacy record completed by
/// [`super::legacy`], a current one as recorded (its image from `--image` or the record).
fn complete(
    descriptor: Descriptor,
    files: &InstanceFiles,
    supplied: &Supplied,
) -> Result<(Descriptor, PathBuf, Globals, Vec<String>)> {
    if descriptor.format.is_legacy() {
        let p = super::legacy::prepare(descriptor, files, supplied)?;
        return Ok((p.descriptor, p.image, p.globals, p.notes));
    }
    if supplied.base_address.is_some() || supplied.assume_llvm18 {
        return Err(Error::invalid(
            "--base-address and --assume-llvm18 are for legacy (LLVM 16–22) records; this one records its addresses",
        ));
    }
    let image = match &supplied.image {
        Some(p) => p.clone(),
        None => files.resolve_image(&descriptor)?,
    };
    let globals = Globals::read(&files.globals())?;
    Ok((descriptor, image, globals, vec![]))
}

/// The recorded input (`input`, `input_len` bytes) must be as long as the descriptor says.
fn check_input_len(descriptor: &Descriptor, input: &Path, input_len: u64) -> Result<()> {
    if let Some(total) = descriptor.snapshot_len().filter(|&t| t != input_len) {
        return Err(Error::format(
            input,
            format!("is {input_len} bytes but the descriptor's segments end at {total}"),
        ));
    }
    if let Some(l) = descriptor
        .legacy
        .as_ref()
        .filter(|l| l.device_memory_size != input_len)
    {
        return Err(Error::format(
            input,
            format!(
                "is {input_len} bytes but DeviceMemorySize is {}",
                l.device_memory_size
            ),
        ));
    }
    if descriptor.cuda.is_none() && input_len > descriptor.valloc_size {
        return Err(Error::format(
            input,
            format!(
                "is {input_len} bytes, more than VAllocSize {}",
                descriptor.valloc_size
            ),
        ));
    }
    Ok(())
}

/// The device memory to reserve and map, the host memory to map, and whether the host segments
/// are replayed in device memory (said in `notes`): when the plan boxes host memory in among
/// small reservations.
fn plan_memory(
    descriptor: &Descriptor,
    segments: &[Segment],
    notes: &mut Vec<String>,
) -> (Plan, Vec<Range>, bool) {
    let mut device: Vec<Segment> = segments
        .iter()
        .filter(|s| s.kind == SegmentKind::Device)
        .copied()
        .collect();
    let mut host = host_ranges(segments);
    let mut plan = plan::plan(descriptor, &device, &host);
    let boxed_in = plan
        .reservations
        .iter()
        .any(|r| r.size < plan::MIN_RESERVATION);
    let host_as_device = descriptor.cuda.is_some() && boxed_in && !host.is_empty();
    if host_as_device {
        // The driver places small reservations where it likes, and a program's pinned
        // host memory can sit between its device allocations (measured with JAX): replay
        // the host memory as device memory at the same addresses.
        notes.push(format!(
            "{} range(s) of host memory lie among the recorded device memory: they are replayed in device memory at their recorded addresses (kernels reach them at device-memory speed)",
            host.len()
        ));
        device.extend(segments.iter().filter(|s| s.kind == SegmentKind::Host));
        device.sort_by_key(|s| s.addr);
        host.clear();
        plan = plan::plan(descriptor, &device, &host);
    }
    (plan, host, host_as_device)
}

/// Refuse host memory recorded where the plan maps device memory: the segments contradict
/// each other.
fn check_host_apart(json: &Path, host: &[Range], plan: &Plan) -> Result<()> {
    if let Some(h) = host.iter().find(|h| {
        plan.mappings
            .iter()
            .any(|m| h.addr < m.end() && m.addr < h.end())
    }) {
        return Err(Error::format(
            json,
            format!(
                "host memory recorded at {:#x} overlaps recorded device memory: the segments are inconsistent",
                h.addr
            ),
        ));
    }
    Ok(())
}

/// The pages of the host segments, merged.
fn host_ranges(segments: &[Segment]) -> Vec<Range> {
    plan::merge(
        segments
            .iter()
            .filter(|s| s.kind == SegmentKind::Host && s.size > 0)
            .map(|s| {
                let a = s.addr / PAGE * PAGE;
                Range {
                    addr: a,
                    size: s.end().div_ceil(PAGE).saturating_mul(PAGE) - a,
                }
            })
            .collect(),
    )
}

/// `--image FILE`: a regular file that can be opened (its content is the driver's to judge).
fn check_image_flag(image: &Path) -> Result<()> {
    let shown = rr_format::text::visible_path(image);
    match std::fs::metadata(image) {
        Err(e) => Err(Error::invalid(format!("--image {shown}: {e}"))),
        Ok(m) if !m.is_file() => Err(Error::invalid(format!(
            "--image {shown}: not a regular file (give the kernel's cubin, fatbin or PTX)"
        ))),
        Ok(_) => std::fs::File::open(image)
            .map(drop)
            .map_err(|e| Error::invalid(format!("--image {shown}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_format::descriptor::Segment;

    /// A format-1 rr-tui record of `segments` in a fresh directory (sparse snapshot files).
    fn record(segments: Vec<Segment>) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let mut d = Descriptor::rr_for_tests(segments);
        d.cuda.as_mut().unwrap().image_file = "k.cubin".into();
        let stem = InstanceFiles::expected_stem(&d);
        let json = dir.path().join(format!("{stem}.json"));
        std::fs::write(&json, d.to_json()).unwrap();
        let len = d.snapshot_len().unwrap();
        for ext in ["record_input", "record_output"] {
            let f = std::fs::File::create(dir.path().join(format!("{stem}.{ext}"))).unwrap();
            f.set_len(len).unwrap();
        }
        std::fs::write(
            dir.path().join(format!("{stem}.globals")),
            Globals::encode(&[]),
        )
        .unwrap();
        std::fs::write(dir.path().join("k.cubin"), b"not read by load").unwrap();
        (dir, json)
    }

    fn host(addr: u64, size: u64, offset: u64) -> Segment {
        Segment {
            kind: SegmentKind::Host,
            ..Segment::device(addr, size, offset)
        }
    }

    #[test]
    fn host_memory_is_mapped_as_host_memory_where_it_can_be() {
        let (_d, json) = record(vec![
            Segment::device(0x7f8e_1400_0000, 0x20_0000, 0),
            host(0x7f90_0000_0010, 0x100, 0x20_0000),
        ]);
        let inst = ReplayInstance::load(&json, &Supplied::default()).unwrap();
        assert!(!inst.host_as_device && inst.notes.is_empty());
        assert_eq!(
            inst.host,
            vec![Range {
                addr: 0x7f90_0000_0000,
                size: 0x1000
            }]
        );
        assert_eq!(inst.copies().len(), 1);
        assert_eq!(
            inst.host_copies(),
            vec![(0x7f90_0000_0010, 0x20_0000, 0x100)]
        );
    }

    #[test]
    fn host_memory_among_device_memory_is_replayed_in_device_memory() {
        // JAX's layout: pinned host memory 2 MiB below and 38 MiB above a device allocation.
        let (_d, json) = record(vec![
            host(0x7f8e_13e0_0000, 0x1000, 0),
            Segment::device(0x7f8e_1400_0000, 0x20_0000, 0x1000),
            host(0x7f8e_1660_0000, 0x20_0000, 0x20_1000),
        ]);
        let inst = ReplayInstance::load(&json, &Supplied::default()).unwrap();
        assert!(inst.host_as_device && inst.host.is_empty());
        assert!(
            inst.notes[0].contains("replayed in device memory"),
            "{:?}",
            inst.notes
        );
        assert_eq!(inst.copies().len(), 3);
        assert!(inst.host_copies().is_empty());
        assert!(inst
            .plan
            .reservations
            .iter()
            .all(|r| r.size >= plan::MIN_RESERVATION));
    }
}
