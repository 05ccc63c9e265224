# The Ray sweep (tests/gpu/run-part.sh ray; needs two GPUs, Ray and the rr_tui package: carry
# .whl/, see docs/gpu-suite.md): tests/gpu/ray-scaling.sh, a cluster of a head and two one-GPU
# nodes, the same exhaustive sweep on one engine and on two. Goal: >= 1.9x wall, rows equal.
echo "== Ray: two one-GPU nodes against one (tests/gpu/ray-scaling.sh)" | tee -a "$LOG"
rm -f "$OUTDIR/ray-figures.json"
note_cmd bash tests/gpu/ray-scaling.sh "$RR" "$OUTDIR"
bash tests/gpu/ray-scaling.sh "$RR" "$OUTDIR" >"$OUTDIR/ray.txt" 2>&1; rc=$?
grep '^ray-scaling' "$OUTDIR/ray.txt" >>"$LOG"
py "$OUTDIR/ray-figures.json" "$rc" "$(grep '^ray-scaling' "$OUTDIR/ray.txt" | tail -n 2 | tr '\n' ' ')" <<'PY' | tee -a "$LOG"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
try:
    f = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    figure("multi-gpu", "Ray: two one-GPU nodes against one, wall", None, ">=", 1.9, unit="x",
           detail="ray-scaling.sh exit %s, no figures (%r): %s" % (sys.argv[2], e, sys.argv[3]))
    sys.exit(0)
check("Ray: a cluster of 2 one-GPU nodes (%g GPUs)" % f["gpus"], f["gpus"] == 2)
check("Ray: the one-engine sweep lasts 30 s or more (%.1f s)" % f["one_wall_s"], f["one_wall_s"] >= 30)
check("Ray: both engines measured configurations (used %s)" % f["engines_used"], f["engines_used"] == [0, 1])
check("Ray: the two-engine rows equal the one-engine rows", f["rows_equal"])
figure("multi-gpu", "Ray: two one-GPU nodes against one, exhaustive sweep, wall", f["one_wall_s"] / f["two_wall_s"], ">=", 1.9,
       unit="x", measured=f["two_wall_s"], measured_unit="s", limit="one engine", limit_value=f["one_wall_s"], limit_unit="s",
       detail="%d configurations x %d cold samples" % (f["configurations"], f["samples"]))
figure("multi-gpu", "Ray: two engines against one, in the sweep", f["one_sweep_s"] / f["two_sweep_s"], unit="x",
       measured=f["two_sweep_s"], measured_unit="s", limit="one engine", limit_value=f["one_sweep_s"], limit_unit="s")
figure("multi-gpu", "Ray: the session's first sweep (actors started), engine start", f["first_engine_start_s"], unit="s")
PY
