"""Tune on a Ray cluster: one engine per GPU, every configuration handed out by one driver.

    python -m rr_tui.ray [--address ADDR] [--engines N] X.json --block 32..1024*2 --json s.json

runs `rr-tui tune X.json … --engine-hub SOCKET --engines N` here, the driver: its strategy
hands out every configuration, so an adaptive search (tpe, annealing) learns from all GPUs at
once, and it writes the usual report (--json, --csv, --export, the summary). This process
serves the hub: each engine the tuner asks for runs in a Ray actor holding one GPU, which
drives an `rr-tui engine` process on its node. When an actor or its node is lost, the
configuration it held goes back to the tuner, which hands it to another engine, and the hub
starts a new actor wherever the cluster has a GPU for it. Actors stay for the driver's next
sweep (from Python, `tune()` called again), so a session of many sweeps starts them once;
they hold their GPUs until the driver ends or calls `rr_tui.ray.release()`.

Every node needs the rr-tui package (pip install its wheel) and the recording at the same path (a shared file
system), as a Slurm cluster has.

From Python: `rr_tui.ray.tune("X.json", "--block", "32..1024*2", "--json", "s.json")` returns
the tuner's exit status.
"""

import argparse
import collections
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from . import executable

__all__ = ["tune", "release", "Hub", "main"]

# A line longer than this is not the engine protocol (a trial is a few KiB).
MAX_LINE = 1 << 20
# How long an actor may take to be placed and start its engine.
START_TIMEOUT_S = 300.0
# How long the actors of a new hub may take to be placed and import this module.
PLACE_TIMEOUT_S = 60.0
# How often a waiting hub looks whether the tuner closed the connection.
POLL_S = 0.5


def _ray():
    try:
        import ray
    except ImportError:
        sys.exit("rr_tui.ray: Ray is not installed (pip install ray)")
    return ray


class Engine:
    """One GPU of the cluster (a Ray actor): runs one `rr-tui engine` process at a time on it
    and passes the engine protocol through, a command and its reply at a time."""

    def __init__(self, exe=None):
        self.exe = exe or executable()
        self.proc = None
        self.tail = collections.deque(maxlen=4)

    def where(self):
        """The node and GPU this actor holds."""
        import ray

        ctx = ray.get_runtime_context()
        return {
            "node": ctx.get_node_id(),
            "host": socket.gethostname(),
            "gpus": [str(g) for g in ray.get_gpu_ids()],
        }

    def start(self, cwd, argv):
        """Start `rr-tui engine ARGV` in `cwd`; its setup events up to `ready` (or its error)."""
        self.stop()
        argv = [str(a) for a in argv]
        if argv[:1] != ["engine"]:
            return [_error(0, "input", "the hub runs `rr-tui engine` only")]
        if "--simulate" not in argv and "--device-id" in argv:
            # Ray shows the actor its one GPU as device 0.
            i = argv.index("--device-id")
            argv[i + 1 : i + 2] = ["0"]
        self.tail.clear()
        try:
            self.proc = subprocess.Popen(
                [self.exe, *argv],
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as e:
            return [_error(0, "setup", "cannot start %s on %s: %s" % (self.exe, socket.gethostname(), e))]
        threading.Thread(target=self._keep_tail, args=(self.proc,), daemon=True).start()
        return self._until(0, ("ready", "error"), lambda e: True)

    def call(self, line):
        """Send one command line; the events up to its `trial` (or `error`)."""
        try:
            run = next(iter(json.loads(line).values()))["id"]
        except (ValueError, TypeError, KeyError, StopIteration, AttributeError):
            run = 0
        if self.proc is None or self.proc.poll() is not None:
            return [_error(run, "setup", "no engine is running")]
        try:
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except OSError:
            pass
        return self._until(run, ("trial", "error"), lambda e: e.get("run") == run)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        return True

    def _until(self, run, events, mine):
        lines = []
        while True:
            line = self.proc.stdout.readline(MAX_LINE)
            if not line:
                code = self.proc.wait()
                why = "killed by a signal" if code < 0 else "exit status %d" % code
                tail = " | ".join(self.tail)
                text = "the engine on %s ended (%s)%s" % (socket.gethostname(), why, ": " + tail if tail else "")
                return lines + [_error(run, "setup", text)]
            text = line.decode(errors="replace")
            lines.append(text if text.endswith("\n") else text + "\n")
            try:
                event = json.loads(text)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") in events and mine(event):
                return lines

    def _keep_tail(self, proc):
        for line in iter(lambda: proc.stderr.readline(4096), b""):
            self.tail.append(line.decode(errors="replace").rstrip())


class HubError(Exception):
    """The hub cannot run the sweep's engines (said in one line)."""


def _first_line(e):
    """What an error says in one line: the Python exception it carries (an actor's failed
    creation ends with it), else its first line."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    raised = [l for l in lines if re.match(r"^[\w.]+(Error|Exception): ", l)]
    return (raised[-1] if raised else lines[0] if lines else type(e).__name__)[:300]


def _error(run, kind, message):
    return json.dumps({"run": run, "event": "error", "kind": kind, "message": message}) + "\n"


# Idle actors by (rr-tui program, Ray job): kept between the sweeps of one driver.
_POOL = {}


class Hub:
    """The engine hub `rr-tui tune --engine-hub` connects to: a Unix socket whose every
    connection is one engine, run by an actor from a pool of one per GPU."""

    def __init__(self, engines, exe=None, simulate=None, pace=1.0):
        self.ray = _ray()
        self.exe = exe
        # Testing without GPUs: engines answer from this finished sweep.
        self.simulate = simulate
        self.pace = pace
        self.Actor = self.ray.remote(num_gpus=1, max_concurrency=2, max_restarts=0)(Engine)
        self.cond = threading.Condition()
        self.lost = 0
        self.closed = False
        self.serving = 0
        # Actors of an earlier sweep of this driver first: a Ray worker takes a second or two
        # to start, which a session of many sweeps pays once.
        self.pool = _POOL.setdefault((exe, self.ray.get_runtime_context().get_job_id()), [])
        self.idle = [self.pool.pop() for _ in range(min(engines, len(self.pool)))]
        fresh = [self.Actor.remote(exe) for _ in range(engines - len(self.idle))]
        self.idle += fresh
        self._check_placed(fresh)
        self.dir = tempfile.mkdtemp(prefix="rr-tui-hub-")
        self.path = os.path.join(self.dir, "hub.sock")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(engines + 4)
        threading.Thread(target=self._accept, daemon=True).start()

    def _check_placed(self, actors):
        """Wait until new actors run, so that a node that cannot import this module, or a
        cluster without the GPUs, is said at once rather than by an engine that never starts."""
        if not actors:
            return
        pending = {a.where.remote(): a for a in actors}
        done, waiting = self.ray.wait(list(pending), num_returns=len(pending), timeout=PLACE_TIMEOUT_S)
        for ref in done:
            try:
                self.ray.get(ref)
            except self.ray.exceptions.RayError as e:
                self._abandon()
                raise HubError("a Ray actor for an engine could not start (is the rr_tui package "
                               "installed in the Python of every node?): %s" % _first_line(e))
        if waiting:
            self._abandon()
            raise HubError("%d of %d engine actors found no free GPU in %.0f s (the cluster has %g GPU(s) free)"
                           % (len(waiting), len(actors), PLACE_TIMEOUT_S,
                              self.ray.available_resources().get("GPU", 0)))

    def _abandon(self):
        for actor in self.idle:
            self.ray.kill(actor)
        self.idle = []

    def close(self):
        """Stop serving; the actors wait for this driver's next sweep (Ray ends them, and
        their GPUs go back to the cluster, when the driver ends)."""
        with self.cond:
            # The tuner has ended: each connection's thread stops its engine and gives its
            # actor back, at once.
            self.cond.wait_for(lambda: self.serving == 0, timeout=60)
            actors, self.idle = self.idle, []
            self.closed = True
        self.pool.extend(actors)
        try:
            self.server.close()
            os.unlink(self.path)
            os.rmdir(self.dir)
        except OSError:
            pass

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _take(self):
        with self.cond:
            if not self.cond.wait_for(lambda: self.idle, timeout=START_TIMEOUT_S):
                return None
            return self.idle.pop()

    def _give(self, actor):
        with self.cond:
            if self.closed:
                self.pool.append(actor)
                return
            self.idle.append(actor)
            self.cond.notify()

    def _replace(self):
        """A new actor for one that was lost, placed wherever the cluster has a GPU."""
        self.lost += 1
        actor = self.Actor.remote(self.exe)
        try:
            self.ray.get(actor.where.remote(), timeout=START_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - any failure to place it means no replacement
            self.ray.kill(actor)
            return
        self._give(actor)

    def _serve(self, conn):
        with self.cond:
            self.serving += 1
        try:
            self._serve_engine(conn)
        finally:
            with self.cond:
                self.serving -= 1
                self.cond.notify_all()

    def _serve_engine(self, conn):
        reader = conn.makefile("rb")
        actor = None
        run = 0
        try:
            hello = json.loads(reader.readline(MAX_LINE) or b"{}")
            if hello.get("hub") != 1 or not isinstance(hello.get("engine"), list):
                conn.sendall(_error(0, "input", "not a tuner of this hub's version").encode())
                return
            argv = list(hello["engine"])
            if self.simulate:
                argv += ["--simulate", self.simulate, "--pace", str(self.pace)]
            actor = self._take()
            if actor is None:
                conn.sendall(_error(0, "setup", "no GPU of the Ray cluster became free").encode())
                return
            started = actor.start.remote(hello.get("cwd", "."), argv)
            if not self._relay(conn, actor, started, 0, deadline=time.monotonic() + START_TIMEOUT_S):
                return
            while True:
                line = reader.readline(MAX_LINE)
                text = line.decode(errors="replace")
                if not line or text.strip() == '"quit"':
                    return
                try:
                    run = next(iter(json.loads(text).values()))["id"]
                except (ValueError, TypeError, KeyError, StopIteration, AttributeError):
                    run = 0
                if not self._relay(conn, actor, actor.call.remote(text), run):
                    return
        except self.ray.exceptions.RayActorError as e:
            # The actor's process or node is gone: the configuration goes to another engine.
            lost = actor
            actor = None
            self.ray.kill(lost)
            message = "the Ray actor running the engine was lost: %s" % _first_line(e)
            try:
                conn.sendall(_error(run, "lost", message).encode())
            except OSError:
                pass
            threading.Thread(target=self._replace, daemon=True).start()
        except (OSError, ValueError):
            pass
        finally:
            if actor is not None:
                try:
                    self.ray.get(actor.stop.remote(), timeout=30)
                    self._give(actor)
                except Exception:  # noqa: BLE001 - an actor that cannot stop is replaced
                    self.ray.kill(actor)
                    threading.Thread(target=self._replace, daemon=True).start()
            conn.close()

    def _relay(self, conn, actor, pending, run, deadline=None):
        """Wait for an actor's reply while watching the tuner; pass the reply on. False when
        the engine or the connection ended."""
        while True:
            ready, _ = self.ray.wait([pending], timeout=POLL_S)
            if ready:
                break
            if deadline is not None and time.monotonic() > deadline:
                conn.sendall(_error(run, "setup", "the Ray actor did not start its engine in %.0f s "
                                    "(is rr-tui installed, and the rr_tui module importable, on every node?)"
                                    % START_TIMEOUT_S).encode())
                self.ray.kill(actor)
                return False
            # The tuner gave up on this engine (its watchdog): stop it.
            r, _, _ = select.select([conn], [], [], 0)
            if r and not conn.recv(1, socket.MSG_PEEK):
                self.ray.get(actor.stop.remote())
                return False
        lines = self.ray.get(pending)
        conn.sendall("".join(lines).encode())
        last = json.loads(lines[-1]) if lines else {}
        return last.get("event") in ("ready", "trial")


def release():
    """End the actors kept for this driver's next sweep: their GPUs go back to the cluster."""
    ray = _ray()
    for actors in _POOL.values():
        for actor in actors:
            ray.kill(actor)
    _POOL.clear()


def tune(descriptor, *args, address=None, engines=None, simulate=None, pace=1.0, exe=None):
    """Run `rr-tui tune DESCRIPTOR ARGS…` with its engines on the Ray cluster at `address`
    (None: the one `ray start` made here, else a new local one), one per GPU (or `engines`).
    `simulate`: answer from a finished sweep instead of GPUs (testing). The tuner's exit status."""
    ray = _ray()
    ours = not ray.is_initialized()
    if ours:
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
                         % (where, "; with --simulate, GPUs that are only declared will do" if simulate else ""))
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
        child = subprocess.Popen(cmd)
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
        "Example: python -m rr_tui.ray --address auto X.json --block 32..1024*2 --json sweep.json. "
        "Engines are capped at the cluster's free GPUs; each node's Python must import rr_tui and Ray. "
        "Ctrl-C stops the sweep as rr-tui tune does (the results so far kept, exit 130).",
    )
    p.add_argument("--address", help="the Ray cluster (default: RAY_ADDRESS, a running local one, else a new local one)")
    p.add_argument("--engines", type=int, help="engines to run at once (default: the cluster's GPUs)")
    p.add_argument("--simulate", metavar="SWEEP.json", help="answer from a finished sweep of the instance instead of GPUs (testing)")
    p.add_argument("--pace", type=float, default=1.0, help="with --simulate: this many times each answer's engine time")
    p.add_argument("descriptor", help="the instance's descriptor (X.json), at the same path on every node")
    p.add_argument("tune_args", nargs=argparse.REMAINDER, help="rr-tui tune's arguments")
    a = p.parse_args(argv)
    for mine in ("--address", "--engines", "--pace", "--simulate"):
        if any(t == mine or t.startswith(mine + "=") for t in a.tune_args):
            p.error("%s comes before the descriptor: the arguments after it go to rr-tui tune "
                    "(which runs its engines through this hub)" % mine)
    simulate = os.path.abspath(a.simulate) if a.simulate else None
    return tune(a.descriptor, *a.tune_args, address=a.address, engines=a.engines, simulate=simulate, pace=a.pace)


if __name__ == "__main__":
    sys.exit(main())
