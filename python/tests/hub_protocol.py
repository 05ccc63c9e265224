#!/usr/bin/env python3
"""The hub protocol of rr_tui.ray without Ray: what the hub refuses of a tuner's first line, and
the engine actor's class (`Engine`, used here as a plain object) running engine jobs with
`rr-tui job`: its job first on the engine's input, the device id set to 0 unless simulated.

Usage: hub_protocol.py RR_TUI SWEEP.json DESCRIPTOR.json   (prints "hub: PASS …" / "hub: FAIL …";
exit 1 on a failure)
"""

import json
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rr_tui.ray.engine import Engine  # noqa: E402
from rr_tui.ray.protocol import HUB_VERSION, hello_problem, parse, run_of  # noqa: E402

RR, SWEEP, DESCRIPTOR = (os.path.abspath(a) for a in sys.argv[1:4])
failed = 0


def check(ok, what):
    global failed
    print("hub: %s %s" % ("PASS" if ok else "FAIL", what))
    failed += not ok


def engine_job(**fields):
    engine = {"descriptor": DESCRIPTOR, "device_id": 4, "verify": "bytes", "energy": False,
              "kernel_timeout": 30.0, "supplied": {"image": None, "base_address": None, "assume_llvm18": False},
              "simulate": None, "pace": 1.0}
    engine.update(fields)
    return {"protocol": 1, "engine": engine}


# A tuner of the first hub protocol (`rr-tui engine` arguments) and one of this version.
old = hello_problem({"hub": 1, "cwd": "/", "engine": ["engine", DESCRIPTOR, "--device-id", "0"]})
check(old is not None and "hub protocol 1" in old and "speaks %d" % HUB_VERSION in old and "\n" not in old,
      "a tuner of hub protocol 1 is refused in one line: %s" % old)
check(hello_problem({"hub": HUB_VERSION, "cwd": "/", "job": engine_job()}) is None,
      "a tuner of hub protocol %d is served" % HUB_VERSION)
check(hello_problem({"hub": HUB_VERSION, "cwd": "/", "job": {"protocol": 1, "replay": {}}}) is not None,
      "a first line without an engine job is refused")
# Hostile lines: a version that is not exactly the integer, a run id that is no whole number, JSON
# nested past Python's recursion limit, NaN (which is not JSON): refused or read as run 0.
check(hello_problem({"hub": float(HUB_VERSION), "cwd": "/", "job": engine_job()}) is not None,
      "a hub version of 2.0 is refused")
check(hello_problem({"hub": True, "cwd": "/", "job": engine_job()}) is not None, "a hub version of true is refused")
check(run_of('{"measure": {"id": NaN}}') == 0, "a NaN run id is run 0")
check(run_of('{"measure": {"id": -3}}') == 0 and run_of('{"measure": {"id": 7}}') == 7, "run ids are whole numbers")
check(parse("[" * 100000) is None and run_of("[" * 100000) == 0, "deep nesting is no JSON, not a crash")

# A simulated engine job: `rr-tui job` answers from the sweep, on the device the job names.
e = Engine(exe=RR)
lines = e.start(os.getcwd(), engine_job(simulate=SWEEP, pace=0.0))
events = [json.loads(l) for l in lines]
check(events and events[-1].get("event") == "ready", "the engine job starts: %s" % [v.get("event") for v in events])
measure = {"measure": {"id": 7, "config": {"grid": [2, 1, 1], "block": [64, 1, 1], "shared_mem": 0},
                       "policy": {"cold": True, "target": {"max_noise": None, "min_samples": 1, "min_gpu_time": 0.0,
                                                           "timeout": 60.0}, "max_samples": 1, "throttle": 0.75}}}
reply = [json.loads(l) for l in e.call(json.dumps(measure) + "\n")]
trial = reply[-1] if reply else {}
check(trial.get("event") == "trial" and trial.get("run") == 7 and trial.get("device") == 4,
      "its commands follow the job on its input, and a simulated engine keeps its device id: %s" % trial)
e.stop()

# A job the engine refuses is said as an engine says why it cannot start.
lines = Engine(exe=RR).start(os.getcwd(), engine_job(simulate=SWEEP, pace=500.0))
said = json.loads(lines[-1]) if lines else {}
check(said.get("event") == "error" and said.get("run") == 0 and "--pace" in said.get("message", ""),
      "a job out of its limits is refused naming the flag: %s" % said)

# Not simulated: the engine runs on the actor's one GPU, which Ray shows it as device 0.
with tempfile.TemporaryDirectory() as d:
    seen = os.path.join(d, "job.json")
    fake = os.path.join(d, "rr-tui")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\n[ "$1" = job ] || exit 3\nread -r job\nprintf "%%s\\n" "$job" > %s\n'
                'printf "%%s\\n" "${RR_TUI_JOB-unset}" > %s.env\n'
                'echo \'{"run":0,"event":"ready","rated_clock_mhz":1.0,"ptx":false}\'\ncat > /dev/null\n'
                % (seen, seen))
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
    e = Engine(exe=fake)
    os.environ["RR_TUI_JOB"] = "not this one"
    lines = e.start(d, engine_job(device_id=3))
    del os.environ["RR_TUI_JOB"]
    e.stop()
    with open(seen) as f:
        got = json.loads(f.read())
    check(got["engine"]["device_id"] == 0 and got["engine"]["descriptor"] == DESCRIPTOR,
          "an engine that measures gets device 0, its job otherwise as sent: %s" % got["engine"])
    with open(seen + ".env") as f:
        inherited = f.read().strip()
    check(inherited == "unset", "the engine inherits no job from the actor's environment: %s" % inherited)
    lines = Engine(exe=fake).start(d, {"protocol": 1, "replay": {}})
    check("engine jobs only" in "".join(lines), "a job of another kind is refused: %s" % lines)

print("hub: %d failed" % failed)
sys.exit(1 if failed else 0)
