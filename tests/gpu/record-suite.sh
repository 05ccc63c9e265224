#!/usr/bin/env bash
# The recorder's part of the GPU suite (sourced by run-suite.sh, which defines ok/bad/expect/$W/$RR).
# Every sample program runs plainly and under `rr-tui record`: the same checksum (the recorder
# changes nothing), then every recorded instance replays at its recorded addresses and verifies.
SAMPLES=tests/gpu/samples
source tests/gpu/capture-lib.sh
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
  strict_check "$name" "$dir"
}
roundtrip structs "" -- "$W/samples/structs"
roundtrip smem_streams "" -- "$W/samples/smem_streams"
roundtrip pointers "" -- "$W/samples/pointers"
roundtrip pools_managed "" -- "$W/samples/pools_managed"
roundtrip cluster "" -- "$W/samples/cluster"
roundtrip nvrtc "" -- "$W/samples/nvrtc"
roundtrip torch "" -- python3 "$SAMPLES/torch_ops.py"
expect "record: a directory with another recording is refused" 2 "already holds a recording" -- "$RR" record --dir "$W/rec-structs" -- "$W/samples/structs"
# Only the allocations parameter words point into (here: pointers inside a struct passed by
# value); a kernel that follows pointers stored in device memory needs the default `all`.
"$RR" record --dir "$W/rec-args" --snapshot args --kernels 'k_struct' -- "$W/samples/structs" >/dev/null 2>>"$LOG"
n=0; good=0
for j in "$W"/rec-args/*.json; do [ -e "$j" ] || continue; n=$((n+1)); "$RR" replay "$j" --verify >>"$LOG" 2>&1 && good=$((good+1)); done
full=$(python3 -c "import json,glob; print(sum(len(json.load(open(f))['Segments']) for f in glob.glob('$W/rec-structs/*.json')))")
args=$(python3 -c "import json,glob; print(sum(len(json.load(open(f))['Segments']) for f in glob.glob('$W/rec-args/*.json')))")
[ "$n" -ge 1 ] && [ "$good" -eq "$n" ] && [ "$args" -lt "$full" ] && ok "record --snapshot args --kernels: $n instance(s) with $args segment(s) (all: $full) replay and verify" || bad "record --snapshot args" "$good of $n verified; segments $args vs $full"
"$RR" report "$W/rec-torch" >"$W/torch-report.txt" 2>>"$LOG" && grep -q "Total Instances" "$W/torch-report.txt" && ok "report of the PyTorch recording" || bad "report of the PyTorch recording"
cp "$W/torch-report.txt" "$OUTDIR/" 2>/dev/null

if [ -z "${SKIP_RECORD_BENCH:-}" ]; then
echo "== recorder: benchmark" | tee -a "$LOG"
B="$W/samples/bench_record"
python3 - "$RR" "$B" "$W" "$SAMPLES/torch_ops.py" <<'PY' | tee -a "$LOG" "$OUTDIR/bench-record.txt"
import json, os, re, shutil, subprocess, sys, time
rr, bench, work, torch_script = sys.argv[1:]
def seconds(out):
    return float(re.search(r"seconds=([0-9.]+)", out).group(1))
def run(cmd):
    t = time.perf_counter(); out = subprocess.run(cmd, capture_output=True, text=True); w = time.perf_counter() - t
    if out.returncode != 0: raise SystemExit("%s failed: %s" % (cmd, out.stderr[-500:]))
    return out.stdout, w
def recorded(args, name):
    d = os.path.join(work, name); shutil.rmtree(d, ignore_errors=True)
    return [rr, "record", "--dir", d] + args + ["--"]
# Loaded, recording nothing (no kernel matches): best of 3, launch-bound and GPU-bound.
for label, extra in (("launch-bound (4096 words per kernel, ~3 us launches)", ["4096"]), ("GPU-bound (8M words, ~20 us kernels)", ["8388608"])):
    n = "200000" if extra[0] == "4096" else "50000"
    plain = min(seconds(run([bench, "storm", n] + extra)[0]) for _ in range(3))
    rec = min(seconds(run(recorded(["--kernels", "^nothing$"], "rec-storm") + [bench, "storm", n] + extra)[0]) for _ in range(3))
    print("recorder loaded, recording nothing, %s launches %s: %.3f s vs %.3f s without: ratio %.3f (goal <= %s)" % (n, label, rec, plain, rec / plain, "1.05" if extra[0] == "4096" else "1.02"))
_, tp = run(["python3", torch_script]); _, tr = run(recorded(["--kernels", "^nothing$"], "rec-torch0") + ["python3", torch_script])
print("PyTorch script (start-up included), recorder loaded recording nothing: %.2f s vs %.2f s: ratio %.3f" % (tr, tp, tr / tp))
# Recording 4 GiB of fresh, distinct data: one kernel reads 8 x 512 MiB and writes 1 MiB.
d2h = float(re.search(r"gbps=([0-9.]+)", run([bench, "d2h", "4"])[0]).group(1))
def dd(extra):
    f = os.path.join(work, "ddtest"); out = subprocess.run(["dd", "if=/dev/zero", "of=" + f, "bs=64M", "count=64"] + extra, capture_output=True, text=True).stderr
    os.remove(f); return float(re.search(r"([0-9.]+) GB/s", out).group(1))
disk, disk_sync = dd([]), dd(["conv=fdatasync"])
_, wp = run([bench, "big", "4"])
_, wr = run(recorded([], "rec-big") + [bench, "big", "4"])
d = os.path.join(work, "rec-big"); snap = 0
for f in os.listdir(d):
    if f.endswith(".json"):
        j = json.load(open(os.path.join(d, f)))
        snap += sum(s["Size"] for s in j["Segments"]) * (1 + all("Output" in s for s in j["Segments"]))
ondisk = int(subprocess.check_output(["du", "-sB1", os.path.join(d, "blobs")]).split()[0])
extra = wr - wp; thr = snap / extra / 1e9
print("recording 4 GiB of fresh data: input + output snapshots %.2f GiB, %.2f GiB written, %.2f s more than the plain run" % (snap / 2**30, ondisk / 2**30, extra))
print("recording throughput %.2f GB/s of snapshot; pinned D2H %.1f GB/s; disk write %.2f GB/s (buffered), %.2f GB/s (fdatasync)" % (thr, d2h, disk, disk_sync))
print("throughput / min(pinned D2H, buffered disk write) = %.2f (goal >= 0.8)" % (thr / min(d2h, disk)))
# PyTorch: bytes on disk against the instances' snapshot sizes.
d = os.path.join(work, "rec-torch"); tot = 0; n = 0
for f in os.listdir(d):
    if f.endswith(".json"):
        n += 1; j = json.load(open(os.path.join(d, f)))
        tot += sum(s["Size"] for s in j["Segments"]) * (1 + all("Output" in s for s in j["Segments"]))
size = int(subprocess.check_output(["du", "-sB1", d]).split()[0])
print("PyTorch script: %d instances, snapshots total %.1f MiB, record directory on disk %.1f MiB: ratio %.3f" % (n, tot / 2**20, size / 2**20, size / max(tot, 1)))
PY
fi
