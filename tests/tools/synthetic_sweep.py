#!/usr/bin/env python3
"""Write a made-up exhaustive sweep of the bundled saxpy instance (llvm-two-kernels, rr_saxpy)
over grid 1..G x block 32..1024:32, as `rr-tui tune --json` writes it: kernel time smooth
with its minimum at grid 24, block 384, and each configuration's engine time ENGINE_MS (what
a simulated engine paced at 1 takes to answer it). For the engine-hub and Ray tests, where
no GPU measures anything.

Usage: synthetic_sweep.py OUT.json [GRID_MAX] [ENGINE_MS]
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DESCRIPTOR = os.path.join(HERE, "..", "..", "record-fixtures", "llvm-two-kernels",
                          "8683979482637550046_13526365365894479501.json")


def stats(x):
    return {"count": 1, "min": x, "median": x, "mean": x, "stddev": 0.0, "max": x}


def sweep(grid_max, engine_ms):
    trials = []
    for g in range(1, grid_max + 1):
        for b in range(32, 1025, 32):
            cost = 1000.0 + 10.0 * ((g - 24.0) ** 2 + (b / 32.0 - 12.0) ** 2)
            trials.append({"grid": [g, 1, 1], "block": [b, 1, 1], "shared_mem": 0, "status": "ok",
                           "kernel_ns": stats(cost), "discarded": 0, "engine_ms": engine_ms})
    return {
        "tool": "rr-tui tune", "version": "0.2.0", "descriptor": os.path.abspath(DESCRIPTOR),
        "kernel": "rr_saxpy",
        "devices": [{"ordinal": 0, "name": "synthetic", "sm": 90, "rated_clock_mhz": 1980.0}],
        "strategy": "exhaustive", "seed": 0, "budget": None, "time_limit_s": None,
        "timing": {"cold": True, "target": {"max_noise": None, "min_samples": 1, "min_gpu_time": 0.0,
                                             "timeout": 60.0}, "max_samples": 1, "throttle": 0.75},
        "verify": "bytes", "axes": {"grid": None, "block": None, "shared_mem": None, "registers": None},
        "space_size": len(trials), "recorded": {"grid": [8, 1, 1], "block": [128, 1, 1], "shared_mem": 0},
        "trials": trials, "best": None, "speedup": None, "elapsed_s": 0.0, "configs_per_s": 0.0,
        "engine_start_s": 0.0, "skipped_unlisted": 0,
    }


if __name__ == "__main__":
    out = sys.argv[1]
    grid_max = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    engine_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    with open(out, "w") as f:
        json.dump(sweep(grid_max, engine_ms), f)
