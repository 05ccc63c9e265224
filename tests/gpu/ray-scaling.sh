#!/usr/bin/env bash
# The Ray sweep (issue 17, points 3 and 5) on a machine with two GPUs: a Ray cluster of a head
# and two nodes of one GPU each (`ray start`, CUDA_VISIBLE_DEVICES per node), then the same
# exhaustive sweep of the bundled saxpy with `python -m rr_tui.ray` on one engine and on two.
# Wall clock of each call, from the driver connected to the running cluster to the report
# written (engine start included; the actors, started by a first calibrating sweep, are the
# driver's from then on). The two-GPU rows must equal the one-GPU rows.
# Needs Ray and rr_tui importable (the wheels under .whl/: see docs/gpu-suite.md).
# Usage: bash tests/gpu/ray-scaling.sh RR_TUI OUTDIR [SAMPLES]
# Prints "ray-scaling: PASS …" or "ray-scaling: FAIL …"; exit status 1 on a failure; the figures
# also go to OUTDIR/ray-figures.json.
set -u
RR=$(realpath "$1"); OUTD=$2; SAMPLES=${3:-}
mkdir -p "$OUTD"
if ! python3 -c "import ray, rr_tui" 2>/dev/null; then
  echo "ray-scaling: FAIL Ray or rr_tui is not importable (install the wheels under .whl/)"
  exit 1
fi
W=$(mktemp -d)
PORT=6390
RAY="python3 -m ray.scripts.scripts"
export RAY_USAGE_STATS_ENABLED=0
$RAY start --head --port $PORT --num-gpus 0 --num-cpus 2 --include-dashboard=false >"$W/head.log" 2>&1 || { echo "ray-scaling: FAIL ray start --head: $(tail -n 3 "$W/head.log")"; exit 1; }
for g in 0 1; do
  CUDA_VISIBLE_DEVICES=$g $RAY start --address 127.0.0.1:$PORT --num-gpus 1 --num-cpus 4 >"$W/node$g.log" 2>&1 || { echo "ray-scaling: FAIL ray start (GPU $g): $(tail -n 3 "$W/node$g.log")"; $RAY stop >/dev/null 2>&1; exit 1; }
done
DESC=$(ls record-fixtures/llvm-two-kernels/8683979482637550046_13526365365894479501.json)
RR_TUI="$RR" python3 - "$RR" "$DESC" "$W" "$OUTD" "$PORT" "$SAMPLES" <<'PY'
import json, os, sys, time
import ray
import rr_tui.ray as rr_ray
rr, desc, w, outd, port, samples = sys.argv[1:7]
axes = ["--grid", "1..64", "--block", "32..1024*2", "--cold"]
ray.init(address="127.0.0.1:%s" % port, log_to_driver=False)
gpus = ray.cluster_resources().get("GPU", 0)
def sweep(engines, samples, tag):
    out = "%s/%s.json" % (w, tag)
    t0 = time.perf_counter()
    code = rr_ray.tune(desc, *axes, "--samples", str(samples), "--json-out", out, engines=engines, exe=rr)
    wall = time.perf_counter() - t0
    if code not in (0, 1):
        sys.exit("ray-scaling: FAIL rr_tui.ray.tune (%d engine(s)) exited %d" % (engines, code))
    return wall, json.load(open(out))
# Calibrate on both engines: samples per configuration for a one-engine sweep of about 60 s.
# This first sweep also starts the two actors, which the driver keeps for the next sweeps (a
# session pays that once): its engine start is the cold one.
cold_wall, r = sweep(2, 20, "calibrate")
cold_start = r["engine_start_s"]
print("ray-scaling: first sweep of the session (actors started): engine start %.2f s, %.1f s wall" % (r["engine_start_s"], cold_wall))
if not samples:
    s = 2 * len(r["trials"]) / max(r["configs_per_s"], 1e-9)
    samples = max(20, min(20000, int(20 * 60.0 / max(s, 1e-3))))
samples = int(samples)
one_wall, one = sweep(1, samples, "one")
two_wall, two = sweep(2, samples, "two")
key = lambda r: sorted((tuple(t["grid"]), tuple(t["block"]), t["status"]) for t in r["trials"])
used = sorted({t.get("device") for t in two["trials"]})
same = key(one) == key(two)
ratio = one_wall / two_wall
print("ray-scaling: Ray cluster of 2 nodes x 1 GPU (%g GPUs); %d configurations x %d samples (cold): "
      "one engine %.1f s wall (sweep %.1f s, engine start %.2f s), two engines %.1f s wall (sweep %.1f s, engine start %.2f s, engines used %s): "
      "%.2fx wall, %.2fx in the sweep; rows %s" % (
    gpus, len(one["trials"]), samples, one_wall, len(one["trials"]) / one["configs_per_s"], one["engine_start_s"],
    two_wall, len(two["trials"]) / two["configs_per_s"], two["engine_start_s"], used, ratio,
    (len(one["trials"]) / one["configs_per_s"]) / (len(two["trials"]) / two["configs_per_s"]),
    "equal" if same else "NOT equal"))
for tag, r in (("one", one), ("two", two)):
    json.dump(r, open("%s/ray-%s.json" % (outd, tag), "w"))
ok = gpus == 2 and one_wall >= 30 and ratio >= 1.9 and used == [0, 1] and same
# The figures, for the suite's ray part.
json.dump({"gpus": gpus, "configurations": len(one["trials"]), "samples": samples, "one_wall_s": one_wall,
           "two_wall_s": two_wall, "one_sweep_s": len(one["trials"]) / one["configs_per_s"],
           "two_sweep_s": len(two["trials"]) / two["configs_per_s"], "engines_used": used, "rows_equal": same,
           "first_engine_start_s": cold_start, "first_sweep_wall_s": cold_wall, "ok": bool(ok)},
          open("%s/ray-figures.json" % outd, "w"))
print("ray-scaling: %s" % ("PASS" if ok else "FAIL (goal: one-engine sweep >= 30 s, >= 1.9x wall on two, both used, rows equal)"))
sys.exit(0 if ok else 1)
PY
rc=$?
$RAY stop >/dev/null 2>&1
exit $rc
