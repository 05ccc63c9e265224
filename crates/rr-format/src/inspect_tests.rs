//! Tests of `inspect.rs` (kept apart to keep that file short).
use super::*;

#[test]
fn integers_read_in_decimal_and_hex() {
    assert_eq!(integer_text(16, 4), "16 (0x10)");
    assert_eq!(integer_text(0xff, 1), "255 (0xff, i8 -1)");
    assert_eq!(
        integer_text(u64::MAX, 8),
        "18446744073709551615 (0xffffffffffffffff, i64 -1)"
    );
    assert_eq!(integer_text(0x8000_0000, 8), "2147483648 (0x80000000)");
}

fn fixture(dir: &str, stem: &str) -> Inspection {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../record-fixtures")
        .join(dir)
        .join(format!("{stem}.json"));
    Inspection::of(&path).unwrap()
}

/// No `{"Ok": …}` / `{"Err": …}` anywhere in the JSON.
fn no_result_wrappers(v: &serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            assert!(!m.contains_key("Ok") && !m.contains_key("Err"), "{m:?}");
            m.values().for_each(no_result_wrappers);
        }
        serde_json::Value::Array(a) => a.iter().for_each(no_result_wrappers),
        _ => {}
    }
}

#[test]
fn json_is_plain_structured_data() {
    let ins = fixture(
        "rrtui-stencil3d",
        "3844743599784193033_15987061097491423463",
    );
    let v = serde_json::to_value(&ins).unwrap();
    no_result_wrappers(&v);
    assert_eq!(v["grid"], serde_json::json!([2, 2, 4]));
    assert!(v["globals_problem"].is_null() && v["image_problem"].is_null());
    assert!(v["snapshots"]["record_input_bytes"].is_u64());
    let args = v["arguments"].as_array().unwrap();
    let pointer = args.iter().find(|a| a["kind"] == "pointer").unwrap();
    assert!(pointer["segment"].is_u64() && pointer["offset"].is_u64());
    assert!(pointer["extent"].as_u64().unwrap() > 0);
    let by_value = args.iter().find(|a| a["kind"] == "value").unwrap();
    assert_eq!(by_value["value"], "16", "64-bit values are strings in JSON");
    assert_eq!(by_value["size"], 4);
    assert!(ins
        .lines()
        .iter()
        .any(|l| l.ends_with("= 16 (0x10), 4 bytes by value")));
}

#[test]
fn fields_name_what_two_instances_share() {
    let a = fixture(
        "llvm-two-kernels",
        "8683979482637550046_13526365365894479501",
    );
    let b = fixture(
        "llvm-two-kernels",
        "8683979482637550046_6547468769535274944",
    );
    let (fa, fb) = (a.fields(), b.fields());
    let value = |f: &[Field], name: &str| {
        f.iter()
            .find(|x| x.name == name)
            .map(|x| x.value.clone())
            .unwrap_or_else(|| panic!("no field {name}"))
    };
    assert_eq!(value(&fa, "grid"), "8×1×1");
    assert_eq!(value(&fb, "grid"), "16×1×1");
    // Pointers compare by segment and offset, not by address.
    assert_eq!(value(&fa, "arg 0"), value(&fb, "arg 0"));
    assert_eq!(value(&fa, "arg 0"), "→ seg 0 + 0x4000 (16 KiB)");
    assert_eq!(value(&fa, "arg 3"), "= 4096 (0x1000)");
    assert_eq!(value(&fa, "global g_scale"), "4 B  00 00 20 40");
}

#[test]
fn by_value_parameters_decode_only_integer_sizes() {
    assert_eq!(little_endian(&[0x10, 0, 0, 0]), Some(16));
    assert_eq!(little_endian(&[1, 2, 3]), None);
    assert_eq!(little_endian(&[]), None);
}
