"""Issue 17's strategy benchmark: how many measurements each search strategy needs to come
within 1 % and 5 % of the optimum, replaying finished exhaustive sweeps with
`rr-tui tune --simulate` (no GPU needed once the sweeps exist).

    python3 tests/gpu/compare-strategies.py RR-TUI SEEDS SWEEP.json:DESCRIPTOR.json:AXES...

AXES are the sweep's own axis flags joined by spaces, e.g.
'--grid 1..64 --block 32..1024:32'. For every sweep, strategy and seed (1..SEEDS) a simulated
sweep runs with the budget the strategy needs (the whole space), and the position of the first
configuration within 1 % / 2 % / 5 % of the sweep's best is read from its report, counting
measured configurations only (those a limit skips cost nothing). Prints, per sweep and strategy,
the median over seeds of those counts and as a fraction of the measurable space, then per
strategy the median and worst over sweeps of those fractions. Simulations run on every core.
STRATEGIES_JSON=FILE also writes those fractions as JSON (what the GPU suite's strategy part
checks): {"tolerances": [...], "sweeps": [{"sweep", "space", "strategy", "fractions": [...]}],
"summary": {STRATEGY: {"median": [...], "worst": [...]}}}."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

rr, seeds = sys.argv[1], int(sys.argv[2])
strategies = ["random", "annealing", "tpe"]
TOLERANCES = (0.01, 0.02, 0.05)


def positions(sweep, desc, axes, best, strategy, seed):
    """Measurements until within 1 % and 5 % of `best`, for one simulated run."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        subprocess.run([rr, "tune", desc, *axes.split(), "--simulate", sweep,
                        "--strategy", strategy, "--seed", str(seed), "--json-out", out],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        trials = json.load(open(out))["trials"]
    measured = [t for t in trials if t.get("status") != "skipped"]
    found = []
    for tol in TOLERANCES:
        found.append(next((i + 1 for i, t in enumerate(measured)
                           if t.get("status") == "ok" and t.get("kernel_ns")
                           and t["kernel_ns"]["median"] <= best * (1 + tol)), len(measured)))
    return found


print("sweep | measurable configurations | strategy | median measurements to 1 % (fraction) | to 2 % | to 5 %")
fractions = {s: ([], [], []) for s in strategies}
rows = []
with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for case in sys.argv[3:]:
        sweep, desc, axes = case.split(":", 2)
        report = json.load(open(sweep))
        costs = [t["kernel_ns"]["median"] for t in report["trials"]
                 if t.get("status") == "ok" and t.get("kernel_ns")]
        best = min(costs)
        space = sum(t.get("status") != "skipped" for t in report["trials"])
        for strategy in strategies:
            runs = list(pool.map(lambda seed: positions(sweep, desc, axes, best, strategy, seed),
                                 range(1, seeds + 1)))
            cells = []
            row = {"sweep": os.path.basename(sweep), "space": space, "strategy": strategy, "fractions": []}
            for k in range(len(TOLERANCES)):
                m = statistics.median(r[k] for r in runs)
                fractions[strategy][k].append(m / space)
                row["fractions"].append(m / space)
                cells.append(f"{m:.0f} ({m / space:.3f})")
            rows.append(row)
            print(f"{os.path.basename(sweep)} | {space} | {strategy} | " + " | ".join(cells), flush=True)
for strategy, per_tol in fractions.items():
    parts = [f"{int(tol * 100)} %: median {statistics.median(f):.3f}, worst {max(f):.3f}"
             for tol, f in zip(TOLERANCES, per_tol)]
    print(f"all sweeps | {strategy} | fraction of the measurable space to " + "; ".join(parts))
if os.environ.get("STRATEGIES_JSON"):
    with open(os.environ["STRATEGIES_JSON"], "w") as f:
        json.dump({"tolerances": list(TOLERANCES), "seeds": seeds, "sweeps": rows,
                   "summary": {s: {"median": [statistics.median(f) for f in per_tol],
                                   "worst": [max(f) for f in per_tol]}
                               for s, per_tol in fractions.items() if per_tol[0]}}, f)
