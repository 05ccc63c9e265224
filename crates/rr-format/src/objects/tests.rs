//! Round trips and refusals of the object descriptors' JSON.

use super::array::LAYERED;
use super::*;

fn tex() -> ObjectArg {
    ObjectArg {
        offset: 8,
        kind: ObjectKind::Texture,
        handle: u64::MAX - 3,
        resource: Resource::Pitch2d {
            addr: 0x7f00_0000_1000,
            format: 0x20,
            channels: 2,
            width: 64,
            height: 32,
            pitch: 512,
        },
        texture: Some(TextureDesc {
            address_mode: [1, 1, 0],
            filter_mode: 1,
            flags: 2,
            border_color: [f32::NAN.to_bits(), 0, 0, 1.0f32.to_bits()],
            ..Default::default()
        }),
        view: Some(ViewDesc {
            format: 0x25,
            width: 64,
            height: 32,
            depth: 0,
            first_mipmap_level: 0,
            last_mipmap_level: 0,
            first_layer: 0,
            last_layer: 0,
        }),
    }
}

#[test]
fn objects_round_trip_exactly() {
    let t = tex();
    let back = ObjectArg::from_json(&t.to_json(), "o", 16, &[]).unwrap();
    assert_eq!(back, t);
    assert!(t
        .describe()
        .contains("linear filtering, address clamp/clamp/wrap"));
    let s = ObjectArg {
        kind: ObjectKind::Surface,
        texture: None,
        view: None,
        resource: Resource::Array { segment: 1 },
        ..t
    };
    let kinds = [
        SegmentKind::Device,
        SegmentKind::Array(ArrayDesc {
            width: 256,
            height: 128,
            depth: 0,
            format: 0x20,
            channels: 1,
            flags: 2,
        }),
    ];
    assert_eq!(
        ObjectArg::from_json(&s.to_json(), "o", 16, &kinds).unwrap(),
        s
    );
}

#[test]
fn hostile_objects_are_refused_with_their_place() {
    let t = tex();
    let cases: Vec<(Value, &str)> = vec![
        (
            {
                let mut v = t.to_json();
                v["Offset"] = 12.into();
                v
            },
            "8-byte slot",
        ),
        (
            {
                let mut v = t.to_json();
                v["Offset"] = 16.into();
                v
            },
            "8-byte slot",
        ),
        (
            {
                let mut v = t.to_json();
                v["Kind"] = "sampler\u{1b}".into();
                v
            },
            // Escaped once, in quotes (not `{:?}` of the escaped text: `sampler\\x1b`).
            "Kind \"sampler\\x1b\" is not",
        ),
        (
            {
                let mut v = t.to_json();
                v["Handle"] = 7.into();
                v
            },
            "decimal 64-bit",
        ),
        (
            {
                let mut v = t.to_json();
                v["Resource"]["Type"] = "array".into();
                v["Resource"]["Segment"] = 9.into();
                v
            },
            "not a CUDA array",
        ),
        (
            {
                let mut v = t.to_json();
                v["Resource"]["Format"] = 0xc0.into();
                v
            },
            "not supported",
        ),
        (
            {
                let mut v = t.to_json();
                v["Resource"]["Channels"] = 3.into();
                v
            },
            "Channels",
        ),
        (
            {
                let mut v = t.to_json();
                v.as_object_mut().unwrap().remove("Texture");
                v
            },
            "without a Texture",
        ),
        (
            {
                let mut v = t.to_json();
                v["Texture"]["BorderColor"] = serde_json::json!([1, 2]);
                v
            },
            "4 integers",
        ),
    ];
    let cases = cases.into_iter().chain([(
        {
            let mut v = t.to_json();
            v["Resource"]["Pitch"] = 16.into();
            v
        },
        "longer than its Pitch",
    )]);
    for (v, want) in cases {
        let e = ObjectArg::from_json(&v, "Objects[0]", 16, &[]).unwrap_err();
        assert!(e.contains(want) && e.starts_with("Objects[0]"), "{e}");
    }
}

#[test]
fn array_sizes_use_checked_arithmetic() {
    let a = ArrayDesc {
        width: 256,
        height: 0,
        depth: 0,
        format: 0x10,
        channels: 4,
        flags: 0,
    };
    assert_eq!(a.bytes(), Some(256 * 8));
    assert_eq!(a.describe(), "256 f16×4");
    let huge = ArrayDesc {
        width: 1 << 20,
        height: 1 << 20,
        depth: 1 << 20,
        format: 0x20,
        ..a
    };
    assert_eq!(huge.bytes(), None, "2^64 bytes overflow");
    assert!(ArrayDesc { width: 0, ..a }.problem().is_some());
    assert!(ArrayDesc { flags: 0x40, ..a }
        .problem()
        .unwrap()
        .contains("sparse"));
    assert!(ArrayDesc { format: 0xb0, ..a }.problem().is_some());
    let shape = |height, depth, flags| {
        ArrayDesc {
            height,
            depth,
            flags,
            ..a
        }
        .problem()
    };
    assert!(shape(0, 4, 0).unwrap().contains("height 0"));
    assert!(shape(8, 0, LAYERED).unwrap().contains("layered"));
    assert_eq!(shape(8, 4, LAYERED), None);
}

#[test]
fn objects_and_outside_words_must_be_the_parameter_words_they_name() {
    let words = [(0u32, 5u64), (8, u64::MAX - 3)];
    let t = tex();
    let w = |offset, value| OutsideWord {
        offset,
        value,
        what: "device memory".into(),
    };
    assert_eq!(check_words(&[t], &[w(0, 5)], &words), Ok(()));
    let cases: [(Vec<ObjectArg>, Vec<OutsideWord>, &str); 5] = [
        (vec![], vec![w(0, 6)], "not the parameter word"),
        (vec![], vec![w(0, 5), w(0, 5)], "named already"),
        (vec![], vec![w(4, 5)], "not an 8-byte word"),
        (vec![t], vec![w(8, u64::MAX - 3)], "named already"),
        (
            vec![ObjectArg { handle: 1, ..t }],
            vec![],
            "not the parameter word",
        ),
    ];
    for (objects, outside, want) in cases {
        let e = check_words(&objects, &outside, &words).unwrap_err();
        assert!(e.contains(want), "{e}");
    }
}
