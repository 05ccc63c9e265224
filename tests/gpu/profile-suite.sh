# Profiles (tests/gpu/run-part.sh profile; needs Nsight Compute): a program with a memory-bound
# and a compute-bound kernel is recorded; `rr-tui profile` must call the first memory-bound with
# the DRAM bytes its arguments imply (within 5 %: a figure) and the second compute-bound (read
# from `profile --json`); another configuration and section; the explorer's `profile --events`;
# a missing ncu named. (A vs B profiles: profile-ab-suite.sh; energy: energy-suite.sh.) Figures
# go to $OUTDIR/profile-bench.txt; ncu's raw pages to $OUTDIR/ncu-*.csv.
echo "== profile" | tee -a "$LOG"
record_profile_kernels || return 0
note_cmd "$RR" profile "$TRIAD" --json
t0=$(date +%s.%N)
timeout 300 "$RR" profile "$TRIAD" --json >"$W/p-triad.json" 2>>"$LOG" </dev/null; rc=$?
t1=$(date +%s.%N)
note_cmd "$RR" profile "$FMA"
timeout 300 "$RR" profile "$FMA" >"$W/p-fma.txt" 2>&1 </dev/null; cat "$W/p-fma.txt" >>"$LOG"
note_cmd "$RR" profile "$FMA" --json
timeout 300 "$RR" profile "$FMA" --json >"$W/p-fma.json" 2>>"$LOG" </dev/null; rcf=$?
ncu --import "${TRIAD%.json}.ncu-rep" --csv --page raw --print-units base >"$OUTDIR/ncu-triad.csv" 2>&1
py "$W/p-triad.json" "$t0" "$t1" "$rc" "$W/p-fma.json" "$rcf" <<'PY' | tee -a "$LOG" "$OUTDIR/profile-bench.txt"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
name = "profile of the triad: DRAM bytes against the bytes its arguments imply (3 x 512 MiB)"
implied = 3 * (1 << 27) * 4
try:
    r = json.load(open(sys.argv[1])); p = r["profile"]; t = float(sys.argv[3]) - float(sys.argv[2])
    dram = p["dram_read_bytes"] + p["dram_write_bytes"]
    print("profile of rr_triad: %.2f s wall (ncu included); duration %.1f us; DRAM %.1f MB read + %.1f MB written = %.4f x the %d bytes its arguments imply; SOL memory %.1f %%, compute %.1f %%; roofline %s-bound, %.1f %% of the roof; missing: %s" % (
        t, p["duration_ns"] / 1e3, p["dram_read_bytes"] / 1e6, p["dram_write_bytes"] / 1e6, dram / implied, implied,
        p["memory_throughput_pct"], p["sm_throughput_pct"], p["roofline"]["bound"], 100 * p["roofline"]["of_roof"], p["missing"]))
    check("profile: the triad is memory-bound (roofline: %s)" % p["roofline"]["bound"], p["roofline"]["bound"] == "memory")
    figure("profile", name, dram / implied, "in", "0.95..1.05", unit="x", measured=dram / 1e6, measured_unit="MB",
           limit="bytes the arguments imply", limit_value=implied / 1e6, limit_unit="MB")
    figure("profile", "one `rr-tui profile` of the triad, wall time (ncu included)", t, unit="s")
except (OSError, ValueError, KeyError, TypeError) as e:
    check("profile: the triad is memory-bound", False, "exit %s, no profile: %r" % (sys.argv[4], e))
    figure("profile", name, None, "in", "0.95..1.05", unit="x", detail="exit %s: %r" % (sys.argv[4], e))
try:
    f = json.load(open(sys.argv[5]))["profile"]
    print("profile of rr_fma_chain: duration %.1f us; SM %.1f %%, memory %.1f %%; roofline %s-bound, %.1f %% of the roof" % (
        f["duration_ns"] / 1e3, f["sm_throughput_pct"], f["memory_throughput_pct"], f["roofline"]["bound"], 100 * f["roofline"]["of_roof"]))
    check("profile: the FMA chain is compute-bound (roofline: %s)" % f["roofline"]["bound"], f["roofline"]["bound"] == "compute")
except (OSError, ValueError, KeyError, TypeError) as e:
    check("profile: the FMA chain is compute-bound", False, "exit %s, no profile: %r" % (sys.argv[6], e))
PY
grep -E "roofline|speed of light|occupancy" "$W/p-fma.txt" | tee -a "$OUTDIR/profile-bench.txt" >/dev/null
expect "profile: a tuned configuration, another section" 0 "Profile of rr_fma_chain.*\(grid 1024×1×1, block 1024×1×1\)" -- "$RR" profile "$FMA" --grid 1024 --block 1024 --section MemoryWorkloadAnalysis --output-dir "$W"
# What the explorer's profile view runs: progress events, the profile, done.
note_cmd "$RR" profile "$FMA" --grid 1024 --block 1024 --events --run-id 7
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
expect "profile: a missing ncu is named" 2 "no such file" -- "$RR" profile "$FMA" --ncu /nonexistent/ncu
