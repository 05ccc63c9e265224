# Energy (tests/gpu/run-part.sh energy): the compute-bound FMA chain of profile_kernels.cu
# recorded; `replay --energy` at two block sizes (the grid covering the same threads): the
# energy per execution with noise under 5 % (a figure each), at least 20 counter windows,
# verified; a tune with --objective energy keeps both time and energy and its Pareto front holds
# the fastest and the most frugal configurations. Figures also go to $OUTDIR/energy-bench.txt.
echo "== energy" | tee -a "$LOG"
record_profile_kernels || return 0
# Energy at two block sizes (grid adjusted to cover the same threads).
for cfg in "8192 128" "1024 1024"; do
  read -r grid block <<<"$cfg"
  note_cmd "$RR" replay "$FMA" --grid "$grid" --block "$block" --energy --verify --json
  timeout 300 "$RR" replay "$FMA" --grid "$grid" --block "$block" --energy --verify --json >"$W/e-$block.jsonl" 2>>"$LOG"
done
py "$W/e-128.jsonl" "$W/e-1024.jsonl" <<'PY' | tee -a "$LOG" "$OUTDIR/energy-bench.txt"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
for path in sys.argv[1:]:
    threads = path.split("e-")[-1].split(".")[0]
    name = "replay --energy of the FMA chain, %s threads a block: noise of the energy per execution" % threads
    try:
        ev = [json.loads(l) for l in open(path) if l.strip()]
        e = [x for x in ev if x.get("event") == "energy"][0]
        v = [x for x in ev if x.get("event") == "verify"][0]
    except (OSError, ValueError, IndexError) as err:
        figure("energy", name, None, "<", 5, unit="%", detail="no energy or verify event: %r" % err)
        continue
    print("energy of rr_fma_chain (%s threads a block): %.3f mJ per execution, %.1f W x %.1f us; noise %.2f %% over %d windows (%.2f s, counter every %.0f ms, polled every %.2f ms); idle %.1f W, limit %.0f W; SM %.0f MHz, memory %.0f MHz" % (
        threads, e["joules"] * 1e3, e["power_w"], e["execution_ns"] / 1e3, 100 * e["noise"],
        e["windows"], e["seconds"], e["counter_interval_ms"], e["poll_ms"], e["idle_power_w"], e["power_limit_w"], e["sm_clock_mhz"]["median"], e["memory_clock_mhz"]["median"]))
    check("replay --energy, %s threads a block: verified, %d counter windows (>= 20)" % (threads, e["windows"]),
          v.get("passed") is True and e["windows"] >= 20, "verified %s" % v.get("passed"))
    figure("energy", name, 100 * e["noise"], "<", 5, unit="%", measured=e["joules"] * 1e3, measured_unit="mJ",
           detail="%.1f W x %.1f µs over %d windows" % (e["power_w"], e["execution_ns"] / 1e3, e["windows"]))
PY
# A sweep by energy: time and energy per configuration, the Pareto front holding the fastest
# and the most frugal (block sizes of the FMA chain, the grid covering the recorded threads).
t0=$(date +%s.%N)
note_cmd "$RR" tune "$FMA" --block 64..1024*2 --grid cover --objective energy --samples 20
timeout 300 "$RR" tune "$FMA" --block 64..1024*2 --grid cover --objective energy --samples 20 --json-out "$W/te.json" --csv "$W/te.csv" >"$W/te.txt" 2>&1; rc=$?
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
cat "$W/te-check.txt" | tee -a "$OUTDIR/energy-bench.txt" >>"$LOG"
