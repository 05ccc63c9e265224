"""The engine hub `rr-tui tune --engine-hub` connects to: a Unix socket whose every connection is
one engine, run by a Ray actor from a pool of one per GPU (see `rr_tui.ray`)."""

import json
import os
import select
import socket
import tempfile
import threading
import time

from .engine import Engine
from .protocol import MAX_LINE, HubError, error_line, first_line, hello_problem, parse, run_of

# How long an actor may take to be placed and start its engine.
START_TIMEOUT_S = 300.0
# How long the actors of a new hub may take to be placed and import this module.
PLACE_TIMEOUT_S = 60.0
# How often a waiting hub looks whether the tuner closed the connection.
POLL_S = 0.5

# Idle actors by (rr-tui program, Ray job): kept between the sweeps of one driver.
_POOL = {}


def release_kept(ray):
    """End the actors kept for the driver's next sweep."""
    for actors in _POOL.values():
        for actor in actors:
            ray.kill(actor)
    _POOL.clear()


class Hub:
    """The engine hub `rr-tui tune --engine-hub` connects to: a Unix socket whose every
    connection is one engine, run by an actor from a pool of one per GPU."""

    def __init__(self, engines, exe=None, simulate=None, pace=1.0):
        import ray

        self.ray = ray
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
                               "installed in the Python of every node?): %s" % first_line(e))
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
            hello = parse(reader.readline(MAX_LINE) or b"{}")
            problem = hello_problem(hello)
            if problem:
                conn.sendall(error_line(0, "input", problem).encode())
                return
            job = hello["job"]
            if self.simulate:
                # The engines answer from a finished sweep: the job says so.
                job["engine"]["simulate"] = self.simulate
                job["engine"]["pace"] = float(self.pace)
            actor = self._take()
            if actor is None:
                conn.sendall(error_line(0, "setup", "no GPU of the Ray cluster became free").encode())
                return
            started = actor.start.remote(hello.get("cwd", "."), job)
            if not self._relay(conn, actor, started, 0, deadline=time.monotonic() + START_TIMEOUT_S):
                return
            while True:
                line = reader.readline(MAX_LINE)
                text = line.decode(errors="replace")
                if not line or text.strip() == '"quit"':
                    return
                run = run_of(text)
                if not self._relay(conn, actor, actor.call.remote(text), run):
                    return
        except self.ray.exceptions.RayActorError as e:
            # The actor's process or node is gone: the configuration goes to another engine.
            lost = actor
            actor = None
            self.ray.kill(lost)
            message = "the Ray actor running the engine was lost: %s" % first_line(e)
            try:
                conn.sendall(error_line(run, "lost", message).encode())
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
                conn.sendall(error_line(run, "setup", "the Ray actor did not start its engine in %.0f s "
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
