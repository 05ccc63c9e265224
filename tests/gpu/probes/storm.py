#!/usr/bin/env python3
"""storm.py: launch-storm overhead, variants interleaved so that drifting clocks and noisy
neighbours hit them all alike. Each round runs every variant once (in a rotating order); a
variant's ratio is the median over the rounds of its time over the plain run's time in the
same round (the ratios of the medians and of the minima are printed too).

    storm.py ROUNDS BENCH N WORDS LABEL=ENV:CMD...
ENV is `K=V,K=V` (or empty); CMD is a prefix put before `BENCH storm N WORDS` (or empty).
"""
import os, re, statistics, subprocess, sys

rounds, bench, n, words = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
variants = []
for spec in sys.argv[5:]:
    label, rest = spec.split("=", 1)
    env_s, cmd_s = rest.split(":", 1)
    env = dict(kv.split("=", 1) for kv in env_s.split(",") if kv)
    variants.append((label, env, cmd_s.split() if cmd_s else []))
times = {v[0]: [] for v in variants}
# Per round, each variant's time over the plain run's of the same round: paired ratios cancel
# the slow drifts of a shared machine.
paired = {v[0]: [] for v in variants}
for r in range(rounds):
    order = variants[r % len(variants):] + variants[: r % len(variants)]
    this = {}
    for label, env, prefix in order:
        out = subprocess.run(prefix + [bench, "storm", n, words], env={**os.environ, **env},
                             capture_output=True, text=True)
        m = re.search(r"seconds=([0-9.]+)", out.stdout)
        if out.returncode != 0 or not m:
            print(f"{label}: failed: {out.stderr[-300:]}")
            continue
        times[label].append(float(m.group(1)))
        this[label] = float(m.group(1))
    base = this.get(variants[0][0])
    for label, t in this.items():
        if base:
            paired[label].append(t / base)
plain = statistics.median(times[variants[0][0]])
per = int(n)
for label, _, _ in variants:
    t = times[label]
    if not t:
        continue
    med = statistics.median(t)
    pr = statistics.median(paired[label]) if paired[label] else float("nan")
    print(f"{label:16s} median {med:.4f} s (min {min(t):.4f}, max {max(t):.4f}, {len(t)} runs)  "
          f"{med / per * 1e6:.3f} us/launch  ratio {pr:.3f}  (+{(pr - 1) * plain / per * 1e9:.0f} ns/launch; "
          f"ratio of medians {med / plain:.3f}, of minima {min(t) / min(times[variants[0][0]]):.3f})")
