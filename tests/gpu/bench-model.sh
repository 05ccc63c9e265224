#!/usr/bin/env bash
# Issue 20's benchmark: a model-sized process (GIB GiB resident, five small kernels) recorded
# and replayed, against the limits the hardware sets, measured in the same run.
#
#   bash tests/gpu/bench-model.sh RR-TUI [GIB]     (GPU machine; needs PyTorch and about 1.5×GIB of disk)
#
# Prints, for each case: the program's time plain and recorded, record's per-instance costs,
# bytes written; for a replay of one small kernel: the sequential read rate of its files from
# the page cache and the pinned host-to-device rate (the limits), then the time to the first
# repetition and to verify: with files just written, then once their blobs are remembered as
# verified (about 7–8 minutes in all at 24 GiB, two of them waiting for that).
set -uo pipefail
RR=$(realpath "$1")
GIB=${2:-24}
cd "$(dirname "$0")/../.."
W=${BENCH_DIR:-/tmp/rr-model}
PY=tests/gpu/samples/resident.py
rm -rf "$W" && mkdir -p "$W"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

echo "== limits of this machine"
# The disk's write rate as the recorder meets it: GIB GiB of non-zero data through the page
# cache into one file, closed (no fsync: the recorder does not either).
python3 - "$W/disk-probe" "$GIB" <<'PY'
import os, sys, time
path, gib = sys.argv[1], int(sys.argv[2])
block = os.urandom(64 << 20)
t = time.perf_counter()
with open(path, "wb", buffering=0) as f:
    for _ in range(gib * 16):
        f.write(block)
s = time.perf_counter() - t
os.remove(path)
print(f"limit: disk write {gib * 2**30 / s / 1e9:.2f} GB/s over {gib} GiB")
PY
echo "== plain run ($GIB GiB resident)"
for change in 0 10; do
    t=$(now); out=$(python3 "$PY" "$GIB" "$change"); echo "change=$change wall_s=$(since "$t") $out"
done

record() { # NAME CHANGE FLAGS...
    local name=$1 change=$2; shift 2
    echo "== record $name (change $change %${*:+, $*})"
    local t; t=$(now)
    "$RR" record --dir "$W/$name" "$@" -- python3 "$PY" "$GIB" "$change" >"$W/$name.out" 2>"$W/$name.err"
    echo "rc=$? wall_s=$(since "$t") $(cat "$W/$name.out")"
    grep -E "instance\(s\) from|snapshot cost|^rr-tui record:   " "$W/$name.err" | sed 's/^rr-tui record: //'
    echo "disk_used=$(du -s --block-size=1M "$W/$name" | cut -f1) MiB"
}

replay_case() { # NAME
    local dir=$W/$1 json
    # The last instance recorded: a small kernel holding the whole resident set.
    json=$(ls -t "$dir"/*.json | grep -v report | head -1)
    echo "== replay $(basename "$json")"
    python3 - "$dir" "$json" <<'PY'
import json, os, sys, time
d, j = sys.argv[1], sys.argv[2]
desc = json.load(open(j))
ids = {s[k] for s in desc["Segments"] for k in ("Input", "Output") if k in s}
files = [os.path.join(d, "blobs", i) for i in ids]
size = sum(os.stat(f).st_size for f in files)
buf = bytearray(64 << 20)
for where in ("as left by the recording", "page cache"):
    t = time.perf_counter()
    for f in files:
        with open(f, "rb", buffering=0) as fh:
            while fh.readinto(buf):
                pass
    s = time.perf_counter() - t
    print(f"limit: sequential read of the instance's files ({where}): {size / s / 1e9:.2f} GB/s over {size / 2**30:.1f} GiB")
PY
    RR_TUI_CALIBRATE=1 "$RR" replay --repetitions 1 "$json" 2>&1 | grep -o "pinned_single_copy_gbps=[0-9.]*" | sed 's/^/limit: /'
    local cache; cache=$(mktemp -d)
    # Pass 1 hashes the blobs, just written; blobs are remembered once left alone for two
    # minutes, so pass 2 waits for that (and hashes them again, remembering them) and pass 3
    # trusts them.
    echo "pass 1, --verify: $(XDG_CACHE_HOME=$cache python3 tests/gpu/probes/first_rep.py "$RR" "$json" --repetitions 1 --verify)"
    local newest age
    newest=$(find "$dir/blobs" -type f -printf '%C@\n' | sort -n | tail -1)
    age=$(awk -v n="$newest" -v t="$(date +%s)" 'BEGIN { printf "%d", t - n }')
    [ "$age" -lt 122 ] && sleep $((122 - age))
    for pass in 2 3; do
        echo "pass $pass, --verify: $(XDG_CACHE_HOME=$cache python3 tests/gpu/probes/first_rep.py "$RR" "$json" --repetitions 1 --verify)"
    done
    for n in 4 8 16; do
        echo "load threads $n: $(RR_TUI_LOAD_THREADS=$n XDG_CACHE_HOME=$cache python3 tests/gpu/probes/first_rep.py "$RR" "$json" --repetitions 1)"
    done
    rm -rf "$cache"
}

record r0 0
replay_case r0
rm -rf "$W/r0"
record r0-copy 0 --no-fingerprints
rm -rf "$W/r0-copy"
record r10 10
replay_case r10
rm -rf "$W"
