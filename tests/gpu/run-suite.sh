#!/usr/bin/env bash
# The GPU suite: run on the GPU machine from the repository root, with the binary built on the
# development machine (cargo build --release) carried along:
#   bash tests/gpu/run-suite.sh [target/release/rr-tui]
# Compiles the CUDA sources with nvcc, records LLVM-layout and rr-tui-layout directories with
# tests/gpu/record_harness.cu, replays and verifies them, covers overrides, limit errors,
# repetitions, globals, dynamic shared memory, tolerance, scattered segments and fault cases,
# legacy LLVM 16–22 records (tests/gpu/legacy-suite.sh), runs the benchmark, the tuner
# (tune-suite.sh), the recorder on sample programs (record-suite.sh) and on what modern stacks
# run: CUDA graphs, host memory, textures (capture-suite.sh), A/B replays against candidates
# (ab-suite.sh), profiles and energy (profile-suite.sh), model-sized processes (model-suite.sh),
# and ends with "N passed, N failed".
# SKIP_CORE, SKIP_TUNE, SKIP_RECORDER, SKIP_CAPTURE, SKIP_ORDERED, SKIP_AB, SKIP_PROFILE, SKIP_MODEL,
# SKIP_EXPLORER=1 leave a
# part out.
# Logs go to $OUT (or /tmp/rr-suite).
set -u
ROOT=$(pwd)
# tmux for the explorer demo: the GPU machine has none; a copy unpacked from Debian's packages
# into .gpu-tools/ (see README, "The GPU suite") travels with `carry`.
if ! command -v tmux >/dev/null && [ -x "$ROOT/.gpu-tools/x/usr/bin/tmux" ]; then
  export TMUX_BIN="$ROOT/.gpu-tools/x/usr/bin/tmux" TMUX_LIB="$ROOT/.gpu-tools/x/usr/lib/x86_64-linux-gnu"
fi
RR=$(realpath "${1:-target/release/rr-tui}")
OUTDIR=${OUT:-/tmp/rr-suite}
mkdir -p "$OUTDIR"
W=$(mktemp -d)
LOG="$OUTDIR/suite.log"
: >"$LOG"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "PASS $1" | tee -a "$LOG"; }
bad() { fail=$((fail+1)); echo "FAIL $1${2:+: $2}" | tee -a "$LOG"; }
# expect NAME EXPECTED_STATUS GREP_PATTERN -- command...
expect() {
  local name=$1 want=$2 pat=$3; shift 4
  "$@" >"$W/out.txt" 2>&1; local rc=$?
  cat "$W/out.txt" >>"$LOG"
  if [ "$rc" -ne "$want" ]; then bad "$name" "exit $rc, wanted $want: $(tail -n 3 "$W/out.txt" | tr '\n' ' ')"; return; fi
  if [ -n "$pat" ] && ! grep -qE "$pat" "$W/out.txt"; then bad "$name" "output lacks /$pat/: $(tail -n 3 "$W/out.txt" | tr '\n' ' ')"; return; fi
  ok "$name"
}
py() { python3 - "$@"; }

echo "== build" | tee -a "$LOG"
nvcc -cubin -arch=sm_90 -O3 -o "$W/kernels.cubin" tests/gpu/kernels.cu >>"$LOG" 2>&1 || bad "nvcc sm_90"
nvcc -cubin -arch=sm_80 -O3 -o "$W/kernels_sm80.cubin" tests/gpu/kernels.cu >>"$LOG" 2>&1 || bad "nvcc sm_80"
nvcc -O2 -o "$W/harness" tests/gpu/record_harness.cu -lcuda >>"$LOG" 2>&1 || bad "nvcc harness"
export RR_CUBIN="$W/kernels.cubin"
rec() { local d=$1; shift; "$W/harness" "$@" >>"$LOG" 2>&1 && python3 tests/gpu/name_records.py "$d" >>"$LOG" 2>&1; }
rec "$W/llvm" llvm "$W/llvm" two-kernels 1048576 || bad "record two-kernels"
rec "$W/extras" llvm "$W/extras" extras 1048576 --no-report || bad "record extras"
rec "$W/rrtui" rrtui "$W/rrtui" 128 || bad "record rrtui"
find_json() { py "$1" "$2" <<'PY'
import json, os, sys
d, name = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(d)):
    if f.endswith(".json") and json.load(open(os.path.join(d, f)))["Name"] == name:
        print(os.path.join(d, f)); break
PY
}
SAXPY=$(find_json "$W/llvm" rr_saxpy); SCALE=$(find_json "$W/llvm" rr_scale_global)
SMEM=$(find_json "$W/extras" rr_smem_reverse); ATOMIC=$(find_json "$W/extras" rr_atomic_sum)

if [ -z "${SKIP_CORE:-}" ]; then
echo "== committed fixtures replay and verify" | tee -a "$LOG"
for j in record-fixtures/*/*.json; do
  # Legacy records need more than --verify (an image, or nothing: they cannot replay): below.
  case "$j" in record-fixtures/llvm1[0-9]-*) continue ;; esac
  tol=""; grep -q rr_atomic_sum "$j" && tol="--tolerance f32:rtol=1e-5"
  expect "fixture $(basename "$(dirname "$j")")/$(basename "$j")" 0 "device memory verified" -- "$RR" replay "$j" --verify $tol
done
expect "check fixtures" 0 "0 error" -- "$RR" check record-fixtures/llvm-two-kernels
source tests/gpu/legacy-suite.sh

echo "== recorded directories" | tee -a "$LOG"
expect "report from report file" 0 "Total Instances: 4" -- "$RR" report "$W/llvm"
for j in "$W"/llvm/*.json "$W"/rrtui/*.json "$SMEM"; do
  expect "replay+verify x5 $(basename "$j")" 0 "device memory verified" -- "$RR" replay "$j" --verify --repetitions 5
done
expect "scattered segments in the host mmap zone (0x7e…/0x7f…)" 0 "segment 2  0x7[ef]" -- "$RR" inspect "$(ls "$W"/rrtui/*.json | head -1)"
expect "dynamic shared memory 64 KiB" 0 "65536 B dynamic shared memory" -- "$RR" replay "$SMEM" --verify

echo "== overrides and limits" | tee -a "$LOG"
expect "override teams/threads verifies" 0 "device memory verified" -- "$RR" replay "$SAXPY" --num-teams 4 --num-threads 256 --verify --save-output --output-dir "$W"
PRED=$(py "$SAXPY" <<'PY'
import json, struct, sys, xxhash
d = json.load(open(sys.argv[1]))
print("%d_%d.replay_output" % (xxhash.xxh3_64_intdigest(d["Name"].encode()), xxhash.xxh3_64_intdigest(struct.pack("<3Q", 4, 256, 0))))
PY
)
[ -f "$W/$PRED" ] && ok "replay_output named as LLVM names it ($PRED)" || bad "replay_output name" "$(ls "$W"/*.replay_output 2>&1)"
# A 3-D kernel (the stencil guards its indices): another geometry covering the same 128³ cells
# must give the same bytes. (saxpy is x-only: y/z blocks would update elements twice.)
STENCIL=$(ls "$W"/rrtui/*.json | head -1)
expect "3-D grid/block override" 0 "grid 32×32×64, block 4×4×2" -- "$RR" replay "$STENCIL" --grid 32,32,64 --block 4,4,2 --verify
expect "threads limit message" 1 "number of threads \(2000\) is out of the allowed limits \(min,max: 1,1024\)" -- "$RR" replay "$SAXPY" --num-threads 2000
expect "thread_limit(256) message" 1 "number of threads \(257\) is out of the allowed limits \(min,max: 1,256\)" -- "$RR" replay "$SCALE" --num-threads 257
expect "--ignore-limits" 0 "verified" -- "$RR" replay "$SCALE" --num-threads 512 --ignore-limits --verify
expect "invalid repetitions" 2 "is not a number of repetitions \(1 to 10000000\)" -- "$RR" replay "$SAXPY" --repetitions 0

echo "== globals, tolerance, stream" | tee -a "$LOG"
mkdir -p "$W/badglob" && cp "${SCALE%.json}".* "$W/badglob/"
py "$W/badglob/$(basename "${SCALE%.json}").globals" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"g_scale\0") + len(b"g_scale\0")
b[i:i+4] = struct.pack("<f", 123.0)
open(sys.argv[1], "wb").write(b)
PY
expect "globals are restored (altered g_scale fails verification)" 1 "failed to verify" -- "$RR" replay "$W/badglob/$(basename "$SCALE")" --verify
"$RR" replay "$ATOMIC" --verify --repetitions 3 >"$W/atomic.txt" 2>&1; arc=$?; cat "$W/atomic.txt" >>"$LOG"
echo "atomic_sum byte verification exit $arc (1 = the float sums changed bits, as expected)" | tee -a "$LOG"
expect "atomic float sums verify with --tolerance" 0 "verified \(f32" -- "$RR" replay "$ATOMIC" --tolerance f32:rtol=1e-4 --repetitions 3
"$RR" replay "$SAXPY" --json --repetitions 3 --verify >"$W/stream.jsonl" 2>>"$LOG"
py "$W/stream.jsonl" <<'PY' && ok "JSON event stream" || bad "JSON event stream" "$(tail -n 2 "$W/stream.jsonl")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kinds = [e["event"] for e in ev]
assert kinds[0] == "start" and kinds[-1] == "done" and ev[-1]["ok"], kinds
assert kinds.count("rep") == 3 and "summary" in kinds and "verify" in kinds, kinds
PY

echo "== faults" | tee -a "$LOG"
mkfault() { mkdir -p "$W/$1" && cp "${SAXPY%.json}".* "$W/$1/" && echo "$W/$1/$(basename "$SAXPY")"; }
F=$(mkfault illegal); py "$F" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["ArgPtrs"][0] = 16; open(sys.argv[1], "w").write(json.dumps(d, separators=(",", ":"), sort_keys=True))
PY
expect "illegal address fault is reported" 1 "ILLEGAL_ADDRESS" -- "$RR" replay "$F" --verify --save-output
ls "$W/illegal"/*.replay_output >/dev/null 2>&1 && bad "fault leaves no replay_output" || ok "fault leaves no replay_output"
F=$(mkfault arch); cp "$W/kernels_sm80.cubin" "${F%.json}.image"
expect "image for another architecture" 1 "sm_80 but .* is sm_90" -- "$RR" replay "$F"
F=$(mkfault oom); truncate -s 200G "${F%.json}.record_input"; py "$F" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["VAllocSize"] = 256 << 30; open(sys.argv[1], "w").write(json.dumps(d, separators=(",", ":"), sort_keys=True))
PY
expect "too little device memory" 1 "not enough device memory" -- "$RR" replay "$F"
F=$(mkfault conflict); py "$F" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["VAllocAddr"] = 0x10000; open(sys.argv[1], "w").write(json.dumps(d, separators=(",", ":"), sort_keys=True))
PY
expect "address conflict" 1 "could not reserve recorded virtual address 0x10000" -- "$RR" replay "$F"
# NVTX: Nsight Compute profiles only the kernel inside the range named "rr-tui rep 2".
if command -v ncu >/dev/null; then
  ncu --clock-control none --nvtx --nvtx-include "regex:rr-tui.rep.2/" "$RR" replay "$SAXPY" --repetitions 3 >"$W/ncu.txt" 2>&1; cat "$W/ncu.txt" >>"$LOG"
  n=$(grep -c '==PROF== Profiling "rr_saxpy"' "$W/ncu.txt")
  [ "$n" = 1 ] && ok "NVTX range per repetition (ncu filtered to rep 2: 1 kernel)" || bad "NVTX ranges" "ncu profiled $n kernel(s): $(grep -m2 -E 'ERR|error' "$W/ncu.txt" | tr '\n' ' ')"
else
  echo "SKIP NVTX check: ncu not installed" | tee -a "$LOG"
fi

echo "== benchmark (1 GiB snapshot)" | tee -a "$LOG"
"$W/harness" llvm "$W/bench" bench 134217728 --time-reps 50 >"$W/harness.txt" 2>&1; cat "$W/harness.txt" >>"$LOG"
python3 tests/gpu/name_records.py "$W/bench" >>"$LOG" 2>&1
BENCH=$(ls "$W"/bench/*.json | head -1)
RR_TUI_CALIBRATE=1 "$RR" replay "$BENCH" --json --repetitions 50 --warmup 3 --verify >"$W/bench.jsonl" 2>>"$LOG"
py "$W/bench.jsonl" "$W/harness.txt" <<'PY' | tee -a "$LOG" "$OUTDIR/bench.txt"
import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
get = lambda k: [e for e in ev if e["event"] == k]
restore = get("restore")[0]
cal = dict(kv.split("=") for kv in [e for e in get("phase") if e["name"] == "calibration"][0]["detail"].split())
summ = get("summary")[0]
harness = float(re.search(r"median ns: (\d+)", open(sys.argv[2]).read()).group(1))
k, h, r = summ["kernel_ns"], summ["host_ns"], summ["restore_ns"]
print("snapshot bytes: %d" % restore["bytes"])
print("first restore (pinned staging, chunked async): %.1f GB/s; single pinned cuMemcpyHtoD: %s GB/s; ratio %.3f (goal >= 0.85)" % (restore["gb_per_s"], cal["pinned_single_copy_gbps"], restore["gb_per_s"] / float(cal["pinned_single_copy_gbps"])))
print("between-repetition restore (device pristine copy): %.3f ms; pageable re-copy: %.3f ms (%s GB/s); ratio %.1fx (goal >= 20x)" % (float(cal["device_restore_s"]) * 1e3, float(cal["pageable_s"]) * 1e3, cal["pageable_copy_gbps"], float(cal["pageable_s"]) / float(cal["device_restore_s"])))
print("kernel time: replay median %.0f ns, plain nvcc harness median %.0f ns, ratio %.3f (goal 0.97-1.03)" % (k["median"], harness, k["median"] / harness))
print("per-repetition host overhead beyond kernel time: median host %.0f ns - kernel %.0f ns = %.0f ns; restore between reps median %.3f ms" % (h["median"], k["median"], h["median"] - k["median"], r["median"] / 1e6))
print("verified: %s" % get("verify")[0]["passed"])
PY
grep -q "verified: True" "$OUTDIR/bench.txt" && ok "benchmark replay verifies" || bad "benchmark replay"
fi

if [ -z "${SKIP_TUNE:-}" ]; then source tests/gpu/tune-suite.sh; fi
if [ -z "${SKIP_RECORDER:-}" ]; then source tests/gpu/record-suite.sh; fi
if [ -z "${SKIP_CAPTURE:-}" ]; then source tests/gpu/capture-suite.sh; fi
if [ -z "${SKIP_ORDERED:-}" ]; then source tests/gpu/ordered-suite.sh; fi
if [ -z "${SKIP_AB:-}" ]; then source tests/gpu/ab-suite.sh; fi
if [ -z "${SKIP_PROFILE:-}" ]; then source tests/gpu/profile-suite.sh; fi
if [ -z "${SKIP_MODEL:-}" ]; then source tests/gpu/model-suite.sh; fi

echo "== explorer (tmux)" | tee -a "$LOG"
if [ -n "${SKIP_EXPLORER:-}" ]; then
  echo "SKIP explorer demo (SKIP_EXPLORER)" | tee -a "$LOG"
elif command -v tmux >/dev/null || [ -n "${TMUX_BIN:-}" ]; then
  bash tests/gpu/explorer-demo.sh "$RR" record-fixtures/llvm-two-kernels "$OUTDIR" >>"$LOG" 2>&1 && ok "explorer replays and verifies live from the UI" || bad "explorer demo" "$(tail -n 5 "$LOG" | tr '\n' ' ')"
else
  echo "SKIP explorer demo: no tmux" | tee -a "$LOG"
fi

echo
echo "$pass passed, $fail failed" | tee -a "$LOG"
[ "$fail" -eq 0 ]
