# Several GPUs (tests/gpu/run-part.sh multi-gpu; needs two GPUs): the same adaptive sweep on one
# GPU, then on all, in the same run; then tests/gpu/scaling.sh: an exhaustive sweep of at least
# 30 s on one GPU against two (goal: >= 1.9x wall), and the sweep as two Slurm-style parts at
# once, one per GPU, merged equal to the one-GPU run. Figures: the speed-ups.
GOAL_DEVICES_SWEEP=${GOAL_DEVICES_SWEEP:-1.5}
build_harness || return 0
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "== tune on $NGPU GPUs" | tee -a "$LOG"
ALL=$(seq -s, 0 $((NGPU - 1)))
py "$RR" "$SAXPY" "$W" "$ALL" "$GOAL_DEVICES_SWEEP" <<'PY' | tee -a "$LOG" "$OUTDIR/tune-multi.txt"
import json, os, subprocess, sys, time
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check, note
rr, saxpy, w, devices, goal = sys.argv[1:6]
ndev = len(devices.split(","))
res = {}
for label, devs in [("1 GPU", "0"), ("%d GPUs" % ndev, devices)]:
    out = "%s/multi-%s.json" % (w, devs.replace(",", "_"))
    cmd = [rr, "tune", saxpy, "--grid", "16..4096*2", "--block", "32..1024*2", "--devices", devs, "--json-out", out]
    note(cmd)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    wall = time.perf_counter() - t0
    try:
        r = json.load(open(out))
    except (OSError, ValueError) as e:
        print("tune --devices %s wrote no report (exit %d): %r %s" % (devs, p.returncode, e, p.stderr[-300:]))
        continue
    used = sorted({t.get("device") for t in r["trials"] if "device" in t})
    res[label] = (len(r["trials"]) / wall, r["configs_per_s"], used)
    print("tune on %s (devices %s used %s): %d configurations (adaptive, cold), %.2f s wall, %.1f configs/s in the sweep, %.1f configs/s wall; best %s" % (
        label, devs, used, len(r["trials"]), wall, r["configs_per_s"], len(r["trials"]) / wall, (r.get("best") or {}).get("block")))
many = "%d GPUs" % ndev
if "1 GPU" in res and many in res:
    (a1, s1, _), (a2, s2, used) = res["1 GPU"], res[many]
    print("speedup from %s: %.2fx in the sweep, %.2fx wall" % (many, s2 / s1, a2 / a1))
    check("tune --devices %s: every GPU measured configurations (used %s)" % (devices, used), used == list(range(ndev)))
    figure("multi-gpu", "tune --devices on %d GPUs against one, in the sweep (adaptive, cold)" % ndev, s2 / s1, ">=", goal,
           unit="x", measured=s2, measured_unit="configurations/s", limit="one GPU", limit_value=s1,
           limit_unit="configurations/s")
    figure("multi-gpu", "tune --devices on %d GPUs against one, wall (engine start included)" % ndev, a2 / a1, unit="x",
           measured=a2, measured_unit="configurations/s", limit="one GPU", limit_value=a1, limit_unit="configurations/s")
else:
    figure("multi-gpu", "tune --devices on %d GPUs against one, in the sweep (adaptive, cold)" % ndev, None, ">=", goal,
           unit="x", detail="sweeps measured: %s" % sorted(res))
PY

echo "== two GPUs against one, a sweep of 30 s or more (tests/gpu/scaling.sh)" | tee -a "$LOG"
rm -f "$OUTDIR/scaling-figures.json"
note_cmd bash tests/gpu/scaling.sh "$RR" "$OUTDIR"
bash tests/gpu/scaling.sh "$RR" "$OUTDIR" >"$OUTDIR/scaling.txt" 2>&1; rc=$?
cat "$OUTDIR/scaling.txt" >>"$LOG"
py "$OUTDIR/scaling-figures.json" "$rc" "$(tail -n 3 "$OUTDIR/scaling.txt" | tr '\n' ' ')" <<'PY' | tee -a "$LOG"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
try:
    f = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    figure("multi-gpu", "two GPUs against one, sweep of 30 s or more, wall", None, ">=", 1.9, unit="x",
           detail="scaling.sh exit %s, no figures (%r): %s" % (sys.argv[2], e, sys.argv[3]))
    sys.exit(0)
check("scaling: the one-GPU sweep lasts 30 s or more (%.1f s)" % f["one_wall_s"], f["one_wall_s"] >= 30)
check("scaling: both GPUs measured configurations (used %s)" % f["devices_used"], f["devices_used"] == [0, 1])
check("scaling: two Slurm-style parts merged equal the one-GPU run row for row", f["merged_equal"] and f["merge_rc"] in (0, 1))
figure("multi-gpu", "two GPUs against one, exhaustive sweep of 30 s or more, wall (engine start included)",
       f["one_wall_s"] / f["two_wall_s"], ">=", 1.9, unit="x", measured=f["two_wall_s"], measured_unit="s",
       limit="one GPU", limit_value=f["one_wall_s"], limit_unit="s",
       detail="%d configurations x %d cold samples" % (f["configurations"], f["samples"]))
figure("multi-gpu", "two GPUs against one, in the sweep", f["one_sweep_s"] / f["two_sweep_s"], unit="x",
       measured=f["two_sweep_s"], measured_unit="s", limit="one GPU", limit_value=f["one_sweep_s"], limit_unit="s")
figure("multi-gpu", "two Slurm-style parts at once, one GPU each, against one GPU, wall", f["one_wall_s"] / f["parts_wall_s"],
       unit="x", measured=f["parts_wall_s"], measured_unit="s", limit="one GPU", limit_value=f["one_wall_s"], limit_unit="s")
PY
