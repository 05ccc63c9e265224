#!/usr/bin/env python3
"""storm.py: launch-storm overhead, variants interleaved so that drifting clocks and noisy
neighbours hit them all alike. Each round runs every variant once (in a rotating order); a
variant's ratio is the median over the rounds of its time over the plain run's time in the
same round (the ratios of the medians and of the minima are printed too).

    storm.py ROUNDS BENCH N WORDS LABEL=ENV:CMD...
ENV is `K=V,K=V` (or empty); CMD is a prefix put before `BENCH storm N WORDS` (or empty).

STORM_REPEATS=R runs R storms in each process; the process's time is their median (the first
storm pays one-time costs, later ones the steady per-launch cost). STORM_PIN=gpu runs every
variant on the same two CPUs, local to GPU 0 (from sysfs), STORM_PIN=LIST on those CPUs: where
the scheduler puts a process (and how far that CPU is from the GPU) otherwise moves a storm's
time by up to a third between runs, far more than the cost being measured. Where the program prints `cpu_seconds=` too, the same
runs are compared by the launching thread's CPU time after the wall time (what the scheduler
of a virtual machine takes away does not count there).

STORM_PROGRESS=1 prints a line per round ("# round R/N: ..."); STORM_JSON=FILE appends a JSON line
per variant and metric to FILE: {"metric", "label", "ratio", "lo", "hi", "median_s", "min_s",
"max_s", "runs", "plain_median_s", "ns_per_launch", "n", "words", "rounds"} (what the GPU suite's
storm part checks).
"""
import json
import os, random, re, statistics, subprocess, sys


def median_ci(ratios, resamples=4000):
    """A 95 % bootstrap confidence interval of the median of `ratios` (fixed seed: the same
    samples give the same interval)."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def gpu_local_cpus():
    """The first two CPUs of GPU 0's NUMA node, as a taskset list (None if unknown)."""
    try:
        bus = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True).stdout.strip().lower()
        dev = bus[4:] if len(bus.split(":")[0]) == 8 else bus  # 00000000:19:00.0 -> 0000:19:00.0
        spec = open(f"/sys/bus/pci/devices/{dev}/local_cpulist").read().strip()
    except (OSError, IndexError):
        return None
    cpus = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        cpus += range(int(a), int(b or a) + 1)
    return ",".join(map(str, cpus[:2])) or None


repeats = int(os.environ.get("STORM_REPEATS", "1"))
pin = os.environ.get("STORM_PIN", "")
if pin == "gpu":
    pin = gpu_local_cpus() or ""
pin_prefix = ["taskset", "-c", pin] if pin else []
print(f"# {repeats} storm(s) per process, " + (f"pinned to CPUs {pin}" if pin else "not pinned"))

rounds, bench, n, words = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
variants = []
for spec in sys.argv[5:]:
    label, rest = spec.split("=", 1)
    env_s, cmd_s = rest.split(":", 1)
    env = dict(kv.split("=", 1) for kv in env_s.split(",") if kv)
    variants.append((label, env, cmd_s.split() if cmd_s else []))
# The wall time first (what the program sees), then the launching thread's CPU time.
METRICS = ["seconds", "cpu_seconds"]
times = {m: {v[0]: [] for v in variants} for m in METRICS}
# Per round, each variant's time over the plain run's of the same round: paired ratios cancel
# the slow drifts of a shared machine.
paired = {m: {v[0]: [] for v in variants} for m in METRICS}
for r in range(rounds):
    order = variants[r % len(variants):] + variants[: r % len(variants)]
    this = {m: {} for m in METRICS}
    for label, env, prefix in order:
        out = subprocess.run(pin_prefix + prefix + [bench, "storm", n, words, str(repeats)],
                             env={**os.environ, **env}, capture_output=True, text=True)
        for m in METRICS:
            found = [float(x) for x in re.findall(rf"(?m)^{m}=([0-9.]+)", out.stdout)]
            if out.returncode != 0 or not found:
                if m == "seconds":
                    print(f"{label}: failed: {out.stderr[-300:]}")
                continue
            t = statistics.median(found)
            times[m][label].append(t)
            this[m][label] = t
    for m in METRICS:
        base = this[m].get(variants[0][0])
        for label, t in this[m].items():
            if base:
                paired[m][label].append(t / base)
    if os.environ.get("STORM_PROGRESS"):
        print("# round %d/%d: %s" % (r + 1, rounds, ", ".join("%s %.4f s" % (l, t) for l, t in this["seconds"].items())),
              flush=True)
json_out = os.environ.get("STORM_JSON")
per = int(n)
for m in METRICS:
    if not times[m][variants[0][0]]:
        continue
    if m == "cpu_seconds":
        print("# the same runs, CPU time of the launching thread:")
    plain = statistics.median(times[m][variants[0][0]])
    for label, _, _ in variants:
        t = times[m][label]
        if not t:
            continue
        med = statistics.median(t)
        pr = statistics.median(paired[m][label]) if paired[m][label] else float("nan")
        lo, hi = median_ci(paired[m][label]) if len(paired[m][label]) > 1 else (pr, pr)
        if json_out:
            with open(json_out, "a") as f:
                f.write(json.dumps({"metric": m, "label": label, "ratio": pr, "lo": lo, "hi": hi, "median_s": med,
                                    "min_s": min(t), "max_s": max(t), "runs": len(t), "plain_median_s": plain,
                                    "ns_per_launch": (pr - 1) * plain / per * 1e9, "n": per, "words": int(words),
                                    "rounds": rounds}) + "\n")
        print(f"{label:16s} median {med:.4f} s (min {min(t):.4f}, max {max(t):.4f}, {len(t)} runs)  "
              f"{med / per * 1e6:.3f} us/launch  ratio {pr:.3f} [95% CI {lo:.3f}-{hi:.3f}]  "
              f"(+{(pr - 1) * plain / per * 1e9:.0f} ns/launch; "
              f"ratio of medians {med / plain:.3f}, of minima {min(t) / min(times[m][variants[0][0]]):.3f})")
