#!/usr/bin/env bash
# Two GPUs against one for a sweep of at least 30 s (issue 17, point 5): the same exhaustive
# sweep of the bundled saxpy with --devices 0, then --devices 0,1, wall clock from the command's
# start to its end (engine start included); then the sweep as two Slurm-style parts run at the
# same time, one per GPU (CUDA_VISIBLE_DEVICES), joined by `tune merge`, which must hold the
# single run's configurations in the same order with the same outcomes.
# Usage: bash tests/gpu/scaling.sh RR_TUI OUTDIR   (run by the suite's multi-gpu part)
# Prints "scaling: PASS …" or "scaling: FAIL …" lines; exit status 1 on a failure; the figures
# also go to OUTDIR/scaling-figures.json.
set -u
RR=$(realpath "$1"); OUTD=$2
mkdir -p "$OUTD"
W=$(mktemp -d)
DESC=$(ls record-fixtures/llvm-two-kernels/8683979482637550046_13526365365894479501.json)
python3 - "$RR" "$DESC" "$W" "$OUTD" <<'PY'
import json, os, subprocess, sys, time
rr, desc, w, outd = sys.argv[1:5]
axes = ["--grid", "1..64", "--block", "32..1024*2", "--cold"]
def tune(samples, devices, tag, extra=(), env=None):
    out = "%s/%s.json" % (w, tag)
    t0 = time.perf_counter()
    p = subprocess.run([rr, "tune", desc, *axes, "--samples", str(samples), "--devices", devices,
                        "--json-out", out, *extra], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit("scaling: FAIL tune %s exited %d: %s" % (tag, p.returncode, p.stderr[-400:]))
    return wall, json.load(open(out))
# Calibrate: samples per configuration for a one-GPU sweep of about 40 s.
wall, r = tune(20, "0", "calibrate")
sweep = len(r["trials"]) / max(r["configs_per_s"], 1e-9)
samples = max(20, min(20000, int(20 * 40.0 / max(sweep, 1e-3))))
one_wall, one = tune(samples, "0", "one")
two_wall, two = tune(samples, "0,1", "two")
used = sorted({t.get("device") for t in two["trials"] if "device" in t})
sweep1 = len(one["trials"]) / one["configs_per_s"]
sweep2 = len(two["trials"]) / two["configs_per_s"]
line = ("scaling: %d configurations x %d samples (cold); one GPU %.1f s wall (sweep %.1f s, engine start %.2f s); "
        "two GPUs %.1f s wall (sweep %.1f s, engine start %.2f s, devices used %s): %.2fx wall, %.2fx in the sweep" % (
    len(one["trials"]), samples, one_wall, sweep1, one["engine_start_s"], two_wall, sweep2, two["engine_start_s"], used,
    one_wall / two_wall, sweep1 / sweep2))
print(line)
# Where the two-GPU run's time went, GPU by GPU: configurations, engine time per configuration.
for dev in used:
    mine = [t for t in two["trials"] if t.get("device") == dev and t.get("engine_ms")]
    ms = sorted(t["engine_ms"] for t in mine)
    print("scaling:   GPU %s: %d configurations, engine time per configuration median %.1f ms, total %.1f s" % (
        dev, len(mine), ms[len(ms) // 2] if ms else 0, sum(ms) / 1e3))
ms1 = sorted(t["engine_ms"] for t in one["trials"] if t.get("engine_ms"))
print("scaling:   one GPU: engine time per configuration median %.1f ms, total %.1f s; elapsed %.1f s" % (
    ms1[len(ms1) // 2] if ms1 else 0, sum(ms1) / 1e3, one["elapsed_s"]))
ok = one_wall >= 30 and one_wall / two_wall >= 1.9 and used == [0, 1]
# The parts of a Slurm array, one per GPU at the same time, then merged.
procs = []
t0 = time.perf_counter()
for k in (1, 2):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(k - 1))
    procs.append(subprocess.Popen([rr, "tune", desc, *axes, "--samples", str(samples), "--shard", "%d/2" % k,
                                   "--json-out", "%s/part%d.json" % (w, k)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, env=env))
errs = [p.communicate()[1] for p in procs]
parts_wall = time.perf_counter() - t0
m = subprocess.run([rr, "tune", "merge", "%s/part1.json" % w, "%s/part2.json" % w, "--json-out", "%s/merged.json" % w],
                   capture_output=True, text=True)
merged = json.load(open("%s/merged.json" % w)) if m.returncode in (0, 1) else {"trials": []}
key = lambda r: [(t["grid"], t["block"], t["shared_mem"], t["status"], bool(t.get("recorded"))) for t in r["trials"]]
same = key(merged) == key(one)
print("scaling: two Slurm-style parts at once, one GPU each: %.1f s wall (%.2fx the one-GPU run); merged %d rows, %s the one-GPU run's row for row%s" % (
    parts_wall, one_wall / parts_wall, len(merged["trials"]), "equal to" if same else "NOT equal to",
    "" if m.returncode in (0, 1) else "; merge failed: " + m.stderr[-300:]))
for tag, r in (("one", one), ("two", two), ("merged", merged)):
    json.dump(r, open("%s/scaling-%s.json" % (outd, tag), "w"))
# The figures, for the suite's multi-gpu part.
json.dump({"configurations": len(one["trials"]), "samples": samples, "one_wall_s": one_wall, "two_wall_s": two_wall,
           "one_sweep_s": sweep1, "two_sweep_s": sweep2, "parts_wall_s": parts_wall, "devices_used": used,
           "merged_equal": same, "merge_rc": m.returncode, "ok": bool(ok and same)},
          open("%s/scaling-figures.json" % outd, "w"))
print("scaling: %s" % ("PASS" if ok and same else "FAIL (goal: one-GPU sweep >= 30 s, >= 1.9x wall on two GPUs, both used; parts merged equal)"))
sys.exit(0 if ok and same else 1)
PY
