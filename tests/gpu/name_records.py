#!/usr/bin/env python3
"""Rename the harness's temporary record files to libomptarget's names.

LLVM records: <xxh3(Name)>_<xxh3(u64 NumTeams, NumThreads, SharedMemorySize)>; rr-tui records:
<xxh3(Name)>_<xxh3(u64 grid xyz, block xyz, SharedMemorySize, Occurrence)> (FORMAT.md).
Report rows are rewritten to the new names.
"""
import json, os, struct, sys
import xxhash

def h(*vals):
    return xxhash.xxh3_64_intdigest(struct.pack("<%dQ" % len(vals), *vals))

d = sys.argv[1]
renames = {}
for f in sorted(os.listdir(d)):
    if not f.endswith(".json") or "__" not in f:
        continue
    tmp = f[:-5]
    desc = json.load(open(os.path.join(d, f)))
    kh = xxhash.xxh3_64_intdigest(desc["Name"].encode())
    if "RrTuiFormat" in desc:
        ch = h(*desc["Grid"], *desc["Block"], desc["SharedMemorySize"], desc["Occurrence"])
    else:
        ch = h(desc["NumTeams"], desc["NumThreads"], desc["SharedMemorySize"])
    stem = "%d_%d" % (kh, ch)
    renames[tmp] = stem
    for ext in ("json", "record_input", "record_output", "globals", "image"):
        src = os.path.join(d, tmp + "." + ext)
        if os.path.exists(src):
            os.rename(src, os.path.join(d, stem + "." + ext))
rep = os.path.join(d, "report.txt")
if os.path.exists(rep):
    text = open(rep).read()
    for tmp, stem in renames.items():
        text = text.replace(tmp + ".json", stem + ".json")
    open(rep, "w").write(text)
print("renamed %d instance(s) in %s" % (len(renames), d))
