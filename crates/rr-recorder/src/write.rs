//! Writing an instance and the report into the record directory (rr-tui format 2). Every file is
//! written fresh and renamed into place, and the descriptor last: a program killed mid-way
//! leaves only complete instances (a descriptor names only files that exist).

use std::path::Path;

use rr_format::descriptor::{CudaLaunch, ParamSlot, Segment, SegmentContent};
use rr_format::globals::Globals;
use rr_format::objects::{ObjectArg, OutsideWord, SegmentKind};
use rr_format::report::{self, ReportRow};
use rr_format::store::aligned_offsets;
use rr_format::{fsio, Descriptor, InstanceFiles};

/// Everything recorded about one launch.
pub struct Instance<'a> {
    pub kernel: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    pub device: i32,
    pub params: Vec<u8>,
    pub layout: &'a [(usize, usize)],
    pub cluster: Option<[u32; 3]>,
    pub cooperative: bool,
    pub occurrence: u64,
    /// `(addr, size, kind)` of each segment, with its input and output blob ids.
    pub segments: &'a [(u64, u64, SegmentKind)],
    /// Whether each segment is a chunk continuing the allocation of the one before.
    pub continues: &'a [bool],
    pub inputs: &'a [String],
    pub outputs: Option<&'a [String]>,
    /// The device image and its file name (`images/<id>.cubin`).
    pub image: &'a [u8],
    pub image_file: &'a str,
    pub globals: &'a [(String, Vec<u8>)],
    /// Texture and surface objects among the parameters.
    pub objects: &'a [ObjectArg],
    /// A kernel node of a CUDA graph.
    pub from_graph: bool,
    /// Parameter words the driver knew as memory outside the recorded segments.
    pub outside: &'a [OutsideWord],
    /// Why the instance cannot be replayed, if it cannot.
    pub unreplayable: Option<&'a str>,
    /// Why a snapshot may have raced with another stream's work, if it may have.
    pub raced: Option<&'a str>,
}

/// Write an instance; returns its descriptor's file name.
pub fn instance(dir: &Path, inst: &Instance) -> rr_format::Result<String> {
    let image_path = dir.join(inst.image_file);
    if !image_path.exists() {
        if let Some(parent) = image_path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| rr_format::Error::io(parent, e))?;
        }
        fsio::write_atomic(&image_path, inst.image)?;
    }
    let offsets = aligned_offsets(&inst.segments.iter().map(|s| s.1).collect::<Vec<_>>());
    let segments = inst
        .segments
        .iter()
        .zip(offsets)
        .map(|(&(addr, size, kind), offset)| Segment {
            addr,
            size,
            offset,
            kind,
        })
        .collect();
    let content = inst
        .inputs
        .iter()
        .enumerate()
        .map(|(i, id)| SegmentContent {
            input: id.clone(),
            output: inst.outputs.and_then(|o| o.get(i)).cloned(),
            continues: inst.continues.get(i).copied().unwrap_or(false),
        })
        .collect();
    let d = Descriptor::from_cuda(
        inst.kernel.to_string(),
        inst.shared_mem,
        inst.device,
        CudaLaunch {
            grid: inst.grid,
            block: inst.block,
            param_buffer: inst.params.clone(),
            param_layout: inst
                .layout
                .iter()
                .map(|&(o, s)| ParamSlot {
                    offset: o as u32,
                    size: s as u32,
                })
                .collect(),
            segments,
            cluster_dim: inst.cluster,
            cooperative: inst.cooperative,
            occurrence: inst.occurrence,
            image_file: inst.image_file.to_string(),
            content: Some(content),
            objects: inst.objects.to_vec(),
            from_graph: inst.from_graph,
            outside: Some(inst.outside.to_vec()),
            unreplayable: inst.unreplayable.map(str::to_owned),
            raced: inst.raced.map(|r| bounded(r, 1000)),
        },
    );
    let stem = InstanceFiles::expected_stem(&d);
    let globals: Vec<(&str, &[u8])> = inst
        .globals
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_slice()))
        .collect();
    fsio::write_atomic(
        &dir.join(format!("{stem}.globals")),
        &Globals::encode(&globals),
    )?;
    let json = format!("{stem}.json");
    fsio::write_atomic(&dir.join(&json), d.to_json().as_bytes())?;
    Ok(json)
}

/// `text` cut to at most `max` bytes, on a character boundary, marked when cut.
fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// The report in libomptarget's format, then rr-tui's summary and notes after the end banner
/// (where libomptarget's readers stop).
pub fn report(
    dir: &Path,
    file: &str,
    rows: &[ReportRow],
    summary: Option<&report::RecorderSummary>,
    notes: &[String],
) -> rr_format::Result<String> {
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut text = report::render(&abs.display().to_string(), rows);
    text.push_str(&report::render_trailer(summary, notes));
    fsio::write_atomic(&dir.join(file), text.as_bytes())?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_instance_reads_back_and_checks() {
        let d = tempfile::tempdir().unwrap();
        let store = rr_format::store::BlobStore::open(d.path()).unwrap();
        let input = vec![7u8; 1000];
        let id = rr_format::store::blob_id(&input);
        let mut w = store.writer(1000).unwrap();
        w.write(&input).unwrap();
        w.commit(&store, &id).unwrap();
        let cubin = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin"
        ))
        .unwrap();
        let ids = [id.clone(), id.clone()];
        let json = instance(
            d.path(),
            &Instance {
                kernel: "rr_stencil3d",
                grid: [2, 2, 4],
                block: [8, 8, 4],
                shared_mem: 0,
                device: 0,
                params: vec![0; 36],
                layout: &[(0, 8), (8, 8), (16, 8), (24, 4), (28, 4), (32, 4)],
                cluster: None,
                cooperative: false,
                occurrence: 0,
                segments: &[
                    (0x7f00_0000_0000, 1000, SegmentKind::Device),
                    (0x7f00_0010_0000, 1000, SegmentKind::Host),
                ],
                continues: &[false, false],
                inputs: &ids,
                outputs: Some(&ids),
                image: &cubin,
                image_file: "images/k.cubin",
                globals: &[
                    ("g_scale".into(), vec![0; 4]),
                    ("c_bias".into(), vec![0; 32]),
                ],
                objects: &[],
                from_graph: true,
                outside: &[],
                unreplayable: None,
                raced: None,
            },
        )
        .unwrap();
        let dsc = Descriptor::read(&d.path().join(&json)).unwrap();
        let c = dsc.cuda.as_ref().unwrap();
        assert_eq!(c.segments[1].offset, 4096, "page-aligned offsets");
        assert_eq!(dsc.snapshot_len(), Some(4096 + 1000));
        assert_eq!(c.segments[1].kind, SegmentKind::Host);
        assert!(c.from_graph && c.outside == Some(vec![]));
        let findings = rr_format::check::check_instance(
            &InstanceFiles::from_descriptor_path(&d.path().join(&json)),
            None,
        );
        assert!(findings.is_empty(), "{findings:?}");
        let rows = [ReportRow {
            json_file: json.clone(),
            kernel_name: "rr_stencil3d".into(),
            time_ns: Some(1500),
            occurrences: Some(3),
        }];
        report(d.path(), "report.txt", &rows, None, &["a note".into()]).unwrap();
        let rd = rr_format::RecordDir::open(d.path()).unwrap();
        assert_eq!(rd.report.unwrap().rows, rows, "the report parses back");
    }
}
