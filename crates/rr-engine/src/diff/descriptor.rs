//! Two instances' descriptors compared field by field on decoded values, not JSON text:
//! geometry, limits, each argument (with the segment and offset it points to), segments,
//! launch attributes, and module globals by name.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{json, Value as Json};

use rr_format::descriptor::{Argument, CudaLaunch, Descriptor, ImageKept, Segment};
use rr_format::globals::Globals;
use rr_format::inspect::{human, GlobalInfo};
use rr_format::memory::MemoryMap;

/// One field whose values differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// `grid`, `argument 2`, `segment 0`, `global g_scale`, …
    pub field: String,
    /// The values as JSON (numbers as numbers); `null` where one side has no such field.
    pub a: Json,
    pub b: Json,
    /// The same values as text (`64×1×1`, `0x153940004000 (segment 0 + 0x4000)`).
    #[serde(skip)]
    pub a_text: String,
    #[serde(skip)]
    pub b_text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FieldDiff {
    /// How many fields were compared.
    pub fields: usize,
    pub changes: Vec<FieldChange>,
    /// Every field compared, in order, as text (the explorer shows them all).
    #[serde(skip)]
    pub rows: Vec<FieldRow>,
}

/// One compared field as text: its name, both values, and whether they differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    pub field: String,
    pub a: String,
    pub b: String,
    pub changed: bool,
}

/// One side's value of a field.
struct Shown {
    json: Json,
    text: String,
}

fn shown(json: Json, text: impl Into<String>) -> Shown {
    Shown {
        json,
        text: text.into(),
    }
}
fn number(n: impl Into<Json> + std::fmt::Display + Copy) -> Shown {
    shown(n.into(), n.to_string())
}
fn dims(v: [u32; 3]) -> Shown {
    shown(json!(v), format!("{}×{}×{}", v[0], v[1], v[2]))
}
fn limits(l: [u32; 2]) -> Shown {
    let text = match l {
        [0, 0] => "unrestricted".to_string(),
        [lo, hi] => format!("[{lo}, {hi}]"),
    };
    shown(json!(l), text)
}
fn absent() -> Shown {
    shown(Json::Null, "(none)")
}

impl FieldDiff {
    /// `descriptor: 2 of 26 fields differ` / `globals: all 2 equal` (`unit`: ` fields`, or
    /// nothing where the count says what it counts): the CLI's line and the explorer's title.
    pub fn summary(&self, what: &str, unit: &str) -> String {
        match self.changes.len() {
            0 => format!("{what}: all {}{unit} equal", self.fields),
            n => format!("{what}: {n} of {}{unit} differ", self.fields),
        }
    }

    fn add(&mut self, field: impl Into<String>, a: Shown, b: Shown) {
        self.push(field.into(), a.json != b.json, a, b);
    }

    /// One compared field; a changed one is also listed in `changes`.
    fn push(&mut self, field: String, changed: bool, a: Shown, b: Shown) {
        self.fields += 1;
        self.rows.push(FieldRow {
            field: field.clone(),
            a: a.text.clone(),
            b: b.text.clone(),
            changed,
        });
        if changed {
            self.changes.push(FieldChange {
                field,
                a: a.json,
                b: b.json,
                a_text: a.text,
                b_text: b.text,
            });
        }
    }

    /// A list compared by position: its length, then each entry (absent on the shorter side).
    fn add_list(&mut self, what: &str, a: Vec<Shown>, b: Vec<Shown>) {
        self.add(
            format!("{what}s"),
            number(a.len() as u64),
            number(b.len() as u64),
        );
        let (mut a, mut b) = (a.into_iter(), b.into_iter());
        for i in 0.. {
            match (a.next(), b.next()) {
                (None, None) => break,
                (x, y) => self.add(
                    format!("{what} {i}"),
                    x.unwrap_or_else(absent),
                    y.unwrap_or_else(absent),
                ),
            }
        }
    }
}

/// Compare two descriptors; each map (built from its instance's input length) places pointer
/// arguments in their segments.
pub fn compare_descriptors(
    a: &Descriptor,
    map_a: &MemoryMap,
    b: &Descriptor,
    map_b: &MemoryMap,
) -> FieldDiff {
    let mut d = FieldDiff::default();
    let text = |s: &str| shown(json!(s), s);
    d.add("format", text(a.format.label()), text(b.format.label()));
    d.add("kernel", text(&a.name), text(&b.name));
    d.add("grid", dims(a.grid()), dims(b.grid()));
    d.add("block", dims(a.block()), dims(b.block()));
    let shared = |x: &Descriptor| number(x.shared_memory_size);
    d.add("dynamic shared memory", shared(a), shared(b));
    d.add(
        "teams limits",
        limits(a.teams_limits),
        limits(b.teams_limits),
    );
    d.add(
        "threads limits",
        limits(a.threads_limits),
        limits(b.threads_limits),
    );
    d.add(
        "loop trip count",
        number(a.loop_trip_count),
        number(b.loop_trip_count),
    );
    d.add("device", number(a.device_id), number(b.device_id));
    let reserved = |x: &Descriptor| {
        shown(
            json!({"addr": x.valloc_addr, "size": x.valloc_size}),
            format!("{:#x} + {}", x.valloc_addr, human(x.valloc_size)),
        )
    };
    d.add("reserved range", reserved(a), reserved(b));
    let arguments = |x: &Descriptor, map: &MemoryMap| {
        x.arguments()
            .iter()
            .map(|arg| show_argument(arg, map))
            .collect()
    };
    d.add_list("argument", arguments(a, map_a), arguments(b, map_b));
    let segments = |map: &MemoryMap| map.segments.iter().map(show_segment).collect();
    d.add_list("segment", segments(map_a), segments(map_b));
    // The rr-tui extension; LLVM records have none of it (absent on both sides: equal).
    let cuda =
        |x: &Descriptor, f: &dyn Fn(&CudaLaunch) -> Shown| x.cuda.as_ref().map_or_else(absent, f);
    let cluster = |c: &CudaLaunch| c.cluster_dim.map_or_else(absent, dims);
    d.add("cluster", cuda(a, &cluster), cuda(b, &cluster));
    let cooperative = |c: &CudaLaunch| shown(json!(c.cooperative), c.cooperative.to_string());
    d.add("cooperative", cuda(a, &cooperative), cuda(b, &cooperative));
    // Stored from 0; said from 1, as `inspect` and `record --occurrence` count.
    let occurrence = |c: &CudaLaunch| {
        shown(
            json!(c.occurrence),
            format!("launch {} of the kernel", c.occurrence.saturating_add(1)),
        )
    };
    d.add("occurrence", cuda(a, &occurrence), cuda(b, &occurrence));
    // Every layout says where its image is (LLVM's is the instance's own, under the
    // descriptor's stem): "(none)" would read as an instance without one.
    let image = |x: &Descriptor| match x.image_kept() {
        ImageKept::NotRecorded => shown(Json::Null, ImageKept::NotRecorded.describe()),
        kept => shown(json!(kept.describe()), kept.describe()),
    };
    d.add("image file", image(a), image(b));
    let graph = |c: &CudaLaunch| shown(json!(c.from_graph), c.from_graph.to_string());
    d.add("from a CUDA graph", cuda(a, &graph), cuda(b, &graph));
    let unreplayable = |c: &CudaLaunch| {
        c.unreplayable
            .as_deref()
            .map_or_else(|| shown(Json::Null, "replayable"), text)
    };
    d.add(
        "unreplayable",
        cuda(a, &unreplayable),
        cuda(b, &unreplayable),
    );
    let raced = |c: &CudaLaunch| {
        c.raced
            .as_deref()
            .map_or_else(|| shown(Json::Null, "no race seen"), text)
    };
    d.add("may have raced", cuda(a, &raced), cuda(b, &raced));
    let objects = |x: &Descriptor| {
        x.cuda.as_ref().map_or_else(Vec::new, |c| {
            c.objects
                .iter()
                .map(|o| {
                    shown(
                        serde_json::to_value(o).unwrap_or(Json::Null),
                        format!("byte {}: {}", o.offset, o.describe()),
                    )
                })
                .collect()
        })
    };
    d.add_list("object", objects(a), objects(b));
    let outside = |x: &Descriptor| {
        rr_format::memory::outside_words(x)
            .iter()
            .map(|w| {
                shown(
                    serde_json::to_value(w).unwrap_or(Json::Null),
                    rr_format::memory::describe_outside(x, w),
                )
            })
            .collect()
    };
    d.add_list("outside pointer", outside(a), outside(b));
    d
}

/// A pointer argument with the place it points to; a by-value one as an integer (and hex).
fn show_argument(arg: &Argument, map: &MemoryMap) -> Shown {
    if let Some(w) = arg.word {
        let place = map
            .arg_region(arg.index)
            .map(|r| {
                format!(
                    " ({} + {:#x})",
                    map.segment_name(r.segment),
                    r.addr - map.segments[r.segment].addr
                )
            })
            .unwrap_or_default();
        // Words of any 64 bits: decimal strings in JSON (doubles would round past 2^53).
        return shown(json!(w.to_string()), format!("{w:#x}{place}"));
    }
    let hex = rr_format::descriptor::hex_encode(&arg.bytes);
    if (1..=8).contains(&arg.bytes.len()) {
        let mut buf = [0u8; 8];
        buf[..arg.bytes.len()].copy_from_slice(&arg.bytes);
        let v = u64::from_le_bytes(buf);
        return shown(json!(v.to_string()), format!("{v} ({v:#x})"));
    }
    shown(json!(hex), format!("{} bytes: {hex}", arg.bytes.len()))
}

fn show_segment(s: &Segment) -> Shown {
    shown(
        json!({"addr": s.addr, "size": s.size, "offset": s.offset, "kind": s.kind.label()}),
        format!(
            "{} {:#x} + {} at file offset {:#x}",
            s.kind.label(),
            s.addr,
            human(s.size),
            s.offset
        ),
    )
}

/// Globals by name: added, removed, resized or with other contents. Either side may be
/// unreadable (the error is shown as its value).
pub fn compare_globals(a: &Result<Globals, String>, b: &Result<Globals, String>) -> FieldDiff {
    let mut d = FieldDiff::default();
    let (ga, gb) = match (a, b) {
        (Ok(ga), Ok(gb)) => (ga, gb),
        _ => {
            let file = |g: &Result<Globals, String>| match g {
                Ok(g) => number(g.entries.len() as u64),
                Err(e) => shown(
                    json!(format!("unreadable: {e}")),
                    format!("unreadable: {e}"),
                ),
            };
            d.add("globals", file(a), file(b));
            return d;
        }
    };
    // One field per global name (a global on one side only is a change of its own; their
    // counts are not a field of their own).
    let (da, db) = (by_name(ga), by_name(gb));
    let names: BTreeSet<&str> = da.keys().chain(db.keys()).copied().collect();
    for name in names {
        let (va, vb) = (da.get(name).copied(), db.get(name).copied());
        let first_difference = match (va, vb) {
            (Some(x), Some(y)) if x != y => x.iter().zip(y).position(|(p, q)| p != q),
            _ => None,
        };
        let field = match first_difference {
            Some(at) if at >= SHOWN_GLOBAL_BYTES => {
                format!("global {name} (first difference at +{at:#x})")
            }
            _ => format!("global {name}"),
        };
        let side = |v: Option<&[u8]>| v.map_or_else(absent, show_global);
        // Compare the whole contents: the JSON shows only their head.
        d.push(field, va != vb, side(va), side(vb));
    }
    d
}

/// Globals by name from their summaries (size, XXH3 of the contents, the first bytes): what
/// the explorer holds without reading the files again. Counted as [`compare_globals`] counts,
/// one field per name (an unreadable side is one field saying why).
pub fn compare_global_summaries(
    a: (&[GlobalInfo], Option<&str>),
    b: (&[GlobalInfo], Option<&str>),
) -> FieldDiff {
    let mut d = FieldDiff::default();
    if a.1.is_some() || b.1.is_some() {
        let side = |s: (&[GlobalInfo], Option<&str>)| match s.1 {
            Some(e) => shown(
                json!(format!("unreadable: {e}")),
                format!("unreadable: {e}"),
            ),
            None => number(s.0.len() as u64),
        };
        d.add("globals", side(a), side(b));
        return d;
    }
    let by_name = |g: &[GlobalInfo]| -> BTreeMap<String, (u64, u64, String)> {
        g.iter()
            .map(|e| (e.name.clone(), (e.size, e.xxh3, e.preview_hex.clone())))
            .collect()
    };
    let (da, db) = (by_name(a.0), by_name(b.0));
    let names: BTreeSet<&String> = da.keys().chain(db.keys()).collect();
    let side = |v: Option<&(u64, u64, String)>| match v {
        Some((size, _, preview)) => shown(Json::Null, format!("{}: {preview}", human(*size))),
        None => absent(),
    };
    for name in names {
        let (va, vb) = (da.get(name), db.get(name));
        let changed = va.map(|v| (v.0, v.1)) != vb.map(|v| (v.0, v.1));
        d.push(format!("global {name}"), changed, side(va), side(vb));
    }
    d
}

/// A file's globals by name, in name order, as slices of the file: no copies, and thousands of
/// globals are looked up in O(log n).
fn by_name(g: &Globals) -> BTreeMap<&str, &[u8]> {
    g.entries
        .iter()
        .map(|e| (e.name.as_str(), g.data(e)))
        .collect()
}

/// Globals can be large; reports show this many bytes of each.
const SHOWN_GLOBAL_BYTES: usize = 32;

fn show_global(bytes: &[u8]) -> Shown {
    let head = &bytes[..bytes.len().min(SHOWN_GLOBAL_BYTES)];
    let more = if bytes.len() > head.len() { "…" } else { "" };
    let hex = rr_format::descriptor::hex_encode(head);
    shown(
        json!({"size": bytes.len(), "hex": format!("{hex}{more}")}),
        format!("{}: {hex}{more}", human(bytes.len() as u64)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(stem: &str) -> (Descriptor, MemoryMap) {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../record-fixtures/llvm-two-kernels");
        let d = Descriptor::read(&dir.join(format!("{stem}.json"))).unwrap();
        let len = std::fs::metadata(dir.join(format!("{stem}.record_input")))
            .unwrap()
            .len();
        let map = MemoryMap::new(&d, len);
        (d, map)
    }

    #[test]
    fn two_launches_of_one_kernel_differ_in_geometry_only() {
        let (a, ma) = fixture("8683979482637550046_13526365365894479501");
        let (b, mb) = fixture("8683979482637550046_6547468769535274944");
        let diff = compare_descriptors(&a, &ma, &b, &mb);
        let fields: Vec<&str> = diff.changes.iter().map(|c| c.field.as_str()).collect();
        assert!(
            fields.contains(&"grid") || fields.contains(&"block"),
            "{fields:?}"
        );
        assert!(!fields.contains(&"kernel") && !fields.iter().any(|f| f.starts_with("argument")));
        let same = compare_descriptors(&a, &ma, &a, &ma);
        assert!(same.changes.is_empty() && same.fields > 15);
    }

    /// LLVM records keep their image beside the descriptor under its stem: named so, never
    /// "(none)"; LLVM 16–17 kept none; rr-tui records name their shared file.
    #[test]
    fn the_image_file_is_named_for_every_layout() {
        let (a, ma) = fixture("8683979482637550046_13526365365894479501");
        let row = |d: &FieldDiff| {
            d.rows
                .iter()
                .find(|r| r.field == "image file")
                .map(|r| (r.a.clone(), r.b.clone()))
                .unwrap()
        };
        let mut legacy = a.clone();
        legacy.format = rr_format::descriptor::RecordFormat::LegacyLlvm16;
        let diff = compare_descriptors(&a, &ma, &legacy, &ma);
        assert_eq!(
            row(&diff),
            (
                "own .image beside the .json".to_string(),
                "not recorded (LLVM 16–17)".to_string()
            )
        );
        let c = diff
            .changes
            .iter()
            .find(|c| c.field == "image file")
            .unwrap();
        assert_eq!(
            (c.a.clone(), c.b.clone()),
            (json!("own .image beside the .json"), Json::Null)
        );
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../record-fixtures/rrtui-stencil3d");
        let json = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "json"))
            .unwrap();
        let r = Descriptor::read(&json).unwrap();
        let image = r.cuda.as_ref().unwrap().image_file.clone();
        let len = std::fs::metadata(json.with_extension("record_input"))
            .unwrap()
            .len();
        let mr = MemoryMap::new(&r, len);
        assert_eq!(row(&compare_descriptors(&r, &mr, &r, &mr)).0, image);
    }

    #[test]
    fn arguments_show_where_they_point() {
        let (a, ma) = fixture("8683979482637550046_13526365365894479501");
        let mut b = a.clone();
        b.arg_ptrs[0] += 0x10;
        let diff = compare_descriptors(&a, &ma, &b, &ma);
        let c = diff
            .changes
            .iter()
            .find(|c| c.field == "argument 0")
            .unwrap();
        assert!(c.a_text.ends_with("(segment 0 + 0x4000)"), "{}", c.a_text);
        let word = |v: &Json| v.as_str().and_then(|s| s.parse::<u64>().ok());
        assert_eq!(word(&c.b), Some(word(&c.a).unwrap() + 0x10));
    }

    #[test]
    fn globals_by_name() {
        let parse =
            |entries: &[(&str, &[u8])]| Globals::parse(Globals::encode(entries), Path::new("g"));
        let a = parse(&[("scale", &[1, 0, 0, 0]), ("gone", &[1])]).map_err(|e| e.to_string());
        let b = parse(&[("scale", &[2, 0, 0, 0]), ("new", &[7; 40])]).map_err(|e| e.to_string());
        let d = compare_globals(&a, &b);
        let fields: Vec<&str> = d.changes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["global gone", "global new", "global scale"]);
        assert_eq!(d.changes[2].a_text, "4 B: 01000000");
        assert_eq!(d.changes[1].a, Json::Null);
        assert!(d.changes[1].b_text.ends_with('…'));
        let broken = compare_globals(&a, &Err("x.globals: truncated".into()));
        assert_eq!(broken.changes[0].b_text, "unreadable: x.globals: truncated");
    }
}
