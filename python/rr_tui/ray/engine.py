"""One GPU of a Ray cluster: the actor that runs engine processes on it (`rr-tui job`, the
engine's job the first line of its input) and passes the engine protocol through, a command and
its reply at a time (see `rr_tui.ray`)."""

import collections
import json
import os
import socket
import subprocess
import threading

from .. import executable
from .protocol import JOB_ENV, MAX_LINE, error_line, run_of


class Engine:
    """One GPU of the cluster (a Ray actor): runs one engine process at a time on it and passes
    the engine protocol through, a command and its reply at a time."""

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

    def start(self, cwd, job):
        """Start the engine `job` asks for (`{"protocol": 1, "engine": {…}}`) in `cwd`: `rr-tui
        job`, the job its first line of input. Its setup events up to `ready` (or its error)."""
        self.stop()
        engine = job.get("engine") if isinstance(job, dict) else None
        if not isinstance(engine, dict) or set(job) != {"protocol", "engine"}:
            return [error_line(0, "input", "the hub runs engine jobs only")]
        job = {"protocol": job["protocol"], "engine": dict(engine)}
        if job["engine"].get("simulate") is None and job["engine"].get("device_id") is not None:
            # Ray shows the actor its one GPU as device 0.
            job["engine"]["device_id"] = 0
        self.tail.clear()
        env = dict(os.environ)
        # Its job is the one on its input: one in the actor's environment is none of its.
        env.pop(JOB_ENV, None)
        try:
            self.proc = subprocess.Popen(
                [self.exe, "job"],
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as e:
            return [error_line(0, "setup", "cannot start %s on %s: %s" % (self.exe, socket.gethostname(), e))]
        threading.Thread(target=self._keep_tail, args=(self.proc,), daemon=True).start()
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            pass  # said below: the engine ended before it was ready
        return self._until(0, ("ready", "error"), lambda e: True)

    def call(self, line):
        """Send one command line; the events up to its `trial` (or `error`)."""
        run = run_of(line)
        if self.proc is None or self.proc.poll() is not None:
            return [error_line(run, "setup", "no engine is running")]
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
                return lines + [error_line(run, "setup", text)]
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
