#!/usr/bin/env python3
"""A figure of the GPU suite: printed, checked against its goal, and appended as a JSON line to
the results file (what scripts/perf-page.py renders docs/PERFORMANCE.md from).

From the shell (tests/gpu/suite-lib.sh's `figure`):

    figure.py AREA NAME VALUE GOAL_OP GOAL [LOW HIGH] [--unit U] [--measured V U]
              [--limit NAME V U] [--interval TEXT] [--detail TEXT]

GOAL_OP is one of >=, <=, >, <, in (GOAL "A..B") or - (no goal: the figure is recorded, not
counted). VALUE may be empty or "nan": a figure with a goal and no value fails (the benchmark did
not produce its number). With LOW and HIGH (an interval the suite computed, e.g. a bootstrap
interval of a median), the figure fails only when the whole interval misses the goal.

From Python (a part's heredoc): `sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")`, then
`from figure import figure, check, ok, bad, skip`.

Counts go to $SUITE_COUNTS ("PASS\tname" lines, as the shell's ok/bad write them), figures to
$SUITE_RESULTS; both are set by suite-lib.sh. Exit status of the command line: 0 when the figure
meets its goal or has none, 1 when it misses.
"""
import json
import math
import os
import sys
import time

OPS = (">=", "<=", ">", "<", "in", "-")


def num(x):
    """A finite float, or None."""
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def parse_goal(op, goal):
    if op in ("-", None, "") or goal is None:
        return None
    if op == "in":
        if isinstance(goal, (list, tuple)):
            lo, hi = goal
        else:
            lo, hi = str(goal).split("..")
        return [float(lo), float(hi)]
    return float(goal)


def meets(op, goal, v):
    if op == ">=":
        return v >= goal
    if op == "<=":
        return v <= goal
    if op == ">":
        return v > goal
    if op == "<":
        return v < goal
    return goal[0] <= v <= goal[1]


def judge(op, goal, value, low=None, high=None):
    """True/False against the goal; None without one. With an interval [low, high], False only
    when every point of it misses the goal."""
    if goal is None:
        return None
    if value is None:
        return False
    if low is not None and high is not None:
        lo, hi = min(low, high), max(low, high)
        if op in (">=", ">"):
            return meets(op, goal, hi)
        if op in ("<=", "<"):
            return meets(op, goal, lo)
        return hi >= goal[0] and lo <= goal[1]
    return meets(op, goal, value)


def goal_text(op, goal, unit=""):
    if goal is None:
        return "no goal"
    u = (" " + unit) if unit and unit not in ("x", "×") else ("×" if unit in ("x", "×") else "")
    if op == "in":
        return "goal %s–%s%s" % (fmt(goal[0]), fmt(goal[1]), u)
    return "goal %s %s%s" % (op, fmt(goal), u)


def fmt(v):
    if v is None:
        return "none"
    if isinstance(v, str):
        return v
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 0.1:
        return "%.3f" % v
    return "%.4g" % v


def _append(path, line):
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def _count(kind, name):
    _append(os.environ.get("SUITE_COUNTS"), "%s\t%s" % (kind, name.replace("\n", " ")))


def ok(name):
    _count("PASS", name)
    print("PASS " + name, flush=True)


def bad(name, why=""):
    _count("FAIL", name)
    print("FAIL " + name + (": " + why if why else ""), flush=True)


def skip(name, why):
    if os.environ.get("REQUIRE_ALL", "0") == "1":
        bad(name, "cannot run (%s) and REQUIRE_ALL=1" % why)
    else:
        _count("SKIP", name)
        print("SKIP %s: %s" % (name, why), flush=True)


def note(cmd):
    """What the suite's watchdog names while `cmd` (a list or a string) runs."""
    path = os.environ.get("SUITE_CURRENT")
    if path:
        try:
            with open(path, "w") as f:
                f.write((cmd if isinstance(cmd, str) else " ".join(map(str, cmd))) + "\n")
        except OSError:
            pass


def check(name, cond, why=""):
    """A check of a parsed condition: counted."""
    (ok(name) if cond else bad(name, why))
    return bool(cond)


def figure(area, name, value, goal_op="-", goal=None, low=None, high=None, unit="", measured=None,
           measured_unit="", limit=None, limit_value=None, limit_unit="", interval="", detail=""):
    """Print, check and record one figure; returns True/False against its goal (None: no goal)."""
    if goal_op not in OPS:
        raise ValueError("goal operator %r: one of %s" % (goal_op, ", ".join(OPS)))
    g = parse_goal(goal_op, goal)
    value, low, high = num(value), num(low), num(high)
    if low is None or high is None:
        low = high = None
    result = judge(goal_op, g, value, low, high)
    shown = fmt(value) + ("×" if unit in ("x", "×") else (" " + unit if unit else ""))
    parts = [goal_text(goal_op, g, unit)]
    if low is not None:
        parts.append("%s %s–%s" % (interval or "interval", fmt(low), fmt(high)))
    if measured is not None or limit is not None:
        m = ("measured %s %s" % (fmt(num(measured)), measured_unit)).strip() if measured is not None else ""
        l = ("%s %s %s" % (limit, fmt(num(limit_value)), limit_unit)).strip() if limit is not None else ""
        parts.append(" against ".join(x for x in (m, l) if x))
    if detail:
        parts.append(detail)
    line = "FIGURE %s: %s = %s (%s)" % (area, name, shown, "; ".join(parts))
    print(line, flush=True)
    label = "%s: %s %s (%s)" % (area, name, shown, goal_text(goal_op, g, unit))
    if result is True:
        ok(label)
    elif result is False:
        if value is None:
            bad(label, "no value: the benchmark did not produce this figure" + ("; " + detail if detail else ""))
        else:
            bad(label, "misses its goal" + (" over the whole %s %s–%s" % (interval or "interval", fmt(low), fmt(high)) if low is not None else ""))
    rec = {
        "kind": "figure", "run": os.environ.get("SUITE_RUN_ID"), "part": os.environ.get("SUITE_PART"),
        "area": area, "name": name, "value": value, "unit": unit or None,
        "goal_op": None if g is None else goal_op, "goal": g, "low": low, "high": high, "interval": interval or None,
        "ok": result, "limit_name": limit, "limit_value": num(limit_value), "limit_unit": limit_unit or None,
        "measured": num(measured), "measured_unit": measured_unit or None, "detail": detail or None,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    _append(os.environ.get("SUITE_RESULTS"), json.dumps(rec, ensure_ascii=False))
    return result


def _main(argv):
    if len(argv) < 5:
        sys.exit("usage: figure.py AREA NAME VALUE GOAL_OP GOAL [LOW HIGH] [--unit U] [--measured V U] "
                 "[--limit NAME V U] [--interval TEXT] [--detail TEXT]")
    area, name, value, op, goal = argv[:5]
    rest = argv[5:]
    low = high = None
    if len(rest) >= 2 and not rest[0].startswith("--"):
        low, high, rest = rest[0], rest[1], rest[2:]
    kw = {}
    i = 0
    while i < len(rest):
        opt = rest[i]
        if opt == "--unit":
            kw["unit"] = rest[i + 1]; i += 2
        elif opt == "--measured":
            kw["measured"], kw["measured_unit"] = rest[i + 1], rest[i + 2]; i += 3
        elif opt == "--limit":
            kw["limit"], kw["limit_value"], kw["limit_unit"] = rest[i + 1], rest[i + 2], rest[i + 3]; i += 4
        elif opt == "--interval":
            kw["interval"] = rest[i + 1]; i += 2
        elif opt == "--detail":
            kw["detail"] = rest[i + 1]; i += 2
        else:
            sys.exit("figure.py: unknown option %r" % opt)
    try:
        result = figure(area, name, value, op, None if goal in ("", "-") else goal, low, high, **kw)
    except ValueError as e:
        bad("%s: %s" % (area, name), "figure.py: %s" % e)
        return 1
    return 1 if result is False else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
