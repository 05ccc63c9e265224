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


def parse(text):
    """A JSON line as Python values, or None when it is no JSON this package reads (not JSON,
    nested past Python's recursion limit, or NaN and infinities, which are not JSON)."""
    def no_constant(name):
        raise ValueError("not JSON: %s" % name)
    try:
        return json.loads(text, parse_constant=no_constant)
    except (ValueError, RecursionError):
        return None


def run_of(text):
    """The run id of an engine command line (`{"measure": {"id": N, …}}`), 0 when it has none:
    a whole number from 0 only, so that an error line for it is JSON the tuner reads."""
    command = parse(text)
    body = next(iter(command.values()), None) if isinstance(command, dict) and command else None
    run = body.get("id") if isinstance(body, dict) else None
    return run if type(run) is int and run >= 0 else 0


def hello_problem(hello):
    """Why a tuner's first line is not one this hub serves (None: it is), in one line."""
    if not isinstance(hello, dict):
        return "not a tuner's first line"
    version = hello.get("hub")
    # Exactly the integer: 2.0 and true are no version of this protocol.
    if type(version) is not int or version != HUB_VERSION:
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
