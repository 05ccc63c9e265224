#!/usr/bin/env python3
"""rr_tui.ray on a local multi-node Ray cluster (one head and three nodes of one GPU each, all
on this machine), with simulated engines (engine jobs answering from a finished sweep), so no
GPU is needed:

1. a sweep over two engines equals the same sweep answered in-process (`tune --simulate`),
   row for row, and both engines measured;
2. the same sweep while the node of one engine is removed mid-sweep: the configuration it held
   goes to another engine, the hub starts a new actor on the spare node, and the result is
   still equal row for row.

Usage: ray_cluster.py RR_TUI   (prints "ray: PASS …" / "ray: FAIL …"; exit 1 on a failure)
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import rr_tui.ray as rr_ray  # noqa: E402
import synthetic_sweep  # noqa: E402

RR = os.path.abspath(sys.argv[1])
# The nodes' workers import rr_tui from here, as an installed package would be imported.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH")) if p)
AXES = ["--grid", "1..8", "--block", "32..1024:32"]
# 257 configurations at 30 ms each: about 8 s on one engine, 4 s on two.
ENGINE_MS = 30.0
failures = []


def check(ok, what):
    print("ray: %s %s" % ("PASS" if ok else "FAIL", what), flush=True)
    if not ok:
        failures.append(what)


def rows(path):
    with open(path) as f:
        r = json.load(f)
    return sorted((tuple(t["grid"]), tuple(t["block"]), t["status"], (t.get("kernel_ns") or {}).get("median"))
                  for t in r["trials"]), r


def said(err):
    """The tuner's and hub's own lines of a stderr (not Ray's logs)."""
    return " | ".join(l.strip() for l in err.splitlines()
                      if l.startswith(("warning", "error", "rr-tui", "rr_tui", "  GPU", "Traceback")) or "lost" in l)[-1500:]


def processes():
    """(pid, parent pid, command line) of every process."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ")
            with open("/proc/%s/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        out.append((int(pid), ppid, cmd))
    return out


def remove_a_node_with_an_engine(cluster, after_s, said):
    """Once engines run, and `after_s` later, remove a worker node running one, as a machine
    that goes down takes its processes with it: the actor's first, then the node's own."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        # An engine is `rr-tui job` (its job, simulated here, on its input).
        engines = [p for p in processes() if p[2] == RR.encode() + b" job "]
        if engines:
            break
        time.sleep(0.1)
    time.sleep(after_s)
    parent = {pid: ppid for pid, ppid, _ in processes()}
    for _, actor, _ in engines:
        raylet = parent.get(actor)
        for node in cluster.worker_nodes:
            if raylet in [p.process.pid for p in node.all_processes.get("raylet", [])]:
                os.kill(actor, signal.SIGKILL)
                cluster.remove_node(node, allow_graceful=False)
                said.append(node.node_id)
                return


def wrapper(cluster, *args):
    """`python -m rr_tui.ray --address CLUSTER ARGS…` as its own driver process."""
    return [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import rr_tui.ray as r; "
            "sys.exit(r.main(sys.argv[1:]))" % os.path.join(ROOT, "python"), "--address", cluster.address, *args]


def main():
    w = tempfile.mkdtemp(prefix="rr-tui-ray-")
    sweep = os.path.join(w, "sweep.json")
    with open(sweep, "w") as f:
        json.dump(synthetic_sweep.sweep(8, ENGINE_MS), f)
    desc = os.path.abspath(synthetic_sweep.DESCRIPTOR)
    want = os.path.join(w, "want.json")
    subprocess.run([RR, "tune", desc, *AXES, "--simulate", sweep, "--json-out", want],
                   check=True, stdout=subprocess.DEVNULL)
    want_rows, _ = rows(want)

    # Quick failure detection: a removed node is declared dead within about a second.
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "num_gpus": 0,
        "_system_config": {"health_check_period_ms": 200, "health_check_failure_threshold": 3,
                           "health_check_initial_delay_ms": 0},
    })
    for _ in range(3):
        cluster.add_node(num_cpus=1, num_gpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        # 1. Two engines on two nodes.
        got = os.path.join(w, "two.json")
        t0 = time.perf_counter()
        code = rr_ray.tune(desc, *AXES, "--json-out", got, engines=2, simulate=sweep, exe=RR)
        two_s = time.perf_counter() - t0
        got_rows, report = rows(got)
        used = sorted({t.get("device") for t in report["trials"]})
        check(code == 0 and got_rows == want_rows and used == [0, 1],
              "two engines on a local 4-node cluster: %d rows %s the in-process sweep's, engines used %s, %.1f s (exit %d)"
              % (len(got_rows), "equal to" if got_rows == want_rows else "NOT equal to", used, two_s, code))

        # The two actors stay for this driver's next sweep, holding their GPUs, until released.
        held = ray.available_resources().get("GPU", 0)
        rr_ray.release()
        time.sleep(1)
        check(held == 1 and ray.available_resources().get("GPU", 0) == 3,
              "the actors are kept for the next sweep (GPUs free: %g of 3) and release() gives their GPUs back (%g free)"
              % (held, ray.available_resources().get("GPU", 0)))

        # More engines asked than the cluster has GPUs: capped, said, and the sweep the same.
        got = os.path.join(w, "capped.json")
        p = subprocess.run(wrapper(cluster, "--engines", "5", "--simulate", sweep, "--pace", "0.2",
                                   desc, *AXES, "--json-out", got),
                           env=dict(os.environ, RR_TUI=RR), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=300)
        capped = "--engines 5, but the Ray cluster" in p.stderr and "running 3 engine(s)" in p.stderr
        got_rows, _ = rows(got) if os.path.exists(got) else ([], None)
        check(p.returncode == 0 and capped and got_rows == want_rows,
              "--engines 5 on 3 free GPUs: capped to 3 and said (%s), %d rows %s the in-process sweep's (exit %d)"
              % ("yes" if capped else "NO", len(got_rows), "equal to" if got_rows == want_rows else "NOT equal to",
                 p.returncode))

        # 2. A node lost in the middle.
        got = os.path.join(w, "lost.json")
        removed = []
        killer = threading.Thread(target=remove_a_node_with_an_engine, args=(cluster, 1.5, removed))
        killer.start()
        p = subprocess.Popen(wrapper(cluster, "--engines", "2", "--simulate", sweep, desc, *AXES, "--json-out", got),
                             env=dict(os.environ, RR_TUI=RR), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, err = p.communicate(timeout=300)
        killer.join()
        got_rows, _ = rows(got) if os.path.exists(got) else ([], None)
        lost_said = "was lost" in err
        check(p.returncode == 0 and bool(removed) and lost_said and got_rows == want_rows,
              "a node removed mid-sweep (%s): its configuration went to another engine (%s), %d rows %s the in-process sweep's (exit %d)%s"
              % ("removed" if removed else "NO node removed", "said" if lost_said else "NOT said", len(got_rows),
                 "equal to" if got_rows == want_rows else "NOT equal to", p.returncode,
                 ": " + said(err)))
    finally:
        ray.shutdown()
        cluster.shutdown()
    print("ray: %d passed, %d failed" % (4 - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
