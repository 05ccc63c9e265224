//! `rr-tui repro` on hostile records and destinations: sparse snapshots stay sparse (copied
//! and packed), a reproducer that does not fit is refused before anything is written, globals
//! the image contradicts are refused with `check`'s words, record strings reach README.txt
//! with their control characters escaped, and a `--out` under a linked folder says where it
//! really went.

mod common;

use assert_cmd::Command;
use common::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const STENCIL: &str = "3844743599784193033_15987061097491423463.json";

fn rr() -> Command {
    let mut c = Command::cargo_bin("rr-tui").unwrap();
    c.env("NO_COLOR", "1");
    c
}

fn stem() -> &'static str {
    STENCIL.trim_end_matches(".json")
}

/// `rr-tui repro JSON --out OUT FLAGS…`: exit status, stdout, stderr.
fn repro(json: &Path, out: &Path, flags: &[&str]) -> (i32, String, String) {
    let o = rr()
        .arg("repro")
        .arg(json)
        .arg("--out")
        .arg(out)
        .args(flags)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A copy of the format 1 stencil record with a fourth segment of `size` bytes whose input and
/// output are holes: snapshot files of `size` more bytes that take no space.
fn sparse_record(size: u64) -> (tempfile::TempDir, PathBuf) {
    let (t, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let mut d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let base = d["Segments"][0]["Addr"].as_u64().unwrap();
    d["Segments"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"Addr": base + 33024 + 256, "Offset": 33024, "Size": size}));
    d["VAllocSize"] = (33024 + 256 + size).into();
    std::fs::write(&json, d.to_string()).unwrap();
    for side in ["record_input", "record_output"] {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(rec.join(format!("{}.{side}", stem())))
            .unwrap();
        f.set_len(33024 + size).unwrap();
    }
    (t, json)
}

/// Bytes a file takes on disk.
fn on_disk(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().blocks() * 512
}

#[test]
fn a_sparse_snapshot_is_copied_and_packed_without_its_holes() {
    let size = 256u64 << 20;
    let (_t, json) = sparse_record(size);
    let shm = Path::new("/dev/shm");
    let other_fs = shm.is_dir()
        && std::fs::metadata(shm).unwrap().dev() != std::fs::metadata(&json).unwrap().dev();
    if let Some(t) = other_fs.then(|| tempfile::tempdir_in(shm).ok()).flatten() {
        let out = t.path().join("copied");
        let (code, said, err) = repro(&json, &out, &[]);
        assert_eq!(code, 0, "{err}");
        assert!(said.contains("0 hard-linked, 2 copied"), "{said}");
        for name in ["input.bin", "output.bin"] {
            let p = out.join("data").join(name);
            assert_eq!(std::fs::metadata(&p).unwrap().len(), 33024 + size);
            assert!(on_disk(&p) < 1 << 20, "{name}: holes written as zeros");
        }
        let rec = json.parent().unwrap();
        let original = std::fs::read(rec.join(format!("{}.record_input", stem()))).unwrap();
        assert!(std::fs::read(out.join("data/input.bin")).unwrap() == original);
    } else {
        eprintln!("no second file system: copies not checked");
    }
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("packed");
    let (code, _, err) = repro(&json, &out, &["--pack"]);
    assert_eq!(code, 0, "{err}");
    let tar = out.join("data.tar");
    assert!(
        std::fs::metadata(&tar).unwrap().len() < 1 << 20,
        "data.tar holds the holes"
    );
    let mut archive = tar::Archive::new(std::fs::File::open(&tar).unwrap());
    let mut sizes: Vec<(String, u64)> = archive
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let kind = e.header().entry_type();
            let name = e.path().unwrap().display().to_string();
            if name.ends_with("put.bin") {
                assert!(kind.is_gnu_sparse(), "{name} is a sparse entry");
            }
            (name, e.header().size().unwrap())
        })
        .collect();
    sizes.sort();
    assert_eq!(sizes[1], ("data/input.bin".to_string(), 33024 + size));
    assert_eq!(sizes[3], ("data/output.bin".to_string(), 33024 + size));
    // GNU tar unpacks it to the recorded bytes, holes and all.
    let x = t.path().join("x");
    std::fs::create_dir(&x).unwrap();
    if let Ok(s) = std::process::Command::new("tar")
        .arg("xf")
        .arg(&tar)
        .arg("-C")
        .arg(&x)
        .status()
    {
        assert!(s.success());
        let rec = json.parent().unwrap();
        let original = std::fs::read(rec.join(format!("{}.record_output", stem()))).unwrap();
        assert!(std::fs::read(x.join("data/output.bin")).unwrap() == original);
    }
}

/// A reproducer larger than the space free at --out is refused before anything is written, in
/// one line saying both amounts, exit status 1 (the machine's, not the record's). Needs a small
/// file system: a tmpfs of 64 KiB mounted in a private mount namespace (`unshare -m`, which
/// needs the privilege to mount; ignored without it).
#[test]
#[cfg_attr(
    rr_no_mount,
    ignore = "needs the privilege to mount a tmpfs in a private namespace (unshare -m)"
)]
fn a_reproducer_that_does_not_fit_is_refused_before_anything_is_written() {
    let (said, err) = repro_in_small_tmpfs("size=64k", "ls -A \"$d\"; ");
    assert!(said.contains("rc=1"), "{said} {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("needs") && err.contains("free") && err.contains("nothing written"),
        "{err}"
    );
    let left = said.split("rc=1").nth(1).unwrap_or("");
    assert!(left.trim().is_empty(), "nothing written: {said}");
}

/// Run `rr-tui repro` of the stencil fixture into a tmpfs mounted with `options` in a private
/// mount namespace, then the shell commands `after` (with `$d` the mount point): what it said
/// (with `rc=N`, its exit status) and its stderr.
fn repro_in_small_tmpfs(options: &str, after: &str) -> (String, String) {
    let json = fixture("rrtui-stencil3d").join(STENCIL);
    let bin = assert_cmd::cargo::cargo_bin("rr-tui");
    let script = format!(
        "d=$(mktemp -d) && mount -t tmpfs -o {options} tmpfs \"$d\" || exit 97; \
         NO_COLOR=1 '{}' repro '{}' --out \"$d/r\"; echo \"rc=$?\"; {after}umount \"$d\"",
        bin.display(),
        json.display()
    );
    let o = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .expect("unshare runs (build.rs found it)");
    let (said, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(
        said.contains("rc="),
        "the small file system was not made: {err}"
    );
    (said, err)
}

/// One global of a `.globals` file: name, size, the data at its start.
type Global<'a> = (&'a str, u64, &'a [u8]);

/// A file system that runs out while the reproducer is written (a tmpfs of plenty of bytes
/// but 5 inodes: the space check passes, a later file cannot be made, ENOSPC) ends with one
/// line naming the file and exit status 1, as a failure of the machine, not of the record.
#[test]
#[cfg_attr(
    rr_no_mount,
    ignore = "needs the privilege to mount a tmpfs in a private namespace (unshare -m)"
)]
fn a_disk_that_fills_up_while_writing_exits_1_naming_the_file() {
    let (said, err) = repro_in_small_tmpfs("size=16m,nr_inodes=5", "");
    assert!(said.contains("rc=1"), "{said} {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("/r/"), "names the file: {err}");
    assert!(err.to_lowercase().contains("no space left"), "{err}");
}

/// A `.globals` of entries `(name, size, data)` in rr-tui's layout, data written sparse: the
/// file is `size` long whatever `data` holds.
fn write_globals(path: &Path, entries: &[Global]) {
    use std::io::{Seek, Write};
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&(entries.len() as u32).to_le_bytes()).unwrap();
    for (name, size, data) in entries {
        f.write_all(&(name.len() as u32 + 1).to_le_bytes()).unwrap();
        f.write_all(&size.to_le_bytes()).unwrap();
        f.write_all(name.as_bytes()).unwrap();
        f.write_all(&[0]).unwrap();
        let at = f.stream_position().unwrap();
        f.write_all(data).unwrap();
        f.seek(std::io::SeekFrom::Start(at + size)).unwrap();
    }
    let end = f.stream_position().unwrap();
    f.set_len(end).unwrap();
}

/// Globals the image contradicts are refused as `check` finds them: a name twice, an empty
/// name, a size the image's symbol does not have (a sparse 512 MiB global for a 4-byte
/// symbol, which was read and written full size). One line naming the .globals file,
/// nothing written.
#[test]
fn globals_the_image_contradicts_are_refused_in_checks_words() {
    let (t, rec) = fixture_copy("rrtui-stencil3d");
    let json = rec.join(STENCIL);
    let globals = rec.join(format!("{}.globals", stem()));
    let bias = [0u8; 32];
    let cases: [(&[Global], &str); 3] = [
        (
            &[
                ("g_scale", 4, &[0, 0, 128, 63]),
                ("c_bias", 32, &bias),
                ("g_scale", 4, &[0; 4]),
            ],
            "global g_scale is recorded more than once",
        ),
        (
            &[("g_scale", 4, &[0, 0, 128, 63]), ("", 4, &[1, 2, 3, 4])],
            "global  is not defined by the image",
        ),
        (
            &[
                ("g_scale", 512 << 20, &[0, 0, 128, 63]),
                ("c_bias", 32, &bias),
            ],
            "global g_scale is 536870912 bytes but the image declares 4",
        ),
    ];
    for (i, (entries, says)) in cases.iter().enumerate() {
        write_globals(&globals, entries);
        let out = t.path().join(format!("out{i}"));
        let (code, _, err) = repro(&json, &out, &[]);
        assert_eq!(code, 2, "{says}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{says}: {err}");
        assert!(err.contains(&format!("{}.globals", stem())), "{err}");
        assert!(!out.exists(), "{says}: nothing written");
        // `check` says the same of it.
        let checked = rr().arg("check").arg(&rec).output().unwrap();
        let text = String::from_utf8_lossy(&checked.stdout).into_owned()
            + &String::from_utf8_lossy(&checked.stderr);
        assert!(text.contains(says), "check: {text}");
    }
}

/// Control characters of a kernel name are escaped in README.txt (C++ and Python), never
/// written raw: no ESC or BEL in the file, no line split by a newline in the name.
#[test]
fn a_kernel_name_with_control_characters_is_escaped_in_readme() {
    for (name, shown) in [
        ("k\u{1b}[31mRED\u{1b}[0m\u{7}", "k\\x1b[31mRED\\x1b[0m\\x07"),
        ("k\nint x = 1;", "k\\nint x = 1;"),
    ] {
        let (t, rec) = fixture_copy("rrtui-stencil3d");
        let json = rec.join(STENCIL);
        let text = std::fs::read_to_string(&json).unwrap().replace(
            "\"Name\":\"rr_stencil3d\"",
            &format!("\"Name\":{}", serde_json::to_string(name).unwrap()),
        );
        std::fs::write(&json, text).unwrap();
        for python in [false, true] {
            let out = t.path().join(format!("out-{python}"));
            let flags: &[&str] = if python { &["--python"] } else { &[] };
            let (code, _, err) = repro(&json, &out, flags);
            assert_eq!(code, 0, "{err}");
            let readme = std::fs::read_to_string(out.join("README.txt")).unwrap();
            assert!(
                !readme.contains(['\u{1b}', '\u{7}']),
                "raw control characters: {readme:?}"
            );
            let first = readme.lines().next().unwrap();
            assert_eq!(
                first,
                format!("Reproducer of one recorded launch of kernel {shown}")
            );
            assert!(!readme.contains("\nint x = 1;"), "{readme}");
        }
    }
}

/// `--out` below a folder that is a link is written where the link leads (users' scratch and
/// home folders are links), and the `wrote` line says where that is; `--out` itself being a
/// link stays refused.
#[test]
fn an_out_under_a_linked_folder_says_where_it_really_is() {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let victim = root.join("victim");
    std::fs::create_dir(&victim).unwrap();
    let link = root.join("outlink");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let json = fixture("rrtui-stencil3d").join(STENCIL);
    let (code, said, err) = repro(&json, &link.join("sub"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(victim.join("sub/README.txt").is_file());
    let real = victim.join("sub");
    assert!(
        said.contains(&format!("(resolves to {})", real.display())),
        "{said}"
    );
    // The real path is not annotated.
    let (code, said, err) = repro(&json, &root.join("plain"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!said.contains("resolves to"), "{said}");
    let (code, _, err) = repro(&json, &link, &["--force"]);
    assert_ne!(code, 0);
    assert!(err.contains("symbolic link"), "{err}");
}

/// A copy of the format 2 stencil record whose first instance has `n` segments of 8 bytes,
/// each with its own input and output blob (`2 n` files of distinct contents, named by their
/// hashes as `record` names them).
fn record_of_many_blobs(n: u64) -> (tempfile::TempDir, PathBuf) {
    let (t, rec) = fixture_copy("rrtui-v2-stencil3d");
    let json = rec.join(STENCIL);
    let mut d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let base = d["Segments"][0]["Addr"].as_u64().unwrap();
    let blob = |value: u64| {
        let bytes = value.to_le_bytes();
        let id = rr_format::store::blob_id(&bytes);
        std::fs::write(rec.join("blobs").join(&id), bytes).unwrap();
        id
    };
    let segments: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({"Addr": base + 4096 * i, "Offset": 4096 * i, "Size": 8,
                "Input": blob(i), "Output": blob(n + i)})
        })
        .collect();
    d["Segments"] = segments.into();
    d["VAllocSize"] = (4096 * n).into();
    std::fs::write(&json, d.to_string()).unwrap();
    (t, json)
}

/// A record of tens of thousands of blobs is written, linked and packed, under an open-file
/// limit far below its file count (the data was held open all at once: 1024, a common limit,
/// failed from 512 segments on), and in time linear in its segments (finding each segment's
/// blob and naming each file once searched every one before it: 75 s for 30 000 in a debug
/// build, against 10 s).
#[test]
fn a_record_of_many_blobs_is_written_under_a_low_open_file_limit_in_linear_time() {
    let (t, json) = record_of_many_blobs(30_000);
    for (dir, flags) in [("linked", &[][..]), ("packed", &["--pack"][..])] {
        let out = t.path().join(dir);
        let o = Command::new("sh")
            .arg("-c")
            .arg("ulimit -n 256 && exec \"$0\" \"$@\"")
            .arg(assert_cmd::cargo::cargo_bin("rr-tui"))
            .arg("repro")
            .arg(&json)
            .arg("--out")
            .arg(&out)
            .args(flags)
            .env("NO_COLOR", "1")
            .timeout(std::time::Duration::from_secs(40))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{dir}: {err}");
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(said.contains("30000 segment(s)"), "{said}");
    }
    let data = t.path().join("linked/data");
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 60_002);
    let tar = std::fs::metadata(t.path().join("packed/data.tar")).unwrap();
    assert!(tar.len() > 60_000 * 512, "{}", tar.len());
}

/// A recorded output of another length than the input (format 1: one snapshot file) is
/// refused before anything is written, naming it: the reproducer would stop on it with "shorter
/// than the record says", or never verify.
#[test]
fn a_recorded_output_of_the_wrong_length_is_refused() {
    for len in [10, 33_024 + 4096] {
        let (t, rec) = fixture_copy("rrtui-stencil3d");
        let output = rec.join(format!("{}.record_output", stem()));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&output)
            .unwrap()
            .set_len(len)
            .unwrap();
        let out = t.path().join("out");
        let (code, _, err) = repro(&rec.join(STENCIL), &out, &[]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "{}: is {len} bytes but the recorded input is 33024",
                output.display()
            )),
            "{err}"
        );
        assert!(!out.exists());
    }
}

/// A big-endian tolerance is refused for what it is (the reproducer reads values little-endian),
/// not as a type the reproducer lacks; another type keeps its own words. Nothing is written.
#[test]
fn a_big_endian_tolerance_is_refused_for_its_byte_order() {
    let t = tempfile::tempdir().unwrap();
    let json = fixture("rrtui-stencil3d").join(STENCIL);
    for (spec, says) in [
        (
            "f32:rtol=1e-6,endian=big",
            "big-endian tolerances are not supported by the reproducer",
        ),
        ("i32:atol=1", "a reproducer compares f32 or f64 values"),
    ] {
        let out = t.path().join("o");
        let (code, _, err) = repro(&json, &out, &["--tolerance", spec]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{spec}: {err}");
        assert!(!out.exists());
    }
}

/// With `--image`, a recorded global the image lacks is that file's fault: the line names the
/// --image file (`check`, reading the record's own image, would find nothing), where without it
/// the record's globals file and `check` are named. An --image PTX without the kernel's entry
/// is refused as a cubin without its symbol is; one with it is taken.
#[test]
fn an_image_flag_without_a_global_or_the_kernel_is_named() {
    let (t, rec) = fixture_copy("rrtui-stencil3d");
    let globals = rec.join(format!("{}.globals", stem()));
    let bytes = std::fs::read(&globals).unwrap();
    let at = bytes.windows(6).position(|w| w == b"c_bias").unwrap();
    let mut renamed = bytes.clone();
    renamed[at..at + 6].copy_from_slice(b"c_bia2");
    std::fs::write(&globals, renamed).unwrap();
    let json = rec.join(STENCIL);
    let image = t.path().join("other.cubin");
    std::fs::copy(rec.join("images/kernels-sm90.cubin"), &image).unwrap();
    let image_flag = image.to_str().unwrap();
    let (code, _, err) = repro(&json, &t.path().join("a"), &["--image", image_flag]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: global c_bia2 is not defined by the image: the --image file lacks what the record holds in {}",
            image.display(),
            globals.display()
        )),
        "{err}"
    );
    assert!(!err.contains("rr-tui check"), "{err}");
    let (code, _, err) = repro(&json, &t.path().join("b"), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("(rr-tui check lists them)"), "{err}");
    std::fs::write(&globals, bytes).unwrap();
    // PTX: by its entries.
    let ptx = |name: &str, entry: &str| {
        let p = t.path().join(name);
        std::fs::write(
            &p,
            format!(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry {entry}(\n)\n{{\nret;\n}}\n"),
        )
        .unwrap();
        p
    };
    let other = ptx("other.ptx", "rr_other");
    let (code, _, err) = repro(
        &json,
        &t.path().join("c"),
        &["--image", other.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: the --image file has no kernel rr_stencil3d (it has: rr_other); give an image of the recorded kernel",
            other.display()
        )),
        "{err}"
    );
    let good = ptx("good.ptx", "rr_stencil3d");
    let (code, _, err) = repro(
        &json,
        &t.path().join("d"),
        &["--image", good.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
}
