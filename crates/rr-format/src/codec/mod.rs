//! Descriptors to and from JSON, every generation: LLVM's current layout and rr-tui's
//! extension here, LLVM 16–22's through [`crate::legacy`]. Above both the descriptor's types and
//! the legacy parser, which use the same field reader ([`Fields`]).

mod cuda;
mod segments;

use serde_json::{Map, Value};
use std::path::Path;

use crate::descriptor::{hex_encode, Descriptor, Fields, RecordFormat, RR_FORMAT_VERSION};
use crate::error::{Error, Result};
use crate::limits::MAX_REGION_BYTES;
use cuda::parse_cuda;

impl Descriptor {
    /// Parse descriptor text; `path` is only used in messages.
    pub fn parse(text: &[u8], path: &Path) -> Result<Descriptor> {
        let err = |p: String| Error::format(path, p);
        let value: Value =
            serde_json::from_slice(text).map_err(|e| err(format!("invalid JSON: {e}")))?;
        let obj = value
            .as_object()
            .ok_or_else(|| err("invalid JSON file: the top level is not an object".into()))?;
        let f = Fields { obj, path };
        if crate::legacy::is_legacy(obj) {
            return crate::legacy::parse(&f);
        }
        let format = record_format(&f)?;
        let april = format == RecordFormat::LlvmApril2026;
        let name = f.name()?;
        let num_args = f.num_args()?;
        let num_teams = f.uint(
            if april { "NumTeamsClause" } else { "NumTeams" },
            u32::MAX as u64,
        )? as u32;
        let num_threads = f.uint(
            if april {
                "ThreadLimitClause"
            } else {
                "NumThreads"
            },
            u32::MAX as u64,
        )? as u32;
        let shared_memory_size = f.uint("SharedMemorySize", u32::MAX as u64)? as u32;
        let loop_trip_count = f.loop_trip_count()?;
        let device_id = f.device_id()?;
        let valloc_addr = f.int("VAllocAddr")? as u64;
        let valloc_size = f.int("VAllocSize")? as u64;
        // LLVM's region is committed memory; an rr-tui record's VAllocSize only spans its
        // segments (managed and device allocations can lie terabytes apart), whose total is
        // bounded below.
        if valloc_size > MAX_REGION_BYTES && format != RecordFormat::RrTui {
            return Err(err(format!(
                "VAllocSize {valloc_size} is larger than any GPU's memory (rr-tui accepts at most {MAX_REGION_BYTES} bytes)"
            )));
        }
        if valloc_addr.checked_add(valloc_size).is_none() {
            return Err(err(
                "VAllocAddr + VAllocSize overflows the address space".into()
            ));
        }
        let teams_limits = limits(&f, "TeamsLimits", april)?;
        let threads_limits = limits(&f, "ThreadsLimits", april)?;
        let (arg_ptrs, arg_offsets) = f.arguments()?;
        let cuda = if format == RecordFormat::RrTui {
            let version = f.uint("RrTuiFormat", RR_FORMAT_VERSION)?;
            Some(parse_cuda(&f, version, valloc_addr, valloc_size)?)
        } else {
            None
        };
        let expected_args = cuda
            .as_ref()
            .map(|c| c.param_layout.len())
            .unwrap_or(arg_ptrs.len());
        if num_args as usize != expected_args {
            return Err(err(format!(
                "NumArgs is {num_args} but {} lists {expected_args} arguments",
                if cuda.is_some() {
                    "ParamLayout"
                } else {
                    "ArgPtrs"
                }
            )));
        }
        Ok(Descriptor {
            format,
            name,
            num_args,
            num_teams,
            num_threads,
            shared_memory_size,
            loop_trip_count,
            device_id,
            valloc_addr,
            valloc_size,
            teams_limits,
            threads_limits,
            arg_ptrs,
            arg_offsets,
            cuda,
            legacy: None,
        })
    }

    /// Read and parse a descriptor file (a regular file of plausible size; see [`crate::fsio`]).
    pub fn read(path: &Path) -> Result<Descriptor> {
        let text =
            crate::fsio::read_limited(path, crate::fsio::MAX_DESCRIPTOR_BYTES, "descriptor")?;
        Descriptor::parse(&text, path)
    }

    /// Serialise as libomptarget does: compact, keys sorted, decimal integers, addresses as i64.
    pub fn to_json(&self) -> String {
        if let Some(l) = &self.legacy {
            return crate::legacy::to_json(self, l);
        }
        let mut m = Map::new();
        let i = |v: u64| Value::from(v as i64);
        crate::descriptor::insert_common_keys(self, &mut m);
        m.insert("NumTeams".into(), self.num_teams.into());
        m.insert("NumThreads".into(), self.num_threads.into());
        m.insert("SharedMemorySize".into(), self.shared_memory_size.into());
        m.insert("VAllocAddr".into(), i(self.valloc_addr));
        m.insert("VAllocSize".into(), self.valloc_size.into());
        m.insert(
            "TeamsLimits".into(),
            Value::from(self.teams_limits.to_vec()),
        );
        m.insert(
            "ThreadsLimits".into(),
            Value::from(self.threads_limits.to_vec()),
        );
        if let Some(c) = &self.cuda {
            m.insert(
                "RrTuiFormat".into(),
                (if c.content.is_some() { 2u64 } else { 1 }).into(),
            );
            m.insert("Grid".into(), Value::from(c.grid.to_vec()));
            m.insert("Block".into(), Value::from(c.block.to_vec()));
            m.insert("ParamBuffer".into(), hex_encode(&c.param_buffer).into());
            m.insert(
                "ParamLayout".into(),
                Value::from(
                    c.param_layout
                        .iter()
                        .map(|s| Value::from(vec![s.offset, s.size]))
                        .collect::<Vec<_>>(),
                ),
            );
            let segs = c
                .segments
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let mut o = Map::new();
                    o.insert("Addr".into(), i(s.addr));
                    o.insert("Size".into(), s.size.into());
                    o.insert("Offset".into(), s.offset.into());
                    crate::objects::kind_to_json(&s.kind, &mut o);
                    if let Some(content) = c.content.as_ref().and_then(|v| v.get(k)) {
                        o.insert("Input".into(), content.input.clone().into());
                        if let Some(out) = &content.output {
                            o.insert("Output".into(), out.clone().into());
                        }
                        if content.continues {
                            o.insert("Continues".into(), true.into());
                        }
                    }
                    Value::Object(o)
                })
                .collect::<Vec<_>>();
            m.insert("Segments".into(), Value::from(segs));
            if let Some(cd) = c.cluster_dim {
                m.insert("ClusterDim".into(), Value::from(cd.to_vec()));
            }
            m.insert("Cooperative".into(), c.cooperative.into());
            m.insert("Occurrence".into(), c.occurrence.into());
            m.insert("ImageFile".into(), c.image_file.clone().into());
            if !c.objects.is_empty() {
                m.insert(
                    "Objects".into(),
                    Value::from(c.objects.iter().map(|o| o.to_json()).collect::<Vec<_>>()),
                );
            }
            if c.from_graph {
                m.insert("FromGraph".into(), true.into());
            }
            if let Some(out) = &c.outside {
                m.insert(
                    "OutsidePointers".into(),
                    Value::from(out.iter().map(|o| o.to_json()).collect::<Vec<_>>()),
                );
            }
            if let Some(why) = &c.unreplayable {
                m.insert("Unreplayable".into(), why.clone().into());
            }
            if let Some(why) = &c.raced {
                m.insert("MayHaveRaced".into(), why.clone().into());
            }
        }
        // serde_json's Map is a BTreeMap without `preserve_order`: keys come out sorted, as LLVM's.
        Value::Object(m).to_string()
    }
}

/// Which generation wrote a current (not legacy) descriptor: rr-tui's extension says its
/// version, LLVM's layouts are told apart by their key names.
fn record_format(f: &Fields) -> Result<RecordFormat> {
    let obj = f.obj;
    let err = |p: String| Error::format(f.path, p);
    Ok(if obj.contains_key("RrTuiFormat") {
        let v = f.uint("RrTuiFormat", u64::MAX)?;
        if !(1..=RR_FORMAT_VERSION).contains(&v) {
            return Err(err(format!("rr-tui format version {v} is not supported (this build reads 1 to {RR_FORMAT_VERSION}); a newer rr-tui wrote it")));
        }
        RecordFormat::RrTui
    } else if obj.contains_key("NumTeams") {
        RecordFormat::Llvm
    } else if obj.contains_key("NumTeamsClause") {
        RecordFormat::LlvmApril2026
    } else {
        return Err(err("failed to read JSON integer NumTeams".into()));
    })
}

/// `TeamsLimits` or `ThreadsLimits`: a min and a max (both 0 when absent from an `april`
/// record, which may leave them out).
fn limits(f: &Fields, key: &str, april: bool) -> Result<[u32; 2]> {
    let err = |p: String| Error::format(f.path, p);
    if !f.obj.contains_key(key) && april {
        return Ok([0, 0]);
    }
    let v = f.int_array(key)?;
    if v.len() != 2 {
        return Err(err(
            "TeamsLimits and ThreadsLimits must have a min and max".into()
        ));
    }
    let conv = |x: i64| {
        u32::try_from(x)
            .map_err(|_| err(format!("failed to read an integer from JSON array {key}")))
    };
    Ok([conv(v[0])?, conv(v[1])?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::{ParamSlot, Segment, SegmentContent};
    use crate::InstanceFiles;

    const SAMPLE: &str = r#"{"ArgOffsets":[0,0,0],"ArgPtrs":[23335631060992,1000,-1],"DeviceId":0,"LoopTripCount":1000,"Name":"__omp_offloading_10302_1e5d1a_main_l27","NumArgs":3,"NumTeams":8,"NumThreads":128,"SharedMemorySize":0,"TeamsLimits":[0,0],"ThreadsLimits":[1,128],"VAllocAddr":23335631060992,"VAllocSize":8589934592}"#;

    fn parse(s: &str) -> Result<Descriptor> {
        Descriptor::parse(s.as_bytes(), Path::new("x.json"))
    }

    #[test]
    fn parses_the_documented_sample_and_round_trips() {
        let d = parse(SAMPLE).unwrap();
        assert_eq!(d.format, RecordFormat::Llvm);
        assert_eq!(d.valloc_addr, 0x153940000000);
        assert_eq!(d.arg_ptrs[2], u64::MAX);
        assert_eq!(d.arguments()[2].word, Some(u64::MAX));
        assert_eq!(d.to_json(), SAMPLE);
    }

    #[test]
    fn april_aliases_and_missing_limits() {
        let s = r#"{"ArgOffsets":[0],"ArgPtrs":[1],"DeviceId":0,"LoopTripCount":0,"Name":"k","NumArgs":1,"NumTeamsClause":4,"ThreadLimitClause":64,"SharedMemorySize":0,"VAllocAddr":4096,"VAllocSize":4096}"#;
        let d = parse(s).unwrap();
        assert_eq!(d.format, RecordFormat::LlvmApril2026);
        assert_eq!((d.num_teams, d.num_threads), (4, 64));
        assert_eq!(d.teams_limits, [0, 0]);
    }

    #[test]
    fn errors_use_llvm_wording() {
        let e = parse(&SAMPLE.replace("\"NumThreads\":128,", ""))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "x.json: failed to read JSON integer NumThreads");
        let e = parse(&SAMPLE.replace("\"ThreadsLimits\":[1,128]", "\"ThreadsLimits\":[1]"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("must have a min and max"), "{e}");
        let e = parse(&SAMPLE.replace("\"NumArgs\":3", "\"NumArgs\":2"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("NumArgs is 2 but ArgPtrs lists 3"), "{e}");
        let e = parse(&SAMPLE.replace("8589934592", "4611686018427387904"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger than any GPU"), "{e}");
        let e = parse("[1,2").unwrap_err().to_string();
        assert!(e.starts_with("x.json: invalid JSON"), "{e}");
        let e = parse(r#"{"BumpAllocVAStart":1}"#).unwrap_err().to_string();
        assert_eq!(e, "x.json: failed to read JSON string Name");
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_garbage(text in "\\PC{0,300}") {
            let _ = parse(&text);
        }

        #[test]
        fn never_panics_on_mutated_descriptors(pos in 0usize..SAMPLE.len(), byte in proptest::prelude::any::<u8>(), cut in 0usize..SAMPLE.len()) {
            let mut b = SAMPLE.as_bytes().to_vec();
            b[pos] = byte;
            let _ = Descriptor::parse(&b, Path::new("m"));
            let _ = Descriptor::parse(&SAMPLE.as_bytes()[..cut], Path::new("m"));
        }

        #[test]
        fn never_panics_on_wild_values(v in proptest::prelude::any::<i64>(), key in 0usize..13) {
            let keys = ["NumArgs","NumTeams","NumThreads","SharedMemorySize","LoopTripCount","DeviceId","VAllocAddr","VAllocSize","ArgPtrs","ArgOffsets","TeamsLimits","ThreadsLimits","Name"];
            let mut obj: serde_json::Value = serde_json::from_str(SAMPLE).unwrap();
            obj[keys[key]] = serde_json::Value::from(v);
            let _ = parse(&obj.to_string());
        }
    }

    /// Any JSON value a hostile writer might put under a key.
    fn wild_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (0u64..64).prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::btree_map("[A-Za-z]{1,8}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// rr-tui records with every extension key replaced by anything: parsing never panics,
        /// and whatever parses can be used (arguments, memory map, JSON) without panicking and
        /// round-trips.
        #[test]
        fn rr_extension_survives_wild_values(
            key in 0usize..17,
            v in wild_value(),
            kind in wild_value(),
            seg_addr in proptest::prelude::any::<i64>(),
            seg_size in proptest::prelude::any::<i64>(),
            slot in (proptest::prelude::any::<u64>(), proptest::prelude::any::<u64>()),
            input_len in proptest::prelude::any::<u64>(),
        ) {
            let keys = ["Grid", "Block", "ParamBuffer", "ParamLayout", "Segments", "ClusterDim", "Cooperative", "Occurrence", "ImageFile", "RrTuiFormat", "VAllocAddr", "VAllocSize", "Objects", "FromGraph", "OutsidePointers", "Unreplayable", "MayHaveRaced"];
            let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
            let c = d.cuda.as_mut().unwrap();
            c.param_buffer = vec![0; 16];
            c.param_layout = vec![ParamSlot { offset: 0, size: 8 }, ParamSlot { offset: 8, size: 8 }];
            d.num_args = 2;
            let mut obj: Value = serde_json::from_str(&d.to_json()).unwrap();
            obj["Segments"][0]["Addr"] = Value::from(seg_addr);
            obj["Segments"][0]["Size"] = Value::from(seg_size);
            obj["ParamLayout"][1] = Value::from(vec![slot.0, slot.1]);
            obj["Segments"][0]["Kind"] = kind;
            obj[keys[key]] = v;
            if let Ok(d) = parse(&obj.to_string()) {
                let _ = crate::memory::outside_words(&d);
                let _ = crate::memory::replay_caveats(&d);
                let args = d.arguments();
                let _ = crate::memory::MemoryMap::new(&d, input_len);
                let _ = crate::memory::MemoryMap::from_parts(d.segments(input_len), &args);
                let _ = InstanceFiles::expected_stem(&d);
                proptest::prop_assert_eq!(parse(&d.to_json()).unwrap(), d);
            }
        }
    }

    #[test]
    fn a_raced_snapshot_is_said_in_words_and_bounded() {
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        d.cuda.as_mut().unwrap().raced = Some("stream 0x10 had work in flight\u{1b}[2J".into());
        let back = parse(&d.to_json()).unwrap();
        assert_eq!(back, d, "round-trips");
        let said = crate::memory::replay_caveats(&back);
        assert_eq!(said.len(), 1);
        assert!(
            said[0].contains("may have raced") && !said[0].contains('\u{1b}'),
            "{said:?}"
        );
        let mut v: Value = serde_json::from_str(&d.to_json()).unwrap();
        for bad in [
            Value::from("x".repeat(1001)),
            Value::from(" \t"),
            Value::from(3),
        ] {
            v["MayHaveRaced"] = bad;
            let e = parse(&v.to_string()).unwrap_err().to_string();
            assert!(e.contains("MayHaveRaced must be a reason in words"), "{e}");
        }
        // Host memory whose recorded output differs from its input: said too; device memory not.
        let c = d.cuda.as_mut().unwrap();
        c.raced = None;
        c.segments = vec![
            Segment::device(0x7f00_0000_0000, 0x1000, 0),
            Segment {
                kind: crate::objects::SegmentKind::Host,
                ..Segment::device(0x7f10_0000_0000, 4, 0x1000)
            },
        ];
        let id = |b: u8| format!("{:032x}", b);
        c.content = Some(vec![
            SegmentContent {
                input: id(1),
                output: Some(id(2)),
                continues: false,
            },
            SegmentContent {
                input: id(3),
                output: Some(id(4)),
                continues: false,
            },
        ]);
        let said = crate::memory::replay_caveats(&d);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("host memory it reads changed")
                && said[0].contains("segment 1: 4 B at 0x7f1000000000"),
            "{said:?}"
        );
        d.cuda.as_mut().unwrap().content.as_mut().unwrap()[1].output = Some(id(3));
        assert!(
            crate::memory::replay_caveats(&d).is_empty(),
            "unchanged host memory"
        );
    }

    #[test]
    fn overflowing_layout_and_segments_are_errors_not_panics() {
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        d.num_args = 1;
        d.cuda.as_mut().unwrap().param_buffer = vec![0; 8];
        d.cuda.as_mut().unwrap().param_layout = vec![ParamSlot { offset: 0, size: 8 }];
        let mut v: Value = serde_json::from_str(&d.to_json()).unwrap();
        v["ParamLayout"] = serde_json::json!([[u64::MAX, 8]]);
        let e = parse(&v.to_string()).unwrap_err().to_string();
        assert!(e.contains("lies outside the 8-byte ParamBuffer"), "{e}");
        let mut v: Value = serde_json::from_str(&d.to_json()).unwrap();
        v["Segments"] = serde_json::json!([{"Addr": -1, "Size": 16, "Offset": 0}]);
        assert!(parse(&v.to_string()).is_err());
        let mut v: Value = serde_json::from_str(&d.to_json()).unwrap();
        v["ImageFile"] = "images/../../etc/passwd".into();
        assert!(parse(&v.to_string())
            .unwrap_err()
            .to_string()
            .contains("contains `..`"));
    }

    /// Objects and outside words name parameter words that are there, with their values, once
    /// each; a blank reason is no reason; a mipmapped texture is unreplayable even unsaid.
    #[test]
    fn objects_and_outside_words_agree_with_the_parameters() {
        use crate::objects::{ObjectArg, ObjectKind, OutsideWord, Resource, TextureDesc};
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        d.num_args = 2;
        let c = d.cuda.as_mut().unwrap();
        c.param_buffer = [5u64.to_le_bytes(), 9u64.to_le_bytes()].concat();
        c.param_layout = vec![
            ParamSlot { offset: 0, size: 8 },
            ParamSlot { offset: 8, size: 8 },
        ];
        c.outside = Some(vec![OutsideWord {
            offset: 0,
            value: 5,
            what: "host memory".into(),
        }]);
        let good: Value = serde_json::from_str(&d.to_json()).unwrap();
        assert!(parse(&good.to_string()).is_ok());
        let edits: [(&str, Value, &str); 6] = [
            ("Value", "6".into(), "not the parameter word"),
            ("Offset", 4.into(), "not an 8-byte word"),
            ("dup", Value::Null, "named already"),
            ("Unreplayable", "   ".into(), "Unreplayable"),
            (
                "Unreplayable",
                "\u{200b}\u{feff}\u{1b}".into(),
                "Unreplayable",
            ),
            (
                "ParamLayout",
                serde_json::json!([[0, 16], [8, 8]]),
                "starts inside",
            ),
        ];
        for (key, value, want) in edits {
            let mut v = good.clone();
            match key {
                "dup" => {
                    let w = v["OutsidePointers"][0].clone();
                    v["OutsidePointers"].as_array_mut().unwrap().push(w);
                }
                "Unreplayable" | "ParamLayout" => v[key] = value,
                _ => v["OutsidePointers"][0][key] = value,
            }
            let e = parse(&v.to_string()).unwrap_err().to_string();
            assert!(e.contains(want), "{key}: {e}");
        }
        let c = d.cuda.as_mut().unwrap();
        c.objects = vec![ObjectArg {
            offset: 8,
            kind: ObjectKind::Texture,
            handle: 9,
            resource: Resource::MipmappedArray,
            texture: Some(TextureDesc::default()),
            view: None,
        }];
        let back = parse(&d.to_json()).unwrap();
        let why = back.cuda.unwrap().unreplayable.unwrap();
        assert!(why.contains("mipmapped"), "{why}");
    }

    #[test]
    fn rr_extension_round_trips() {
        let mut d = Descriptor::rr_for_tests(vec![Segment::device(0x7f00_0000_0000, 0x1000, 0)]);
        d.name = "_Z3addPfS_i".into();
        d.num_args = 2;
        d.num_teams = 4;
        d.num_threads = 32;
        let c = d.cuda.as_mut().unwrap();
        c.grid = [4, 2, 1];
        c.block = [32, 1, 1];
        c.param_buffer = vec![0, 0, 0, 0, 0, 0x7f, 0, 0, 7, 0, 0, 0];
        c.param_layout = vec![
            ParamSlot { offset: 0, size: 8 },
            ParamSlot { offset: 8, size: 4 },
        ];
        c.cluster_dim = Some([2, 1, 1]);
        c.occurrence = 3;
        c.image_file = "images/1.cubin".into();
        let back = parse(&d.to_json()).unwrap();
        assert_eq!(back, d);
        assert_eq!(back.arguments()[0].word, Some(0x7f00_0000_0000));
        assert_eq!(back.arguments()[1].word, None);
    }
}

#[cfg(test)]
mod chunk_tests {
    use crate::descriptor::{Chunks, CudaLaunch, ParamSlot, Segment, SegmentContent};
    use crate::memory::MemoryMap;
    use crate::Descriptor;
    use std::path::Path;

    const ID: &str = "0123456789abcdef0123456789abcdef";

    /// Two chunks of one allocation at 0x10000 (the second continuing the first), then another
    /// allocation; the kernel's one argument points at the first chunk.
    fn chunked(second: Segment) -> Descriptor {
        let content = |continues| SegmentContent {
            input: ID.into(),
            output: None,
            continues,
        };
        Descriptor::from_cuda(
            "k".into(),
            0,
            0,
            CudaLaunch {
                grid: [1, 1, 1],
                block: [1, 1, 1],
                param_buffer: 0x10000u64.to_le_bytes().to_vec(),
                param_layout: vec![ParamSlot { offset: 0, size: 8 }],
                segments: vec![
                    Segment::device(0x10000, 4096, 0),
                    second,
                    Segment::device(0x40000, 100, 12288),
                ],
                cluster_dim: None,
                cooperative: false,
                occurrence: 0,
                image_file: "images/k.cubin".into(),
                content: Some(vec![content(false), content(true), content(false)]),
                objects: vec![],
                from_graph: false,
                outside: None,
                unreplayable: None,
                raced: None,
            },
        )
    }

    #[test]
    fn chunks_of_one_allocation_are_joined_for_labels_and_kept_apart_for_storage() {
        let d = chunked(Segment::device(0x11000, 8192, 4096));
        let json = d.to_json();
        assert!(json.contains("\"Continues\":true"), "{json}");
        let back = Descriptor::parse(json.as_bytes(), Path::new("k.json")).unwrap();
        assert_eq!(back, d);
        assert_eq!(
            back.segments(0).len(),
            3,
            "stored and replayed chunk by chunk"
        );
        let joined = back.allocations(0);
        assert_eq!(
            joined,
            [
                (
                    Chunks { first: 0, count: 2 },
                    Segment::device(0x10000, 12288, 0)
                ),
                (
                    Chunks { first: 2, count: 1 },
                    Segment::device(0x40000, 100, 12288)
                )
            ]
        );
        // The argument's buffer runs to the end of its allocation, not of its first chunk, and
        // memory is named by the descriptor's segments, as `check` names it.
        let map = MemoryMap::new(&back, 12388);
        assert_eq!(map.arg_region(0).map(|a| a.file_end), Some(12288));
        assert_eq!(map.segment_name(0), "segment 0–1 (2 chunks)");
        assert_eq!(map.segment_name(1), "segment 2");
        assert_eq!(map.label(12300), "seg2+0xc");
    }

    #[test]
    fn a_chunk_that_does_not_follow_its_allocation_is_refused() {
        // A gap in memory, and a gap in the snapshot.
        for second in [
            Segment::device(0x12000, 4096, 4096),
            Segment::device(0x11000, 4096, 8192),
        ] {
            let json = chunked(second).to_json();
            let e = Descriptor::parse(json.as_bytes(), Path::new("k.json")).unwrap_err();
            assert!(e.to_string().contains("starts at 0x"), "{e}");
        }
        let bad = chunked(Segment::device(0x11000, 8192, 4096))
            .to_json()
            .replace("\"Continues\":true", "\"Continues\":1");
        let e = Descriptor::parse(bad.as_bytes(), Path::new("k.json")).unwrap_err();
        assert!(e.to_string().contains("true or false, not 1"), "{e}");
        // The first segment continues nothing.
        let mut first = chunked(Segment::device(0x11000, 8192, 4096));
        if let Some(c) = first.cuda.as_mut().and_then(|c| c.content.as_mut()) {
            c[0].continues = true;
        }
        let e = Descriptor::parse(first.to_json().as_bytes(), Path::new("k.json")).unwrap_err();
        assert!(e.to_string().contains("it is the first segment"), "{e}");
    }
}
