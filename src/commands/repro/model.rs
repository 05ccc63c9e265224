//! What a reproducer does, taken from the instance exactly as `rr-tui replay` loads it
//! ([`ReplayInstance`]: the same descriptor and globals readers, legacy completion, address
//! plan and launch parameters), so the generated program cannot drift from the replay. Pure:
//! nothing here touches a GPU or writes a file.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use rr_engine::diff::{Comparison, DType};
use rr_engine::replay::{launch, Overrides, ReplayInstance};
use rr_format::image::ImageKind;
use rr_format::instance::Side;
use rr_format::store::{self, Layout};

use crate::error::{Error, Result};

/// One recorded segment the program restores and compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    pub addr: u64,
    pub size: u64,
    /// Page-locked host memory the kernel reached at its host address.
    pub host: bool,
    pub input: DataRef,
    pub output: DataRef,
}

/// Where some recorded bytes are: `file` (a name in the reproducer's data folder) at `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataRef {
    pub file: String,
    pub offset: u64,
}

/// A file of the data folder and where its bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A record file, hard-linked or copied (snapshots and blobs: possibly GiB).
    Record(PathBuf),
    /// Bytes rr-tui wrote (the image as replay loads it, the globals' values).
    Bytes(Vec<u8>),
}

/// A module global: `(name, size, offset in globals.bin)`.
pub type GlobalVar = (String, u64, u64);

#[derive(Debug, Clone)]
pub struct Repro {
    pub kernel: String,
    /// The image's file name in the data folder, and what it is ("cubin for sm_90").
    pub image_file: String,
    pub image_kind: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    pub device: i32,
    pub cooperative: bool,
    pub params: Vec<u8>,
    pub slots: Vec<(usize, usize)>,
    pub reservations: Vec<(u64, u64)>,
    pub mappings: Vec<(u64, u64)>,
    pub host: Vec<(u64, u64)>,
    pub copies: Vec<Copy>,
    pub globals: Vec<GlobalVar>,
    /// The data folder: file name and source, each name once.
    pub data: Vec<(String, Source)>,
    /// What replay would say about the instance (legacy inferences, host memory).
    pub notes: Vec<String>,
    pub format: &'static str,
    /// `--tolerance`: compare elements of this type within these tolerances (else bytes).
    pub tolerance: Option<Tolerance>,
}

/// A typed comparison the generated programs implement (replay's rules, for f32 and f64).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// 4 (f32) or 8 (f64).
    pub bytes: u32,
    pub atol: f64,
    pub rtol: f64,
    pub ulp: u64,
    /// As replay names it (`f32 (rtol 1e-5)`), for README.txt.
    pub spec: &'static str,
}

/// The comparison of `--tolerance`, when a reproducer implements it: f32 or f64, little-endian.
pub fn tolerance(c: Option<&Comparison>) -> Result<Option<Tolerance>> {
    let Some(c) = c.filter(|c| !c.is_bytes()) else {
        return Ok(None);
    };
    let (bytes, spec) = match (c.dtype, c.big_endian) {
        (DType::F32, false) => (4, "f32"),
        (DType::F64, false) => (8, "f64"),
        (DType::F32 | DType::F64, true) => {
            return Err(Error::invalid(format!(
                "--tolerance {}: a reproducer reads values little-endian (as the GPU writes \
                 them); big-endian tolerances are not supported by the reproducer: rr-tui replay \
                 takes them",
                c.to_spec()
            )))
        }
        _ => {
            return Err(Error::invalid(format!(
                "--tolerance {}: a reproducer compares f32 or f64 values (or bytes); rr-tui replay \
                 takes the other types",
                c.to_spec()
            )))
        }
    };
    let t = c.tolerance;
    Ok(Some(Tolerance {
        bytes,
        atol: t.atol,
        rtol: t.rtol,
        ulp: t.ulp,
        spec,
    }))
}

/// The reproducer of `inst`, or why there cannot be one (one line naming the descriptor).
pub fn build(
    inst: &ReplayInstance,
    compare: Option<&Comparison>,
    image_given: bool,
) -> Result<Repro> {
    let tolerance = tolerance(compare)?;
    refuse_unsupported(inst)?;
    verifiable(inst)?;
    let d = &inst.descriptor;
    let geometry = inst.launch(&Overrides::default())?;
    let (params, slots) = launch::parameters(d);
    let (image_bytes, info) = rr_format::image::read(&inst.image)?;
    // An --image without the kernel (a cubin's symbols, a PTX text's entries) would make a
    // reproducer that fails on its first call: refused as `replay --candidate` refuses a
    // candidate. (The recorded image is the record's, as `check` reads it.)
    if image_given {
        rr_engine::replay::candidate::check_kernel_name(
            &info,
            &inst.image,
            "the --image file",
            &d.name,
            "give an image of the recorded kernel",
        )?;
    }
    let image_file = match info.kind {
        ImageKind::Cubin { .. } => "kernel.cubin",
        ImageKind::Fatbin => "kernel.fatbin",
        ImageKind::Ptx { .. } => "kernel.ptx",
    };
    let mut data = vec![(image_file.to_string(), Source::Bytes(image_bytes))];
    let (globals, values) = globals(inst, &info, image_given)?;
    data.push(("globals.bin".into(), Source::Bytes(values)));
    let copies = copies(inst, &mut data)?;
    let plan = &inst.plan;
    let reservations = plan.reservations.iter().map(|r| (r.addr, r.size)).collect();
    let mappings = plan.mappings.iter().map(|r| (r.addr, r.size)).collect();
    Ok(Repro {
        kernel: d.name.clone(),
        image_file: image_file.into(),
        image_kind: info.kind.describe(),
        grid: geometry.grid,
        block: geometry.block,
        shared_mem: geometry.shared_mem,
        device: geometry.device_id,
        cooperative: geometry.cooperative,
        params,
        slots,
        reservations,
        mappings,
        host: inst.host.iter().map(|r| (r.addr, r.size)).collect(),
        copies,
        globals,
        data,
        notes: inst.notes.clone(),
        format: d.format.label(),
        tolerance,
    })
}

/// What replay covers with rr-tui's own machinery and a reproducer on the bare driver API does
/// not (yet): said in one line naming the descriptor, before anything is written.
fn refuse_unsupported(inst: &ReplayInstance) -> Result<()> {
    let json = inst.files.json();
    let why = match &inst.descriptor.cuda {
        Some(c) if !c.objects.is_empty() => Some(
            "its parameters hold texture or surface objects, which a reproducer would have to \
             create over recorded CUDA arrays; replay it with rr-tui replay instead",
        ),
        _ if !inst.arrays().is_empty() => Some(
            "it records the contents of CUDA arrays, which a reproducer does not restore; replay \
             it with rr-tui replay instead",
        ),
        Some(c) if c.cluster_dim.is_some() => Some(
            "it was launched with thread-block clusters (cuLaunchKernelEx), which a reproducer \
             does not set up; replay it with rr-tui replay instead",
        ),
        _ => None,
    };
    match why {
        Some(why) => Err(Error::format(
            json,
            format!("no reproducer can be written: {why}"),
        )),
        None => Ok(()),
    }
}

/// A reproducer verifies against the recorded output: an instance recorded without it, or with
/// one of another length than its input, is refused, naming the file.
fn verifiable(inst: &ReplayInstance) -> Result<()> {
    match inst.recorded_output_len()? {
        Some(_) => Ok(()),
        None => Err(Error::format(
            inst.files.snapshot_file(&inst.descriptor, Side::Output),
            "missing, so a reproducer would have nothing to verify against: the instance was \
             recorded without its output",
        )),
    }
}

/// The recorded globals as `(name, size, offset)` and their values one after the other (the
/// reproducer's `globals.bin`), once they agree with the image as `check` requires (no name
/// twice; a cubin defines each, of the recorded size): the first problem is refused with
/// `check`'s words, naming the globals file. The values are laid in a zeroed buffer block by
/// block, only the blocks that are not zeros copied: a global of GiB of zeros (a sparse
/// `.globals`) costs no memory, and is written without its holes.
fn globals(
    inst: &ReplayInstance,
    info: &rr_format::image::ImageInfo,
    image_given: bool,
) -> Result<(Vec<GlobalVar>, Vec<u8>)> {
    let problems = rr_format::check::global_problems(info, &inst.globals);
    if let Some(first) = problems.first() {
        let more = match problems.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more problems with its globals)"),
        };
        // With --image, what the image lacks is that file's fault, which `check` (reading
        // the record's own image) would not find; a global recorded twice is the record's.
        if image_given && !first.ends_with("recorded more than once") {
            return Err(Error::format(
                &inst.image,
                format!(
                    "{first}{more}: the --image file lacks what the record holds in {}; no \
                     reproducer can be written with it",
                    rr_format::text::visible_path(&inst.files.globals())
                ),
            ));
        }
        return Err(Error::format(
            inst.files.globals(),
            format!("{first}{more}: no reproducer can be written (rr-tui check lists them)"),
        ));
    }
    let total: u64 = inst.globals.entries.iter().map(|g| g.size).sum();
    let total = usize::try_from(total).map_err(|_| {
        Error::format(
            inst.files.globals(),
            "its globals are larger than this machine can address",
        )
    })?;
    let mut values = vec![0u8; total];
    let mut entries = Vec::with_capacity(inst.globals.entries.len());
    let mut offset = 0usize;
    for g in &inst.globals.entries {
        let data = inst.globals.data(g);
        let to = &mut values[offset..offset + data.len()];
        for (src, dst) in data.chunks(4096).zip(to.chunks_mut(4096)) {
            if src.iter().any(|&b| b != 0) {
                dst.copy_from_slice(src);
            }
        }
        entries.push((g.name.clone(), g.size, offset as u64));
        offset += data.len();
    }
    Ok((entries, values))
}

/// Every segment replay restores (device memory, host memory), with where its input and
/// output bytes are; the files they come from are added to `data` once each. Linear in the
/// segments (a record may hold tens of thousands): blobs are found by their offset and names
/// kept in a set, never searched for.
fn copies(inst: &ReplayInstance, data: &mut Vec<(String, Source)>) -> Result<Vec<Copy>> {
    let input = Stored::new(
        store::layout(&inst.files, &inst.descriptor, Side::Input)?,
        "input.bin",
    );
    let output = Stored::new(
        store::layout(&inst.files, &inst.descriptor, Side::Output)?,
        "output.bin",
    );
    let mut files = DataFiles {
        names: data.iter().map(|(n, _)| n.clone()).collect(),
        list: data,
    };
    let device = inst.copies().into_iter().map(|c| (c, false));
    let host = inst.host_copies().into_iter().map(|c| (c, true));
    let mut out = Vec::new();
    for ((addr, offset, len), is_host) in device.chain(host) {
        let (offset, size) = (offset as u64, len as u64);
        out.push(Copy {
            addr,
            size,
            host: is_host,
            input: input.locate(offset, size, &mut files, inst)?,
            output: output.locate(offset, size, &mut files, inst)?,
        });
    }
    Ok(out)
}

/// The data folder's files so far, and their names (each added once).
struct DataFiles<'a> {
    list: &'a mut Vec<(String, Source)>,
    names: HashSet<String>,
}

impl DataFiles<'_> {
    fn add(&mut self, name: &str, path: &std::path::Path) {
        if self.names.insert(name.to_string()) {
            self.list
                .push((name.to_string(), Source::Record(path.to_path_buf())));
        }
    }
}

/// One side of the snapshot as stored: the whole-snapshot file (named `whole` in the data
/// folder) or blobs, with each blob's index by the snapshot offset it starts at.
struct Stored {
    layout: Layout,
    whole: &'static str,
    starts: HashMap<u64, usize>,
}

impl Stored {
    fn new(layout: Layout, whole: &'static str) -> Stored {
        let starts = match &layout {
            Layout::File(_) => HashMap::new(),
            Layout::Blobs { pieces, .. } => pieces
                .iter()
                .enumerate()
                .rev() // the first piece of an offset wins, as a search in order finds it
                .map(|(i, p)| (p.offset, i))
                .collect(),
        };
        Stored {
            layout,
            whole,
            starts,
        }
    }

    /// Where snapshot bytes `[offset, offset + size)` are stored: the whole-snapshot file or
    /// the blob of the segment there (named by its id, which
    /// [`rr_format::descriptor::is_blob_id`] makes a safe file name).
    fn locate(
        &self,
        offset: u64,
        size: u64,
        files: &mut DataFiles,
        inst: &ReplayInstance,
    ) -> Result<DataRef> {
        let (name, path, at) = match &self.layout {
            Layout::File(path) => (self.whole.to_string(), path, offset),
            Layout::Blobs { pieces, .. } => {
                // An end past u64 (hostile sizes) holds nothing: `None` would compare below
                // every end.
                let holds = |p: &store::Piece| match (
                    offset.checked_add(size),
                    p.offset.checked_add(p.size),
                ) {
                    (Some(end), Some(piece_end)) => p.offset <= offset && end <= piece_end,
                    _ => false,
                };
                // A copy is a whole segment: found by its start, else (never in a record
                // rr-tui wrote) searched for.
                let piece = self
                    .starts
                    .get(&offset)
                    .map(|&i| &pieces[i])
                    .filter(|p| holds(p))
                    .or_else(|| pieces.iter().find(|p| holds(p)))
                    .and_then(|p| p.blob.as_ref().map(|b| (b, offset - p.offset)));
                let Some((blob, at)) = piece else {
                    return Err(Error::format(
                        inst.files.json(),
                        format!("no blob holds the snapshot bytes at offset {offset}"),
                    ));
                };
                let id = blob
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .filter(|n| rr_format::descriptor::is_blob_id(n))
                    .ok_or_else(|| {
                        Error::format(inst.files.json(), "names a blob that is not a blob id")
                    })?;
                (id, blob, at)
            }
        };
        files.add(&name, path);
        Ok(DataRef {
            file: name,
            offset: at,
        })
    }
}
