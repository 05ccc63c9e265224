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

# The disk's write rate: GIB GiB of non-zero data into one file, closed, through the page cache
# as the recorder writes (no fsync), and with fdatasync at the end: the rate the disk itself
# sustains, which is what a recording meets once earlier recordings' dirty pages fill the
# cache (`disk_probe GIB synced`).
disk_probe() {
python3 - "$W/disk-probe" "$@" <<'PY'
import os, sys, time
path, gib, synced = sys.argv[1], int(sys.argv[2]), len(sys.argv) > 3
block = os.urandom(64 << 20)
t = time.perf_counter()
with open(path, "wb", buffering=0) as f:
    for _ in range(gib * 16):
        f.write(block)
    if synced:
        os.fdatasync(f.fileno())
s = time.perf_counter() - t
os.remove(path)
print(f"limit: disk write{' (synced)' if synced else ''} {gib * 2**30 / s / 1e9:.2f} GB/s over {gib} GiB")
PY
}
echo "== limits of this machine"
disk_probe "$GIB"
echo "== plain run ($GIB GiB resident)"
for change in 0 10; do
    t=$(now); out=$(python3 "$PY" "$GIB" "$change"); echo "change=$change wall_s=$(since "$t") $out"
done
t=$(now); out=$(python3 "$PY" "$GIB" 10 one); echo "change=10 one allocation wall_s=$(since "$t") $out"

record() { # NAME CHANGE FLAGS... (a NAME ending in -one: the GiB are one allocation)
    local name=$1 change=$2 one=""; shift 2
    [ "${name%-one}" != "$name" ] && one=one
    echo "== record $name (change $change %${*:+, $*})"
    local t; t=$(now)
    "$RR" record --dir "$W/$name" "$@" -- python3 "$PY" "$GIB" "$change" $one >"$W/$name.out" 2>"$W/$name.err"
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
    # A wrong result (an elementwise kernel of many blocks replayed with one): compared only in
    # the chunks whose GPU fingerprints differ, against copying everything back and comparing
    # on the host.
    local wide
    wide=$(python3 - "$dir" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f))
    if d.get("Grid", [0])[0] >= 64 and "elementwise" in d.get("Name", ""):
        print(f); break
PY
)
    if [ -n "$wide" ]; then
        echo "different result ($(basename "$wide"), one block), chunked: $(XDG_CACHE_HOME=$cache python3 tests/gpu/probes/first_rep.py "$RR" "$wide" --repetitions 1 --verify --num-teams 1)"
        echo "different result, on host: $(XDG_CACHE_HOME=$cache python3 tests/gpu/probes/first_rep.py "$RR" "$wide" --repetitions 1 --verify --num-teams 1 --verify-on-host)"
    fi
    if [ -z "${BENCH_SKIP_THREADS:-}" ]; then
        for n in 4 8 16; do
            echo "load threads $n: $(RR_TUI_LOAD_THREADS=$n XDG_CACHE_HOME=$cache python3 tests/gpu/probes/first_rep.py "$RR" "$json" --repetitions 1)"
        done
    fi
    # The explorer's replays of every instance, one after the other: one serving process
    # against a fresh process each.
    echo "explorer replays (verify, 1 repetition):"
    XDG_CACHE_HOME=$cache python3 tests/gpu/probes/serve_replays.py "$RR" "$dir" --repetitions 1 --verify | sed 's/^/  /'
    # Every instance swept (the recorded configuration, 5 samples): engines kept from one
    # instance to the next against fresh ones.
    local flags mode t
    for mode in kept fresh; do
        flags=""; [ "$mode" = fresh ] && flags=--fresh-engines
        t=$(now)
        XDG_CACHE_HOME=$cache "$RR" tune "$dir" --samples 5 --hot --reports "$W/tune-$mode" $flags >"$W/tune-$mode.txt" 2>&1
        echo "tune DIR, $mode engines: rc=$? wall_s=$(since "$t") instances=$(grep -c '^== instance' "$W/tune-$mode.txt")"
        grep "engine kept from the last instance" "$W/tune-$mode.txt" | sed 's/^ */  /'
    done
    rm -rf "$cache" "$W"/tune-*
}

record r0 0
replay_case r0
rm -rf "$W/r0"
if [ -z "${BENCH_SKIP_COPY:-}" ]; then
    record r0-copy 0 --no-fingerprints
    rm -rf "$W/r0-copy"
fi
echo "== limits before the 10 % case"
disk_probe "$GIB"
disk_probe 8 synced
record r10 10
[ -z "${BENCH_SKIP_R10_REPLAY:-}" ] && replay_case r10
rm -rf "$W/r10"
# The same with the GiB in one allocation (tensors are views into it): stored in 64 MiB chunks,
# each instance writes only what changed, as with separate tensors.
record r10-one 10
rm -rf "$W"
