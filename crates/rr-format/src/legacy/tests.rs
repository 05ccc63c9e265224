//! The legacy descriptor reader on the committed fixtures (written on the H100 by
//! tests/gpu/legacy_harness.cu) and on hostile input.

use std::path::{Path, PathBuf};

use super::*;
use crate::descriptor::Descriptor;
use crate::inspect::{ArgKind, Inspection};

fn fixture(dir: &str, kernel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../record-fixtures")
        .join(dir)
        .join(format!("{kernel}.json"))
}

fn parse(text: &str) -> crate::Result<Descriptor> {
    Descriptor::parse(text.as_bytes(), Path::new("k.json"))
}

const LLVM16: &str = r#"{"ArgOffsets":[0,-256,0,0,0],"ArgPtrs":[140632966299648,140632966304000,4609434218613702656,1024,0],"DeviceId":0,"DeviceMemorySize":8192,"LoopTripCount":1024,"Name":"rr_saxpy","NumArgs":5,"NumTeamsClause":16,"ThreadLimitClause":64}"#;
const LLVM18: &str = r#"{"ArgOffsets":[0,0,0,0,0],"ArgPtrs":[140565521891328,140565521895424,4609434218613702656,1024,-1],"BumpAllocVAStart":140565521891328,"DeviceId":0,"DeviceMemorySize":8192,"LoopTripCount":1024,"Name":"rr_saxpy","NumArgs":5,"NumTeamsClause":16,"ThreadLimitClause":64}"#;

#[test]
fn the_three_fixtures_are_told_apart_and_written_back_byte_for_byte() {
    for (dir, kernel, format) in [
        ("llvm16-saxpy", "rr_saxpy", RecordFormat::LegacyLlvm16),
        ("llvm18-two-kernels", "rr_saxpy", RecordFormat::LegacyLlvm18),
        (
            "llvm18-two-kernels",
            "rr_scale_global",
            RecordFormat::LegacyLlvm18,
        ),
        ("llvm19-saxpy", "rr_saxpy", RecordFormat::LegacyLlvm19),
    ] {
        let path = fixture(dir, kernel);
        let d = Descriptor::read(&path).unwrap();
        assert_eq!(d.format, format, "{dir}/{kernel}");
        assert_eq!(
            d.to_json().as_bytes(),
            std::fs::read(&path).unwrap(),
            "{dir}"
        );
    }
}

#[test]
fn llvm16_region_start_is_inferred_and_arguments_are_values_plus_offsets() {
    let d = parse(LLVM16).unwrap();
    let l = d.legacy.as_ref().unwrap();
    assert_eq!(l.start.addr(), Some(140632966299648));
    assert!(matches!(l.start, RegionStart::Inferred { .. }));
    assert_eq!(d.valloc_addr, 140632966299648);
    assert_eq!(d.valloc_size, 8192);
    assert_eq!((d.num_teams, d.num_threads), (16, 64));
    // X[64:]'s begin minus 256: the array's base, one buffer lower.
    assert_eq!(d.arguments()[1].word, Some(140632966304000 - 256));
    let text = l.start.describe(8192);
    assert!(
        text.contains("inferred: the only 2 MiB-aligned start"),
        "{text}"
    );
    assert!(text.contains("0x7fe7aa000000, 0x7fe7aa001100"), "{text}");
    // 0x7fe7aa001100 is ArgPtrs[1] as recorded; the argument is 0x7fe7aa001000 (offset -256):
    // the line says which value it shows, or a reader sees two addresses for one argument.
    assert!(
        text.contains("(raw ArgPtrs as recorded, each the start of a mapped section, before ArgOffsets are added"),
        "{text}"
    );
}

#[test]
fn llvm16_without_pointers_has_an_unknown_start_and_labels_nothing() {
    let d = parse(&LLVM16.replace("140632966299648,140632966304000", "1,2")).unwrap();
    let l = d.legacy.as_ref().unwrap();
    assert_eq!(l.start.addr(), None);
    assert!(!d.region_known());
    assert!(l.start.describe(8192).contains("--base-address"));
    let map = crate::memory::MemoryMap::new(&d, 8192);
    assert!(map.args.is_empty(), "1024 must not look like a pointer");
    let given = d.with_region_start(0x7f00_0000_0000);
    assert!(given.region_known());
    assert_eq!(given.valloc_addr, 0x7f00_0000_0000);
    assert!(matches!(
        &given.legacy.unwrap().start,
        RegionStart::Given { doubts, .. } if doubts.is_empty()
    ));
}

#[test]
fn llvm18_and_19_are_classified_by_what_argptrs_hold() {
    let s = 0x7f00_0000_0000u64;
    let c = |args: &[u64]| classify(args, s, 0x1000).0;
    assert_eq!(c(&[]), RecordFormat::LegacyLlvm18To22);
    assert_eq!(c(&[u64::MAX, 5]), RecordFormat::LegacyLlvm18);
    assert_eq!(c(&[7, s + 0x10]), RecordFormat::LegacyLlvm18);
    let slots = 0x7ffd_0000_1000u64;
    assert_eq!(
        c(&[slots, slots + 8, slots + 16]),
        RecordFormat::LegacyLlvm19
    );
    // -foffload-via-llvm: the caller's pointers to its argument variables.
    assert_eq!(
        c(&[slots, slots + 0x40, slots + 0x48]),
        RecordFormat::LegacyLlvm19
    );
    assert_eq!(c(&[slots]), RecordFormat::LegacyLlvm18To22);
    assert_eq!(c(&[3, 1]), RecordFormat::LegacyLlvm18To22);
    // A value in the region outweighs slot-like strides.
    assert_eq!(c(&[s, s + 8]), RecordFormat::LegacyLlvm18);
}

#[test]
fn refusals_name_the_reason() {
    let d19 = Descriptor::read(&fixture("llvm19-saxpy", "rr_saxpy")).unwrap();
    let why = refusal(&d19, true).unwrap();
    assert!(
        why.contains("host addresses of the argument slots"),
        "{why}"
    );
    let d18 = parse(LLVM18).unwrap();
    assert_eq!(refusal(&d18, false), None);
    let undetermined = parse(&LLVM18.replace(
        "[140565521891328,140565521895424,4609434218613702656,1024,-1]",
        "[3,4,5,6,7]",
    ))
    .unwrap();
    assert_eq!(undetermined.format, RecordFormat::LegacyLlvm18To22);
    assert!(refusal(&undetermined, false)
        .unwrap()
        .contains("--assume-llvm18"));
    assert_eq!(refusal(&undetermined, true), None);
}

#[test]
fn legacy_errors_use_llvm_key_names() {
    let e = |s: String| parse(&s).unwrap_err().to_string();
    assert_eq!(
        e(LLVM16.replace("\"NumTeamsClause\":16,", "")),
        "k.json: failed to read JSON integer NumTeamsClause"
    );
    assert!(e(LLVM16.replace("\"NumArgs\":5", "\"NumArgs\":4")).contains("NumArgs is 4"));
    assert!(e(LLVM16.replace("8192", "4611686018427387904")).contains("larger than any GPU"));
    assert!(
        e(LLVM18.replace("140565521891328,\"DeviceId\"", "-1,\"DeviceId\""))
            .contains("overflows the address space")
    );
    // The April-2026 format also has NumTeamsClause, but with VAllocAddr: not legacy.
    let april = LLVM16.replace("\"DeviceMemorySize\":8192", "\"VAllocAddr\":4096");
    assert!(!e(april).contains("DeviceMemorySize"));
}

#[test]
fn inspect_names_layout_generation_and_what_is_missing() {
    let i = Inspection::of(&fixture("llvm16-saxpy", "rr_saxpy")).unwrap();
    assert_eq!(i.format, "LLVM 16–17 layout");
    assert!(i.problems().is_empty(), "{:?}", i.problems());
    let text = i.lines().join("\n");
    assert!(
        text.contains("Layout       LLVM 16–17 legacy layout"),
        "{text}"
    );
    assert!(text.contains("replay needs --image FILE"), "{text}");
    assert!(text.contains("Globals      none recorded"), "{text}");
    assert!(text.contains("→ segment 0 + 0x0"), "{text}");
    let i19 = Inspection::of(&fixture("llvm19-saxpy", "rr_saxpy")).unwrap();
    assert!(i19.arguments.iter().all(|a| a.kind == ArgKind::Lost));
    assert!(i19.unreplayable.is_some());
    let i18 = Inspection::of(&fixture("llvm18-two-kernels", "rr_scale_global")).unwrap();
    assert_eq!(i18.globals.len(), 2);
    assert_eq!((i18.grid, i18.block), ([4, 1, 1], [256, 1, 1]));
    assert!(i18.image.is_some() && i18.problems().is_empty());
}

#[test]
fn check_accepts_the_fixtures_and_names_their_limits() {
    let findings = |dir, k| {
        crate::check::check_instance(
            &crate::InstanceFiles::from_descriptor_path(&fixture(dir, k)),
            None,
        )
    };
    let f18 = findings("llvm18-two-kernels", "rr_saxpy");
    assert!(f18.is_empty(), "{f18:?}");
    let f16 = findings("llvm16-saxpy", "rr_saxpy");
    assert_eq!(f16.len(), 1, "{f16:?}");
    assert!(f16[0].problem.contains("never saved the device image"));
    assert_eq!(f16[0].severity, crate::check::Severity::Warning);
    let f19 = findings("llvm19-saxpy", "rr_saxpy");
    assert_eq!(f19.len(), 1, "{f19:?}");
    assert!(f19[0].problem.contains("cannot be replayed"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]

    /// Any value under any legacy key: parsing never panics, and whatever parses can be used
    /// (arguments, memory map, inspection text, the start's description) and round-trips.
    #[test]
    fn legacy_descriptors_survive_wild_values(
        key in 0usize..10,
        v in proptest::prelude::any::<i64>(),
        ptrs in proptest::collection::vec(proptest::prelude::any::<i64>(), 0..6),
        base in proptest::prelude::any::<bool>(),
    ) {
        let keys = ["ArgOffsets", "ArgPtrs", "BumpAllocVAStart", "DeviceId", "DeviceMemorySize", "LoopTripCount", "Name", "NumArgs", "NumTeamsClause", "ThreadLimitClause"];
        let mut obj: Value = serde_json::from_str(if base { LLVM18 } else { LLVM16 }).unwrap();
        obj["ArgOffsets"] = Value::from(vec![0i64; ptrs.len()]);
        obj["NumArgs"] = Value::from(ptrs.len());
        obj["ArgPtrs"] = Value::from(ptrs);
        obj[keys[key]] = Value::from(v);
        if let Ok(d) = parse(&obj.to_string()) {
            let _ = d.arguments();
            let _ = crate::memory::MemoryMap::new(&d, v as u64);
            let l = d.legacy.as_ref().unwrap();
            let _ = l.start.describe(l.device_memory_size);
            let _ = geometry::for_record(&d, None);
            let _ = refusal(&d, false);
            proptest::prop_assert_eq!(parse(&d.to_json()).unwrap(), d);
        }
    }

    /// Mutated and truncated legacy descriptors never panic.
    #[test]
    fn legacy_descriptors_survive_mutation(pos in 0usize..LLVM18.len(), byte in proptest::prelude::any::<u8>(), cut in 0usize..LLVM18.len()) {
        for text in [LLVM16, LLVM18] {
            let mut b = text.as_bytes().to_vec();
            let pos = pos % b.len();
            b[pos] = byte;
            let _ = Descriptor::parse(&b, Path::new("m"));
            let _ = Descriptor::parse(&text.as_bytes()[..cut.min(text.len())], Path::new("m"));
        }
    }
}
