#!/usr/bin/env python3
"""Rewrite an rr-tui format-1 record directory in format 2 (content-addressed blobs).

    python3 tests/tools/convert_v2.py SRC_DIR DST_DIR

Used once to make record-fixtures/rrtui-v2-stencil3d from record-fixtures/rrtui-stencil3d, so
format 2 is read, checked and replayed by the test suites independently of the recorder that
writes it. Needs python's `xxhash` (XXH3-128, the blob id). Segment offsets become multiples of
4096; each segment's input and output bytes become blobs/<id>; .record_input/.record_output go.
"""
import json, os, shutil, sys, xxhash

src, dst = sys.argv[1], sys.argv[2]
shutil.copytree(src, dst)
os.makedirs(os.path.join(dst, "blobs"), exist_ok=True)

def store(data):
    bid = xxhash.xxh3_128_hexdigest(data)
    path = os.path.join(dst, "blobs", bid)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
    return bid

for name in sorted(os.listdir(dst)):
    if not name.endswith(".json"):
        continue
    stem = name[:-5]
    path = os.path.join(dst, name)
    d = json.load(open(path))
    if d.get("RrTuiFormat") != 1:
        continue
    snaps = {}
    for side in ("record_input", "record_output"):
        p = os.path.join(dst, f"{stem}.{side}")
        snaps[side] = open(p, "rb").read() if os.path.exists(p) else None
        if os.path.exists(p):
            os.remove(p)
    offset = 0
    for seg in d["Segments"]:
        old, size = seg["Offset"], seg["Size"]
        seg["Offset"] = offset
        seg["Input"] = store(snaps["record_input"][old:old + size])
        if snaps["record_output"] is not None:
            seg["Output"] = store(snaps["record_output"][old:old + size])
        offset = (offset + size + 4095) // 4096 * 4096
    d["RrTuiFormat"] = 2
    with open(path, "w") as f:
        f.write(json.dumps(d, sort_keys=True, separators=(",", ":")))
