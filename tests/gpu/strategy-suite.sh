# Search strategies (tests/gpu/run-part.sh strategy): tests/gpu/strategy-sweeps.sh, six
# exhaustive sweeps of recorded kernels, then every sweep replayed with `tune --simulate` for
# STRATEGY_SEEDS (default 20) seeds of random, annealing and tpe (tests/gpu/compare-strategies.py).
# Figures: per strategy, the worst and the median over sweeps of the fraction of the measurable
# space measured until a configuration within 2 % of the sweep's best; goal for tpe and
# annealing: the worst <= 0.10 (random has none). Also $OUTDIR/strategies.txt.
SEEDS=${STRATEGY_SEEDS:-20}
echo "== search strategies (tests/gpu/strategy-sweeps.sh, $SEEDS seeds)" | tee -a "$LOG"
note_cmd bash tests/gpu/strategy-sweeps.sh "$RR" "$SEEDS"
OUT="$W/strategies" STRATEGIES_JSON="$W/strategies.json" timeout 320 bash tests/gpu/strategy-sweeps.sh "$RR" "$SEEDS" >"$W/strategies.txt" 2>&1; rc=$?
cat "$W/strategies.txt" | tee -a "$OUTDIR/strategies.txt" >>"$LOG"
py "$W/strategies.json" "$rc" <<'PY' | tee -a "$LOG"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    r = {"sweeps": [], "summary": {}, "tolerances": [0.01, 0.02, 0.05]}
check("strategy-sweeps.sh: six sweeps simulated for every strategy (exit %s)" % sys.argv[2],
      sys.argv[2] == "0" and len({s["sweep"] for s in r["sweeps"]}) == 6)
k = r["tolerances"].index(0.02)
for strategy, goal in (("tpe", 0.10), ("annealing", 0.10), ("random", None)):
    s = r["summary"].get(strategy)
    figure("tune", "search strategy %s: fraction of the space measured until within 2 %% of the best, worst of 6 sweeps" % strategy,
           s["worst"][k] if s else None, "<=" if goal else "-", goal, unit="",
           detail=("%d seeds each" % r.get("seeds", 0)) if s else "no simulation")
    if s:
        figure("tune", "search strategy %s: the same, median of 6 sweeps" % strategy, s["median"][k], unit="")
PY
