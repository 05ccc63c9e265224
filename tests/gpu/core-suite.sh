# The core part (tests/gpu/run-part.sh core): the committed fixtures, legacy LLVM 16–22 records
# (legacy-suite.sh), directories recorded by tests/gpu/record_harness.cu replayed and verified,
# overrides and LLVM's limit errors, globals, tolerance, the JSON stream, faults, NVTX ranges.
build_harness || return 0

echo "== committed fixtures replay and verify" | tee -a "$LOG"
for j in record-fixtures/*/*.json; do
  # Legacy records need more than --verify (an image, or nothing: they cannot replay): below.
  case "$j" in record-fixtures/llvm1[0-9]-*) continue ;; esac
  tol=""; grep -q rr_atomic_sum "$j" && tol="--tolerance f32:rtol=1e-5"
  expect "fixture $(basename "$(dirname "$j")")/$(basename "$j")" 0 "device memory verified" -- "$RR" replay "$j" --verify $tol
done
expect "check fixtures" 0 ": 0 error\(s\)" -- "$RR" check record-fixtures/llvm-two-kernels
source tests/gpu/legacy-suite.sh

echo "== recorded directories" | tee -a "$LOG"
expect "report from report file" 0 "Total Instances: 4( |$)" -- "$RR" report "$W/llvm"
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
expect "3-D grid/block override" 0 "grid 32×32×64, block 4×4×2" -- "$RR" replay "$STENCIL" --grid 32x32x64 --block 4x4x2 --verify
expect "threads limit message" 2 "number of threads \(2000\) is out of the allowed limits \(min,max: 1,1024\)" -- "$RR" replay "$SAXPY" --num-threads 2000
expect "thread_limit(256) message" 2 "number of threads \(257\) is out of the allowed limits \(min,max: 1,256\)" -- "$RR" replay "$SCALE" --num-threads 257
expect "--ignore-limits" 0 "verified" -- "$RR" replay "$SCALE" --num-threads 512 --ignore-limits --verify
expect "invalid repetitions" 2 "is not a number of repetitions \(1 to 10000000\)" -- "$RR" replay "$SAXPY" --repetitions 0

echo "== globals, tolerance, stream" | tee -a "$LOG"
mkdir -p "$W/badglob" && cp "${SCALE%.json}".* "$W/badglob/" 2>>"$LOG"
py "$W/badglob/$(basename "${SCALE%.json}").globals" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"g_scale\0") + len(b"g_scale\0")
b[i:i+4] = struct.pack("<f", 123.0)
open(sys.argv[1], "wb").write(b)
PY
expect "globals are restored (altered g_scale fails verification)" 1 "failed to verify" -- "$RR" replay "$W/badglob/$(basename "$SCALE")" --verify
timeout 300 "$RR" replay "$ATOMIC" --verify --repetitions 3 >"$W/atomic.txt" 2>&1; arc=$?; cat "$W/atomic.txt" >>"$LOG"
echo "atomic_sum byte verification exit $arc (1 = the float sums changed bits, as expected)" | tee -a "$LOG"
expect "atomic float sums verify with --tolerance" 0 "verified \(f32" -- "$RR" replay "$ATOMIC" --tolerance f32:rtol=1e-4 --repetitions 3
timeout 300 "$RR" replay "$SAXPY" --json --repetitions 3 --verify >"$W/stream.jsonl" 2>>"$LOG"
py "$W/stream.jsonl" <<'PY' && ok "JSON event stream" || bad "JSON event stream" "$(tail -n 2 "$W/stream.jsonl")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kinds = [e["event"] for e in ev]
assert kinds[0] == "start" and kinds[-1] == "done" and ev[-1]["ok"], kinds
assert kinds.count("rep") == 3 and "summary" in kinds and "verify" in kinds, kinds
PY

echo "== faults" | tee -a "$LOG"
# mkfault NAME: a copy of the saxpy instance under $W/NAME (always a path under $W).
mkfault() { mkdir -p "$W/$1"; cp "${SAXPY%.json}".* "$W/$1/" 2>>"$LOG"; echo "$W/$1/$(basename "${SAXPY:-missing.json}")"; }
F=$(mkfault illegal); py "$F" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["ArgPtrs"][0] = 16; open(sys.argv[1], "w").write(json.dumps(d, separators=(",", ":"), sort_keys=True))
PY
expect "illegal address fault is reported" 1 "ILLEGAL_ADDRESS" -- "$RR" replay "$F" --verify --save-output
ls "$W/illegal"/*.replay_output >/dev/null 2>&1 && bad "fault leaves no replay_output" || ok "fault leaves no replay_output"
F=$(mkfault arch); cp "$W/kernels_sm80.cubin" "${F%.json}.image"
expect "image for another architecture" 2 "sm_80 but .* is sm_90" -- "$RR" replay "$F"
F=$(mkfault oom); truncate -s 200G "${F%.json}.record_input"; py "$F" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["VAllocSize"] = 256 << 30; open(sys.argv[1], "w").write(json.dumps(d, separators=(",", ":"), sort_keys=True))
PY
expect "more device memory than the GPU has: refused before reading the snapshot" 2 "needs 200 GiB .* more than the .* of .*: no replay on this GPU can hold it" -- "$RR" replay "$F"
F=$(mkfault conflict); py "$F" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["VAllocAddr"] = 0x10000; open(sys.argv[1], "w").write(json.dumps(d, separators=(",", ":"), sort_keys=True))
PY
expect "address conflict" 1 "could not reserve recorded virtual address 0x10000" -- "$RR" replay "$F"
# NVTX: Nsight Compute profiles only the kernel inside the range named "rr-tui rep 2".
if have ncu; then
  note_cmd ncu --nvtx "$RR" replay "$SAXPY" --repetitions 3
  timeout 300 ncu --clock-control none --nvtx --nvtx-include "regex:rr-tui.rep.2/" "$RR" replay "$SAXPY" --repetitions 3 >"$W/ncu.txt" 2>&1; cat "$W/ncu.txt" >>"$LOG"
  n=$(grep -c '==PROF== Profiling "rr_saxpy"' "$W/ncu.txt")
  [ "$n" = 1 ] && ok "NVTX range per repetition (ncu filtered to rep 2: 1 kernel)" || bad "NVTX ranges" "ncu profiled $n kernel(s): $(grep -m2 -E 'ERR|error' "$W/ncu.txt" | tr '\n' ' ')"
else
  skip "NVTX range per repetition" "ncu not installed"
fi
