"""The explorer's replays of neighbouring instances, from the outside:
`python3 serve_replays.py RR-TUI DIR [replay args...]` replays every instance of DIR one after
the other as the explorer does (one `replay --json --serve` process, each next replay sent on its
stdin as a typed replay job, `{"protocol": 1, "replay": {…}}`, the explorer's line), then each in a fresh process as before (`replay --json`), and prints per instance the time
from asking to the first repetition and to the end, what the served process kept on the GPU, and
both verdicts. Exits 1 when a verdict differs, a replay fails, or no replay switched in."""
import glob
import json
import os
import subprocess
import sys
import time

rr, folder, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
descriptors = sorted(glob.glob(os.path.join(folder, "*.json")))
descriptors = [d for d in descriptors if "Name" in json.load(open(d))]


def args(desc, run):
    return ["replay", desc, "--json", "--run-id", str(run), *extra]


def job(desc, run):
    """The replay job the explorer sends for `desc` (rr_engine::replay::request::ReplayRequest,
    every field, as its reader refuses a missing one), with the replay args this probe takes:
    --repetitions N and --verify."""
    repetitions, verify, rest = 1, "no", list(extra)
    while rest:
        flag = rest.pop(0)
        if flag == "--repetitions":
            repetitions = int(rest.pop(0))
        elif flag == "--verify":
            verify = "bytes"
        else:
            sys.exit(f"serve_replays.py: {flag}: only --repetitions N and --verify go into a job")
    request = {
        "descriptor": desc, "run_id": run, "repetitions": repetitions, "warmup": 0,
        "overrides": {"grid": None, "block": None, "num_teams": None, "num_threads": None,
                      "shared_mem": None, "device_id": None, "ignore_limits": False},
        "supplied": {"image": None, "base_address": None, "assume_llvm18": False},
        "cold": False, "noise": None, "verify": verify, "verify_on_host": False,
        "save_output": False, "output_dir": None, "strict": False, "kernel_timeout": 30.0,
        "candidate": None, "energy": False, "events_only": False,
    }
    return json.dumps({"protocol": 1, "replay": request})


def follow(stdout, run, start):
    """Events of `run` up to its done: (first rep s, done s, verified, ok, phases)."""
    first = verified = ok = None
    phases = {}
    for line in stdout:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("run") != run:
            continue
        kind = e.get("event")
        if kind == "rep" and first is None:
            first = time.perf_counter() - start
        elif kind == "phase":
            phases[e.get("name")] = e.get("detail")
        elif kind == "verify":
            verified = e.get("passed")
        elif kind == "error":
            phases["error"] = e.get("message")
        elif kind == "done":
            ok = e.get("ok")
            break
    return first, time.perf_counter() - start, verified, ok, phases


fmt = lambda v: "none" if v is None else f"{v:.3f}"
served = []
start = time.perf_counter()
p = subprocess.Popen([rr, *args(descriptors[0], 1), "--serve"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
for run, desc in enumerate(descriptors, 1):
    if run > 1:
        start = time.perf_counter()
        try:
            p.stdin.write(job(desc, run) + "\n")
            p.stdin.flush()
        except BrokenPipeError:
            served.append((None, 0.0, None, False, {"error": "the served process is gone"}))
            continue
    served.append(follow(p.stdout, run, start))
try:
    p.stdin.close()
except BrokenPipeError:
    pass
rc_served = p.wait()

fresh = []
for desc in descriptors:
    start = time.perf_counter()
    q = subprocess.Popen([rr, *args(desc, 1)], stdout=subprocess.PIPE, text=True)
    fresh.append(follow(q.stdout, 1, start))
    q.wait()

switched = 0
for desc, s, f in zip(descriptors, served, fresh):
    how = s[4].get("switched") or s[4].get("fresh") or "opened"
    switched += "switched" in s[4]
    print(f"{os.path.basename(desc)}: served first_rep_s={fmt(s[0])} done_s={fmt(s[1])} "
          f"verified={s[2]} | fresh process first_rep_s={fmt(f[0])} done_s={fmt(f[1])} "
          f"verified={f[2]} | {how}" + (f" | error: {s[4]['error']}" if "error" in s[4] else ""))
total = lambda runs: sum(r[1] for r in runs)
print(f"{len(descriptors)} replays: served {total(served):.2f} s, fresh processes "
      f"{total(fresh):.2f} s ({total(fresh) / max(total(served), 1e-9):.2f}x); "
      f"{switched} switched in; served process exit {rc_served}")
same = all(s[2] == f[2] and s[3] == f[3] for s, f in zip(served, fresh))
sys.exit(0 if same and switched > 0 and rc_served == 0 and all(s[3] for s in served) else 1)
