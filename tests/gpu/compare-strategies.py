"""Issue 17's strategy benchmark: how many measurements each search strategy needs to come
within 1 % and 5 % of the optimum, replaying finished exhaustive sweeps with
`rr-tui tune --simulate` (no GPU needed once the sweeps exist).

    python3 tests/gpu/compare-strategies.py RR-TUI SEEDS SWEEP.json:DESCRIPTOR.json:AXES... 

AXES are the sweep's own axis flags joined by spaces, e.g.
'--grid 1..64 --block 32..1024:32'. For every sweep, strategy and seed (1..SEEDS) a simulated
sweep runs with the budget the strategy needs (the whole space), and the position of the first
configuration within 1 % / 5 % of the sweep's best is read from its report. Prints, per sweep and
strategy, the median over seeds of those positions and as a fraction of the space."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

rr, seeds = sys.argv[1], int(sys.argv[2])
strategies = ["random", "annealing", "tpe"]
print("sweep | configurations | strategy | median measurements to 1 % (fraction) | to 5 % (fraction)")
for case in sys.argv[3:]:
    sweep, desc, axes = case.split(":", 2)
    report = json.load(open(sweep))
    costs = [t["kernel_ns"]["median"] for t in report["trials"]
             if t.get("status") == "ok" and t.get("kernel_ns")]
    best = min(costs)
    space = report["space_size"]
    for strategy in strategies:
        to = {0.01: [], 0.05: []}
        for seed in range(1, seeds + 1):
            with tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "r.json")
                subprocess.run([rr, "tune", desc, *axes.split(), "--simulate", sweep,
                                "--strategy", strategy, "--seed", str(seed), "--json", out],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                trials = json.load(open(out))["trials"]
            for tol in to:
                n = next((i + 1 for i, t in enumerate(trials)
                          if t.get("status") == "ok" and t.get("kernel_ns")
                          and t["kernel_ns"]["median"] <= best * (1 + tol)), len(trials))
                to[tol].append(n)
        m1, m5 = statistics.median(to[0.01]), statistics.median(to[0.05])
        print(f"{os.path.basename(sweep)} | {space} | {strategy} | {m1:.0f} ({m1 / space:.3f}) | {m5:.0f} ({m5 / space:.3f})")
