# The tuner's benchmark (tests/gpu/run-part.sh tune-bench): configurations per second of one
# engine process (a small-kernel sweep and a wide one, 10 hot samples each), a process per
# configuration (Mneme's way) on 12 of the small-kernel configurations in the same run, and the
# timing noise of cold, hot and adaptive samples. Figures with goals: configurations per second
# (>= GOAL_TUNE_CPS) and tune against a process per configuration (>= GOAL_TUNE_VS_PROCESS).
# Also $OUTDIR/tune-bench.txt.
GOAL_TUNE_CPS=${GOAL_TUNE_CPS:-100}
GOAL_TUNE_VS_PROCESS=${GOAL_TUNE_VS_PROCESS:-10}
build_harness || return 0
make_bench_record || return 0
echo "== tune benchmark" | tee -a "$LOG"
py "$RR" "$SAXPY" "$BENCH" "$W" "$GOAL_TUNE_CPS" "$GOAL_TUNE_VS_PROCESS" <<'PY' | tee -a "$LOG" "$OUTDIR/tune-bench.txt"
import json, os, statistics, subprocess, sys, time
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check, note
rr, saxpy, bench, w = sys.argv[1:5]
goal_cps, goal_vs = float(sys.argv[5]), float(sys.argv[6])
def sweep(name, grids, blocks):
    out = w + "/bench-%s.json" % name.replace(" ", "-")
    cmd = [rr, "tune", saxpy, "--grid", ",".join(map(str, grids)), "--block", ",".join(map(str, blocks)),
           "--samples", "10", "--hot", "--json-out", out]
    note(cmd)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    wall = time.perf_counter() - t0
    try:
        r = json.load(open(out))
    except (OSError, ValueError) as e:
        print("tune (%s) wrote no report (exit %d): %r %s" % (name, p.returncode, e, p.stderr[-300:]))
        figure("tune", "configurations per second in one engine, %s (10 hot samples each)" % name, None, ">=", goal_cps,
               unit="/s")
        return None, None
    n = len(r["trials"])
    ok = sum(t["status"] == "ok" for t in r["trials"])
    k = sorted(t["kernel_ns"]["median"] for t in r["trials"] if t["status"] == "ok")
    eng = statistics.median([t["engine_ms"] for t in r["trials"] if "engine_ms" in t] or [float("nan")])
    ver = statistics.median([t["verify_ms"] for t in r["trials"] if "verify_ms" in t] or [float("nan")])
    print("tune (%s): %d configurations, 10 samples each, %d verified; %.1f configs/s in the sweep (engine start %.2f s; %.1f configs/s over the %.2f s wall); kernel medians %.1f-%.1f us; per configuration in the engine: median %.2f ms, of which read-back + verify %.2f ms" % (
        name, n, ok, r["configs_per_s"], r["engine_start_s"], n / wall, wall, k[0] / 1e3 if k else 0, k[-1] / 1e3 if k else 0, eng, ver))
    check("tune benchmark (%s): every configuration verified (%d of %d)" % (name, ok, n), n > 0 and ok == n)
    figure("tune", "configurations per second in one engine, %s (10 hot samples each)" % name,
           r["configs_per_s"], ">=", goal_cps, unit="/s",
           detail="%d configurations, engine start %.2f s" % (n, r["engine_start_s"]))
    figure("tune", "configurations per second over the wall, %s (engine start included)" % name, n / wall, unit="/s")
    return r["configs_per_s"], n / wall


small = sweep("small kernel", [256, 512, 1024, 2048, 4096], [128, 256, 512, 1024])
wide = sweep("wide space", [16, 32, 64, 128, 256, 512, 1024, 2048], [32, 64, 128, 256, 512, 1024])
# A process per configuration (Mneme's way), on 12 small-kernel configurations, in the same run.
cfgs = [(g, b) for g in [256, 512, 1024] for b in [128, 256, 512, 1024]]
t0 = time.perf_counter()
failed = 0
for g, b in cfgs:
    cmd = [rr, "replay", saxpy, "--grid", "%dx1x1" % g, "--block", "%dx1x1" % b, "--repetitions", "10", "--verify"]
    note(cmd)
    failed += subprocess.run(cmd, capture_output=True, timeout=120).returncode != 0
per = (time.perf_counter() - t0) / len(cfgs)
check("a process per configuration: every replay verified (%d of %d)" % (len(cfgs) - failed, len(cfgs)), failed == 0)
if small[0]:
    print("process per configuration: %.3f s each (%.1f configs/s); tune on the small kernel is %.0fx faster in the sweep, %.0fx counting its engine start" % (
        per, 1 / per, small[0] * per, small[1] * per))
    figure("tune", "tune against a process per configuration (in the sweep)", small[0] * per, ">=", goal_vs, unit="x",
           measured=small[0], measured_unit="configurations/s", limit="a process per configuration",
           limit_value=1 / per, limit_unit="configurations/s")
    figure("tune", "tune against a process per configuration (engine start included, 20-configuration sweep)",
           small[1] * per, unit="x", measured=small[1], measured_unit="configurations/s",
           limit="a process per configuration", limit_value=1 / per, limit_unit="configurations/s")
else:
    figure("tune", "tune against a process per configuration (in the sweep)", None, ">=", goal_vs, unit="x",
           detail="the small-kernel sweep gave no figure")


def noise(args, desc=bench):
    cmd = [rr, "replay", desc, "--json"] + args
    note(cmd)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240).stdout
    s = [json.loads(l) for l in out.splitlines() if '"summary"' in l][0]
    k = s["kernel_ns"]
    return k["median"], k["stddev"] / k["mean"] * 100, k["count"], s.get("discarded", 0)


for label, args in [("cold, 50 samples", ["--cold", "--repetitions", "50"]), ("hot, 50 samples", ["--hot", "--repetitions", "50"]),
                    ("cold, adaptive 0.5 %", ["--cold", "--max-noise", "0.5"])]:
    try:
        m, rsd, c, d = noise(args)
    except (IndexError, KeyError, ValueError, subprocess.SubprocessError) as e:
        figure("tune", "timing noise (RSD), 1 GiB saxpy, %s" % label, None, unit="%", detail=repr(e))
        continue
    print("noise on the %.0f us kernel (%s): RSD %.3f %% over %d samples, %d throttled discarded" % (m / 1e3, label, rsd, c, d))
    figure("tune", "timing noise (RSD), 1 GiB saxpy, %s" % label, rsd, unit="%",
           detail="kernel %.0f µs, %d samples, %d throttled discarded" % (m / 1e3, c, d))
for label, args in [("cold, 50 samples", ["--cold", "--repetitions", "50"]), ("hot, 50 samples", ["--hot", "--repetitions", "50"])]:
    try:
        m, rsd, c, d = noise(args + ["--grid", "64x1x1", "--block", "128x1x1"], saxpy)
    except (IndexError, KeyError, ValueError, subprocess.SubprocessError) as e:
        figure("tune", "timing noise (RSD), saxpy grid 64 block 128, %s" % label, None, unit="%", detail=repr(e))
        continue
    print("noise on the %.1f us kernel (saxpy, grid 64, block 128; %s): RSD %.3f %% over %d samples" % (m / 1e3, label, rsd, c))
    figure("tune", "timing noise (RSD), saxpy grid 64 block 128, %s" % label, rsd,
           unit="%", detail="kernel %.1f µs, %d samples" % (m / 1e3, c))
PY
