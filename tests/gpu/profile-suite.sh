# Profiles and energy (sourced by run-suite.sh): a program with a memory-bound and a
# compute-bound kernel is recorded; `rr-tui profile` must call the first memory-bound with the
# DRAM bytes its arguments imply (within 5 %) and the second compute-bound; `replay --energy`
# measures the compute-bound kernel at two block sizes with noise under 5 %; a tune with
# --objective energy keeps both time and energy and its Pareto front holds the fastest and the
# most frugal configurations. Figures go to $OUTDIR/profile-bench.txt; ncu's raw pages to
# $OUTDIR/ncu-*.csv.
echo "== profile and energy" | tee -a "$LOG"
PR=$W/prof
nvcc -O3 -arch=sm_90 -o "$W/prof_prog" tests/gpu/samples/profile_kernels.cu >>"$LOG" 2>&1 || bad "nvcc profile_kernels"
"$RR" record --dir "$PR" --kernels 'rr_triad|rr_fma_chain' -- "$W/prof_prog" >>"$LOG" 2>&1 || bad "record profile_kernels"
pick() { python3 -c 'import json,os,sys
for f in sorted(os.listdir(sys.argv[1])):
    if f.endswith(".json") and sys.argv[2] in json.load(open(os.path.join(sys.argv[1], f))).get("Name", ""): print(os.path.join(sys.argv[1], f)); break' "$PR" "$1"; }
TRIAD=$(pick rr_triad); FMA=$(pick rr_fma_chain)
if command -v ncu >/dev/null; then
  t0=$(date +%s.%N)
  "$RR" profile "$TRIAD" --json >"$W/p-triad.json" 2>>"$LOG"; rc=$?
  t1=$(date +%s.%N)
  "$RR" profile "$FMA" >"$W/p-fma.txt" 2>&1; cat "$W/p-fma.txt" >>"$LOG"
  ncu --import "${TRIAD%.json}.ncu-rep" --csv --page raw --print-units base >"$OUTDIR/ncu-triad.csv" 2>&1
  python3 - "$W/p-triad.json" "$t0" "$t1" >"$W/p-check.txt" 2>&1 <<'PY' && ok "profile: the triad is memory-bound, DRAM bytes within 5 % of its arguments' 1.5 GiB" || bad "profile triad" "exit $rc: $(tail -c 300 "$W/p-check.txt")"
import json, sys
r = json.load(open(sys.argv[1])); p = r["profile"]; t = float(sys.argv[3]) - float(sys.argv[2])
implied = 3 * (1 << 27) * 4
dram = p["dram_read_bytes"] + p["dram_write_bytes"]
print("profile of rr_triad: %.2f s wall (ncu included); duration %.1f us; DRAM %.1f MB read + %.1f MB written = %.4f x the %d bytes its arguments imply; SOL memory %.1f %%, compute %.1f %%; roofline %s-bound, %.1f %% of the roof; missing: %s" % (
    t, p["duration_ns"] / 1e3, p["dram_read_bytes"] / 1e6, p["dram_write_bytes"] / 1e6, dram / implied, implied,
    p["memory_throughput_pct"], p["sm_throughput_pct"], p["roofline"]["bound"], 100 * p["roofline"]["of_roof"], p["missing"]))
assert p["roofline"]["bound"] == "memory", p["roofline"]
assert abs(dram / implied - 1) < 0.05, dram / implied
PY
  cat "$W/p-check.txt" | tee -a "$OUTDIR/profile-bench.txt" >>"$LOG"
  grep -q "compute-bound" "$W/p-fma.txt" && ok "profile: the FMA chain is compute-bound" || bad "profile fma" "$(grep -E 'roofline|Error' "$W/p-fma.txt" | head -3 | tr '\n' ' ')"
  grep -E "roofline|speed of light|occupancy" "$W/p-fma.txt" | tee -a "$OUTDIR/profile-bench.txt" >/dev/null
  expect "profile: a tuned configuration, another section" 0 "Profile of rr_fma_chain.*\(grid 1024×1×1, block 1024×1×1\)" -- "$RR" profile "$FMA" --grid 1024 --block 1024 --section MemoryWorkloadAnalysis --output-dir "$W"
  # What the explorer's profile view runs: progress events, the profile, done.
  timeout 120 "$RR" profile "$FMA" --grid 1024 --block 1024 --events --run-id 7 --output-dir "$W" >"$W/p-events.jsonl" 2>>"$LOG" </dev/null
  python3 - "$W/p-events.jsonl" >"$W/pe-check.txt" 2>&1 <<'PY' && ok "profile --events (the explorer's child): progress, the profile, done" || bad "profile --events" "$(tail -c 300 "$W/pe-check.txt")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kinds = [e["event"] for e in ev]
assert all(e["run"] == 7 for e in ev), ev
assert kinds[-2:] == ["profile", "done"] and ev[-1]["ok"] and "phase" in kinds, kinds
p = ev[-2]
assert p["block"] == [1024, 1, 1] and p["profile"]["duration_ns"] > 0, p
print("profile --events: %d progress event(s), duration %.1f us" % (kinds.count("phase"), p["profile"]["duration_ns"] / 1e3))
PY
  cat "$W/pe-check.txt" >>"$LOG"
  # A vs B: the A/B part's recorded ab_scale (SLOW=4) and its source without SLOW as the
  # candidate, each profiled; the candidate's own range, its own report, a shorter duration.
  if [ -n "${ABJ:-}" ]; then
    timeout 300 "$RR" profile "$ABJ" --json >"$W/pa.json" 2>>"$LOG" </dev/null
    timeout 300 "$RR" profile "$ABJ" --candidate tests/gpu/samples/ab_kernel.cu -D SLOW=0 --json >"$W/pb.json" 2>>"$LOG" </dev/null
    python3 - "$W/pa.json" "$W/pb.json" >"$W/pab-check.txt" 2>&1 <<'PY' && ok "profile --candidate: A vs B, the candidate in its own range and report, faster" || bad "profile --candidate" "$(tail -c 300 "$W/pab-check.txt")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
da, db = a["profile"]["duration_ns"], b["profile"]["duration_ns"]
assert b["candidate"].endswith("ab_kernel.cu") and b["report"].endswith(".candidate.ncu-rep") and a["report"] != b["report"], (a["report"], b["report"])
print("profile A vs B (ab_scale SLOW=4 recorded, the source with SLOW=0 as candidate): %.2f us vs %.2f us = %.3fx; SM %.1f %% vs %.1f %%, memory %.1f %% vs %.1f %%" % (
    da / 1e3, db / 1e3, db / da, a["profile"]["sm_throughput_pct"], b["profile"]["sm_throughput_pct"], a["profile"]["memory_throughput_pct"], b["profile"]["memory_throughput_pct"]))
assert db < 0.97 * da, (da, db)
PY
    cat "$W/pab-check.txt" | tee -a "$OUTDIR/profile-bench.txt" >>"$LOG"
  fi
  expect "profile: a missing ncu is named" 2 "no such file" -- "$RR" profile "$FMA" --ncu /nonexistent/ncu
else
  echo "SKIP profile: ncu not installed" | tee -a "$LOG"
fi
# Energy at two block sizes (grid adjusted to cover the same threads).
for cfg in "8192 128" "1024 1024"; do
  set -- $cfg
  "$RR" replay "$FMA" --grid "$1" --block "$2" --energy --verify --json >"$W/e-$2.jsonl" 2>>"$LOG"
done
python3 - "$W/e-128.jsonl" "$W/e-1024.jsonl" >"$W/e-check.txt" 2>&1 <<'PY' && ok "replay --energy: two block sizes, noise under 5 %, verified" || bad "replay --energy" "$(tail -c 400 "$W/e-check.txt") $(tail -n 2 "$W/e-128.jsonl" | tr '\n' ' ')"
import json, sys
for path in sys.argv[1:]:
    ev = [json.loads(l) for l in open(path) if l.strip()]
    e = [x for x in ev if x["event"] == "energy"][0]
    v = [x for x in ev if x["event"] == "verify"][0]
    print("energy of rr_fma_chain (%s): %.3f mJ per execution, %.1f W x %.1f us; noise %.2f %% over %d windows (%.2f s, counter every %.0f ms, polled every %.2f ms); idle %.1f W, limit %.0f W; SM %.0f MHz, memory %.0f MHz" % (
        path.split("e-")[-1].split(".")[0] + " threads a block", e["joules"] * 1e3, e["power_w"], e["execution_ns"] / 1e3, 100 * e["noise"],
        e["windows"], e["seconds"], e["counter_interval_ms"], e["poll_ms"], e["idle_power_w"], e["power_limit_w"], e["sm_clock_mhz"]["median"], e["memory_clock_mhz"]["median"]))
    assert e["noise"] < 0.05 and e["windows"] >= 20 and v["passed"], (e, v)
PY
cat "$W/e-check.txt" | tee -a "$OUTDIR/profile-bench.txt" >>"$LOG"
# A sweep by energy: time and energy per configuration, the Pareto front holding the fastest
# and the most frugal (block sizes of the FMA chain, the grid covering the recorded threads).
t0=$(date +%s.%N)
"$RR" tune "$FMA" --block 64..1024*2 --grid cover --objective energy --samples 20 --json "$W/te.json" --csv "$W/te.csv" >"$W/te.txt" 2>&1; rc=$?
t1=$(date +%s.%N)
cat "$W/te.txt" >>"$LOG"; cp "$W/te.json" "$W/te.csv" "$OUTDIR/" 2>/dev/null
python3 - "$W/te.json" "$W/te.csv" "$t0" "$t1" >"$W/te-check.txt" 2>&1 <<'PY' && ok "tune --objective energy: time and energy per configuration, the front holds the fastest and the most frugal" || bad "tune --objective energy" "exit $rc: $(tail -c 400 "$W/te-check.txt") $(tail -n 3 "$W/te.txt" | tr '\n' ' ')"
import csv, json, sys
r = json.load(open(sys.argv[1])); t = float(sys.argv[4]) - float(sys.argv[3])
ok = [(i, x) for i, x in enumerate(r["trials"]) if x["status"] == "ok"]
assert r["objective"] == "energy" and len(ok) >= 4, (r["objective"], len(ok))
assert all("energy" in x and x["energy"]["joules"] > 0 for _, x in ok), "a verified configuration without energy"
fastest = min(ok, key=lambda p: p[1]["kernel_ns"]["median"])[0]
frugal = min(ok, key=lambda p: p[1]["energy"]["joules"])[0]
front = r["pareto"]
assert fastest in front and frugal in front, (fastest, frugal, front)
assert r["best"]["energy"]["joules"] == r["trials"][frugal]["energy"]["joules"], r["best"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert sum(row["Pareto"] == "1" for row in rows) == len(front)
print("tune --objective energy of rr_fma_chain: %d configurations in %.1f s (energy ~%.1f s each); Pareto front %d: %s" % (
    len(ok), t, t / max(len(ok), 1), len(front),
    "; ".join("block %d: %.3f us, %.3f mJ, %.0f W, noise %.1f %%" % (r["trials"][i]["block"][0], r["trials"][i]["kernel_ns"]["median"] / 1e3,
        r["trials"][i]["energy"]["joules"] * 1e3, r["trials"][i]["energy"]["power_w"], 100 * r["trials"][i]["energy"]["noise"]) for i in front)))
for i, x in ok:
    print("  block %4d: %.3f us, %.3f mJ, %.0f W%s" % (x["block"][0], x["kernel_ns"]["median"] / 1e3, x["energy"]["joules"] * 1e3, x["energy"]["power_w"], " (Pareto)" if i in front else ""))
PY
cat "$W/te-check.txt" | tee -a "$OUTDIR/profile-bench.txt" >>"$LOG"
