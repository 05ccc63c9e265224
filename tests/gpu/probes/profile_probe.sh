#!/usr/bin/env bash
# What Nsight Compute and NVML give on the GPU machine: ncu's sets and sections, the raw metric
# names of one profiled repetition, and how finely NVML's total-energy counter moves.
#   bash tests/gpu/probes/profile_probe.sh RR-TUI DESCRIPTOR
set -u
RR=$1 J=$2 O=${OUT:-/tmp/profile-probe}
mkdir -p "$O"
ncu --version >"$O/ncu-version.txt" 2>&1
ncu --list-sets >"$O/sets.txt" 2>&1
ncu --list-sections >"$O/sections.txt" 2>&1
for set in basic full; do
  /usr/bin/time -f "%e s wall" ncu --nvtx --nvtx-include "regex:rr-tui.rep.1/" --set $set -f -o "$O/p-$set" "$RR" replay "$J" --repetitions 2 >"$O/run-$set.txt" 2>&1
  ncu --import "$O/p-$set.ncu-rep" --csv --page raw >"$O/raw-$set.csv" 2>&1
  ncu --import "$O/p-$set.ncu-rep" --csv --page details >"$O/details-$set.csv" 2>&1
done
ncu --import "$O/p-basic.ncu-rep" --page raw --print-units base --csv >"$O/raw-base.csv" 2>&1
ldconfig -p | grep -i nvidia-ml >"$O/nvml.txt" 2>&1
python3 - "$RR" "$J" >>"$O/nvml.txt" 2>&1 <<'PY'
import ctypes, subprocess, sys, time
rr, j = sys.argv[1:3]
n = ctypes.CDLL("libnvidia-ml.so.1")
assert n.nvmlInit_v2() == 0
h = ctypes.c_void_p(); n.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
e = ctypes.c_ulonglong()
p = subprocess.Popen([rr, "replay", j, "--repetitions", "20000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.5)
vals, t0 = [], time.perf_counter()
while time.perf_counter() - t0 < 1.0:
    n.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e)); vals.append((time.perf_counter() - t0, e.value))
p.kill()
changes = [(t, v) for (t, v), (_, w) in zip(vals[1:], vals) if v != w]
print("energy polls", len(vals), "changes", len(changes), "first", changes[:8])
if len(changes) > 2:
    dt = [(b[0] - a[0]) * 1e3 for a, b in zip(changes, changes[1:])]; dv = [b[1] - a[1] for a, b in zip(changes, changes[1:])]
    print("update interval ms: min %.2f median %.2f max %.2f; step mJ median %d" % (min(dt), sorted(dt)[len(dt)//2], max(dt), sorted(dv)[len(dv)//2]))
w = ctypes.c_uint(); n.nvmlDeviceGetPowerUsage(h, ctypes.byref(w)); print("power mW", w.value)
PY
