# The launch storm (tests/gpu/run-part.sh storm): the recorder loaded and recording nothing, both
# ways it sees launches, against the plain program. A storm's time moves by up to a third between
# identical runs on the GPU machine (a virtual machine), far more than the cost measured: many
# short interleaved rounds, the median of the paired ratios and its 95 % bootstrap interval
# (tests/gpu/probes/storm.py); a figure fails only when its whole interval misses the goal.
# Goals: launch-bound (200 000 launches of a ~3 us kernel, 31 rounds) <= 1.05 x plain;
# GPU-bound (50 000 launches of a ~20 us kernel, 5 rounds) <= 1.02 x plain. Where the time
# goes: tests/gpu/probes/storm-where.sh. Also $OUTDIR/storm.txt.
echo "== recorder: launch-storm overhead" | tee -a "$LOG"
build_sample bench_record
J="$W/storm"
{
  echo "launch-bound: 200000 launches of a ~3 us kernel, recorder loaded and recording nothing, 31 interleaved rounds"
  STORM_JSON="$J.launch" STORM_PROGRESS=1 python3 -u tests/gpu/probes/storm.py 31 "$W/samples/bench_record" 200000 4096 plain=: \
    "rr-tui=:$RR record --dir $W/storm --overwrite --kernels ^nothing$ --" \
    "rr-tui-mixed=:$RR record --dir $W/storm --overwrite --hooks mixed --kernels ^nothing$ --"
  echo "GPU-bound: 50000 launches of a ~20 us kernel, 5 interleaved rounds"
  STORM_JSON="$J.gpu" STORM_PROGRESS=1 python3 -u tests/gpu/probes/storm.py 5 "$W/samples/bench_record" 50000 8388608 plain=: \
    "rr-tui=:$RR record --dir $W/storm --overwrite --kernels ^nothing$ --"
} 2>&1 | tee -a "$LOG" "$OUTDIR/storm.txt"
py "$J.launch" "$J.gpu" <<'PY' | tee -a "$LOG" "$OUTDIR/storm.txt"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure


def rows(path):
    try:
        return [json.loads(l) for l in open(path) if l.strip()]
    except (OSError, ValueError):
        return []


def one(rs, metric, label):
    return next((r for r in rs if r["metric"] == metric and r["label"] == label), None)


launch, gpu = rows(sys.argv[1]), rows(sys.argv[2])
for rs, label, what, goal in ((launch, "rr-tui", "launch-bound: 200 000 launches of a ~3 µs kernel, 31 rounds", 1.05),
                              (launch, "rr-tui-mixed", "launch-bound, --hooks mixed (the previous default)", None),
                              (gpu, "rr-tui", "GPU-bound: 50 000 launches of a ~20 µs kernel, 5 rounds", 1.02)):
    r = one(rs, "seconds", label)
    name = "recorder loaded, recording nothing, %s: wall time against plain" % what
    if not r:
        figure("storm", name, None, "<=" if goal else "-", goal, unit="x", detail="storm.py gave no ratio for %s" % label)
        continue
    figure("storm", name, r["ratio"], "<=" if goal else "-", goal, r["lo"], r["hi"], unit="x",
           interval="95 % bootstrap interval of the median paired ratio", measured=r["median_s"], measured_unit="s",
           limit="plain program (median)", limit_value=r["plain_median_s"], limit_unit="s",
           detail="%+.0f ns per launch over %d runs" % (r["ns_per_launch"], r["runs"]))
    c = one(rs, "cpu_seconds", label)
    if c:
        figure("storm", name.replace("wall time", "CPU time of the launching thread"), c["ratio"], "-", None, c["lo"], c["hi"],
               unit="x", interval="95 % bootstrap interval", measured=c["median_s"], measured_unit="s",
               limit="plain program (median)", limit_value=c["plain_median_s"], limit_unit="s")
PY
