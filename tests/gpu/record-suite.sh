#!/usr/bin/env bash
# The recorder's part of the GPU suite (sourced by run-suite.sh, which defines ok/bad/expect/$W/$RR).
# Every sample program runs plainly and under `rr-tui record`: the same checksum (the recorder
# changes nothing), then every recorded instance replays at its recorded addresses and verifies.
SAMPLES=tests/gpu/samples
echo "== recorder: sample programs" | tee -a "$LOG"
mkdir -p "$W/samples"
build() { nvcc -O2 -arch=sm_90 -o "$W/samples/$1" "$SAMPLES/$1.cu" "${@:2}" >>"$LOG" 2>&1 || bad "nvcc $1"; }
build structs; build smem_streams; build pointers; build pools_managed
build cluster -lcuda; build nvrtc -lcuda -lnvrtc; build bench_record
roundtrip() { # NAME TOLERANCE -- command...
  local name=$1 tol=$2; shift 3
  local plain rec dir="$W/rec-$name"
  plain=$("$@" 2>>"$LOG" | tail -n 1)
  "$RR" record --dir "$dir" -- "$@" >"$W/rec-$name.out" 2>"$W/rec-$name.err"; local rc=$?
  rec=$(tail -n 1 "$W/rec-$name.out")
  cat "$W/rec-$name.err" >>"$LOG"
  if [ "$rc" -ne 0 ] || [ -z "$plain" ] || [ "$plain" != "$rec" ]; then
    bad "record $name: the program's result is unchanged" "exit $rc, plain '$plain', recorded '$rec': $(tail -n 2 "$W/rec-$name.err" | tr '\n' ' ')"; return
  fi
  ok "record $name: the program's result is unchanged ($rec)"
  local n=0 failed=0
  for j in "$dir"/*.json; do
    [ -e "$j" ] || continue
    n=$((n+1))
    if ! "$RR" replay "$j" --verify $tol >"$W/replay.txt" 2>&1; then
      failed=$((failed+1)); cat "$W/replay.txt" >>"$LOG"
      echo "  replay failed: $(basename "$j"): $(grep -m1 -E 'Error|differ' "$W/replay.txt")" | tee -a "$LOG"
    fi
  done
  [ "$n" -gt 0 ] && [ "$failed" -eq 0 ] && ok "record $name: all $n instance(s) replay and verify" || bad "record $name: replay" "$failed of $n instance(s) failed"
  "$RR" check --strict "$dir" >>"$LOG" 2>&1 && ok "record $name: check --strict" || bad "record $name: check" "$(grep -m2 error: "$LOG" | tail -1)"
}
roundtrip structs "" -- "$W/samples/structs"
roundtrip smem_streams "" -- "$W/samples/smem_streams"
roundtrip pointers "" -- "$W/samples/pointers"
roundtrip pools_managed "" -- "$W/samples/pools_managed"
roundtrip cluster "" -- "$W/samples/cluster"
roundtrip nvrtc "" -- "$W/samples/nvrtc"
roundtrip torch "" -- python3 "$SAMPLES/torch_ops.py"
expect "record: a directory with another recording is refused" 2 "already holds a recording" -- "$RR" record --dir "$W/rec-structs" -- "$W/samples/structs"
"$RR" record --dir "$W/rec-args" --snapshot args --kernels 'k_gather' -- "$W/samples/pointers" >/dev/null 2>>"$LOG"
n=$(ls "$W"/rec-args/*.json 2>/dev/null | wc -l)
[ "$n" -ge 1 ] && "$RR" replay "$(ls "$W"/rec-args/*.json | head -1)" --verify >>"$LOG" 2>&1 && ok "record --snapshot args --kernels: $n instance(s), replay verifies" || bad "record --snapshot args" "$n instance(s)"
"$RR" report "$W/rec-torch" >"$W/torch-report.txt" 2>>"$LOG" && grep -q "Total Instances" "$W/torch-report.txt" && ok "report of the PyTorch recording" || bad "report of the PyTorch recording"
cp "$W/torch-report.txt" "$OUTDIR/" 2>/dev/null

echo "== recorder: benchmark" | tee -a "$LOG"
B="$W/samples/bench_record"
secs() { grep -o 'seconds=[0-9.]*' | cut -d= -f2; }
plain=$(for i in 1 2 3; do "$B" storm 200000 | secs; done | sort -n | head -1)
rec=$(for i in 1 2 3; do rm -rf "$W/rec-storm"; "$RR" record --dir "$W/rec-storm" --kernels '^nothing$' -- "$B" storm 200000 2>>"$LOG" | secs; done | sort -n | head -1)
python3 - "$plain" "$rec" <<'PY' | tee -a "$LOG" "$OUTDIR/bench-record.txt"
import sys; p, r = map(float, sys.argv[1:])
print("recorder loaded, recording nothing: 200000 launches %.3f s vs %.3f s without: ratio %.3f (goal <= 1.02)" % (r, p, r / p))
PY
t0=$(date +%s.%N); python3 "$SAMPLES/torch_ops.py" >/dev/null 2>&1; t1=$(date +%s.%N)
rm -rf "$W/rec-torch0"; "$RR" record --dir "$W/rec-torch0" --kernels '^nothing$' -- python3 "$SAMPLES/torch_ops.py" >/dev/null 2>>"$LOG"; t2=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" <<'PY' | tee -a "$LOG" "$OUTDIR/bench-record.txt"
import sys; a, b, c = map(float, sys.argv[1:])
print("PyTorch script, recorder loaded recording nothing: %.2f s vs %.2f s without: ratio %.3f" % (c - b, b - a, (c - b) / (b - a)))
PY
d2h=$("$B" d2h 4 | grep -o 'gbps=[0-9.]*' | cut -d= -f2)
disk=$(dd if=/dev/zero of="$W/ddtest" bs=64M count=64 2>&1 | grep -o '[0-9.]* GB/s' | cut -d' ' -f1); rm -f "$W/ddtest"
disk_sync=$(dd if=/dev/zero of="$W/ddtest" bs=64M count=64 conv=fdatasync 2>&1 | grep -o '[0-9.]* GB/s' | cut -d' ' -f1); rm -f "$W/ddtest"
bplain=$("$B" big 4 | secs)
rm -rf "$W/rec-big"; out=$("$RR" record --dir "$W/rec-big" -- "$B" big 4 2>>"$LOG")
brec=$(echo "$out" | secs); wall_plain=$( { /usr/bin/time -f %e "$B" big 4 >/dev/null; } 2>&1 | tail -1 )
rm -rf "$W/rec-big2"; wall_rec=$( { /usr/bin/time -f %e "$RR" record --dir "$W/rec-big2" -- "$B" big 4 >/dev/null 2>/dev/null; } 2>&1 | tail -1 )
snap=$(python3 - "$W/rec-big2" <<'PY'
import json, os, sys
d = sys.argv[1]; tot = 0
for f in os.listdir(d):
    if f.endswith(".json"):
        j = json.load(open(os.path.join(d, f)))
        tot += sum(s["Size"] for s in j["Segments"]) * (1 + all("Output" in s for s in j["Segments"]))
print(tot)
PY
)
stored=$(du -sb --apparent-size "$W/rec-big2/blobs" | cut -f1); ondisk=$(du -sB1 "$W/rec-big2/blobs" | cut -f1)
python3 - "$d2h" "$disk" "$disk_sync" "$wall_plain" "$wall_rec" "$snap" "$ondisk" <<'PY' | tee -a "$LOG" "$OUTDIR/bench-record.txt"
import sys
d2h, disk, sync, wp, wr, snap, ondisk = map(float, sys.argv[1:])
rec_s = wr - wp
print("recording 4 GiB of fresh data (input + output snapshots %.2f GiB, %.2f GiB written): %.2f s more than the plain run" % (snap / 2**30, ondisk / 2**30, rec_s))
thr = snap / rec_s / 1e9
print("recording throughput %.2f GB/s of snapshot; pinned D2H %.1f GB/s; disk write %.2f GB/s buffered, %.2f GB/s with fdatasync" % (thr, d2h, disk, sync))
print("throughput / min(D2H, buffered disk) = %.2f (goal >= 0.8); bytes written / min(...) per second = %.2f" % (thr / min(d2h, disk), ondisk / rec_s / 1e9 / min(d2h, disk)))
PY
python3 - "$W/rec-torch" <<'PY' | tee -a "$LOG" "$OUTDIR/bench-record.txt"
import json, os, subprocess, sys
d = sys.argv[1]; tot = 0; n = 0
for f in os.listdir(d):
    if f.endswith(".json"):
        n += 1
        j = json.load(open(os.path.join(d, f)))
        tot += sum(s["Size"] for s in j["Segments"]) * (1 + all("Output" in s for s in j["Segments"]))
disk = int(subprocess.check_output(["du", "-sB1", d]).split()[0])
print("PyTorch script: %d instances, snapshots total %.1f MiB, directory on disk %.1f MiB: ratio %.3f" % (n, tot / 2**20, disk / 2**20, disk / max(tot, 1)))
PY
