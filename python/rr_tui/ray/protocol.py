"""What the hub and its actors say in the engine protocol, and how they say why."""

import json
import re

# A line longer than this is not the engine protocol (a trial is a few KiB).
MAX_LINE = 1 << 20
# The version of the first line a tuner sends (`rr-tui tune --engine-hub`):
# {"hub": 2, "cwd": DIR, "job": {"protocol": 1, "engine": {…}}}, the engine's job handed to
# `rr-tui job` as the first line of its input (hub 1 sent `rr-tui engine` arguments).
HUB_VERSION = 2
# Where `rr-tui job` looks for a job before its input: never inherited by the engines.
JOB_ENV = "RR_TUI_JOB"


class HubError(Exception):
    """The hub cannot run the sweep's engines (said in one line)."""


def first_line(e):
    """What an error says in one line: the Python exception it carries (an actor's failed
    creation ends with it), else its first line."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    raised = [l for l in lines if re.match(r"^[\w.]+(Error|Exception): ", l)]
    return (raised[-1] if raised else lines[0] if lines else type(e).__name__)[:300]


def hello_problem(hello):
    """Why a tuner's first line is not one this hub serves (None: it is), in one line."""
    if not isinstance(hello, dict):
        return "not a tuner's first line"
    version = hello.get("hub")
    if version != HUB_VERSION:
        return ("a tuner of hub protocol %s: this hub (the rr_tui Python package) speaks %d; run the "
                "rr-tui of the same version as the package" % (json.dumps(version), HUB_VERSION))
    job = hello.get("job")
    if not isinstance(job, dict) or not isinstance(job.get("engine"), dict):
        return "a tuner's first line without an engine job"
    if not isinstance(hello.get("cwd", "."), str):
        return "a tuner's first line whose working directory is not text"
    return None


def error_line(run, kind, message):
    """An engine protocol `error` event for `run`, as a line."""
    return json.dumps({"run": run, "event": "error", "kind": kind, "message": message}) + "\n"
