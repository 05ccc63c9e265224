#!/usr/bin/env python3
"""Write a made-up finished sweep, in the format `rr-tui tune --json-out` writes, for places where
no GPU measures anything: the engine-hub and Ray tests, `tune --simulate`, and the explorer's
tuning screen (`rr-tui SWEEP.json`).

Two forms:

  synthetic_sweep.py OUT.json [GRID_MAX] [ENGINE_MS]
      An exhaustive sweep of the bundled saxpy instance (llvm-two-kernels, rr_saxpy) over grid
      1..GRID_MAX (default 32) x block 32..1024:32: kernel time smooth with its minimum at grid
      24, block 384, and each configuration's engine time ENGINE_MS (what a simulated engine
      paced at 1 takes to answer it).

  synthetic_sweep.py OUT.json --descriptor X.json --list LIST.txt [--axes "TUNE FLAGS"]
                     [--energy] [--relative]
      A sweep of any instance over the configurations `rr-tui tune X.json AXES --list` printed
      into LIST.txt (so the space is the tuner's own, in its order; what a limit skips is listed
      as skipped). The model: time rises away from 128 threads per block, with blocks narrower
      than 16 in x and with idle threads; a configuration launching
      fewer threads than the recorded one fails to verify (a kernel that guards `i < n` leaves
      the rest of its output unwritten). `--energy` adds energy per execution (power rising with
      threads per block), so time and energy disagree and the Pareto front has several points.
      `--axes` is only written into the report's `axes`; `--relative` writes the descriptor's
      path relative to OUT's directory (a file that travels with the repository).

Nothing here was measured: the device is named "synthetic".
"""
import argparse
import json
import math
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DESCRIPTOR = os.path.join(HERE, "..", "..", "record-fixtures", "llvm-two-kernels",
                          "8683979482637550046_13526365365894479501.json")

DEVICE = {"ordinal": 0, "name": "synthetic", "sm": 90, "rated_clock_mhz": 1980.0}
TIMING = {"cold": True, "target": {"max_noise": None, "min_samples": 1, "min_gpu_time": 0.0,
                                   "timeout": 60.0}, "max_samples": 1, "throttle": 0.75}


def stats(x):
    return {"count": 1, "min": x, "median": x, "mean": x, "stddev": 0.0, "max": x}


def report(descriptor, kernel, recorded, trials, axes=None, energy=False):
    """The report around `trials`, with what `tune` writes beside them (best and speed-up are
    left for the reader to work out, as `tune --resume` and the explorer do)."""
    r = {
        "tool": "rr-tui tune", "version": "0.2.0", "descriptor": descriptor, "kernel": kernel,
        "devices": [DEVICE], "strategy": "exhaustive", "seed": 0, "budget": None,
        "time_limit_s": None, "timing": TIMING, "verify": "bytes",
        "axes": axes or {"grid": None, "block": None, "shared_mem": None, "registers": None},
        "space_size": len(trials), "recorded": recorded, "trials": trials, "best": None,
        "speedup": None, "elapsed_s": 0.0, "configs_per_s": 0.0, "engine_start_s": 0.0,
        "skipped_unlisted": 0,
    }
    if energy:
        r["energy"] = {"min_seconds": 1.0, "min_windows": 5, "max_seconds": 3.0}
    return r


def sweep(grid_max, engine_ms):
    """The saxpy sweep of the first form (the hub and Ray tests import it)."""
    trials = []
    for g in range(1, grid_max + 1):
        for b in range(32, 1025, 32):
            cost = 1000.0 + 10.0 * ((g - 24.0) ** 2 + (b / 32.0 - 12.0) ** 2)
            trials.append({"grid": [g, 1, 1], "block": [b, 1, 1], "shared_mem": 0, "status": "ok",
                           "kernel_ns": stats(cost), "discarded": 0, "engine_ms": engine_ms})
    recorded = {"grid": [8, 1, 1], "block": [128, 1, 1], "shared_mem": 0}
    return report(os.path.abspath(DESCRIPTOR), "rr_saxpy", recorded, trials)


LINE = re.compile(r"^(recorded: )?grid (\d+)x(\d+)x(\d+) block (\d+)x(\d+)x(\d+) smem (\d+)")


def listed(path):
    """The recorded configuration and the others, in order, from `tune --list`'s output
    with the reason a limit skips it, if one does)."""
    recorded, configs = None, []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            v = [int(x) for x in m.groups()[1:]]
            c = {"grid": v[0:3], "block": v[3:6], "shared_mem": v[6]}
            if m.group(1):
                recorded = c
                continue
            why = line.split("  skipped: ", 1)
            configs.append((c, why[1].strip() if len(why) > 1 else None))
    if recorded is None:
        raise SystemExit("%s: no `recorded:` line: give what `rr-tui tune X.json --list` prints" % path)
    return recorded, configs


def modelled(c, recorded_threads, energy):
    """A made-up measurement of configuration `c` (see the module's text)."""
    per_block = c["block"][0] * c["block"][1] * c["block"][2]
    threads = per_block * c["grid"][0] * c["grid"][1] * c["grid"][2]
    idle = max(threads - recorded_threads, 0) / recorded_threads
    narrow = 16.0 / min(c["block"][0], 16) - 1.0  # narrow blocks in x read memory in short runs
    cost = 2000.0 * (1.0 + 0.15 * math.log2(per_block / 128.0) ** 2 + 0.5 * idle + 0.2 * narrow)
    t = {**c, "status": "ok" if threads >= recorded_threads else "verify_failed",
         "kernel_ns": stats(round(cost, 1)), "discarded": 0, "engine_ms": 0.0}
    if energy and t["status"] == "ok":
        watts = 60.0 + 400.0 * min(per_block, 1024) / 1024.0
        t["energy"] = {"joules": watts * cost * 1e-9, "power_w": watts, "noise": 0.01, "windows": 5}
    return t


def from_list(out, descriptor, list_file, axes, energy, relative):
    with open(descriptor) as f:
        kernel = json.load(f)["Name"]
    recorded, configs = listed(list_file)
    r_threads = math.prod(recorded["grid"]) * math.prod(recorded["block"])
    first = modelled(recorded, r_threads, energy)
    first["recorded"] = True
    trials = [first]
    # In the space's order, with its index, as `tune` writes them; the recorded configuration
    # is measured once, first, and keeps its index in the space when it has one.
    for i, (c, why) in enumerate(configs):
        if c == recorded:
            first["index"] = i
        elif why:
            trials.append({**c, "status": "skipped", "message": why, "discarded": 0, "index": i})
        else:
            trials.append({**modelled(c, r_threads, energy), "index": i})
    where = os.path.relpath(descriptor, os.path.dirname(os.path.abspath(out))) if relative \
        else os.path.abspath(descriptor)
    shown = {"grid": None, "block": None, "shared_mem": None, "registers": None}
    for flag, value in re.findall(r"--(grid|block|shared-mem|registers)[ =](\S+)", axes or ""):
        shown[flag.replace("-", "_")] = value
    r = report(where, kernel, recorded, trials, shown, energy)
    r["space_size"] = len(configs)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("grid_max", nargs="?", type=int, default=32)
    p.add_argument("engine_ms", nargs="?", type=float, default=0.0)
    p.add_argument("--descriptor")
    p.add_argument("--list", dest="list_file")
    p.add_argument("--axes")
    p.add_argument("--energy", action="store_true")
    p.add_argument("--relative", action="store_true")
    a = p.parse_args()
    if (a.descriptor is None) != (a.list_file is None):
        p.error("--descriptor and --list go together")
    if a.descriptor:
        r = from_list(a.out, a.descriptor, a.list_file, a.axes, a.energy, a.relative)
    else:
        r = sweep(a.grid_max, a.engine_ms)
    with open(a.out, "w") as f:
        json.dump(r, f, indent=1 if a.descriptor else None)


if __name__ == "__main__":
    main()
