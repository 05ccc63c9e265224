"""What the hub and its actors say in the engine protocol, and how they say why."""

import json
import re

# A line longer than this is not the engine protocol (a trial is a few KiB).
MAX_LINE = 1 << 20


class HubError(Exception):
    """The hub cannot run the sweep's engines (said in one line)."""


def first_line(e):
    """What an error says in one line: the Python exception it carries (an actor's failed
    creation ends with it), else its first line."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    raised = [l for l in lines if re.match(r"^[\w.]+(Error|Exception): ", l)]
    return (raised[-1] if raised else lines[0] if lines else type(e).__name__)[:300]


def error_line(run, kind, message):
    """An engine protocol `error` event for `run`, as a line."""
    return json.dumps({"run": run, "event": "error", "kind": kind, "message": message}) + "\n"
