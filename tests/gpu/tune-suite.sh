#!/usr/bin/env bash
# The tuner's part of the GPU suite (tests/gpu/run-part.sh tune; suite-lib.sh defines
# ok/bad/expect/py/figure, $W, $RR, $LOG, $OUTDIR): cold clocks, the adaptive stop, sweeps
# (exhaustive, faults, refusals, --resume, annealing, tpe, --simulate, register limits on a PTX
# image), Slurm-style parts merged, and tune DIR. The benchmark: tune-bench-suite.sh; several
# GPUs: multi-gpu-suite.sh and ray-suite.sh.
build_harness || return 0
make_bench_record || return 0
echo "== timing: probes, cold samples, adaptive stop" | tee -a "$LOG"
"$RR" replay "$SAXPY" --json --repetitions 20 --cold >"$W/cold.jsonl" 2>>"$LOG"
py "$W/cold.jsonl" <<'PY' && ok "replay --cold: clock per repetition, near the rated clock" || bad "replay --cold clocks" "$(tail -n 2 "$W/cold.jsonl")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
reps = [e for e in ev if e["event"] == "rep"]
s = [e for e in ev if e["event"] == "summary"][0]
assert len(reps) == 20 and all("clock_mhz" in r for r in reps), reps[:2]
rated = s["reference_clock_mhz"]; med = s["clock_mhz"]["median"]
print("clock median %.0f MHz, rated %.0f MHz" % (med, rated))
assert 0.5 * rated < med < 1.1 * rated, (med, rated)
PY
expect "replay --max-noise 1 runs and verifies" 0 "noise [0-9.]+ % over" -- "$RR" replay "$BENCH" --cold --max-noise 1 --timeout 5 --verify
noise=$(grep -oE "noise [0-9.]+ % over [0-9]+" "$W/out.txt" | tail -n 1)
python3 -c "import sys; n = float(sys.argv[1].split()[1]); sys.exit(0 if n <= 1.0 else 1)" "${noise:-noise nan}" 2>/dev/null \
  && ok "replay --max-noise 1 stops on noise ($noise repetitions, <= 1 %)" || bad "replay --max-noise 1 stops on noise" "${noise:-no noise figure printed}"

echo "== tune" | tee -a "$LOG"
expect "tune: exhaustive sweep, every configuration verifies" 0 "Best: grid" -- "$RR" tune "$SAXPY" --block 64..1024*2 --grid 64,1024 --samples 5 --csv "$W/t1.csv" --json-out "$W/t1.json"
py "$W/t1.csv" "$W/t1.json" <<'PY' && ok "tune: CSV (Mneme's columns) and JSON agree" || bad "tune CSV/JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = json.load(open(sys.argv[2]))
assert list(rows[0])[:8] == ["Kernel-Name", "GridDim-X", "BlockDim-X", "MaxThreads", "MinBlock", "Duration (ms)", "Duration (stdev)", "Verify"], list(rows[0])
assert len(rows) == len(r["trials"]) == 11, (len(rows), len(r["trials"]))   # 2 x 5 + the recorded one
assert all(t["status"] == "ok" for t in r["trials"]), [t["status"] for t in r["trials"]]
assert r["best"] and r["speedup"] > 0 and r["devices"][0]["name"], r["best"]
assert sum(1 for t in r["trials"] if t.get("recorded")) == 1
PY
# The stencil guards its indices: grids that do not cover the 128^3 cells leave cells unwritten.
expect "tune: configurations that do not verify are marked and the sweep goes on" 0 "verify failed" -- "$RR" tune "$STENCIL" --block 4x4x2,8x8x1 --grid 8x8x8,cover --samples 3
# 64 KiB of shared memory is the tile: 1 KiB faults (out-of-range shared access), 300000 B is
# refused by the driver, 2048 threads are skipped before launching; the sweep continues.
"$RR" tune "$SMEM" --shared-mem 1024,65536,300000 --block 128,256,2048 --samples 3 --json-out "$W/t2.json" >"$W/t2.txt" 2>&1; rc=$?; cat "$W/t2.txt" >>"$LOG"
py "$W/t2.json" <<'PY' && ok "tune: a fault restarts the engine and the sweep goes on; invalid and skipped are recorded" || bad "tune faults" "exit $rc: $(tail -n 3 "$W/t2.txt" | tr '\n' ' ')"
import json, sys
r = json.load(open(sys.argv[1]))
by = {}
for t in r["trials"]:
    by.setdefault(t["status"], []).append((t["shared_mem"], t["block"][0]))
print(by)
assert any(s == 1024 for s, b in by.get("fault", [])), by
assert any(s == 300000 for s, b in by.get("invalid", [])), by
assert any(b == 2048 for s, b in by.get("skipped", [])), by
ok_after = [t for t in r["trials"][r["trials"].index([x for x in r["trials"] if x["status"] == "fault"][0]) + 1:] if t["status"] == "ok"]
assert ok_after, "nothing measured after the fault"
PY
# Resume: a budget of 4, then the rest; nothing is measured twice.
"$RR" tune "$SAXPY" --block 32..1024*2 --grid 32,256 --strategy random --seed 7 --budget 4 --samples 3 --json-out "$W/t3.json" >>"$LOG" 2>&1
expect "tune --resume continues an interrupted sweep" 0 "resumed: 4 configuration" -- "$RR" tune "$SAXPY" --block 32..1024*2 --grid 32,256 --strategy random --seed 7 --samples 3 --json-out "$W/t3.json" --resume
py "$W/t3.json" <<'PY' && ok "tune --resume: every configuration once" || bad "tune --resume"
import json, sys
r = json.load(open(sys.argv[1]))
keys = [(tuple(t["grid"]), tuple(t["block"]), t["shared_mem"]) for t in r["trials"]]
assert len(keys) == len(set(keys)) == 13, (len(keys), len(set(keys)))
PY
expect "tune: annealing with a budget" 0 "Best: grid" -- "$RR" tune "$SAXPY" --block 32..1024:32 --grid 16..1024*2 --strategy annealing --budget 40 --samples 3
expect "tune: tpe with a budget" 0 "Best: grid" -- "$RR" tune "$SAXPY" --block 32..1024:32 --grid 16..1024*2 --strategy tpe --budget 40 --samples 3
# A measured sweep answers a simulated one: tpe over the same axes, no GPU work.
expect "tune --simulate answers from a measured sweep" 0 "simulated from" -- "$RR" tune "$SAXPY" --block 64..1024*2 --grid 64,1024 --strategy tpe --budget 6 --simulate "$W/t1.json"
# Register limits need PTX: the same kernel compiled to PTX, driver-compiled at each limit.
nvcc -ptx -arch=sm_90 -O3 -o "$W/kernels.ptx" tests/gpu/kernels.cu >>"$LOG" 2>&1 && cp "$W/kernels.ptx" "$OUTDIR/kernels.ptx"
mkdir -p "$W/ptx" && cp "${SAXPY%.json}".* "$W/ptx/" && cp "$W/kernels.ptx" "$W/ptx/$(basename "${SAXPY%.json}").image"
PTXJ="$W/ptx/$(basename "$SAXPY")"
expect "replay of a PTX image verifies" 0 "device memory verified" -- "$RR" replay "$PTXJ" --verify
"$RR" tune "$PTXJ" --registers 16,32,64 --block 256,1024 --samples 3 --json-out "$W/t4.json" >"$W/t4.txt" 2>&1; cat "$W/t4.txt" >>"$LOG"
py "$W/t4.json" <<'PY' && ok "tune --registers (CU_JIT_MAX_REGISTERS) on a PTX image" || bad "tune --registers" "$(tail -n 3 "$W/t4.txt" | tr '\n' ' ')"
import json, sys
r = json.load(open(sys.argv[1]))
lim = [t for t in r["trials"] if t.get("max_registers")]
natural = [t["registers"] for t in r["trials"] if t.get("recorded")][0]
regs = sorted({(t["max_registers"], t["registers"]) for t in lim})
print("registers as compiled, per limit:", regs, "without a limit:", natural)
# The limit is a ceiling the JIT honours down to its own floor (ptxas keeps a minimum per
# architecture): 16 must bind below the natural count, no limit may raise it.
assert len(lim) == 6 and all(t["status"] == "ok" and t["registers"] <= max(t["max_registers"], natural) for t in lim), lim
assert all(r < natural for m, r in regs if m < natural), regs
PY
expect "tune --registers on a cubin is refused" 2 "needs a record holding PTX" -- "$RR" tune "$SAXPY" --registers 32 --samples 3

# Slurm-style parts of a sweep, measured one after the other, joined by `tune merge`: the same
# configurations with the same outcomes as one run.
SH="--grid 1..8 --block 32..256*2 --samples 3 --hot"
"$RR" tune "$SAXPY" $SH --json-out "$W/sh-all.json" >>"$LOG" 2>&1
for k in 1 2 3; do SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=1 "$RR" tune "$SAXPY" $SH --json-out "$W/sh-$k.json" >>"$LOG" 2>&1; done
expect "tune merge joins the parts of a Slurm array" 0 "Merged 3 shard" -- "$RR" tune merge "$W/sh-2.json" "$W/sh-1.json" "$W/sh-3.json" --json-out "$W/sh-merged.json"
python3 - "$W/sh-all.json" "$W/sh-merged.json" <<'PY' && ok "tune merge: the same configurations and outcomes as one run" || bad "tune merge differs from one run"
import json, sys
rows = lambda p: [(t["grid"], t["block"], t["status"], t.get("recorded", False)) for t in json.load(open(p))["trials"]]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert a == b, (a[:3], b[:3])
PY

# A whole recording: every instance of the two-kernel directory swept with the same axes, a
# report each and a summary; the summary's rows name the instances and their best configurations.
expect "tune DIR: every instance swept, a report each" 0 "Summary of [0-9]+ instance" -- "$RR" tune "$W/llvm" --block 64..512*2 --samples 3 --hot --reports "$W/dir-reports"
python3 - "$W/dir-reports" <<'PY' && ok "tune DIR: reports and summary agree" || bad "tune DIR reports"
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
rows = s
reports = [f for f in os.listdir(d) if f.endswith(".json") and f != "summary.json"]
print(len(rows), "summary rows,", len(reports), "reports")
assert len(rows) == len(reports) >= 4, (len(rows), reports)
assert all(r["outcome"] == "swept" and r["best"] and r["verified"] > 0 for r in rows), rows
PY
