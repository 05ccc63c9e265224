"""Tune on a Ray cluster: one engine per GPU, every configuration handed out by one driver.

    python -m rr_tui.ray [--address ADDR] [--engines N] X.json --block 32..1024*2 --json-out s.json
    python -m rr_tui.ray --num-gpus 2 --simulate SWEEP.json X.json --grid 1..8 --json-out s.json

runs `rr-tui tune X.json … --engine-hub SOCKET --engines N` here, the driver: its strategy
hands out every configuration, so an adaptive search (tpe, annealing) learns from all GPUs at
once, and it writes the usual report (--json-out, --csv, --export, the summary). This process
serves the hub: each engine the tuner asks for runs in a Ray actor holding one GPU, which
drives an engine process (`rr-tui job`) on its node. When an actor or its node is lost, the
configuration it held goes back to the tuner, which hands it to another engine, and the hub
starts a new actor wherever the cluster has a GPU for it. Actors stay for the driver's next
sweep (from Python, `tune()` called again), so a session of many sweeps starts them once;
they hold their GPUs until the driver ends or calls `rr_tui.ray.release()`.

Every node needs the rr-tui package (pip install its wheel) and the recording at the same path
(a shared file system), as a Slurm cluster has. The pieces: `hub` (the socket the tuner
connects to, the pool of actors), `engine` (the actor), `protocol` (the lines they say).

From Python: `rr_tui.ray.tune("X.json", "--block", "32..1024*2", "--json-out", "s.json")` returns
the tuner's exit status.
"""

import argparse
import os
import signal
import subprocess
import sys

from .. import executable
from .hub import Hub, release_kept
from .protocol import HubError

__all__ = ["tune", "release", "Hub", "main"]


def _ray():
    try:
        import ray
    except ImportError:
        sys.exit("rr_tui.ray: Ray is not installed (pip install ray)")
    return ray


def release():
    """End the actors kept for this driver's next sweep: their GPUs go back to the cluster."""
    release_kept(_ray())


def tune(descriptor, *args, address=None, engines=None, simulate=None, pace=1.0, exe=None,
         num_gpus=None):
    """Run `rr-tui tune DESCRIPTOR ARGS…` with its engines on the Ray cluster at `address`
    (None: the one `ray start` made here, else a new local one), one per GPU (or `engines`).
    `simulate`: answer from a finished sweep instead of GPUs (testing). `num_gpus`: start a new
    local cluster declaring that many GPUs (Ray's logical GPUs: with `simulate` no real one is
    needed). The tuner's exit status."""
    ray = _ray()
    ours = not ray.is_initialized()
    if num_gpus is not None and (address is not None or not ours):
        # Ray takes declared resources only for a cluster it starts; a running one has its own.
        sys.stderr.write("rr_tui.ray: --num-gpus declares the GPUs of a new local cluster; a running "
                         "cluster has its own (ray start --num-gpus N on each node)\n")
        return 2
    if ours:
        if num_gpus is not None:
            # "local": a new cluster here, even when `ray start` made one (its GPUs are its own).
            ray.init(address="local", num_gpus=num_gpus, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        return _tune(ray, descriptor, args, engines, simulate, pace, exe)
    finally:
        if ours:
            ray.shutdown()


def _tune(ray, descriptor, args, engines, simulate, pace, exe):
    free = int(ray.available_resources().get("GPU", 0))
    where = ray.get_runtime_context().gcs_address
    if free < 1:
        sys.stderr.write("rr_tui.ray: the Ray cluster at %s has no free GPU (ray start --num-gpus N on each node%s)\n"
                         % (where, "; with --simulate, GPUs that are only declared will do: --num-gpus N "
                            "starts a local cluster declaring N" if simulate else ""))
        return 2
    if engines is None:
        engines = free
    elif engines > free:
        sys.stderr.write("rr_tui.ray: --engines %d, but the Ray cluster at %s has %d free GPU(s): running %d engine(s)\n"
                         % (engines, where, free, free))
        engines = free
    exe = exe or executable()
    try:
        hub = Hub(engines, exe=exe, simulate=simulate, pace=pace)
    except HubError as e:
        sys.stderr.write("rr_tui.ray: %s\n" % e)
        return 1
    try:
        cmd = [exe, "tune", str(descriptor), *map(str, args), "--engine-hub", hub.path, "--engines", str(engines)]
        # The engines answer from a finished sweep: the tuner's header says it simulates (as
        # `rr-tui tune --simulate` does), rather than measuring with a timing policy.
        env = dict(os.environ, RR_TUI_HUB_SIMULATES=simulate) if simulate else None
        child = subprocess.Popen(cmd, env=env)
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                # The tuner stops cleanly on SIGINT (its summary, the results kept, exit 130):
                # pass it on (a terminal's Ctrl-C reached it already) and wait for it.
                child.send_signal(signal.SIGINT)
    finally:
        hub.close()


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m rr_tui.ray",
        description="Tune a recorded kernel on a Ray cluster: rr-tui tune's strategy here, one engine per GPU of the cluster.",
        epilog="Every argument after the options goes to `rr-tui tune` (rr-tui tune --help). "
        "Example: python -m rr_tui.ray --address auto X.json --block 32..1024*2 --json-out sweep.json. "
        "Engines are capped at the cluster's free GPUs; each node's Python must import rr_tui and Ray. "
        "Ctrl-C stops the sweep as rr-tui tune does (the results so far kept, exit 130).",
    )
    p.add_argument("--address", help="the Ray cluster (default: RAY_ADDRESS, a running local one, else a new local one)")
    p.add_argument("--engines", type=int, help="engines to run at once (default: the cluster's GPUs)")
    p.add_argument("--simulate", metavar="SWEEP.json", help="answer from a finished sweep of the instance instead of GPUs (testing)")
    p.add_argument("--pace", type=float, default=1.0, help="with --simulate: this many times each answer's engine time")
    p.add_argument("--num-gpus", type=int, metavar="N",
                   help="start a new local cluster declaring N GPUs (Ray's logical GPUs: with --simulate, "
                   "no real GPU is needed); not with --address or a cluster already connected")
    p.add_argument("descriptor", help="the instance's descriptor (X.json), at the same path on every node")
    p.add_argument("tune_args", nargs=argparse.REMAINDER, help="rr-tui tune's arguments")
    a = p.parse_args(argv)
    for mine in ("--address", "--engines", "--pace", "--simulate", "--num-gpus"):
        if any(t == mine or t.startswith(mine + "=") for t in a.tune_args):
            p.error("%s comes before the descriptor: the arguments after it go to rr-tui tune "
                    "(which runs its engines through this hub)" % mine)
    if a.num_gpus is not None and a.num_gpus < 1:
        p.error("--num-gpus %d: declare 1 GPU or more" % a.num_gpus)
    simulate = os.path.abspath(a.simulate) if a.simulate else None
    return tune(a.descriptor, *a.tune_args, address=a.address, engines=a.engines, simulate=simulate, pace=a.pace,
                num_gpus=a.num_gpus)
